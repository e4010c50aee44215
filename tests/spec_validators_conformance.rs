//! The validator cases of the agentclash conformance file (`kind: "validator"`), run through the
//! public validator API. Every failing case id is reported at once.
//!
//! Run-mode cases (a whole recorded run) belong to the spec module's scorer; here they are reduced
//! to what the validators see — the last `code_executed` payload, the tool-call trace, the captured
//! file — by a small stand-in for evidence resolution, so the comparisons are pinned too.

use std::path::Path;

use serde_json::{Map, Value};

use evalctl::spec::validators::{
    outcome_class, ResultState, TargetValue, ToolCall, Validator, ValidatorOutcome, Verdict,
};

fn cases() -> Vec<Value> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/agentclash-cases.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    let cases: Vec<Value> = serde_json::from_str(&text).expect("the case file is a JSON array");
    cases
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

/// One validator result to check, with the key it is matched by in run cases.
struct Produced {
    kind: String,
    outcome: ValidatorOutcome,
}

fn direct(input: &Value) -> Vec<(String, Produced)> {
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
    vec![(
        String::new(),
        Produced {
            kind: kind.to_string(),
            outcome,
        },
    )]
}

/// Events in scoring order: positive sequence numbers first (ascending), then by time.
fn ordered_events(input: &Value) -> Vec<Value> {
    let mut events = input["events"].as_array().cloned().unwrap_or_default();
    events.sort_by_key(|event| {
        let sequence = event["sequence_number"].as_i64().filter(|n| *n > 0);
        (
            sequence.is_none(),
            sequence.unwrap_or(0),
            text(event, "occurred_at").to_string(),
        )
    });
    events
}

fn run(input: &Value) -> Vec<(String, Produced)> {
    let events = ordered_events(input);
    let of_type = |kind: &'static str| {
        events
            .iter()
            .filter(move |event| event["type"] == kind)
            .map(|event| &event["payload"])
    };
    let trace: Vec<ToolCall> = events
        .iter()
        .filter(|event| {
            event["type"] == "tool.call.completed" || event["type"] == "tool.call.failed"
        })
        .map(|event| ToolCall {
            name: text(&event["payload"], "tool_name").to_string(),
            arguments: event["payload"]
                .get("arguments")
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new())),
            failed: event["type"] == "tool.call.failed"
                || event["payload"]["result"]["is_error"] == true,
        })
        .collect();
    let validators = input["evaluation_spec"]["validators"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    validators
        .iter()
        .map(|declared| {
            let key = text(declared, "key");
            let kind = text(declared, "type");
            let validator = Validator::new(kind, declared.get("config"));
            let outcome = match kind {
                "code_execution" => {
                    let payload = of_type("grader.verification.code_executed")
                        .rfind(|payload| payload["validator_key"] == key);
                    validator.code_execution(key, payload)
                }
                "tool_call_assertion" => validator.tool_call_assertion(&trace),
                "postcondition" => {
                    let capture_key = text(declared, "target").trim_start_matches("file:");
                    let capture = of_type("grader.verification.file_captured")
                        .rfind(|payload| payload["key"] == capture_key);
                    let missing_reason;
                    let target = match capture {
                        Some(payload) if payload["exists"] == true => {
                            TargetValue::Present(text(payload, "content"))
                        }
                        Some(payload) => {
                            missing_reason = format!(
                                "captured file {capture_key:?} does not exist at path {:?}",
                                text(payload, "path")
                            );
                            TargetValue::Missing {
                                reason: &missing_reason,
                            }
                        }
                        None => {
                            missing_reason =
                                format!("file capture key {capture_key:?} is unavailable");
                            TargetValue::Missing {
                                reason: &missing_reason,
                            }
                        }
                    };
                    validator.postcondition(target)
                }
                other => panic!("run case with validator type {other} is not reduced here"),
            };
            (
                key.to_string(),
                Produced {
                    kind: kind.to_string(),
                    outcome,
                },
            )
        })
        .collect()
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

/// Every mismatch between `expected` and the produced result.
fn mismatches(expected: &Value, produced: &Produced, tolerance: f64) -> Vec<String> {
    let outcome = &produced.outcome;
    let mut problems = Vec::new();
    let verdict = outcome.verdict.map(Verdict::as_str).unwrap_or("");
    let class = outcome_class(
        &produced.kind,
        outcome.state,
        outcome.verdict,
        outcome.score,
        &outcome.reason,
    );
    let mut check = |what: &str, ok: bool, got: String| {
        if !ok {
            problems.push(format!("{what}: expected {}, got {got}", expected[what]));
        }
    };
    if let Some(want) = expected.get("verdict") {
        check("verdict", want == verdict, verdict.to_string());
    }
    if let Some(want) = expected.get("score") {
        let ok = match (want.as_f64(), outcome.score) {
            (Some(want), Some(got)) => (want - got).abs() <= tolerance,
            (None, None) => true,
            _ => false,
        };
        check("score", ok, format!("{:?}", outcome.score));
    }
    if let Some(want) = expected.get("state") {
        check(
            "state",
            want == outcome.state.as_str(),
            outcome.state.as_str().into(),
        );
    }
    if let Some(want) = expected.get("reason") {
        check(
            "reason",
            want == outcome.reason.as_str(),
            format!("{:?}", outcome.reason),
        );
    }
    if let Some(want) = expected.get("reason_prefix").and_then(Value::as_str) {
        check(
            "reason_prefix",
            outcome.reason.starts_with(want),
            format!("{:?}", outcome.reason),
        );
    }
    if let Some(want) = expected.get("reason_contains").and_then(Value::as_str) {
        check(
            "reason_contains",
            outcome.reason.contains(want),
            format!("{:?}", outcome.reason),
        );
    }
    if let Some(want) = expected
        .get("reason_must_not_contain")
        .and_then(Value::as_str)
    {
        check(
            "reason_must_not_contain",
            !outcome.reason.contains(want),
            format!("{:?}", outcome.reason),
        );
    }
    if let Some(want) = expected.get("outcome_class") {
        check("outcome_class", want == class, class.to_string());
    }
    let evidence = Value::Object(outcome.evidence.clone());
    for field in ["evidence", "raw_output_fields"] {
        if let Some(want) = expected.get(field) {
            check(
                field,
                numbers_close(want, &evidence, tolerance),
                evidence.to_string(),
            );
        }
    }
    if let Some(keys) = expected.get("evidence_keys").and_then(Value::as_array) {
        let ok = keys.iter().all(|key| {
            key.as_str()
                .is_some_and(|key| outcome.evidence.contains_key(key))
        });
        check("evidence_keys", ok, evidence.to_string());
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
            "run" => {
                let produced = run(input);
                for want in expected["validator_results"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    let key = text(want, "key");
                    match produced
                        .iter()
                        .find(|(produced_key, _)| produced_key == key)
                    {
                        Some((_, result)) => {
                            for problem in mismatches(want, result, tolerance) {
                                failures.push(format!("{id} [{key}]: {problem}"));
                            }
                        }
                        None => failures.push(format!("{id}: no result for {key}")),
                    }
                }
            }
            _ => {
                for (_, result) in direct(input) {
                    for problem in mismatches(expected, &result, tolerance) {
                        failures.push(format!("{id}: {problem}"));
                    }
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
