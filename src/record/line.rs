//! One result line: a finished call as `--output` writes it, read back from results files too
//! (`--resume`, the journal reader), and what summaries aggregate.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::run::{RunInfo, Splits};
use crate::protocol::CallError;
use crate::text::fold_lines;

/// Which examples a call belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// No dataset: one call per candidate.
    Single,
    /// A dataset example.
    Train,
    /// A valset example.
    Val,
}

impl Split {
    /// `single`, `train` or `val`, as a result line writes it.
    pub fn name(self) -> &'static str {
        match self {
            Split::Single => "single",
            Split::Train => "train",
            Split::Val => "val",
        }
    }

    /// The split of `splits` whose mean is a candidate's score: `val` when there is a valset,
    /// else `train`, else `single`.
    pub fn scored_in(splits: Splits) -> Split {
        if splits.val {
            Split::Val
        } else if splits.train {
            Split::Train
        } else {
            Split::Single
        }
    }
}

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
    /// The API's reply reported no token usage: `usage` is unknown, not zero.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub usage_missing: bool,
    /// The answer an earlier line of this call recorded, scored again by `--resume`: what it
    /// spent counts on that line, not on this one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recalled: bool,
    /// The task model stopped at its token limit (`finish_reason: length`): the answer scored
    /// may be cut short.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
}

impl GenerationInfo {
    /// Whether this call's task model spent tokens: it was called, not answered by the cache
    /// or by an earlier line's answer.
    pub fn spent(&self) -> bool {
        !self.cached && !self.recalled
    }
}

impl CallRecord {
    /// Whether the line answers no call: the run stopped after its task model answered and
    /// before the evaluator scored it (`interrupted`). It keeps the answer, for `--resume`, and
    /// what it spent.
    pub fn unscored(&self) -> bool {
        self.error
            .as_ref()
            .is_some_and(|error| error.kind == crate::protocol::ErrorKind::Interrupted)
    }

    /// The prompt and completion tokens the evaluator's `side_info.usage` reports (the LLM
    /// judge's call, on failed calls too), when it reports either.
    pub fn evaluator_tokens(&self) -> Option<(u64, u64)> {
        let usage = self.side_info.get("usage")?;
        let tokens = |key: &str| usage.get(key).and_then(Value::as_u64);
        let (prompt, completion) = (tokens("prompt_tokens"), tokens("completion_tokens"));
        (prompt.is_some() || completion.is_some())
            .then(|| (prompt.unwrap_or(0), completion.unwrap_or(0)))
    }

    /// The models of this call whose API reported no token usage, so that what the call spent
    /// is unknown: its task model's (a reply without `usage`), then `judge`'s, the LLM judge
    /// whose reply (read, a score in it or not: its `model` is known) said no tokens. Calls the
    /// caches answered spent nothing, and an answer an earlier line recorded is that line's.
    pub fn usage_missing_from<'a>(&'a self, judge: Option<&'a str>) -> Vec<&'a str> {
        let generation = self.generation.as_ref();
        let task_model = self.task_model.as_deref().filter(|_| {
            generation.is_some_and(|generation| generation.usage_missing && generation.spent())
        });
        let judged = !self.cached
            && self.side_info.contains_key("model")
            && self.evaluator_tokens().is_none();
        task_model
            .into_iter()
            .chain(judge.filter(|_| judged))
            .collect()
    }

