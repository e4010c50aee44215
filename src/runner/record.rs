//! The result record of one evaluator call: one `--output` line, and what summaries aggregate.
//! Records are read back from results files too (`--resume`, and the journal reader).
//!
//! The lines of the other scoring commands (`tasks score --output`, `tasks run --output`,
//! `spec score`) carry the members of a result line their meaning shares ([`SharedMembers`],
//! after their own), so the same reader reads all three and `summarize`, `merge`, `compare`,
//! `report` and `--junit` work on them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::key::{short_hex, Fields};
use super::Split;
use crate::protocol::CallError;

/// One finished call, as written to `--output`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CallRecord {
    /// The call's key (64 hex digits, see `runner::key`); absent only in lines written before
    /// evalctl keyed its calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The repeat index under `--repeat` (0-based); absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// The candidate's id.
    pub candidate_id: String,
    /// The candidate's 0-based position in the run's candidates (orders a merged summary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_index: Option<usize>,
    /// `single`, `train` or `val`.
    pub split: Split,
    /// 0-based index of the example within its split; null for single calls.
    pub example_index: Option<usize>,
    /// 1-based line of the example in its file; null for single calls.
    pub example_line: Option<usize>,
    /// The example's `id` field (a string, or a number as written), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example_id: Option<String>,
    /// The score; 0.0 when the call failed (read as 0.0 from a `null`: a task line's missing
    /// task, which carries its error).
    #[serde(deserialize_with = "score_or_zero")]
    pub score: f64,
    /// Every other key of the evaluator's answer, verbatim; read back from the line of another
    /// scoring command, its own members ([`CallRecord::own_members`]).
    #[serde(default)]
    pub side_info: Map<String, Value>,
    /// Why the call failed, or null.
    pub error: Option<CallError>,
    /// Attempts made (1 + retries used); 0 in the lines of the other scoring commands, which
    /// call no evaluator.
    #[serde(default)]
    pub attempts: u32,
    /// Wall time of the call, retries included, in milliseconds; 0 in the lines of the other
    /// scoring commands.
    #[serde(default)]
    pub latency_ms: f64,
    /// An evaluation spec's pass verdict (`run --spec`); absent for other evaluators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    /// SHA-256 (first 16 hex digits) of the candidate's text, so one id with two texts shows;
    /// absent in lines of older evalctl versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_digest: Option<String>,
    /// The result came from the cache (`--cache`): no evaluator call was made.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
    /// `run --generate`: the task model that answered (`PROVIDER/MODEL` or `command 'CMD'`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_model: Option<String>,
    /// `run --generate`: the task model's answer, which the evaluator scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// `run --generate`: the task model's call (tokens, wall time, attempts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<GenerationInfo>,
    /// The run's evaluator, score range, splits and candidate count, so results files alone
    /// rebuild its summary (`summarize`, `merge`); absent in lines of older evalctl versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunInfo>,
    /// The built-in checks that errored (also in `side_info.errored_checks`, from which a record
    /// read back gets them).
    #[serde(skip)]
    pub errored_checks: Vec<String>,
}

/// The task model's call behind a call of `run --generate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenerationInfo {
    /// Tokens the task model reported (zero from a command).
    pub usage: crate::llm::Usage,
    /// Wall time of the task model's call, retries included, in milliseconds (0 when cached).
    pub latency_ms: f64,
    /// Attempts made (0 when the cache answered).
    pub attempts: u32,
    /// The answer came from the cache (`--cache`): the task model was not called.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

impl CallRecord {
    /// The prompt and completion tokens the evaluator's `side_info.usage` reports (the LLM
    /// judge's call, on failed calls too), when it reports either.
    pub fn evaluator_tokens(&self) -> Option<(u64, u64)> {
        let usage = self.side_info.get("usage")?;
        let tokens = |key: &str| usage.get(key).and_then(Value::as_u64);
        let (prompt, completion) = (tokens("prompt_tokens"), tokens("completion_tokens"));
        (prompt.is_some() || completion.is_some())
            .then(|| (prompt.unwrap_or(0), completion.unwrap_or(0)))
    }

