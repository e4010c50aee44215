//! What a summary tells CI, through the binary: `--pass-score` fails the run (exit 1, the
//! closing line, `exit_reason`, the Markdown verdict) and every JUnit failure carries the
//! evaluator's `reasoning` and `feedback`; summaries of results files say the elapsed time is not
//! recorded (JSON `elapsed_ms` null); `run --shard K/N` marks its own summary partial in every
//! format, as `summarize --allow-partial` does; `compare` ends with the closing `exit N: ...`
//! line and warns when most calls are unpaired; the report files written are named on stderr.

use crate::common::*;
use serde_json::{json, Value};

/// Scores `$SCORES`' word for the example's `i` (`{"i":2}` → the third word) with a reasoning
/// and a feedback that need escaping in XML; exits 1 for an example without `i`.
const EVAL: &str = "p=$(cat)\ni=$(printf '%s' \"$p\" | sed -n 's/.*\"i\":\\([0-9]*\\).*/\\1/p')\n\
                    [ -n \"$i\" ] || { echo 'no i' >&2; exit 1; }\nset -- $SCORES\nshift \"$i\"\n\
                    printf '{\"score\": %s, \"reasoning\": \"<%s> & so\", \"feedback\": \"try %s\"}' \
                    \"$1\" \"$i\" \"$i\"\n";

/// Three scored examples and one the evaluator fails on; candidates `cot.txt` and `terse.txt`.
fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n{\"x\":1}\n");
    sb.write("cot.txt", "Think step by step.\n");
    sb.write("terse.txt", "Answer in one word.\n");
    sb
}

/// `evalctl run` of `candidate` over the sandbox's dataset with `SCORES=scores`, plus `extra`.
fn run(sb: &Sandbox, scores: &str, candidate: &str, extra: &[&str]) -> std::process::Output {
    sb.evalctl()
        .args([
            "run",
            "--evaluator-command",
            "sh eval.sh",
            "--skip-preflight",
        ])
        .args(["--dataset", "d.jsonl", candidate])
        .args(extra)
        .env("SCORES", scores)
        .output()
        .unwrap()
}

/// `xml` with the value of every `time="..."` masked as `T`.
fn mask_times(xml: &str) -> String {
    let mut masked = String::new();
    let mut rest = xml;
    while let Some(at) = rest.find("time=\"") {
        masked.push_str(&rest[..at + 6]);
        rest = &rest[at + 6..];
        let end = rest.find('"').unwrap();
        masked.push('T');
        rest = &rest[end..];
    }
    masked + rest
}

/// The JUnit report of the sandbox's run with `--pass-score 0.5` (`partial`: its suite, if any).
fn junit_of_run(partial: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>
<testsuites name=\"evalctl\" tests=\"4\" failures=\"1\" errors=\"1\" time=\"T\">
  <testsuite name=\"cot.txt train\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"0\" time=\"T\">
    <testcase name=\"cot.txt train #0 (line 1)\" classname=\"cot.txt.train\" time=\"T\">
      <system-out>score: 1
reasoning: &lt;0&gt; &amp; so
feedback: try 0</system-out>
    </testcase>
    <testcase name=\"cot.txt train #1 (line 2)\" classname=\"cot.txt.train\" time=\"T\">
      <failure message=\"score 0.25 is below --pass-score 0.5\" type=\"score\">score 0.25 is below --pass-score 0.5
reasoning: &lt;1&gt; &amp; so
feedback: try 1</failure>
      <system-out>score: 0.25
reasoning: &lt;1&gt; &amp; so
feedback: try 1</system-out>
    </testcase>
    <testcase name=\"cot.txt train #2 (line 3)\" classname=\"cot.txt.train\" time=\"T\">
      <system-out>score: 0.5
reasoning: &lt;2&gt; &amp; so
feedback: try 2</system-out>
    </testcase>
    <testcase name=\"cot.txt train #3 (line 4)\" classname=\"cot.txt.train\" time=\"T\">
      <error message=\"command exited with code 1; stderr: no i\" type=\"exit_status\">command exited with code 1; stderr: no i</error>
      <system-out>score: 0
error: exit_status: command exited with code 1; stderr: no i</system-out>
    </testcase>
  </testsuite>
{partial}</testsuites>
"
    )
}

