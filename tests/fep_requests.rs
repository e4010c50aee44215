//! `evalctl fep evaluate`: request-level validation (every problem, located, exit 2, nothing
//! evaluated) and the streaming JSONL mode.

use std::fs;

use crate::common::evalctl;
use crate::fep_support::{bad_input_report, check, evaluate};
use predicates::prelude::*;
use serde_json::{json, Value};

#[test]
fn every_request_problem_is_reported_at_once_and_nothing_runs() {
    let request = json!({
        "test_cases": [
            {"id": "a", "input": "q"},
            {"input": "q"},
            {"id": 7, "input": 1, "checks": [{"type": "similarity", "arguments": {}}]}
        ],
        "outputs": [{"value": "x"}, {"id": "o"}],
        "checks": [{"type": "exact_match"}, {"type": "regex", "arguments": {"text": "a", "pattern": "("}}]
    });
    let errors = [
        "<stdin>: outputs: 2 outputs for 3 test cases (outputs[i] belongs to test_cases[i])",
        "<stdin>: test_cases[1]: missing required key `id`",
        "<stdin>: test_cases[2].id: expected a string, found number",
        "<stdin>: test_cases[2].input: expected a string or an object, found number",
        "<stdin>: test_cases[2].checks[0].type: unknown check type `similarity` (known: exact_match, contains, regex, threshold, semantic_similarity, llm_judge; spec.TYPE runs an evaluation-spec validator; a custom type is declared in `custom_checks` or with --custom-check)",
        "<stdin>: outputs[1]: missing required key `value`",
        "<stdin>: checks[0]: missing required key `arguments`",
    ];
    let (document, stderr) = bad_input_report(&errors);
    // On a pipe the output is JSON: the failure document on stdout, the same lines on stderr.
    let assert = evalctl()
        .args(["fep", "evaluate", "-"])
        .write_stdin(request.to_string())
        .assert()
        .code(2)
        .stderr(stderr.clone());
    let printed: Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert_eq!(printed, document);
    evalctl()
        .args(["fep", "evaluate", "--format", "text", "-"])
        .write_stdin(request.to_string())
        .assert()
        .code(2)
        .stdout("")
        .stderr(stderr);
}

#[test]
fn bad_json_and_unreadable_files_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("request.json");
    fs::write(&path, "{\"test_cases\": [").unwrap();
    evalctl()
        .args(["fep", "evaluate"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(format!(
            "error: {}: invalid JSON:",
            path.display()
        )));
    evalctl()
        .args(["fep", "evaluate", "/nonexistent/request.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "error: /nonexistent/request.json: cannot read",
        ));
}

