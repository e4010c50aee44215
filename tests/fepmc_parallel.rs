//! `fep evaluate` on several workers: a run long enough to be split over the worker pool gives
//! byte for byte the output of a one-worker run (times and ids aside), and its problems in the
//! same order, in the request mode, the streaming JSONL mode and with `--stream`; a large request
//! (evaluated as it is parsed) gives the document of the JSONL mode.

use std::fs;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{json, Value};

use crate::common::evalctl;

/// Enough test cases for six batches of the pool.
const CASES: usize = 1_500;

/// The checks file of the streaming mode and the shared checks of the request.
fn shared_checks() -> Value {
    json!([
        {"type": "exact_match", "arguments": {"actual": "$.output.value.answer", "expected": "$.test_case.expected", "case_sensitive": false}},
        {"type": "contains", "arguments": {"text": "$.output.value.answer", "phrases": "$.test_case.metadata.phrases"}},
        {"type": "regex", "arguments": {"text": "$.output.value.answer", "pattern": "^[A-Z][a-z]+$"}},
        {"type": "threshold", "arguments": {"value": "$.output.value.confidence", "min_value": "$.test_case.metadata.min_confidence", "max_value": 1.0}}
    ])
}

/// Test case `i` and its output: some with their own checks, some whose paths match nothing
/// (error), strings with quotes, brackets and non-ASCII text (the request is split by a scan).
fn pair(i: usize) -> (Value, Value) {
    let city = [
        "Paris",
        "Rome",
        "Zürich",
        "Kraków",
        "a \"quoted\" ]}, city",
        "Oslo",
    ][i % 6];
    let mut test_case = json!({
        "id": format!("case-{i}"),
        "input": {"question": format!("capital {i}? [{{\\\"}}]")},
        "expected": city,
        "metadata": {"phrases": [city.chars().take(2).collect::<String>()], "min_confidence": 0.5, "nested": [[{"deep": [i]}]]}
    });
    if i.is_multiple_of(7) {
        test_case["checks"] = json!([{"type": "regex", "arguments": {"text": "$.test_case.id", "pattern": "-[0-9]*5$"}}]);
    }
    let mut output = json!({"value": {"answer": if i.is_multiple_of(3) { city.to_lowercase() } else { city.to_string() },
                                      "confidence": (i % 100) as f64 / 100.0}});
    if i.is_multiple_of(11) {
        output = json!({"value": {"answer": city}, "id": format!("out-{i}")});
    }
    (test_case, output)
}

fn write_inputs(dir: &Path, broken: bool) {
    let (cases, outputs): (Vec<Value>, Vec<Value>) = (0..CASES)
        .map(|i| {
            let (mut test_case, mut output) = pair(i);
            if broken && i % 500 == 499 {
                test_case.as_object_mut().unwrap().remove("id");
            }
            if broken && i % 700 == 1 {
                output = json!({"id": 3});
            }
            (test_case, output)
        })
        .unzip();
    let request = json!({"test_cases": cases, "outputs": outputs, "checks": shared_checks(),
                         "experiment_metadata": {"name": "parallel"}});
    fs::write(
        dir.join("request.json"),
        serde_json::to_string_pretty(&request).unwrap(),
    )
    .unwrap();
    let lines =
        |values: &[Value]| -> String { values.iter().map(|value| format!("{value}\n")).collect() };
    fs::write(dir.join("cases.jsonl"), lines(&cases)).unwrap();
    fs::write(dir.join("outputs.jsonl"), lines(&outputs)).unwrap();
    fs::write(
        dir.join("checks.json"),
        json!({"checks": shared_checks()}).to_string(),
    )
    .unwrap();
}

/// stdout (times and ids masked), stderr and the exit code of `fep evaluate ARGS` on `workers`.
fn run(dir: &Path, workers: usize, args: &[&str]) -> (String, String, Option<i32>) {
    static TIMES: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#""(evaluated_at|started_at|completed_at|evaluation_id)":"[^"]*"|"execution_time_ms":[0-9.e-]+"#).unwrap()
    });
    let output = evalctl()
        .current_dir(dir)
        .env("EVALCTL_INTERNAL_FEP_WORKERS", workers.to_string())
        .args(["fep", "evaluate"])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    (
        TIMES.replace_all(&stdout, "<time>").into_owned(),
        String::from_utf8(output.stderr).unwrap(),
        output.status.code(),
    )
}

const MODES: [&[&str]; 4] = [
    &["request.json"],
    &["--stream", "request.json"],
    &[
        "--test-cases",
        "cases.jsonl",
        "--outputs",
        "outputs.jsonl",
        "--checks",
        "checks.json",
    ],
    &[
        "--stream",
        "--test-cases",
        "cases.jsonl",
        "--outputs",
        "outputs.jsonl",
        "--checks",
        "checks.json",
    ],
];

#[test]
fn several_workers_write_what_one_worker_writes() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path(), false);
    let mut documents = Vec::new();
    for args in MODES {
        let one = run(dir.path(), 1, args);
        assert_eq!(one.2, Some(1), "{args:?}: {}", one.1);
        assert_eq!(one.0.matches("\"test_case\":").count(), CASES, "{args:?}");
        let three = run(dir.path(), 3, args);
        assert!(one == three, "{args:?}: the outputs differ");
        documents.push(one.0);
    }
    // A large request is evaluated as it is parsed; the JSONL mode reads the same test cases.
    let request = documents[0].replace("\"experiment\":{\"name\":\"parallel\"},", "");
    assert!(
        request == documents[2],
        "the request and JSONL modes differ"
    );
}

#[test]
fn several_workers_report_the_problems_in_input_order() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path(), true);
    for mode in [MODES[0], MODES[2]] {
        let args = &[&["--format", "text"], mode].concat();
        let one = run(dir.path(), 1, args);
        assert_eq!(one.2, Some(2), "{args:?}");
        assert_eq!(one.0, "", "{args:?}");
        assert_eq!(
            one.1.lines().count(),
            CASES / 500 + 2 * (CASES / 700 + 1),
            "{}",
            one.1
        );
        assert_eq!(one, run(dir.path(), 3, args), "{args:?}");
    }
}
