//! The agentclash conformance cases of kinds `spec_validation`, `scorecard`, `evidence` and
//! `metric` (`tests/fixtures/conformance/agentclash-cases.json`: cases taken from the reference's
//! own tests, each an `id`, a `kind`, an `input`, the `expected` outcome and the reference test
//! it comes from as `source`). Run-mode cases go through the real binary (`evalctl spec score`),
//! spec cases through `evalctl spec validate` (and the library, for which stage rejected a spec),
//! helper cases through the public `evalctl::evaluation_spec` API. Every case runs; the failing
//! ids are collected and the test fails listing them all at once.

use crate::spec_support;

use std::collections::BTreeMap;

use evalctl::evaluation_spec::decode::{self, Shape};
use evalctl::evaluation_spec::evaluate::evaluate_run_deterministic;
use evalctl::evaluation_spec::evidence::{
    order_events, tool_trace, Event, Evidence, Resolved, TraceEntry, Turn,
};
use evalctl::evaluation_spec::gostr::loose_string;
use evalctl::evaluation_spec::judges::{judge_provider, JudgeResult};
use evalctl::evaluation_spec::model::{Dimension, Scorecard, SpecDefinition};
use evalctl::evaluation_spec::scorecard::{
    dimension_result, normalize_higher, normalize_lower, overall, validators_dimension,
    DimensionInputs, DimensionResult, ValidatorSummary,
};
use evalctl::evaluation_spec::signals::{multi_turn_recovery, signal_score, ValidatorScore};
use evalctl::evaluation_spec::validators::ResultState;
use evalctl::evaluation_spec::{EvaluationSpec, RunRecord};
use serde_json::{json, Value};

const KINDS: &[&str] = &["spec_validation", "scorecard", "evidence", "metric"];

fn cases() -> Vec<Value> {
    spec_support::conformance_cases()
        .into_iter()
        .filter(|case| KINDS.contains(&case["kind"].as_str().unwrap_or("")))
        .collect()
}

/// Numbers compare by value (within `tolerance`), everything else structurally.
fn same(actual: &Value, expected: &Value, tolerance: f64) -> bool {
    match (actual, expected) {
        (Value::Number(a), Value::Number(e)) => {
            let (a, e) = (
                a.as_f64().unwrap_or(f64::NAN),
                e.as_f64().unwrap_or(f64::NAN),
            );
            a == e || (a - e).abs() <= tolerance
        }
        (Value::Array(a), Value::Array(e)) => {
            a.len() == e.len() && a.iter().zip(e).all(|(a, e)| same(a, e, tolerance))
        }
        (Value::Object(a), Value::Object(e)) => {
            a.len() == e.len()
                && e.iter()
                    .all(|(k, e)| a.get(k).is_some_and(|a| same(a, e, tolerance)))
        }
        _ => actual == expected,
    }
}

/// Every member of `expected` appears in `actual` with the same value (recursively for objects).
fn subset(actual: &Value, expected: &Value, tolerance: f64) -> bool {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => e.iter().all(|(k, e)| {
            let a = a.get(k).unwrap_or(&Value::Null);
            subset(a, e, tolerance)
        }),
        _ => same(actual, expected, tolerance),
    }
}

fn check(failures: &mut Vec<String>, ok: bool, what: impl FnOnce() -> String) {
    if !ok {
        failures.push(what());
    }
}

/// `a.b[2].c` and `a.b[*].c` (a list of every element's member) over a JSON value.
fn lookup(value: &Value, path: &str) -> Value {
    let mut current = vec![value.clone()];
    let mut fan_out = false;
    for segment in path.split('.') {
        let (name, index) = match segment.find('[') {
            Some(at) => (&segment[..at], Some(&segment[at + 1..segment.len() - 1])),
            None => (segment, None),
        };
        current = current
            .into_iter()
            .flat_map(|item| {
                let member = if name.is_empty() {
                    item
                } else {
                    item.get(name).cloned().unwrap_or(Value::Null)
                };
                match index {
                    None => vec![member],
                    Some("*") => member.as_array().cloned().unwrap_or_default(),
                    Some(i) => vec![i
                        .parse::<usize>()
                        .ok()
                        .and_then(|i| member.get(i).cloned())
                        .unwrap_or(Value::Null)],
                }
            })
            .collect();
        fan_out |= index == Some("*");
    }
    if fan_out {
        Value::Array(current)
    } else {
        current.pop().unwrap_or(Value::Null)
    }
}