#[test]
fn a_key_given_twice_anywhere_in_a_request_is_refused_where_it_comes_again() {
    // Read whole, or split and parsed in batches on the workers (more than 256 test cases): the
    // same refusal, at the same place.
    let case = r#"{"id": "a", "input": "q"}"#;
    let output = r#"{"value": "x"}"#;
    let checks = r#""checks": [{"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "x"}}]"#;
    let request = |cases: usize, last_case: &str, tail: &str| {
        let mut test_cases = vec![case; cases - 1];
        test_cases.push(last_case);
        format!(
            "{{\"test_cases\": [{}],\n\"outputs\": [{}],\n{checks}{tail}}}",
            test_cases.join(", "),
            vec![output; cases].join(", ")
        )
    };
    let refused = |text: String| {
        let out = evalctl()
            .args(["fep", "evaluate", "--format", "text", "-"])
            .write_stdin(text)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let twice = r#"{"id": "a", "input": "q", "expected": "x", "expected": "y"}"#;
    for cases in [1, 300] {
        let column = (cases - 1) * (case.len() + 2) + 69;
        assert_eq!(
            refused(request(cases, twice, "")),
            (
                Some(2),
                String::new(),
                format!(
                    "error: <stdin>: the key `expected` is given twice in one object (the second at \
                     line 1, column {column}): keep one\n"
                )
            ),
            "{cases} test cases"
        );
    }
    assert_eq!(
        refused(request(300, case, &format!(",\n{checks}"))),
        (
            Some(2),
            String::new(),
            "error: <stdin>: the key `checks` is given twice in one object (the second at line 4, \
             column 8): keep one\n"
                .to_string()
        )
    );
}

#[test]
fn an_empty_request_is_a_completed_run() {
    let (document, code) = evaluate(&json!({"test_cases": [], "outputs": [], "checks": []}));
    assert_eq!(code, 0);
    assert_eq!(document["results"], json!([]));
    assert_eq!(document["summary"]["total_test_cases"], 0);
    assert_eq!(document["status"], "completed");
}

/// `fep evaluate --format text` on `request` (stdin): its exit code and stdout's lines after the
/// first (which names the run's id), the first line checked for `status`.
fn text_summary(request: &Value, status: &str) -> (Option<i32>, Vec<String>) {
    let output = evalctl()
        .args(["fep", "evaluate", "--format", "text", "-"])
        .env("NO_COLOR", "1")
        .write_stdin(request.to_string())
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let mut lines = text.lines().map(str::to_string);
    let first = lines.next().unwrap_or_default();
    assert!(
        first.starts_with("evaluation ") && first.ends_with(&format!("   status: {status}")),
        "{first}"
    );
    (output.status.code(), lines.collect())
}

#[test]
fn the_text_summary_counts_every_test_case_whatever_path_wrote_it() {
    // More test cases than one batch (the large-request path), with `experiment_metadata` (the
    // document's `experiment`, among its opening members); a small request (the general path);
    // an empty one.
    let request = |n: usize| {
        json!({
            "experiment_metadata": {"name": "capitals", "tags": ["a", "b"], "notes": "line\nbreak"},
            "test_cases": (0..n).map(|i| json!({"id": format!("t{i}"), "input": "q", "expected": "Paris"})).collect::<Vec<_>>(),
            "outputs": (0..n).map(|i| json!({"value": if i % 3 == 0 { "Lyon" } else { "Paris" }})).collect::<Vec<_>>(),
            "checks": [{"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "$.test_case.expected"}}]
        })
    };
    let table = |passed: usize, failed: usize| {
        format!("exact_match  {passed:<6}  {failed:<6}  0       0       0")
    };
    let (code, lines) = text_summary(&request(600), "completed");
    assert_eq!(code, Some(0));
    let mut expected = vec![
        "test cases: 600   checks: 400 passed, 200 failed, 0 errors".to_string(),
        String::new(),
        "check type   passed  failed  scored  errors  skipped".to_string(),
        table(400, 200),
        String::new(),
        "not passed (200):".to_string(),
    ];
    expected.extend((0..20).map(|i| format!("  t{}: exact_match failed", i * 3)));
    expected.push("  … and 180 more".to_string());
    assert_eq!(lines, expected);

    let (code, lines) = text_summary(&request(4), "completed");
    assert_eq!(code, Some(0));
    assert_eq!(
        lines[0],
        "test cases: 4   checks: 2 passed, 2 failed, 0 errors"
    );
    assert_eq!(lines[3], table(2, 2));

    let (code, lines) = text_summary(&request(0), "completed");
    assert_eq!(code, Some(0));
    assert_eq!(
        lines[0],
        "test cases: 0   checks: 0 passed, 0 failed, 0 errors"
    );
}

#[test]
fn a_request_with_no_check_at_all_is_rejected() {
    // No shared check, or one empty list per test case.
    for checks in ["[]", "[[]]"] {
        evalctl()
            .args(["fep", "evaluate", "--format", "text", "-"])
            .write_stdin(format!(
                r#"{{"test_cases": [{{"id": "a", "input": "x"}}], "outputs": [{{"value": "x"}}],
                "checks": {checks}}}"#
            ))
            .assert()
            .code(2)
            .stdout("")
            .stderr(
                "error: <stdin>:2: checks: no checks to run: give `checks` (shared, or one list \
                 per test case) or per-test-case `checks`\n",
            );
    }
}

fn write_stream_inputs(dir: &std::path::Path) {
    fs::write(
        dir.join("cases.jsonl"),
        "{\"id\": \"a\", \"input\": \"q\", \"expected\": \"Paris\"}\n\n\
         {\"id\": \"b\", \"input\": \"q\", \"expected\": \"Rome\", \"checks\": [{\"type\": \"regex\", \"arguments\": {\"text\": \"$.output.value\", \"pattern\": \"^R\"}}]}\n",
    )
    .unwrap();
    fs::write(
        dir.join("outputs.jsonl"),
        "{\"value\": \"Paris\"}\n{\"value\": \"Roma\"}\n",
    )
    .unwrap();
    fs::write(
        dir.join("checks.json"),
        json!({"checks": [check("exact_match", json!({"actual": "$.output.value", "expected": "$.test_case.expected"}))]})
            .to_string(),
    )
    .unwrap();
}

fn without_times(mut document: Value) -> Value {
    for key in ["evaluation_id", "started_at", "completed_at"] {
        document.as_object_mut().unwrap().remove(key);
    }
    for result in document["results"].as_array_mut().unwrap() {
        for check in result["check_results"].as_array_mut().unwrap() {
            check.as_object_mut().unwrap().remove("evaluated_at");
            check["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("execution_time_ms");
        }
    }
    document
}

#[test]
fn streaming_mode_gives_the_request_modes_result() {
    let dir = tempfile::tempdir().unwrap();
    write_stream_inputs(dir.path());
    let output = evalctl()
        .current_dir(dir.path())
        .args([
            "fep",
            "evaluate",
            "--test-cases",
            "cases.jsonl",
            "--outputs",
            "outputs.jsonl",
            "--checks",
            "checks.json",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let streamed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let read = |name: &str| -> Vec<Value> {
        fs::read_to_string(dir.path().join(name))
            .unwrap()
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    };
    let checks: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("checks.json")).unwrap()).unwrap();
    let (requested, _) = evaluate(&json!({
        "test_cases": read("cases.jsonl"), "outputs": read("outputs.jsonl"), "checks": checks["checks"]
    }));
    assert_eq!(without_times(streamed.clone()), without_times(requested));
    assert_eq!(streamed["summary"]["total_checks"], 3);
    // One test case result per line inside `results`.
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text.lines().count(), 4, "{text}");
}

#[test]
fn streaming_problems_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    write_stream_inputs(dir.path());
    fs::write(
        dir.path().join("cases.jsonl"),
        "{\"input\": \"q\"}\n\n[1]\n\u{feff}{\"id\": \"c\", \"input\": \"q\"}\n{\"id\": \"d\", \"input\": \"q\", \"id\": \"e\"}\n",
    )
    .unwrap();
    evalctl()
        .current_dir(dir.path())
        .args(["fep", "evaluate", "--format", "text", "--test-cases", "cases.jsonl", "--outputs", "outputs.jsonl", "--checks", "checks.json"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: cases.jsonl:1: missing required key `id`\n\
             error: cases.jsonl:3: expected a JSON object, found array\n\
             error: cases.jsonl:4: invalid JSON: the line starts with a byte order mark (U+FEFF), \
             as a file joined to another leaves it: remove it\n\
             error: cases.jsonl:5: the key `id` is given twice in one object (the second by column 30): keep one\n\
             error: outputs.jsonl: 2 outputs for 4 test cases in cases.jsonl (record i of each belongs together)\n",
        );
}

#[test]
fn a_bad_checks_file_stops_the_streaming_mode_before_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    write_stream_inputs(dir.path());
    fs::write(
        dir.path().join("checks.json"),
        r#"{"checks": [{"type": "threshold", "arguments": {"value": "$.output.value["}}]}"#,
    )
    .unwrap();
    evalctl()
        .current_dir(dir.path())
        .args(["fep", "evaluate", "--format", "text", "--test-cases", "cases.jsonl", "--outputs", "outputs.jsonl", "--checks", "checks.json"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: checks.json: checks[0].arguments.value: not a valid JSONPath `$.output.value[`: \
             Failed to parse rule:  --> 1:16 ⏎   | ⏎ 1 | $.output.value[ ⏎   |                \
             ^--- ⏎   | ⏎   = expected selector\n\
             error: checks.json: checks[0].arguments: threshold needs at least one of `min_value` \
             and `max_value`\n",
        );
}

#[test]
fn streaming_mode_needs_all_three_files() {
    evalctl()
        .args(["fep", "evaluate", "--test-cases", "cases.jsonl"])
        .assert()
        .code(2)
        .stderr(
            "error: the following required arguments were not provided:\n  --outputs \
             <FILE.jsonl>\n  --checks <FILE.json>\n\nUsage: evalctl fep evaluate [OPTIONS] \
             <REQUEST>\n       evalctl fep evaluate [OPTIONS] --test-cases <FILE.jsonl> \
             --outputs <FILE.jsonl> --checks <FILE.json>\n\nFor more information, try \
             '--help'.\n",
        );
}

#[test]
fn streaming_flags_conflict_with_a_request_file() {
    for flag in ["--checks", "--outputs", "--test-cases"] {
        evalctl()
            .args([
                "--format",
                "text",
                "fep",
                "evaluate",
                "request.json",
                flag,
                "x.json",
            ])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::starts_with(format!(
                "error: the argument '[REQUEST]' cannot be used with '{flag} <"
            )));
    }
}

#[test]
fn the_checks_of_a_test_case_share_one_evaluated_at_and_see_only_their_own_context() {
    let checks = vec![
        check(
            "exact_match",
            json!({"actual": "$.output.value", "expected": "$.test_case.expected"}),
        ),
        check("threshold", json!({"value": "$.output.n", "min_value": 1})),
        check(
            "contains",
            json!({"text": "$.test_case.input", "phrases": ["q"]}),
        ),
    ];
    let (document, code) = evaluate(&json!({
        "test_cases": [{"id": "a", "input": "q1", "expected": "x"}, {"id": "b", "input": "q2", "expected": "y"}],
        "outputs": [{"value": "x", "n": 2}, {"value": "x"}],
        "checks": checks,
    }));
    assert_eq!(code, 1);
    let first = &document["results"][0];
    let second = &document["results"][1];
    let stamps: Vec<&Value> = first["check_results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| &result["evaluated_at"])
        .collect();
    assert!(stamps.iter().all(|stamp| *stamp == stamps[0]), "{stamps:?}");
    assert_eq!(first["status"], "completed");
    assert_eq!(second["execution_context"]["test_case"]["id"], "b");
    assert_eq!(second["check_results"][0]["results"]["passed"], false);
    assert_eq!(
        second["check_results"][1]["error"]["type"],
        "jsonpath_error"
    );
    assert_eq!(
        second["check_results"][2]["resolved_arguments"]["text"]["value"],
        "q2"
    );
}

#[test]
fn controls_a_terminal_obeys_are_escaped_in_the_json_on_stdout() {
    let request = r#"{"test_cases": [{"id": "c1\u009b31m\u202e", "input": "x"}],
        "outputs": [{"value": "x"}], "checks": [{"type": "exact_match",
        "arguments": {"actual": "$.output.value", "expected": "x"}}]}"#;
    for stream in [&[][..], &["--stream"]] {
        let out = evalctl()
            .args(["fep", "evaluate", "-", "--format", "json"])
            .args(stream)
            .write_stdin(request)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let stdout = String::from_utf8(out.stdout).unwrap();
        let contexts: Vec<&str> = stdout
            .lines()
            .filter_map(|line| line.split_once(",\"check_results\""))
            .map(|(head, _)| head)
            .collect();
        assert_eq!(
            contexts,
            [
                r#"{"status":"completed","execution_context":{"test_case":{"id":"c1\u009b31m\u202e","input":"x"},"output":{"value":"x"}}"#
            ],
            "{stream:?}"
        );
    }
}

#[test]
fn a_line_feed_in_a_test_case_id_stays_on_its_line_of_the_text_summary() {
    let request = json!({"test_cases": [{"id": "real: exact_match failed\n  other", "input": "x"}],
        "outputs": [{"value": "y"}], "checks": [{"type": "exact_match",
        "arguments": {"actual": "$.output.value", "expected": "x"}}]});
    let (code, lines) = text_summary(&request, "completed");
    assert_eq!(code, Some(0));
    assert_eq!(
        lines[lines.len() - 2..],
        [
            "not passed (1):".to_string(),
            "  real: exact_match failed ⏎   other: exact_match failed".to_string()
        ]
    );
}
