//! The validator cases of the agentclash conformance file (`kind: "validator"`), run through the
//! public validator API. Every failing case id is reported at once.
//!
//! Direct cases call [`Validator`] on already-resolved strings; run-mode cases (a whole recorded
//! run) go through the real binary's `evalctl spec score`, so evidence resolution, the tool-call
//! trace, source pointers and the evaluation record's serialisation are pinned together with the
//! comparisons.

use crate::spec_support;

use serde_json::{json, Value};

use evalctl::evaluation_spec::validators::{
    outcome_class, ResultState, Validator, ValidatorOutcome, Verdict,
};

fn cases() -> Vec<Value> {
    spec_support::conformance_cases()
        .into_iter()
        .filter(|case| case["kind"] == "validator")
        .collect()
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key].as_str().unwrap_or("")
}

fn validator(kind: &str, input: &Value) -> Validator {
    match input.get("config_raw").and_then(Value::as_str) {
        Some(raw) => Validator::from_config_text(kind, raw),
        None => Validator::new(kind, input.get("config")),
    }
}

/// A validator result as the checks see it: the record's field names (`verdict` "" when absent,
/// `normalized_score`, `raw_output` for the evidence).
fn outcome_view(kind: &str, outcome: &ValidatorOutcome) -> Value {
    let class = outcome_class(
        kind,
        outcome.state,
        outcome.verdict,
        outcome.score,
        &outcome.reason,
    );
    json!({
        "state": outcome.state.as_str(),
        "verdict": outcome.verdict.map(Verdict::as_str).unwrap_or(""),
        "normalized_score": outcome.score,
        "reason": outcome.reason,
        "outcome_class": class,
        "raw_output": outcome.evidence,
    })
}

fn direct(input: &Value) -> Value {
    let kind = text(input, "type");
    let validator = validator(kind, input);
    let actual = match input.get("actual_repeat") {
        Some(repeat) => text(repeat, "char").repeat(repeat["count"].as_u64().unwrap_or(0) as usize),
        None => text(input, "actual").to_string(),
    };
    let outcome = match text(input, "mode") {
        "direct_missing_target" => validator.file_missing().into(),
        _ => validator.compare(&actual, text(input, "expected")).into(),
    };
    outcome_view(kind, &outcome)
}

/// A whole run through `evalctl spec score`: the evaluation record as JSON.
fn run(input: &Value) -> Result<Value, String> {
    spec_support::score(&input["evaluation_spec"], &spec_support::run_line(input))
}

fn numbers_close(expected: &Value, actual: &Value, tolerance: f64) -> bool {
    match (expected, actual) {
        (Value::Number(e), Value::Number(a)) => match (e.as_f64(), a.as_f64()) {
            (Some(e), Some(a)) => (e - a).abs() <= tolerance,
            _ => false,
        },
        (Value::Array(e), Value::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(e, a)| numbers_close(e, a, tolerance))
        }
        (Value::Object(e), Value::Object(a)) => e
            .iter()
            .all(|(key, e)| a.get(key).is_some_and(|a| numbers_close(e, a, tolerance))),
        _ => expected == actual,
    }
}

/// Every mismatch between `expected` and a result view.
fn mismatches(expected: &Value, got: &Value, tolerance: f64) -> Vec<String> {
    let mut problems = Vec::new();
    let reason = got["reason"].as_str().unwrap_or("");
    let mut check = |what: &str, ok: bool, shown: &Value| {
        if !ok {
            problems.push(format!("{what}: expected {}, got {shown}", expected[what]));
        }
    };
    for (field, want) in expected.as_object().into_iter().flatten() {
        match field.as_str() {
            // The record leaves out the verdict of a validator that never ran; the case says "".
            "verdict" if want == "" => check(
                field,
                got[field].as_str().unwrap_or("").is_empty(),
                &got[field],
            ),
            "verdict" | "state" | "reason" | "outcome_class" => {
                check(field, &got[field] == want, &got[field])
            }
            "score" => {
                let got = &got["normalized_score"];
                let ok = match (want.as_f64(), got.as_f64()) {
                    (Some(want), Some(got)) => (want - got).abs() <= tolerance,
                    (None, None) => true,
                    _ => false,
                };
                check(field, ok, got);
            }
            "reason_prefix" => check(
                field,
                reason.starts_with(want.as_str().unwrap_or("")),
                &got["reason"],
            ),
            "reason_contains" => check(
                field,
                reason.contains(want.as_str().unwrap_or("")),
                &got["reason"],
            ),
            "reason_must_not_contain" => check(
                field,
                !reason.contains(want.as_str().unwrap_or("\u{0}")),
                &got["reason"],
            ),
            "evidence" | "raw_output_fields" => check(
                field,
                numbers_close(want, &got["raw_output"], tolerance),
                &got["raw_output"],
            ),
            "evidence_keys" => {
                let ok = want.as_array().into_iter().flatten().all(|key| {
                    key.as_str()
                        .is_some_and(|key| got["raw_output"].get(key).is_some())
                });
                check(field, ok, &got["raw_output"]);
            }
            "source" => check(
                field,
                numbers_close(want, &got["source"], tolerance),
                &got["source"],
            ),
            "key" | "tolerance" => {}
            _ => check(
                field,
                false,
                &json!("an expectation this test does not check"),
            ),
        }
    }
    problems
}

#[test]
fn every_validator_case_passes() {
    let cases = cases();
    assert_eq!(cases.len(), 130, "the case file holds 130 validator cases");
    let mut failures = Vec::new();
    for case in &cases {
        let id = text(case, "id");
        let input = &case["input"];
        let expected = &case["expected"];
        let tolerance = expected["tolerance"].as_f64().unwrap_or(1e-9);
        match text(input, "mode") {
            "classify_error" => {
                let class = outcome_class(
                    text(input, "type"),
                    ResultState::Error,
                    Some(Verdict::Error),
                    None,
                    text(input, "reason"),
                );
                if expected["outcome_class"] != class {
                    failures.push(format!(
                        "{id}: outcome_class: expected {}, got {class}",
                        expected["outcome_class"]
                    ));
                }
            }
            "run" => match run(input) {
                Err(err) => failures.push(format!("{id}: {err}")),
                Ok(record) => {
                    for (field, want) in expected.as_object().into_iter().flatten() {
                        if field == "validator_results" {
                            continue;
                        }
                        if &record[field] != want {
                            failures.push(format!(
                                "{id}: {field}: expected {want}, got {}",
                                record[field]
                            ));
                        }
                    }
                    for want in expected["validator_results"]
                        .as_array()
                        .into_iter()
                        .flatten()
                    {
                        let key = &want["key"];
                        let found = record["validator_results"].as_array().and_then(|results| {
                            results.iter().find(|result| &result["key"] == key)
                        });
                        match found {
                            Some(result) => {
                                for problem in mismatches(want, result, tolerance) {
                                    failures.push(format!("{id} [{key}]: {problem}"));
                                }
                            }
                            None => failures.push(format!("{id}: no result for {key}")),
                        }
                    }
                }
            },
            _ => {
                for problem in mismatches(expected, &direct(input), tolerance) {
                    failures.push(format!("{id}: {problem}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing checks in the validator cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
