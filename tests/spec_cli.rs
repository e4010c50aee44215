//! `evalctl spec validate`, `evalctl spec score` and `evalctl run --spec` through the real
//! binary, on the fixtures of `fixtures/spec/` and `tests/fixtures/spec/` and on small inputs
//! written into a sandbox: exact reports, exact problem lines, exact summaries and exit codes.

use crate::common::{code, evalctl, json_stdout, stderr_text, stdout_text, Reply, Sandbox, Server};
use serde_json::{json, Value};

const PACK: &str = "fixtures/spec/pack.yaml";
const RUNS: &str = "fixtures/spec/runs.jsonl";
const DATASET: &str = "fixtures/spec/dataset.jsonl";

/// `evalctl` in the repository root, where the fixture paths above resolve.
fn in_repository() -> assert_cmd::Command {
    let mut command = evalctl();
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

/// Run `command` and return its output.
fn output(mut command: assert_cmd::Command) -> std::process::Output {
    command.output().expect("evalctl runs")
}

/// A sandbox holding a copy of the fixture pack as `pack.yaml`.
fn sandbox_with_pack() -> Sandbox {
    let sandbox = Sandbox::new();
    let pack = std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PACK))
        .expect("read the fixture pack");
    sandbox.write("pack.yaml", pack);
    sandbox
}

/// `spec score pack.yaml runs.jsonl --format FORMAT` in `sandbox`, with `--output FILE` when
/// one is named.
fn score(sandbox: &Sandbox, format: &str, output_file: Option<&str>) -> std::process::Output {
    output({
        let mut command = sandbox.evalctl();
        command.args([
            "spec",
            "score",
            "pack.yaml",
            "runs.jsonl",
            "--format",
            format,
        ]);
        command.args(
            output_file
                .map(|file| ["--output", file])
                .into_iter()
                .flatten(),
        );
        command
    })
}

/// The lines of a JSONL text, each parsed.
fn jsonl(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// The members of an evaluation record that do not depend on the fixture's metric.
fn verdict(record: &Value) -> Value {
    json!({
        "id": record["id"],
        "status": record["status"],
        "overall_score": record["overall_score"],
        "passed": record["passed"],
        "dimension_scores": record["dimension_scores"],
        "verdicts": record["validator_results"]
            .as_array()
            .expect("validator results")
            .iter()
            .map(|result| json!([result["key"], result["verdict"]]))
            .collect::<Vec<_>>(),
    })
}

#[test]
fn validate_reports_the_fixture_pack_in_text() {
    let out = output({
        let mut command = in_repository();
        command.args(["spec", "validate", PACK, "--format", "text"]);
        command
    });
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        stdout_text(&out),
        "fixtures/spec/pack.yaml: valid: capitals-agent v1 (deterministic judging; 3 validators, \
         1 metric, 0 LLM judges; 2 dimensions, hybrid strategy)\n"
    );
    assert_eq!(stderr_text(&out), "");
}

#[test]
fn validate_warns_about_an_unknown_collector_but_accepts_the_spec() {
    let pack = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PACK))
        .expect("the fixture pack");
    let sandbox = Sandbox::new();
    sandbox.write(
        "pack.yaml",
        pack.replace("run_tool_call_count", "run_bogus"),
    );
    let out = sandbox
        .evalctl()
        .args(["spec", "validate", "pack.yaml", "--format", "text"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out),
        "warning: pack.yaml:34: evaluation_spec.metrics[0].collector \"run_bogus\" is not a known \
         collector; the metric will be an error when runs are scored\n"
    );
}

#[test]
fn validate_says_an_integer_too_large_is_out_of_range() {
    // Beyond any integer, and beyond the 32 bits the field holds.
    for number in ["99999999999999999999999", "2147483648"] {
        let sandbox = Sandbox::new();
        sandbox.write("spec.yaml", format!("name: s\nversion_number: {number}\n"));
        let out = sandbox
            .evalctl()
            .args(["spec", "validate", "spec.yaml", "--format", "text"])
            .output()
            .unwrap();
        assert_eq!(
            (code(&out), stderr_text(&out)),
            (
                2,
                format!(
                    "error: spec.yaml:2: evaluation_spec.version_number expected an integer, \
                     found {number}, out of range\n"
                )
            )
        );
    }
}

#[test]
fn validate_refuses_a_number_that_is_not_finite_naming_its_path_and_line() {
    // A weight of .nan made every run pass, with no score; .inf anywhere is refused alike.
    for (number, spec) in [
        (
            ".nan",
            "name: s\nversion_number: 1\nscorecard:\n  dimensions:\n    - {key: c, weight: .nan}\n",
        ),
        (
            "-.Inf",
            "name: s\nversion_number: 1\nruntime_limits:\n  max_cost_usd: -.Inf\n",
        ),
    ] {
        let sandbox = Sandbox::new();
        sandbox.write("spec.yaml", spec);
        let out = sandbox
            .evalctl()
            .args(["spec", "validate", "spec.yaml", "--format", "text"])
            .output()
            .unwrap();
        let (line, path) = match number {
            ".nan" => (5, "scorecard.dimensions[0].weight"),
            _ => (4, "runtime_limits.max_cost_usd"),
        };
        assert_eq!(
            (code(&out), stderr_text(&out)),
            (
                2,
                format!(
                    "error: spec.yaml:{line}: evaluation_spec.{path} is not a finite number: a \
                     spec's numbers are finite (YAML's .nan and .inf are not)\n"
                )
            ),
            "{number}"
        );
    }
    // Text is text: a name written `.inf` is the name ".inf".
    let sandbox = Sandbox::new();
    sandbox.write("spec.yaml", "name: .inf\nversion_number: 0\n");
    let out = sandbox
        .evalctl()
        .args(["spec", "validate", "spec.yaml", "--format", "text"])
        .output()
        .unwrap();
    assert_eq!(
        stderr_text(&out),
        "error: spec.yaml:2: evaluation_spec.version_number must be greater than 0\n\
         error: spec.yaml: evaluation_spec.judge_mode must be one of deterministic, llm_judge, \
         hybrid\n\
         error: spec.yaml: evaluation_spec.validators must contain at least one validator\n\
         error: spec.yaml: evaluation_spec.scorecard.dimensions must contain at least one \
         dimension\n"
    );
}

#[test]
fn a_yaml_key_given_twice_is_named_once_where_it_is_given_again() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "dup.yaml",
        "name: x\nversion_number: 1\nscorecard:\n  pass_threshold: 0.5\n  dimensions: []\n  \
         pass_threshold: 0.9\n",
    );
    let out = sandbox
        .evalctl()
        .args(["spec", "validate", "dup.yaml", "--format", "text"])
        .output()
        .unwrap();
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            2,
            "error: dup.yaml:6: evaluation_spec.scorecard.pass_threshold is given twice (first on \
             line 4): keep one\n"
                .to_string()
        )
    );
}

#[test]
fn a_json_pack_nesting_too_deep_anywhere_is_refused_before_it_is_parsed() {
    // A member the spec ignores (`pack`) nesting 16,000 deep took seconds and gigabytes.
    let sandbox = Sandbox::new();
    let depth = 16_000;
    sandbox.write(
        "pack.json",
        format!(
            "{{\"pack\":\n{}{},\"version\":{{\"evaluation_spec\":{{}}}}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        ),
    );
    sandbox.write("runs.jsonl", "{\"id\":\"r\",\"events\":[]}\n");
    for command in [
        &["validate", "pack.json"][..],
        &["score", "pack.json", "runs.jsonl"],
    ] {
        let out = sandbox
            .evalctl()
            .arg("spec")
            .args(command)
            .args(["--format", "text"])
            .output()
            .unwrap();
        assert_eq!(
            (code(&out), stderr_text(&out)),
            (
                2,
                "error: pack.json:2: manifest could not be decoded: arrays and objects nest \
                 deeper than 127 levels (the limit)\n"
                    .to_string()
            ),
            "{command:?}"
        );
    }
}

#[test]
fn validate_reports_the_fixture_pack_in_json() {
    let out = output({
        let mut command = in_repository();
        command.args(["spec", "validate", PACK, "--format", "json"]);
        command
    });
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        json_stdout(&out),
        json!({
            "ok": true,
            "file": "fixtures/spec/pack.yaml",
            "name": "capitals-agent",
            "version_number": 1,
            "judge_mode": "deterministic",
            "validators": 3,
            "metrics": 1,
            "llm_judges": 0,
            "dimensions": 2,
            "strategy": "hybrid"
        })
    );
    assert_eq!(stderr_text(&out), "");
}

