//! From judge replies to one judge result (`docs/spec.md`, "Live judges"): each reply's score by
//! mode (rubric and reference scores clamped to the score scale and normalised, assertion verdicts
//! flipped by `expect: false`, n_wise Borda positions), the per-model median (assertion: majority,
//! ties pass), the cross-model consensus, the confidence and the population variance of the
//! samples.

use serde_json::{json, Map, Value};

use crate::evaluation_spec::judges::JudgeResult;
use crate::evaluation_spec::model::Consensus;

/// The reason of a judge result when no sample produced a score.
pub const NO_SAMPLE_REASON: &str = "all judge invocations failed or returned unparsable output";

/// The spread between model scores above which a multi-model result has `low` confidence, when
/// `consensus.min_agreement_threshold` is not set.
const DEFAULT_DISAGREEMENT: f64 = 0.25;

/// A judge's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Score the output against a rubric.
    Rubric,
    /// Score the output against a rubric and a reference answer.
    Reference,
    /// Pass or fail an assertion about the output.
    Assertion,
    /// Rank the outputs of every agent of the run.
    NWise,
}

impl Mode {
    /// The mode named `name` (as a spec writes it).
    pub fn parse(name: &str) -> Option<Mode> {
        match name {
            "rubric" => Some(Mode::Rubric),
            "reference" => Some(Mode::Reference),
            "assertion" => Some(Mode::Assertion),
            "n_wise" => Some(Mode::NWise),
            _ => None,
        }
    }
}

/// What one reply must hold and how it becomes a score in [0, 1].
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    /// `{"score": x}`: clamped to [min, max], then (x − min) / (max − min).
    Scale {
        /// Lowest raw score.
        min: f64,
        /// Highest raw score.
        max: f64,
    },
    /// `{"pass": bool}` or `{"verdict": "pass"|"fail"|"true"|"false"|"yes"|"no"}`: 1 when it
    /// equals `expect`, else 0.
    Verdict {
        /// The verdict that counts as a pass.
        expect: bool,
    },
    /// `{"ranking": [labels, best first]}`: (N − 1 − position) / (N − 1) of `own`.
    Ranking {
        /// The label the run's own output was shown under.
        own: String,
        /// Every label shown.
        labels: Vec<String>,
    },
}

impl Reading {
    /// The score of a reply, given the judge's JSON object as the judge client reads it (its
    /// keys, with `score` as `judge_score`).
    pub fn score(&self, reply: &Map<String, Value>) -> Result<f64, String> {
        match self {
            Reading::Scale { min, max } => {
                let raw = reply
                    .get("judge_score")
                    .ok_or("the judge's reply has no \"score\"")?;
                let raw = raw
                    .as_f64()
                    .filter(|raw| raw.is_finite())
                    .ok_or_else(|| format!("the judge's \"score\" is not a number: {raw}"))?;
                Ok((raw.clamp(*min, *max) - min) / (max - min))
            }
            Reading::Verdict { expect } => {
                let verdict = match (reply.get("pass"), reply.get("verdict")) {
                    (Some(Value::Bool(pass)), _) => *pass,
                    (_, Some(Value::String(word))) => verdict_word(word).ok_or_else(|| {
                        format!("the judge's \"verdict\" is not a verdict: {word:?}")
                    })?,
                    _ => {
                        return Err(
                            "the judge's reply has no boolean \"pass\" or \"verdict\" word".into(),
                        )
                    }
                };
                Ok(if verdict == *expect { 1.0 } else { 0.0 })
            }
            Reading::Ranking { own, labels } => {
                let ranking = reply
                    .get("ranking")
                    .and_then(Value::as_array)
                    .ok_or("the judge's reply has no \"ranking\" array")?;
                let mut ranked: Vec<&str> = Vec::new();
                for label in ranking.iter().filter_map(Value::as_str) {
                    let label = label.trim();
                    if labels.iter().any(|known| known == label) && !ranked.contains(&label) {
                        ranked.push(label);
                    }
                }
                let position = ranked
                    .iter()
                    .position(|label| label == own)
                    .ok_or_else(|| format!("the judge's \"ranking\" does not place {own}"))?;
                let last = labels.len().saturating_sub(1).max(1) as f64;
                Ok((last - position as f64) / last)
            }
        }
    }
}

/// `pass`/`true`/`yes` or `fail`/`false`/`no`, in any case.
fn verdict_word(word: &str) -> Option<bool> {
    match word.trim().to_lowercase().as_str() {
        "pass" | "true" | "yes" => Some(true),
        "fail" | "false" | "no" => Some(false),
        _ => None,
    }
}

