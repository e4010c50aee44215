//! One wording for strict JSON through the real binary: an unknown key, a missing required key and
//! a wrong type read the same in a tasks file, a checks file, an FEP request, a rubric, a
//! candidates file and a task outputs file, each located at its line and JSON location; a JSONL
//! file given where one document is expected is named as such.

use std::path::Path;

use crate::common::evalctl;

fn write(dir: &Path, name: &str, lines: &[&str]) {
    std::fs::write(dir.join(name), lines.join("\n") + "\n").unwrap();
}

/// Run `args` in `dir` with text output: exit 2, nothing on stdout, exactly `stderr`.
fn rejects(dir: &Path, args: &[&str], stderr: &str) {
    evalctl()
        .current_dir(dir)
        .args(["--format", "text"])
        .args(args)
        .assert()
        .code(2)
        .stdout("")
        .stderr(stderr.to_string());
}

#[test]
fn checks_files_and_fep_requests_share_the_wording() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "checks.json",
        &[
            r#"{"checks": [{"type": "exact_match", "argument": {}, "version": 1}, {"type": 1, "arguments": []}], "extra": 1}"#,
        ],
    );
    write(dir, "cases.jsonl", &[r#"{"id": "a", "input": "q"}"#]);
    write(dir, "outputs.jsonl", &[r#"{"value": "x"}"#]);
    rejects(
        dir,
        &[
            "fep",
            "evaluate",
            "--test-cases",
            "cases.jsonl",
            "--outputs",
            "outputs.jsonl",
            "--checks",
            "checks.json",
        ],
        "error: checks.json: extra: unknown key `extra` (expected one of checks, custom_checks)\n\
         error: checks.json: checks[0]: missing required key `arguments`\n\
         error: checks.json: checks[0].version: expected a semantic version string, found number\n\
         error: checks.json: checks[1].type: expected a string, found number\n\
         error: checks.json: checks[1].arguments: expected an object, found array\n",
    );
    write(
        dir,
        "request.json",
        &[
            r#"{"test_cases": [{"input": "q", "expected": [1]}], "outputs": {}, "checks": [], "extra": 1}"#,
        ],
    );
    rejects(
        dir,
        &["fep", "evaluate", "request.json"],
        "error: request.json: outputs: expected an array, found object\n\
         error: request.json: test_cases[0]: missing required key `id`\n\
         error: request.json: test_cases[0].expected: expected a string, an object or null, found array\n\
         error: request.json: checks: no checks to run: give `checks` (shared, or one list per test case) or per-test-case `checks`\n",
    );
}

#[test]
fn rubrics_and_candidates_share_the_wording() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "rubric.json",
        &[r#"{"quality_dimensions": [{"weight": 1, "extra": 2}], "hard_constraints": {}}"#],
    );
    let judge = ["run", "--judge-model", "ollama/llama3", "--objective", "x"];
    rejects(
        dir,
        &[&judge[..], &["--candidate", "c", "--rubric", "rubric.json"]].concat(),
        "error: rubric.json: quality_dimensions[0].extra: unknown key `extra` (expected one of name, weight, description)\n\
         error: rubric.json: quality_dimensions[0]: missing required key `name`\n\
         error: rubric.json: hard_constraints: expected an array, found object\n",
    );
    write(
        dir,
        "cands.jsonl",
        &[r#"{"id": "a"}"#, r#"{"candidate": 3}"#],
    );
    rejects(
        dir,
        &[&judge[..], &["--candidates", "cands.jsonl"]].concat(),
        "error: cands.jsonl:1: missing required key `candidate`\n\
         error: cands.jsonl:2: candidate: expected a string, found number\n",
    );
}

#[test]
fn tasks_and_task_outputs_share_the_wording() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(
        dir,
        "bad.jsonl",
        &[
            r#"{"task_id": "t1", "category": "arithmetic", "prompt": "1+1", "targets": "2", "metric_name": "exact_match", "extra": 1}"#,
        ],
    );
    evalctl()
        .current_dir(dir)
        .args(["tasks", "validate", "--format", "text", "bad.jsonl"])
        .assert()
        .code(2)
        .stdout(
            "bad.jsonl:1: task t1, field extra: unknown_field: unknown key `extra` (expected one of \
             task_id, category, prompt, targets, metric_name, post_process, few_shot_examples, metadata)\n\
             bad.jsonl:1: task t1, field post_process: missing_field: missing required key `post_process`\n\
             bad.jsonl:1: task t1, field targets: bad_targets: expected a non-empty array of strings, found string\n",
        );
    write(
        dir,
        "good.jsonl",
        &[
            r#"{"task_id": "t1", "category": "arithmetic", "prompt": "1+1", "targets": ["2"], "metric_name": "exact_match", "post_process": "none"}"#,
        ],
    );
    write(
        dir,
        "outputs.jsonl",
        &[r#"{"output": "2"}"#, r#"{"task_id": 1, "output": "2"}"#],
    );
    rejects(
        dir,
        &["tasks", "score", "good.jsonl", "--outputs", "outputs.jsonl"],
        "error: outputs.jsonl:1: missing required key `task_id`\n\
         error: outputs.jsonl:2: task_id: expected a string, found number\n",
    );
}

#[test]
fn a_byte_that_is_not_utf8_in_a_json_document_is_said_so_where_it_stands() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("checks.json"),
        b"{\"checks\": [{\"type\": \"contains\",\n  \"arguments\": {\"text\": \"$.output.value\", \"phrases\": [\"\xff\"]}}]}",
    )
    .unwrap();
    rejects(
        dir.path(),
        &["run", "--checks", "checks.json", "--candidate", "x"],
        "error: checks.json: invalid UTF-8 (bad byte at line 2, column 56)\n",
    );
    // A syntax error before it is the one said.
    std::fs::write(
        dir.path().join("request.json"),
        b"{\"test_cases\": [}\n\"\xff\"",
    )
    .unwrap();
    rejects(
        dir.path(),
        &["fep", "evaluate", "request.json"],
        "error: request.json: invalid JSON: expected value at line 1, column 17\n",
    );
}

#[test]
fn a_jsonl_file_given_for_one_document_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    // A stray brace after the document is not a second document.
    write(
        dir.path(),
        "brace.json",
        &["{", "  \"checks\": []", "}", "}"],
    );
    rejects(
        dir.path(),
        &["run", "--checks", "brace.json", "--candidate", "x"],
        "error: brace.json: invalid JSON: trailing characters at line 4, column 1\n",
    );
    write(dir.path(), "d.jsonl", &["{\"q\": 1}", "{\"q\": 2}"]);
    rejects(
        dir.path(),
        &["run", "--checks", "d.jsonl", "--candidate", "x"],
        "error: d.jsonl: invalid JSON: trailing characters at line 2, column 1 (a JSON value on \
         each line, as in a JSONL file: this takes one JSON document)\n",
    );
    rejects(
        dir.path(),
        &["spec", "validate", "d.jsonl"],
        "error: d.jsonl:2: manifest could not be decoded: trailing characters (a JSON value on \
         each line, as in a JSONL file: a spec is one JSON or YAML document)\n",
    );
    // A syntax error before the first key is the manifest's, not a placeholder's.
    write(dir.path(), "syn.yaml", &["name: x", "  version_number: 1"]);
    rejects(
        dir.path(),
        &["spec", "validate", "syn.yaml"],
        "error: syn.yaml:2: manifest could not be decoded: mapping values are not allowed in \
         this context\n",
    );
    write(dir.path(), "syn.json", &["{\"name\": \"x\",}"]);
    rejects(
        dir.path(),
        &["spec", "validate", "syn.json"],
        "error: syn.json:1: manifest could not be decoded: trailing comma\n",
    );
}