/// The table of the sandbox's run with scores `1 0.25 0.5` (and the failed call).
const TABLE: &str = "candidate  score            train mean       n / errors\n\
                     cot.txt    0.4375 ± 0.3438  0.4375 ± 0.3438  4 / 1\n\n\
                     score = the candidate's train mean; failed calls count as 0\n\
                     ± = half-width of the 95% bootstrap interval over examples (--seed)\n\n";

const FAILED_CALL: &str =
    "failed: cot.txt train #3 (line 4): exit_status: command exited with code 1; stderr: no i\n";

const BELOW: &str = "1 of 4 calls failed, within --max-errors 1; 1 of 4 calls scored below \
                     --pass-score 0.5";

/// The JSON summary of the sandbox's run with `--pass-score 0.5 --max-errors 1`.
fn summary_json(elapsed_ms: Value) -> Value {
    json!({
        "evaluator": {"kind": "command", "target": "sh eval.sh"},
        "score_range": "unit",
        "calls": {"total": 4, "ok": 3, "errors": 1, "cached": 0},
        "elapsed_ms": elapsed_ms,
        "candidates": [{
            "id": "cot.txt",
            "score": 0.4375,
            "train": {"n": 4, "mean": 0.4375, "min": 0.0, "max": 1.0, "errors": 1,
                      "stderr": 0.21347814095749162, "ci95": [0.125, 0.8125]}
        }],
        "gates": {
            "errors": {"count": 1, "calls": 4, "max_errors": 1, "max_error_rate": null,
                       "passed": true},
            "pass_score": {"threshold": 0.5, "below": 1, "calls": 4, "passed": false}
        },
        "exit": 1,
        "exit_reason": BELOW
    })
}