#[test]
fn validate_names_an_unknown_yaml_key_by_path_and_line() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "spec.yaml",
        "name: s\nversion_number: 1\njudge_mode: deterministic\nvalidators:\n  - key: v\n    \
         type: exact_match\n    target: final_output\n    expected_from: literal:x\n    \
         wieght: 2\nscorecard:\n  dimensions: [correctness]\n",
    );
    let out = output({
        let mut command = sandbox.evalctl();
        command.args(["spec", "validate", "spec.yaml", "--format", "text"]);
        command
    });
    assert_eq!(code(&out), 2);
    assert_eq!(stdout_text(&out), "");
    assert_eq!(
        stderr_text(&out),
        "error: spec.yaml:9: evaluation_spec.validators[0].wieght unknown key `wieght` \
         (expected one of key, type, target, expected_from, config)\n"
    );
}

/// A JSON spec with four independent problems.
const FOUR_PROBLEMS: &str = r#"{"name": " ", "version_number": 0, "judge_mode": "deterministic",
 "validators": [{"key": "v", "type": "nope", "target": "final_output", "expected_from": "literal:x"}],
 "scorecard": {"dimensions": [{"key": "d", "source": "validators", "validators": ["missing"]}]}}
"#;

#[test]
fn validate_reports_every_problem_of_a_json_spec_at_once() {
    let sandbox = Sandbox::new();
    sandbox.write("spec.json", FOUR_PROBLEMS);
    let text = output({
        let mut command = sandbox.evalctl();
        command.args(["spec", "validate", "spec.json", "--format", "text"]);
        command
    });
    assert_eq!(code(&text), 2);
    assert_eq!(stdout_text(&text), "");
    let problems = [
        "spec.json:1: evaluation_spec.name is required",
        "spec.json:1: evaluation_spec.version_number must be greater than 0",
        "spec.json:2: evaluation_spec.validators[0].type is not a supported validator type \
         (supported: exact_match, contains, regex_match, boolean_assert, fuzzy_match, \
         numeric_match, normalized_match, token_f1, bleu_score, rouge_score, chrf_score, \
         math_equivalence, json_schema, json_path_match, file_exists, file_content_match, \
         file_json_schema, directory_structure, code_execution, tool_call_assertion, \
         postcondition)",
        "spec.json:3: evaluation_spec.scorecard.dimensions[0].validators[0] references unknown \
         validator key \"missing\"",
    ];
    let expected_stderr: String = problems
        .iter()
        .map(|problem| format!("error: {problem}\n"))
        .collect();
    assert_eq!(stderr_text(&text), expected_stderr);

    let json = output({
        let mut command = sandbox.evalctl();
        command.args(["spec", "validate", "spec.json", "--format", "json"]);
        command
    });
    assert_eq!(code(&json), 2);
    assert_eq!(
        json_stdout(&json),
        json!({"ok": false, "exit": 2, "errors": problems})
    );
}

#[test]
fn validate_rejects_a_dimension_naming_a_missing_validator() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "spec.json",
        r#"{"name": "s", "version_number": 1, "judge_mode": "deterministic",
 "validators": [{"key": "v", "type": "exact_match", "target": "final_output", "expected_from": "literal:x"}],
 "scorecard": {"dimensions": [{"key": "d", "source": "validators", "validators": ["v", "ghost"]}]}}"#,
    );
    let out = output({
        let mut command = sandbox.evalctl();
        command.args(["spec", "validate", "spec.json", "--format", "text"]);
        command
    });
    assert_eq!(code(&out), 2);
    assert_eq!(stdout_text(&out), "");
    assert_eq!(
        stderr_text(&out),
        "error: spec.json:3: evaluation_spec.scorecard.dimensions[0].validators[1] references \
         unknown validator key \"ghost\"\n"
    );
}

#[test]
fn validate_print_writes_the_normalised_spec() {
    let out = output({
        let mut command = in_repository();
        command.args([
            "spec",
            "validate",
            "tests/fixtures/spec/legacy.json",
            "--print",
            "--format",
            "text",
        ]);
        command
    });
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(stderr_text(&out), "");
    // Names and keys trimmed, shorthand and built-in dimensions expanded (latency's direction
    // overwritten, its envelope taken from the legacy block and runtime_limits), the strategy
    // defaulted.
    assert_eq!(
        json_stdout(&out),
        json!({
            "name": "legacy-pack",
            "version_number": 2,
            "judge_mode": "deterministic",
            "validators": [{
                "key": "exact",
                "type": "exact_match",
                "target": "final_output",
                "expected_from": "case.expectations.answer"
            }],
            "metrics": [{
                "key": "latency_ms",
                "type": "numeric",
                "collector": "run_total_latency_ms",
                "unit": "ms"
            }],
            "runtime_limits": {"max_duration_ms": 30000},
            "scorecard": {
                "dimensions": [
                    {"key": "correctness", "source": "validators", "better_direction": "higher"},
                    {
                        "key": "latency",
                        "source": "latency",
                        "better_direction": "lower",
                        "normalization": {"target": 1000.0, "max": 30000.0},
                        "weight": 0.5
                    }
                ],
                "strategy": "weighted",
                "normalization": {"latency": {"target_ms": 1000.0}}
            }
        })
    );
}

#[test]
fn spec_files_that_cannot_be_read_are_worded_like_every_other_input() {
    let sandbox = sandbox_with_pack();
    std::fs::create_dir(sandbox.join("adir")).expect("create a directory");
    for (args, problem) in [
        (
            vec!["spec", "validate", "adir"],
            "adir: is a directory, not a file",
        ),
        (
            vec!["spec", "validate", "absent.yaml"],
            "absent.yaml: cannot read: No such file or directory",
        ),
        (
            vec!["spec", "score", "adir", "runs.jsonl"],
            "adir: is a directory, not a file",
        ),
        (
            vec!["spec", "score", "pack.yaml", "adir"],
            "adir: is a directory, not a file",
        ),
        (
            vec!["spec", "score", "pack.yaml", "absent.jsonl"],
            "absent.jsonl: cannot read: No such file or directory",
        ),
    ] {
        let out = output({
            let mut command = sandbox.evalctl();
            command.args(&args).args(["--format", "text"]);
            command
        });
        assert_eq!(code(&out), 2, "{args:?}");
        assert_eq!(stdout_text(&out), "", "{args:?}");
        assert_eq!(stderr_text(&out), format!("error: {problem}\n"), "{args:?}");
    }
}

/// The text summary of scoring the fixture runs.
const FIXTURE_SUMMARY: &str = "\
spec fixtures/spec/pack.yaml scored runs fixtures/spec/runs.jsonl (judges: recorded)
runs: 2   passed: 1   failed: 1   undecided: 0   pass rate: 50.0%   mean overall score: 0.5000

dimension             mean     n  missing
correctness         0.6480     2        0
discipline          0.5000     2        0

validator             mean  pass  fail  errors  unavailable
names_capital       0.5000     1     1       0            0
close_to_reference  0.7959     1     1       0            0
lookup_budget       0.5000     1     1       0            0

exit 1: 1 of 2 runs did not pass
";

