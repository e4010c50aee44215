//! The run summary: per-candidate aggregates over each split, and the call counts.

use serde::Serialize;

use super::CallRecord;
use crate::protocol::ScoreRange;
use crate::runner::Split;

/// Which evaluator ran.
#[derive(Debug, Clone, Serialize)]
pub struct EvaluatorInfo {
    /// `command`, `http`, `judge` or `checks`.
    pub kind: String,
    /// The command line, URL, model or checks file.
    pub target: String,
}

/// Call counts.
#[derive(Debug, Clone, Serialize)]
pub struct Calls {
    /// Calls that finished.
    pub total: usize,
    /// Calls that produced a valid score.
    pub ok: usize,
    /// Calls that failed (they score 0.0 in aggregates).
    pub errors: usize,
}

/// Tokens spent by the run, summed from each record's `side_info.usage` (the LLM judge reports
/// it; any evaluator may).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Usage {
    /// Sum of `usage.prompt_tokens`.
    pub prompt_tokens: u64,
    /// Sum of `usage.completion_tokens`.
    pub completion_tokens: u64,
}

impl Usage {
    /// The total over `records`, or `None` when no record reports usage.
    fn of(records: &[CallRecord]) -> Option<Usage> {
        let tokens = |usage: &serde_json::Value, key: &str| usage.get(key)?.as_u64();
        records
            .iter()
            .filter_map(|record| record.side_info.get("usage"))
            .filter_map(|usage| {
                let prompt = tokens(usage, "prompt_tokens");
                let completion = tokens(usage, "completion_tokens");
                (prompt.is_some() || completion.is_some()).then(|| Usage {
                    prompt_tokens: prompt.unwrap_or(0),
                    completion_tokens: completion.unwrap_or(0),
                })
            })
            .reduce(|total, usage| Usage {
                prompt_tokens: total.prompt_tokens.saturating_add(usage.prompt_tokens),
                completion_tokens: total
                    .completion_tokens
                    .saturating_add(usage.completion_tokens),
            })
    }
}

/// Aggregate of one candidate over one split. Failed calls count as 0.0.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Aggregate {
    /// Finished calls.
    pub n: usize,
    /// Mean score (null when no call finished).
    pub mean: Option<f64>,
    /// Lowest score.
    pub min: Option<f64>,
    /// Highest score.
    pub max: Option<f64>,
    /// Failed calls.
    pub errors: usize,
}

/// One candidate's line of the summary.
#[derive(Debug, Clone, Serialize)]
pub struct CandidateSummary {
    /// The candidate's id.
    pub id: String,
    /// The val mean with a valset, else the train mean, else the single score.
    pub score: Option<f64>,
    /// Over dataset examples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub train: Option<Aggregate>,
    /// Over valset examples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub val: Option<Aggregate>,
    /// The single call of single-artifact mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub single: Option<Aggregate>,
}

/// The whole run's summary (`--format json` prints it as is).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Which evaluator ran.
    pub evaluator: EvaluatorInfo,
    /// `unit` or `any`.
    pub score_range: ScoreRange,
    /// Call counts.
    pub calls: Calls,
    /// Tokens spent, when any call reported `usage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Wall time of the run (preflight excluded).
    pub elapsed_ms: f64,
    /// True when Ctrl-C stopped the run early; the aggregates cover finished calls only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Per candidate, in the order given.
    pub candidates: Vec<CandidateSummary>,
}

/// Which splits the run has, so a split with no finished call still shows as n = 0.
#[derive(Debug, Clone, Copy)]
pub struct Splits {
    /// A dataset was given.
    pub train: bool,
    /// A valset was given.
    pub val: bool,
}

impl Summary {
    /// Aggregate `records` for `candidate_ids` (in order).
    pub fn build(
        evaluator: EvaluatorInfo,
        score_range: ScoreRange,
        candidate_ids: &[String],
        splits: Splits,
        records: &[CallRecord],
        elapsed_ms: f64,
        interrupted: bool,
    ) -> Summary {
        let errors = records
            .iter()
            .filter(|record| record.error.is_some())
            .count();
        let candidates = candidate_ids
            .iter()
            .map(|id| {
                let aggregate = |split| {
                    Aggregate::of(
                        records
                            .iter()
                            .filter(|r| r.split == split && &r.candidate_id == id),
                    )
                };
                let (train, val, single) = if splits.train {
                    (
                        Some(aggregate(Split::Train)),
                        splits.val.then(|| aggregate(Split::Val)),
                        None,
                    )
                } else {
                    (None, None, Some(aggregate(Split::Single)))
                };
                let score = val
                    .as_ref()
                    .or(train.as_ref())
                    .or(single.as_ref())
                    .and_then(|agg| agg.mean);
                CandidateSummary {
                    id: id.clone(),
                    score,
                    train,
                    val,
                    single,
                }
            })
            .collect();
        Summary {
            evaluator,
            score_range,
            calls: Calls {
                total: records.len(),
                ok: records.len() - errors,
                errors,
            },
            usage: Usage::of(records),
            elapsed_ms,
            interrupted,
            candidates,
        }
    }

    /// Candidates that fail `--fail-under threshold`: scored below it, or not scored at all (no
    /// call finished, e.g. `--limit 0`), since a gate must not pass on nothing.
    pub fn below(&self, threshold: f64) -> Vec<&CandidateSummary> {
        self.candidates
            .iter()
            .filter(|c| c.score.is_none_or(|score| score < threshold))
            .collect()
    }
}

impl Aggregate {
    fn of<'a>(records: impl Iterator<Item = &'a CallRecord>) -> Aggregate {
        let mut aggregate = Aggregate {
            n: 0,
            mean: None,
            min: None,
            max: None,
            errors: 0,
        };
        let mut sum = 0.0;
        for record in records {
            aggregate.n += 1;
            aggregate.errors += usize::from(record.error.is_some());
            sum += record.score;
            aggregate.min = Some(
                aggregate
                    .min
                    .map_or(record.score, |min: f64| min.min(record.score)),
            );
            aggregate.max = Some(
                aggregate
                    .max
                    .map_or(record.score, |max: f64| max.max(record.score)),
            );
        }
        if aggregate.n > 0 {
            aggregate.mean = Some(sum / aggregate.n as f64);
        }
        aggregate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(side_info: serde_json::Value) -> CallRecord {
        let serde_json::Value::Object(side_info) = side_info else {
            panic!("side info is an object")
        };
        CallRecord {
            candidate_id: "c".into(),
            split: Split::Single,
            example_index: None,
            example_line: None,
            score: 0.5,
            side_info,
            error: None,
            attempts: 1,
            latency_ms: 1.0,
        }
    }

    #[test]
    fn usage_is_summed_only_when_reported() {
        assert_eq!(Usage::of(&[record(json!({"why": "x"}))]), None);
        let records = [
            record(json!({"usage": {"prompt_tokens": 10, "completion_tokens": 3}})),
            record(json!({"usage": {"prompt_tokens": 7}})),
            record(json!({"usage": "n/a"})),
            record(json!({})),
        ];
        assert_eq!(
            Usage::of(&records),
            Some(Usage {
                prompt_tokens: 17,
                completion_tokens: 3
            })
        );
    }
}
