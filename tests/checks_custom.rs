//! Custom checks (FEP 6.1's extension mechanism) through the real binary: declared in a request
//! or a checks file (and allowed with `--allow-custom-check`) or with `--custom-check`, answered
//! by `sh` commands that read the resolved arguments on stdin; failures, timeouts and unusable
//! output as check errors.

use serde_json::{json, Value};

use crate::common::{evalctl, json_stdout};
use crate::extended_support::{refused_before_run, scored_line};

/// A command that answers `{"passed": true, "got": <its stdin>}`.
const ECHO: &str = r#"printf '{"passed": true, "got": %s}' "$(cat)""#;

fn request(checks: Value, declarations: Value) -> Value {
    json!({
        "custom_checks": declarations,
        "test_cases": [{"id": "t1", "input": "q", "expected": "Paris"}],
        "outputs": [{"value": "Paris"}],
        "checks": checks
    })
}

fn evaluate(request: &Value, flags: &[&str]) -> (i32, Value) {
    let output = evalctl()
        .args(["fep", "evaluate"])
        .args(flags)
        .arg("-")
        .write_stdin(request.to_string())
        .output()
        .unwrap();
    (output.status.code().unwrap_or(-1), json_stdout(&output))
}

#[test]
fn a_declared_command_gets_the_resolved_arguments_and_answers_the_results() {
    let (code, document) = evaluate(
        &request(
            json!([{"type": "echo", "arguments": {"text": "$.output.value", "max": 3}}]),
            json!({"echo": {"command": ["sh", "-c", ECHO]}}),
        ),
        &["--allow-custom-check", "echo"],
    );
    assert_eq!(code, 0, "{document}");
    let result = &document["results"][0]["check_results"][0];
    assert_eq!(result["check_type"], "echo");
    assert_eq!(result["status"], "completed");
    assert_eq!(
        result["results"],
        json!({"passed": true, "got": {"text": "Paris", "max": 3}})
    );
    assert_eq!(
        result["resolved_arguments"],
        json!({"text": {"jsonpath": "$.output.value", "value": "Paris"}, "max": {"value": 3}})
    );
}

#[test]
fn failures_timeouts_and_unusable_output_are_check_errors() {
    let (code, document) = evaluate(
        &request(
            json!([
                {"type": "fails", "arguments": {}},
                {"type": "slow", "arguments": {}},
                {"type": "chatty", "arguments": {}},
                {"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "Paris"}}
            ]),
            json!({"slow": {"command": "sleep 5", "timeout": 0.3},
                   "chatty": {"command": ["sh", "-c", "echo all good"]}}),
        ),
        &[
            "--custom-check",
            "fails=sh -c 'echo broken >&2; exit 3'",
            "--allow-custom-check",
            "slow",
            "--allow-custom-check",
            "chatty",
        ],
    );
    assert_eq!(code, 1);
    let results = document["results"][0]["check_results"].as_array().unwrap();
    let errors: Vec<&Value> = results.iter().map(|result| &result["error"]).collect();
    assert_eq!(errors[0]["type"], "unknown_error");
    assert_eq!(
        errors[0]["message"],
        "command exited with code 3; stderr: broken"
    );
    assert_eq!(errors[1]["type"], "timeout_error");
    assert_eq!(errors[1]["recoverable"], true);
    assert_eq!(
        errors[2]["message"],
        "the command of custom check `chatty` printed no JSON object of results: \"all good\""
    );
    assert_eq!(results[3]["results"], json!({"passed": true}));
}

#[test]
fn declarations_are_validated_with_the_request() {
    let output = evalctl()
        .args(["fep", "evaluate", "--format", "text", "-"])
        .write_stdin(
            request(
                json!([{"type": "tone", "arguments": {}}]),
                json!({"regex": {"command": "x"}, "bad name": {"command": "x"}}),
            )
            .to_string(),
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: <stdin>: custom_checks.regex: `regex` is a built-in check type\n\
         error: <stdin>: custom_checks.\"bad name\": \"bad name\" is not a check type name (letters, digits, `_`, `-` and `.`, starting with a letter or `_`)\n\
         error: <stdin>: checks[0].type: unknown check type `tone` (known: exact_match, contains, regex, threshold, semantic_similarity, llm_judge; spec.TYPE runs an evaluation-spec validator; a custom type is declared in `custom_checks` or with --custom-check)\n"
    );
    evalctl()
        .args(["fep", "evaluate", "--custom-check", "contains=cat", "-"])
        .write_stdin("{}")
        .assert()
        .code(2)
        .stderr(
            "error: invalid value 'contains=cat' for '--custom-check <NAME=COMMAND>': `contains` \
             is a built-in check type\n\nFor more information, try '--help'.\n",
        );
}

#[test]
fn run_checks_scores_custom_checks_declared_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("checks.json"),
        json!({"checks": [
            {"type": "short", "arguments": {"text": "$.output.value"}},
            {"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "Paris"}}
        ]})
        .to_string(),
    )
    .unwrap();
    // Passes when its stdin (the arguments as JSON) is under 20 bytes.
    let short = r#"short=sh -c 'n=$(cat | wc -c); if [ "$n" -lt 20 ]; then echo "{\"passed\": true}"; else echo "{\"passed\": false}"; fi'"#;
    evalctl()
        .current_dir(dir.path())
        .args(["run", "--checks", "checks.json", "--custom-check", short])
        .args([
            "--candidate",
            "Paris is the capital",
            "--output",
            "out.jsonl",
            "--format",
            "json",
        ])
        .assert()
        .code(0);
    let line = scored_line(dir.path());
    assert_eq!(line["score"], 0.0, "{line}");
    assert_eq!(
        line["side_info"]["failed_checks"],
        json!(["short", "exact_match"])
    );
}

