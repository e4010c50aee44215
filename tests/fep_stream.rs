//! `evalctl fep evaluate --test-cases --outputs --checks` read from pipes, its line messages, and
//! the exit code when stdout's reader goes away (both modes).

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common::{evalctl, evalctl_process};
use crate::fep_support::{bad_input_report, check};
use serde_json::{json, Value};

const CASES: &str = "{\"id\": \"a\", \"input\": \"q\", \"expected\": \"Paris\"}\n\n\
                     {\"id\": \"b\", \"input\": \"q\", \"expected\": \"Rome\"}\n";

fn write_inputs(dir: &Path) {
    fs::write(dir.join("cases.jsonl"), CASES).unwrap();
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

/// The binary under test as a std command (assert_cmd's runs to completion; these tests need
/// to hold the pipes themselves).
fn command(dir: &Path, args: &[&str]) -> Command {
    let mut command = evalctl_process();
    command.current_dir(dir).args(args);
    command
}

/// Run `args`, feeding `stdin` through a pipe.
fn run_piped(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = command(dir, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

const STREAM_FROM_STDIN: [&str; 8] = [
    "fep",
    "evaluate",
    "--test-cases",
    "/dev/stdin",
    "--outputs",
    "outputs.jsonl",
    "--checks",
    "checks.json",
];

#[test]
fn a_dash_reads_either_stream_from_stdin_but_not_both() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    let args = [
        "fep",
        "evaluate",
        "--test-cases",
        "cases.jsonl",
        "--outputs",
        "-",
        "--checks",
        "checks.json",
    ];
    let outputs = fs::read(dir.path().join("outputs.jsonl")).unwrap();
    let piped = run_piped(dir.path(), &args, &outputs);
    assert_eq!(
        piped.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
    let document: Value = serde_json::from_slice(&piped.stdout).unwrap();
    assert_eq!(document["summary"]["total_test_cases"], 2);
    let both = [
        "fep",
        "evaluate",
        "--test-cases",
        "-",
        "--outputs",
        "-",
        "--checks",
        "checks.json",
    ];
    let refused = run_piped(dir.path(), &both, b"");
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("cannot both read stdin"));
}

#[test]
fn test_cases_from_a_pipe_are_read_once_and_evaluated() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    let piped = run_piped(dir.path(), &STREAM_FROM_STDIN, CASES.as_bytes());
    assert_eq!(
        piped.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
    let document: Value = serde_json::from_slice(&piped.stdout).unwrap();
    assert_eq!(document["summary"]["total_test_cases"], 2);
    assert_eq!(
        document["results"][1]["execution_context"]["test_case"]["id"],
        "b"
    );
    assert_eq!(
        document["results"][1]["check_results"][0]["results"]["passed"],
        false
    );
    let from_file = evalctl()
        .current_dir(dir.path())
        .args(["fep", "evaluate", "--test-cases", "cases.jsonl"])
        .args(&STREAM_FROM_STDIN[4..])
        .output()
        .unwrap();
    let from_file: Value = serde_json::from_slice(&from_file.stdout).unwrap();
    assert_eq!(document["results"].as_array().unwrap().len(), 2);
    assert_eq!(document["summary"], from_file["summary"]);
}

#[test]
fn a_problem_late_in_a_pipe_leaves_nothing_half_written_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    let cases: String = (0..3000)
        .map(|i| format!("{{\"id\": \"c{i}\", \"input\": \"q\", \"expected\": \"Paris\"}}\n"))
        .collect();
    let outputs = "{\"value\": \"Paris\"}\n".repeat(3000);
    fs::write(dir.path().join("outputs.jsonl"), outputs).unwrap();
    let stdin = format!("{cases}{{\"input\": \"q\"}}\n");
    let errors = [
        "/dev/stdin:3001: missing required key `id`",
        "outputs.jsonl: 3000 outputs for 3001 test cases in /dev/stdin (record i of each belongs together)",
    ];
    let (document, stderr) = bad_input_report(&errors);
    let text = [&["--format", "text"][..], &STREAM_FROM_STDIN[..]].concat();
    let piped = run_piped(dir.path(), &text, stdin.as_bytes());
    assert_eq!(piped.status.code(), Some(2));
    assert!(piped.stdout.is_empty(), "nothing half-written on stdout");
    assert_eq!(String::from_utf8(piped.stderr).unwrap(), stderr);
    // With JSON output (the default on a pipe) stdout holds the failure document and nothing else.
    let piped = run_piped(dir.path(), &STREAM_FROM_STDIN, stdin.as_bytes());
    assert_eq!(piped.status.code(), Some(2));
    let printed: Value = serde_json::from_slice(&piped.stdout).expect("one JSON document");
    assert_eq!(printed, document);
    assert_eq!(String::from_utf8(piped.stderr).unwrap(), stderr);
    // With --stream, stdout is NDJSON whatever --format says: the failure document is its line.
    for format in ["text", "json"] {
        let (command, inputs) = STREAM_FROM_STDIN.split_at(2);
        let args = [command, &["--stream", "--format", format], inputs].concat();
        let piped = run_piped(dir.path(), &args, stdin.as_bytes());
        assert_eq!(piped.status.code(), Some(2));
        assert_eq!(
            String::from_utf8(piped.stdout).unwrap(),
            format!("{document}\n"),
            "{format}"
        );
        assert_eq!(String::from_utf8(piped.stderr).unwrap(), stderr);
    }
    // A usage error too, wherever clap stopped reading.
    for (args, reason) in [
        (
            &["--stream", "--format", "text", "-j", "0"][..],
            "invalid value '0' for '--concurrency <N>': must be a whole number between 1 and 4096",
        ),
        (
            &["--bogus", "--stream"],
            "unexpected argument '--bogus' found",
        ),
        (
            &["--stream", "--stream"],
            "the argument '--stream' cannot be used multiple times",
        ),
    ] {
        let out = command(dir.path(), &["fep", "evaluate"])
            .args(args)
            .args(&STREAM_FROM_STDIN[2..])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            format!("{{\"ok\":false,\"exit\":2,\"errors\":[\"{reason}\"]}}\n"),
            "{args:?}"
        );
    }
}

