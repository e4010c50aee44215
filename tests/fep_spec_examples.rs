//! The examples of FEP 0.0.1 sections 2.3–4.2, run through `evalctl fep evaluate`.

use crate::fep_support::{check, check_results, evaluate, passed};
use serde_json::{json, Value};

fn is_utc_timestamp(value: &Value) -> bool {
    let text = value.as_str().unwrap_or_default();
    let bytes = text.as_bytes();
    text.len() == 24
        && text.ends_with('Z')
        && bytes[4] == b'-'
        && bytes[10] == b'T'
        && bytes[19] == b'.'
        && text.chars().filter(char::is_ascii_digit).count() == 17
}

/// Section 3.1: the example EVALUATE call and the shape of its response. (The spec's example
/// response says `passed: true`, but "The capital of France is Paris." is not exactly "Paris";
/// evalctl reports false.)
#[test]
fn section_3_1_evaluate_call() {
    let test_case =
        json!({"id": "test_001", "input": "What is the capital of France?", "expected": "Paris"});
    let output = json!({"value": "The capital of France is Paris."});
    let (document, code) = evaluate(&json!({
        "test_cases": [test_case],
        "outputs": [output],
        "checks": [check("exact_match", json!({"actual": "$.output.value", "expected": "$.test_case.expected"}))],
        "experiment_metadata": {"name": "geography_test_v1"}
    }));
    assert_eq!(code, 0);
    assert!(document["evaluation_id"]
        .as_str()
        .is_some_and(|id| !id.is_empty()));
    assert!(
        is_utc_timestamp(&document["started_at"]),
        "{}",
        document["started_at"]
    );
    assert!(is_utc_timestamp(&document["completed_at"]));
    assert_eq!(document["status"], "completed");
    assert_eq!(document["experiment"], json!({"name": "geography_test_v1"}));
    assert_eq!(
        document["summary"],
        json!({"total_test_cases": 1, "completed_test_cases": 1, "error_test_cases": 0,
               "skipped_test_cases": 0, "total_checks": 1, "completed_checks": 1,
               "error_checks": 0, "skipped_checks": 0})
    );
    let result = &document["results"][0];
    assert_eq!(result["status"], "completed");
    assert_eq!(
        result["execution_context"],
        json!({"test_case": test_case, "output": output})
    );
    assert_eq!(
        result["summary"],
        json!({"total_checks": 1, "completed_checks": 1, "error_checks": 0, "skipped_checks": 0})
    );
    let check_result = &result["check_results"][0];
    assert_eq!(check_result["check_type"], "exact_match");
    assert_eq!(check_result["status"], "completed");
    assert_eq!(check_result["results"], json!({"passed": false}));
    assert!(is_utc_timestamp(&check_result["evaluated_at"]));
    assert_eq!(
        check_result["resolved_arguments"],
        json!({"actual": {"jsonpath": "$.output.value", "value": "The capital of France is Paris."},
               "expected": {"jsonpath": "$.test_case.expected", "value": "Paris"}})
    );
    assert_eq!(check_result["metadata"]["check_version"], "1.0.0");
    assert!(check_result["metadata"]["execution_time_ms"].is_number());
    assert!(check_result.get("error").is_none());
}

/// Section 2.3.4: a failed match and its resolved arguments (literal ones without `jsonpath`).
#[test]
fn section_2_3_4_check_result() {
    let results = check_results(
        json!({"id": "t", "input": "q", "expected": "Paris"}),
        json!({"value": "paris"}),
        vec![check(
            "exact_match",
            json!({"actual": "$.output.value", "expected": "$.test_case.expected", "case_sensitive": true}),
        )],
    );
    assert_eq!(results[0]["results"], json!({"passed": false}));
    assert_eq!(
        results[0]["resolved_arguments"],
        json!({"actual": {"jsonpath": "$.output.value", "value": "paris"},
               "expected": {"jsonpath": "$.test_case.expected", "value": "Paris"},
               "case_sensitive": {"value": true}})
    );
}

/// Section 2.3.5: the examples of each standard check.
#[test]
fn section_2_3_5_standard_check_examples() {
    let results = check_results(
        json!({"id": "t", "input": "q", "context": {"log_output": "starting\nERROR: disk full", "latency": 0.2}}),
        json!({"value": {
            "text": "Paris is the capital of France",
            "trace": {"status": "OK: all steps done"},
            "email": "user@example.com",
            "confidence_score": 0.85,
            "temperature": 85
        }}),
        vec![
            check(
                "exact_match",
                json!({"actual": "Paris", "expected": "Paris", "case_sensitive": true, "negate": false}),
            ),
            check(
                "contains",
                json!({"text": "$.output.value.text", "phrases": ["Paris", "France"]}),
            ),
            check(
                "contains",
                json!({"text": "$.output.value.trace.status", "phrases": ["error", "failed", "exception"], "negate": true, "case_sensitive": false}),
            ),
            check(
                "regex",
                json!({"text": "$.output.value.email", "pattern": "^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$", "flags": {"case_insensitive": true}}),
            ),
            check(
                "regex",
                json!({"text": "$.test_case.context.log_output", "pattern": "^ERROR:", "flags": {"case_insensitive": false, "multiline": true, "dot_all": false}, "negate": false}),
            ),
            check(
                "threshold",
                json!({"value": "$.output.value.confidence_score", "min_value": 0.8, "max_value": 1.0}),
            ),
            check(
                "threshold",
                json!({"value": "$.test_case.context.latency", "min_value": 0, "min_inclusive": false}),
            ),
            check(
                "threshold",
                json!({"value": "$.output.value.temperature", "min_value": 20, "max_value": 80, "negate": true}),
            ),
        ],
    );
    assert_eq!(passed(&results), [Some(true); 8]);
}

