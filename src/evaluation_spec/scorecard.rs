//! Scorecards (the reference's "Scorecard" section; `docs/spec.md`, "Dimensions and strategies"):
//! each dimension's score from its source, the normalisation envelopes, and the weighted / binary /
//! hybrid strategies that turn dimension results into an overall score and a pass verdict.

use serde::{Serialize, Serializer};

use super::evidence::Evidence;
use super::judges::JudgeResult;
use super::metrics::{latency_ms, model_cost, MetricResult};
use super::model::{Dimension, SpecDefinition};
use super::signals::{behavioral_dimension, ValidatorScore};
use super::validators::ResultState;

/// Serialise a [`ResultState`] as its record text.
fn serialize_state<S: Serializer>(state: &ResultState, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(state.as_str())
}

/// One dimension's result in the evaluation record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DimensionResult {
    /// The dimension's key.
    pub dimension: String,
    /// Its score in [0,1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// `available`, `unavailable` or `error`.
    #[serde(serialize_with = "serialize_state")]
    pub state: ResultState,
    /// Why there is no score (or why it is 0, for a failed behavioral gate).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// `higher` or `lower`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub better_direction: String,
}

/// A dimension outcome before it gets its key: score, or state with reason.
type Scored = (Option<f64>, ResultState, String);

fn available(score: f64) -> Scored {
    (Some(score), ResultState::Available, String::new())
}

fn unavailable(reason: impl Into<String>) -> Scored {
    (None, ResultState::Unavailable, reason.into())
}

fn errored(reason: impl Into<String>) -> Scored {
    (None, ResultState::Error, reason.into())
}

/// Lower is better: 1 at or below `target`, 0 at or above `max`, linear between.
pub fn normalize_lower(value: f64, target: f64, max: f64) -> f64 {
    if value <= target {
        1.0
    } else if value >= max || max <= target {
        0.0
    } else {
        1.0 - (value - target) / (max - target)
    }
}

/// Higher is better: 1 at or above `target`, 0 at or below `floor`, linear between.
pub fn normalize_higher(value: f64, target: f64, floor: f64) -> f64 {
    if value >= target {
        1.0
    } else if value <= floor || target <= floor {
        0.0
    } else {
        (value - floor) / (target - floor)
    }
}

/// One validator's result as the scorecard sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidatorSummary<'a> {
    /// The validator's key.
    pub key: &'a str,
    /// Its state and score.
    pub score: ValidatorScore,
    /// Its reason.
    pub reason: &'a str,
}

/// The mean score of the validators in `scope` (all when empty), in declaration order; the first
/// one that is not available decides an error or unavailable result.
pub fn validators_dimension(scope: &[String], validators: &[ValidatorSummary]) -> Scored {
    let mut total = 0.0;
    let mut count = 0;
    for validator in validators {
        if !scope.is_empty() && !scope.iter().any(|key| key == validator.key) {
            continue;
        }
        count += 1;
        let reason = |fallback: &str| {
            if validator.reason.trim().is_empty() {
                fallback.to_string()
            } else {
                validator.reason.to_string()
            }
        };
        match (validator.score.state, validator.score.score) {
            (ResultState::Error, _) => {
                return errored(format!(
                    "validator {:?} errored: {}",
                    validator.key,
                    reason("validator error")
                ))
            }
            (ResultState::Available, Some(score)) => total += score,
            _ => {
                return unavailable(format!(
                    "validator {:?} is unavailable: {}",
                    validator.key,
                    reason("missing validator evidence")
                ))
            }
        }
    }
    if count == 0 {
        return unavailable("no validators in scope");
    }
    available(total / count as f64)
}

/// A judge dimension: the first result with the judge's key.
fn judge_dimension(judge_key: &str, judges: &[JudgeResult]) -> Scored {
    if judge_key.is_empty() {
        return errored("dimension judge_key is not set");
    }
    match judges.iter().find(|result| result.judge_key == judge_key) {
        Some(JudgeResult {
            normalized_score: Some(score),
            ..
        }) => available(*score),
        Some(result) if !result.reason.trim().is_empty() => unavailable(result.reason.clone()),
        _ => unavailable(format!("llm judge {judge_key:?} is unavailable")),
    }
}

/// Everything a dimension may draw on for one run.
pub struct DimensionInputs<'a> {
    /// The spec.
    pub spec: &'a SpecDefinition,
    /// The run's evidence.
    pub evidence: &'a Evidence<'a>,
    /// The validator results, in declaration order.
    pub validators: &'a [ValidatorSummary<'a>],
    /// The validators' states and scores, for the behavioral signals.
    pub validator_scores: &'a [ValidatorScore],
    /// The metric results.
    pub metrics: &'a [MetricResult],
    /// The judge results.
    pub judges: &'a [JudgeResult],
}

