//! code_execution: scores the recorded `grader.verification.code_executed` result of a
//! test command (evalctl never runs the command while scoring) by fraction of tests passed,
//! all-or-nothing, or the exit code.

use serde::Deserialize;
use serde_json::{json, Value};

use super::config::{check_strict, decode, RawConfig};
use super::text::{evidence, go_quote};
use super::{ConfigProblem, ResultState, ValidatorOutcome, Verdict};
use crate::evaluation_spec::payload::CODE_EXECUTION_RECORD;

const PASS_AT_K: &str = "pass_at_k requires multi-sample execution and is not supported yet";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CodeExecutionConfig {
    test_command: Option<String>,
    timeout_ms: Option<i64>,
    scoring: Option<String>,
    pass_threshold: Option<f64>,
}

pub(super) fn check(config: RawConfig<'_>) -> Vec<ConfigProblem> {
    check_strict::<CodeExecutionConfig>(config, |config, problems| {
        if config
            .test_command
            .as_deref()
            .is_none_or(|command| command.trim().is_empty())
        {
            problems.add(".test_command", "is required");
        }
        if config.timeout_ms.is_some_and(|timeout| timeout <= 0) {
            problems.add(".timeout_ms", "must be greater than 0");
        }
        match config.scoring.as_deref() {
            None | Some("fraction_passed" | "all_or_nothing") => {}
            Some("pass_at_k") => problems.add(".scoring", PASS_AT_K),
            Some(_) => problems.add(
                ".scoring",
                "must be one of fraction_passed, all_or_nothing, pass_at_k",
            ),
        }
        if !super::config::in_unit_range(config.pass_threshold) {
            problems.add(".pass_threshold", "must be between 0 and 1");
        }
    })
}

/// Decode the config; errors are run-time reasons.
pub(super) fn prepare(config: RawConfig<'_>) -> Result<CodeExecutionConfig, String> {
    decode(config).map_err(|err| format!("parse code_execution config: {err}"))
}

fn outcome(
    state: ResultState,
    verdict: Option<Verdict>,
    score: Option<f64>,
    reason: String,
) -> ValidatorOutcome {
    ValidatorOutcome {
        state,
        verdict,
        score,
        reason,
        evidence: Default::default(),
        source_call: None,
    }
}

/// `2 passed, 1 failed (3 total)`.
fn count_reason(passed: Option<i64>, failed: i64, errors: i64, total: i64) -> String {
    let mut parts = Vec::new();
    if let Some(passed) = passed {
        parts.push(format!("{passed} passed"));
    }
    if failed > 0 {
        parts.push(format!("{failed} failed"));
    }
    if errors > 0 {
        let noun = if errors == 1 { "error" } else { "errors" };
        parts.push(format!("{errors} {noun}"));
    }
    if parts.is_empty() {
        return format!("{total} tests observed");
    }
    format!("{} ({total} total)", parts.join(", "))
}

