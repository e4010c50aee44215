//! Metric collectors (the reference's "Metrics" section; `docs/spec.md`, "Metrics and behavioral
//! signals") and the run's model cost (the reference's "Pricing" section): each declared metric is
//! collected from the run's evidence (and, for pass rate and behavioral collectors, from the
//! validator results) into an available, unavailable or error result.

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::evidence::{Evidence, ModelUsage};
use super::model::{MetricDecl, PricingRow};
use super::signals::{signal_score, ValidatorScore};
use super::validators::ResultState;

/// Every collector a metric may name.
const COLLECTORS: &[&str] = &[
    "run_total_latency_ms",
    "run_ttft_ms",
    "run_input_tokens",
    "run_output_tokens",
    "run_total_tokens",
    "run_agent_tokens",
    "run_race_context_tokens",
    "run_model_cost_usd",
    "run_completed_successfully",
    "run_failure_count",
    "run_tool_call_count",
    "behavioral_recovery_score",
    "behavioral_exploration_efficiency_score",
    "behavioral_error_cascade_score",
    "behavioral_scope_adherence_score",
    "behavioral_confidence_calibration_score",
    "validator_pass_rate",
];

/// The value type a collector yields: `boolean` for `run_completed_successfully`, `numeric` for
/// the others; `None` for an unknown collector.
pub fn collector_type(collector: &str) -> Option<&'static str> {
    match collector {
        "run_completed_successfully" => Some("boolean"),
        other if COLLECTORS.contains(&other) => Some("numeric"),
        _ => None,
    }
}

/// One metric's result in the evaluation record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricResult {
    /// The metric's key.
    pub key: String,
    /// Its declared type.
    #[serde(rename = "type")]
    pub kind: String,
    /// `available`, `unavailable` or `error`.
    pub state: &'static str,
    /// Its collector.
    pub collector: String,
    /// Its unit.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub unit: String,
    /// A numeric value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numeric_value: Option<f64>,
    /// A boolean value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boolean_value: Option<bool>,
    /// The challenge the run belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub challenge_identity_id: Option<String>,
    /// The regression case the run belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regression_case_id: Option<String>,
    /// Why there is no value.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Collector details (timings, cost breakdown, …).
    pub metadata: Value,
}

/// A measured value with its metadata, or why there is none with the metadata gathered so far.
pub type Measured = Result<(f64, Map<String, Value>), (String, Map<String, Value>)>;

/// What a collector produced.
enum Collected {
    Number(f64, Map<String, Value>),
    Boolean(bool),
    Unavailable(String, Map<String, Value>),
    Error(String),
}

fn available_metadata(collector: &str) -> Map<String, Value> {
    let mut metadata = Map::new();
    metadata.insert("state".into(), json!("available"));
    metadata.insert("collector".into(), json!(collector));
    metadata
}

fn number_or(value: Option<f64>, collector: &str, reason: &str) -> Collected {
    match value {
        Some(value) => Collected::Number(value, available_metadata(collector)),
        None => Collected::Unavailable(reason.to_string(), Map::new()),
    }
}

/// The run's total latency in whole milliseconds: first `system.run.started` to the terminal time.
pub fn latency_ms(evidence: &Evidence) -> Option<f64> {
    let (started, ended) = (evidence.started_at?, evidence.terminal_at?);
    Some(((ended.nanos - started.nanos) / 1_000_000) as f64)
}

/// [`latency_ms`] with the collector's metadata (times, step durations, time to first output),
/// or why it is unavailable.
fn total_latency(evidence: &Evidence) -> Measured {
    let steps = serde_json::to_value(&evidence.step_durations).unwrap_or(Value::Null);
    let mut metadata = Map::new();
    let (Some(started), Some(ended), Some(latency)) = (
        evidence.started_at,
        evidence.terminal_at,
        latency_ms(evidence),
    ) else {
        metadata.insert("step_durations".into(), steps);
        return Err(("latency evidence is unavailable".to_string(), metadata));
    };
    metadata.insert("state".into(), json!("available"));
    metadata.insert("started_at".into(), json!(started.rfc3339()));
    metadata.insert("ended_at".into(), json!(ended.rfc3339()));
    metadata.insert("step_durations".into(), steps);
    if let Some(first) = evidence.first_output_at {
        metadata.insert("first_output_at".into(), json!(first.rfc3339()));
        metadata.insert(
            "ttft_ms".into(),
            json!(((first.nanos - started.nanos) / 1_000_000) as f64),
        );
    }
    Ok((latency, metadata))
}

/// The price row for (provider, model): an exact match, else the model id without a trailing
/// `-YYYY-MM-DD` date.
fn lookup_pricing<'p>(
    rows: &'p [PricingRow],
    provider: &str,
    model: &str,
) -> Option<&'p PricingRow> {
    let find = |model: &str| {
        rows.iter()
            .find(|row| row.provider_key == provider && row.provider_model_id == model)
    };
    find(model).or_else(|| {
        let undated = undated_model_id(model);
        (undated != model.trim()).then(|| find(undated)).flatten()
    })
}