#[test]
fn calls_below_pass_score_fail_the_run_and_junit_carries_the_reasoning() {
    let sb = sandbox();
    let gates = [
        "--junit",
        "j.xml",
        "--pass-score",
        "0.5",
        "--max-errors",
        "1",
    ];
    let out = run(
        &sb,
        "1 0.25 0.5",
        "cot.txt",
        &[&["--format", "text", "--output", "r.jsonl"][..], &gates].concat(),
    );
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    assert_eq!(
        mask_elapsed(&stdout_text(&out)),
        format!(
            "evaluator: command sh eval.sh   score range: unit\n\
             calls: 4 (3 ok, 1 error)   elapsed: [..]s\n\n{TABLE}exit 1: {BELOW}\n"
        )
    );
    assert_eq!(
        stderr_text(&out),
        format!("{FAILED_CALL}wrote j.xml: 4 test cases (1 failure, 1 error)\nexit 1: {BELOW}\n")
    );
    let junit = sb.read("j.xml");
    assert_eq!(mask_times(&junit), junit_of_run(""));

    // JSON: the gate, the exit code and its reason.
    let out = run(
        &sb,
        "1 0.25 0.5",
        "cot.txt",
        &[&["--format", "json"][..], &gates].concat(),
    );
    assert_eq!(code(&out), 1);
    let mut summary = json_stdout(&out);
    assert!(summary["elapsed_ms"].is_f64(), "{summary}");
    summary["elapsed_ms"] = json!("T");
    assert_eq!(summary, summary_json(json!("T")));

    // The results file summarized: the same gate, the verdict failed, the same JUnit report.
    let out = sb
        .evalctl()
        .args(["summarize", "r.jsonl", "--format", "markdown"])
        .args([
            "--junit",
            "j2.xml",
            "--pass-score",
            "0.5",
            "--max-errors",
            "1",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    assert_eq!(
        stdout_text(&out),
        format!(
            "### evalctl: ❌ failed (exit 1)\n\n{BELOW}\n\n\
             | candidate | score | train mean | n / errors |\n|---|---|---|---|\n\
             | cot.txt | 0.4375 ± 0.3438 | 0.4375 ± 0.3438 | 4 / 1 |\n\n\
             Evaluator: command sh eval.sh · score range unit · 4 calls (3 ok, 1 error) · \
             elapsed: — (not recorded in results files)\n\n\
             _score = the candidate's train mean; failed calls count as 0_\n\n\
             _± = half-width of the 95% bootstrap interval over examples (--seed)_\n"
        )
    );
    assert_eq!(
        stderr_text(&out),
        format!("{FAILED_CALL}wrote j2.xml: 4 test cases (1 failure, 1 error)\nexit 1: {BELOW}\n")
    );
    assert_eq!(sb.read("j2.xml"), junit);

    // Every call at or above the threshold: the gate passes and says so.
    let out = succeeded(sb.evalctl().args([
        "merge",
        "r.jsonl",
        "--format",
        "json",
        "--junit",
        "j3.xml",
        "--pass-score",
        "0.25",
        "--max-errors",
        "1",
    ]));
    let summary = json_stdout(&out);
    assert_eq!(
        (
            summary["gates"]["pass_score"].clone(),
            summary["exit"].clone(),
            summary["exit_reason"].clone()
        ),
        (
            json!({"threshold": 0.25, "below": 0, "calls": 4, "passed": true}),
            json!(0),
            json!(
                "1 of 4 calls failed, within --max-errors 1; no call scored below --pass-score \
                 0.25"
            )
        )
    );
    assert_eq!(
        stderr_text(&out),
        format!("{FAILED_CALL}wrote j3.xml: 4 test cases (0 failures, 1 error)\n")
    );
}

#[test]
fn pass_score_gates_the_run_without_a_junit_report() {
    let sb = sandbox();
    let out = run(
        &sb,
        "1 0.25 1",
        "cot.txt",
        &["--format", "json", "--pass-score", "0.5"],
    );
    assert_eq!(code(&out), 1);
    let summary = json_stdout(&out);
    assert_eq!(
        summary["gates"]["pass_score"],
        json!({"threshold": 0.5, "below": 1, "calls": 4, "passed": false})
    );
    assert_eq!(
        summary["exit_reason"],
        "1 of 4 calls failed; 1 of 4 calls scored below --pass-score 0.5"
    );
    assert_eq!(
        stderr_text(&out),
        "failed: cot.txt train #3 (line 4): exit_status: command exited with code 1; stderr: no i\n\
         exit 1: 1 of 4 calls failed; 1 of 4 calls scored below --pass-score 0.5\n"
    );
}

#[test]
fn summaries_of_results_files_say_the_elapsed_time_is_not_recorded() {
    let sb = sandbox();
    let out = run(
        &sb,
        "1 0.25 0.5",
        "cot.txt",
        &["--format", "json", "--output", "r.jsonl"],
    );
    assert_eq!(code(&out), 1);
    for command in ["summarize", "merge"] {
        let out = sb
            .evalctl()
            .args([command, "r.jsonl", "--format", "text"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 1);
        assert_eq!(
            stdout_text(&out),
            format!(
                "evaluator: command sh eval.sh   score range: unit\n\
                 calls: 4 (3 ok, 1 error)   elapsed: — (not recorded in results files)\n\n\
                 {TABLE}exit 1: 1 of 4 calls failed\n"
            )
        );
        let out = sb
            .evalctl()
            .args([command, "r.jsonl", "--format", "json", "--max-errors", "1"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0);
        let mut expected = summary_json(Value::Null);
        expected["gates"]
            .as_object_mut()
            .unwrap()
            .remove("pass_score");
        expected["exit"] = json!(0);
        expected["exit_reason"] = json!("1 of 4 calls failed, within --max-errors 1");
        assert_eq!(json_stdout(&out), expected);
    }
}

/// `run` of the sandbox as [`run`] does, its evaluator started in `/` and reaching `eval.sh`
/// through `$EVAL`: calls are split into shards by key, and a command's key covers its
/// working directory, so a fixed one splits the plan the same way in every sandbox.
fn run_from_root(sb: &Sandbox, extra: &[&str]) -> std::process::Output {
    sb.evalctl()
        .args(["run", "--evaluator-command", "sh -c 'exec sh \"$EVAL\"'"])
        .args(["--evaluator-cwd", "/", "--skip-preflight"])
        .args(["--dataset", "d.jsonl", "cot.txt"])
        .args(extra)
        .env("SCORES", "1 0.25 0.5")
        .env("EVAL", sb.join("eval.sh"))
        .output()
        .unwrap()
}

#[test]
fn a_shard_run_marks_its_summary_partial_in_every_format() {
    let sb = sandbox();
    let shard = [
        "--shard",
        "1/2",
        "--max-errors",
        "1",
        "--junit",
        "j.xml",
        "--pass-score",
        "0.5",
    ];
    // Shard 1/2 of this plan makes the calls of examples 0, 1 and 3; shard 0/2 that of 2.
    let description = "shard 0/2 missing: 1 of 4 calls absent";
    let reason = "1 of 3 calls failed, within --max-errors 1; 1 of 3 calls scored below \
                  --pass-score 0.5";
    let out = run_from_root(
        &sb,
        &[&["--format", "text", "--output", "s1.jsonl"][..], &shard].concat(),
    );
    assert_eq!(code(&out), 1);
    assert_eq!(
        mask_elapsed(&stdout_text(&out)),
        format!(
            "evaluator: command sh -c 'exec sh \"$EVAL\"'   score range: unit\n\
             calls: 3 (2 ok, 1 error)   elapsed: [..]s\n\
             partial: {description}\n\n\
             candidate  score            train mean       n / errors\n\
             cot.txt    0.4167 ± 0.5000  0.4167 ± 0.5000  3 / 1\n\n\
             score = the candidate's train mean; failed calls count as 0\n\
             ± = half-width of the 95% bootstrap interval over examples (--seed)\n\n\
             exit 1: {reason}\n"
        )
    );
    assert_eq!(
        stderr_text(&out),
        format!(
            "{FAILED_CALL}wrote j.xml: 4 test cases (1 failure, 1 error, 1 skipped)\n\
             exit 1: {reason}\n"
        )
    );
    let full = junit_of_run(&format!(
        "  <testsuite name=\"partial\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\" \
         time=\"T\">\n    <testcase name=\"missing calls\" classname=\"partial\" time=\"T\">\n      \
         <skipped message=\"partial: {description}\"/>\n    </testcase>\n  </testsuite>\n"
    ));
    // The run's report without example 2's case, its suite counting 3.
    let (head, rest) = full
        .split_once("    <testcase name=\"cot.txt train #2")
        .unwrap();
    let (_, tail) = rest.split_once("</testcase>\n").unwrap();
    let expected = format!("{head}{tail}").replacen(
        "<testsuite name=\"cot.txt train\" tests=\"4\"",
        "<testsuite name=\"cot.txt train\" tests=\"3\"",
        1,
    );
    assert_eq!(mask_times(&sb.read("j.xml")), expected);

    let partial = json!({"missing_calls": 1, "plan_calls": 4, "missing_shards": ["0/2"],
                         "description": description});
    let out = run_from_root(
        &sb,
        &[&["--format", "json", "--report", "r.html"][..], &shard].concat(),
    );
    assert_eq!(json_stdout(&out)["partial"], partial);
    assert!(sb
        .read("r.html")
        .contains(&format!("\"description\":\"{description}\"")));
    // The same as a summary of the shard's file alone says.
    let out = sb
        .evalctl()
        .args([
            "summarize",
            "--format",
            "json",
            "--allow-partial",
            "s1.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(json_stdout(&out)["partial"], partial);

    let out = run_from_root(&sb, &[&["--format", "markdown"][..], &shard].concat());
    assert_eq!(
        mask_elapsed(&stdout_text(&out)),
        format!(
            "### evalctl: ❌ failed (exit 1)\n\n{reason}\n\n\
             | candidate | score | train mean | n / errors |\n|---|---|---|---|\n\
             | cot.txt | 0.4167 ± 0.5000 | 0.4167 ± 0.5000 | 3 / 1 |\n\n\
             Evaluator: command sh -c 'exec sh \"\\$EVAL\"' · score range unit · 3 calls (2 ok, 1 error) · \
             elapsed: [..]s\n\n\
             **Partial:** {description}\n\n\
             _score = the candidate's train mean; failed calls count as 0_\n\n\
             _± = half-width of the 95% bootstrap interval over examples (--seed)_\n"
        )
    );
}

#[test]
fn a_shard_run_with_every_call_of_a_tiny_plan_is_not_partial() {
    let sb = sandbox();
    sb.write("one.jsonl", "{\"i\":0}\n");
    // One call and two shards: one shard has it all, the other nothing.
    let mut summaries = Vec::new();
    for shard in ["0/2", "1/2"] {
        let out = succeeded(
            sb.evalctl()
                .args([
                    "run",
                    "--format",
                    "json",
                    "--evaluator-command",
                    "sh eval.sh",
                ])
                .args(["--dataset", "one.jsonl", "cot.txt", "--shard", shard])
                .env("SCORES", "1"),
        );
        summaries.push(json_stdout(&out));
    }
    let totals: Vec<Value> = summaries
        .iter()
        .map(|s| s["calls"]["total"].clone())
        .collect();
    let partial: Vec<Option<&Value>> = summaries.iter().map(|s| s.get("partial")).collect();
    let (full, empty) = if totals[0] == 1 { (0, 1) } else { (1, 0) };
    assert_eq!(
        (totals[full].clone(), totals[empty].clone()),
        (json!(1), json!(0))
    );
    assert_eq!(partial[full], None, "the shard that has every call");
    assert_eq!(
        partial[empty],
        Some(&json!({"missing_calls": 1, "plan_calls": 1,
                     "missing_shards": [format!("{full}/2")],
                     "description": format!("shard {full}/2 missing: 1 of 1 calls absent")}))
    );
}

#[test]
fn compare_ends_with_the_closing_line_and_counts_in_words() {
    let sb = sandbox();
    for (scores, file) in [("1 0.25 0.5", "base.jsonl"), ("0 0.25 1", "new.jsonl")] {
        let out = run(
            &sb,
            scores,
            "cot.txt",
            &["--format", "json", "--output", file, "--max-errors", "1"],
        );
        assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    }
    let out =
        succeeded(
            sb.evalctl()
                .args(["compare", "--format", "text", "base.jsonl", "new.jsonl"]),
        );
    assert_eq!(
        stdout_text(&out),
        "cot.txt train: 0.4375 -> 0.3125, -0.1250 (95% CI -0.7500 to +0.3750); 4 pairs: 1 win, \
         2 ties, 1 loss\n\
         \x20 regression: train #0 (line 1): 1.0000 -> 0.0000\n\
         exit 0: no --fail-on-regression gate: the train score rose for 0, fell for 1 and held \
         for 0 of 1 candidates\n"
    );
    assert_eq!(stderr_text(&out), "");

    let out = sb
        .evalctl()
        .args(["compare", "--format", "json", "base.jsonl", "new.jsonl"])
        .args(["--fail-on-regression", "0.1"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    let reason = "the train score dropped by more than --fail-on-regression 0.1: cot.txt -0.1250";
    let comparison = json_stdout(&out);
    assert_eq!(
        (
            comparison["exit"].clone(),
            comparison["exit_reason"].clone(),
            comparison["verdict"].clone()
        ),
        (json!(1), json!(reason), json!(format!("exit 1: {reason}")))
    );
    assert_eq!(stderr_text(&out), format!("exit 1: {reason}\n"));
}

#[test]
fn compare_warns_when_most_calls_are_unpaired() {
    // Runs of other candidates (one run of one candidate would pair with the other whatever
    // their names).
    let sb = sandbox();
    sb.write("short.txt", "Be brief.\n");
    for (candidates, file) in [
        (&["cot.txt"][..], "cot.jsonl"),
        (&["terse.txt", "short.txt"][..], "terse.jsonl"),
    ] {
        let mut extra = vec!["--format", "json", "--output", file, "--max-errors", "2"];
        extra.extend(&candidates[1..]);
        let out = run(&sb, "1 0.25 0.5", candidates[0], &extra);
        assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    }
    let out =
        succeeded(
            sb.evalctl()
                .args(["compare", "--format", "text", "cot.jsonl", "terse.jsonl"]),
        );
    assert_eq!(
        stdout_text(&out),
        "unpaired calls: 4 in base, 8 in new\n\
         exit 0: no --fail-on-regression gate: the train score rose for 0, fell for 0 and held \
         for 0 of 3 candidates; not compared, with no call in both runs: cot.txt, terse.txt, \
         short.txt\n"
    );
    assert_eq!(
        stderr_text(&out),
        "warning: 4 of 4 calls in cot.jsonl and 8 of 8 calls in terse.jsonl are in one run \
         only: they are not compared; with most calls unpaired, these are probably not two runs \
         of the same candidates and examples: check the files\n"
    );
}

#[test]
fn run_names_the_report_files_it_wrote() {
    let sb = sandbox();
    let out = run(
        &sb,
        "1 0.25 0.5",
        "cot.txt",
        &[
            "--format",
            "json",
            "--max-errors",
            "1",
            "--report",
            "report.html",
            "--junit",
            "junit.xml",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    let page_kb = sb.read("report.html").len() as f64 / 1e3;
    assert_eq!(
        stderr_text(&out),
        format!(
            "{FAILED_CALL}wrote junit.xml: 4 test cases (0 failures, 1 error)\n\
             wrote report.html: 4 results (1 failed), {page_kb:.1} kB\n"
        )
    );
}