/// What scoring the two fixture runs decides, run by run.
fn fixture_verdicts() -> Vec<Value> {
    vec![
        json!({
            "id": "run-france",
            "status": "complete",
            "overall_score": 1.0,
            "passed": true,
            "dimension_scores": {"correctness": 1.0, "discipline": 1.0},
            "verdicts": [
                ["names_capital", "pass"],
                ["close_to_reference", "pass"],
                ["lookup_budget", "pass"]
            ]
        }),
        json!({
            "id": "run-italy",
            "status": "complete",
            "overall_score": 0.0,
            "passed": false,
            "dimension_scores": {"correctness": 0.29591836734693877, "discipline": 0.0},
            "verdicts": [
                ["names_capital", "fail"],
                ["close_to_reference", "fail"],
                ["lookup_budget", "fail"]
            ]
        }),
    ]
}

#[test]
fn score_writes_records_to_stdout_and_the_summary_to_stderr() {
    let out = output({
        let mut command = in_repository();
        command.args(["spec", "score", PACK, RUNS, "--format", "text"]);
        command
    });
    assert_eq!(code(&out), 1, "one run fails: {}", stderr_text(&out));
    let records = jsonl(&stdout_text(&out));
    assert_eq!(
        records.iter().map(verdict).collect::<Vec<_>>(),
        fixture_verdicts()
    );
    assert_eq!(
        records[1]["overall_reason"],
        "hybrid: gated dimension \"discipline\" below pass_threshold"
    );
    assert_eq!(
        records[1]["validator_results"][2]["reason"],
        "matched tool call count 3 > max_count 2"
    );
    assert_eq!(stderr_text(&out), FIXTURE_SUMMARY);
}

#[test]
fn score_ends_with_exit_0_when_every_run_passes() {
    let sandbox = sandbox_with_pack();
    let runs = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(RUNS))
        .expect("read the fixture runs");
    let first = runs.lines().next().expect("a first run");
    sandbox.write("runs.jsonl", format!("{first}\n{first}\n"));
    let out = score(&sandbox, "text", None);
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out),
        "spec pack.yaml scored runs runs.jsonl (judges: recorded)
runs: 2   passed: 2   failed: 0   undecided: 0   pass rate: 100.0%   mean overall score: 1.0000

dimension             mean     n  missing
correctness         1.0000     2        0
discipline          1.0000     2        0

validator             mean  pass  fail  errors  unavailable
names_capital       1.0000     2     0       0            0
close_to_reference  1.0000     2     0       0            0
lookup_budget       1.0000     2     0       0            0

exit 0: all 2 runs passed
"
    );
}

#[test]
fn score_counts_runs_without_a_verdict_among_those_that_did_not_pass() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "spec.json",
        r#"{"name": "s", "version_number": 1, "judge_mode": "deterministic",
 "validators": [{"key": "a", "type": "exact_match", "target": "final_output", "expected_from": "case.expectations.answer"}],
 "scorecard": {"dimensions": ["correctness"]}}"#,
    );
    let run = r#"{"challenge_inputs": [], "events": []}"#;
    sandbox.write("runs.jsonl", format!("{run}\n{run}\n"));
    let out = output({
        let mut command = sandbox.evalctl();
        command.args([
            "spec",
            "score",
            "spec.json",
            "runs.jsonl",
            "--format",
            "json",
        ]);
        command.args(["--output", "records.jsonl"]);
        command
    });
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out),
        "exit 1: 2 of 2 runs did not pass (2 without a verdict)\n"
    );
    let summary = json_stdout(&out);
    assert_eq!(
        json!([
            summary["undecided"],
            summary["exit"],
            summary["exit_reason"]
        ]),
        json!([2, 1, "2 of 2 runs did not pass (2 without a verdict)"])
    );
}

#[test]
fn score_with_output_appends_records_and_prints_the_json_summary() {
    let sandbox = Sandbox::new();
    // An earlier result line (of whichever command): appended to, never replaced.
    let earlier = json!({"candidate_id": "earlier", "split": "single", "example_index": null,
                         "example_line": null, "score": 1.0, "error": null});
    sandbox.write("records.jsonl", format!("{earlier}\n"));
    let out = output({
        let mut command = in_repository();
        command
            .args(["spec", "score", PACK, RUNS, "--format", "json", "--output"])
            .arg(sandbox.join("records.jsonl"));
        command
    });
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    assert_eq!(stderr_text(&out), "exit 1: 1 of 2 runs did not pass\n");
    let summary = json_stdout(&out);
    assert_eq!(
        json!({
            "runs": summary["runs"],
            "passed": summary["passed"],
            "failed": summary["failed"],
            "undecided": summary["undecided"],
            "pass_rate": summary["pass_rate"],
            "overall_score": summary["overall_score"],
            "exit": summary["exit"],
            "exit_reason": summary["exit_reason"],
        }),
        json!({
            "runs": 2,
            "passed": 1,
            "failed": 1,
            "undecided": 0,
            "pass_rate": 0.5,
            "overall_score": {"n": 2, "mean": 0.5, "missing": 0},
            "exit": 1,
            "exit_reason": "1 of 2 runs did not pass",
        })
    );
    let lines = sandbox.jsonl("records.jsonl");
    assert_eq!(lines[0], earlier, "appended, not replaced");
    assert_eq!(
        lines[1..].iter().map(verdict).collect::<Vec<_>>(),
        fixture_verdicts()
    );
}

#[test]
fn score_reports_every_bad_runs_line_and_writes_nothing() {
    let sandbox = sandbox_with_pack();
    let runs = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(RUNS))
        .expect("read the fixture runs");
    let (france, italy) = runs.split_once('\n').expect("two runs");
    sandbox.write(
        "runs.jsonl",
        format!(
            "{france}\n{{\"events\": [{{\"type\": 3}}]}}\n[1, 2]\nnot json\n\
             {{\"events\": [{{\"sequence_number\": 1}}]}}\n\
             {{\"challenge_inputs\": [[\"c\", \"k\"]], \"events\": []}}\n{italy}"
        ),
    );
    let out = output({
        let mut command = sandbox.evalctl();
        command.args([
            "spec",
            "score",
            "pack.yaml",
            "runs.jsonl",
            "--output",
            "records.jsonl",
            "--format",
            "text",
        ]);
        command
    });
    assert_eq!(code(&out), 2);
    assert_eq!(stdout_text(&out), "");
    assert_eq!(
        stderr_text(&out),
        "error: runs.jsonl:2: not a run record: events[0].type: expected a string, found 3 at column 22\n\
         error: runs.jsonl:3: expected a JSON object, found array\n\
         error: runs.jsonl:4: invalid JSON: expected ident at column 2\n\
         error: runs.jsonl:5: not a run record: events[0]: missing required key `type` at column 34\n\
         error: runs.jsonl:6: not a run record: challenge_inputs[0]: expected an object, found array at column 23\n"
    );
    assert!(
        !sandbox.exists("records.jsonl"),
        "the output file is not even created"
    );
}

#[test]
fn score_rejects_a_dataset_given_as_the_runs_file_and_takes_a_run_without_events() {
    let out = output({
        let mut command = in_repository();
        command.args(["spec", "score", PACK, DATASET, "--format", "text"]);
        command
    });
    assert_eq!(code(&out), 2);
    assert_eq!(stdout_text(&out), "");
    let not_a_run = "not a run record: it has none of events, challenge_inputs, \
                     llm_judge_results and human_preference_score (is this the runs file?)";
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: {DATASET}:1: {not_a_run}\n\
             error: {DATASET}:2: {not_a_run}\n"
        )
    );
    let sandbox = sandbox_with_pack();
    // `null` members are absent ones.
    sandbox.write("runs.jsonl", "{\"id\": 1, \"events\": null}\n");
    let out = score(&sandbox, "text", None);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        format!("error: runs.jsonl:1: {not_a_run}\n")
    );
    sandbox.write("runs.jsonl", "{\"id\": \"quiet\", \"events\": []}\n");
    // Scored as the reference scores it (the gate dimension alone decides).
    let out = score(&sandbox, "json", None);
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(jsonl(&stdout_text(&out))[0]["id"], "quiet");
}