    /// The names in `side_info.errored_checks` (how a record read back learns its
    /// `errored_checks`).
    pub fn errored_checks_of(side_info: &Map<String, Value>) -> Vec<String> {
        side_info
            .get("errored_checks")
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(|name| name.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The candidate, with the task model that answered it under `run --generate`
    /// (`prompt.txt with openai/gpt-4o-mini`).
    pub fn candidate_label(&self) -> String {
        match &self.task_model {
            Some(model) => format!("{} with {model}", self.candidate_id),
            None => self.candidate_id.clone(),
        }
    }

    /// A short human label: `prompt.txt train q20 (line 4)` by the example's `id`, else by its
    /// index, `prompt.txt train #3 (line 4)`; under `run --generate`, `prompt.txt with
    /// openai/gpt-4o-mini train q20 (line 4)`. A single call is its candidate alone; a line of
    /// another scoring command (split `single`, with an example) names its task or run:
    /// `outputs.jsonl t-3`, `runs.jsonl run-1 (line 2)`.
    pub fn call_label(&self) -> String {
        let mut label = self.candidate_label();
        match self.split {
            Split::Single => {}
            Split::Train => label.push_str(" train"),
            Split::Val => label.push_str(" val"),
        }
        let example = match (&self.example_id, self.example_index) {
            (Some(id), _) => id.clone(),
            (None, Some(index)) => format!("#{index}"),
            (None, None) => return label,
        };
        match self.example_line {
            Some(line) => format!("{label} {example} (line {line})"),
            None => format!("{label} {example}"),
        }
    }

    /// The members of a line of another scoring command that are not result-line members (the
    /// task's `category`, `metric_name`, `processed_output`, ...; the record's
    /// `validator_results`, `overall_score`, ...): what it reads back as its `side_info`.
    pub fn own_members(mut line: Map<String, Value>) -> Map<String, Value> {
        for shared in RESULT_MEMBERS {
            line.remove(*shared);
        }
        line
    }
}

/// The members of a result line (every [`CallRecord`] member that is written).
const RESULT_MEMBERS: &[&str] = &[
    "key",
    "repeat",
    "candidate_id",
    "candidate_index",
    "split",
    "example_index",
    "example_line",
    "example_id",
    "score",
    "side_info",
    "error",
    "attempts",
    "latency_ms",
    "passed",
    "candidate_digest",
    "cached",
    "task_model",
    "output",
    "generation",
    "run",
];

/// A score as written, `null` read as 0.0 (a missing task's, whose line carries the error).
fn score_or_zero<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(0.0))
}

/// The result-line members a line of `tasks score`/`tasks run --output` or `spec score` carries
/// after its own, with the same meaning as in `run`'s lines: one candidate (the outputs file,
/// the model, the runs file), split `single`, one example per line (the task, the run).
#[derive(Debug, Clone, Serialize)]
pub struct SharedMembers<'a> {
    /// What was scored: the outputs file (`tasks score`), the model (`tasks run`), the runs
    /// file (`spec score`), as named in the command's summary.
    pub candidate_id: &'a str,
    /// Always 0: one candidate.
    pub candidate_index: usize,
    /// Always `single`: the commands have no dataset and valset.
    pub split: Split,
    /// 0-based position of the task among the valid tasks, or of the run in the runs file.
    pub example_index: usize,
    /// 1-based line of the run in the runs file; null for a task (named by its id).
    pub example_line: Option<usize>,
    /// The task id, or the run's `id` (a string, or a number as written; absent when it has
    /// none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example_id: Option<String>,
    /// The score, where the line's own members name it otherwise (`spec score`: the overall
    /// score, 0 without one); a task line's own `score` already is it (`null` for a task
    /// without an output, read as 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Why there is no score: a task without an output (`missing_output`, or the model's error
    /// under `tasks run`), a run the scorecard gave no overall score (`invalid_output`, as
    /// `run --spec` says it).
    pub error: Option<CallError>,
    /// The run the line belongs to; `None` while the lines are spooled before the run is known
    /// (`spec score`: [`RunInfo::as_members`] is added at the end).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<&'a RunInfo>,
}