/// Score the recorded result; a missing result is unavailable before the config is even looked
/// at, as in the reference.
pub(super) fn code_execution(
    config: &Result<CodeExecutionConfig, String>,
    key: &str,
    payload: Option<&Value>,
) -> ValidatorOutcome {
    let Some(payload) = payload else {
        return outcome(
            ResultState::Unavailable,
            None,
            None,
            format!(
                "code execution result for validator {} is unavailable",
                go_quote(key)
            ),
        );
    };
    let config = match config {
        Ok(config) => config,
        Err(err) => return outcome(ResultState::Error, Some(Verdict::Error), None, err.clone()),
    };
    let execution_error = payload["execution_error"].as_str().unwrap_or("").trim();
    if !execution_error.is_empty() {
        return outcome(
            ResultState::Error,
            Some(Verdict::Error),
            None,
            execution_error.to_string(),
        );
    }
    let scoring = config.scoring.as_deref().unwrap_or("fraction_passed");
    let threshold = config.pass_threshold.unwrap_or(1.0);
    let count = |field: &str| payload[field].as_i64();
    let (passed, failed, errors, total_field) = (
        count("passed_tests"),
        count("failed_tests"),
        count("error_tests"),
        count("total_tests"),
    );
    let any_count =
        passed.is_some() || failed.is_some() || errors.is_some() || total_field.is_some();
    let total = match total_field {
        Some(total) if total > 0 => total,
        _ => passed.unwrap_or(0) + failed.unwrap_or(0) + errors.unwrap_or(0),
    };
    let counts_usable = any_count && total > 0;
    let (failed, errors) = (failed.unwrap_or(0), errors.unwrap_or(0));
    let exit_code = payload["exit_code"].as_i64();
    let scored = if payload["timed_out"] == true {
        Some((0.0, "test command timed out".to_string()))
    } else if scoring == "fraction_passed" && counts_usable && passed.is_some() {
        let score = passed.unwrap_or(0) as f64 / total as f64;
        Some((
            score.clamp(0.0, 1.0),
            count_reason(passed, failed, errors, total),
        ))
    } else if scoring == "all_or_nothing" && counts_usable {
        let score = if failed == 0 && errors == 0 { 1.0 } else { 0.0 };
        Some((score, count_reason(passed, failed, errors, total)))
    } else if scoring == "pass_at_k" {
        return outcome(
            ResultState::Error,
            Some(Verdict::Error),
            None,
            "pass_at_k requires multi-sample execution and is not supported for single \
             run-agent scoring"
                .to_string(),
        );
    } else {
        exit_code.map(|code| {
            let score = if code == 0 { 1.0 } else { 0.0 };
            (score, format!("test command exited with code {code}"))
        })
    };
    let Some((score, reason)) = scored else {
        return outcome(
            ResultState::Unavailable,
            None,
            None,
            "code execution result is unavailable".to_string(),
        );
    };
    let verdict = if score >= threshold {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    let mut result = outcome(ResultState::Available, Some(verdict), Some(score), reason);
    let mut recorded = evidence([
        ("pass_threshold", json!(threshold)),
        ("scoring", json!(scoring)),
    ]);
    for &field in CODE_EXECUTION_RECORD {
        recorded.insert(field, payload.get(field).cloned().unwrap_or(Value::Null));
    }
    result.evidence = recorded;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(config: Value, payload: Value) -> ValidatorOutcome {
        code_execution(&prepare(RawConfig::Json(&config)), "tests", Some(&payload))
    }

    #[test]
    fn fraction_passed_with_threshold() {
        let outcome = run(
            json!({"test_command": "pytest", "pass_threshold": 0.5}),
            json!({"passed_tests": 2, "failed_tests": 1, "total_tests": 3, "exit_code": 1}),
        );
        assert_eq!(outcome.verdict, Some(Verdict::Pass));
        assert_eq!(outcome.reason, "2 passed, 1 failed (3 total)");
        assert!((outcome.score.unwrap_or(0.0) - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn exit_code_fallback_and_timeouts() {
        let outcome = run(
            json!({"test_command": "make test"}),
            json!({"exit_code": 2}),
        );
        assert_eq!(outcome.reason, "test command exited with code 2");
        assert_eq!(outcome.verdict, Some(Verdict::Fail));
        let outcome = run(json!({}), json!({"timed_out": true, "exit_code": 0}));
        assert_eq!(outcome.reason, "test command timed out");
        let outcome = run(json!({}), json!({}));
        assert_eq!(outcome.state, ResultState::Unavailable);
    }

    #[test]
    fn pass_at_k_is_rejected_at_load_and_run_time() {
        let config = json!({"test_command": "pytest", "scoring": "pass_at_k"});
        assert_eq!(check(RawConfig::Json(&config))[0].message, PASS_AT_K);
        let outcome = run(config, json!({"exit_code": 0}));
        assert_eq!(outcome.state, ResultState::Error);
        assert!(outcome.reason.starts_with("pass_at_k requires"));
        assert_eq!(count_reason(None, 0, 1, 4), "1 error (4 total)");
        assert_eq!(count_reason(None, 0, 0, 4), "4 tests observed");
        let broken = code_execution(&Err("parse code_execution config: x".into()), "k", None);
        assert_eq!(broken.state, ResultState::Unavailable);
    }
}
