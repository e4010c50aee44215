//! postcondition: one condition over a captured file — exists, not_exists, contains,
//! not_contains, regex_match, json_path_match, equals.

use serde::Deserialize;
use serde_json::{json, Value};

use super::config::{check_required, decode, run_time_text, Problems, RawConfig};
use super::json::{evaluate_path, parse_document, path_equals};
use super::text::compile_regex;
use super::text::evidence;
use super::{Comparison, ConfigProblem, ResultState, TargetValue, ValidatorOutcome};
use crate::patterns::Pattern;

const CONDITIONS: &str =
    "exists, not_exists, contains, not_contains, regex_match, json_path_match, equals";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PostconditionConfig {
    condition: Option<String>,
    value: Option<Value>,
    json_path: Option<String>,
}

/// A checked postcondition.
#[derive(Debug)]
pub(super) enum Condition {
    Exists,
    NotExists,
    Contains(String),
    NotContains(String),
    RegexMatch(Pattern),
    JsonPathMatch { path: String, value: Value },
    Equals(Value),
}

impl Condition {
    fn name(&self) -> &'static str {
        match self {
            Condition::Exists => "exists",
            Condition::NotExists => "not_exists",
            Condition::Contains(_) => "contains",
            Condition::NotContains(_) => "not_contains",
            Condition::RegexMatch(_) => "regex_match",
            Condition::JsonPathMatch { .. } => "json_path_match",
            Condition::Equals(_) => "equals",
        }
    }
}

/// Check a decoded config, returning the condition or every problem found.
fn condition(config: &PostconditionConfig) -> Result<Condition, Problems> {
    let mut problems = Problems::default();
    let name = config.condition.as_deref().map(str::trim).unwrap_or("");
    let json_path = config
        .json_path
        .as_deref()
        .map(str::trim)
        .filter(|path| !path.is_empty());
    if name != "json_path_match" && json_path.is_some() {
        problems.add(".json_path", format!("must be omitted for {name}"));
    }
    let string_value = |problems: &mut Problems, message: &str| match &config.value {
        Some(Value::String(text)) => Some(text.clone()),
        _ => {
            problems.add(".value", message);
            None
        }
    };
    let condition =
        match name {
            "" => {
                problems.add(".condition", "is required");
                None
            }
            "exists" | "not_exists" => {
                if config.value.is_some() {
                    problems.add(".value", format!("must be omitted for {name}"));
                }
                Some(if name == "exists" {
                    Condition::Exists
                } else {
                    Condition::NotExists
                })
            }
            "contains" => string_value(&mut problems, "must be a string").map(Condition::Contains),
            "not_contains" => {
                string_value(&mut problems, "must be a string").map(Condition::NotContains)
            }
            "regex_match" => string_value(&mut problems, "must be a string regex pattern")
                .and_then(|pattern| match compile_regex(&pattern) {
                    Ok(regex) => Some(Condition::RegexMatch(regex)),
                    Err(err) => {
                        problems.add(".value", format!("must be a valid regex: {err}"));
                        None
                    }
                }),
            "json_path_match" => {
                if json_path.is_none() {
                    problems.add(".json_path", "is required");
                }
                if config.value.is_none() {
                    problems.add(".value", "is required");
                }
                match (json_path, &config.value) {
                    (Some(path), Some(value)) => Some(Condition::JsonPathMatch {
                        path: path.to_string(),
                        value: value.clone(),
                    }),
                    _ => None,
                }
            }
            "equals" => match &config.value {
                Some(value) => Some(Condition::Equals(value.clone())),
                None => {
                    problems.add(".value", "is required");
                    None
                }
            },
            _ => {
                problems.add(".condition", format!("must be one of {CONDITIONS}"));
                None
            }
        };
    match condition {
        Some(condition) if problems.0.is_empty() => Ok(condition),
        _ => Err(problems),
    }
}

pub(super) fn check(config: RawConfig<'_>) -> Vec<ConfigProblem> {
    check_required(config, "is required", |config: PostconditionConfig| {
        condition(&config)
            .err()
            .map(|problems| problems.0)
            .unwrap_or_default()
    })
}

/// Decode and check the config; errors are run-time reasons.
pub(super) fn prepare(config: RawConfig<'_>) -> Result<Condition, String> {
    if config.is_absent() {
        return Err("postcondition config is required".to_string());
    }
    let decoded: PostconditionConfig =
        decode(config).map_err(|err| format!("parse postcondition config: {err}"))?;
    condition(&decoded).map_err(|problems| {
        format!(
            "invalid postcondition config: {}",
            run_time_text(&problems.0)
        )
    })
}

