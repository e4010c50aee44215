//! Validation of a normalised spec (`docs/spec.md`, "`evalctl spec validate FILE [--print]`"):
//! every rule, every error collected (never fail-fast) as `<field path> <message>` in the
//! reference's words.
//!
//! `validate` runs the sections in order: the top level here, then [`validators`] (validators and
//! post-execution checks), [`measures`] (metrics, behavioral signals, pricing), [`judges`] and
//! [`scorecard`]; [`problems`] holds the list they add to and the checks they share.

mod judges;
mod measures;
mod problems;
mod scorecard;
mod validators;

use crate::evaluation_spec::decode::SpecProblem;
use crate::evaluation_spec::metrics::collector_type;
use crate::evaluation_spec::model::SpecDefinition;
use crate::input::strict;
use problems::{blank, Problems};

/// Every problem of a normalised spec (empty when it is valid).
pub fn validate(spec: &SpecDefinition) -> Vec<SpecProblem> {
    let mut problems = Problems::default();
    validate_top_level(spec, &mut problems);
    let validator_keys = validators::validate(spec, &mut problems);
    let metric_keys = measures::validate(spec, &mut problems);
    let judge_keys = judges::validate(spec, &validator_keys, &metric_keys, &mut problems);
    scorecard::validate(
        spec,
        &validator_keys,
        &metric_keys,
        &judge_keys,
        &mut problems,
    );
    judges::validate_judge_mode(spec, &mut problems);
    problems.0
}

fn validate_top_level(spec: &SpecDefinition, problems: &mut Problems) {
    if blank(&spec.name) {
        problems.add("evaluation_spec.name", "is required");
    }
    if spec.version_number <= 0 {
        problems.add("evaluation_spec.version_number", "must be greater than 0");
    }
    if !matches!(
        spec.judge_mode.as_str(),
        "deterministic" | "llm_judge" | "hybrid"
    ) {
        problems.add(
            "evaluation_spec.judge_mode",
            format!(
                "must be one of deterministic, llm_judge, hybrid{}",
                strict::did_you_mean(&spec.judge_mode, ["deterministic", "llm_judge", "hybrid"])
            ),
        );
    }
    if spec.validators.is_empty() {
        problems.add(
            "evaluation_spec.validators",
            "must contain at least one validator",
        );
    }
    if spec.scorecard.dimensions.is_empty() {
        problems.add(
            "evaluation_spec.scorecard.dimensions",
            "must contain at least one dimension",
        );
    }
    if !matches!(
        spec.scorecard.strategy.as_str(),
        "weighted" | "binary" | "hybrid"
    ) {
        problems.add(
            "evaluation_spec.scorecard.strategy",
            format!(
                "must be one of weighted, binary, hybrid{}",
                strict::did_you_mean(&spec.scorecard.strategy, ["weighted", "binary", "hybrid"])
            ),
        );
    }
    if let Some(limits) = &spec.runtime_limits {
        let base = "evaluation_spec.runtime_limits";
        if limits.max_total_tokens.is_some_and(|v| v <= 0) {
            problems.add(format!("{base}.max_total_tokens"), "must be greater than 0");
        }
        if limits.max_cost_usd.is_some_and(|v| v <= 0.0) {
            problems.add(format!("{base}.max_cost_usd"), "must be greater than 0");
        }
        if limits.max_duration_ms.is_some_and(|v| v <= 0) {
            problems.add(format!("{base}.max_duration_ms"), "must be greater than 0");
        }
        if limits
            .max_iterations
            .is_some_and(|v| !(1..=1000).contains(&v))
        {
            problems.add(
                format!("{base}.max_iterations"),
                "must be between 1 and 1000",
            );
        }
    }
}

/// Problems `spec validate` reports without rejecting the spec (the reference's documentation
/// promises them, its implementation does not check them; `docs/spec.md`, "Metrics and behavioral
/// signals"): a metric whose collector is unknown (it scores as an `error` metric) and a metric
/// whose declared `type` is not what its collector yields.
pub fn advisories(spec: &SpecDefinition) -> Vec<SpecProblem> {
    let mut problems = Problems::default();
    for (i, metric) in spec.metrics.iter().enumerate() {
        let path = format!("evaluation_spec.metrics[{i}]");
        if blank(&metric.collector) {
            continue;
        }
        match collector_type(&metric.collector) {
            None => problems.add(
                format!("{path}.collector"),
                format!(
                    "{:?} is not a known collector; the metric will be an error when runs are scored",
                    metric.collector
                ),
            ),
            Some(yields) if metric.kind != yields && !metric.kind.is_empty() => problems.add(
                format!("{path}.type"),
                format!(
                    "is {:?} but collector {:?} yields {yields} values",
                    metric.kind, metric.collector
                ),
            ),
            Some(_) => {}
        }
    }
    // A reliability dimension reads two metrics by their collectors; without them it is
    // unavailable in every run.
    let declared = |collector: &str| {
        spec.metrics
            .iter()
            .any(|metric| metric.collector == collector)
    };
    let missing: Vec<&str> = ["run_completed_successfully", "run_failure_count"]
        .into_iter()
        .filter(|collector| !declared(collector))
        .collect();
    for (i, dimension) in spec.scorecard.dimensions.iter().enumerate() {
        if dimension.source == "reliability" && !missing.is_empty() {
            problems.add(
                format!("evaluation_spec.scorecard.dimensions[{i}]"),
                format!(
                    "{:?} will be unavailable in every run: reliability reads the metrics whose \
                     collectors are run_completed_successfully and run_failure_count, and no \
                     metric has {}",
                    dimension.key,
                    missing.join(" or ")
                ),
            );
        }
    }
    problems.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluation_spec::model::MetricDecl;

    fn metric(kind: &str, collector: &str) -> MetricDecl {
        MetricDecl {
            key: "m".to_string(),
            kind: kind.to_string(),
            collector: collector.to_string(),
            unit: String::new(),
        }
    }

    #[test]
    fn advisories_name_unknown_collectors_and_mismatched_types() {
        let spec = SpecDefinition {
            metrics: vec![
                metric("numeric", "run_total_tokens"),
                metric("numeric", "events"),
                metric("text", "run_completed_successfully"),
            ],
            ..SpecDefinition::default()
        };
        let texts: Vec<String> = advisories(&spec).iter().map(ToString::to_string).collect();
        assert_eq!(
            texts,
            [
                "evaluation_spec.metrics[1].collector \"events\" is not a known collector; the \
                 metric will be an error when runs are scored",
                "evaluation_spec.metrics[2].type is \"text\" but collector \
                 \"run_completed_successfully\" yields boolean values",
            ]
        );
    }
}