    /// The task model whose answer this call scored was cut at its token limit, if it was.
    pub fn cut_short_by(&self) -> Option<&str> {
        let cut_short = self.generation.as_ref().is_some_and(|g| g.cut_short);
        self.task_model.as_deref().filter(|_| cut_short)
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

    /// What tells this call's lines from other calls' in a results file, so that a call with
    /// several lines (a resumed call, a scoring appended twice) counts once: its key, else (lines
    /// of the other scoring commands, and of older evalctl versions) its candidate, split,
    /// example and repeat.
    pub fn call_key(&self) -> String {
        self.key.clone().unwrap_or_else(|| {
            format!(
                "{}/{:?}/{:?}/{:?}",
                self.candidate_label(),
                self.split,
                self.example_index,
                self.repeat
            )
        })
    }

    /// The candidate, with the task model that answered it under `run --generate`
    /// (`prompt.txt with openai/gpt-4o-mini`).
    pub fn candidate_label(&self) -> String {
        let candidate = fold_lines(&self.candidate_id);
        match &self.task_model {
            Some(model) => format!("{candidate} with {model}"),
            None => candidate,
        }
    }

    /// A short human label: `prompt.txt train q20 (line 4)` by the example's `id`, else by its
    /// index, `prompt.txt train #3 (line 4)`; under `run --generate`, `prompt.txt with
    /// openai/gpt-4o-mini train q20 (line 4)`. A single call is its candidate alone; a line of
    /// another scoring command (split `single`, with an example) names its task or run:
    /// `outputs.jsonl t-3`, `runs.jsonl run-1 (line 2)`. A repeat ends it: `prompt.txt train
    /// q20 (line 4) repeat 2`.
    pub fn call_label(&self) -> String {
        match self.repeat {
            Some(repeat) => format!("{} repeat {repeat}", self.example_label()),
            None => self.example_label(),
        }
    }

    /// [`CallRecord::call_label`] without the repeat.
    fn example_label(&self) -> String {
        let mut label = self.candidate_label();
        match self.split {
            Split::Single => {}
            Split::Train => label.push_str(" train"),
            Split::Val => label.push_str(" val"),
        }
        let example = match (&self.example_id, self.example_index) {
            (Some(id), _) => fold_lines(id),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(line: Value) -> CallRecord {
        let mut base = json!({"candidate_id": "c", "split": "train", "score": 1.0,
                              "error": null, "attempts": 1, "latency_ms": 2.0});
        base.as_object_mut()
            .unwrap()
            .extend(line.as_object().unwrap().clone());
        serde_json::from_value(base).unwrap()
    }

    #[test]
    fn a_call_whose_api_reported_no_tokens_names_its_model() {
        let generation = |extra: Value| {
            let mut generation = json!({"usage": {"prompt_tokens": 0, "completion_tokens": 0,
                                                  "total_tokens": 0},
                                        "latency_ms": 1.0, "attempts": 1});
            generation
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            record(json!({"task_model": "acme/mute", "generation": generation,
                          "side_info": {"usage": {"prompt_tokens": 3}}}))
        };
        let mute = generation(json!({"usage_missing": true}));
        assert_eq!(mute.usage_missing_from(Some("acme/judge")), ["acme/mute"]);
        // The cache's answer spent nothing; a reply with its usage is counted.
        let cached = generation(json!({"usage_missing": true, "cached": true}));
        assert!(cached.usage_missing_from(Some("acme/judge")).is_empty());
        assert!(generation(json!({}))
            .usage_missing_from(Some("acme/judge"))
            .is_empty());
        // A judge whose reply said no tokens, a score in it or not; not a call that got no
        // reply, or that the cache answered.
        let judged = record(json!({"side_info": {"reasoning": "fine", "model": "judge"}}));
        assert_eq!(
            judged.usage_missing_from(Some("acme/judge")),
            ["acme/judge"]
        );
        assert!(judged.usage_missing_from(None).is_empty());
        let unreadable = record(json!({"side_info": {"model": "judge"},
                                       "error": {"kind": "invalid_json", "message": "prose"}}));
        assert_eq!(
            unreadable.usage_missing_from(Some("acme/judge")),
            ["acme/judge"]
        );
        let failed = record(json!({"error": {"kind": "timeout", "message": "slow"}}));
        assert!(failed.usage_missing_from(Some("acme/judge")).is_empty());
        let cached = record(json!({"cached": true, "side_info": {"model": "judge"}}));
        assert!(cached.usage_missing_from(Some("acme/judge")).is_empty());
        // Both a task model and the judge that said no tokens, in that order.
        let mut both = generation(json!({"usage_missing": true}));
        both.side_info = judged.side_info.clone();
        assert_eq!(
            both.usage_missing_from(Some("acme/judge")),
            ["acme/mute", "acme/judge"]
        );
    }
}
