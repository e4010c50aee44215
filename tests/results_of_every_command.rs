//! The lines of `tasks score --output`, `tasks run --output` and `spec score` carry the members
//! of a `run` result line, so `summarize`, `merge`, `compare`, `report` and `--junit` read them:
//! a task line's exact shape, the summary and JUnit of a task file, two outputs files over one
//! task file compared task by task (and two models' `tasks run` files), the report of a spec
//! file, a file that holds two scorings, and the refusals (two scorings merged, a task file
//! compared with a spec file, spec records of other cases, tasks asked other prompts).

use serde_json::{json, Value};

use crate::common::{code, json_stdout, stderr_text, stdout_text, succeeded, Sandbox};
use crate::report_kinds::report_data;

const TASKS: &str = concat!(
    r#"{"task_id":"add","category":"arithmetic","prompt":"1+1","targets":["2"],"metric_name":"exact_match","post_process":"strip_whitespace"}"#,
    "\n",
    r#"{"task_id":"capital","category":"classification","prompt":"Capital of France?","targets":["Paris"],"metric_name":"exact_match","post_process":"none"}"#,
    "\n",
    r#"{"task_id":"pick","category":"mcq","prompt":"A or B?","targets":["B"],"metric_name":"accuracy","post_process":"extract_letter"}"#,
    "\n",
);

/// Every task answered, every answer right.
const OUTPUTS_A: &str = concat!(
    r#"{"task_id":"add","output":"2"}"#,
    "\n",
    r#"{"task_id":"capital","output":"Paris"}"#,
    "\n",
    r#"{"task_id":"pick","output":"(B)"}"#,
    "\n",
);

/// One answer wrong, one task without an answer.
const OUTPUTS_B: &str = concat!(
    r#"{"task_id":"add","output":"3"}"#,
    "\n",
    r#"{"task_id":"capital","output":"Paris"}"#,
    "\n",
);

/// A sandbox with the task file and both outputs files.
fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("tasks.jsonl", TASKS);
    sb.write("a.jsonl", OUTPUTS_A);
    sb.write("b.jsonl", OUTPUTS_B);
    sb
}

/// `tasks score tasks.jsonl --outputs OUTPUTS --output RESULTS`.
fn score(sb: &Sandbox, outputs: &str, results: &str) -> assert_cmd::Command {
    let mut command = sb.evalctl();
    command
        .args(["tasks", "score", "tasks.jsonl", "--format", "json"])
        .args(["--outputs", outputs, "--output", results]);
    command
}

/// `score` where `outputs` leaves a task without an answer (exit 1).
fn score_missing_one(sb: &Sandbox, outputs: &str, results: &str) {
    let out = score(sb, outputs, results).output().expect("evalctl runs");
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
}