#[test]
fn score_rejects_a_json_object_that_is_not_a_run_record() {
    let sandbox = sandbox_with_pack();
    sandbox.write("runs.jsonl", "{\"challenge_inputs\": 5, \"events\": []}\n");
    let out = score(&sandbox, "json", None);
    assert_eq!(code(&out), 2);
    assert_eq!(
        json_stdout(&out),
        json!({
            "ok": false,
            "exit": 2,
            "errors": ["runs.jsonl:1: not a run record: challenge_inputs: expected a sequence, found 5 at column 22"]
        })
    );
    assert_eq!(
        stderr_text(&out),
        "error: runs.jsonl:1: not a run record: challenge_inputs: expected a sequence, found 5 at column 22\n"
    );
}

#[test]
fn score_rejects_deeply_nested_json_without_crashing() {
    let sandbox = sandbox_with_pack();
    let deep = format!(
        "{{\"id\": \"deep\", \"events\": [], \"human_preference_score\": {}{}}}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    sandbox.write("runs.jsonl", deep);
    let out = score(&sandbox, "text", None);
    assert_eq!(code(&out), 2);
    assert_eq!(stdout_text(&out), "");
    assert_eq!(
        stderr_text(&out),
        "error: runs.jsonl:1: invalid JSON: arrays and objects nest deeper than 127 levels (the limit) at column 182\n"
    );
}

#[test]
fn score_rejects_an_empty_runs_file() {
    let sandbox = sandbox_with_pack();
    sandbox.write("runs.jsonl", "");
    let out = score(&sandbox, "text", None);
    assert_eq!(code(&out), 2);
    assert_eq!(stdout_text(&out), "");
    assert_eq!(
        stderr_text(&out),
        "error: runs.jsonl: no runs (expected one run record per line)\n"
    );
}

#[test]
fn run_spec_scores_each_candidate_over_the_dataset() {
    let sandbox = Sandbox::new();
    let out = output({
        let mut command = in_repository();
        command
            .args([
                "run",
                "--spec",
                PACK,
                "--dataset",
                DATASET,
                "--candidate",
                "The capital of France is Paris.",
                "--candidate",
                "Rome.",
                "--format",
                "json",
                "--output",
            ])
            .arg(sandbox.join("calls.jsonl"));
        command
    });
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    let summary = json_stdout(&out);
    assert_eq!(
        summary["evaluator"],
        json!({"kind": "spec", "target": PACK})
    );
    let candidates: Vec<Value> = summary["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .map(|candidate| {
            json!({
                "id": candidate["id"],
                "score": candidate["score"],
                "min": candidate["train"]["min"],
                "max": candidate["train"]["max"],
                "pass_rate": candidate["pass_rate"],
            })
        })
        .collect();
    assert_eq!(
        candidates,
        vec![
            json!({"id": "cand-1", "score": 0.7083333333333334, "min": 0.4166666666666667,
                   "max": 1.0, "pass_rate": 0.5}),
            json!({"id": "cand-2", "score": 0.3790849673202614, "min": 0.1111111111111111,
                   "max": 0.6470588235294118, "pass_rate": 0.0}),
        ]
    );
    let calls: Vec<Value> = sandbox
        .jsonl("calls.jsonl")
        .iter()
        .map(|call| {
            json!([
                call["candidate_id"],
                call["example_line"],
                call["score"],
                call["passed"],
                call["side_info"]["validators_not_passed"],
            ])
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            json!(["cand-1", 1, 1.0, true, []]),
            json!(["cand-1", 2, 0.4166666666666667, false, ["names_capital"]]),
            json!([
                "cand-2",
                1,
                0.1111111111111111,
                false,
                ["names_capital", "close_to_reference"]
            ]),
            json!([
                "cand-2",
                2,
                0.6470588235294118,
                false,
                ["close_to_reference"]
            ]),
        ]
    );
}

#[test]
fn live_judges_without_a_spec_is_a_usage_error() {
    let out = output({
        let mut command = in_repository();
        command.args([
            "run",
            "--live-judges",
            "--checks",
            "fixtures/checks/capitals.json",
            "--candidate",
            "x",
            "--format",
            "text",
        ]);
        command
    });
    assert_eq!(code(&out), 2);
    assert_eq!(stdout_text(&out), "");
    assert_eq!(
        stderr_text(&out),
        "error: --live-judges: only applies to --spec\n"
    );
}

/// A spec with one rubric judge on an OpenAI model.
const JUDGED_SPEC: &str = "\
name: judged
version_number: 1
judge_mode: hybrid
validators:
  - {key: says_paris, type: contains, target: final_output, expected_from: \"literal:Paris\"}
llm_judges:
  - {key: helpful, mode: rubric, model: gpt-4.1-mini, rubric: Is the answer helpful?, samples: 1}
scorecard:
  dimensions:
    - {key: correctness, source: validators}
    - {key: helpfulness, source: llm_judge, judge_key: helpful}
";

#[test]
fn live_judges_without_a_key_are_a_usage_error() {
    let sandbox = Sandbox::new();
    sandbox.write("judged.yaml", JUDGED_SPEC);
    sandbox.write("runs.jsonl", "{\"events\": []}\n");
    let missing_key = "error: OPENAI_API_KEY: not set: judge \"helpful\" needs it for model \
                       \"gpt-4.1-mini\" (export it, or point --judge-base-url at a local server \
                       that needs no key)\n";
    for args in [
        vec![
            "spec",
            "score",
            "judged.yaml",
            "runs.jsonl",
            "--judges",
            "live",
        ],
        vec![
            "run",
            "--spec",
            "judged.yaml",
            "--live-judges",
            "--candidate",
            "Paris",
        ],
    ] {
        let out = output({
            let mut command = sandbox.evalctl();
            command.args(&args).args(["--format", "text"]);
            command
        });
        assert_eq!(code(&out), 2, "{args:?}");
        assert_eq!(stdout_text(&out), "", "{args:?}");
        assert_eq!(stderr_text(&out), missing_key, "{args:?}");
    }
}

/// A fake chat-completions API on 127.0.0.1 whose every reply scores 4 (of 1..5) and reports
/// 100 + 20 tokens.
fn judge_api() -> Server {
    Server::start(|_, _| judge_reply())
}

/// The fake judge API's reply.
fn judge_reply() -> Reply {
    Reply::json(
        json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": "gpt-4.1-mini",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": "{\"score\": 4, \"reasoning\": \"ok\"}"},
                "finish_reason": "stop"
            }],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        })
        .to_string(),
    )
}

/// `spec score --judges live --retries 0` of the fixture runs under `spec`, at `server`.
fn score_live(sandbox: &Sandbox, spec: &str, server: &Server) -> std::process::Output {
    score_live_at(sandbox, spec, &server.url("/v1"))
}

/// [`score_live`] with the judges at `base_url`.
fn score_live_at(sandbox: &Sandbox, spec: &str, base_url: &str) -> std::process::Output {
    sandbox.write("judged.yaml", spec);
    output({
        let mut command = in_repository();
        command
            .args(["spec", "score"])
            .arg(sandbox.join("judged.yaml"))
            .args([
                RUNS,
                "--judges",
                "live",
                "--retries",
                "0",
                "--format",
                "text",
            ])
            .args(["--judge-base-url", base_url]);
        command
    })
}