fn run_spec_validation(case: &Value) -> Vec<String> {
    let input = &case["input"];
    let expected = &case["expected"];
    let mut failures = Vec::new();
    if input["mode"] == "judge_model" {
        let model = input["model"].as_str().unwrap_or("");
        let provider = judge_provider(model);
        check(
            &mut failures,
            json!(provider.unwrap_or("")) == expected["provider_key"],
            || format!("provider {provider:?}"),
        );
        check(
            &mut failures,
            json!(provider.is_some()) == expected["valid_as_judge_model"],
            || "valid_as_judge_model".to_string(),
        );
        return failures;
    }
    let (document, shape) = if input["mode"] == "manifest" {
        (&input["manifest"], Shape::Manifest)
    } else {
        (&input["evaluation_spec"], Shape::Definition)
    };
    let bytes = serde_json::to_vec(document).expect("serialisable");
    // An unknown key is a decoding problem even though decoding goes on past it.
    let decoded = decode::decode_as(&bytes, "case.json", shape);
    let decode_failed = decoded
        .as_ref()
        .map_or(true, |(_, unknown)| !unknown.is_empty());
    let outcome = decoded.and_then(|(definition, unknown)| match unknown.is_empty() {
        true => EvaluationSpec::from_definition(definition),
        false => Err(unknown),
    });
    let want_valid = expected["valid"].as_bool().unwrap_or(true);
    check(&mut failures, outcome.is_ok() == want_valid, || {
        format!("valid = {}: {:?}", outcome.is_ok(), outcome.as_ref().err())
    });
    if expected["error_kind"] == "decode" {
        check(&mut failures, decode_failed, || {
            "expected a decode error".to_string()
        });
    }
    // What users see: the binary's report (each error `case.json[:LINE]: <path> <message>`).
    let (errors, printed) = spec_support::validate(document);
    check(&mut failures, errors.is_empty() == want_valid, || {
        format!("spec validate: valid = {}: {errors:?}", errors.is_empty())
    });
    for needle in expected["errors_contain"].as_array().into_iter().flatten() {
        let needle = needle.as_str().unwrap_or("");
        check(
            &mut failures,
            errors.iter().any(|error| error.contains(needle)),
            || format!("no error contains {needle:?} in {errors:?}"),
        );
    }
    if let (Some(printed), Some(normalized)) = (&printed, expected["normalized"].as_object()) {
        for (path, want) in normalized {
            let got = lookup(printed, path);
            check(&mut failures, subset(&got, want, 0.0), || {
                format!("normalized {path} = {got}, expected {want}")
            });
        }
    }
    failures
}

fn state(text: &Value) -> ResultState {
    match text.as_str() {
        Some("available") => ResultState::Available,
        Some("error") => ResultState::Error,
        _ => ResultState::Unavailable,
    }
}

fn from_json<T: serde::de::DeserializeOwned>(value: &Value) -> T {
    serde_json::from_value(value.clone()).unwrap_or_else(|err| panic!("{err}: {value}"))
}

fn tolerance(expected: &Value) -> f64 {
    expected["tolerance"].as_f64().unwrap_or(1e-12)
}

/// Compare `actual` with `expected` member by member (missing actual members read as null).
fn expect_members(
    failures: &mut Vec<String>,
    what: &str,
    actual: &Value,
    expected: &Value,
    tol: f64,
) {
    for (key, want) in expected.as_object().into_iter().flatten() {
        let got = actual.get(key).cloned().unwrap_or(Value::Null);
        check(failures, same(&got, want, tol), || {
            format!("{what}.{key} = {got}, expected {want}")
        });
    }
}

fn run_record(input: &Value) -> RunRecord {
    from_json(&json!({
        "challenge_inputs": input["challenge_inputs"],
        "events": input["events"],
        "llm_judge_results": input["llm_judge_results"],
        "human_preference_score": input["human_preference_score"],
    }))
}

