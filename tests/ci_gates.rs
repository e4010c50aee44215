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
    // Both limits: both must hold, and the reason names the one exceeded.
    let reason = |limits: &[&str]| {
        let out = run(&sb, "json", limits);
        (code(&out), json_stdout(&out)["exit_reason"].clone())
    };
    assert_eq!(
        reason(&["--max-errors", "5", "--max-error-rate", "0.1"]),
        (
            1,
            json!("2 of 10 calls failed, more than --max-error-rate 0.1 allows (within --max-errors 5)")
        )
    );
    assert_eq!(
        reason(&["--max-errors", "1", "--max-error-rate", "0.1"]),
        (
            1,
            json!("2 of 10 calls failed, more than --max-errors 1 and --max-error-rate 0.1 allow")
        )
    );
    assert_eq!(
        reason(&["--max-errors", "2", "--max-error-rate", "0.2"]),
        (
            0,
            json!("2 of 10 calls failed, within --max-errors 2 and --max-error-rate 0.2")
        )
    );
}

#[test]
fn an_error_share_equal_to_the_rate_is_within_it() {
    // 29 of 50 is 0.58, but 0.58 * 50 is 28.999999999999996 in floating point.
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    let lines: Vec<String> = (0..50)
        .map(|i| json!({"i": i, "fail": i < 29}).to_string())
        .collect();
    sb.write("d.jsonl", lines.join("\n") + "\n");
    let out = run(&sb, "json", &["--max-error-rate", "0.58"]);
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        json_stdout(&out)["exit_reason"],
        "29 of 50 calls failed, within --max-error-rate 0.58"
    );
    let out = run(&sb, "json", &["--max-error-rate", "0.5799"]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        json_stdout(&out)["exit_reason"],
        "29 of 50 calls failed, more than --max-error-rate 0.5799 allows"
    );
}

