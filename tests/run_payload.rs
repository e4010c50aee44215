//! What `evalctl run` sends and reports: the protocol-v2 payload per mode (single, dataset,
//! generalization) read back byte for byte from an `sh` evaluator's log, `task_model` and its
//! env var, `--evaluator-cwd`, both `--evaluator-command` forms, aggregates and the candidate
//! score per mode, and the execution flags (`-j 1` order, `--limit`, `--fail-under`, `--output`
//! appending, `--format`).

use crate::common::{
    code, json_stdout, mask_elapsed, stderr_text, stdout_text, succeeded, Sandbox, LOG_PAYLOAD,
};
use serde_json::{json, Value};

/// Scores each call with the example's `s` (1 in single mode); exits 1 when the example has
/// `"fail": true`. Logs `candidate|s` lines to calls.log.
const SCORE_FROM_EXAMPLE: &str = r#"p=$(cat)
case "$p" in *'"fail":true'*) echo "asked to fail" >&2; exit 1;; esac
s=$(printf '%s' "$p" | sed -n 's/.*"s":\([-0-9.e]*\).*/\1/p')
[ -n "$s" ] || s=1
c=$(printf '%s' "$p" | sed -n 's/.*"candidate":"\([^"]*\)".*/\1/p')
printf '%s|%s\n' "$c" "$s" >> calls.log
printf '{"score": %s, "seen": "%s"}' "$s" "$c"
"#;

fn approx(value: &Value, expected: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() < 1e-9)
}

// ----- payloads ---------------------------------------------------------------------------------

#[test]
fn single_mode_payload_has_only_version_and_candidate() {
    let sb = Sandbox::new();
    succeeded(
        sb.run_with(LOG_PAYLOAD)
            .args(["--candidate", "hello \"world\"\n"]),
    );
    assert_eq!(
        sb.lines("payloads.log"),
        [
            r#"{"_protocol_version":2,"candidate":"__evalctl_preflight__"}"#,
            r#"{"_protocol_version":2,"candidate":"hello \"world\"\n"}"#,
        ]
    );
}

