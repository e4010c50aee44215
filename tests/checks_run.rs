//! `evalctl run --checks FILE.json`: built-in checks as the evaluator of a run.

use std::fs;
use std::path::Path;

use crate::common::evalctl;
use predicates::prelude::*;
use serde_json::{json, Value};

fn write(dir: &Path, name: &str, text: &str) {
    fs::write(dir.join(name), text).unwrap();
}

fn records(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "data.jsonl",
        "{\"input\": \"capital of France\", \"expected\": \"Paris\"}\n\n{\"id\": \"it\", \"input\": \"capital of Italy\", \"expected\": \"Rome\"}\n{\"input\": \"capital of Spain\", \"expected\": \"Madrid\", \"meta\": {}}\n",
    );
    write(
        dir.path(),
        "checks.json",
        &json!({"checks": [
            {"type": "contains", "arguments": {"text": "$.output.value", "phrases": ["capital"]}},
            {"type": "regex", "arguments": {"text": "$.output.value", "pattern": "$.test_case.expected"}},
            {"type": "exact_match", "arguments": {"actual": "$.test_case.id", "expected": "it", "negate": true}},
            {"type": "regex", "arguments": {"text": "$.test_case.meta", "pattern": "\\{\\}"}}
        ]})
        .to_string(),
    );
    dir
}

#[test]
fn each_call_scores_the_fraction_of_checks_passed() {
    let dir = setup();
    evalctl()
        .current_dir(dir.path())
        .args([
            "run",
            "--dataset",
            "data.jsonl",
            "--checks",
            "checks.json",
            "--candidate",
            "Paris and Rome are each a capital",
            "--output",
            "out.jsonl",
            "--format",
            "json",
            "-j",
            "1",
        ])
        .assert()
        .code(0);
    let lines = records(&dir.path().join("out.jsonl"));
    assert_eq!(lines.len(), 3);
    let scores: Vec<f64> = lines
        .iter()
        .map(|line| line["score"].as_f64().unwrap())
        .collect();
    // line 1: contains, regex Paris, id line-1 != it; meta missing -> jsonpath error.
    // line 3 (id it): contains, regex Rome; negated match fails; meta missing.
    // line 4: contains; regex Madrid fails; id line-4; meta {} matches.
    assert_eq!(scores, [0.75, 0.5, 0.75]);
    let first = &lines[0]["side_info"];
    assert_eq!(first["failed_checks"], json!(["regex#2"]));
    assert_eq!(first["errored_checks"], json!(["regex#2"]));
    assert_eq!(first["check_results"][3]["error"]["type"], "jsonpath_error");
    assert_eq!(
        first["check_results"][2]["resolved_arguments"]["actual"]["value"],
        "line-1"
    );
    assert_eq!(
        lines[1]["side_info"]["failed_checks"],
        json!(["exact_match", "regex#2"])
    );
    assert_eq!(
        lines[2]["side_info"]["check_results"][2]["resolved_arguments"]["actual"]["value"],
        "line-4"
    );
    assert_eq!(lines[2]["side_info"]["failed_checks"], json!(["regex#1"]));
    // The report layer reads `errored_checks` of every call: always there, an array of names.
    assert_eq!(lines[1]["side_info"]["errored_checks"], json!(["regex#2"]));
    assert_eq!(lines[2]["side_info"]["errored_checks"], json!([]));
    assert!(lines
        .iter()
        .all(|line| line["error"].is_null() && line["attempts"] == 1));
}

