//! Conformance cases through the real binary: a case's spec and run written to files and scored
//! with `evalctl spec score`, a case's spec document checked with `evalctl spec validate`. A test
//! crate using it also declares `mod common;`.

#![allow(dead_code)] // each conformance crate uses its own part of this module

use std::path::Path;

use serde_json::{json, Value};

use crate::common::evalctl;

/// The conformance cases taken from the reference's own tests
/// (`tests/fixtures/conformance/agentclash-cases.json`).
pub fn conformance_cases() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/conformance/agentclash-cases.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    serde_json::from_str(&text).expect("the case file is a JSON array")
}

/// The run record of a run-mode case input: its `challenge_inputs`, `events`,
/// `llm_judge_results` and `human_preference_score` (absent ones left out).
pub fn run_line(input: &Value) -> String {
    let mut run = serde_json::Map::new();
    for key in [
        "challenge_inputs",
        "events",
        "llm_judge_results",
        "human_preference_score",
    ] {
        if !input[key].is_null() {
            run.insert(key.to_string(), input[key].clone());
        }
    }
    Value::Object(run).to_string()
}

/// `evalctl spec score` on `spec` (a bare spec) and one run: the evaluation record it wrote to
/// `--output`, or why there is none.
pub fn score(spec: &Value, run_line: &str) -> Result<Value, String> {
    let dir = tempfile::tempdir().map_err(|err| err.to_string())?;
    std::fs::write(dir.path().join("spec.json"), spec.to_string()).map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("runs.jsonl"), format!("{run_line}\n"))
        .map_err(|e| e.to_string())?;
    let out = evalctl()
        .current_dir(dir.path())
        .args([
            "spec",
            "score",
            "spec.json",
            "runs.jsonl",
            "--output",
            "out.jsonl",
        ])
        .args(["--format", "json"])
        .output()
        .map_err(|err| err.to_string())?;
    match out.status.code() {
        Some(0 | 1) => {}
        other => {
            return Err(format!(
                "spec score exited {other:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }
    let written = std::fs::read_to_string(dir.path().join("out.jsonl"))
        .map_err(|err| format!("no --output: {err}"))?;
    let mut lines = written.lines();
    let record = lines.next().ok_or("--output is empty")?;
    if lines.next().is_some() {
        return Err("more than one record for one run".into());
    }
    serde_json::from_str(record).map_err(|err| err.to_string())
}

/// What `evalctl spec validate` says of `document` (a manifest or a bare spec, written as JSON):
/// the problems it reported (empty when valid), and the normalised spec of `--print` when valid.
pub fn validate(document: &Value) -> (Vec<String>, Option<Value>) {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::write(dir.path().join("case.json"), document.to_string()).expect("write the case");
    let run = |extra: &[&str]| {
        evalctl()
            .current_dir(dir.path())
            .args(["spec", "validate", "case.json", "--format", "json"])
            .args(extra)
            .output()
            .expect("evalctl runs")
    };
    let out = run(&[]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|err| {
        json!({"errors": [format!("stdout is not JSON ({err}): {}", String::from_utf8_lossy(&out.stdout))]})
    });
    match out.status.code() {
        Some(0) => {
            let printed = run(&["--print"]);
            (Vec::new(), serde_json::from_slice(&printed.stdout).ok())
        }
        _ => {
            let errors = report["errors"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|error| error.as_str().map(str::to_string))
                .collect();
            (errors, None)
        }
    }
}