/// `spec score pack.yaml runs.jsonl --output records.jsonl` over the repository's fixtures.
fn score_spec(sb: &Sandbox) {
    sb.copy_fixtures("fixtures/spec", &["pack.yaml", "runs.jsonl"]);
    let out = sb
        .evalctl()
        .args([
            "spec",
            "score",
            "pack.yaml",
            "runs.jsonl",
            "--format",
            "json",
        ])
        .args(["--output", "records.jsonl"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 1, "{}", stderr_text(&out)); // one of the two runs fails its gate
}

/// The `run` member of the first line of `file`.
fn run_of(sb: &Sandbox, file: &str) -> Value {
    sb.jsonl(file)[0]["run"].clone()
}

fn is_digest(value: &Value) -> bool {
    value
        .as_str()
        .is_some_and(|hex| hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[test]
fn a_task_line_keeps_its_members_and_ends_with_the_result_line_members() {
    let sb = sandbox();
    score_missing_one(&sb, "b.jsonl", "b-results.jsonl");
    let lines = sb.jsonl("b-results.jsonl");
    let run = lines[0]["run"].clone();
    for key in ["fingerprint", "evaluator_digest", "inputs_digest"] {
        assert!(is_digest(&run[key]), "{key}: {run}");
    }
    assert_eq!(
        run,
        json!({"command": "tasks score",
               "evaluator": {"kind": "tasks", "target": "tasks.jsonl"},
               "score_range": "unit", "splits": {"train": false, "val": false}, "candidates": 1,
               "fingerprint": run["fingerprint"], "evaluator_digest": run["evaluator_digest"],
               "inputs_digest": run["inputs_digest"], "shard": "0/1", "shard_calls": 3,
               "plan_calls": 3})
    );
    // The documented members first, as before, then the added ones.
    assert_eq!(
        sb.lines("b-results.jsonl")[2],
        format!(
            "{{\"task_id\":\"pick\",\"category\":\"mcq\",\"metric_name\":\"accuracy\",\
             \"post_process\":\"extract_letter\",\"status\":\"missing\",\"score\":null,\
             \"processed_output\":null,\"candidate_id\":\"b.jsonl\",\"candidate_index\":0,\
             \"split\":\"single\",\"example_index\":2,\"example_line\":null,\
             \"example_id\":\"pick\",\"error\":{{\"kind\":\"missing_output\",\
             \"message\":\"no output for task pick\"}},\"run\":{run}}}"
        )
    );
    assert!(lines.iter().all(|line| line["run"] == run));

    // Another outputs file over the same tasks: another run of the same evaluator and inputs.
    succeeded(score(&sb, "a.jsonl", "a-results.jsonl"));
    let other = run_of(&sb, "a-results.jsonl");
    assert_ne!(other["fingerprint"], run["fingerprint"]);
    assert_eq!(other["evaluator_digest"], run["evaluator_digest"]);
    assert_eq!(other["inputs_digest"], run["inputs_digest"]);
}

#[test]
fn summarize_and_junit_read_a_tasks_score_output_file() {
    let sb = sandbox();
    score_missing_one(&sb, "b.jsonl", "b-results.jsonl");
    let out = sb
        .evalctl()
        .args(["summarize", "b-results.jsonl", "--format", "text"])
        .args(["--junit", "junit.xml"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 1);
    assert_eq!(
        stdout_text(&out),
        "evaluator: tasks tasks.jsonl   score range: unit\n\
         calls: 3 (2 ok, 1 error)   elapsed: — (not recorded in results files)\n\
         \n\
         candidate  score            n / errors\n\
         b.jsonl    0.3333 ± 0.5000  3 / 1\n\
         \n\
         ± = half-width of the 95% bootstrap interval over examples (--seed)\n\
         \n\
         exit 1: 1 of 3 calls failed\n"
    );
    assert_eq!(
        stderr_text(&out),
        "failed: b.jsonl pick: missing_output: no output for task pick\n\
         wrote junit.xml: 3 test cases (0 failures, 1 error)\n\
         exit 1: 1 of 3 calls failed\n"
    );
    assert_eq!(
        sb.read("junit.xml"),
        r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="evalctl" tests="3" failures="0" errors="1" time="0.000">
  <testsuite name="b.jsonl single" tests="3" failures="0" errors="1" skipped="0" time="0.000">
    <testcase name="b.jsonl add" classname="b.jsonl.single" time="0.000">
      <system-out>score: 0</system-out>
    </testcase>
    <testcase name="b.jsonl capital" classname="b.jsonl.single" time="0.000">
      <system-out>score: 1</system-out>
    </testcase>
    <testcase name="b.jsonl pick" classname="b.jsonl.single" time="0.000">
      <error message="no output for task pick" type="missing_output">no output for task pick</error>
      <system-out>score: 0
error: missing_output: no output for task pick</system-out>
    </testcase>
  </testsuite>
</testsuites>
"#
    );
}

#[test]
fn compare_pairs_two_outputs_files_over_one_task_file_task_by_task() {
    let sb = sandbox();
    succeeded(score(&sb, "a.jsonl", "a-results.jsonl"));
    score_missing_one(&sb, "b.jsonl", "b-results.jsonl");
    let out = sb
        .evalctl()
        .args([
            "compare",
            "a-results.jsonl",
            "b-results.jsonl",
            "--format",
            "text",
        ])
        .args(["--fail-on-regression", "0.1"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 1);
    assert_eq!(
        stdout_text(&out),
        "a.jsonl → b.jsonl: 1.0000 -> 0.3333, -0.6667 (95% CI -1.0000 to +0.0000); 3 pairs: \
         0 wins, 1 tie, 2 losses\n\
         \x20 regression: single add: 1.0000 -> 0.0000\n\
         \x20 regression: single pick: 1.0000 -> 0.0000 (1 call failed in new)\n\
         exit 1: the score dropped by more than --fail-on-regression 0.1: a.jsonl → b.jsonl \
         -0.6667\n"
    );
    assert_eq!(
        stderr_text(&out),
        "exit 1: the score dropped by more than --fail-on-regression 0.1: a.jsonl → b.jsonl \
         -0.6667\n"
    );
}

#[test]
fn compare_pairs_two_models_tasks_run_files_and_names_a_failed_generation() {
    let sb = sandbox();
    // Model A answers every task right; model B fails on `pick` and is wrong on `add`.
    sb.write(
        "model-a.sh",
        "task=$(sed -n 's/^{\"task_id\":\"\\([^\"]*\\)\".*/\\1/p')\n\
         case \"$task\" in add) echo 2 ;; capital) echo Paris ;; pick) echo '(B)' ;; esac\n",
    );
    sb.write(
        "model-b.sh",
        "task=$(sed -n 's/^{\"task_id\":\"\\([^\"]*\\)\".*/\\1/p')\n\
         case \"$task\" in add) echo 3 ;; capital) echo Paris ;; pick) exit 3 ;; esac\n",
    );
    for (model, results, expected) in [("a", "run-a.jsonl", 0), ("b", "run-b.jsonl", 1)] {
        let out = sb
            .evalctl()
            .args([
                "tasks",
                "run",
                "tasks.jsonl",
                "--no-config",
                "--format",
                "json",
            ])
            .args(["--model-command", &format!("sh model-{model}.sh")])
            .args(["--output", results])
            .output()
            .expect("evalctl runs");
        assert_eq!(code(&out), expected, "{}", stderr_text(&out));
    }
    let failed = &sb.jsonl("run-b.jsonl")[2];
    assert_eq!(failed["candidate_id"], "command 'sh model-b.sh'");
    assert_eq!(failed["run"]["command"], "tasks run");
    assert_eq!(
        failed["error"],
        json!({"kind": "exit_status", "message": "command exited with code 3"})
    );
    let out =
        succeeded(
            sb.evalctl()
                .args(["compare", "run-a.jsonl", "run-b.jsonl", "--format", "json"]),
        );
    let comparison = json_stdout(&out);
    assert_eq!(
        comparison["candidates"][0]["id"],
        "command 'sh model-a.sh' → command 'sh model-b.sh'"
    );
    assert_eq!(comparison["candidates"][0]["pairs"], 3);
    assert_eq!(comparison["unpaired"], json!({"base": 0, "new": 0}));
    assert_eq!(
        comparison["candidates"][0]["regressions"],
        json!([
            {"split": "single", "example_index": 0, "example_line": null, "example_id": "add",
             "base": 1.0, "new": 0.0},
            {"split": "single", "example_index": 2, "example_line": null, "example_id": "pick",
             "base": 1.0, "new": 0.0, "failed": {"base": 0, "new": 1}}
        ])
    );
}

#[test]
fn report_reads_spec_score_records_as_results() {
    let sb = Sandbox::new();
    score_spec(&sb);
    let out = succeeded(sb.evalctl().args([
        "report",
        "records.jsonl",
        "-o",
        "report.html",
        "--format",
        "json",
    ]));
    assert_eq!(
        json_stdout(&out),
        json!({"ok": true, "report": "report.html", "files": 1, "results": 2, "errors": 0,
               "not_passed": 1, "bytes": json_stdout(&out)["bytes"]})
    );
    let data = report_data(&sb.join("report.html"));
    let source = &data["sources"][0];
    // The summary `summarize` prints: one run did not pass, which fails it.
    assert_eq!(
        (
            &source["summary"]["gates"]["verdicts"],
            &source["summary"]["exit"]
        ),
        (
            &json!({"failed": 1, "without_verdict": 0, "runs": 2, "passed": false}),
            &json!(1)
        )
    );
    assert_eq!(
        (&source["name"], &source["kind"], &source["evaluator"]),
        (
            &json!("records.jsonl"),
            &json!("spec"),
            &json!({"kind": "spec", "target": "pack.yaml"})
        )
    );
    assert_eq!(
        source["summary"]["candidates"][0]["pass_rate"],
        json!(0.5),
        "{source}"
    );
    assert_eq!(
        data["series"],
        json!([{"source": 0, "candidate": "runs.jsonl", "text": null}])
    );
    // series, split, example_index, example_line, label, score, error_kind, passed, example_id
    let rows: Vec<Value> = data["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| {
            json!([row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[11], row[14]])
        })
        .collect();
    assert_eq!(
        rows,
        [
            json!([0, "single", 0, 1, null, 1.0, null, true, "run-france"]),
            json!([0, "single", 1, 2, null, 0.0, null, false, "run-italy"]),
        ]
    );
    // The record's own members are the row's side information.
    assert_eq!(data["rows"][0][8]["validity"], "valid");
}

#[test]
fn merge_summarizes_a_spec_file_and_refuses_two_scorings() {
    let sb = sandbox();
    score_spec(&sb);
    // A record that did not pass fails the summary as it failed `spec score`, and is a failed
    // JUnit test case.
    let out = sb
        .evalctl()
        .args(["merge", "records.jsonl", "--format", "text"])
        .args(["--junit", "junit.xml"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    assert_eq!(
        stdout_text(&out),
        "evaluator: spec pack.yaml   score range: unit\n\
         calls: 2 (2 ok, 0 errors)   elapsed: — (not recorded in results files)\n\
         \n\
         candidate   score            n / errors  pass rate\n\
         runs.jsonl  0.5000 ± 0.5000  2 / 0       50.0%\n\
         \n\
         ± = half-width of the 95% bootstrap interval over examples (--seed)\n\
         \n\
         exit 1: all 2 calls succeeded; 1 of 2 runs did not pass\n"
    );
    assert_eq!(
        stderr_text(&out),
        "wrote junit.xml: 2 test cases (1 failure, 0 errors)\n\
         exit 1: all 2 calls succeeded; 1 of 2 runs did not pass\n"
    );
    let reason = "the run did not pass: hybrid: gated dimension &quot;discipline&quot; below \
                  pass_threshold";
    assert_eq!(
        sb.read("junit.xml"),
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <testsuites name=\"evalctl\" tests=\"2\" failures=\"1\" errors=\"0\" time=\"0.000\">\n\
             \x20 <testsuite name=\"runs.jsonl single\" tests=\"2\" failures=\"1\" errors=\"0\" \
             skipped=\"0\" time=\"0.000\">\n\
             \x20   <testcase name=\"runs.jsonl run-france (line 1)\" \
             classname=\"runs.jsonl.single\" time=\"0.000\">\n\
             \x20     <system-out>score: 1</system-out>\n\
             \x20   </testcase>\n\
             \x20   <testcase name=\"runs.jsonl run-italy (line 2)\" \
             classname=\"runs.jsonl.single\" time=\"0.000\">\n\
             \x20     <failure message=\"{reason}\" type=\"verdict\">{reason}</failure>\n\
             \x20     <system-out>score: 0</system-out>\n\
             \x20   </testcase>\n\
             \x20 </testsuite>\n\
             </testsuites>\n"
        )
    );
    let summary = json_stdout(
        &sb.evalctl()
            .args(["summarize", "records.jsonl", "--format", "json"])
            .output()
            .expect("evalctl runs"),
    );
    assert_eq!(
        (&summary["gates"]["verdicts"], &summary["exit"]),
        (
            &json!({"failed": 1, "without_verdict": 0, "runs": 2, "passed": false}),
            &json!(1)
        )
    );

    succeeded(score(&sb, "a.jsonl", "a-results.jsonl"));
    score_missing_one(&sb, "b.jsonl", "b-results.jsonl");
    let (a, b) = (
        run_of(&sb, "a-results.jsonl")["fingerprint"].clone(),
        run_of(&sb, "b-results.jsonl")["fingerprint"].clone(),
    );
    let (a, b) = (a.as_str().unwrap(), b.as_str().unwrap());
    let out = sb
        .evalctl()
        .args([
            "merge",
            "a-results.jsonl",
            "b-results.jsonl",
            "--format",
            "text",
        ])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: b-results.jsonl: lines of different runs: run {b} (3 lines in \
             b-results.jsonl; shard 0/1), beside run {a} (3 lines in a-results.jsonl; shard \
             0/1): the candidates or --repeat differ; pass the files of one run, or choose one \
             with --run ({a} or {b})\n"
        )
    );
    // --run reads one scoring out of the two files.
    let out = sb
        .evalctl()
        .args(["merge", "a-results.jsonl", "b-results.jsonl", "--run", b])
        .args(["--format", "json"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 1);
    let summary = json_stdout(&out);
    assert_eq!(
        (
            &summary["calls"],
            &summary["candidates"][0]["id"],
            &summary["exit_reason"]
        ),
        (
            &json!({"total": 3, "ok": 2, "errors": 1, "cached": 0}),
            &json!("b.jsonl"),
            &json!("1 of 3 calls failed")
        )
    );
}

#[test]
fn a_file_holding_two_scorings_is_read_one_run_at_a_time() {
    let sb = sandbox();
    succeeded(score(&sb, "a.jsonl", "both.jsonl"));
    score_missing_one(&sb, "b.jsonl", "both.jsonl");
    // Scoring the same outputs again adds lines of the same run: they count once.
    succeeded(score(&sb, "a.jsonl", "both.jsonl"));
    let lines = sb.jsonl("both.jsonl");
    let (a, b) = (
        lines[0]["run"]["fingerprint"].as_str().unwrap(),
        lines[3]["run"]["fingerprint"].as_str().unwrap(),
    );
    let out = sb
        .evalctl()
        .args(["summarize", "both.jsonl", "--format", "json"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 2);
    assert_eq!(
        json_stdout(&out),
        json!({"ok": false, "exit": 2, "errors": [format!(
            "both.jsonl: lines of different runs: run {b} (3 lines in both.jsonl; shard 0/1), \
             beside run {a} (6 lines in both.jsonl; shard 0/1): the candidates or --repeat \
             differ; pass the files of one run, or choose one with --run ({a} or {b})"
        )]})
    );
    let out = succeeded(sb.evalctl().args([
        "summarize",
        "both.jsonl",
        "--run",
        &a[..8],
        "--format",
        "json",
    ]));
    let summary = json_stdout(&out);
    assert_eq!(
        (&summary["calls"], &summary["candidates"][0]["id"]),
        (
            &json!({"total": 3, "ok": 3, "errors": 0, "cached": 0}),
            &json!("a.jsonl")
        )
    );
}

#[test]
fn a_task_file_and_a_spec_file_are_not_compared() {
    let sb = sandbox();
    score_spec(&sb);
    succeeded(score(&sb, "a.jsonl", "a-results.jsonl"));
    let (tasks, spec) = (run_of(&sb, "a-results.jsonl"), run_of(&sb, "records.jsonl"));
    let text = |run: &Value, key: &str| run[key].as_str().unwrap().to_string();
    let out = sb
        .evalctl()
        .args([
            "compare",
            "a-results.jsonl",
            "records.jsonl",
            "--format",
            "text",
        ])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 2);
    assert_eq!(stdout_text(&out), "");
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: a-results.jsonl, records.jsonl: the runs' evaluators differ \
             (a-results.jsonl: run {}, 3 calls, tasks `tasks.jsonl`, evaluator {}; \
             records.jsonl: run {}, 2 calls, spec `pack.yaml`, evaluator {}): their scores are \
             not comparable; pass --allow-different-inputs if this is intended\n\
             error: a-results.jsonl, records.jsonl: the runs' inputs differ (the tasks scored \
             and their prompts: a-results.jsonl: 3 calls, inputs {}; records.jsonl: 2 calls, \
             inputs {}): pass --allow-different-inputs if this is intended\n",
            text(&tasks, "fingerprint"),
            text(&tasks, "evaluator_digest"),
            text(&spec, "fingerprint"),
            text(&spec, "evaluator_digest"),
            text(&tasks, "inputs_digest"),
            text(&spec, "inputs_digest"),
        )
    );
}

#[test]
fn a_run_without_an_overall_score_is_an_errored_line_as_under_run_spec() {
    let sb = Sandbox::new();
    sb.write(
        "tiny.yaml",
        "name: tiny\nversion_number: 1\njudge_mode: deterministic\nvalidators:\n\
         \x20 - {key: names_capital, type: contains, target: final_output, \
         expected_from: case.expectations.capital}\n\
         scorecard:\n  strategy: weighted\n  pass_threshold: 0.5\n  dimensions:\n\
         \x20   - {key: correctness, source: validators, validators: [names_capital]}\n",
    );
    // A run that passes, then one the scorecard gives no overall score.
    sb.copy_fixtures("fixtures/spec", &["runs.jsonl"]);
    let fixture_runs = sb.read("runs.jsonl");
    let france = fixture_runs.lines().next().unwrap();
    sb.write(
        "runs.jsonl",
        format!("{france}\n{{\"id\":\"empty\",\"events\":[]}}\n"),
    );
    let out = sb
        .evalctl()
        .args([
            "spec",
            "score",
            "tiny.yaml",
            "runs.jsonl",
            "--format",
            "json",
        ])
        .args(["--output", "records.jsonl"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    let scored = json_stdout(&out);
    assert_eq!(
        (&scored["pass_rate"], &scored["exit_reason"]),
        (
            &json!(0.5),
            &json!("1 of 2 runs did not pass (1 without a verdict)")
        )
    );
    let record = &sb.jsonl("records.jsonl")[1];
    let message = "the scorecard gave no overall score: no dimensions produced an available score";
    assert_eq!(
        (&record["score"], &record["error"], &record["example_line"]),
        (
            &json!(0.0),
            &json!({"kind": "invalid_output", "message": message}),
            &json!(2)
        )
    );
    // Read back, the run without a verdict did not pass either: the same pass rate, the same
    // words.
    let out = sb
        .evalctl()
        .args(["summarize", "records.jsonl", "--format", "json"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 1);
    let summary = json_stdout(&out);
    assert_eq!(
        (
            &summary["candidates"][0]["pass_rate"],
            &summary["gates"]["verdicts"]
        ),
        (
            &json!(0.5),
            &json!({"failed": 1, "without_verdict": 1, "runs": 2, "passed": false})
        )
    );
    assert_eq!(
        stderr_text(&out),
        format!(
            "failed: runs.jsonl empty (line 2): invalid_output: {message}\n\
             exit 1: 1 of 2 calls failed; 1 of 2 runs did not pass (1 without a verdict)\n"
        )
    );
}

#[test]
fn spec_score_appended_to_its_own_output_adds_lines_of_the_same_run() {
    let sb = Sandbox::new();
    score_spec(&sb);
    score_spec(&sb); // appended to the existing records.jsonl, not linked in place
    let lines = sb.jsonl("records.jsonl");
    assert_eq!(lines.len(), 4);
    assert!(lines.iter().all(|line| line["run"] == lines[0]["run"]));
    let out = sb
        .evalctl()
        .args(["summarize", "records.jsonl", "--format", "json"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 1, "one of the two runs did not pass");
    assert_eq!(
        json_stdout(&out)["calls"],
        json!({"total": 2, "ok": 2, "errors": 0, "cached": 0})
    );
    // The report counts each run once too.
    let out = succeeded(sb.evalctl().args([
        "report",
        "records.jsonl",
        "-o",
        "report.html",
        "--format",
        "json",
    ]));
    assert_eq!(json_stdout(&out)["results"], 2);
    assert_eq!(
        report_data(&sb.join("report.html"))["rows"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
}

#[test]
fn spec_records_of_other_cases_are_not_compared_even_without_run_ids() {
    let sb = Sandbox::new();
    sb.copy_fixtures("fixtures/spec", &["pack.yaml", "runs.jsonl"]);
    // Two agents' runs of the same two cases, in the other order, without ids: their records
    // would pair France with Italy.
    let runs: Vec<Value> = (sb.jsonl("runs.jsonl").into_iter())
        .map(|mut run| {
            run.as_object_mut().unwrap().remove("id");
            run
        })
        .collect();
    let lines = |runs: &[&Value]| {
        runs.iter()
            .map(|run| format!("{run}\n"))
            .collect::<String>()
    };
    sb.write("a.jsonl", lines(&[&runs[0], &runs[1]]));
    sb.write("b.jsonl", lines(&[&runs[1], &runs[0]]));
    for (runs_file, records) in [
        ("a.jsonl", "a-records.jsonl"),
        ("b.jsonl", "b-records.jsonl"),
    ] {
        let out = sb
            .evalctl()
            .args(["spec", "score", "pack.yaml", runs_file, "--format", "json"])
            .args(["--output", records])
            .output()
            .expect("evalctl runs");
        assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    }
    refused_for_other_inputs(
        &sb,
        ("a-records.jsonl", "b-records.jsonl"),
        2,
        "the runs scored and the cases they were given",
    );
}

/// `compare BASE NEW` in `sb` is refused (exit 2) because the two files' inputs (`what`, of
/// `calls` calls each) differ: the refusal names both digests.
fn refused_for_other_inputs(sb: &Sandbox, (base, new): (&str, &str), calls: usize, what: &str) {
    let out = sb
        .evalctl()
        .args(["compare", base, new])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 2);
    let digest = |file: &str| {
        run_of(sb, file)["inputs_digest"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: {base}, {new}: the runs' inputs differ ({what}: {base}: {calls} calls, \
             inputs {}; {new}: {calls} calls, inputs {}): pass --allow-different-inputs if this \
             is intended\n",
            digest(base),
            digest(new),
        )
    );
}

#[test]
fn task_files_whose_prompts_differ_are_not_compared() {
    let sb = sandbox();
    succeeded(score(&sb, "a.jsonl", "a-results.jsonl"));
    // The same tasks, one of them asked another question.
    sb.write(
        "tasks.jsonl",
        TASKS.replacen("\"prompt\":\"", "\"prompt\":\"Now: ", 1),
    );
    succeeded(score(&sb, "a.jsonl", "changed-results.jsonl"));
    refused_for_other_inputs(
        &sb,
        ("a-results.jsonl", "changed-results.jsonl"),
        3,
        "the tasks scored and their prompts",
    );
}