/// A model id without a trailing `-YYYY-MM-DD` (only when it has at least four dash-separated
/// parts).
fn undated_model_id(model: &str) -> &str {
    let trimmed = model.trim();
    let parts: Vec<&str> = trimmed.split('-').collect();
    let digits =
        |part: &str, len: usize| part.len() == len && part.bytes().all(|b| b.is_ascii_digit());
    match parts.as_slice() {
        [.., year, month, day]
            if parts.len() >= 4 && digits(year, 4) && digits(month, 2) && digits(day, 2) =>
        {
            let cut = trimmed.len() - year.len() - month.len() - day.len() - 3;
            &trimmed[..cut]
        }
        _ => trimmed,
    }
}

/// The run's model cost in USD from its token usage and the spec's pricing rows, with the
/// breakdown, or why it is unavailable.
pub fn model_cost(evidence: &Evidence, pricing: &[PricingRow]) -> Measured {
    if pricing.is_empty() {
        return Err(("model pricing is unavailable".to_string(), Map::new()));
    }
    let fallback;
    let usage: &[ModelUsage] = if evidence.model_usage.is_empty() {
        let unavailable = || "model usage evidence is unavailable".to_string();
        let [(provider, model)] = evidence.observed_models.as_slice() else {
            let mut metadata = Map::new();
            let observed: Vec<Value> = evidence
                .observed_models
                .iter()
                .map(|(p, m)| json!({"ProviderKey": p, "ProviderModelID": m}))
                .collect();
            metadata.insert("observed_models".into(), Value::Array(observed));
            return Err((unavailable(), metadata));
        };
        if evidence.input_tokens.is_none()
            && evidence.output_tokens.is_none()
            && evidence.total_tokens.is_none()
        {
            let mut metadata = Map::new();
            metadata.insert("provider_key".into(), json!(provider));
            metadata.insert("provider_model_id".into(), json!(model));
            return Err((unavailable(), metadata));
        }
        let input = evidence.input_tokens.unwrap_or(0.0);
        let output = evidence.output_tokens.unwrap_or(0.0);
        fallback = [ModelUsage {
            provider_key: provider.clone(),
            provider_model_id: model.clone(),
            input_tokens: input,
            output_tokens: output,
            total_tokens: evidence.total_tokens.unwrap_or(input + output),
        }];
        &fallback
    } else {
        &evidence.model_usage
    };
    let mut breakdown = Vec::with_capacity(usage.len());
    let mut total = 0.0;
    for row in usage {
        let Some(price) = lookup_pricing(pricing, &row.provider_key, &row.provider_model_id) else {
            let mut metadata = Map::new();
            metadata.insert("provider_key".into(), json!(row.provider_key));
            metadata.insert("provider_model_id".into(), json!(row.provider_model_id));
            return Err((
                format!(
                    "model pricing is unavailable for provider {:?} model {:?}",
                    row.provider_key, row.provider_model_id
                ),
                metadata,
            ));
        };
        let cost = row.input_tokens / 1_000_000.0 * price.input_cost_per_million_tokens
            + row.output_tokens / 1_000_000.0 * price.output_cost_per_million_tokens;
        total += cost;
        breakdown.push(json!({
            "provider_key": row.provider_key,
            "provider_model_id": row.provider_model_id,
            "input_tokens": row.input_tokens,
            "output_tokens": row.output_tokens,
            "total_tokens": row.total_tokens,
            "cost_usd": cost,
        }));
    }
    let mut metadata = Map::new();
    metadata.insert("state".into(), json!("available"));
    metadata.insert("breakdown".into(), Value::Array(breakdown));
    metadata.insert("total_usd".into(), json!(total));
    metadata.insert("priced_run".into(), json!(true));
    Ok((total, metadata))
}