#[test]
fn live_judges_score_each_run_through_the_judge_base_url() {
    let sandbox = Sandbox::new();
    let server = judge_api();
    let out = score_live(&sandbox, JUDGED_SPEC, &server);
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    let records = jsonl(&stdout_text(&out));
    let judged: Vec<Value> = records
        .iter()
        .map(|record| {
            let result = &record["llm_judge_results"][0];
            json!([
                record["id"],
                result["judge_key"],
                result["normalized_score"],
                result["sample_count"],
                record["dimension_scores"]["helpfulness"],
            ])
        })
        .collect();
    assert_eq!(
        judged,
        vec![
            json!(["run-france", "helpful", 0.75, 1, 0.75]),
            json!(["run-italy", "helpful", 0.75, 1, 0.75]),
        ]
    );
    let requests = server.requests();
    assert_eq!(
        requests[0].path, "/v1/models",
        "the endpoint is checked first"
    );
    let requests = &requests[1..];
    assert_eq!(requests.len(), 2, "one sample per run");
    for request in requests {
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(
            request.header("authorization"),
            None,
            "a local URL needs no key"
        );
        let body: Value = serde_json::from_slice(&request.body).expect("a JSON body");
        assert_eq!(
            json!([body["model"], body["temperature"]]),
            json!(["gpt-4.1-mini", 0.0])
        );
    }
}

#[test]
fn a_live_judges_429_is_waited_out_and_named_before_the_summary() {
    let sandbox = Sandbox::new();
    let posts = std::sync::atomic::AtomicUsize::new(0);
    let server = Server::start(move |request, _| {
        let first_post = request.method == "POST"
            && posts.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
        match first_post {
            true => Reply::status(429, r#"{"error": {"message": "slow down"}}"#)
                .header("retry-after-ms", "20"),
            false => judge_reply(),
        }
    });
    let out = score_live(&sandbox, JUDGED_SPEC, &server);
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(jsonl(&stdout_text(&out)).len(), 2);
    assert_eq!(
        stderr_text(&out).lines().next(),
        Some(
            format!(
                "rate limited: gpt-4.1-mini at {} answered 1 of 3 requests with 429 Too Many \
                 Requests: 1 waited out and sent again (0.02s of waiting, summed over the calls)",
                server.url("/v1")
            )
            .as_str()
        )
    );
}

#[test]
fn live_judges_whose_key_the_api_rejects_stop_the_scoring_before_any_run() {
    let sandbox = Sandbox::new();
    let server = Server::start(|_, _| Reply::status(401, "{\"error\": \"bad key\"}"));
    let out = score_live(&sandbox, JUDGED_SPEC, &server);
    assert_eq!(
        (code(&out), stdout_text(&out), stderr_text(&out)),
        (
            3,
            String::new(),
            format!(
                "error: live judges cannot run: judge helpful: model gpt-4.1-mini at {}: the \
                 API wants a key, and OPENAI_API_KEY is not set (HTTP 401 from the models \
                 endpoint)\n",
                server.url("/v1")
            )
        )
    );
    assert_eq!(server.request_count(), 1, "one check, no judge call");
}

#[test]
fn live_judges_asking_for_more_samples_than_the_limit_are_unavailable_without_a_call() {
    let sandbox = Sandbox::new();
    let server = judge_api();
    let limited = JUDGED_SPEC.replace("samples: 1", "samples: 3")
        + "  judge_limits: {max_samples_per_judge: 2}\n";
    let out = score_live(&sandbox, &limited, &server);
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    let records = jsonl(&stdout_text(&out));
    assert_eq!(
        records[0]["llm_judge_results"][0]["reason"],
        "judge_limits.max_samples_per_judge is 2 but judge \"helpful\" asks for 3 samples per model"
    );
    assert_eq!(
        records[0]["dimension_results"][1],
        json!({
            "dimension": "helpfulness",
            "state": "unavailable",
            "reason": "judge_limits.max_samples_per_judge is 2 but judge \"helpful\" asks for 3 samples per model",
            "better_direction": "higher"
        })
    );
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v1/models"], "no judge call is made");
}

#[test]
fn score_reads_runs_from_stdin_but_not_both_inputs() {
    let runs = std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(RUNS))
        .expect("read the fixture runs");
    let out = output({
        let mut command = in_repository();
        command
            .args(["spec", "score", PACK, "-", "--format", "text"])
            .write_stdin(runs);
        command
    });
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    assert_eq!(
        jsonl(&stdout_text(&out))
            .iter()
            .map(verdict)
            .collect::<Vec<_>>(),
        fixture_verdicts()
    );
    assert_eq!(
        stderr_text(&out),
        FIXTURE_SUMMARY.replace("runs fixtures/spec/runs.jsonl", "runs <stdin>")
    );

    let both = output({
        let mut command = in_repository();
        command
            .args(["spec", "score", "-", "-", "--format", "text"])
            .write_stdin("");
        command
    });
    assert_eq!(code(&both), 2);
    assert_eq!(stdout_text(&both), "");
    assert_eq!(
        stderr_text(&both),
        "error: spec score: the spec and the runs cannot both be read from stdin (-)\n"
    );
}

#[test]
fn a_new_output_file_holds_the_records_stdout_would_show_whatever_the_runs_file_foretold() {
    let sandbox = sandbox_with_pack();
    let runs = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(RUNS))
        .expect("read the fixture runs");
    let (france, italy) = runs.trim_end().split_once('\n').expect("two runs");
    // Two runs, then nine runs and a line of a no-break space, which is blank to the reader but
    // counted as a record when the output is foreseen: the `run` member (9 calls) is then
    // shorter than the room each record was given (10), and the records are written again.
    let nine = [france, italy].repeat(5)[..9].join("\n");
    for (case, content) in [
        ("two runs", format!("{france}\n\n{italy}\n")),
        ("nine runs", format!("{nine}\n\u{a0}\n")),
    ] {
        sandbox.write("runs.jsonl", &content);
        let to_stdout = score(&sandbox, "json", None);
        assert_eq!(code(&to_stdout), 1, "{case}");
        let records = stdout_text(&to_stdout);
        let name = format!("{}.jsonl", case.replace(' ', "-"));
        assert_eq!(code(&score(&sandbox, "json", Some(&name))), 1, "{case}");
        assert_eq!(sandbox.read(&name), records, "{case}");
        let lines = jsonl(&records);
        assert_eq!(lines.len(), content.lines().count() - 1, "{case}");
        assert_eq!(
            lines.last().map(|line| line["run"]["plan_calls"].clone()),
            Some(json!(lines.len())),
            "{case}"
        );
    }
}