fn unavailable(reason: &str) -> ValidatorOutcome {
    ValidatorOutcome {
        state: ResultState::Unavailable,
        verdict: None,
        score: None,
        reason: reason.to_string(),
        evidence: Default::default(),
        source_call: None,
    }
}

pub(super) fn postcondition(condition: &Condition, target: TargetValue<'_>) -> ValidatorOutcome {
    let content = match target {
        TargetValue::Missing { reason } if reason.contains("unavailable") => {
            return unavailable(reason)
        }
        TargetValue::Missing { reason } => {
            const GONE: &str = "postcondition target does not exist";
            return match condition {
                Condition::Exists => Comparison::decided(false, GONE, GONE).into(),
                Condition::NotExists => Comparison::decided(true, GONE, GONE).into(),
                _ => unavailable(reason),
            };
        }
        TargetValue::Present(content) => content,
    };
    const PRESENT: &str = "postcondition target exists";
    let comparison = match condition {
        Condition::Exists => Comparison::decided(true, PRESENT, PRESENT),
        Condition::NotExists => Comparison::decided(false, PRESENT, PRESENT),
        Condition::Contains(text) => Comparison::decided(
            content.contains(text.as_str()),
            "target contains expected text",
            "target does not contain expected text",
        )
        .with_evidence(evidence([("expected", json!(text))])),
        Condition::NotContains(text) => Comparison::decided(
            !content.contains(text.as_str()),
            "target does not contain forbidden text",
            "target contains forbidden text",
        )
        .with_evidence(evidence([("forbidden", json!(text))])),
        Condition::RegexMatch(regex) => Comparison::decided(
            regex.is_match(content),
            "target matches regex",
            "target does not match regex",
        )
        .with_evidence(evidence([("pattern", json!(regex.as_str()))])),
        Condition::Equals(Value::String(text)) => Comparison::decided(
            content == text,
            "target equals expected string",
            "target does not equal expected string",
        )
        .with_evidence(evidence([("expected", json!(text))])),
        Condition::Equals(value) => match parse_document(content) {
            Ok(document) => Comparison::decided(
                path_equals(&document, value),
                "target JSON equals expected value",
                "target JSON does not equal expected value",
            )
            .with_evidence(evidence([("expected", value.clone())])),
            Err(err) => Comparison::error(format!("parse postcondition target as JSON: {err}")),
        },
        Condition::JsonPathMatch { path, value } => match parse_document(content) {
            Ok(document) => evaluate_path(&document, path, "equals", value),
            Err(err) => Comparison::error(format!("parse actual JSON document: {err}")),
        },
    };
    let mut outcome = ValidatorOutcome::from(comparison);
    outcome
        .evidence
        .insert("condition", json!(condition.name()));
    outcome
}

#[cfg(test)]
mod tests {
    use super::super::Verdict;
    use super::*;
    use serde_json::json;

    fn prepared(config: Value) -> Condition {
        prepare(RawConfig::Json(&config)).unwrap_or(Condition::Exists)
    }

    #[test]
    fn config_rules() {
        let problems = check(RawConfig::Json(&json!({"condition": "exists", "value": 1})));
        assert_eq!(problems[0].at, ".value");
        assert_eq!(problems[0].message, "must be omitted for exists");
        let problems = check(RawConfig::Json(
            &json!({"condition": "regex_match", "value": "("}),
        ));
        assert!(problems[0].message.starts_with("must be a valid regex: "));
        assert_eq!(check(RawConfig::Absent)[0].message, "is required");
        assert!(prepare(RawConfig::Json(&json!({"condition": "sometimes"})))
            .is_err_and(|err| err
                .starts_with("invalid postcondition config: config.condition must be one of")));
    }

    #[test]
    fn conditions_over_present_and_missing_targets() {
        let equals = prepared(json!({"condition": "equals", "value": {"a": 1}}));
        let outcome = postcondition(&equals, TargetValue::Present("{\"a\": 1}"));
        assert_eq!(outcome.verdict, Some(Verdict::Pass));
        let outcome = postcondition(&equals, TargetValue::Present("not json"));
        assert_eq!(outcome.state, ResultState::Error);
        let contains = prepared(json!({"condition": "contains", "value": "ok"}));
        let missing = TargetValue::Missing {
            reason: "captured file \"k\" does not exist at path \"p\"",
        };
        assert_eq!(
            postcondition(&contains, missing).state,
            ResultState::Unavailable
        );
        let exists = prepared(json!({"condition": "exists"}));
        assert_eq!(postcondition(&exists, missing).verdict, Some(Verdict::Fail));
    }
}