#[test]
fn evaluation_spec_validators_are_check_types() {
    let (code, document) = evaluate(
        &json!({
            "test_cases": [{"id": "t1", "input": "q", "expected": "The capital is Paris"}],
            "outputs": [{"value": "the capital is paris!"}],
            "checks": [
                {"type": "spec.fuzzy_match", "arguments": {"actual": "$.output.value",
                    "expected": "$.test_case.expected", "config": {"threshold": 0.8}}},
                {"type": "spec.numeric_match", "arguments": {"actual": "3.20", "expected": "3.14",
                    "config": {"tolerance": 0.01}}},
                {"type": "spec.fuzzy_match", "arguments": {"actual": "a", "expected": "b",
                    "config": {"threshold": 2}}},
                {"type": "spec.token_f1", "arguments": {"actual": "x"}}
            ]
        }),
        &[],
    );
    assert_eq!(code, 1);
    let results = document["results"][0]["check_results"].as_array().unwrap();
    assert_eq!(
        results[0]["results"],
        json!({"passed": true, "score": 0.926829268292683, "evidence": {
            "similarity": 0.926829268292683, "threshold": 0.8, "distance": 3, "sum_length": 41,
            "case_insensitive": false, "normalize": false}})
    );
    assert_eq!(results[1]["results"]["passed"], false);
    assert_eq!(
        results[2]["error"],
        json!({"type": "validation_error", "recoverable": false,
            "message": "arguments.config.threshold: must be between 0 and 1"})
    );
    assert_eq!(
        results[3]["error"]["message"],
        "arguments: missing required key `expected`"
    );
}

#[test]
fn tool_call_assertions_read_a_trace_from_the_output() {
    let (code, document) = evaluate(
        &json!({
            "test_cases": [{"id": "t1", "input": "book a flight"}],
            "outputs": [{"value": {"tool_calls": [
                {"tool_name": "search", "arguments": {"to": "Lima"}},
                {"tool_name": "book", "arguments": {"flight": "LA2"}, "failed": true},
                {"tool_name": "book", "arguments": {"flight": "LA2"}}
            ]}}],
            "checks": [
                {"type": "spec.tool_call_assertion", "arguments": {"calls": "$.output.value.tool_calls",
                    "config": {"tool_name": "book", "arguments_contain": {"flight": "LA2"}}}},
                {"type": "spec.tool_call_assertion", "arguments": {"calls": "$.output.value.tool_calls",
                    "config": {"ordered_tools": ["book", "search"], "order_mode": "subsequence"}}},
                {"type": "spec.tool_call_assertion", "arguments": {"calls": "$.output.value",
                    "config": {"tool_name": "book"}}}
            ]
        }),
        &[],
    );
    assert_eq!(code, 1);
    let results = document["results"][0]["check_results"].as_array().unwrap();
    assert_eq!(results[0]["results"]["passed"], true, "{}", results[0]);
    assert_eq!(results[0]["results"]["matched_call"], 2);
    assert_eq!(results[1]["results"]["passed"], false);
    assert_eq!(
        results[2]["error"]["message"],
        "argument `calls`: expected an array of tool calls, found object"
    );
}