/// `spec score judged.yaml runs.jsonl --judges live` in `sandbox` against `server`, with
/// `--output FILE` when one is named, as a process not yet started.
fn score_live_process(
    sandbox: &Sandbox,
    server: &Server,
    output_file: Option<&str>,
) -> std::process::Command {
    let mut command = crate::common::evalctl_process();
    command
        .current_dir(sandbox.path())
        .args([
            "spec",
            "score",
            "judged.yaml",
            "runs.jsonl",
            "--judges",
            "live",
        ])
        .args(["--format", "json", "--judge-base-url"])
        .arg(server.url("/v1"))
        .args(
            output_file
                .map(|file| ["--output", file])
                .into_iter()
                .flatten(),
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    command
}

#[test]
fn an_interrupted_scoring_writes_the_runs_it_scored_to_a_new_output_and_its_readers_see_it_partial()
{
    use std::sync::mpsc;
    use std::sync::{Arc, Mutex};
    let sandbox = Sandbox::new();
    sandbox.write("judged.yaml", JUDGED_SPEC);
    let runs = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(RUNS))
        .expect("read the fixture runs");
    let (france, italy) = runs.trim_end().split_once('\n').expect("two runs");
    // What two runs scored whole write: the records an interrupted scoring of a longer file
    // must leave once it has scored those two.
    sandbox.write("runs.jsonl", format!("{france}\n{italy}\n"));
    let whole = score_live_process(&sandbox, &judge_api(), None)
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&whole), 0, "{}", stderr_text(&whole));
    let two_runs = stdout_text(&whole);
    // Three runs: the room foreseen fits the member of two; ten runs: it does not.
    for runs_in_file in [3, 10] {
        let lines = [france, italy].repeat(runs_in_file)[..runs_in_file].join("\n");
        sandbox.write("runs.jsonl", format!("{lines}\n"));
        let (arrived, second_call) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let released = Arc::new(Mutex::new(released));
        // Request 0 checks the key (`GET /v1/models`), 1 judges the first run, 2 the second.
        let server = Server::start(move |_, index| {
            if index == 2 {
                arrived.send(()).expect("the test waits");
                released
                    .lock()
                    .expect("one holder")
                    .recv()
                    .expect("the test releases the call");
            }
            judge_reply()
        });
        let name = format!("records-{runs_in_file}.jsonl");
        let child = score_live_process(&sandbox, &server, Some(&name))
            .spawn()
            .expect("evalctl starts");
        second_call
            .recv_timeout(crate::common::TIMEOUT)
            .expect("the second run's judge is called");
        // SAFETY: kill only sends a signal to the child this test started and still holds.
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
        release.send(()).expect("the call is held");
        let out = child.wait_with_output().expect("evalctl ends");
        assert_eq!(
            code(&out),
            130,
            "{runs_in_file} runs: {}",
            stderr_text(&out)
        );
        // The records of the two runs scored whole, but of a plan of every run in the file.
        let expected: Vec<Value> = jsonl(&two_runs)
            .into_iter()
            .map(|mut record| {
                record["run"]["plan_calls"] = json!(runs_in_file);
                record
            })
            .collect();
        assert_eq!(jsonl(&sandbox.read(&name)), expected, "{runs_in_file} runs");
        // So a reader of the records sees a partial scoring, not a complete one.
        let summary = sandbox
            .evalctl()
            .args(["summarize", &name, "--format", "json"])
            .output()
            .expect("evalctl runs");
        assert_eq!(code(&summary), 1, "{}", stderr_text(&summary));
        assert_eq!(
            json_stdout(&summary)["exit_reason"],
            json!(format!(
                "{} of {runs_in_file} calls absent: the run did not finish (scoring again to a \
                 new --output completes it; --allow-partial summarizes what is there); all 2 \
                 calls succeeded",
                runs_in_file - 2
            ))
        );
    }
}

#[test]
fn a_failed_write_of_the_records_still_prints_the_summary_and_exits_4() {
    let out = output({
        let mut command = in_repository();
        command.args([
            "spec",
            "score",
            PACK,
            RUNS,
            "--format",
            "json",
            "--output",
            "/dev/full",
        ]);
        command
    });
    assert_eq!(code(&out), 4, "{}", stderr_text(&out));
    let summary = json_stdout(&out);
    assert_eq!(
        (&summary["runs"], &summary["exit"], &summary["exit_reason"]),
        (
            &json!(2),
            &json!(4),
            &json!("the records could not be written to /dev/full (see stderr)")
        )
    );
    assert_eq!(
        stderr_text(&out),
        "error: /dev/full: writing results failed: No space left on device\n\
         exit 4: the records could not be written to /dev/full (see stderr)\n"
    );
}

/// `spec score --judges live --retries 0` of the fixture runs under [`JUDGED_SPEC`], whose judge
/// API answers the chat-completions call numbered `n` (from 1) with `answer(n)`.
fn score_live_answering(sandbox: &Sandbox, answer: fn(usize) -> Reply) -> std::process::Output {
    let server = Server::start(move |request, index| match request.path.as_str() {
        "/v1/models" => Reply::json("{\"object\": \"list\", \"data\": []}"),
        _ => answer(index),
    });
    score_live(sandbox, JUDGED_SPEC, &server)
}

#[test]
fn live_judge_calls_that_give_no_score_are_counted_in_a_warning() {
    fn overloaded() -> Reply {
        Reply::status(500, "{\"error\": \"the model is overloaded\"}")
    }
    let sandbox = Sandbox::new();
    let out = score_live_answering(&sandbox, |_| overloaded());
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out),
        format!(
            "warning: every one of the 2 live judge calls gave no score (the first: HTTP 500 \
             Internal Server Error: {{\"error\": \"the model is overloaded\"}}); a judge without \
             a score is left out of its run's scoring\n\
             spec {} scored runs fixtures/spec/runs.jsonl (judges: live)\n\
             runs: 2   passed: 2   failed: 0   undecided: 0   pass rate: 100.0%   mean overall \
             score: 0.5000\n\
             \n\
             dimension      mean     n  missing\n\
             correctness  0.5000     2        0\n\
             helpfulness       -     0        2\n\
             \n\
             validator      mean  pass  fail  errors  unavailable\n\
             says_paris   0.5000     1     1       0            0\n\
             \n\
             exit 0: all 2 runs passed\n",
            sandbox.join("judged.yaml").display()
        )
    );
    // One call of two fails (the models check is request 0).
    let out = score_live_answering(&sandbox, |n| match n {
        1 => overloaded(),
        _ => judge_reply(),
    });
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out).lines().next(),
        Some(
            "warning: 1 of 2 live judge calls gave no score (the first: HTTP 500 Internal Server \
             Error: {\"error\": \"the model is overloaded\"}); a judge without a score is left \
             out of its run's scoring"
        )
    );
    // Every call scored: no warning.
    let out = score_live_answering(&sandbox, |_| judge_reply());
    assert!(
        stderr_text(&out).starts_with("spec "),
        "{}",
        stderr_text(&out)
    );
}

#[test]
fn live_judges_whose_api_cannot_be_reached_name_the_url_they_tried() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let out = score_live_at(&Sandbox::new(), JUDGED_SPEC, &url);
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            3,
            format!(
                "error: live judges cannot run: judge helpful: model gpt-4.1-mini at {url}: \
                 connection refused — is the server running?\n"
            )
        )
    );
}

#[test]
fn a_recorded_judge_score_outside_zero_to_one_is_refused_with_its_line() {
    let sandbox = Sandbox::new();
    sandbox.write("judged.yaml", JUDGED_SPEC);
    let judged = |score: f64| {
        json!({"events": [], "llm_judge_results": [
            {"judge_key": "helpful", "mode": "rubric", "normalized_score": score, "payload": {}}
        ]})
        .to_string()
    };
    sandbox.write(
        "runs.jsonl",
        format!("{}\n{}\n{}\n", judged(0.5), judged(1.7), judged(-0.2)),
    );
    let out = output({
        let mut command = sandbox.evalctl();
        command.args([
            "spec",
            "score",
            "judged.yaml",
            "runs.jsonl",
            "--format",
            "text",
        ]);
        command
    });
    assert_eq!(
        (code(&out), stdout_text(&out), stderr_text(&out)),
        (
            2,
            String::new(),
            "error: runs.jsonl:2: llm_judge_results[0].normalized_score is 1.7: a judge's \
             normalized score is in [0, 1]\n\
             error: runs.jsonl:3: llm_judge_results[0].normalized_score is -0.2: a judge's \
             normalized score is in [0, 1]\n"
                .to_string()
        )
    );
}

#[test]
fn run_with_live_judges_warns_when_judge_calls_gave_no_score() {
    let server = Server::start(|request, _| match request.path.as_str() {
        "/v1/models" => Reply::json("{\"object\": \"list\", \"data\": []}"),
        _ => Reply::status(500, "{\"error\": \"the model is overloaded\"}"),
    });
    let out = run_live_at(&Sandbox::new(), &server, &[]);
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out).lines().next(),
        Some(
            "warning: the one live judge call gave no score (the first: HTTP 500 Internal \
             Server Error: {\"error\": \"the model is overloaded\"}); a judge without a score is \
             left out of its run's scoring"
        )
    );
}