/// The samples of one judge model: the scores of the replies that could be read, and why the
/// others could not.
#[derive(Debug, Clone, Default)]
pub struct ModelSamples {
    /// The model id as declared.
    pub model: String,
    /// Scores in [0, 1], one per successful sample.
    pub scores: Vec<f64>,
    /// One message per failed sample (already free of secrets).
    pub errors: Vec<String>,
}

/// The median (the mean of the middle two for an even count); `None` for no values.
fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    match sorted.len() {
        0 => None,
        n if n % 2 == 1 => Some(sorted[middle]),
        _ => Some((sorted[middle - 1] + sorted[middle]) / 2.0),
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// 1 when at least half of `values` pass (≥ 0.5), else 0.
fn majority(values: &[f64]) -> f64 {
    let passes = values.iter().filter(|value| **value >= 0.5).count();
    if 2 * passes >= values.len() {
        1.0
    } else {
        0.0
    }
}

/// The judge result of `judge_key` from its models' samples. `assertion` picks the per-model
/// majority and the `majority_vote` default; `consensus` combines several models.
pub fn combine(
    judge_key: &str,
    mode_name: &str,
    assertion: bool,
    consensus: Option<&Consensus>,
    models: &[ModelSamples],
) -> JudgeResult {
    let mut warnings = Vec::new();
    let mut model_scores = Vec::new();
    let mut per_model = Vec::new();
    for samples in models {
        let value = if samples.scores.is_empty() {
            None
        } else if assertion {
            Some(majority(&samples.scores))
        } else {
            median(&samples.scores)
        };
        if !samples.errors.is_empty() {
            warnings.push(format!(
                "model {:?}: {} of {} samples failed",
                samples.model,
                samples.errors.len(),
                samples.errors.len() + samples.scores.len()
            ));
        }
        model_scores.extend(value);
        per_model.push(json!({
            "model": samples.model,
            "score": value,
            "samples": samples.scores,
            "errors": samples.errors,
        }));
    }
    let all_samples: Vec<f64> = models
        .iter()
        .flat_map(|samples| samples.scores.iter().copied())
        .collect();
    let mut payload = Map::new();
    payload.insert("models".into(), Value::Array(per_model));
    let mut result = JudgeResult {
        judge_key: judge_key.to_string(),
        mode: mode_name.to_string(),
        sample_count: all_samples.len() as i64,
        model_count: model_scores.len() as i64,
        ..JudgeResult::default()
    };
    if model_scores.is_empty() {
        payload.insert("warnings".into(), json!(warnings));
        result.payload = Value::Object(payload);
        result.reason = NO_SAMPLE_REASON.to_string();
        return result;
    }
    let (score, confidence) = if models.len() == 1 {
        (model_scores[0], "single-model")
    } else {
        let aggregation = consensus
            .map(|consensus| consensus.aggregation.as_str())
            .filter(|aggregation| !aggregation.is_empty())
            .unwrap_or(if assertion { "majority_vote" } else { "mean" });
        payload.insert("aggregation".into(), json!(aggregation));
        let score = match aggregation {
            "median" => median(&model_scores).unwrap_or_default(),
            "majority_vote" => majority(&model_scores),
            "unanimous" => {
                if model_scores.iter().all(|value| *value >= 0.5) {
                    1.0
                } else {
                    0.0
                }
            }
            _ => mean(&model_scores),
        };
        let threshold = consensus
            .map(|consensus| consensus.min_agreement_threshold)
            .filter(|threshold| *threshold > 0.0)
            .unwrap_or(DEFAULT_DISAGREEMENT);
        let spread = model_scores.iter().copied().fold(f64::MIN, f64::max)
            - model_scores.iter().copied().fold(f64::MAX, f64::min);
        payload.insert("spread".into(), json!(spread));
        if model_scores.len() < models.len() {
            warnings.push(format!(
                "{} of {} models gave no usable reply",
                models.len() - model_scores.len(),
                models.len()
            ));
        }
        let confidence = if !warnings.is_empty() || spread > threshold {
            "low"
        } else if spread == 0.0 {
            "high"
        } else {
            "medium"
        };
        (score, confidence)
    };
    let sample_mean = mean(&all_samples);
    let variance = all_samples
        .iter()
        .map(|sample| (sample - sample_mean).powi(2))
        .sum::<f64>()
        / all_samples.len() as f64;
    payload.insert("warnings".into(), json!(warnings));
    result.payload = Value::Object(payload);
    result.normalized_score = Some(score);
    result.confidence = Some(confidence.to_string());
    result.variance = Some(variance);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(model: &str, scores: &[f64], failed: usize) -> ModelSamples {
        ModelSamples {
            model: model.into(),
            scores: scores.to_vec(),
            errors: vec!["timeout".into(); failed],
        }
    }

    fn consensus(aggregation: &str) -> Consensus {
        Consensus {
            aggregation: aggregation.into(),
            ..Consensus::default()
        }
    }

    #[test]
    fn readings_by_mode() {
        let reply = |value: Value| value.as_object().cloned().unwrap_or_default();
        let scale = Reading::Scale { min: 1.0, max: 5.0 };
        assert_eq!(scale.score(&reply(json!({"judge_score": 4}))), Ok(0.75));
        assert_eq!(scale.score(&reply(json!({"judge_score": 9}))), Ok(1.0));
        assert_eq!(scale.score(&reply(json!({"judge_score": 0}))), Ok(0.0));
        assert!(scale.score(&reply(json!({"judge_score": "4"}))).is_err());
        assert!(scale.score(&reply(json!({"pass": true}))).is_err());
        let verdict = Reading::Verdict { expect: false };
        assert_eq!(verdict.score(&reply(json!({"pass": false}))), Ok(1.0));
        assert_eq!(verdict.score(&reply(json!({"verdict": " YES "}))), Ok(0.0));
        assert_eq!(verdict.score(&reply(json!({"verdict": "fail"}))), Ok(1.0));
        assert!(verdict.score(&reply(json!({"verdict": "maybe"}))).is_err());
        assert!(verdict.score(&reply(json!({"pass": "true"}))).is_err());
        let labels: Vec<String> = ["candidate_1", "candidate_2", "candidate_3"]
            .map(String::from)
            .into();
        let ranking = Reading::Ranking {
            own: "candidate_2".into(),
            labels,
        };
        let ranked = |order: Value| ranking.score(&reply(json!({ "ranking": order })));
        assert_eq!(
            ranked(json!(["candidate_2", "candidate_1", "candidate_3"])),
            Ok(1.0)
        );
        assert_eq!(
            ranked(json!(["x", "candidate_3", "candidate_3", "candidate_2"])),
            Ok(0.5)
        );
        assert!(ranked(json!(["candidate_1"])).is_err());
    }

    #[test]
    fn per_model_median_and_majority() {
        let result = combine("k", "rubric", false, None, &[samples("m", &[0.25, 1.0], 1)]);
        assert_eq!(result.normalized_score, Some(0.625));
        assert_eq!(result.confidence.as_deref(), Some("single-model"));
        assert_eq!(result.sample_count, 2);
        assert_eq!(result.variance, Some(0.140625));
        let one_model = |scores: &[f64]| [samples("m", scores, 0)];
        let tie = combine("k", "assertion", true, None, &one_model(&[1.0, 0.0]));
        assert_eq!(tie.normalized_score, Some(1.0));
        let lost = combine("k", "assertion", true, None, &one_model(&[1.0, 0.0, 0.0]));
        assert_eq!(lost.normalized_score, Some(0.0));
    }

    #[test]
    fn consensus_and_confidence() {
        let two = [samples("a", &[0.5], 0), samples("b", &[1.0], 0)];
        let mean = combine("k", "rubric", false, None, &two);
        assert_eq!(mean.normalized_score, Some(0.75));
        assert_eq!(mean.confidence.as_deref(), Some("low"));
        assert_eq!(mean.model_count, 2);
        let agreeing = [samples("a", &[0.5], 0), samples("b", &[0.6], 0)];
        let medium = combine("k", "rubric", false, Some(&consensus("median")), &agreeing);
        assert_eq!(medium.normalized_score, Some(0.55));
        assert_eq!(medium.confidence.as_deref(), Some("medium"));
        let votes = [
            samples("a", &[1.0], 0),
            samples("b", &[0.0], 0),
            samples("c", &[1.0], 0),
        ];
        let unanimous = combine(
            "k",
            "assertion",
            true,
            Some(&consensus("unanimous")),
            &votes,
        );
        assert_eq!(unanimous.normalized_score, Some(0.0));
        let vote = combine("k", "assertion", true, None, &votes);
        assert_eq!(vote.normalized_score, Some(1.0));
        let same = [samples("a", &[1.0], 0), samples("b", &[1.0], 0)];
        let high = combine("k", "assertion", true, None, &same);
        assert_eq!(high.confidence.as_deref(), Some("high"));
        let one_failed = [samples("a", &[1.0], 0), samples("b", &[], 2)];
        let low = combine("k", "assertion", true, None, &one_failed);
        assert_eq!(low.normalized_score, Some(1.0));
        assert_eq!(low.confidence.as_deref(), Some("low"));
        assert_eq!(low.model_count, 1);
    }

    #[test]
    fn no_sample_no_score() {
        let result = combine("k", "rubric", false, None, &[samples("m", &[], 3)]);
        assert_eq!(result.normalized_score, None);
        assert_eq!(result.reason, NO_SAMPLE_REASON);
        assert_eq!(result.confidence, None);
        assert_eq!(result.payload["models"][0]["errors"][2], "timeout");
    }
}