#[test]
fn without_a_dataset_the_test_case_is_single() {
    let dir = setup();
    write(
        dir.path(),
        "single.json",
        r#"{"checks": [{"type": "exact_match", "arguments": {"actual": "$.test_case.id", "expected": "single"}},
                       {"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "ok"}}]}"#,
    );
    let output = evalctl()
        .current_dir(dir.path())
        .args([
            "run",
            "--checks",
            "single.json",
            "--candidate",
            "ok",
            "--candidate",
            "no",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        summary["evaluator"],
        json!({"kind": "checks", "target": "single.json"})
    );
    let scores: Vec<&Value> = summary["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["score"])
        .collect();
    assert_eq!(scores, [&json!(1.0), &json!(0.5)]);
}

#[test]
fn a_bad_checks_file_is_reported_before_anything_runs() {
    let dir = setup();
    write(
        dir.path(),
        "bad.json",
        r#"{"checks": [{"type": "exact_match", "arguments": {"actual": "$.output.value"}},
                       {"type": "regex", "arguments": {"text": "$.output.value", "pattern": "(", "flags": {"i": 1}}},
                       {"type": "fuzzy", "arguments": {}},
                       {"type": "regex", "arguments": {"text": "$.output.value", "pattern": "[", "flags": "$.test_case.flags"}},
                       {"type": "contains", "version": "2", "arguments": {"text": "x", "phrases": []}}]}"#,
    );
    evalctl()
        .current_dir(dir.path())
        .args(["run", "--format", "text", "--dataset", "data.jsonl", "--checks", "bad.json", "--candidate", "x", "--output", "out.jsonl"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: bad.json:1: checks[0].arguments: missing required key `expected`\n\
             error: bad.json:2: checks[1].arguments.pattern: not a valid regular expression: regex parse error: ⏎     ( ⏎     ^ ⏎ error: unclosed group\n\
             error: bad.json:3: checks[2].type: unknown check type `fuzzy` (did you mean `spec.fuzzy_match`? known: exact_match, contains, regex, threshold, semantic_similarity, llm_judge; spec.TYPE runs an evaluation-spec validator; a custom type is declared in `custom_checks` or with --custom-check)\n\
             error: bad.json:4: checks[3].arguments.pattern: not a valid regular expression: regex parse error: ⏎     [ ⏎     ^ ⏎ error: unclosed character class\n\
             error: bad.json:5: checks[4].version: `2` is not a semantic version (MAJOR.MINOR.PATCH)\n\
             error: bad.json:5: checks[4].arguments.phrases: must hold at least one phrase\n",
        );
    assert!(!dir.path().join("out.jsonl").exists());
    for (text, expected) in [
        ("{\"checks\": []}", "error: empty.json: checks: no checks"),
        (
            "[]",
            "error: empty.json: expected an object {\"checks\": [...]}, found array",
        ),
        ("{\"checks\": [", "error: empty.json: invalid JSON"),
        (
            "",
            "error: empty.json: the file is empty (expected {\"checks\": [...]})\n",
        ),
        (
            " \n\t\n",
            "error: empty.json: the file is empty (expected {\"checks\": [...]})\n",
        ),
    ] {
        write(dir.path(), "empty.json", text);
        evalctl()
            .current_dir(dir.path())
            .args(["run", "--checks", "empty.json", "--candidate", "x"])
            .assert()
            .code(2)
            .stderr(predicate::str::starts_with(expected));
    }
}

#[test]
fn the_shipped_capitals_fixture_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = evalctl()
        .current_dir(root)
        .args([
            "run",
            "--dataset",
            "fixtures/train.jsonl",
            "--valset",
            "fixtures/val.jsonl",
            "--checks",
            "fixtures/checks/capitals.json",
            "fixtures/prompt.txt",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    let candidate = &summary["candidates"][0];
    assert_eq!(candidate["train"]["n"], 3);
    assert_eq!(candidate["val"]["n"], 2);
    assert_eq!(candidate["score"], 0.75);
}

#[test]
fn every_problem_of_a_checks_file_is_listed_without_a_cap() {
    let dir = setup();
    let checks: Vec<Value> = (0..60)
        .map(|_| json!({"type": "fuzzy", "arguments": {}}))
        .collect();
    write(
        dir.path(),
        "many.json",
        &json!({ "checks": checks }).to_string(),
    );
    let output = evalctl()
        .current_dir(dir.path())
        .args(["run", "--checks", "many.json", "--candidate", "x"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 60, "{stderr}");
    assert!(lines[59].starts_with("error: many.json: checks[59].type: unknown check type `fuzzy`"));
}