/// `run --spec judged.yaml --live-judges --candidate Paris` against `server`, with `extra`.
fn run_live_at(sandbox: &Sandbox, server: &Server, extra: &[&str]) -> std::process::Output {
    sandbox.write("judged.yaml", JUDGED_SPEC);
    output({
        let mut command = sandbox.evalctl();
        command
            .args(["run", "--spec", "judged.yaml", "--live-judges"])
            .args(["--candidate", "Paris", "--retries", "0", "--format", "text"])
            .args(extra)
            .arg("--judge-base-url")
            .arg(server.url("/v1"));
        command
    })
}

#[test]
fn run_with_live_judges_checks_their_endpoint_before_any_call() {
    let sandbox = Sandbox::new();
    let server = Server::start(|_, _| Reply::status(401, "{\"error\": \"bad key\"}"));
    let out = run_live_at(&sandbox, &server, &[]);
    assert_eq!(
        (code(&out), stdout_text(&out), stderr_text(&out)),
        (
            3,
            String::new(),
            format!(
                "error: evaluator preflight failed for spec file judged.yaml: live judges cannot \
                 run: judge helpful: model gpt-4.1-mini at {}: the API wants a key, and \
                 OPENAI_API_KEY is not set (HTTP 401 from the models endpoint)\n",
                server.url("/v1")
            )
        )
    );
    assert_eq!(server.request_count(), 1, "one check, no judge call");
}

#[test]
fn run_with_live_judges_gives_each_judge_call_its_timeout() {
    let sandbox = Sandbox::new();
    // The judge sets no timeout_ms: --timeout 1 is its limit, not a minute.
    let server = Server::start(|request, _| match request.path.as_str() {
        "/v1/models" => Reply::json("{\"object\": \"list\", \"data\": []}"),
        _ => judge_reply().after(std::time::Duration::from_secs(60)),
    });
    let out = run_live_at(&sandbox, &server, &["--timeout", "1"]);
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out).lines().next(),
        Some(
            "warning: the one live judge call gave no score (the first: no answer within 1s); a \
             judge without a score is left out of its run's scoring"
        )
    );
}

#[test]
fn validate_warns_that_a_reliability_dimension_without_its_metrics_is_always_unavailable() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "spec.yaml",
        "name: r\nversion_number: 1\njudge_mode: deterministic\nvalidators:\n  - {key: says_paris, \
         type: contains, target: final_output, expected_from: \"literal:Paris\"}\nmetrics:\n  - \
         {key: done, type: boolean, collector: run_completed_successfully}\nscorecard:\n  \
         dimensions:\n    - correctness\n    - reliability\n",
    );
    let validated = || {
        let out = sandbox
            .evalctl()
            .args(["spec", "validate", "spec.yaml", "--format", "text"])
            .output()
            .unwrap();
        (code(&out), stderr_text(&out))
    };
    let warning = "warning: spec.yaml:11: evaluation_spec.scorecard.dimensions[1] \"reliability\" \
                   will be unavailable in every run: reliability reads the metrics whose \
                   collectors are run_completed_successfully and run_failure_count, and no \
                   metric has run_failure_count\n";
    assert_eq!(validated(), (0, warning.to_string()));
    // With an error beside it, the warning comes first, not once the error is fixed.
    sandbox.write(
        "spec.yaml",
        sandbox
            .read("spec.yaml")
            .replace("version_number: 1", "version_number: 0"),
    );
    assert_eq!(
        validated(),
        (
            2,
            format!(
                "{warning}error: spec.yaml:2: evaluation_spec.version_number must be greater \
                 than 0\n"
            )
        )
    );
}

#[test]
fn a_stringified_json_value_is_not_html_escaped() {
    // Go's encoder writes `<` as `\u003c`: a Go artefact evalctl does not copy (docs/spec.md).
    let spec = json!({
        "name": "html", "version_number": 1, "judge_mode": "deterministic",
        "validators": [{"key": "payload", "type": "exact_match", "target": "case.payload",
                        "expected_from": "literal:{\"q\":\"a<b && c>d\"}"}],
        "scorecard": {"dimensions": ["correctness"]}
    });
    let run = json!({
        "challenge_inputs": [{"challenge_key": "c", "case_key": "k", "item_key": "i",
                              "payload": {"q": "a<b && c>d"}}],
        "events": [{"type": "system.run.completed", "sequence_number": 1,
                    "occurred_at": "2026-01-01T00:00:00Z", "payload": {"final_output": "x"}}]
    });
    let record = crate::spec_support::score(&spec, &run.to_string()).unwrap();
    let result = &record["validator_results"][0];
    assert_eq!(
        (&result["verdict"], &result["actual_value"]),
        (&json!("pass"), &json!("{\"q\":\"a<b && c>d\"}"))
    );
}

#[test]
fn a_runs_total_tokens_are_its_input_and_output_when_it_reports_no_total() {
    // evaluation-spec §4: run.completed's total, else usage.total_tokens, else the calls' totals,
    // else input + output when both are known.
    let spec = json!({
        "name": "tokens", "version_number": 1, "judge_mode": "deterministic",
        "metrics": [{"key": "total", "type": "numeric", "collector": "run_total_tokens"}],
        "validators": [{"key": "v", "type": "exact_match", "target": "final_output",
                        "expected_from": "literal:x"}],
        "scorecard": {"dimensions": ["correctness"]}
    });
    let run = json!({
        "challenge_inputs": [{"challenge_key": "c", "case_key": "k", "item_key": "i"}],
        "events": [{"type": "system.run.completed", "sequence_number": 1,
                    "occurred_at": "2026-01-01T00:00:00Z",
                    "payload": {"final_output": "x", "input_tokens": 10, "output_tokens": 5}}]
    });
    let record = crate::spec_support::score(&spec, &run.to_string()).unwrap();
    let total = &record["metric_results"][0];
    assert_eq!(
        (&total["state"], &total["numeric_value"]),
        (&json!("available"), &json!(15.0)),
        "{total}"
    );
}

#[test]
fn regex_match_takes_re2s_ascii_classes_quoting_and_limits() {
    // evaluation-spec §2.2 compiles the pattern as RE2: `\d`, `\s`, `\w`, `\b` are ASCII-only,
    // `\Q…\E` quotes, a brace of no repeat is a literal, and a repeat count above 1000, a
    // repeat of a repeat and the `x` flag do not compile.
    let regex = |key: &str, target: &str, pattern: &str| {
        json!({"key": key, "type": "regex_match", "target": target,
               "expected_from": format!("literal:{pattern}")})
    };
    let spec = json!({
        "name": "re", "version_number": 1, "judge_mode": "deterministic",
        "validators": [
            regex("digits", "final_output", r"^\d+$"),
            regex("space", "case.payload.nbsp", r"a\sb"),
            regex("word", "case.payload.e", r"^\w$"),
            regex("boundary", "case.payload.xea", r"é\b"),
            regex("repeat", "case.payload.e", "a{1001}"),
            regex("quoted", "case.payload.dots", r"^a\Q.*\E{,2}$"),
            regex("quoted_not", "case.payload.e", r"\Q.*\E"),
            regex("nested", "case.payload.e", "é**"),
            regex("x_flag", "case.payload.e", "(?x) é"),
        ],
        "scorecard": {"dimensions": ["correctness"]}
    });
    let run = json!({
        "challenge_inputs": [{"challenge_key": "c", "case_key": "k", "item_key": "i",
                              "payload": {"nbsp": "a\u{a0}b", "e": "é", "xea": "xéay",
                                          "dots": "a.*{,2}"}}],
        "events": [{"type": "system.run.completed", "sequence_number": 1,
                    "occurred_at": "2026-01-01T00:00:00Z",
                    "payload": {"final_output": "\u{663}\u{664}"}}]
    });
    let record = crate::spec_support::score(&spec, &run.to_string()).unwrap();
    let verdicts: Vec<(Value, Value)> = (record["validator_results"].as_array().unwrap().iter())
        .map(|result| (result["verdict"].clone(), result["reason"].clone()))
        .collect();
    assert_eq!(
        verdicts,
        [
            (json!("fail"), Value::Null),
            (json!("fail"), Value::Null),
            (json!("fail"), Value::Null),
            (json!("pass"), Value::Null),
            (
                json!("error"),
                json!(
                    "invalid regex pattern: invalid repeat count: `{1001}` (RE2 allows at most \
                       1000, counted 1001)"
                )
            ),
            (json!("pass"), Value::Null),
            (json!("fail"), Value::Null),
            (
                json!("error"),
                json!("invalid regex pattern: invalid nested repetition operator: `**`")
            ),
            (
                json!("error"),
                json!("invalid regex pattern: invalid or unsupported Perl syntax: `(?x`")
            ),
        ]
    );
}