#[test]
fn dataset_payload_carries_the_record_exactly_as_loaded() {
    let sb = Sandbox::new();
    sb.write(
        "d.jsonl",
        "{\"z\": 1.10, \"a\": 100, \"big\": 123456789012345678901234567890, \"m\": {\"y\": [1.0, -0.0, 0.1000], \"b\": \"\\u00e9\"}}\n{\"k\": 2, \"e\": 1e2, \"E\": 2.5E-3}\n",
    );
    succeeded(sb.run_with(LOG_PAYLOAD).args([
        "-j",
        "1",
        "--candidate",
        "c",
        "--dataset",
        "d.jsonl",
    ]));
    // The record's text exactly as in the file: spacing, escapes, number spelling, key order.
    let first = r#"{"z": 1.10, "a": 100, "big": 123456789012345678901234567890, "m": {"y": [1.0, -0.0, 0.1000], "b": "\u00e9"}}"#;
    let second = r#"{"k": 2, "e": 1e2, "E": 2.5E-3}"#;
    let payloads = sb.lines("payloads.log");
    assert_eq!(
        payloads,
        [
            // the probe carries the first dataset record
            format!(
                r#"{{"_protocol_version":2,"candidate":"__evalctl_preflight__","example":{first}}}"#
            ),
            format!(r#"{{"_protocol_version":2,"candidate":"c","example":{first}}}"#),
            format!(r#"{{"_protocol_version":2,"candidate":"c","example":{second}}}"#),
        ]
    );
}

#[test]
fn generalization_payloads_use_dataset_then_valset_examples() {
    let sb = Sandbox::new();
    sb.write(
        "d.jsonl",
        "{\"split\": \"train\", \"i\": 0}\n{\"split\": \"train\", \"i\": 1}\n",
    );
    sb.write("v.jsonl", "{\"split\": \"val\", \"i\": 0}\n");
    succeeded(
        sb.run_with(LOG_PAYLOAD)
            .args([
                "-j",
                "1",
                "--candidate",
                "c",
                "--dataset",
                "d.jsonl",
                "--valset",
                "v.jsonl",
            ])
            .args([
                "--task-model",
                "openai/gpt-4o-mini",
                "--output",
                "out.jsonl",
            ]),
    );
    let tm = r#""task_model":"openai/gpt-4o-mini""#;
    assert_eq!(
        sb.lines("payloads.log"),
        [
            format!(
                r#"{{"_protocol_version":2,"candidate":"__evalctl_preflight__",{tm},"example":{{"split": "train", "i": 0}}}}"#
            ),
            format!(
                r#"{{"_protocol_version":2,"candidate":"c",{tm},"example":{{"split": "train", "i": 0}}}}"#
            ),
            format!(
                r#"{{"_protocol_version":2,"candidate":"c",{tm},"example":{{"split": "train", "i": 1}}}}"#
            ),
            format!(
                r#"{{"_protocol_version":2,"candidate":"c",{tm},"example":{{"split": "val", "i": 0}}}}"#
            ),
        ]
    );
    let splits: Vec<(Value, Value, Value)> = sb
        .jsonl("out.jsonl")
        .iter()
        .map(|r| {
            (
                r["split"].clone(),
                r["example_index"].clone(),
                r["example_line"].clone(),
            )
        })
        .collect();
    assert_eq!(
        splits,
        [
            (json!("train"), json!(0), json!(1)),
            (json!("train"), json!(1), json!(2)),
            (json!("val"), json!(0), json!(1)),
        ]
    );
}

#[test]
fn task_model_is_in_the_payload_and_the_environment_only_when_given() {
    let script = "p=$(cat)\nprintf '%s\\n' \"$p\" >> payloads.log\nprintf '%s\\n' \"${OPTIMIZE_ANYTHING_TASK_MODEL-unset}\" >> env.log\nprintf '{\"score\": 1}'\n";

    let sb = Sandbox::new();
    succeeded(
        sb.run_with(script)
            .args(["--candidate", "c", "--task-model", "anthropic/claude-x"])
            .env("EXISTING_VAR", "kept"),
    );
    assert_eq!(
        sb.lines("env.log"),
        ["anthropic/claude-x", "anthropic/claude-x"]
    );
    assert_eq!(
        sb.lines("payloads.log")[1],
        r#"{"_protocol_version":2,"candidate":"c","task_model":"anthropic/claude-x"}"#
    );

    let sb = Sandbox::new();
    succeeded(sb.run_with(script).args(["--candidate", "c"]));
    assert_eq!(sb.lines("env.log"), ["unset", "unset"]);
    assert_eq!(
        sb.lines("payloads.log"),
        [
            r#"{"_protocol_version":2,"candidate":"__evalctl_preflight__"}"#,
            r#"{"_protocol_version":2,"candidate":"c"}"#
        ]
    );
}

#[test]
fn environment_is_inherited() {
    let sb = Sandbox::new();
    succeeded(
        sb.run_with(
            "cat >/dev/null\nprintf '{\"score\": 1, \"v\": \"%s\"}' \"$MY_EVAL_SETTING\"\n",
        )
        .args([
            "--candidate",
            "c",
            "--task-model",
            "m",
            "--output",
            "out.jsonl",
        ])
        .env("MY_EVAL_SETTING", "inherited"),
    );
    assert_eq!(sb.jsonl("out.jsonl")[0]["side_info"]["v"], "inherited");
}

#[test]
fn evaluator_cwd_sets_the_working_directory() {
    let sb = Sandbox::new();
    sb.write(
        "evaldir/eval.sh",
        "cat >/dev/null\nread -r word < data.txt\nprintf '{\"score\": 1, \"word\": \"%s\", \"pwd\": \"%s\"}' \"$word\" \"$(pwd -P)\"\n",
    );
    sb.write("evaldir/data.txt", "found\n");
    sb.write_executable(
        "evaldir/run.sh",
        "#!/bin/sh\ncat >/dev/null\nprintf '{\"score\": 1, \"word\": \"exec\"}'\n",
    );
    let dir = std::fs::canonicalize(sb.join("evaldir")).unwrap();
    for command in [&["sh eval.sh"][..], &["sh", "eval.sh"], &["./run.sh"]] {
        let _ = std::fs::remove_file(sb.join("out.jsonl"));
        let out = sb
            .evalctl()
            .args(["run", "--format", "json", "--evaluator-cwd", "evaldir"])
            .arg("--evaluator-command")
            .args(command)
            .args(["--candidate", "c", "--output", "out.jsonl"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{command:?}: {}", stderr_text(&out));
        let side = &sb.jsonl("out.jsonl")[0]["side_info"];
        if command == ["./run.sh"] {
            assert_eq!(side["word"], "exec");
        } else {
            assert_eq!(side["word"], "found", "{command:?}");
            assert_eq!(side["pwd"], dir.to_str().unwrap(), "{command:?}");
        }
    }
}

#[test]
fn single_string_and_multi_word_forms_run_the_same_argv_without_a_shell() {
    let sb = Sandbox::new();
    sb.write(
        "eval.sh",
        "cat >/dev/null\nfor a in \"$@\"; do printf '[%s]' \"$a\" >> args.log; done\necho >> args.log\nprintf '{\"score\": 1}'\n",
    );
    let forms: &[&[&str]] = &[
        &["sh eval.sh"],
        &["sh", "eval.sh"],
        // shell-word rules: quotes group, no expansion of $HOME or globs, no shell operators
        &["sh eval.sh --strict 'two words' $HOME * ;"],
    ];
    for form in forms {
        let out = sb
            .evalctl()
            .args([
                "run",
                "--format",
                "json",
                "--skip-preflight",
                "--evaluator-command",
            ])
            .args(*form)
            .args(["--candidate", "c"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{form:?}: {}", stderr_text(&out));
    }
    assert_eq!(
        sb.read("args.log"),
        "\n\n[--strict][two words][$HOME][*][;]\n"
    );
}

#[test]
fn an_evaluator_that_never_reads_stdin_still_works_with_a_large_payload() {
    let sb = Sandbox::new();
    sb.write("big.txt", "x".repeat(4 * 1024 * 1024));
    succeeded(sb.run_with("printf '{\"score\": 0.25}'\n").args([
        "big.txt",
        "--output",
        "out.jsonl",
    ]));
    let results = sb.jsonl("out.jsonl");
    assert_eq!(results[0]["error"], Value::Null);
    assert!(approx(&results[0]["score"], 0.25));
}

#[test]
fn payloads_smaller_and_larger_than_a_pipe_reach_the_evaluator_whole() {
    // Up to a pipe's 64 KiB the payload is in the pipe before the evaluator starts; the rest of
    // a larger one is written while it reads.
    for size in [10, 60 * 1024, 4 * 1024 * 1024 + 3] {
        let sb = Sandbox::new();
        let candidate = "ab".repeat(size / 2) + &"c".repeat(size % 2);
        sb.write("candidate.txt", &candidate);
        succeeded(
            sb.run_with(
                "cat > payload.json
printf '{\"score\": 1}'
",
            )
            .args(["candidate.txt"]),
        );
        let payload: Value = serde_json::from_str(&sb.read("payload.json")).unwrap();
        assert_eq!(
            payload["candidate"],
            Value::String(candidate),
            "{size} bytes"
        );
    }
}

// ----- modes and aggregates ---------------------------------------------------------------------

#[test]
fn single_mode_summary_and_result_line() {
    let sb = Sandbox::new();
    let out = succeeded(sb
        .run_with("cat >/dev/null\nprintf '{\"reason\": \"ok\", \"score\": 0.75, \"n\": {\"b\": 1, \"a\": 2.50}}'\n")
        .args(["--candidate", "c", "--output", "out.jsonl"]));
    assert!(
        out.stderr.is_empty(),
        "stderr not empty: {}",
        stderr_text(&out)
    );
    let summary = json_stdout(&out);
    assert_eq!(
        summary["evaluator"],
        json!({"kind": "command", "target": "sh eval.sh"})
    );
    assert_eq!(summary["score_range"], "unit");
    assert_eq!(
        summary["calls"],
        json!({"total": 1, "ok": 1, "errors": 0, "cached": 0})
    );
    assert!(summary["elapsed_ms"].is_number());
    let candidate = &summary["candidates"][0];
    assert_eq!(candidate["id"], "cand-1");
    assert!(approx(&candidate["score"], 0.75));
    assert_eq!(
        candidate["single"],
        json!({"n": 1, "mean": 0.75, "min": 0.75, "max": 0.75, "errors": 0,
               "stderr": null, "ci95": null})
    );
    assert!(candidate.get("train").is_none() && candidate.get("val").is_none());

    let lines = sb.lines("out.jsonl");
    assert_eq!(lines.len(), 1);
    let record: Value = serde_json::from_str(&lines[0]).unwrap();
    let keys: Vec<&str> = record
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "key",
            "candidate_id",
            "candidate_index",
            "split",
            "example_index",
            "example_line",
            "score",
            "side_info",
            "error",
            "attempts",
            "latency_ms",
            "candidate_digest",
            "run"
        ]
    );
    assert_eq!(record["split"], "single");
    assert_eq!(record["example_index"], Value::Null);
    assert_eq!(record["example_line"], Value::Null);
    assert_eq!(record["attempts"], 1);
    assert!(record["latency_ms"].as_f64().unwrap() >= 0.0);
    // side info verbatim: key order and number spelling
    assert_eq!(
        record["side_info"].to_string(),
        r#"{"reason":"ok","n":{"b":1,"a":2.50}}"#
    );
}

#[test]
fn dataset_only_score_is_the_train_mean() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"s\":0.2}\n{\"s\":0.4}\n{\"s\":0.9}\n");
    let out = succeeded(sb.run_with(SCORE_FROM_EXAMPLE).args([
        "--candidate",
        "c",
        "--dataset",
        "d.jsonl",
    ]));
    let candidate = &json_stdout(&out)["candidates"][0];
    assert!(approx(&candidate["score"], 0.5), "{candidate}");
    let train = &candidate["train"];
    assert_eq!(train["n"], 3);
    assert!(approx(&train["mean"], 0.5));
    assert!(approx(&train["min"], 0.2));
    assert!(approx(&train["max"], 0.9));
    assert_eq!(train["errors"], 0);
    assert!(candidate.get("val").is_none() && candidate.get("single").is_none());
}

#[test]
fn generalization_score_is_the_val_mean_and_failed_calls_count_as_zero() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"s\":0.2}\n{\"s\":0.4}\n{\"s\":0.6}\n");
    sb.write("v.jsonl", "{\"s\":1.0}\n{\"fail\":true}\n{\"s\":0.5}\n");
    let out = sb
        .run_with(SCORE_FROM_EXAMPLE)
        .args([
            "--candidate",
            "a",
            "--candidate",
            "b",
            "--dataset",
            "d.jsonl",
        ])
        .args(["--valset", "v.jsonl", "--output", "out.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "a failed call makes the exit code 1");
    let summary = json_stdout(&out);
    assert_eq!(
        summary["calls"],
        json!({"total": 12, "ok": 10, "errors": 2, "cached": 0})
    );
    for candidate in summary["candidates"].as_array().unwrap() {
        assert!(approx(&candidate["score"], 0.5), "{candidate}");
        assert!(approx(&candidate["train"]["mean"], 0.4));
        assert_eq!(candidate["train"]["errors"], 0);
        let val = &candidate["val"];
        assert_eq!(val["n"], 3);
        assert_eq!(val["errors"], 1);
        assert!(approx(&val["min"], 0.0));
        assert!(approx(&val["max"], 1.0));
    }
    let failed: Vec<Value> = sb
        .jsonl("out.jsonl")
        .into_iter()
        .filter(|r| !r["error"].is_null())
        .collect();
    assert_eq!(failed.len(), 2);
    for record in &failed {
        assert_eq!(record["split"], "val");
        assert_eq!(record["example_line"], 2);
        assert_eq!(record["score"].as_f64(), Some(0.0));
        assert_eq!(record["error"]["kind"], "exit_status");
        assert_eq!(
            record["error"]["message"],
            "command exited with code 1; stderr: asked to fail"
        );
    }
    assert_eq!(stderr_text(&out), "failed: cand-1 val #1 (line 2): exit_status: command exited with code 1; stderr: asked to fail
failed: cand-2 val #1 (line 2): exit_status: command exited with code 1; stderr: asked to fail
exit 1: 2 of 12 calls failed
");
}

// ----- execution flags --------------------------------------------------------------------------

#[test]
fn concurrency_one_is_sequential_in_plan_order() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"s\":0.1}\n{\"s\":0.2}\n{\"s\":0.3}\n");
    sb.write("v.jsonl", "{\"s\":0.4}\n{\"s\":0.5}\n");
    // Each call records its start and end; a sleep makes overlap visible if there is any.
    let script =
        format!("echo start >> order.log\nsleep 0.02\n{SCORE_FROM_EXAMPLE}echo end >> order.log\n");
    succeeded(
        sb.run_with(&script)
            .args([
                "-j",
                "1",
                "--candidate",
                "A",
                "--candidate",
                "B",
                "--skip-preflight",
            ])
            .args([
                "--dataset",
                "d.jsonl",
                "--valset",
                "v.jsonl",
                "--output",
                "out.jsonl",
            ]),
    );
    let order: Vec<String> = sb
        .jsonl("out.jsonl")
        .iter()
        .map(|r| {
            format!(
                "{} {} {}",
                r["candidate_id"].as_str().unwrap(),
                r["split"].as_str().unwrap(),
                r["example_index"]
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            "cand-1 train 0",
            "cand-1 train 1",
            "cand-1 train 2",
            "cand-1 val 0",
            "cand-1 val 1",
            "cand-2 train 0",
            "cand-2 train 1",
            "cand-2 train 2",
            "cand-2 val 0",
            "cand-2 val 1",
        ]
    );
    assert_eq!(
        sb.lines("calls.log"),
        [
            "A|0.1", "A|0.2", "A|0.3", "A|0.4", "A|0.5", "B|0.1", "B|0.2", "B|0.3", "B|0.4",
            "B|0.5"
        ]
    );
    let starts_ends = sb.lines("order.log");
    assert_eq!(starts_ends.len(), 20);
    for pair in starts_ends.chunks(2) {
        assert_eq!(pair, ["start", "end"], "calls overlapped: {starts_ends:?}");
    }
}

/// An evaluator for `-j JOBS` that logs its span (`START END` in nanoseconds) to `spans.log`. It
/// first waits (at most 5 s) until JOBS calls have started, so that if evalctl runs JOBS calls at
/// once, the first JOBS spans surely overlap; no timing threshold is involved.
fn span_logging_evaluator(jobs: usize) -> String {
    format!(
        "cat >/dev/null\nstart=$(date +%s%N)\n: > \"started.$$\"\ni=0\n\
         while set -- started.*; [ $# -lt {jobs} ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done\n\
         echo \"$start $(date +%s%N)\" >> spans.log\nprintf '{{\"score\": 1}}'\n"
    )
}

/// The most spans in `spans` (`START END` lines) open at one instant; spans that only touch do
/// not overlap.
fn max_overlap(spans: &[String]) -> usize {
    let mut events: Vec<(u128, i32)> = spans
        .iter()
        .flat_map(|line| {
            let (start, end) = line.split_once(' ').expect("START END");
            [
                (start.parse().expect("a start time"), 1),
                (end.parse().expect("an end time"), -1),
            ]
        })
        .collect();
    // At equal times the end comes first.
    events.sort();
    let mut open = 0;
    let mut most = 0;
    for (_, change) in events {
        open += change;
        most = most.max(open);
    }
    usize::try_from(most).expect("never negative")
}

#[test]
fn concurrency_overlaps_calls_up_to_the_bound_and_never_beyond() {
    for jobs in [1, 4] {
        let sb = Sandbox::new();
        sb.write("d.jsonl", "{}\n".repeat(10));
        succeeded(sb.run_with(&span_logging_evaluator(jobs)).args([
            "-j",
            &jobs.to_string(),
            "--candidate",
            "c",
            "--dataset",
            "d.jsonl",
            "--skip-preflight",
        ]));
        let spans = sb.lines("spans.log");
        assert_eq!(spans.len(), 10, "one span per call: {spans:?}");
        assert_eq!(max_overlap(&spans), jobs, "-j {jobs}: {spans:?}");
    }
}

#[test]
fn limit_keeps_the_first_n_examples_of_each_split() {
    let sb = Sandbox::new();
    sb.write(
        "d.jsonl",
        "{\"s\":0.1}\n{\"s\":0.2}\n{\"s\":0.3}\n{\"s\":0.4}\n",
    );
    sb.write("v.jsonl", "{\"s\":0.5}\n\n{\"s\":0.7}\n{\"s\":0.9}\n");
    let out = succeeded(
        sb.run_with(SCORE_FROM_EXAMPLE)
            .args([
                "-j",
                "1",
                "--limit",
                "2",
                "--candidate",
                "c",
                "--skip-preflight",
            ])
            .args([
                "--dataset",
                "d.jsonl",
                "--valset",
                "v.jsonl",
                "--output",
                "out.jsonl",
            ]),
    );
    assert_eq!(sb.lines("calls.log"), ["c|0.1", "c|0.2", "c|0.5", "c|0.7"]);
    let summary = json_stdout(&out);
    assert_eq!(summary["candidates"][0]["train"]["n"], 2);
    assert_eq!(summary["candidates"][0]["val"]["n"], 2);
    assert!(approx(&summary["candidates"][0]["score"], 0.6));
    let lines: Vec<Value> = sb
        .jsonl("out.jsonl")
        .iter()
        .map(|r| r["example_line"].clone())
        .collect();
    assert_eq!(lines, [json!(1), json!(2), json!(1), json!(3)]);
}

#[test]
fn fail_under_gates_on_the_candidate_score() {
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null\nprintf '{\"score\": 0.5}'\n");
    let run_in = |range: &str, threshold: &str| {
        sb.evalctl()
            .args([
                "run",
                "--format",
                "json",
                "--evaluator-command",
                "sh eval.sh",
            ])
            .args(["--candidate", "c", "--score-range", range])
            .args(["--fail-under", threshold])
            .output()
            .unwrap()
    };
    let run = |threshold: &str| run_in("unit", threshold);
    let out = run("0.6");
    assert_eq!(code(&out), 1);
    assert_eq!(
        stderr_text(&out),
        "exit 1: the call succeeded; candidate cand-1 scored 0.5000, below --fail-under 0.6\n"
    );
    json_stdout(&out); // the summary is still printed
    assert_eq!(code(&run("0.5")), 0);
    assert_eq!(code(&run("0.1")), 0);
    // With the unit score range a threshold outside [0, 1] is a gate that can never fail (or
    // never pass): a usage error. With --score-range any it gates as given.
    let out = run("-1");
    assert_eq!(code(&out), 2);
    let message = "--fail-under: -1 is outside the unit score range [0, 1], so the gate could \
                   never fail; pass --score-range any for scores outside [0, 1]";
    assert_eq!(stderr_text(&out), format!("error: {message}\n"));
    assert_eq!(
        json_stdout(&out),
        serde_json::json!({"ok": false, "exit": 2, "errors": [message]})
    );
    assert_eq!(code(&run_in("any", "-1")), 0);

    // --limit 0 would evaluate nothing (and pass any gate): it is a usage error.
    sb.write("d.jsonl", "{\"q\": 1}\n");
    let out = sb
        .evalctl()
        .args([
            "run",
            "--format",
            "json",
            "--evaluator-command",
            "sh eval.sh",
        ])
        .args([
            "--candidate",
            "c",
            "--dataset",
            "d.jsonl",
            "--limit",
            "0",
            "--fail-under",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out),
        "error: invalid value '0' for '--limit <N>': must be a whole number of at least 1

For more information, try '--help'.
"
    );
}

#[test]
fn output_appends_and_never_truncates() {
    let sb = Sandbox::new();
    sb.write("out.jsonl", "{\"earlier\": true}\n");
    // A file holding other lines takes a run only with --append-run (see run_identity.rs).
    for candidate in ["c", "d"] {
        succeeded(sb.run_with(LOG_PAYLOAD).args([
            "--candidate",
            candidate,
            "--output",
            "out.jsonl",
            "--append-run",
        ]));
    }
    let lines = sb.jsonl("out.jsonl");
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0], json!({"earlier": true}));
    assert_eq!(lines[1]["candidate_id"], "cand-1");
    assert_eq!(lines[2]["candidate_id"], "cand-1");
    assert_ne!(
        lines[1]["run"]["fingerprint"],
        lines[2]["run"]["fingerprint"]
    );
}

