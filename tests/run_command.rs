//! The command adapter under `evalctl run`: the score-range matrix through real `sh` evaluators,
//! errors that keep side information and score 0.0, non-zero exits with a stderr excerpt,
//! timeouts that kill the whole process group, the 8 MiB stdout cap, spawn failures, and Ctrl-C
//! (exit 130, results flushed, summary printed, no evaluator left behind).

use crate::common;

use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

use crate::common::{
    check_record, code, json_stdout, process_alive, stderr_text, succeeded, wait_until, Expect,
    Sandbox, PRINT_EVAL_OUT, SCORE_MATRIX,
};
use serde_json::{json, Value};

/// Run one call whose evaluator prints `raw`; returns (exit code, the result record).
fn run_once(sb: &Sandbox, raw: &str, range: &str, extra: &[&str]) -> (i32, Value) {
    let _ = std::fs::remove_file(sb.join("out.jsonl"));
    let out = sb
        .run_with(PRINT_EVAL_OUT)
        .args([
            "--skip-preflight",
            "--candidate",
            "c",
            "--output",
            "out.jsonl",
        ])
        .args(["--score-range", range])
        .args(extra)
        .env("EVAL_OUT", raw)
        .output()
        .unwrap();
    let records = sb.jsonl("out.jsonl");
    assert_eq!(records.len(), 1, "{raw:?}: {}", stderr_text(&out));
    (code(&out), records[0].clone())
}

