//! The rules of the LLM judges, their limits, and their agreement with the spec's `judge_mode`.

use std::collections::{HashMap, HashSet};

use super::problems::{blank, in_unit_range, Problems};
use crate::evaluation_spec::evidence::{is_supported_reference, unsupported_reference};
use crate::evaluation_spec::judges::judge_provider;
use crate::evaluation_spec::model::{JudgeDecl, SpecDefinition};
use crate::evaluation_spec::validators;

/// The most samples (and `judge_limits.max_samples_per_judge`) a judge may ask for.
const MAX_JUDGE_SAMPLES: i64 = 10;

fn contains_secret_reference(text: &str) -> bool {
    ["${secrets.", "${ secrets.", "${secrets ."]
        .iter()
        .any(|needle| text.contains(needle))
}

/// The judges' rules; returns each valid judge key with its mode.
pub(super) fn validate(
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

pub(super) fn validate_judge_mode(spec: &SpecDefinition, problems: &mut Problems) {
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

#[cfg(test)]
mod tests {
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
