//! The hints for an evaluator that cannot run as given, through the real binary: a script without
//! the run bit or a shebang line is suggested the interpreter its shebang or extension calls for
//! (not always `sh`), and an `--evaluator-url` without a scheme is suggested `http://`. A failed
//! preflight probe suggests `--skip-preflight` only when the sentinel candidate may be the cause:
//! log lines on stdout, Windows line endings in the shebang line and refused credentials are
//! named instead.

use crate::common::server::{Reply, Server};
use crate::common::{code, stderr_text, Sandbox};

/// `evalctl run` with `evaluator` as the command; its exit code and stderr.
fn run_command(sandbox: &Sandbox, evaluator: &str) -> (i32, String) {
    let out = sandbox
        .evalctl()
        .args(["run", "--evaluator-command", evaluator, "--candidate", "x"])
        .output()
        .expect("evalctl runs");
    (code(&out), stderr_text(&out))
}

#[test]
fn a_script_without_the_run_bit_is_suggested_its_interpreter() {
    let sandbox = Sandbox::new();
    for (name, contents, interpreter) in [
        ("eval.py", "print('{\"score\": 1}')\n", "python3"),
        ("eval.js", "console.log('{}')\n", "node"),
        ("eval.rb", "puts 1\n", "ruby"),
        ("eval.pl", "print 1;\n", "perl"),
        ("eval.bash", "echo 1\n", "bash"),
        ("eval.sh", "echo 1\n", "sh"),
        (
            "tool",
            "#!/usr/bin/env -S python3 -u\nprint(1)\n",
            "python3",
        ),
        ("tool.sh", "#!/usr/bin/ruby\nputs 1\n", "ruby"),
    ] {
        sandbox.write(name, contents);
        let (code, stderr) = run_command(&sandbox, &format!("./{name}"));
        assert_eq!(code, 3, "{name}: {stderr}");
        assert_eq!(
            stderr,
            format!(
                "error: evaluator preflight failed for command './{name}' (cwd: {}): './{name}' \
                 is not executable (the run bit is not set): chmod +x ./{name}, or run it as \
                 '{interpreter} ./{name}'\n",
                sandbox.path().display()
            ),
            "{name}"
        );
    }
}

#[test]
fn a_script_without_a_shebang_is_suggested_one_for_its_extension() {
    let sandbox = Sandbox::new();
    for (name, shebang, interpreter) in [
        ("eval.py", "#!/usr/bin/env python3", "python3"),
        ("eval.js", "#!/usr/bin/env node", "node"),
        ("eval", "#!/bin/sh", "sh"),
    ] {
        sandbox.write_executable(name, "print(1)\n");
        let (code, stderr) = run_command(&sandbox, &format!("./{name}"));
        assert_eq!(code, 3, "{name}: {stderr}");
        assert_eq!(
            stderr,
            format!(
                "error: evaluator preflight failed for command './{name}' (cwd: {}): './{name}' \
                 has no shebang line: start it with a line such as {shebang}, or run it as \
                 '{interpreter} ./{name}'\n",
                sandbox.path().display()
            ),
            "{name}"
        );
    }
}

#[test]
fn an_evaluator_url_without_a_scheme_is_suggested_http() {
    let sandbox = Sandbox::new();
    for (url, expected) in [
        (
            "127.0.0.1:8000/score",
            "error: --evaluator-url: not a valid URL: relative URL without a base; \
             did you mean http://127.0.0.1:8000/score?\n",
        ),
        (
            "localhost:8000/score",
            "error: --evaluator-url: localhost:8000/score: the scheme must be http or https; \
             did you mean http://localhost:8000/score?\n",
        ),
        (
            "ftp://127.0.0.1/score",
            "error: --evaluator-url: ftp://127.0.0.1/score: the scheme must be http or https\n",
        ),
    ] {
        let out = sandbox
            .evalctl()
            .args(["run", "--evaluator-url", url, "--candidate", "x"])
            .output()
            .expect("evalctl runs");
        assert_eq!(code(&out), 2, "{url}");
        assert_eq!(stderr_text(&out), expected, "{url}");
    }
}

/// `evalctl preflight` with `args`, in text; its exit code and stderr.
fn preflight(sandbox: &Sandbox, args: &[&str]) -> (i32, String) {
    let out = sandbox
        .evalctl()
        .args(["preflight", "--format", "text"])
        .args(args)
        .output()
        .expect("evalctl runs");
    (code(&out), stderr_text(&out))
}