/// One line of another scoring command: its own members, then the shared ones.
#[derive(Debug, Serialize)]
pub struct ScoredLine<'a, T: Serialize> {
    /// The command's own record (a task's score, a run's evaluation record).
    #[serde(flatten)]
    pub own: &'a T,
    /// The result-line members.
    #[serde(flatten)]
    pub shared: SharedMembers<'a>,
}

/// The `run` of a scoring command's lines, built as they are written: which command, the
/// evaluator (the task suite, the spec), and digests of what was scored, so lines of two
/// scorings are never counted as one and two scorings of one suite compare.
pub struct ScoredRun {
    command: &'static str,
    evaluator: EvaluatorInfo,
    evaluator_digest: String,
    examples: Fields,
    lines: Fields,
    count: usize,
}

impl ScoredRun {
    /// A run of `command` (`tasks score`, `tasks run`, `spec score`) by `evaluator`, whose
    /// scoring `definition` decides (the valid tasks, the spec).
    pub fn new(command: &'static str, evaluator: EvaluatorInfo, definition: &[u8]) -> ScoredRun {
        let mut digest = Fields::new("evalctl scoring");
        digest
            .add(b'K', evaluator.kind.as_bytes())
            .add(b'S', definition)
            .add(b'V', env!("CARGO_PKG_VERSION").as_bytes());
        ScoredRun {
            command,
            evaluator,
            evaluator_digest: short_hex(&digest.finish()),
            examples: Fields::new("evalctl scoring examples"),
            lines: Fields::new("evalctl scoring results"),
            count: 0,
        }
    }

    /// Count one line: its example (`example_id`) and what its own members say (`own`, as
    /// JSON).
    pub fn add(&mut self, example_id: &str, own: &[u8]) {
        self.examples.add(b'E', example_id.as_bytes());
        self.lines.add(b'L', own);
        self.count += 1;
    }

    /// The `run` of the lines counted, all of `candidate`'s: one candidate, split `single`,
    /// scores in [0, 1], one unsharded plan of as many calls as lines.
    pub fn finish(self, candidate: &str) -> RunInfo {
        let inputs = self.examples.finish();
        let mut run = Fields::new("evalctl scoring run");
        run.add(b'E', self.evaluator_digest.as_bytes())
            .add(b'I', &inputs)
            .add(b'N', candidate.as_bytes())
            .add(b'L', &self.lines.finish());
        RunInfo {
            command: Some(self.command.to_string()),
            evaluator: self.evaluator,
            score_range: "unit".to_string(),
            splits: Splits {
                train: false,
                val: false,
            },
            candidates: 1,
            identity: Some(RunIdentity {
                fingerprint: short_hex(&run.finish()),
                evaluator_digest: self.evaluator_digest,
                inputs_digest: short_hex(&inputs),
                shard: "0/1".to_string(),
                shard_calls: self.count,
                plan_calls: self.count,
            }),
        }
    }
}

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

impl RunInfo {
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
    /// `K/N` (`--shard`; `0/1` for an unsharded run).
    pub shard: String,
    /// Calls in this shard's plan.
    pub shard_calls: usize,
    /// Calls in the whole run's plan, every shard together.
    pub plan_calls: usize,
}

/// Which splits the run has, so a split with no finished call still shows as n = 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Splits {
    /// A dataset was given.
    pub train: bool,
    /// A valset was given.
    pub val: bool,
}
