//! The lines of the other scoring commands (`tasks score --output`, `tasks run --output`,
//! `spec score`): their own members, then the result-line members their meaning shares, and the
//! `run` member built as they are written.

use serde::Serialize;

use super::line::Split;
use super::run::{EvaluatorInfo, RunIdentity, RunInfo, Splits};
use crate::digest::{short_hex, Fields};
use crate::protocol::CallError;

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
    scorer: Scorer,
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
            scorer: Scorer {
                command,
                evaluator,
                evaluator_digest: short_hex(&digest.finish()),
            },
            examples: Fields::new("evalctl scoring examples"),
            lines: Fields::new("evalctl scoring results"),
            count: 0,
        }
    }

    /// Count one line: its example, named by `example_id` and made of the texts `example` (what
    /// was asked: a task's prompts, the cases a run was given), and what its own members say
    /// (`own`, as JSON). Two scorings whose examples differ in any of those do not compare.
    pub fn add<'e>(
        &mut self,
        example_id: &str,
        example: impl IntoIterator<Item = &'e str>,
        own: &[u8],
    ) {
        self.examples.add(b'E', example_id.as_bytes());
        for text in example {
            self.examples.add(b'X', text.as_bytes());
        }
        self.lines.add(b'L', own);
        self.count += 1;
    }

    /// The `run` of the lines counted, all of `candidate`'s: one candidate, split `single`,
    /// scores in [0, 1], one unsharded plan of `plan_calls` calls (fewer lines than that are an
    /// interrupted scoring, which the readers of the file then see as partial).
    pub fn finish(self, candidate: &str, plan_calls: usize) -> RunInfo {
        let inputs = self.examples.finish();
        let mut run = Fields::new("evalctl scoring run");
        run.add(b'E', self.scorer.evaluator_digest.as_bytes())
            .add(b'I', &inputs)
            .add(b'N', candidate.as_bytes())
            .add(b'L', &self.lines.finish());
        let (fingerprint, inputs_digest) = (short_hex(&run.finish()), short_hex(&inputs));
        self.scorer
            .run_info(fingerprint, inputs_digest, self.count, plan_calls)
    }

    /// How long [`RunInfo::as_members`] of the `run` will be once `lines` lines are counted, in a
    /// plan of as many calls: every digest has 16 hex digits, so only the count decides it.
    pub fn members_len(&self, lines: usize) -> usize {
        let placeholder = short_hex(&[0; 8]);
        self.scorer
            .run_info(placeholder.clone(), placeholder, lines, lines)
            .as_members()
            .map_or(0, |members| members.len())
    }
}

/// Who scored: the command and the evaluator, with the evaluator's digest.
struct Scorer {
    command: &'static str,
    evaluator: EvaluatorInfo,
    evaluator_digest: String,
}

impl Scorer {
    /// The `run` of `lines` lines of this scorer's, of a plan of `plan_calls` calls, with these
    /// digests.
    fn run_info(
        &self,
        fingerprint: String,
        inputs_digest: String,
        lines: usize,
        plan_calls: usize,
    ) -> RunInfo {
        RunInfo {
            command: Some(self.command.to_string()),
            evaluator: self.evaluator.clone(),
            score_range: "unit".to_string(),
            splits: Splits {
                train: false,
                val: false,
            },
            candidates: 1,
            identity: Some(RunIdentity {
                fingerprint,
                evaluator_digest: self.evaluator_digest.clone(),
                inputs_digest,
                shard: "0/1".to_string(),
                shard_calls: lines,
                plan_calls,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::SPEC_SCORE;

    #[test]
    fn the_members_foreseen_for_a_count_are_as_long_as_the_run_of_that_many_lines() {
        for lines in [0, 1, 9, 10, 12_345] {
            let evaluator = EvaluatorInfo {
                kind: "spec".to_string(),
                target: "a \"quoted\" spec.yaml".to_string(),
            };
            let mut scored = ScoredRun::new(SPEC_SCORE, evaluator, b"{}");
            let foreseen = scored.members_len(lines);
            for line in 0..lines {
                scored.add(&line.to_string(), [], b"{}");
            }
            let members = scored
                .finish("runs.jsonl", lines)
                .as_members()
                .expect("members");
            assert_eq!(foreseen, members.len(), "{lines} lines");
        }
    }
}