#[test]
fn a_mean_equal_to_the_threshold_up_to_rounding_meets_it() {
    let sb = Sandbox::new();
    // 0.3, 0 and 0: the mean 0.3 / 3 is 0.09999999999999999 in floating point.
    sb.write(
        "eval.sh",
        "p=$(cat)\ncase \"$p\" in *'\"i\":0'*) echo '{\"score\": 0.3}';; *) echo '{\"score\": 0}';; esac\n",
    );
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n");
    let out = succeeded(
        sb.evalctl()
            .args(["run", "--format", "json", "--skip-preflight"])
            .args(["--evaluator-command", "sh eval.sh", "--candidate", "c"])
            .args(["--dataset", "d.jsonl", "--fail-under", "0.1"])
            .args(["--output", "r.jsonl"]),
    );
    let summary = json_stdout(&out);
    assert_eq!(
        (&summary["candidates"][0]["score"], &summary["exit_reason"]),
        (
            &json!(0.09999999999999999),
            &json!("all 3 calls succeeded; no candidate below --fail-under 0.1")
        )
    );
    succeeded(sb.evalctl().args([
        "summarize",
        "r.jsonl",
        "--fail-under",
        "0.1",
        "--junit",
        "j.xml",
    ]));
    let out = sb
        .evalctl()
        .args(["summarize", "r.jsonl", "--fail-under", "0.1001"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
}

#[test]
fn beyond_the_unit_range_rounding_is_judged_relative_to_the_scores_size() {
    let sb = Sandbox::new();
    // 100000000.1 and 100000000.3: their mean is 100000000.19999999 in floating point, more
    // than 1e-9 below 100000000.2, and still at it.
    sb.write(
        "eval.sh",
        "p=$(cat)\ncase \"$p\" in *'\"i\":0'*) echo '{\"score\": 100000000.1}';; *) echo '{\"score\": 100000000.3}';; esac\n",
    );
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n");
    let gate = |threshold: &str| {
        let out = sb
            .evalctl()
            .args(["run", "--format", "json", "--skip-preflight"])
            .args(["--evaluator-command", "sh eval.sh", "--candidate", "c"])
            .args(["--dataset", "d.jsonl", "--score-range", "any"])
            .args(["--fail-under", threshold])
            .output()
            .unwrap();
        let summary = json_stdout(&out);
        (
            code(&out),
            summary["candidates"][0]["score"].clone(),
            summary["exit_reason"].clone(),
        )
    };
    assert_eq!(
        gate("100000000.2"),
        (
            0,
            json!(100000000.19999999),
            json!("all 2 calls succeeded; no candidate below --fail-under 100000000.2")
        )
    );
    assert_eq!(gate("100000000.2001").0, 1);
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
    // --pass-score is held to the score range as --fail-under is, before any call.
    for (flag, value, never) in [
        ("--pass-score", "1.5", "pass"),
        ("--pass-score", "-0.5", "fail"),
        ("--fail-under", "1.5", "pass"),
    ] {
        let out = run(&sb, "text", &[flag, value]);
        assert_eq!(code(&out), 2);
        assert_eq!(
            stderr_text(&out),
            format!(
                "error: {flag}: {value} is outside the unit score range [0, 1], so the gate \
                 could never {never}; pass --score-range any for scores outside [0, 1]\n"
            )
        );
    }
    // Values that do not go together are all said at once.
    let out = run(
        &sb,
        "text",
        &[
            "--fail-under",
            "1.5",
            "--pass-score",
            "-0.5",
            "--task-model",
            " ",
        ],
    );
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            2,
            "error: --fail-under: 1.5 is outside the unit score range [0, 1], so the gate could \
             never pass; pass --score-range any for scores outside [0, 1]\n\
             error: --pass-score: -0.5 is outside the unit score range [0, 1], so the gate could \
             never fail; pass --score-range any for scores outside [0, 1]\n\
             error: --task-model: must not be empty\n"
                .to_string()
        )
    );
    // An empty model is said once, not again as a model given twice.
    let out = run(
        &sb,
        "text",
        &["--task-model=", "--task-model=", "--generate"],
    );
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (2, "error: --task-model: must not be empty\n".to_string())
    );
    for args in [
        &["--pass-score", "nan"][..],
        &["--score-range", "any", "--pass-score", "inf"],
    ] {
        let out = run(&sb, "text", args);
        assert_eq!(
            (code(&out), stderr_text(&out)),
            (
                2,
                "error: --pass-score: must be a finite number\n".to_string()
            )
        );
    }
    assert_eq!(
        code(&run(
            &sb,
            "json",
            &["--score-range", "any", "--pass-score", "5"]
        )),
        1
    );
}

