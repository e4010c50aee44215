//! The rules of what a run is measured by besides its validators: metrics, behavioral signals and
//! pricing rows.

use std::collections::HashSet;

use super::problems::{blank, check_key, check_pass_threshold, Problems};
use crate::evaluation_spec::model::SpecDefinition;

/// The five behavioral signal keys.
const SIGNAL_KEYS: &[&str] = &[
    "recovery_behavior",
    "exploration_efficiency",
    "error_cascade",
    "scope_adherence",
    "confidence_calibration",
];

/// The metrics', behavioral signals' and pricing rows' rules; returns the metric keys.
pub(super) fn validate(spec: &SpecDefinition, problems: &mut Problems) -> HashSet<String> {
    let metric_keys = validate_metrics(spec, problems);
    validate_behavioral(spec, problems);
    validate_pricing(spec, problems);
    metric_keys
}

fn validate_metrics(spec: &SpecDefinition, problems: &mut Problems) -> HashSet<String> {
    let mut keys = HashSet::new();
    for (i, metric) in spec.metrics.iter().enumerate() {
        let path = format!("evaluation_spec.metrics[{i}]");
        check_key(&metric.key, &path, &mut keys, problems);
        if !matches!(metric.kind.as_str(), "numeric" | "text" | "boolean") {
            problems.add(format!("{path}.type"), "is not a supported metric type");
        }
        if blank(&metric.collector) {
            problems.add(format!("{path}.collector"), "is required");
        } else if metric.collector == "behavioral_confidence_calibration_score" {
            problems.add(
                format!("{path}.collector"),
                "is not supported until confidence reporting lands",
            );
        }
    }
    keys
}

fn validate_behavioral(spec: &SpecDefinition, problems: &mut Problems) {
    let Some(behavioral) = &spec.behavioral else {
        return;
    };
    if behavioral.signals.is_empty() {
        problems.add(
            "evaluation_spec.behavioral.signals",
            "must contain at least one signal",
        );
    }
    let mut keys = HashSet::new();
    for (i, signal) in behavioral.signals.iter().enumerate() {
        let path = format!("evaluation_spec.behavioral.signals[{i}]");
        if !SIGNAL_KEYS.contains(&signal.key.as_str()) {
            problems.add(
                format!("{path}.key"),
                "must be one of recovery_behavior, exploration_efficiency, error_cascade, \
                 scope_adherence, confidence_calibration",
            );
        } else {
            if !keys.insert(signal.key.as_str()) {
                problems.add(format!("{path}.key"), "must be unique");
            }
            if signal.key == "confidence_calibration" {
                problems.add(
                    format!("{path}.key"),
                    "is not supported until confidence reporting lands",
                );
            }
        }
        if signal.weight <= 0.0 || signal.weight.is_nan() {
            problems.add(format!("{path}.weight"), "must be greater than 0");
        }
        check_pass_threshold(
            signal.pass_threshold,
            signal
                .gate
                .then_some("is required when the signal is gated"),
            &path,
            problems,
        );
    }
}

fn validate_pricing(spec: &SpecDefinition, problems: &mut Problems) {
    let Some(pricing) = &spec.pricing else {
        return;
    };
    let mut seen = HashSet::new();
    for (i, row) in pricing.models.iter().enumerate() {
        let path = format!("evaluation_spec.pricing.models[{i}]");
        let provider = row.provider_key.trim();
        let model = row.provider_model_id.trim();
        if provider.is_empty() {
            problems.add(format!("{path}.provider_key"), "is required");
        }
        if model.is_empty() {
            problems.add(format!("{path}.provider_model_id"), "is required");
        }
        problems.at_least_zero(
            row.input_cost_per_million_tokens,
            format!("{path}.input_cost_per_million_tokens"),
        );
        problems.at_least_zero(
            row.output_cost_per_million_tokens,
            format!("{path}.output_cost_per_million_tokens"),
        );
        if !provider.is_empty() && !model.is_empty() && !seen.insert((provider, model)) {
            problems.add(path, "must be unique by provider_key and provider_model_id");
        }
    }
}