#[test]
fn score_range_matrix_for_the_command_adapter() {
    let sb = Sandbox::new();
    let mut failures = Vec::new();
    for (raw, unit, any) in SCORE_MATRIX {
        for (range, expected) in [("unit", *unit), ("any", *any)] {
            let (exit, record) = run_once(&sb, raw, range, &[]);
            let want_exit = if matches!(expected, Expect::Score(_)) {
                0
            } else {
                1
            };
            if exit != want_exit {
                failures.push(format!(
                    "{range} {raw:?}: exit {exit}, expected {want_exit}"
                ));
            }
            if let Err(why) = check_record(&record, expected) {
                failures.push(format!("{range} {raw:?}: {why}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_score_of_minus_zero_is_zero_in_the_result_line_and_the_summary() {
    let sb = Sandbox::new();
    let out = sb
        .run_with("cat >/dev/null\nprintf '{\"score\": -0}'\n")
        .args([
            "--skip-preflight",
            "--candidate",
            "c",
            "--output",
            "out.jsonl",
        ])
        .output()
        .unwrap();
    let single = json_stdout(&out)["candidates"][0]["single"].clone();
    let line = sb.read("out.jsonl");
    assert_eq!(
        (
            code(&out),
            line.contains("\"score\":0.0,"),
            single["min"].to_string(),
            single["max"].to_string()
        ),
        (0, true, "0.0".to_string(), "0.0".to_string()),
        "{line}"
    );
}

#[test]
fn errors_keep_side_info_and_score_zero() {
    let sb = Sandbox::new();
    let (exit, record) = run_once(
        &sb,
        r#"{"why": "too high", "score": 2, "detail": {"b": [1.50], "a": NaN}}"#,
        "unit",
        &[],
    );
    assert_eq!(exit, 1);
    assert_eq!(record["error"]["kind"], "out_of_range");
    assert_eq!(record["score"].as_f64(), Some(0.0));
    // NaN in side info comes back as a plain string; the rest verbatim and in order.
    assert_eq!(
        serde_json::to_string(&record["side_info"]).unwrap(),
        r#"{"why":"too high","detail":{"b":[1.50],"a":"NaN"}}"#
    );

    let (_, record) = run_once(&sb, r#"{"score": "high", "reasoning": "r"}"#, "any", &[]);
    assert_eq!(record["error"]["kind"], "non_numeric_score");
    assert_eq!(record["side_info"], json!({"reasoning": "r"}));
}

#[test]
fn a_lone_surrogate_escape_in_an_answer_keeps_the_score() {
    // JSON.stringify and json.dumps write `\ud83d` for a text cut in the middle of an emoji.
    let sb = Sandbox::new();
    let (exit, record) = run_once(
        &sb,
        r#"{"score": 0.5, "reasoning": "cut mid-emoji \ud83d", "pair": "\ud83d\ude00"}"#,
        "unit",
        &[],
    );
    assert_eq!(exit, 0);
    assert_eq!(record["score"].as_f64(), Some(0.5));
    assert_eq!(
        record["side_info"],
        json!({"reasoning": "cut mid-emoji \u{fffd}", "pair": "\u{1f600}"})
    );
}

#[test]
fn non_zero_exit_is_exit_status_with_a_stderr_excerpt_and_side_info() {
    let sb = Sandbox::new();
    let out = sb
        .run_with("cat >/dev/null\necho 'something broke' >&2\nprintf '{\"score\": 0.9, \"why\": \"partial\"}'\nexit 3\n")
        .args(["--skip-preflight", "--candidate", "c", "--output", "out.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    let record = &sb.jsonl("out.jsonl")[0];
    assert_eq!(record["error"]["kind"], "exit_status");
    assert_eq!(
        record["error"]["message"],
        "command exited with code 3; stderr: something broke"
    );
    assert_eq!(record["score"].as_f64(), Some(0.0));
    assert_eq!(record["side_info"], json!({"why": "partial"}));
    assert_eq!(record["attempts"], 1, "a non-zero exit is never retried");
    assert_eq!(json_stdout(&out)["calls"]["errors"], 1);
}

#[test]
fn a_secret_of_the_environment_that_the_evaluator_prints_is_redacted() {
    // The evaluator inherits the environment; what it prints of a variable named as a secret's
    // (`..._TOKEN`) reaches no message, result line or summary.
    let sb = Sandbox::new();
    sb.write(
        "eval.sh",
        "cat >/dev/null\necho \"using $EVAL_TOKEN\" >&2\n\
         printf '{\"score\": 0.5, \"why\": \"called with %s\"}' \"$EVAL_TOKEN\"\n\
         [ \"$1\" = fail ] && exit 3\nexit 0\n",
    );
    let run = |argument: &str| {
        let out = sb
            .evalctl()
            .args(["run", "--format", "json", "--skip-preflight"])
            .args(["--evaluator-command", &format!("sh eval.sh {argument}")])
            .args(["--candidate", "c", "--output", "out.jsonl"])
            .env("EVAL_TOKEN", "tok-0123456789abcdef")
            .output()
            .unwrap();
        let record = sb.jsonl("out.jsonl").remove(0);
        std::fs::remove_file(sb.join("out.jsonl")).unwrap();
        (code(&out), stderr_text(&out), record)
    };
    let (status, stderr, record) = run("fail");
    assert_eq!(
        (
            status,
            stderr,
            &record["error"]["message"],
            &record["side_info"]
        ),
        (
            1,
            "failed: cand-1: exit_status: command exited with code 3; stderr: using \
             [redacted]\nexit 1: 1 of 1 calls failed\n"
                .to_string(),
            &json!("command exited with code 3; stderr: using [redacted]"),
            &json!({"why": "called with [redacted]"}),
        )
    );
    let (status, _, record) = run("pass");
    assert_eq!(
        (status, &record["side_info"]),
        (0, &json!({"why": "called with [redacted]"}))
    );
}

#[test]
fn a_secret_in_an_answer_is_redacted_before_its_excerpt_is_cut() {
    // The answer is no JSON: its first 200 characters are quoted, which would cut the secret
    // after 10 characters, too few to be known as a piece of it.
    let sb = Sandbox::new();
    let out = sb
        .run_with("cat >/dev/null\nprintf '%0190d%s' 0 \"$EVAL_TOKEN\"\n")
        .args([
            "--skip-preflight",
            "--candidate",
            "c",
            "--output",
            "out.jsonl",
        ])
        .env("EVAL_TOKEN", "tok-0123456789abcdef")
        .output()
        .unwrap();
    let message = sb.jsonl("out.jsonl")[0]["error"]["message"].clone();
    assert_eq!(
        (code(&out), message),
        (
            1,
            json!(format!(
                "output is not valid JSON (invalid number at line 1 column 2): {}[redacted]",
                "0".repeat(190)
            ))
        )
    );
}

#[test]
fn stderr_excerpt_is_bounded_and_a_signal_is_named() {
    let sb = Sandbox::new();
    let out = sb
        .run_with("cat >/dev/null\nhead -c 200000 /dev/zero | tr '\\0' e >&2\necho END-OF-STDERR >&2\nexit 1\n")
        .args(["--skip-preflight", "--candidate", "c", "--output", "out.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    let message = sb.jsonl("out.jsonl")[0]["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.len() < 4000, "unbounded: {} bytes", message.len());
    // The last 500 characters of stderr are kept.
    assert_eq!(
        message,
        format!(
            "command exited with code 1; stderr: …{}END-OF-STDERR",
            "e".repeat(487)
        )
    );

    let out = sb
        .run_with("cat >/dev/null\nkill -9 $$\n")
        .args([
            "--skip-preflight",
            "--candidate",
            "c",
            "--output",
            "sig.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    let record = &sb.jsonl("sig.jsonl")[0];
    assert_eq!(record["error"]["kind"], "exit_status");
    assert_eq!(record["error"]["message"], "command was killed by signal 9");
}

#[test]
fn invalid_output_errors_quote_stderr() {
    let sb = Sandbox::new();
    let (_, record) = run_once(&sb, "Traceback: oops", "unit", &[]);
    assert_eq!(record["error"]["kind"], "invalid_json");
    assert_eq!(
        record["error"]["message"],
        "output is not valid JSON (expected value at line 1 column 1): Traceback: oops"
    );
    // Nested past the JSON limit: said as every JSON input says it.
    let deep = format!(
        "{{\"score\":1,\"x\":{}{}}}",
        "[".repeat(128),
        "]".repeat(128)
    );
    let (_, record) = run_once(&sb, &deep, "unit", &[]);
    assert_eq!(
        record["error"]["message"],
        format!(
            "output is not valid JSON (arrays and objects nest deeper than 127 levels (the limit) \
             at line 1 column 142): {}…",
            &deep[..200]
        )
    );
    // An answer that gives a key twice is refused where it comes again, as written (a `NaN`
    // before it included).
    for (answer, key, column) in [
        (r#"{"score": 1, "score": 0}"#, "score", 20),
        (r#"{"score": 0.5, "x": NaN, "x": 1}"#, "x", 28),
        (
            r#"{"score": 0.5, "a": "\u0000", "x": NaN, "x": 1}"#,
            "x",
            43,
        ),
        (r#"{"score": 0.5, "x": "\ud83d", "x": 1}"#, "x", 33),
    ] {
        let (_, record) = run_once(&sb, answer, "unit", &[]);
        assert_eq!(record["error"]["kind"], "invalid_json");
        assert_eq!(
            record["error"]["message"],
            format!(
                "output is ambiguous JSON: the key `{key}` is given twice in one object (the \
                 second by column {column}): keep one"
            ),
            "{answer}"
        );
    }
    // A whole answer that is no object is named by its type, or by the bare token it is.
    for (answer, found) in [
        ("[0.5]", "array"),
        ("0.5", "number"),
        ("NaN", "NaN"),
        ("-Infinity", "-Infinity"),
    ] {
        let (_, record) = run_once(&sb, answer, "unit", &[]);
        assert_eq!(record["error"]["kind"], "invalid_output");
        assert_eq!(
            record["error"]["message"],
            format!("expected a JSON object with a score, found {found}")
        );
    }
}

#[test]
fn timeout_kills_the_whole_process_group() {
    let sb = Sandbox::new();
    // Waiting for the hour-long sleep would hit the test command's safety timeout.
    let out = sb
        .run_with("cat >/dev/null\necho $$ > sh.pid\nsleep 3600 &\necho $! > child.pid\nwait\nprintf '{\"score\": 1}'\n")
        .args(["--skip-preflight", "--candidate", "c", "--output", "out.jsonl"])
        .args(["--timeout", "0.3"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    let record = &sb.jsonl("out.jsonl")[0];
    assert_eq!(record["error"]["kind"], "timeout");
    assert_eq!(record["attempts"], 1, "a command timeout is not retried");
    for file in ["sh.pid", "child.pid"] {
        let pid: u32 = sb.read(file).trim().parse().unwrap();
        assert!(
            wait_until(Duration::from_secs(3), || !process_alive(pid)),
            "{file} ({pid}) still running after the timeout"
        );
    }
}

#[test]
fn stdout_over_8_mib_is_invalid_output() {
    let sb = Sandbox::new();
    // An hour's --timeout: waiting for it would hit the test command's safety timeout.
    let out = sb
        .run_with("cat >/dev/null\nhead -c 9000000 /dev/zero | tr '\\0' a\n")
        .args([
            "--skip-preflight",
            "--candidate",
            "c",
            "--output",
            "out.jsonl",
        ])
        .args(["--timeout", "3600"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    let record = &sb.jsonl("out.jsonl")[0];
    assert_eq!(record["error"]["kind"], "invalid_output", "{record}");
}

#[test]
fn stdout_just_under_the_cap_is_fine() {
    let sb = Sandbox::new();
    // {"score": 1, "pad": "aaa…"} of 8 MiB - 64 bytes
    let pad = 8 * 1024 * 1024 - 64;
    let script = format!(
        "cat >/dev/null\nprintf '{{\"score\": 1, \"pad\": \"'\nhead -c {pad} /dev/zero | tr '\\0' a\nprintf '\"}}'\n"
    );
    succeeded(
        sb.run_with(&script)
            .args(["--skip-preflight", "--candidate", "c"]),
    );
}

#[test]
fn spawn_failure_is_its_own_error_kind() {
    let sb = Sandbox::new();
    // Executable with a shebang (so the setup checks pass) whose interpreter does not exist.
    sb.write_executable("eval", "#!/no/such/interpreter\n");
    let out = sb
        .evalctl()
        .args([
            "run",
            "--format",
            "json",
            "--skip-preflight",
            "--evaluator-command",
            "./eval",
        ])
        .args(["--candidate", "c", "--output", "out.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    let record = &sb.jsonl("out.jsonl")[0];
    assert_eq!(record["error"]["kind"], "spawn");
    assert_eq!(
        record["error"]["message"],
        "cannot start './eval': its interpreter '/no/such/interpreter' (shebang line) was not found"
    );
}

#[test]
fn many_calls_with_concurrency_all_finish() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"i\": 1}\n".repeat(60));
    let out = succeeded(
        sb.run_with("cat >/dev/null\nprintf '{\"score\": 0.5}'\n")
            .args(["-j", "16", "--candidate", "a", "--candidate", "b"])
            .args(["--dataset", "d.jsonl", "--output", "out.jsonl"]),
    );
    assert_eq!(sb.jsonl("out.jsonl").len(), 120);
    assert_eq!(json_stdout(&out)["calls"]["ok"], 120);
}

#[test]
fn ctrl_c_term_and_hup_flush_results_print_the_summary_and_exit_130() {
    // SIGINT lets the call in flight finish (here it cannot: it sleeps); SIGTERM and SIGHUP
    // stop it at once.
    let stopped = "interrupted: stopped the 1 call in flight\n";
    let waited = "interrupted: no new calls; waiting up to 5s for the 1 in flight (Ctrl-C again \
                  stops them now)\n\
                  interrupted: the 1 call in flight did not finish within 5s and was stopped\n";
    for (signal, first) in [("-INT", waited), ("-TERM", stopped), ("-HUP", stopped)] {
        let sb = Sandbox::new();
        sb.write(
        "eval.sh",
        "p=$(cat)\ncase \"$p\" in *slow*) sleep 30 &\necho $! > slow.pid\nwait;; esac\nprintf '{\"score\": 1}'\n",
    );
        let (status, stdout, stderr) = interrupt(
            &sb,
            &[
                "run",
                "--format",
                "json",
                "-j",
                "1",
                "--skip-preflight",
                "--evaluator-command",
                "sh eval.sh",
                "--output",
                "out.jsonl",
                "--junit",
                "junit.xml",
                "--candidate",
                "fast",
                "--candidate",
                "slow",
                "--candidate",
                "never",
            ],
            || sb.lines("out.jsonl").len() == 1 && !sb.read("slow.pid").trim().is_empty(),
            signal,
        );
        let slow_pid: u32 = sb.read("slow.pid").trim().parse().unwrap();
        assert_eq!(status.code(), Some(130), "{signal}: {status:?}");
        let summary: Value = serde_json::from_str(&stdout).expect("a JSON summary on stdout");
        assert_eq!(summary["interrupted"], true);
        assert_eq!(summary["calls"]["total"], 1);
        assert_eq!(summary["candidates"].as_array().unwrap().len(), 3);
        assert_eq!(summary["candidates"][0]["score"].as_f64(), Some(1.0));
        // The calls not made are absent, as a summary of the results file says: the JUnit
        // report does not read as a complete run that passed.
        assert_eq!(
            summary["partial"],
            json!({"missing_calls": 2, "plan_calls": 3, "missing_shards": [],
                   "description": "2 of 3 calls absent"})
        );
        let junit = sb.read("junit.xml");
        assert!(
            junit.contains("<skipped message=\"partial: 2 of 3 calls absent\"/>"),
            "{junit}"
        );
        let results = sb.jsonl("out.jsonl");
        assert_eq!(results.len(), 1);
        assert_eq!(results[0]["candidate_id"], "cand-1");
        assert!(
            wait_until(Duration::from_secs(3), || !process_alive(slow_pid)),
            "{signal}: the in-flight evaluator's child survived"
        );
        assert_eq!(
            stderr,
            format!(
                "{first}wrote junit.xml: 2 test cases (0 failures, 0 errors, 1 skipped)\n\
                 interrupted: 1 of 3 calls finished; the summary covers them\n"
            ),
            "{signal}"
        );
    }
}

/// Start `evalctl` with `args` in `sb`, wait for `ready`, send `signal` (a `kill` option such as
/// `-INT`); returns (status, stdout, stderr).
fn interrupt(
    sb: &Sandbox,
    args: &[&str],
    ready: impl Fn() -> bool,
    signal: &str,
) -> (std::process::ExitStatus, String, String) {
    let mut child = common::evalctl_process()
        .current_dir(sb.path())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if !wait_until(Duration::from_secs(10), &ready) {
        let _ = child.kill();
        panic!("not ready to interrupt");
    }
    std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    if !wait_until(Duration::from_secs(10), || {
        child.try_wait().unwrap().is_some()
    }) {
        let _ = child.kill();
        panic!("evalctl did not stop on {signal}");
    }
    let status = child.wait().unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status, stdout, stderr)
}

#[test]
fn ctrl_c_during_the_preflight_probe_leaves_no_evaluator_behind() {
    let sb = Sandbox::new();
    sb.write(
        "eval.sh",
        "cat >/dev/null\nsleep 30 &\necho $! > slow.pid\nwait\n",
    );
    let ready = || !sb.read("slow.pid").trim().is_empty();
    for command in ["run", "preflight"] {
        let _ = std::fs::remove_file(sb.join("slow.pid"));
        let (status, stdout, stderr) = interrupt(
            &sb,
            &[
                command,
                "--format",
                "json",
                "--evaluator-command",
                "sh eval.sh",
                "--candidate",
                "c",
            ],
            ready,
            "-TERM",
        );
        assert_eq!(status.code(), Some(130), "{command}: {status:?}");
        // Nothing was evaluated: the failure document, not a summary of no call.
        let error = match command {
            "run" => "interrupted during preflight: nothing was evaluated",
            _ => "interrupted: preflight stopped before the evaluator answered",
        };
        assert_eq!(
            serde_json::from_str::<Value>(&stdout).expect("one JSON document"),
            json!({"ok": false, "exit": 130, "errors": [error]}),
            "{command}"
        );
        // Said as every interruption is, without a prefix (not an error, not a warning).
        assert_eq!(stderr, format!("{error}\n"), "{command}");
        let pid: u32 = sb.read("slow.pid").trim().parse().unwrap();
        assert!(
            wait_until(Duration::from_secs(3), || !process_alive(pid)),
            "{command}: the probe's child survived Ctrl-C"
        );
    }
}

#[test]
fn processes_an_evaluator_leaves_behind_are_killed_when_it_exits() {
    let sb = Sandbox::new();
    succeeded(sb
        .run_with("cat >/dev/null\nsleep 30 >/dev/null 2>&1 &\necho $! > straggler.pid\nprintf '{\"score\": 1}'\n")
        .args(["--skip-preflight", "--candidate", "c"]));
    let pid: u32 = sb.read("straggler.pid").trim().parse().unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || !process_alive(pid)),
        "the background sleep {pid} outlived its evaluator"
    );
}

#[test]
fn a_timeout_says_whether_the_evaluator_answered_exited_or_neither() {
    // Each evaluator runs past --timeout in its own way; the message tells them apart. (The
    // one that prints and then waits is given the time to print on a busy machine.)
    for (script, timeout, message) in [
        (
            "cat >/dev/null\nprintf '{\"score\": 1}'\nsleep 30 &\n",
            "0.5",
            "the evaluator exited, but a process it started kept its stdout open past 0.5s; it \
             was killed (redirect background processes' output away from stdout)",
        ),
        (
            "cat >/dev/null\nprintf '{\"score\": 1}'\nexec >&-\nsleep 30\n",
            "0.5",
            "the evaluator closed its stdout but did not exit within 0.5s; it and its children \
             were killed",
        ),
        (
            "cat >/dev/null\nprintf '{\"score\": 1}'\nsleep 30\n",
            "3",
            "no answer within 3s: the evaluator printed 12 bytes to stdout but neither closed it \
             nor exited (it must exit once its answer is printed); it and its children were \
             killed",
        ),
        (
            "cat >/dev/null\nsleep 30\n",
            "0.5",
            "no answer within 0.5s; the evaluator and its children were killed",
        ),
    ] {
        let sb = Sandbox::new();
        let out = sb
            .run_with(script)
            .args(["--skip-preflight", "--candidate", "c", "--timeout", timeout])
            .args(["--output", "out.jsonl"])
            .output()
            .unwrap();
        assert_eq!(
            (code(&out), &sb.jsonl("out.jsonl")[0]["error"]),
            (1, &json!({"kind": "timeout", "message": message})),
            "{script}"
        );
    }
}

#[test]
fn a_signal_ignored_at_start_stays_ignored() {
    // Like `nohup evalctl ...`: SIGHUP is ignored when evalctl starts, so a closed terminal does
    // not stop the run.
    let sb = Sandbox::new();
    sb.write(
        "eval.sh",
        "cat >/dev/null\ntouch started\nsleep 0.5\nprintf '{\"score\": 1}'\n",
    );
    let command = format!(
        "trap '' HUP; exec {} run --format json --skip-preflight --evaluator-command 'sh eval.sh' --candidate c",
        common::bin()
    );
    let mut child = common::clean_environment(&mut std::process::Command::new("sh"))
        .args(["-c", &command])
        .current_dir(sb.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_until(Duration::from_secs(10), || sb.exists("started")));
    std::process::Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert_eq!(status.code(), Some(0), "{stdout}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["calls"]["ok"], 1);
}

#[test]
fn a_background_process_holding_only_stderr_does_not_delay_the_answer() {
    let sb = Sandbox::new();
    succeeded(sb
        .run_with("cat >/dev/null\necho starting >&2\nsleep 30 >/dev/null &\necho $! > bg.pid\nprintf '{\"score\": 1}'\n")
        .args(["--skip-preflight", "--candidate", "c", "--timeout", "10", "--output", "out.jsonl"]));
    // Without the grace period the call would wait for the 10 s deadline and fail as a timeout.
    assert_eq!(sb.jsonl("out.jsonl")[0]["score"], 1.0);
    let pid: u32 = sb.read("bg.pid").trim().parse().unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || !process_alive(pid)),
        "the background sleep survived"
    );
}