fn envelope(dimension: &Dimension) -> Option<(f64, f64)> {
    let normalization = dimension.normalization.as_ref()?;
    Some((normalization.target?, normalization.max?))
}

fn reliability(metrics: &[MetricResult]) -> Scored {
    let find = |collector: &str| metrics.iter().find(|metric| metric.collector == collector);
    let (Some(completed), Some(failures)) = (
        find("run_completed_successfully"),
        find("run_failure_count"),
    ) else {
        return unavailable("reliability requires completion and failure-count metrics");
    };
    let Some(completed) = completed
        .boolean_value
        .filter(|_| completed.state == "available")
    else {
        return unavailable("completion metric is unavailable");
    };
    let Some(failures) = failures
        .numeric_value
        .filter(|_| failures.state == "available")
    else {
        return unavailable("failure-count metric is unavailable");
    };
    available(if completed && failures == 0.0 {
        1.0
    } else {
        0.0
    })
}

fn metric_dimension(dimension: &Dimension, metrics: &[MetricResult]) -> Scored {
    if dimension.metric.is_empty() {
        return errored("dimension metric key is not set");
    }
    let value = metrics
        .iter()
        .find(|metric| metric.key == dimension.metric)
        .filter(|metric| metric.state == "available")
        .and_then(|metric| metric.numeric_value);
    let Some(value) = value else {
        return unavailable(format!("metric {:?} is unavailable", dimension.metric));
    };
    let Some((target, max)) = envelope(dimension) else {
        return unavailable("metric normalization config is unavailable");
    };
    match dimension.better_direction.as_str() {
        "lower" => available(normalize_lower(value, target, max)),
        "higher" => available(normalize_higher(value, target, max)),
        other => errored(format!("unsupported better_direction {other:?}")),
    }
}

/// The result of one dimension for one run.
pub fn dimension_result(dimension: &Dimension, inputs: &DimensionInputs) -> DimensionResult {
    let (score, state, reason) = match dimension.source.as_str() {
        "validators" => validators_dimension(&dimension.validators, inputs.validators),
        "reliability" => reliability(inputs.metrics),
        "latency" => match (latency_ms(inputs.evidence), envelope(dimension)) {
            (None, _) => unavailable("latency evidence is unavailable"),
            (Some(_), None) => unavailable("latency normalization config is unavailable"),
            (Some(value), Some((target, max))) => available(normalize_lower(value, target, max)),
        },
        "cost" => {
            let pricing = inputs
                .spec
                .pricing
                .as_ref()
                .map_or(&[][..], |pricing| &pricing.models[..]);
            match (model_cost(inputs.evidence, pricing), envelope(dimension)) {
                (Err((reason, _)), _) => unavailable(reason),
                (Ok(_), None) => unavailable("cost normalization config is unavailable"),
                (Ok((value, _)), Some((target, max))) => {
                    available(normalize_lower(value, target, max))
                }
            }
        }
        "behavioral" => match behavioral_dimension(
            inputs.spec.behavioral.as_ref(),
            &inputs.evidence.trace,
            &inputs.evidence.turns,
            inputs.validator_scores,
        ) {
            Ok((score, reason)) => (Some(score), ResultState::Available, reason),
            Err(reason) => unavailable(reason),
        },
        "metric" => metric_dimension(dimension, inputs.metrics),
        "llm_judge" => judge_dimension(&dimension.judge_key, inputs.judges),
        "human_preference" => match inputs.evidence.human_preference_score {
            Some(score) => available(score),
            None => unavailable("human preference evidence is unavailable"),
        },
        other => errored(format!("unsupported dimension source {other:?}")),
    };
    DimensionResult {
        dimension: dimension.key.clone(),
        score,
        state,
        reason,
        better_direction: dimension.better_direction.clone(),
    }
}

/// The scorecard's verdict over the dimension results.
#[derive(Debug, Clone, PartialEq)]
pub struct Overall {
    /// The overall score (absent when nothing could be scored under the weighted strategy).
    pub score: Option<f64>,
    /// The verdict (absent only in the weighted "nothing available, no gate" case).
    pub passed: Option<bool>,
    /// Why the run did not pass (or a note such as "all dimensions are gates").
    pub reason: String,
}

/// Weighted mean of (weight, score) pairs, weights defaulting to 1; a plain mean when every
/// weight is 0.
fn weighted_mean(items: &[(&Dimension, f64)]) -> f64 {
    let (mut total_weight, mut sum) = (0.0, 0.0);
    for (dimension, score) in items {
        let weight = dimension.weight.unwrap_or(1.0);
        total_weight += weight;
        sum += weight * score;
    }
    if total_weight == 0.0 {
        items.iter().map(|(_, score)| score).sum::<f64>() / items.len() as f64
    } else {
        sum / total_weight
    }
}

