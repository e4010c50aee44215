//! Global behaviour of the command line: `--version`, `--help` on every command, `--color`, and
//! usage errors (exit 2) for unknown commands and flags.

use crate::common;

use crate::common::{code, evalctl, stderr_text, stdout_text, Sandbox};

#[test]
fn version_names_the_package_version() {
    let out = evalctl().arg("--version").output().unwrap();
    assert_eq!(code(&out), 0);
    assert_eq!(
        stdout_text(&out).trim(),
        format!("evalctl {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn every_command_has_help() {
    let commands: &[&[&str]] = &[
        &[],
        &["run"],
        &["preflight"],
        &["tasks"],
        &["tasks", "validate"],
        &["tasks", "render"],
        &["tasks", "score"],
        &["fep"],
        &["fep", "evaluate"],
    ];
    for command in commands {
        let out = evalctl().args(*command).arg("--help").output().unwrap();
        assert_eq!(code(&out), 0, "{command:?}: {}", stderr_text(&out));
        let help = stdout_text(&out);
        assert!(help.contains("Usage: evalctl"), "{command:?}: {help}");
    }
    let run_help = stdout_text(&evalctl().args(["run", "--help"]).output().unwrap());
    for flag in [
        "--evaluator-command",
        "--evaluator-url",
        "--judge-model",
        "--checks",
        "--dataset",
        "--valset",
        "--task-model",
        "--score-range",
        "--concurrency",
        "--timeout",
        "--retries",
        "--limit",
        "--skip-preflight",
        "--output",
        "--format",
        "--fail-under",
        "--color",
    ] {
        assert!(run_help.contains(flag), "run --help lacks {flag}");
    }
}

#[test]
fn unknown_commands_and_flags_are_usage_errors() {
    for args in [&["frobnicate"][..], &["run", "--no-such-flag"], &[]] {
        // Asked for text: the usage error is on stderr only.
        let out = evalctl()
            .args(["--format", "text"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(code(&out), 2, "{args:?}");
        assert!(
            stdout_text(&out).is_empty(),
            "{args:?}: usage errors go to stderr"
        );
        assert!(stderr_text(&out).starts_with("error: "), "{args:?}");
        // On a pipe, JSON is the default: stdout is the failure document.
        let out = evalctl().args(args).output().unwrap();
        assert_eq!(code(&out), 2, "{args:?}");
        let document: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(document["ok"], false, "{args:?}");
        assert_eq!(document["exit"], 2, "{args:?}");
        assert_eq!(
            document["errors"].as_array().map(Vec::len),
            Some(1),
            "{args:?}"
        );
    }
}

fn text_summary(color: &str, no_color_env: bool) -> (String, String) {
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null\necho '{\"score\": 0.5}'\n");
    sb.write("bad.sh", "cat >/dev/null\necho 'not json'\n");
    let mut command = sb.evalctl();
    command.args([
        "--color",
        color,
        "run",
        "--format",
        "text",
        "--evaluator-command",
        "sh bad.sh",
    ]);
    command.args(["--candidate", "c", "--skip-preflight"]);
    if no_color_env {
        command.env("NO_COLOR", "1");
    } else {
        command.env_remove("NO_COLOR");
    }
    let out = command.output().unwrap();
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    (stdout_text(&out), stderr_text(&out))
}

#[test]
fn color_always_paints_never_and_auto_off_a_terminal_do_not() {
    let (stdout, stderr) = text_summary("always", false);
    assert!(
        stdout.contains('\u{1b}'),
        "--color always paints the summary: {stdout:?}"
    );
    assert!(
        stderr.contains('\u{1b}'),
        "--color always paints warnings: {stderr:?}"
    );
    for (choice, no_color) in [("never", false), ("auto", false), ("auto", true)] {
        let (stdout, stderr) = text_summary(choice, no_color);
        assert!(!stdout.contains('\u{1b}'), "--color {choice}: {stdout:?}");
        assert!(!stderr.contains('\u{1b}'), "--color {choice}: {stderr:?}");
    }
}

#[test]
fn on_a_terminal_the_summary_is_text_with_a_progress_display() {
    // `script` (util-linux) gives evalctl a pseudo-terminal for stdout and stderr.
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null\necho '{\"score\": 1}'\n");
    sb.write("d.jsonl", "{\"n\": 1}\n{\"n\": 2}\n");
    let command = format!(
        "{} run -j 1 --dataset d.jsonl --evaluator-command 'sh eval.sh' --candidate c",
        common::bin()
    );
    let out = common::clean_environment(&mut std::process::Command::new("script"))
        .args(["-qec", &command, "/dev/null"])
        .current_dir(sb.path())
        .output()
        .expect("script (util-linux) runs");
    assert_eq!(code(&out), 0, "{}", stdout_text(&out));
    let screen = stdout_text(&out);
    assert!(screen.contains("/2 calls"), "progress display: {screen:?}");
    assert!(
        screen.contains("candidate") && screen.contains("train mean"),
        "text summary: {screen:?}"
    );
    assert!(
        !screen.contains("\"candidates\""),
        "not the JSON summary: {screen:?}"
    );
}

#[test]
fn flags_of_another_evaluator_are_usage_errors() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["--evaluator-command", "sh e.sh", "--header", "X: y"],
            "error: --header: only applies to --evaluator-url",
        ),
        (
            &[
                "--evaluator-url",
                "http://127.0.0.1:9/",
                "--evaluator-cwd",
                ".",
            ],
            "error: --evaluator-cwd: only applies to --evaluator-command",
        ),
        (
            &["--evaluator-url", "http://127.0.0.1:9/", "--objective", "x"],
            "error: --objective: only applies to --judge-model",
        ),
        (
            &["--checks", "c.json", "--rubric", "r.json"],
            "error: --rubric: only applies to --judge-model",
        ),
        (
            &["--checks", "c.json", "--judge-temperature", "0.5"],
            "error: --judge-temperature: only applies to --judge-model",
        ),
        (
            &["--judge-model", "openai/m"],
            "error: --judge-model: needs --objective TEXT",
        ),
    ];
    for (args, message) in cases {
        for command in ["run", "preflight"] {
            let out = evalctl()
                .arg(command)
                .args(args)
                .args(["--candidate", "c"])
                .output()
                .unwrap();
            assert_eq!(code(&out), 2, "{command} {args:?}");
            assert!(
                stderr_text(&out).contains(message),
                "{command} {args:?}: {}",
                stderr_text(&out)
            );
        }
    }
}

#[test]
fn an_unterminated_quote_in_the_command_is_a_usage_error() {
    let out = evalctl()
        .args([
            "preflight",
            "--evaluator-command",
            "sh 'eval.sh",
            "prompt.txt",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(
        stderr_text(&out).contains("missing closing quote"),
        "{}",
        stderr_text(&out)
    );
}

#[test]
fn input_and_checks_file_problems_are_reported_in_one_pass() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "[1]\n");
    sb.write(
        "checks.json",
        r#"{"checks": [{"type": "fuzzy", "arguments": {}}]}"#,
    );
    let out = sb
        .evalctl()
        .args([
            "run",
            "--candidate",
            "c",
            "--dataset",
            "d.jsonl",
            "--checks",
            "checks.json",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    let stderr = stderr_text(&out);
    assert!(
        stderr.contains("d.jsonl:1: expected a JSON object, found array"),
        "{stderr}"
    );
    assert!(stderr.contains("checks.json"), "{stderr}");
}

#[test]
fn an_interpreter_option_keeps_its_script_in_the_hint() {
    let out = evalctl()
        .args([
            "run",
            "--evaluator-command",
            "python3",
            "-u",
            "eval.py",
            "prompt.txt",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(
        stderr_text(&out).contains(r#"--evaluator-command "python3 -u eval.py""#),
        "{}",
        stderr_text(&out)
    );
}

#[test]
fn an_evaluator_argument_starting_with_a_dash_gets_a_hint() {
    let out = evalctl()
        .args([
            "run",
            "--candidate",
            "c",
            "--evaluator-command",
            "python3",
            "eval.py",
            "--strict",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(
        stderr_text(&out).contains(r#"--evaluator-command "python3 eval.py --strict""#),
        "{}",
        stderr_text(&out)
    );
}

#[test]
fn a_full_or_closed_stderr_never_turns_into_a_panic() {
    let sb = Sandbox::new();
    sb.write("fail.sh", "cat >/dev/null\necho oops >&2\nexit 4\n");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let status = common::evalctl_process()
        .current_dir(sb.path())
        .args([
            "run",
            "--format",
            "json",
            "--skip-preflight",
            "--evaluator-command",
            "sh fail.sh",
            "--candidate",
            "c",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(full)
        .status()
        .unwrap();
    assert_eq!(
        status.code(),
        Some(1),
        "the call failed; the warnings could not be written"
    );
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let status = common::evalctl_process()
        .args([
            "run",
            "--evaluator-command",
            "python3",
            "eval.py",
            "--strict",
        ])
        .stdin(std::process::Stdio::null())
        .stderr(full)
        .status()
        .unwrap();
    assert_eq!(
        status.code(),
        Some(2),
        "a usage error, whatever happens to its message"
    );
}

#[test]
fn preflight_format_json_reports_usage_errors_on_stdout_too() {
    for args in [
        &[
            "preflight",
            "--format",
            "json",
            "--candidate",
            "a",
            "--checks",
            "c.json",
            "--bogus",
        ][..],
        &[
            "preflight",
            "--format=json",
            "--candidate",
            "a",
            "--checks",
            "c.json",
            "--valset",
            "v.jsonl",
        ],
    ] {
        let out = evalctl().args(args).output().unwrap();
        assert_eq!(code(&out), 2, "{args:?}");
        let report: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("JSON on stdout");
        assert_eq!(report["ok"], false);
        assert_eq!(report["exit"], 2);
        assert!(!report["errors"][0].as_str().unwrap().is_empty());
    }
    // Every other command prints the same failure document.
    let out = evalctl()
        .args(["run", "--format", "json", "--bogus"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        common::json_stdout(&out),
        serde_json::json!({
            "ok": false,
            "exit": 2,
            "errors": ["unexpected argument '--bogus' found"]
        })
    );
}

#[test]
fn evaluator_command_given_twice_is_a_usage_error() {
    let out = evalctl()
        .args([
            "run",
            "--evaluator-command",
            "sh a.sh",
            "--evaluator-command",
            "sh",
            "b.sh",
            "--candidate",
            "c",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(
        stderr_text(&out).contains("cannot be used multiple times"),
        "{}",
        stderr_text(&out)
    );
}
