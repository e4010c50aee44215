//! The result record of one evaluator call: one `--output` line, and what summaries aggregate.
//! Records are read back from results files too (`--resume`, and the journal reader).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
    /// The score; 0.0 when the call failed.
    pub score: f64,
    /// Every other key of the evaluator's answer, verbatim.
    pub side_info: Map<String, Value>,
    /// Why the call failed, or null.
    pub error: Option<CallError>,
    /// Attempts made (1 + retries used).
    pub attempts: u32,
    /// Wall time of the call, retries included, in milliseconds.
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
    /// openai/gpt-4o-mini train q20 (line 4)`.
    pub fn call_label(&self) -> String {
        let candidate = self.candidate_label();
        let split = match self.split {
            Split::Single => return candidate,
            Split::Train => "train",
            Split::Val => "val",
        };
        let example = match (&self.example_id, self.example_index) {
            (Some(id), _) => id.clone(),
            (None, Some(index)) => format!("#{index}"),
            (None, None) => return format!("{candidate} {split}"),
        };
        match self.example_line {
            Some(line) => format!("{candidate} {split} {example} (line {line})"),
            None => format!("{candidate} {split} {example}"),
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
