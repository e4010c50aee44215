//! CI gates through the binary: the JSON summary says why the exit code is what it is
//! (`gates`, `exit`, `exit_reason`), `--max-errors` / `--max-error-rate` tolerate a few errored
//! calls, and the text summary ends with the same reason in one line.

use crate::common::*;
use serde_json::json;

/// An evaluator that fails on examples whose `fail` is true and scores 1 otherwise.
const EVAL: &str =
    "p=$(cat)\ncase \"$p\" in *'\"fail\":true'*) exit 1;; esac\nprintf '{\"score\": 1}'\n";

fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    let lines: Vec<String> = (0..10)
        .map(|i| json!({"i": i, "fail": i < 2}).to_string())
        .collect();
    sb.write("d.jsonl", lines.join("\n") + "\n");
    sb
}

fn run(sb: &Sandbox, format: &str, extra: &[&str]) -> std::process::Output {
    sb.evalctl()
        .args([
            "run",
            "--format",
            format,
            "--evaluator-command",
            "sh eval.sh",
        ])
        .args([
            "--candidate",
            "c",
            "--dataset",
            "d.jsonl",
            "--skip-preflight",
        ])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn errors_fail_the_run_unless_tolerated() {
    let sb = sandbox();
    let out = run(&sb, "json", &[]);
    assert_eq!(code(&out), 1);
    let summary = json_stdout(&out);
    assert_eq!(summary["exit"], 1);
    assert_eq!(summary["exit_reason"], "2 of 10 calls failed");
    assert_eq!(
        summary["gates"]["errors"],
        json!({"count": 2, "calls": 10, "max_errors": null, "max_error_rate": null, "passed": false})
    );
    assert!(stderr_text(&out).contains("exit 1: 2 of 10 calls failed\n"));

    let out = run(&sb, "json", &["--max-errors", "2"]);
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    let summary = json_stdout(&out);
    assert_eq!(summary["exit"], 0);
    assert_eq!(
        summary["exit_reason"],
        "2 of 10 calls failed, within --max-errors 2"
    );

    let out = run(&sb, "json", &["--max-errors", "1"]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        json_stdout(&out)["exit_reason"],
        "2 of 10 calls failed, more than --max-errors 1 allows"
    );

    assert_eq!(code(&run(&sb, "json", &["--max-error-rate", "0.2"])), 0);
    let out = run(&sb, "json", &["--max-error-rate", "0.1"]);
    assert_eq!(code(&out), 1);
    assert_eq!(json_stdout(&out)["gates"]["errors"]["max_error_rate"], 0.1);
    // Both limits: both must hold.
    assert_eq!(
        code(&run(
            &sb,
            "json",
            &["--max-errors", "5", "--max-error-rate", "0.1"]
        )),
        1
    );
}

#[test]
fn fail_under_names_the_threshold_and_the_candidates_below_it() {
    let sb = sandbox();
    let out = run(&sb, "json", &["--max-errors", "2", "--fail-under", "0.9"]);
    assert_eq!(code(&out), 1);
    let summary = json_stdout(&out);
    assert_eq!(
        summary["gates"]["fail_under"],
        json!({"threshold": 0.9, "below": ["cand-1"], "passed": false})
    );
    assert_eq!(
        summary["exit_reason"],
        "2 of 10 calls failed, within --max-errors 2; candidate cand-1 scored 0.8000, below --fail-under 0.9"
    );

    let out = run(&sb, "text", &["--max-errors", "2", "--fail-under", "0.5"]);
    assert_eq!(code(&out), 0);
    let text = stdout_text(&out);
    assert!(
        text.ends_with(
            "\nexit 0: 2 of 10 calls failed, within --max-errors 2; no candidate below --fail-under 0.5\n"
        ),
        "{text}"
    );
}

#[test]
fn bad_gate_values_are_usage_errors() {
    let sb = sandbox();
    let out = run(&sb, "json", &["--max-error-rate", "5"]);
    assert_eq!(code(&out), 2);
    assert!(stderr_text(&out).contains("'5' is not a share between 0 and 1"));
    let out = run(&sb, "json", &["--max-errors", "-1"]);
    assert_eq!(code(&out), 2);
}
