//! The rules of the scorecard: its dimensions (each source's own fields, the keys they name) and
//! its strategy and pass threshold.

use std::collections::{HashMap, HashSet};

use super::problems::{blank, check_pass_threshold, in_unit_range, Problems};
use crate::evaluation_spec::model::{Dimension, SpecDefinition};

/// The dimensions' rules (each source's fields, the keys they name), then the scorecard's own.
pub(super) fn validate(
    spec: &SpecDefinition,
    validator_keys: &HashSet<String>,
    metric_keys: &HashSet<String>,
    judge_keys: &HashMap<String, String>,
    problems: &mut Problems,
) {
    validate_dimensions(spec, validator_keys, metric_keys, judge_keys, problems);
    validate_scorecard(spec, problems);
}

fn validate_dimensions(
    spec: &SpecDefinition,
    validator_keys: &HashSet<String>,
    metric_keys: &HashSet<String>,
    judge_keys: &HashMap<String, String>,
    problems: &mut Problems,
) {
    let mut seen = HashSet::new();
    for (i, dimension) in spec.scorecard.dimensions.iter().enumerate() {
        let path = format!("evaluation_spec.scorecard.dimensions[{i}]");
        let key = dimension.key.trim();
        if key.is_empty() {
            problems.add(format!("{path}.key"), "is required");
            continue;
        }
        if !seen.insert(key) {
            problems.add(path, "must be unique");
            continue;
        }
        if !matches!(
            dimension.source.as_str(),
            "validators"
                | "metric"
                | "reliability"
                | "latency"
                | "cost"
                | "behavioral"
                | "llm_judge"
                | "human_preference"
        ) {
            problems.add(
                format!("{path}.source"),
                "must be one of validators, metric, reliability, latency, cost, behavioral, \
                 llm_judge",
            );
            continue;
        }
        validate_dimension(
            spec,
            dimension,
            &path,
            validator_keys,
            metric_keys,
            judge_keys,
            problems,
        );
    }
}

fn validate_dimension(
    spec: &SpecDefinition,
    dimension: &Dimension,
    path: &str,
    validator_keys: &HashSet<String>,
    metric_keys: &HashSet<String>,
    judge_keys: &HashMap<String, String>,
    problems: &mut Problems,
) {
    let source = dimension.source.as_str();
    let direction = dimension.better_direction.as_str();
    match source {
        "validators" => {
            for (j, key) in dimension.validators.iter().enumerate() {
                if !validator_keys.contains(key) {
                    problems.add(
                        format!("{path}.validators[{j}]"),
                        format!("references unknown validator key {key:?}"),
                    );
                }
            }
        }
        "metric" => {
            if blank(&dimension.metric) {
                problems.add(
                    format!("{path}.metric"),
                    "is required when source is metric",
                );
            } else if !metric_keys.contains(&dimension.metric) {
                problems.add(
                    format!("{path}.metric"),
                    format!("references unknown metric key {:?}", dimension.metric),
                );
            }
        }
        "behavioral"
            if spec
                .behavioral
                .as_ref()
                .is_none_or(|behavioral| behavioral.signals.is_empty()) =>
        {
            problems.add(
                "evaluation_spec.behavioral",
                "is required when a scorecard dimension uses source behavioral",
            );
        }
        "llm_judge" => {
            let judge_key = dimension.judge_key.trim();
            if judge_key.is_empty() {
                problems.add(
                    format!("{path}.judge_key"),
                    "is required when source is llm_judge",
                );
            } else if !judge_keys.contains_key(judge_key) {
                problems.add(
                    format!("{path}.judge_key"),
                    format!("references unknown judge key {judge_key:?}"),
                );
            }
        }
        _ => {}
    }
    if matches!(source, "metric" | "latency" | "cost") && dimension.normalization.is_none() {
        problems.add(
            format!("{path}.normalization"),
            format!("is required when source is {source}"),
        );
    }
    if matches!(source, "llm_judge" | "behavioral")
        && !direction.is_empty()
        && direction != "higher"
    {
        problems.add(
            format!("{path}.better_direction"),
            format!("must be \"higher\" for {source} source (got {direction:?})"),
        );
    }
    if source != "llm_judge" && !blank(&dimension.judge_key) {
        problems.add(
            format!("{path}.judge_key"),
            "must be empty unless source is llm_judge",
        );
    }
    if matches!(source, "validators" | "reliability") && direction != "higher" {
        problems.add(
            format!("{path}.better_direction"),
            format!("must be \"higher\" for {source} source (got {direction:?})"),
        );
    }
    if matches!(source, "metric" | "latency" | "cost") {
        if direction != "higher" && direction != "lower" {
            problems.add(
                format!("{path}.better_direction"),
                "must be higher or lower",
            );
        }
        if let Some(normalization) = &dimension.normalization {
            if normalization.target.is_none() {
                problems.add(format!("{path}.normalization.target"), "is required");
            }
            if normalization.max.is_none() {
                problems.add(format!("{path}.normalization.max"), "is required");
            }
            if let (Some(target), Some(max)) = (normalization.target, normalization.max) {
                if direction == "lower" && max <= target {
                    problems.add(
                        format!("{path}.normalization.max"),
                        "must be greater than target when better_direction is lower",
                    );
                }
                if direction == "higher" && max >= target {
                    problems.add(
                        format!("{path}.normalization.max"),
                        "must be less than target when better_direction is higher",
                    );
                }
            }
        }
    }
    if let Some(weight) = dimension.weight {
        problems.at_least_zero(weight, format!("{path}.weight"));
    }
    let required = dimension.gate || spec.scorecard.strategy == "binary";
    check_pass_threshold(
        dimension.pass_threshold,
        required.then_some("is required when the dimension is gated or strategy is binary"),
        path,
        problems,
    );
}

fn validate_scorecard(spec: &SpecDefinition, problems: &mut Problems) {
    let scorecard = &spec.scorecard;
    if let Some(threshold) = scorecard.pass_threshold {
        if scorecard.strategy == "binary" {
            problems.add(
                "evaluation_spec.scorecard.pass_threshold",
                "must not be set for binary strategy; use per-dimension pass_threshold instead",
            );
        } else if !in_unit_range(threshold) {
            problems.add(
                "evaluation_spec.scorecard.pass_threshold",
                "must be between 0 and 1",
            );
        }
    }
    if scorecard.strategy == "hybrid" && !scorecard.dimensions.iter().any(|d| d.gate) {
        problems.add(
            "evaluation_spec.scorecard.strategy",
            "hybrid strategy requires at least one gated dimension",
        );
    }
}