/// Results of one list (`validator_results`, `metric_results`, …) matched by key.
fn expect_results(
    failures: &mut Vec<String>,
    list: &str,
    key_name: &str,
    actual: &Value,
    expected: &Value,
    tol: f64,
) {
    for want in expected.as_array().into_iter().flatten() {
        let key = &want[key_name];
        let Some(got) = actual
            .as_array()
            .and_then(|items| items.iter().find(|item| &item[key_name] == key))
        else {
            failures.push(format!("{list}: no result {key}"));
            continue;
        };
        for (field, value) in want.as_object().into_iter().flatten() {
            let what = format!("{list}[{key}].{field}");
            match field.as_str() {
                "score" => {
                    let got = &got["normalized_score"];
                    check(failures, same(got, value, tol), || {
                        format!("{what} = {got}, expected {value}")
                    });
                }
                "verdict" if value == "" => {
                    check(failures, got.get("verdict").is_none(), || {
                        format!("{what} = {}", got["verdict"])
                    });
                }
                "raw_output_fields" => {
                    expect_members(failures, &what, &got["raw_output"], value, tol)
                }
                "reason_must_not_contain" => {
                    let reason = got["reason"].as_str().unwrap_or("");
                    check(
                        failures,
                        !reason.contains(value.as_str().unwrap_or("")),
                        || format!("{what}: {reason}"),
                    );
                }
                "metadata_keys" => {
                    for name in value.as_array().into_iter().flatten() {
                        let present = got["metadata"].get(name.as_str().unwrap_or("")).is_some();
                        check(failures, present, || {
                            format!("{what}: no {name} in {}", got["metadata"])
                        });
                    }
                }
                _ => {
                    let got = got.get(field).cloned().unwrap_or(Value::Null);
                    let ok = if value.is_object() {
                        subset(&got, value, tol)
                    } else {
                        same(&got, value, tol)
                    };
                    check(failures, ok, || format!("{what} = {got}, expected {value}"));
                }
            }
        }
    }
}

fn run_full(case: &Value) -> Vec<String> {
    let input = &case["input"];
    let expected = &case["expected"];
    let tol = tolerance(expected);
    let mut failures = Vec::new();
    let definition: SpecDefinition = from_json(&input["evaluation_spec"]);
    let spec = match EvaluationSpec::from_definition(definition) {
        Ok(spec) => spec,
        Err(problems) => return vec![format!("spec rejected: {problems:?}")],
    };
    let run = run_record(input);
    let record = if input["deterministic_entrypoint"] == true {
        match evaluate_run_deterministic(&spec, &run) {
            Ok(record) => serde_json::to_value(&record).expect("serialisable"),
            Err(error) => {
                let want = expected["error_contains"].as_str().unwrap_or("\u{0}");
                check(&mut failures, error.contains(want), || {
                    format!("error {error:?}")
                });
                return failures;
            }
        }
    } else {
        match spec_support::score(&input["evaluation_spec"], &spec_support::run_line(input)) {
            Ok(record) => record,
            Err(reason) => return vec![reason],
        }
    };
    check(
        &mut failures,
        expected.get("error_contains").is_none(),
        || "evaluation was not refused".to_string(),
    );
    for (field, want) in expected.as_object().into_iter().flatten() {
        match field.as_str() {
            "validator_results" | "metric_results" => {
                expect_results(&mut failures, field, "key", &record[field], want, tol)
            }
            "dimension_results" => {
                expect_results(&mut failures, field, "dimension", &record[field], want, tol)
            }
            "dimension_scores" => expect_members(&mut failures, field, &record[field], want, tol),
            "validity_reason_contains" => {
                let reason = record["validity_reason"].as_str().unwrap_or("");
                check(
                    &mut failures,
                    reason.contains(want.as_str().unwrap_or("")),
                    || format!("validity_reason {reason:?}"),
                );
            }
            "warnings_contain" => {
                let warnings = record["warnings"].to_string();
                for needle in want.as_array().into_iter().flatten() {
                    check(
                        &mut failures,
                        warnings.contains(needle.as_str().unwrap_or("")),
                        || format!("warnings {warnings}"),
                    );
                }
            }
            "tolerance" | "error_contains" => {}
            _ => {
                let got = record.get(field).cloned().unwrap_or(Value::Null);
                check(&mut failures, same(&got, want, tol), || {
                    format!("{field} = {got}, expected {want}")
                });
            }
        }
    }
    failures
}