#[test]
fn a_command_that_cannot_start_and_flags_given_twice() {
    let (code, document) = evaluate(
        &request(json!([{"type": "gone", "arguments": {}}]), json!({})),
        &["--custom-check", "gone=/nonexistent/evalctl-check"],
    );
    assert_eq!(code, 1);
    let error = &document["results"][0]["check_results"][0]["error"];
    assert_eq!(error["type"], "unknown_error");
    // The command runs where evalctl runs: the test's own directory.
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(
        error["message"],
        format!(
            "cannot start '/nonexistent/evalctl-check': no such file (cwd: {})",
            cwd.display()
        )
    );
    evalctl()
        .args([
            "fep",
            "evaluate",
            "--format",
            "text",
            "--custom-check",
            "x=true",
        ])
        .args(["--custom-check", "x=false", "-"])
        .write_stdin("{}")
        .assert()
        .code(2)
        .stderr("error: --custom-check: `x` is declared twice\n");
}

#[test]
fn run_checks_refuses_a_validator_config_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    refused_before_run(
        dir.path(),
        "checks.json",
        json!([{"type": "spec.fuzzy_match",
            "arguments": {"actual": "$.output.value", "expected": "x", "config": {"threshold": 3}}}]),
        &[],
        "error: checks.json: checks[0].arguments.config.threshold: must be between 0 and 1\n",
    );
}

#[test]
fn a_validator_config_is_a_problem_of_the_file_beside_the_others_with_its_line() {
    let sb = crate::common::Sandbox::new();
    sb.write(
        "checks.json",
        "{\"checks\": [\n\
         {\"type\": \"spec.fuzzy_match\", \"arguments\": {\"actual\": \"$.output.value\", \
         \"expected\": \"x\", \"config\": {\"case_insensitve\": true}}},\n\
         {\"type\": \"regex\", \"arguments\": {\"text\": \"$.output.value\", \"pattern\": \"a(\"}}\n\
         ]}\n",
    );
    let config = "checks.json:2: checks[0].arguments.config: invalid config: unknown field \
                  `case_insensitve`, expected one of `threshold`, `case_insensitive`, `normalize`";
    let out = sb
        .evalctl()
        .args([
            "run",
            "--checks",
            "checks.json",
            "--candidate",
            "x",
            "--format",
            "text",
        ])
        .output()
        .unwrap();
    // Both problems in one pass, each at its line, in run and in the streaming mode alike.
    let expected = format!(
        "error: {config}\nerror: checks.json:3: checks[1].arguments.pattern: not a valid regular \
         expression: regex parse error: ⏎     a( ⏎      ^ ⏎ error: unclosed group\n"
    );
    assert_eq!(
        (crate::common::code(&out), crate::common::stderr_text(&out)),
        (2, expected.clone())
    );
    sb.write("tc.jsonl", "{\"id\": \"a\", \"input\": \"x\"}\n");
    sb.write("out.jsonl", "{\"value\": \"x\"}\n");
    let out = sb
        .evalctl()
        .args([
            "fep",
            "evaluate",
            "--test-cases",
            "tc.jsonl",
            "--outputs",
            "out.jsonl",
        ])
        .args(["--checks", "checks.json", "--format", "text"])
        .output()
        .unwrap();
    assert_eq!(
        (crate::common::code(&out), crate::common::stderr_text(&out)),
        (2, expected)
    );
}
