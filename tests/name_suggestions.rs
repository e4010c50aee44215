//! Misspelt names through the real binary: every unknown key of a spec reported with the rest of
//! its problems, and a suggestion (`did you mean …?`) beside the valid values wherever a name is
//! close to a valid one — spec keys, validator types, evidence references, task-spec
//! vocabularies, check types and a required FEP request key.

use crate::common::{code, json_stdout, stderr_text, stdout_text, Sandbox};
use serde_json::json;

/// A pack with seven problems, the first of them an unknown key.
const SEVEN_PROBLEMS: &str = "\
name: qa-pack
version_number: 0
judge_mode: deterministik
validators:
  - key: answer
    type: fuzzy
    target: final_ouput
    expected_from: case.expectations.answer
  - key: overlap
    type: token_f1
    target: final_output
    expected_from: case.expectations.answer
    config:
      lowercase: true
scorecard:
  pass_treshold: 0.7
  strategy: weightd
  dimensions: [correctness]
";

const VALIDATOR_TYPES: &str = "exact_match, contains, regex_match, boolean_assert, fuzzy_match, \
    numeric_match, normalized_match, token_f1, bleu_score, rouge_score, chrf_score, \
    math_equivalence, json_schema, json_path_match, file_exists, file_content_match, \
    file_json_schema, directory_structure, code_execution, tool_call_assertion, postcondition";

const REFERENCES: &str = "final_output, run.final_output, challenge_input, case.payload[.PATH], \
    case.inputs.KEY[.PATH], case.expectations.KEY[.PATH], artifact.KEY[.PATH], file:KEY, \
    literal:TEXT, transcript.full, transcript.last_n:N, transcript.from_mismatch, \
    turn.expectations";

/// `evalctl ARGS` in `sandbox`: exit 2, nothing on stdout; its stderr.
fn refused(sandbox: &Sandbox, args: &[&str]) -> String {
    let out = sandbox.evalctl().args(args).output().expect("evalctl runs");
    assert_eq!(code(&out), 2, "{}", stderr_text(&out));
    assert_eq!(stdout_text(&out), "");
    stderr_text(&out)
}

#[test]
fn a_misspelt_spec_key_is_reported_with_every_other_problem() {
    let sandbox = Sandbox::new();
    sandbox.write("pack.yaml", SEVEN_PROBLEMS);
    let problems = [
        "pack.yaml:16: evaluation_spec.scorecard.pass_treshold unknown key `pass_treshold` (did you \
         mean `pass_threshold`? expected one of dimensions, strategy, pass_threshold, \
         normalization, judge_limits)"
            .to_string(),
        "pack.yaml:2: evaluation_spec.version_number must be greater than 0".to_string(),
        "pack.yaml:3: evaluation_spec.judge_mode must be one of deterministic, llm_judge, hybrid \
         (did you mean `deterministic`?)"
            .to_string(),
        "pack.yaml:17: evaluation_spec.scorecard.strategy must be one of weighted, binary, hybrid \
         (did you mean `weighted`?)"
            .to_string(),
        format!(
            "pack.yaml:6: evaluation_spec.validators[0].type is not a supported validator type \
             (did you mean `fuzzy_match`? supported: {VALIDATOR_TYPES})"
        ),
        format!(
            "pack.yaml:7: evaluation_spec.validators[0].target must be a supported evidence \
             reference (did you mean `final_output`? supported: {REFERENCES})"
        ),
        "pack.yaml:13: evaluation_spec.validators[1].config invalid config: unknown field \
         `lowercase`, expected one of `threshold`, `normalize`, `remove_articles`, \
         `remove_punctuation`"
            .to_string(),
    ];
    let text = refused(
        &sandbox,
        &["spec", "validate", "pack.yaml", "--format", "text"],
    );
    let expected: String = problems
        .iter()
        .map(|problem| format!("error: {problem}\n"))
        .collect();
    assert_eq!(text, expected);

    let out = sandbox
        .evalctl()
        .args(["spec", "validate", "pack.yaml", "--format", "json"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 2);
    assert_eq!(
        json_stdout(&out),
        json!({"ok": false, "exit": 2, "errors": problems})
    );
}

#[test]
fn a_wrong_type_stops_decoding_after_the_unknown_keys_before_it() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "pack.yaml",
        SEVEN_PROBLEMS.replace("  strategy: weightd\n", "  judge_limits: many\n"),
    );
    assert_eq!(
        refused(
            &sandbox,
            &["spec", "validate", "pack.yaml", "--format", "text"]
        ),
        "error: pack.yaml:16: evaluation_spec.scorecard.pass_treshold unknown key \
         `pass_treshold` (did you mean `pass_threshold`? expected one of dimensions, strategy, \
         pass_threshold, normalization, judge_limits)\n\
         error: pack.yaml:17: evaluation_spec.scorecard.judge_limits expected an object, found \
         string \"many\"\n"
    );
}