/// Section 2.3.3: shared checks (pattern 1) and per-test-case checks (pattern 2), both as the
/// test case's own `checks` and as `checks[i]` lists.
#[test]
fn section_2_3_3_shared_and_per_test_case_checks() {
    let shared = check(
        "exact_match",
        json!({"actual": "$.output.value", "expected": "$.test_case.expected"}),
    );
    let (document, _) = evaluate(&json!({
        "test_cases": [
            {"id": "test_001", "input": "What is the capital of France?", "expected": "Paris"},
            {"id": "test_002", "input": "What is 2 + 2?", "expected": "4"}
        ],
        "outputs": [{"value": "Paris"}, {"value": "5"}],
        "checks": [shared]
    }));
    let outcomes: Vec<&Value> = document["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| &result["check_results"][0]["results"]["passed"])
        .collect();
    assert_eq!(outcomes, [&json!(true), &json!(false)]);

    let fibonacci = check(
        "regex",
        json!({"text": "$.output.value", "pattern": "^def fibonacci\\(n\\):"}),
    );
    let palindrome = check(
        "regex",
        json!({"text": "$.output.value", "pattern": "^def is_palindrome\\(s\\):"}),
    );
    let test_cases = json!([
        {"id": "test_001", "input": "Write a Python function that returns the nth Fibonacci number.", "checks": [fibonacci]},
        {"id": "test_002", "input": "Write a Python function that checks if a string is a palindrome.", "checks": [palindrome]}
    ]);
    let outputs = json!([
        {"value": "def fibonacci(n):\n    return n"},
        {"value": "def reverse(s):\n    return s[::-1]"}
    ]);
    // The example leaves `checks` out; the EvaluationRequest schema requires it (see
    // docs/serve.md), and it may be empty when every test case carries its own.
    let (inline, _) =
        evaluate(&json!({"test_cases": test_cases, "outputs": outputs, "checks": []}));
    let mut bare_cases = test_cases.clone();
    for case in bare_cases.as_array_mut().unwrap() {
        case.as_object_mut().unwrap().remove("checks");
    }
    let (lists, _) = evaluate(&json!({
        "test_cases": bare_cases, "outputs": outputs, "checks": [[fibonacci], [palindrome]]
    }));
    for document in [inline, lists] {
        let passed: Vec<&Value> = document["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|result| &result["check_results"][0]["results"]["passed"])
            .collect();
        assert_eq!(passed, [&json!(true), &json!(false)]);
        assert_eq!(document["summary"]["total_checks"], 2);
    }
}

/// Shared checks run first, then the test case's own.
#[test]
fn shared_and_own_checks_combine() {
    let (document, _) = evaluate(&json!({
        "test_cases": [{"id": "a", "input": "q", "checks": [check("regex", json!({"text": "$.output.value", "pattern": "b"}))]}],
        "outputs": [{"value": "ab"}],
        "checks": [check("regex", json!({"text": "$.output.value", "pattern": "a"}))]
    }));
    let results = document["results"][0]["check_results"].as_array().unwrap();
    let patterns: Vec<&Value> = results
        .iter()
        .map(|result| &result["resolved_arguments"]["pattern"]["value"])
        .collect();
    assert_eq!(patterns, [&json!("a"), &json!("b")]);
}

/// Section 4.1 status precedence and 4.2 run summary: a test case with an errored check is
/// `error` whatever its other checks did; without checks it is `completed`; the run is `error`
/// when any test case is, and exits 1.
#[test]
fn sections_4_1_and_4_2_status_precedence_and_summary() {
    let ok = check(
        "exact_match",
        json!({"actual": "$.output.value", "expected": "x"}),
    );
    let broken = check(
        "exact_match",
        json!({"actual": "$.output.missing", "expected": "x"}),
    );
    let (document, code) = evaluate(&json!({
        "test_cases": [{"id": "1", "input": "q"}, {"id": "2", "input": "q"}, {"id": "3", "input": "q"}],
        "outputs": [{"value": "x"}, {"value": "y"}, {"value": "x"}],
        "checks": [[ok.clone()], [ok, broken], []]
    }));
    assert_eq!(code, 1);
    let statuses: Vec<&Value> = document["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| &result["status"])
        .collect();
    assert_eq!(
        statuses,
        [&json!("completed"), &json!("error"), &json!("completed")]
    );
    assert_eq!(
        document["results"][1]["summary"],
        json!({"total_checks": 2, "completed_checks": 1, "error_checks": 1, "skipped_checks": 0})
    );
    assert_eq!(document["status"], "error");
    assert_eq!(
        document["summary"],
        json!({"total_test_cases": 3, "completed_test_cases": 2, "error_test_cases": 1,
               "skipped_test_cases": 0, "total_checks": 3, "completed_checks": 2,
               "error_checks": 1, "skipped_checks": 0})
    );
    assert!(document.get("experiment").is_none());
}

/// Failing checks are not errors: the run completes and exits 0.
#[test]
fn failed_checks_still_complete() {
    let (document, code) = evaluate(&json!({
        "test_cases": [{"id": "1", "input": {"question": "q"}}],
        "outputs": [{"value": "no", "id": "out-1", "metadata": {"ms": 3}}],
        "checks": [check("exact_match", json!({"actual": "$.output.value", "expected": "yes"}))]
    }));
    assert_eq!(code, 0);
    assert_eq!(document["status"], "completed");
    assert_eq!(
        document["results"][0]["check_results"][0]["results"]["passed"],
        false
    );
}
