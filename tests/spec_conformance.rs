//! The agentclash conformance cases of kinds `spec_validation`, `scorecard`, `evidence` and
//! `metric` (`../shared/conformance/agentclash-cases.json`, format in section 8 of the design
//! page), run through the public `evalctl::spec` API. Every case runs; the failing ids are
//! collected and the test fails listing them, so progress stays visible.

use std::collections::BTreeMap;
use std::path::Path;

use evalctl::spec::decode::{self, Shape};
use evalctl::spec::judges::judge_provider;
use evalctl::spec::EvaluationSpec;
use serde_json::{json, Value};

const KINDS: &[&str] = &["spec_validation", "scorecard", "evidence", "metric"];

fn cases() -> Vec<Value> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/agentclash-cases.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("read {}: {err}", path.display()));
    let all: Vec<Value> = serde_json::from_str(&text).expect("the case file is a JSON array");
    all.into_iter()
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
    let decoded = decode::decode_as(&bytes, "case.json", shape);
    let decode_failed = decoded.is_err();
    let outcome = decoded.and_then(EvaluationSpec::from_definition);
    let want_valid = expected["valid"].as_bool().unwrap_or(true);
    check(&mut failures, outcome.is_ok() == want_valid, || {
        format!("valid = {}: {:?}", outcome.is_ok(), outcome.as_ref().err())
    });
    if expected["error_kind"] == "decode" {
        check(&mut failures, decode_failed, || {
            "expected a decode error".to_string()
        });
    }
    let errors: Vec<String> = match &outcome {
        Err(problems) => problems.iter().map(ToString::to_string).collect(),
        Ok(_) => Vec::new(),
    };
    for needle in expected["errors_contain"].as_array().into_iter().flatten() {
        let needle = needle.as_str().unwrap_or("");
        check(
            &mut failures,
            errors.iter().any(|error| error.contains(needle)),
            || format!("no error contains {needle:?} in {errors:?}"),
        );
    }
    if let (Ok(spec), Some(normalized)) = (&outcome, expected["normalized"].as_object()) {
        let printed = serde_json::to_value(spec.definition()).expect("serialisable");
        for (path, want) in normalized {
            let got = lookup(&printed, path);
            check(&mut failures, subset(&got, want, 0.0), || {
                format!("normalized {path} = {got}, expected {want}")
            });
        }
    }
    failures
}

fn run_case(case: &Value) -> Vec<String> {
    match case["kind"].as_str() {
        Some("spec_validation") => run_spec_validation(case),
        _ => vec![format!("mode {} not run yet", case["input"]["mode"])],
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