fn unavailable_gate_reason(strategy: &str, key: &str, state: Option<ResultState>) -> String {
    let what = if state == Some(ResultState::Error) {
        "has evaluator error"
    } else {
        "is unavailable"
    };
    match strategy {
        "binary" => format!("binary: dimension {key:?} {what}"),
        "hybrid" => format!("hybrid: gated dimension {key:?} {what}"),
        _ => format!("weighted: gated dimension {key:?} {what}"),
    }
}

/// The overall score and verdict of the `scorecard`'s strategy over `results` (the reference's
/// "Strategy" section).
pub fn overall(spec: &SpecDefinition, results: &[DimensionResult]) -> Overall {
    let scorecard = &spec.scorecard;
    let strategy = if scorecard.strategy.is_empty() {
        "weighted"
    } else {
        scorecard.strategy.as_str()
    };
    let declared = |key: &str| scorecard.dimensions.iter().find(|d| d.key == key);
    let available: Vec<(&Dimension, f64)> = results
        .iter()
        .filter(|result| result.state == ResultState::Available)
        .filter_map(|result| Some((declared(&result.dimension)?, result.score?)))
        .collect();
    let required = |dimension: &Dimension| dimension.gate || strategy == "binary";
    let unavailable_gate = scorecard
        .dimensions
        .iter()
        .filter(|dimension| required(dimension))
        .find_map(|dimension| {
            let result = results.iter().find(|r| r.dimension == dimension.key);
            match result {
                Some(r) if r.state == ResultState::Available && r.score.is_some() => None,
                other => Some(unavailable_gate_reason(
                    strategy,
                    &dimension.key,
                    other.map(|r| r.state),
                )),
            }
        });
    let verdict = |score: Option<f64>, passed: Option<bool>, reason: String| Overall {
        score,
        passed,
        reason,
    };
    if available.is_empty() {
        return match (strategy, unavailable_gate) {
            ("binary", reason) => verdict(
                Some(0.0),
                Some(false),
                reason.unwrap_or_else(|| "required dimension is unavailable".to_string()),
            ),
            ("hybrid", Some(reason)) => verdict(Some(0.0), Some(false), reason),
            ("weighted", Some(reason)) => verdict(None, Some(false), reason),
            _ => verdict(
                None,
                None,
                "no dimensions produced an available score".to_string(),
            ),
        };
    }
    let failed_gate = available
        .iter()
        .find(|(dimension, score)| {
            required(dimension) && dimension.pass_threshold.is_some_and(|t| *score < t)
        })
        .map(|(dimension, _)| dimension.key.as_str());
    let threshold = scorecard.pass_threshold;
    match strategy {
        "binary" => {
            let passed = failed_gate.is_none() && unavailable_gate.is_none();
            let reason = match (unavailable_gate, failed_gate) {
                (Some(reason), _) => reason,
                (None, Some(key)) => format!("binary: dimension {key:?} below pass_threshold"),
                (None, None) => String::new(),
            };
            verdict(Some(if passed { 1.0 } else { 0.0 }), Some(passed), reason)
        }
        "hybrid" => {
            if let Some(reason) = unavailable_gate {
                return verdict(Some(0.0), Some(false), reason);
            }
            if let Some(key) = failed_gate {
                return verdict(
                    Some(0.0),
                    Some(false),
                    format!("hybrid: gated dimension {key:?} below pass_threshold"),
                );
            }
            let non_gated: Vec<(&Dimension, f64)> = available
                .iter()
                .filter(|(dimension, _)| !dimension.gate)
                .copied()
                .collect();
            if non_gated.is_empty() {
                return verdict(
                    Some(1.0),
                    Some(true),
                    "hybrid: all dimensions are gates and all passed".to_string(),
                );
            }
            let score = weighted_mean(&non_gated);
            match threshold {
                Some(threshold) if score < threshold => verdict(
                    Some(score),
                    Some(false),
                    format!(
                        "hybrid: non-gate weighted score {score:.4} below scorecard \
                         pass_threshold {threshold:.4}"
                    ),
                ),
                _ => verdict(Some(score), Some(true), String::new()),
            }
        }
        _ => {
            let score = weighted_mean(&available);
            match (unavailable_gate, failed_gate, threshold) {
                (Some(reason), _, _) => verdict(Some(score), Some(false), reason),
                (None, Some(key), _) => verdict(
                    Some(score),
                    Some(false),
                    format!("weighted: gated dimension {key:?} below pass_threshold"),
                ),
                (None, None, Some(threshold)) if score < threshold => verdict(
                    Some(score),
                    Some(false),
                    format!(
                        "weighted: overall score {score:.4} below scorecard pass_threshold \
                         {threshold:.4}"
                    ),
                ),
                _ => verdict(Some(score), Some(true), String::new()),
            }
        }
    }
}