/// `spec validate FILE --format text` of each of `files` in `sb`: its exit code and stderr.
fn validated(sb: &Sandbox, files: &[&str]) -> Vec<(i32, String)> {
    (files.iter())
        .map(|file| {
            let out = sb
                .evalctl()
                .args(["spec", "validate", file, "--format", "text"])
                .output()
                .unwrap();
            (code(&out), stderr_text(&out))
        })
        .collect()
}

#[test]
fn a_null_or_blank_spec_is_said_plainly() {
    // No near miss of `evaluation_spec` to point at when it is there, and no Rust type names.
    let sb = Sandbox::new();
    sb.write("null.json", r#"{"evaluation_spec": null}"#);
    sb.write("blank.json", r#"{"evaluation_spec": ""}"#);
    sb.write("null.yaml", "null\n");
    let said = validated(&sb, &["null.json", "blank.json", "null.yaml"]);
    assert_eq!(
        said,
        [
            (
                2,
                "error: null.json: evaluation_spec is required\n".to_string()
            ),
            (
                2,
                "error: blank.json:1: evaluation_spec expected an object, found string \"\"\n"
                    .to_string()
            ),
            (
                2,
                "error: null.yaml:1: manifest expected an object, found null\n".to_string()
            ),
        ]
    );
}

#[test]
fn an_array_where_a_spec_has_an_object_is_refused_not_read_field_by_field() {
    // `[0.9, true, false]` would otherwise be a threshold and two flags, in the struct's order.
    let sb = Sandbox::new();
    sb.write(
        "config.json",
        r#"{"name": "a", "version_number": 1, "judge_mode": "deterministic",
 "validators": [{"key": "v", "type": "fuzzy_match", "target": "final_output",
   "expected_from": "literal:hello", "config": [0.9, true, false]}],
 "scorecard": {"dimensions": ["correctness"]}}"#,
    );
    sb.write(
        "validator.yaml",
        "name: a\nversion_number: 1\njudge_mode: deterministic\nvalidators:\n  \
         - [v, exact_match, final_output, \"literal:x\"]\nscorecard:\n  dimensions: [correctness]\n",
    );
    sb.write(
        "spec.json",
        r#"{"evaluation_spec": ["a", 1, "deterministic", [], null, null, null, null]}"#,
    );
    assert_eq!(
        validated(&sb, &["config.json", "validator.yaml", "spec.json"]),
        [
            (
                2,
                "error: config.json:3: evaluation_spec.validators[0].config invalid config: \
                 expected an object, found array\n"
                    .to_string()
            ),
            (
                2,
                "error: validator.yaml:5: evaluation_spec.validators[0] expected an object, found \
                 array\n"
                    .to_string()
            ),
            (
                2,
                "error: spec.json:1: evaluation_spec expected an object, found array\n".to_string()
            ),
        ]
    );
}

#[test]
fn a_key_given_twice_in_a_free_form_part_of_a_spec_is_refused() {
    // A validator's config is decoded from the value the parser kept: the last threshold, 0.1.
    let sb = Sandbox::new();
    sb.write(
        "config.json",
        r#"{"name": "a", "version_number": 1, "judge_mode": "deterministic",
 "validators": [{"key": "v", "type": "fuzzy_match", "target": "final_output",
   "expected_from": "literal:hello",
   "config": {"threshold": 0.99, "threshold": 0.1}}],
 "scorecard": {"dimensions": ["correctness"]}}"#,
    );
    sb.write(
        "config.yaml",
        "name: a\nversion_number: 1\njudge_mode: deterministic\nvalidators:\n  - key: v\n    \
         type: fuzzy_match\n    target: final_output\n    expected_from: \"literal:hello\"\n    \
         config:\n      threshold: 0.99\n      threshold: 0.1\nscorecard:\n  dimensions: \
         [correctness]\n",
    );
    assert_eq!(
        validated(&sb, &["config.json", "config.yaml"]),
        [
            (
                2,
                "error: config.json:4: evaluation_spec the key `threshold` is given twice in one \
                 object: keep one\n"
                    .to_string()
            ),
            (
                2,
                "error: config.yaml:11: evaluation_spec.validators[0].config the key `threshold` is \
                 given twice in one object (first on line 10): keep one\n"
                    .to_string()
            ),
        ]
    );
}

#[test]
fn a_key_a_run_record_gives_twice_is_refused_where_it_comes_again() {
    // In an expectation the run is scored against, in a payload member scoring reads, and in a
    // value nested in either: read as JSON readers read it, the last value would count.
    let first_run =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(RUNS))
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_string();
    let twice = |from: &str, to: &str| {
        assert!(first_run.contains(from), "{from}");
        first_run.replacen(from, to, 1)
    };
    for (runs, key) in [
        (
            twice(
                r#""expectations": {"capital": {"value": "Paris"},"#,
                r#""expectations": {"capital": {"value": "Rome"}, "capital": {"value": "Paris"},"#,
            ),
            "capital",
        ),
        (
            twice(
                r#""payload": {"tool_name": "lookup","#,
                r#""payload": {"tool_name": "other", "tool_name": "lookup","#,
            ),
            "tool_name",
        ),
        (
            twice(
                r#""arguments": {"country": "France"}"#,
                r#""arguments": {"country": "Spain", "country": "France"}"#,
            ),
            "country",
        ),
    ] {
        let sandbox = sandbox_with_pack();
        sandbox.write("runs.jsonl", format!("{runs}\n"));
        let out = score(&sandbox, "text", None);
        let column = runs.find(&format!("\"{key}\": ")).unwrap();
        let second =
            column + runs[column + 1..].find(&format!("\"{key}\"")).unwrap() + key.len() + 3;
        assert_eq!(
            (code(&out), stdout_text(&out), stderr_text(&out)),
            (
                2,
                String::new(),
                format!(
                    "error: runs.jsonl:1: the key `{key}` is given twice in one object (the \
                     second by column {second}): keep one\n"
                )
            )
        );
    }
}

#[test]
fn a_key_a_bare_yaml_spec_gives_twice_is_named_under_evaluation_spec() {
    let body = "judge_mode: deterministic\nvalidators:\n  - key: v\n    type: exact_match\n    \
                target: final_output\n    expected_from: \"literal:x\"\nscorecard:\n  \
                dimensions: [correctness]\n";
    let sb = Sandbox::new();
    sb.write(
        "name.yaml",
        format!("name: a\nname: b\nversion_number: 1\n{body}"),
    );
    sb.write(
        "version.yaml",
        format!("name: a\nversion_number: 1\nversion_number: 2\n{body}"),
    );
    assert_eq!(
        validated(&sb, &["name.yaml", "version.yaml"]),
        [
            (
                2,
                "error: name.yaml:2: evaluation_spec.name is given twice (first on line 1): keep \
                 one\n"
                    .to_string()
            ),
            (
                2,
                "error: version.yaml:3: evaluation_spec.version_number is given twice (first on \
                 line 2): keep one\n"
                    .to_string()
            ),
        ]
    );
}