#[test]
fn output_to_dev_null_discards_the_lines_as_tasks_and_spec_score_do() {
    let sb = Sandbox::new();
    let out = sb
        .run_with(LOG_PAYLOAD)
        .args(["--candidate", "c", "--output", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(stderr_text(&out), "");
}

#[test]
fn output_into_a_missing_directory_is_bad_input() {
    let sb = Sandbox::new();
    let out = sb
        .run_with("touch called\ncat >/dev/null\nprintf '{\"score\": 1}'\n")
        .args(["--candidate", "c", "--output", "no/such/dir/out.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr_text(&out));
    assert_eq!(stderr_text(&out), "error: no/such/dir/out.jsonl: cannot open --output for writing: no directory no/such/dir\n");
    assert!(!sb.exists("called"));
}

#[test]
fn formats_text_and_json() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"s\":0.25}\n");
    sb.write("v.jsonl", "{\"s\":0.75}\n");
    sb.write("eval.sh", SCORE_FROM_EXAMPLE);
    let base = |format: Option<&str>| {
        let mut cmd = sb.evalctl();
        cmd.args([
            "run",
            "--evaluator-command",
            "sh eval.sh",
            "--candidate",
            "good one",
        ]);
        cmd.args(["--dataset", "d.jsonl", "--valset", "v.jsonl"]);
        if let Some(format) = format {
            cmd.args(["--format", format]);
        }
        cmd.output().unwrap()
    };
    let text = base(Some("text"));
    assert_eq!(code(&text), 0, "{}", stderr_text(&text));
    let stdout = stdout_text(&text);
    // Text with the train and val means, and no colour when not asked.
    assert_eq!(
        mask_elapsed(&stdout),
        "evaluator: command sh eval.sh   score range: unit
calls: 2 (2 ok, 0 errors)   elapsed: [..]s

candidate  score   train mean  n / errors  val mean  n / errors
cand-1     0.7500  0.2500      1 / 0       0.7500    1 / 0

score = the candidate's val mean; failed calls count as 0

exit 0: all 2 calls succeeded
"
    );

    let json_out = base(Some("json"));
    assert!(approx(
        &json_stdout(&json_out)["candidates"][0]["score"],
        0.75
    ));
    // Not a terminal: the default is JSON.
    let default = base(None);
    assert!(approx(
        &json_stdout(&default)["candidates"][0]["score"],
        0.75
    ));
}