#[test]
fn summarize_says_the_failed_calls_it_does_not_list_are_in_the_file_it_read() {
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null\nexit 1\n");
    let lines: Vec<String> = (0..7).map(|i| json!({"i": i}).to_string()).collect();
    sb.write("d.jsonl", lines.join("\n") + "\n");
    let out = sb
        .evalctl()
        .args(["run", "--format", "json", "--skip-preflight"])
        .args(["--evaluator-command", "sh eval.sh", "--candidate", "c"])
        .args(["--dataset", "d.jsonl", "--output", "r.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    let failed: String = (1..=5)
        .map(|line| {
            format!(
                "failed: cand-1 train #{} (line {line}): exit_status: command exited with code 1\n",
                line - 1
            )
        })
        .collect();
    for (file, kept_in) in [("r.jsonl", "r.jsonl"), ("-", "the results read from stdin")] {
        let out = sb
            .evalctl()
            .args(["summarize", file, "--format", "json"])
            .write_stdin(sb.read("r.jsonl"))
            .output()
            .unwrap();
        assert_eq!(
            stderr_text(&out),
            format!(
                "{failed}failed: … and 2 more failed calls (every call is in {kept_in})\n\
                 exit 1: 7 of 7 calls failed\n"
            )
        );
    }
}

#[test]
fn every_failed_repeat_is_listed_with_its_repeat_in_run_and_summarize() {
    let sb = Sandbox::new();
    // Each call fails with its own message: the count of calls so far (`-j 1`).
    sb.write(
        "eval.sh",
        "cat >/dev/null\necho x >> calls\necho \"oops $(wc -l < calls)\" >&2\nexit 1\n",
    );
    sb.write("d.jsonl", "{\"id\": \"q1\"}\n");
    let out = sb
        .evalctl()
        .args(["run", "--format", "json", "--skip-preflight", "-j", "1"])
        .args(["--evaluator-command", "sh eval.sh", "--candidate", "c"])
        .args([
            "--dataset",
            "d.jsonl",
            "--repeat",
            "3",
            "--output",
            "r.jsonl",
        ])
        .output()
        .unwrap();
    let failed: String = (0..3)
        .map(|repeat| {
            format!(
                "failed: cand-1 train q1 (line 1) repeat {repeat}: exit_status: command exited \
                 with code 1; stderr: oops {}\n",
                repeat + 1
            )
        })
        .collect();
    let listed = format!("{failed}exit 1: 3 of 3 calls failed\n");
    assert_eq!((code(&out), stderr_text(&out)), (1, listed.clone()));
    let out = sb
        .evalctl()
        .args(["summarize", "r.jsonl", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!((code(&out), stderr_text(&out)), (1, listed));
}

#[test]
fn scores_near_the_largest_float_have_a_finite_mean_that_the_gate_judges() {
    let sb = Sandbox::new();
    sb.write(
        "eval.sh",
        "p=$(cat)\ncase \"$p\" in *'\"i\":0'*) echo '{\"score\": 1.7e308}';; *) echo '{\"score\": 1.5e308}';; esac\n",
    );
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n");
    let out = sb
        .evalctl()
        .args(["run", "--format", "json", "--skip-preflight"])
        .args(["--evaluator-command", "sh eval.sh", "--candidate", "c"])
        .args(["--dataset", "d.jsonl", "--score-range", "any"])
        .args(["--fail-under", "1.61e308"])
        .output()
        .unwrap();
    let summary = json_stdout(&out);
    assert_eq!(
        (code(&out), &summary["candidates"][0]["score"]),
        (1, &json!(1.6e308))
    );
}

#[test]
fn an_interval_as_wide_as_the_largest_floats_shows_a_finite_half_width() {
    // [-1.5e308, 1.5e308]: its width overflows a float, its half-width does not.
    let sb = Sandbox::new();
    sb.write(
        "eval.sh",
        "p=$(cat)\ncase \"$p\" in *'\"i\":2'*) echo '{\"score\": -1.5e308}';; *) echo '{\"score\": 1.5e308}';; esac\n",
    );
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n");
    let row = |format: &str| {
        let out = sb
            .evalctl()
            .args(["run", "--format", format, "--skip-preflight"])
            .args(["--evaluator-command", "sh eval.sh", "--candidate", "c"])
            .args(["--dataset", "d.jsonl", "--score-range", "any"])
            .output()
            .unwrap();
        let text = stdout_text(&out);
        let row = text
            .lines()
            .find(|line| line.contains("cand-1"))
            .map(str::to_string);
        (code(&out), row)
    };
    let half = "5.0000e307 ± 1.5000e308";
    assert_eq!(
        [row("text"), row("markdown")],
        [
            (0, Some(format!("cand-1     {half}  {half}  3 / 0"))),
            (0, Some(format!("| cand-1 | {half} | {half} | 3 / 0 |"))),
        ]
    );
}

#[test]
fn a_score_that_rounds_to_zero_is_shown_without_a_sign() {
    // -0.00001 to four places is 0.0000, not -0.0000, in the table and the closing line.
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null\necho '{\"score\": -0.00001}'\n");
    sb.write("d.jsonl", "{\"i\":0}\n");
    let out = sb
        .evalctl()
        .args(["run", "--format", "text", "--skip-preflight"])
        .args(["--evaluator-command", "sh eval.sh", "--candidate", "c"])
        .args(["--dataset", "d.jsonl", "--score-range", "any"])
        .args(["--fail-under", "0.5"])
        .output()
        .unwrap();
    let text = stdout_text(&out);
    let shown: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("cand-1") || line.starts_with("exit"))
        .collect();
    assert_eq!(
        (code(&out), shown),
        (
            1,
            vec![
                "cand-1     0.0000  0.0000      1 / 0",
                "exit 1: the call succeeded; candidate cand-1 scored 0.0000, below --fail-under 0.5"
            ]
        )
    );
}
