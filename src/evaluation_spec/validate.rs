//! Validation of a normalised spec (`docs/spec.md`, "`evalctl spec validate FILE [--print]`"):
//! every rule, every error collected (never fail-fast) as `<field path> <message>` in the
//! reference's words.

use std::collections::{HashMap, HashSet};

use super::decode::SpecProblem;
use super::evidence::{is_supported_reference, unsupported_reference};
use super::judges::judge_provider;
use super::metrics::collector_type;
use super::model::{Dimension, JudgeDecl, SpecDefinition};
use super::validators;
use crate::input::strict;

/// The most samples (and `judge_limits.max_samples_per_judge`) a judge may ask for.
const MAX_JUDGE_SAMPLES: i64 = 10;

/// The five behavioral signal keys.
const SIGNAL_KEYS: &[&str] = &[
    "recovery_behavior",
    "exploration_efficiency",
    "error_cascade",
    "scope_adherence",
    "confidence_calibration",
];

/// Collects problems in order.
#[derive(Default)]
struct Problems(Vec<SpecProblem>);

impl Problems {
    fn add(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(SpecProblem::new(path, message));
    }

    /// `must be greater than or equal to 0` at `path` when `value` is below 0.
    fn at_least_zero<T: PartialOrd + Default>(&mut self, value: T, path: String) {
        if value < T::default() {
            self.add(path, "must be greater than or equal to 0");
        }
    }
}

fn blank(text: &str) -> bool {
    text.trim().is_empty()
}

fn in_unit_range(value: f64) -> bool {
    (0.0..=1.0).contains(&value)
}