#[test]
fn a_probe_answer_after_a_log_line_is_told_to_log_to_stderr() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "eval.sh",
        "cat >/dev/null\necho 'Scoring candidate...'\necho '{\"score\": 1.0}'\n",
    );
    let (code, stderr) = preflight(&sandbox, &["--evaluator-command", "sh eval.sh"]);
    assert_eq!(code, 3);
    assert_eq!(
        stderr,
        format!(
            "error: evaluator preflight failed for command 'sh eval.sh' (cwd: {}): output is \
             not valid JSON (expected value at line 1 column 1): Scoring candidate... ⏎ {{\"score\": 1.0}} — \
             stdout must hold only the JSON object; log to stderr\n",
            sandbox.path().display()
        )
    );
    // Every call's error says it too.
    let out = sandbox
        .evalctl()
        .args([
            "run",
            "--format",
            "json",
            "--skip-preflight",
            "--output",
            "out.jsonl",
        ])
        .args(["--evaluator-command", "sh eval.sh", "--candidate", "x"])
        .output()
        .expect("evalctl runs");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        sandbox.jsonl("out.jsonl")[0]["error"]["message"],
        "output is not valid JSON (expected value at line 1 column 1): Scoring candidate... ⏎ \
         {\"score\": 1.0} — stdout must hold only the JSON object; log to stderr"
    );
}

#[test]
fn a_shebang_line_with_windows_line_endings_is_named_even_without_a_probe() {
    let sandbox = Sandbox::new();
    sandbox.write_executable("eval.sh", "#!/usr/bin/env sh\r\necho '{\"score\": 1}'\r\n");
    for skip in [&[][..], &["--skip-preflight"][..]] {
        let out = sandbox
            .evalctl()
            .args([
                "run",
                "--format",
                "text",
                "--evaluator-command",
                "./eval.sh",
            ])
            .args(skip)
            .args(["--candidate", "x"])
            .output()
            .expect("evalctl runs");
        assert_eq!(code(&out), 3, "{skip:?}");
        assert_eq!(
            stderr_text(&out),
            format!(
                "error: evaluator preflight failed for command './eval.sh' (cwd: {}): \
                 './eval.sh': the script has Windows line endings (CRLF): its shebang line ends \
                 in a carriage return, which the system takes as part of the interpreter's \
                 name; convert the file (dos2unix ./eval.sh, or sed -i 's/\\r$//' ./eval.sh){}\n",
                sandbox.path().display(),
                if skip.is_empty() {
                    ""
                } else {
                    " (--skip-preflight skips the probe call, not this check)"
                }
            ),
            "{skip:?}"
        );
    }
}

#[test]
fn refused_credentials_are_named_and_the_token_is_not_shown() {
    for status in [401, 403] {
        let server = Server::fixed(Reply::status(status, r#"{"error": "bad token"}"#));
        let sandbox = Sandbox::new();
        let (code, stderr) = preflight(
            &sandbox,
            &[
                "--evaluator-url",
                &server.url("/score"),
                "--header",
                "Authorization: Bearer s3cr3t-t0ken",
            ],
        );
        assert_eq!(code, 3);
        let reason = if status == 401 {
            "401 Unauthorized"
        } else {
            "403 Forbidden"
        };
        assert_eq!(
            stderr,
            format!(
                "error: evaluator preflight failed for url {}: HTTP {reason}: {{\"error\": \
                 \"bad token\"}} — the server refused the credentials sent (the token or key is not shown)\n",
                server.url("/score")
            )
        );
    }
}

#[test]
fn a_bad_score_for_the_sentinel_still_suggests_skipping_the_probe() {
    let sandbox = Sandbox::new();
    sandbox.write("eval.sh", "cat >/dev/null\necho '{\"score\": 7}'\n");
    let (code, stderr) = preflight(&sandbox, &["--evaluator-command", "sh eval.sh"]);
    assert_eq!(code, 3);
    assert_eq!(
        stderr,
        format!(
            "error: evaluator preflight failed for command 'sh eval.sh' (cwd: {}): the probe \
             call (candidate \"__evalctl_preflight__\") failed: score 7 is outside [0, 1]; pass \
             --score-range any to accept unbounded scores — an evaluator that cannot score this \
             sentinel candidate can be run with --skip-preflight\n",
            sandbox.path().display()
        )
    );
}
