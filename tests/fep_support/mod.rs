//! Helpers shared by the FEP and checks integration tests: run the real binary on a request
//! given on stdin and read back the EvaluationRunResult. A test crate using it also declares
//! `mod common;` (the binary comes from `common::evalctl`).

#![allow(dead_code)] // each test binary uses its own subset of these helpers

use serde_json::{json, Value};

use crate::common::evalctl;
use crate::serve_support::document::violations;

/// Run `evalctl fep evaluate -` on `request`; returns the parsed result and the exit code.
pub fn evaluate(request: &Value) -> (Value, i32) {
    let output = evalctl()
        .args(["fep", "evaluate", "-"])
        .write_stdin(request.to_string())
        .output()
        .expect("evalctl runs");
    let code = output.status.code().expect("exit code");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8 stdout");
    let document: Value = serde_json::from_str(&stdout).unwrap_or_else(|err| {
        panic!(
            "stdout is not one JSON document ({err}); exit {code}; stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    // A run is the EvaluationRunResult `serve` would answer: the FEP document's schemas take it.
    if document.get("evaluation_id").is_some() {
        let found = violations("POST", "/evaluate", 200, &document).unwrap_or_default();
        assert!(found.is_empty(), "{}\n{document:#}", found.join("\n"));
    }
    (document, code)
}

/// Run `checks` on one test case and output; returns the check results.
pub fn check_results(test_case: Value, output: Value, checks: Vec<Value>) -> Vec<Value> {
    let (document, _) = evaluate(&json!({
        "test_cases": [test_case],
        "outputs": [output],
        "checks": checks,
    }));
    document["results"][0]["check_results"]
        .as_array()
        .expect("check_results")
        .clone()
}

/// `results.passed` of each check result (`None` for a check that did not complete).
pub fn passed(results: &[Value]) -> Vec<Option<bool>> {
    results
        .iter()
        .map(|result| result["results"]["passed"].as_bool())
        .collect()
}

/// A check object.
pub fn check(kind: &str, arguments: Value) -> Value {
    json!({"type": kind, "arguments": arguments})
}

/// The `error` of a check result as (type, message).
pub fn error_of(result: &Value) -> (String, String) {
    assert_eq!(result["status"], "error", "{result}");
    (
        result["error"]["type"]
            .as_str()
            .expect("error.type")
            .to_string(),
        result["error"]["message"]
            .as_str()
            .expect("error.message")
            .to_string(),
    )
}

/// What a command reports when it stops on bad input (exit 2) with `errors`: the JSON failure
/// document printed on stdout with JSON output, and the `error: ` lines printed on stderr.
pub fn bad_input_report(errors: &[&str]) -> (Value, String) {
    let document = json!({"ok": false, "exit": 2, "errors": errors});
    let stderr = errors
        .iter()
        .map(|error| format!("error: {error}\n"))
        .collect();
    (document, stderr)
}