fn events(input: &Value) -> Vec<Event> {
    from_json(&input["events"])
}

fn trace(input: &Value) -> Vec<TraceEntry<'_>> {
    input["trace"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|entry| TraceEntry {
            tool_name: entry["tool_name"].as_str().unwrap_or(""),
            arguments: entry.get("arguments"),
            failed: entry["failed"] == true,
            failure_origin: entry["failure_origin"].as_str().unwrap_or(""),
            result_content: entry["error_message"].as_str(),
            sequence: 0,
            event_type: "",
        })
        .collect()
}

fn scored(score: Result<f64, String>) -> Value {
    match score {
        Ok(score) => json!({"score": score, "state": "available"}),
        Err(reason) => json!({"score": null, "state": "unavailable", "reason": reason}),
    }
}

fn run_helper(case: &Value) -> Vec<String> {
    let input = &case["input"];
    let expected = &case["expected"];
    let tol = tolerance(expected);
    let mut failures = Vec::new();
    let actual = match input["mode"].as_str().unwrap_or("") {
        "loose_string" => json!({"string": loose_string(&input["value"])}),
        "order_events" => {
            let events = events(input);
            let order: Vec<&str> = order_events(&events)
                .iter()
                .map(|event| event.kind.as_str())
                .collect();
            json!({"order": order})
        }
        "tool_trace" => {
            let events = events(input);
            let trace = tool_trace(order_events(&events));
            let trace = serde_json::to_value(&trace).expect("serialisable");
            let want = &expected["trace"];
            let matches = trace.as_array().map(Vec::len) == want.as_array().map(Vec::len)
                && trace
                    .as_array()
                    .into_iter()
                    .flatten()
                    .zip(want.as_array().into_iter().flatten())
                    .all(|(got, want)| subset(got, want, tol));
            check(&mut failures, matches, || format!("trace {trace}"));
            return failures;
        }
        "resolve" => {
            let mut events = input["events"].as_array().cloned().unwrap_or_default();
            for (kind, list) in [
                ("grader.verification.file_captured", "captured_files"),
                (
                    "grader.verification.directory_listed",
                    "captured_dir_listings",
                ),
            ] {
                for capture in input[list]
                    .as_object()
                    .into_iter()
                    .flat_map(|map| map.values())
                {
                    events.push(json!({"type": kind, "occurred_at": "2026-01-01T00:00:00Z", "payload": capture}));
                }
            }
            let run: RunRecord = from_json(&json!({"events": events}));
            let evidence = Evidence::build(&run);
            let (resolved, _) = evidence.resolve(input["reference"].as_str().unwrap_or(""));
            let (value, reason) = match resolved {
                Resolved::Value(value) => (json!(value), String::new()),
                Resolved::Missing(reason) | Resolved::Error(reason) => (Value::Null, reason),
            };
            if let Some(want) = expected.get("value_json") {
                let parsed: Value = value
                    .as_str()
                    .and_then(|text| serde_json::from_str(text).ok())
                    .unwrap_or(Value::Null);
                check(&mut failures, same(&parsed, want, tol), || {
                    format!("value {value}")
                });
            }
            let mut actual = json!({"value": value, "reason": reason});
            if expected.get("value").is_none() {
                actual["value"] = Value::Null;
            }
            actual
        }
        "signal" => scored(signal_score(
            input["signal"].as_str().unwrap_or(""),
            &trace(input),
            &[],
            &[],
        )),
        "multi_turn_recovery" => {
            let turns: Vec<Turn> = input["turns"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|turn| Turn {
                    turn_index: turn["turn_index"].as_i64().unwrap_or(0),
                    mismatch: turn["mismatch"] == true,
                    ..Turn::default()
                })
                .collect();
            let validators: Vec<ValidatorScore> = input["validators"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| ValidatorScore {
                    state: state(&v["state"]),
                    score: v["normalized_score"].as_f64(),
                })
                .collect();
            scored(multi_turn_recovery(&turns, &validators))
        }
        "normalize" => {
            let (value, target, max) = (
                input["value"].as_f64().unwrap_or(0.0),
                input["target"].as_f64().unwrap_or(0.0),
                input["max"].as_f64().unwrap_or(0.0),
            );
            let score = if input["better_direction"] == "lower" {
                normalize_lower(value, target, max)
            } else {
                normalize_higher(value, target, max)
            };
            json!({"score": score})
        }
        "strategy" => {
            let spec = SpecDefinition {
                scorecard: from_json::<Scorecard>(&input["scorecard"]),
                ..SpecDefinition::default()
            };
            let results: Vec<DimensionResult> = input["dimension_results"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| DimensionResult {
                    dimension: r["dimension"].as_str().unwrap_or("").to_string(),
                    score: r["score"].as_f64(),
                    state: state(&r["state"]),
                    reason: r["reason"].as_str().unwrap_or("").to_string(),
                    better_direction: String::new(),
                })
                .collect();
            let verdict = overall(&spec, &results);
            json!({"overall_score": verdict.score, "passed": verdict.passed, "overall_reason": verdict.reason})
        }
        "validators_dimension" => {
            let scope: Vec<String> = from_json(&input["scope"]);
            let results = input["validator_results"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let summaries: Vec<ValidatorSummary> = results
                .iter()
                .map(|v| ValidatorSummary {
                    key: v["key"].as_str().unwrap_or(""),
                    score: ValidatorScore {
                        state: state(&v["state"]),
                        score: v["normalized_score"].as_f64(),
                    },
                    reason: v["reason"].as_str().unwrap_or(""),
                })
                .collect();
            let (score, state, reason) = validators_dimension(&scope, &summaries);
            json!({"score": score, "state": state.as_str(), "reason": reason})
        }
        "dimension" => {
            let dimension: Dimension = from_json(&input["dimension"]);
            let judges: Vec<JudgeResult> = from_json(&input["llm_judge_results"]);
            let run = RunRecord::default();
            let evidence = Evidence::build(&run);
            let spec = SpecDefinition::default();
            let inputs = DimensionInputs {
                spec: &spec,
                evidence: &evidence,
                validators: &[],
                validator_scores: &[],
                metrics: &[],
                judges: &judges,
            };
            let result = dimension_result(&dimension, &inputs);
            json!({"score": result.score, "state": result.state.as_str(), "reason": result.reason})
        }
        other => return vec![format!("unknown mode {other}")],
    };
    let mut wanted = expected.clone();
    if let Some(map) = wanted.as_object_mut() {
        map.remove("tolerance");
        map.remove("value_json");
    }
    expect_members(&mut failures, "result", &actual, &wanted, tol);
    failures
}

fn run_case(case: &Value) -> Vec<String> {
    match (case["kind"].as_str(), case["input"]["mode"].as_str()) {
        (Some("spec_validation"), _) => run_spec_validation(case),
        (_, Some("run")) => run_full(case),
        _ => run_helper(case),
    }
}

#[test]
fn agentclash_conformance_cases() {
    let cases = cases();
    assert_eq!(cases.len(), 129, "the four kinds hold 129 cases");
    let mut passed: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failing = Vec::new();
    for case in &cases {
        let kind = case["kind"].as_str().unwrap_or("");
        let failures = run_case(case);
        let tally = passed.entry(kind).or_default();
        tally.1 += 1;
        if failures.is_empty() {
            tally.0 += 1;
        } else {
            failing.push(format!("{}: {}", case["id"], failures.join("; ")));
        }
    }
    let summary: Vec<String> = passed
        .iter()
        .map(|(kind, (ok, all))| format!("{kind} {ok}/{all}"))
        .collect();
    assert!(
        failing.is_empty(),
        "{} failing ({}):\n{}",
        failing.len(),
        summary.join(", "),
        failing.join("\n")
    );
}