/// Every problem of a normalised spec (empty when it is valid).
pub fn validate(spec: &SpecDefinition) -> Vec<SpecProblem> {
    let mut problems = Problems::default();
    validate_top_level(spec, &mut problems);
    let validator_keys = validate_validators(spec, &mut problems);
    let check_keys = validate_post_execution_checks(spec, &mut problems);
    validate_file_targets(spec, &check_keys, &mut problems);
    let metric_keys = validate_metrics(spec, &mut problems);
    validate_behavioral(spec, &mut problems);
    validate_pricing(spec, &mut problems);
    let judge_keys = validate_judges(spec, &validator_keys, &metric_keys, &mut problems);
    validate_dimensions(
        spec,
        &validator_keys,
        &metric_keys,
        &judge_keys,
        &mut problems,
    );
    validate_scorecard(spec, &mut problems);
    validate_judge_mode(spec, &mut problems);
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

/// `PATH.key` is given and unique among `keys`, which it joins.
fn check_key(key: &str, path: &str, keys: &mut HashSet<String>, problems: &mut Problems) {
    let key = key.trim();
    if key.is_empty() {
        problems.add(format!("{path}.key"), "is required");
    } else if !keys.insert(key.to_string()) {
        problems.add(format!("{path}.key"), "must be unique");
    }
}

fn validate_validators(spec: &SpecDefinition, problems: &mut Problems) -> HashSet<String> {
    let mut keys = HashSet::new();
    for (i, validator) in spec.validators.iter().enumerate() {
        let path = format!("evaluation_spec.validators[{i}]");
        let kind = validator.kind.as_str();
        check_key(&validator.key, &path, &mut keys, problems);
        if !validators::is_known_type(kind) {
            problems.add(
                format!("{path}.type"),
                format!(
                    "is not a supported validator type {}",
                    strict::hint(
                        kind,
                        validators::VALIDATOR_TYPES.iter().copied(),
                        &format!("supported: {}", validators::VALIDATOR_TYPES.join(", "))
                    )
                ),
            );
        }
        for problem in validators::check_config(kind, validator.config.as_ref()) {
            problems.add(format!("{path}.config{}", problem.at), problem.message);
        }
        let target = validator.target.trim();
        if target.is_empty() {
            problems.add(format!("{path}.target"), "is required");
        } else if kind == "tool_call_assertion" {
            if target != "tool_calls" {
                problems.add(
                    format!("{path}.target"),
                    "must be \"tool_calls\" for tool_call_assertion validators",
                );
            }
        } else if !is_supported_reference(&validator.target) {
            problems.add(
                format!("{path}.target"),
                unsupported_reference(&validator.target),
            );
        }
        let expected_from = validator.expected_from.trim();
        if validators::needs_expected(kind) {
            if expected_from.is_empty() {
                problems.add(format!("{path}.expected_from"), "is required");
            } else if !is_supported_reference(&validator.expected_from) {
                problems.add(
                    format!("{path}.expected_from"),
                    unsupported_reference(&validator.expected_from),
                );
            }
        } else if validators::forbids_expected(kind) && !expected_from.is_empty() {
            problems.add(
                format!("{path}.expected_from"),
                format!("must be omitted for {kind} validators"),
            );
        }
        if validators::needs_file_target(kind)
            && !target.is_empty()
            && !validator.target.starts_with("file:")
        {
            problems.add(
                format!("{path}.target"),
                "must use file: prefix for file validators",
            );
        }
        let check_key = validator
            .target
            .strip_prefix("file:")
            .unwrap_or(&validator.target);
        if kind == "code_execution" {
            match spec
                .post_execution_checks
                .iter()
                .find(|check| check.key == check_key)
            {
                None => problems.add(
                    format!("{path}.target"),
                    format!("references unknown post_execution_check key {check_key:?}"),
                ),
                Some(check) if check.kind != "file_capture" => problems.add(
                    format!("{path}.target"),
                    "must reference a file_capture post_execution_check",
                ),
                Some(_) => {}
            }
        }
        if kind == "postcondition"
            && validator.target.starts_with("file:")
            && spec.post_execution_checks.is_empty()
        {
            problems.add(
                format!("{path}.target"),
                format!("references unknown post_execution_check key {check_key:?}"),
            );
        }
    }
    keys
}

fn validate_post_execution_checks(
    spec: &SpecDefinition,
    problems: &mut Problems,
) -> HashSet<String> {
    let mut keys = HashSet::new();
    for (i, check) in spec.post_execution_checks.iter().enumerate() {
        let path = format!("evaluation_spec.post_execution_checks[{i}]");
        check_key(&check.key, &path, &mut keys, problems);
        if !matches!(check.kind.as_str(), "file_capture" | "directory_listing") {
            problems.add(
                format!("{path}.type"),
                "must be file_capture or directory_listing",
            );
        }
        if blank(&check.path) {
            problems.add(format!("{path}.path"), "is required");
        }
        problems.at_least_zero(check.max_size_bytes, format!("{path}.max_size_bytes"));
    }
    keys
}

/// With any post-execution check declared, every `file:` target must name one.
fn validate_file_targets(
    spec: &SpecDefinition,
    check_keys: &HashSet<String>,
    problems: &mut Problems,
) {
    if check_keys.is_empty() {
        return;
    }
    for (i, validator) in spec.validators.iter().enumerate() {
        if let Some(key) = validator.target.strip_prefix("file:") {
            if !check_keys.contains(key) {
                problems.add(
                    format!("evaluation_spec.validators[{i}].target"),
                    format!("references unknown post_execution_check key {key:?}"),
                );
            }
        }
    }
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

fn contains_secret_reference(text: &str) -> bool {
    ["${secrets.", "${ secrets.", "${secrets ."]
        .iter()
        .any(|needle| text.contains(needle))
}

/// The judges' rules; returns each valid judge key with its mode.
fn validate_judges(
    spec: &SpecDefinition,
    validator_keys: &HashSet<String>,
    metric_keys: &HashSet<String>,
    problems: &mut Problems,
) -> HashMap<String, String> {
    let mut judges = HashMap::new();
    for (i, judge) in spec.llm_judges.iter().enumerate() {
        let path = format!("evaluation_spec.llm_judges[{i}]");
        let key = judge.key.trim();
        if key.is_empty() {
            problems.add(format!("{path}.key"), "is required");
            continue;
        }
        if judges.contains_key(key) {
            problems.add(format!("{path}.key"), "must be unique");
            continue;
        }
        if validator_keys.contains(key) {
            problems.add(
                format!("{path}.key"),
                format!("collides with validator key {key:?}"),
            );
            continue;
        }
        if metric_keys.contains(key) {
            problems.add(
                format!("{path}.key"),
                format!("collides with metric key {key:?}"),
            );
            continue;
        }
        judges.insert(key.to_string(), judge.mode.clone());
        if !matches!(
            judge.mode.as_str(),
            "rubric" | "assertion" | "n_wise" | "reference"
        ) {
            problems.add(
                format!("{path}.mode"),
                "must be one of rubric, assertion, n_wise, reference",
            );
            continue;
        }
        validate_judge(judge, &path, problems);
    }
    if let Some(limits) = &spec.scorecard.judge_limits {
        let base = "evaluation_spec.scorecard.judge_limits";
        if !(0..=MAX_JUDGE_SAMPLES).contains(&limits.max_samples_per_judge) {
            problems.add(
                format!("{base}.max_samples_per_judge"),
                format!("must be between 0 and {MAX_JUDGE_SAMPLES}"),
            );
        }
        problems.at_least_zero(limits.max_calls_usd, format!("{base}.max_calls_usd"));
        problems.at_least_zero(limits.max_tokens, format!("{base}.max_tokens"));
    }
    judges
}

/// The rules of one judge whose key and mode are fine.
fn validate_judge(judge: &JudgeDecl, path: &str, problems: &mut Problems) {
    let mode = judge.mode.as_str();
    let required = |problems: &mut Problems, field: &str, value: &str| {
        if blank(value) {
            problems.add(
                format!("{path}.{field}"),
                format!("is required for {mode} mode"),
            );
        }
    };
    match mode {
        "rubric" => required(problems, "rubric", &judge.rubric),
        "reference" => {
            required(problems, "rubric", &judge.rubric);
            if blank(&judge.reference_from) {
                required(problems, "reference_from", &judge.reference_from);
            } else if !is_supported_reference(&judge.reference_from) {
                problems.add(
                    format!("{path}.reference_from"),
                    unsupported_reference(&judge.reference_from),
                );
            }
        }
        "assertion" => required(problems, "assertion", &judge.assertion),
        _ => required(problems, "prompt", &judge.prompt),
    }
    let single = !blank(&judge.model);
    let multi = !judge.models.is_empty();
    match (single, multi) {
        (false, false) => problems.add(
            format!("{path}.model"),
            "must set exactly one of model or models",
        ),
        (true, true) => problems.add(
            format!("{path}.models"),
            "must set exactly one of model or models, not both",
        ),
        (true, false) => check_judge_model(&format!("{path}.model"), &judge.model, problems),
        (false, true) => {
            for (j, model) in judge.models.iter().enumerate() {
                let field = format!("{path}.models[{j}]");
                if blank(model) {
                    problems.add(field, "must be a non-empty model identifier");
                } else {
                    check_judge_model(&field, model, problems);
                }
            }
        }
    }
    if judge.samples < 0 {
        problems.add(
            format!("{path}.samples"),
            "must be greater than or equal to 0",
        );
    } else if judge.samples > MAX_JUDGE_SAMPLES {
        problems.add(
            format!("{path}.samples"),
            format!("must be at most {MAX_JUDGE_SAMPLES}"),
        );
    }
    match &judge.consensus {
        None if judge.models.len() > 1 => problems.add(
            format!("{path}.consensus"),
            "is required when multiple models are declared",
        ),
        Some(_) if judge.models.len() <= 1 => problems.add(
            format!("{path}.consensus"),
            "is only valid when multiple models are declared",
        ),
        Some(consensus) => {
            let field = format!("{path}.consensus.aggregation");
            let aggregation = consensus.aggregation.as_str();
            match aggregation {
                "median" | "mean" if mode == "assertion" => problems.add(
                    field,
                    format!(
                        "{aggregation:?} aggregation is only valid for numeric modes (rubric, \
                         reference, n_wise)"
                    ),
                ),
                "majority_vote" if mode != "assertion" => problems.add(
                    field,
                    "majority_vote aggregation is only valid for assertion mode",
                ),
                "median" | "mean" | "majority_vote" | "unanimous" => {}
                _ => problems.add(
                    field,
                    "must be one of median, mean, majority_vote, unanimous",
                ),
            }
            if matches!(
                aggregation,
                "median" | "mean" | "majority_vote" | "unanimous"
            ) && !in_unit_range(consensus.min_agreement_threshold)
            {
                problems.add(
                    format!("{path}.consensus.min_agreement_threshold"),
                    "must be between 0 and 1",
                );
            }
        }
        None => {}
    }
    for (j, reference) in judge.context_from.iter().enumerate() {
        if !is_supported_reference(reference) {
            problems.add(
                format!("{path}.context_from[{j}]"),
                unsupported_reference(reference),
            );
        }
    }
    if let Some(schema) = &judge.output_schema {
        if let Some(reason) = schema_problem(schema) {
            problems.add(
                format!("{path}.output_schema"),
                format!("must be valid JSON Schema: {reason}"),
            );
        }
    }
    for (field, text) in [
        ("rubric", &judge.rubric),
        ("assertion", &judge.assertion),
        ("prompt", &judge.prompt),
    ] {
        if contains_secret_reference(text) {
            problems.add(
                format!("{path}.{field}"),
                "must not contain ${secrets.*} references; secrets are not allowed in judge \
                 prompt text",
            );
        }
    }
    if let Some(scale) = &judge.score_scale {
        if scale.min >= scale.max {
            problems.add(
                format!("{path}.score_scale"),
                "min must be strictly less than max",
            );
        }
    }
    if judge.timeout_ms.is_some_and(|timeout| timeout <= 0) {
        problems.add(format!("{path}.timeout_ms"), "must be greater than 0");
    }
}

fn check_judge_model(field: &str, model: &str, problems: &mut Problems) {
    if judge_provider(model).is_none() {
        problems.add(
            field,
            "must be inferable to a known judge provider (claude-*, gpt-*, gemini-*, grok-*, \
             mistral-*, openrouter/* slugs)",
        );
    }
}

/// Why a judge's `output_schema` (a schema object, or its JSON text) is not a usable JSON
/// Schema, by the `json_schema` validator's own loader.
fn schema_problem(schema: &serde_json::Value) -> Option<String> {
    match schema {
        serde_json::Value::String(text) => validators::json_schema_problem(text),
        other => validators::json_schema_problem(&other.to_string()),
    }
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

/// `PATH.pass_threshold` lies in [0, 1], and is given when `required` says why it must be.
fn check_pass_threshold(
    threshold: Option<f64>,
    required: Option<&str>,
    path: &str,
    problems: &mut Problems,
) {
    match (threshold, required) {
        (None, Some(why)) => problems.add(format!("{path}.pass_threshold"), why),
        (Some(threshold), _) if !in_unit_range(threshold) => {
            problems.add(format!("{path}.pass_threshold"), "must be between 0 and 1")
        }
        _ => {}
    }
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

fn validate_judge_mode(spec: &SpecDefinition, problems: &mut Problems) {
    let field = "evaluation_spec.llm_judges";
    match spec.judge_mode.as_str() {
        "deterministic" if !spec.llm_judges.is_empty() => {
            problems.add(field, "must be empty when judge_mode is deterministic")
        }
        mode @ ("llm_judge" | "hybrid") if spec.llm_judges.is_empty() => problems.add(
            field,
            format!("must contain at least one judge when judge_mode is {mode}"),
        ),
        _ => {}
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

    #[test]
    fn a_judge_output_schema_must_be_a_usable_schema() {
        let spec = |schema: &str| {
            format!(
                r#"{{"name": "s", "version_number": 1, "judge_mode": "llm_judge",
                "validators": [{{"key": "v", "type": "exact_match", "target": "final_output",
                    "expected_from": "literal:x"}}],
                "llm_judges": [{{"mode": "rubric", "key": "j", "rubric": "Rate it.",
                    "model": "claude-sonnet-4-6", "output_schema": {schema}}}],
                "scorecard": {{"dimensions": [{{"key": "j", "source": "llm_judge",
                    "judge_key": "j"}}]}}}}"#
            )
        };
        let good = spec(r#"{"type": "object"}"#);
        assert!(crate::evaluation_spec::load_spec(good.as_bytes(), "s.json").is_ok());
        let bad = spec(r#"{"type": 5}"#);
        let problems =
            crate::evaluation_spec::load_spec(bad.as_bytes(), "s.json").expect_err("invalid");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(
            problems[0].path,
            "evaluation_spec.llm_judges[0].output_schema"
        );
        assert!(
            problems[0]
                .message
                .starts_with("must be valid JSON Schema: "),
            "{}",
            problems[0]
        );
    }
}
