//! `evalctl fep evaluate` on the worker pool: runs of many batches keep the input order, count
//! every test case once, and report problems of later batches in input order, in both modes.

mod common;
mod fep_support;

use std::fs;

use common::evalctl;
use fep_support::{bad_input_report, check, evaluate};
use serde_json::{json, Value};

/// More test cases than several batches hold, so the workers finish them out of order.
const CASES: usize = 2_000;

fn test_case(index: usize) -> Value {
    json!({"id": format!("case-{index}"), "input": "q", "expected": format!("{}", index % 7)})
}

fn output(index: usize) -> Value {
    // Every third answer is wrong.
    json!({"value": format!("{}", if index % 3 == 0 { 99 } else { index % 7 })})
}

fn shared_checks() -> Vec<Value> {
    vec![check(
        "exact_match",
        json!({"actual": "$.output.value", "expected": "$.test_case.expected"}),
    )]
}

/// The ids and `passed` of every test case of a result, in order.
fn ids_and_verdicts(document: &Value) -> Vec<(String, bool)> {
    document["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|result| {
            (
                result["execution_context"]["test_case"]["id"]
                    .as_str()
                    .expect("id")
                    .to_string(),
                result["check_results"][0]["results"]["passed"]
                    .as_bool()
                    .expect("passed"),
            )
        })
        .collect()
}

fn expected() -> Vec<(String, bool)> {
    (0..CASES)
        .map(|index| (format!("case-{index}"), index % 3 != 0))
        .collect()
}

#[test]
fn a_large_request_keeps_its_order_and_counts() {
    let request = json!({
        "test_cases": (0..CASES).map(test_case).collect::<Vec<_>>(),
        "outputs": (0..CASES).map(output).collect::<Vec<_>>(),
        "checks": shared_checks(),
    });
    let (document, code) = evaluate(&request);
    assert_eq!(code, 0);
    assert_eq!(ids_and_verdicts(&document), expected());
    assert_eq!(document["summary"]["total_test_cases"], CASES);
    assert_eq!(document["summary"]["total_checks"], CASES);
    assert_eq!(document["summary"]["completed_checks"], CASES);
}

#[test]
fn a_large_stream_keeps_its_order_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let lines = |make: fn(usize) -> Value| -> String {
        (0..CASES)
            .map(|index| format!("{}\n", make(index)))
            .collect()
    };
    fs::write(dir.path().join("cases.jsonl"), lines(test_case)).unwrap();
    fs::write(dir.path().join("outputs.jsonl"), lines(output)).unwrap();
    fs::write(
        dir.path().join("checks.json"),
        json!({"checks": shared_checks()}).to_string(),
    )
    .unwrap();
    let run = evalctl()
        .current_dir(dir.path())
        .args(["fep", "evaluate", "--test-cases", "cases.jsonl"])
        .args(["--outputs", "outputs.jsonl", "--checks", "checks.json"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0));
    let document: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(ids_and_verdicts(&document), expected());
    assert_eq!(document["summary"]["total_test_cases"], CASES);
}

#[test]
fn problems_in_later_batches_are_reported_in_input_order() {
    let dir = tempfile::tempdir().unwrap();
    let cases: String = (0..CASES)
        .map(|index| match index {
            1_500 => "{\"input\": \"q\"}\n".to_string(),
            700 => "not json\n".to_string(),
            _ => format!("{}\n", test_case(index)),
        })
        .collect();
    let outputs: String = (0..CASES)
        .map(|index| match index {
            1_200 => "{\"id\": \"x\"}\n".to_string(),
            _ => format!("{}\n", output(index)),
        })
        .collect();
    fs::write(dir.path().join("cases.jsonl"), cases).unwrap();
    fs::write(dir.path().join("outputs.jsonl"), outputs).unwrap();
    fs::write(
        dir.path().join("checks.json"),
        json!({"checks": shared_checks()}).to_string(),
    )
    .unwrap();
    let run = evalctl()
        .current_dir(dir.path())
        .args(["fep", "evaluate", "--test-cases", "cases.jsonl"])
        .args(["--outputs", "outputs.jsonl", "--checks", "checks.json"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    let (document, stderr) = bad_input_report(&[
        "cases.jsonl:701: invalid JSON: expected ident at column 2",
        "outputs.jsonl:1201: missing required key `value`",
        "cases.jsonl:1501: missing required key `id`",
    ]);
    assert_eq!(
        serde_json::from_slice::<Value>(&run.stdout).unwrap(),
        document
    );
    assert_eq!(String::from_utf8(run.stderr).unwrap(), stderr);
}
