//! The `run` member of every result line: which command and evaluator wrote it, which run and
//! shard it belongs to, so a results file alone rebuilds its run's summary.

use crate::protocol::ScoreRange;
use serde::{Deserialize, Serialize};

/// Which evaluator ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluatorInfo {
    /// `command`, `http`, `judge` or `checks`.
    pub kind: String,
    /// The command line, URL, model or checks file.
    pub target: String,
}

/// What a run's summary needs beyond its result lines, carried by every line (`run`), so a
/// results file alone, or several shards' files, rebuild the run's summary (`summarize`,
/// `merge`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The command that wrote the line when it is not `run`: `tasks score`, `tasks run` or
    /// `spec score` (whose lines' own members are read back as their side information).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Which evaluator ran.
    pub evaluator: EvaluatorInfo,
    /// `unit` or `any`.
    pub score_range: String,
    /// Which splits the run has.
    pub splits: Splits,
    /// How many candidates the run has.
    pub candidates: usize,
    /// Which run, which shard and how many calls: absent in lines of older evalctl versions,
    /// which are read as one unsharded run.
    #[serde(flatten)]
    pub identity: Option<RunIdentity>,
}

/// The `command` of `spec score`'s lines.
pub const SPEC_SCORE: &str = "spec score";

/// What completes a run of `command` (`None`: `run`) when calls of its plan have no line:
/// `--resume` for the commands that take it up, scoring again for the others.
pub fn completed_by(command: Option<&str>) -> &'static str {
    match command {
        None => "run --resume completes it",
        Some("tasks run") => {
            "tasks run again completes it, with --resume from its --save-outputs if it had one"
        }
        Some(_) => "scoring again to a new --output completes it",
    }
}

impl RunInfo {
    /// The member of the run that `self` and `other`, two lines' `run` of one fingerprint, give
    /// differently (`score_range`), among those every line of a run shares; `None` when they
    /// agree. evalctl never writes such lines: one was edited by hand. (The evaluator's target
    /// is its name as typed: `checks.json` and `./checks.json` are one run's.)
    pub fn differs_from(&self, other: &RunInfo) -> Option<&'static str> {
        [
            ("command", self.command == other.command),
            (
                "evaluator.kind",
                self.evaluator.kind == other.evaluator.kind,
            ),
            ("score_range", self.score_range == other.score_range),
            ("splits", self.splits == other.splits),
            ("candidates", self.candidates == other.candidates),
        ]
        .into_iter()
        .find_map(|(member, same)| (!same).then_some(member))
    }

    /// Whether the lines' own verdicts gate the run, as they gate the command that wrote them:
    /// `spec score` exits 1 when a run did not pass, and so do `summarize` and `merge` of its
    /// records (`run --spec` is gated by its flags alone).
    pub fn gated_by_verdicts(&self) -> bool {
        self.command.as_deref() == Some(SPEC_SCORE)
    }

    /// What completes the run when calls of its plan have no line.
    pub fn completed_by(&self) -> &'static str {
        completed_by(self.command.as_deref())
    }

    /// What the run's inputs digest covers, as a reader is told when two runs' differ.
    pub fn inputs_are(&self) -> &'static str {
        match self.command.as_deref() {
            None => "dataset and valset examples",
            Some(SPEC_SCORE) => "the runs scored and the cases they were given",
            Some(_) => "the tasks scored and their prompts",
        }
    }

    /// The score range the run was made with (`unit` unless it says `any`).
    pub fn range(&self) -> ScoreRange {
        if self.score_range == ScoreRange::Any.as_str() {
            ScoreRange::Any
        } else {
            ScoreRange::Unit
        }
    }

    /// `,"run":{...}`: the member that [`SharedMembers::run`] left out of a spooled line, to
    /// be added before its closing brace.
    pub fn as_members(&self) -> serde_json::Result<Vec<u8>> {
        let mut members = b",\"run\":".to_vec();
        serde_json::to_writer(&mut members, self)?;
        Ok(members)
    }
}

/// Which run a line belongs to and which shard of it (all 16 hex digits of SHA-256).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunIdentity {
    /// The run fingerprint: over the evaluator's identity, the inputs and the candidates (ids
    /// and texts), `--limit` and `--repeat` included. Every line of one run, whatever its
    /// shard, carries the same one.
    pub fingerprint: String,
    /// The evaluator's identity alone (the part of every call key it decides).
    pub evaluator_digest: String,
    /// The dataset and valset examples the plan uses, alone.
    pub inputs_digest: String,
    /// `K/N` (`--shard`; `0/1` for an unsharded run), as [`shard_of`] reads it.
    #[serde(deserialize_with = "shard_label")]
    pub shard: String,
    /// Calls in this shard's plan.
    pub shard_calls: usize,
    /// Calls in the whole run's plan, every shard together.
    pub plan_calls: usize,
}

/// The most shards a run may be split into (`--shard K/N`, a line's `shard`): Kubernetes' limit
/// on an indexed Job's completions. A summary names every missing shard, so N bounds its work.
pub const MAX_SHARDS: u64 = 100_000;

/// `K/N` with 0 <= K < N <= [`MAX_SHARDS`], as numbers (`--shard`, a line's `shard`).
pub fn shard_of(text: &str) -> Option<(u64, u64)> {
    let (k, n) = text.split_once('/')?;
    let (k, n) = (k.trim().parse().ok()?, n.trim().parse().ok()?);
    (k < n && n <= MAX_SHARDS).then_some((k, n))
}

/// A line's `shard`: `K/N` as evalctl writes it (see [`shard_of`]).
fn shard_label<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let label = String::deserialize(deserializer)?;
    match shard_of(&label) {
        Some((k, n)) if format!("{k}/{n}") == label => Ok(label),
        _ => Err(serde::de::Error::custom(format!(
            "expected K/N with 0 <= K < N <= {MAX_SHARDS}, found \"{label}\""
        ))),
    }
}

/// Which splits the run has, so a split with no finished call still shows as n = 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Splits {
    /// A dataset was given.
    pub train: bool,
    /// A valset was given.
    pub val: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_is_k_of_at_most_max_shards() {
        assert_eq!(shard_of("2/3"), Some((2, 3)));
        assert_eq!(shard_of(" 0 / 100000"), Some((0, 100_000)));
        for bad in [
            "3/3",
            "0/0",
            "0/100001",
            "-1/3",
            "1",
            "a/b",
            "0/18446744073709551616",
        ] {
            assert_eq!(shard_of(bad), None, "{bad}");
        }
        let line_shard = |label: &str| shard_label(serde_json::Value::from(label));
        assert_eq!(line_shard("1/4").unwrap(), "1/4");
        assert_eq!(
            line_shard(" 1/4").unwrap_err().to_string(),
            "expected K/N with 0 <= K < N <= 100000, found \" 1/4\""
        );
        assert!(line_shard("0/100000000").is_err());
    }
}
