//! Normalisation of a decoded spec (`docs/spec.md`, "`evalctl spec validate FILE [--print]`"; the
//! reference's "Dimensions" and "Legacy normalization" sections): trimming, the default strategy,
//! built-in dimension expansion with the legacy latency/cost envelopes, default directions and the
//! default judge sample count. Idempotent: normalising a normalised spec changes nothing.

use super::model::{Dimension, DimensionNormalization, SpecDefinition};

/// The sample count of a judge that declares none.
const DEFAULT_JUDGE_SAMPLES: i64 = 3;

fn trim_in_place(text: &mut String) {
    let trimmed = text.trim();
    if trimmed.len() != text.len() {
        *text = trimmed.to_string();
    }
}

/// Normalise `spec` in place.
pub fn normalize(spec: &mut SpecDefinition) {
    trim_in_place(&mut spec.name);
    if spec.scorecard.strategy.is_empty() {
        spec.scorecard.strategy = "weighted".to_string();
    }
    for validator in &mut spec.validators {
        trim_in_place(&mut validator.key);
        trim_in_place(&mut validator.target);
        trim_in_place(&mut validator.expected_from);
    }
    for check in &mut spec.post_execution_checks {
        trim_in_place(&mut check.key);
        trim_in_place(&mut check.path);
    }
    for metric in &mut spec.metrics {
        trim_in_place(&mut metric.key);
        trim_in_place(&mut metric.collector);
        trim_in_place(&mut metric.unit);
    }
    if let Some(pricing) = &mut spec.pricing {
        for row in &mut pricing.models {
            trim_in_place(&mut row.provider_key);
            trim_in_place(&mut row.provider_model_id);
        }
    }
    let legacy = spec.scorecard.normalization.clone().unwrap_or_default();
    let limits = spec.runtime_limits.clone().unwrap_or_default();
    for dimension in &mut spec.scorecard.dimensions {
        trim_in_place(&mut dimension.key);
        trim_in_place(&mut dimension.metric);
        trim_in_place(&mut dimension.judge_key);
        if dimension.source.is_empty() {
            expand_builtin(dimension, &legacy, &limits);
        }
        if dimension.better_direction.is_empty()
            && matches!(
                dimension.source.as_str(),
                "validators" | "reliability" | "behavioral" | "llm_judge"
            )
        {
            dimension.better_direction = "higher".to_string();
        }
    }
    if let Some(behavioral) = &mut spec.behavioral {
        for signal in &mut behavioral.signals {
            trim_in_place(&mut signal.key);
        }
    }
    for judge in &mut spec.llm_judges {
        trim_in_place(&mut judge.key);
        trim_in_place(&mut judge.model);
        trim_in_place(&mut judge.reference_from);
        for model in &mut judge.models {
            trim_in_place(model);
        }
        if judge.samples == 0 {
            judge.samples = DEFAULT_JUDGE_SAMPLES;
        }
    }
}

/// Fill in source, direction and (for latency/cost) the legacy envelope of a built-in key.
fn expand_builtin(
    dimension: &mut Dimension,
    legacy: &super::model::LegacyNormalization,
    limits: &super::model::RuntimeLimits,
) {
    let (source, direction) = match dimension.key.as_str() {
        "correctness" => ("validators", "higher"),
        "reliability" => ("reliability", "higher"),
        "behavioral" => ("behavioral", "higher"),
        "latency" => ("latency", "lower"),
        "cost" => ("cost", "lower"),
        _ => return,
    };
    dimension.source = source.to_string();
    dimension.better_direction = direction.to_string();
    if dimension.normalization.is_some() {
        return;
    }
    dimension.normalization = match source {
        "latency" => legacy
            .latency
            .as_ref()
            .map(|latency| DimensionNormalization {
                target: latency.target_ms,
                max: latency
                    .max_ms
                    .or(limits.max_duration_ms.map(|max| max as f64)),
            }),
        "cost" => legacy.cost.as_ref().map(|cost| DimensionNormalization {
            target: cost.target_usd,
            max: cost.max_usd.or(limits.max_cost_usd),
        }),
        _ => None,
    };
}