#[test]
fn line_problems_read_like_the_run_inputs() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    let mut cases = CASES.as_bytes().to_vec();
    cases.extend_from_slice(b"{\"id\": \"\xff\"}\n{\"id\": \"c\",, }\n");
    fs::write(dir.path().join("cases.jsonl"), cases).unwrap();
    fs::write(
        dir.path().join("outputs.jsonl"),
        "\u{feff}{\"value\": \"1\"}\r\n{\"value\": \"2\"}\n{\"value\": \"3\"}\n{\"value\": \"4\"}\n",
    )
    .unwrap();
    evalctl()
        .current_dir(dir.path())
        .args([
            "fep",
            "evaluate",
            "--format",
            "text",
            "--test-cases",
            "cases.jsonl",
        ])
        .args(&STREAM_FROM_STDIN[4..])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: cases.jsonl:4: invalid UTF-8 (bad byte at column 9)\n\
             error: cases.jsonl:5: invalid JSON: key must be a string at column 12\n",
        );
}

#[test]
fn unreadable_inputs_are_all_named() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    evalctl()
        .current_dir(dir.path())
        .args([
            "fep",
            "evaluate",
            "--format",
            "text",
            "--test-cases",
            "nope.jsonl",
            "--outputs",
            "gone.jsonl",
            "--checks",
            "checks.json",
        ])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: nope.jsonl: cannot read: No such file or directory\n\
             error: gone.jsonl: cannot read: No such file or directory\n",
        );
}

#[test]
fn a_directory_is_one_problem_without_a_count_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    fs::create_dir(dir.path().join("cases")).unwrap();
    evalctl()
        .current_dir(dir.path())
        .args([
            "fep",
            "evaluate",
            "--format",
            "text",
            "--test-cases",
            "cases",
        ])
        .args(&STREAM_FROM_STDIN[4..])
        .assert()
        .code(2)
        .stdout("")
        .stderr("error: cases: is a directory, not a file\n");
}

/// Run `args` with stdout's read end closed before anything is written; returns the exit code.
fn exit_with_stdout_closed(dir: &Path, args: &[&str], stdin: &[u8]) -> Option<i32> {
    let mut child = command(dir, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "",
        "a closed stdout is not an error"
    );
    output.status.code()
}

#[test]
fn a_closed_stdout_still_exits_with_the_runs_status() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    // The stream: exact_match fails on "b" but completes.
    assert_eq!(
        exit_with_stdout_closed(dir.path(), &STREAM_FROM_STDIN, CASES.as_bytes()),
        Some(0)
    );
    // A request whose check errors on its second test case.
    let request = json!({
        "test_cases": [{"id": "a", "input": "q"}, {"id": "b", "input": "q"}],
        "outputs": [{"value": {"x": 1}}, {"value": {}}],
        "checks": [check("threshold", json!({"value": "$.output.value.x", "min_value": 0}))],
    });
    let args = ["fep", "evaluate", "-"];
    let stdin = request.to_string();
    assert_eq!(
        exit_with_stdout_closed(dir.path(), &args, stdin.as_bytes()),
        Some(1)
    );
    fs::write(
        dir.path().join("cases.jsonl"),
        "{\"id\": \"a\", \"input\": \"q\"}\n",
    )
    .unwrap();
    fs::write(dir.path().join("outputs.jsonl"), "{\"value\": {}}\n").unwrap();
    fs::write(
        dir.path().join("checks.json"),
        json!({"checks": [check("threshold", json!({"value": "$.output.value.x", "min_value": 0}))]})
            .to_string(),
    )
    .unwrap();
    let stream = ["fep", "evaluate", "--test-cases", "cases.jsonl"];
    assert_eq!(
        exit_with_stdout_closed(
            dir.path(),
            &[&stream[..], &STREAM_FROM_STDIN[4..]].concat(),
            b""
        ),
        Some(1)
    );
}

#[test]
fn a_stream_with_no_check_at_all_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    fs::write(dir.path().join("none.json"), r#"{"checks": []}"#).unwrap();
    let out = command(
        dir.path(),
        &[
            "fep",
            "evaluate",
            "--format",
            "text",
            "--test-cases",
            "cases.jsonl",
            "--outputs",
            "outputs.jsonl",
            "--checks",
            "none.json",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: none.json: no checks to run: its `checks` list is empty and no test case carries \
         its own\n"
    );
}