#[test]
fn a_config_that_does_not_decode_is_an_invalid_config_in_json_too() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "spec.json",
        r#"{"name": "s", "version_number": 1, "judge_mode": "deterministic",
 "validators": [{"key": "v", "type": "token_f1", "target": "final_output", "expected_from": "literal:x", "config": {"threshold": "high"}}],
 "scorecard": {"dimensions": ["correctness"]}}
"#,
    );
    assert_eq!(
        refused(
            &sandbox,
            &["spec", "validate", "spec.json", "--format", "text"]
        ),
        "error: spec.json:2: evaluation_spec.validators[0].config invalid config: threshold: \
         expected a number, found string \"high\"\n"
    );
    // A fraction where a whole number goes is named with the key it is under.
    sandbox.write(
        "bleu.json",
        r#"{"name": "s", "version_number": 1, "judge_mode": "deterministic",
 "validators": [{"key": "v", "type": "bleu_score", "target": "final_output", "expected_from": "literal:x", "config": {"max_ngram": 2.5}}],
 "scorecard": {"dimensions": ["correctness"]}}
"#,
    );
    assert_eq!(
        refused(
            &sandbox,
            &["spec", "validate", "bleu.json", "--format", "text"]
        ),
        "error: bleu.json:2: evaluation_spec.validators[0].config invalid config: max_ngram: \
         expected an integer, found 2.5\n"
    );
}

#[test]
fn task_spec_vocabularies_suggest_the_value_meant() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "tasks.jsonl",
        r#"{"task_id": "t1", "category": "arithmetic", "prompt": "2+2?", "targets": ["4"], "metric_name": "exact", "post_process": "strip"}
{"task_id": "t2", "category": "arithmetic", "prompt": "3+3?", "targets": ["6"], "metric_name": "perplexity", "post_process": "none"}
"#,
    );
    let out = sandbox
        .evalctl()
        .args(["tasks", "validate", "tasks.jsonl", "--format", "text"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 2);
    assert_eq!(
        stdout_text(&out),
        "tasks.jsonl:1: task t1, field metric_name: bad_metric: expected one of exact_match, f1, \
         bleu_4, rouge_l, accuracy, code_exec, found \"exact\" (did you mean `exact_match`?)\n\
         tasks.jsonl:1: task t1, field post_process: bad_post_process: expected one of none, \
         strip_whitespace, lower, extract_letter, extract_code_block, extract_first_line, found \
         \"strip\" (did you mean `strip_whitespace`?)\n\
         tasks.jsonl:2: task t2, field metric_name: bad_metric: expected one of exact_match, f1, \
         bleu_4, rouge_l, accuracy, code_exec, found \"perplexity\"\n"
    );
    assert_eq!(stderr_text(&out), "tasks.jsonl: 0 valid tasks, 3 errors\n");
}

#[test]
fn a_check_type_suggests_the_validator_meant() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "checks.json",
        r#"{"checks": [{"type": "fuzzy", "arguments": {"actual": "$.output.value", "expected": "$.test_case.expected"}}]}"#,
    );
    assert_eq!(
        refused(
            &sandbox,
            &[
                "run",
                "--checks",
                "checks.json",
                "--candidate",
                "x",
                "--format",
                "text"
            ]
        ),
        "error: checks.json: checks[0].type: unknown check type `fuzzy` (did you mean \
         `spec.fuzzy_match`? known: exact_match, contains, regex, threshold, \
         semantic_similarity, llm_judge; spec.TYPE runs an evaluation-spec validator; a custom \
         type is declared in `custom_checks` or with --custom-check)\n"
    );
}

#[test]
fn a_misspelt_required_request_key_is_named() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "request.json",
        r#"{"test_cases": [{"id": "france", "input": "capital of France", "expected": "Paris"}],
 "outputs": [{"value": "Paris"}],
 "checkz": [{"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "$.test_case.expected"}}]}
"#,
    );
    assert_eq!(
        refused(
            &sandbox,
            &["fep", "evaluate", "request.json", "--format", "text"]
        ),
        "error: request.json: missing required key `checks` (found `checkz`: did you mean \
         `checks`?)\n"
    );
}