fn collect(
    collector: &str,
    evidence: &Evidence,
    validators: &[ValidatorScore],
    pricing: &[PricingRow],
) -> Collected {
    let signal = |key: &str| match signal_score(key, &evidence.trace, &evidence.turns, validators) {
        Ok(score) => {
            let mut metadata = available_metadata(collector);
            metadata.insert("signal_key".into(), json!(key));
            metadata.insert("trace_len".into(), json!(evidence.trace.len()));
            Collected::Number(score, metadata)
        }
        Err(reason) => Collected::Unavailable(reason, Map::new()),
    };
    match collector {
        "run_total_latency_ms" => match total_latency(evidence) {
            Ok((value, metadata)) => Collected::Number(value, metadata),
            Err((reason, metadata)) => Collected::Unavailable(reason, metadata),
        },
        "run_ttft_ms" => match (evidence.started_at, evidence.first_output_at) {
            (Some(started), Some(first)) => {
                let mut metadata = Map::new();
                metadata.insert("state".into(), json!("available"));
                metadata.insert("started_at".into(), json!(started.rfc3339()));
                metadata.insert("first_output_at".into(), json!(first.rfc3339()));
                Collected::Number(((first.nanos - started.nanos) / 1_000_000) as f64, metadata)
            }
            _ => Collected::Unavailable(
                "time-to-first-output evidence is unavailable".to_string(),
                Map::new(),
            ),
        },
        "run_input_tokens" => number_or(
            evidence.input_tokens,
            collector,
            "input token usage is unavailable",
        ),
        "run_output_tokens" => number_or(
            evidence.output_tokens,
            collector,
            "output token usage is unavailable",
        ),
        "run_total_tokens" => number_or(
            evidence.total_tokens,
            collector,
            "total token usage is unavailable",
        ),
        "run_tool_call_count" => number_or(
            evidence.tool_call_count,
            collector,
            "tool call count is unavailable",
        ),
        "run_agent_tokens" => number_or(
            evidence
                .total_tokens
                .map(|total| (total - evidence.race_context_tokens).max(0.0)),
            collector,
            "agent token usage is unavailable",
        ),
        "run_race_context_tokens" => {
            Collected::Number(evidence.race_context_tokens, available_metadata(collector))
        }
        "run_model_cost_usd" => match model_cost(evidence, pricing) {
            Ok((value, metadata)) => Collected::Number(value, metadata),
            Err((reason, metadata)) => Collected::Unavailable(reason, metadata),
        },
        "run_completed_successfully" => match evidence.completed_successfully {
            Some(completed) => Collected::Boolean(completed),
            None => Collected::Unavailable(
                "terminal success evidence is unavailable".to_string(),
                Map::new(),
            ),
        },
        "run_failure_count" => {
            Collected::Number(evidence.failure_count as f64, available_metadata(collector))
        }
        "behavioral_recovery_score" => signal("recovery_behavior"),
        "behavioral_exploration_efficiency_score" => signal("exploration_efficiency"),
        "behavioral_error_cascade_score" => signal("error_cascade"),
        "behavioral_scope_adherence_score" => signal("scope_adherence"),
        "behavioral_confidence_calibration_score" => signal("confidence_calibration"),
        "validator_pass_rate" => validator_pass_rate(validators, collector),
        other => Collected::Error(format!("collector {other:?} is not supported")),
    }
}

fn validator_pass_rate(validators: &[ValidatorScore], collector: &str) -> Collected {
    if validators.is_empty() {
        return Collected::Unavailable(
            "validator pass rate requires validator results".to_string(),
            Map::new(),
        );
    }
    let mut total = 0.0;
    for validator in validators {
        match (validator.state, validator.score) {
            (ResultState::Available, Some(score)) => total += score,
            _ => {
                return Collected::Unavailable(
                    "validator pass rate requires all validators to be available".to_string(),
                    Map::new(),
                )
            }
        }
    }
    Collected::Number(
        total / validators.len() as f64,
        available_metadata(collector),
    )
}

/// Collect every declared metric for one run.
pub fn collect_metrics(
    metrics: &[MetricDecl],
    evidence: &Evidence,
    validators: &[ValidatorScore],
    pricing: &[PricingRow],
) -> Vec<MetricResult> {
    let challenge = evidence.challenge_id();
    metrics
        .iter()
        .map(|metric| {
            let mut result = MetricResult {
                key: metric.key.clone(),
                kind: metric.kind.clone(),
                state: "available",
                collector: metric.collector.clone(),
                unit: metric.unit.clone(),
                numeric_value: None,
                boolean_value: None,
                challenge_identity_id: challenge.map(str::to_string),
                regression_case_id: evidence.regression_case_for(challenge).map(str::to_string),
                reason: String::new(),
                metadata: Value::Null,
            };
            let (state, reason, mut metadata) =
                match collect(&metric.collector, evidence, validators, pricing) {
                    Collected::Number(value, metadata) => {
                        result.numeric_value = Some(value);
                        ("available", String::new(), metadata)
                    }
                    Collected::Boolean(value) => {
                        result.boolean_value = Some(value);
                        (
                            "available",
                            String::new(),
                            available_metadata(&metric.collector),
                        )
                    }
                    Collected::Unavailable(reason, metadata) => ("unavailable", reason, metadata),
                    Collected::Error(reason) => ("error", reason, Map::new()),
                };
            if state != "available" {
                metadata.insert("state".into(), json!(state));
                metadata.insert("collector".into(), json!(metric.collector));
                metadata.insert("reason".into(), json!(reason));
            }
            result.state = state;
            result.reason = reason;
            result.metadata = Value::Object(metadata);
            result
        })
        .collect()
}
