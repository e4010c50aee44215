//! `evalctl preflight` and the preflight `run` does first: the probe payload, the setup checks
//! (cwd, executable on PATH, interpreter script, shebang, run bit), the score-range matrix through
//! the probe for both adapters, and the one-line exit-3 message naming the command and cwd (or
//! URL) and the cause.

use crate::common::{
    code, json_stdout, refused_url, stderr_text, stdout_text, succeeded, Expect, Reply, Sandbox,
    Server, LOG_PAYLOAD, PRINT_EVAL_OUT, SCORE_MATRIX,
};
use serde_json::Value;

const PREFIX: &str = "error: evaluator preflight failed for ";

/// `evalctl preflight --format json --candidate c` with the given evaluator arguments.
fn preflight(sb: &Sandbox, evaluator: &[&str]) -> assert_cmd::Command {
    let mut command = sb.evalctl();
    command
        .args(["preflight", "--format", "json", "--candidate", "c"])
        .args(evaluator);
    command
}

/// Assert exit 3 with exactly the one line `expected` on stderr, and the same failure as
/// `preflight --format json`'s report on stdout.
fn assert_fails(out: &std::process::Output, expected: &str) {
    assert_fails_on_stderr(out, expected);
    // With --format json, stdout carries the same failure for CI to parse.
    let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON failure report");
    assert_eq!(report["ok"], false);
    assert_eq!(report["exit"], 3);
    assert_eq!(
        report["errors"][0].as_str(),
        expected.strip_prefix("error: ")
    );
}

/// Assert exit 3 with exactly the one line `expected` on stderr.
fn assert_fails_on_stderr(out: &std::process::Output, expected: &str) {
    assert_eq!(code(out), 3, "{}", stderr_text(out));
    assert_eq!(stderr_text(out), format!("{expected}\n"));
}

fn canonical(sb: &Sandbox) -> String {
    sb.path().display().to_string()
}

#[test]
fn probe_payload_and_report() {
    let sb = Sandbox::new();
    sb.write("eval.sh", LOG_PAYLOAD);
    let out = succeeded(preflight(&sb, &["--evaluator-command", "sh eval.sh"]));
    assert_eq!(
        sb.lines("payloads.log"),
        [r#"{"_protocol_version":2,"candidate":"__evalctl_preflight__"}"#]
    );
    let report = json_stdout(&out);
    assert_eq!(report["ok"], true);
    assert_eq!(report["probe"]["score"].as_f64(), Some(1.0));
    assert_eq!(report["candidates"], 1);

    // + task_model, + the first dataset record; the valset is validated but not probed.
    let sb = Sandbox::new();
    sb.write("eval.sh", LOG_PAYLOAD);
    sb.write(
        "d.jsonl",
        "\n{\"first\": 1.50, \"a\": [true]}\n{\"second\": 2}\n",
    );
    sb.write("v.jsonl", "{\"val\": 1}\n");
    let out = succeeded(
        preflight(&sb, &["--evaluator-command", "sh eval.sh"]).args([
            "--task-model",
            "p/m",
            "--dataset",
            "d.jsonl",
            "--valset",
            "v.jsonl",
        ]),
    );
    assert_eq!(
        sb.lines("payloads.log"),
        [
            r#"{"_protocol_version":2,"candidate":"__evalctl_preflight__","task_model":"p/m","example":{"first": 1.50, "a": [true]}}"#
        ]
    );
    let report = json_stdout(&out);
    assert_eq!(report["dataset_records"], 2);
    assert_eq!(report["valset_records"], 1);

    let text = sb
        .evalctl()
        .args(["preflight", "--format", "text", "--candidate", "c"])
        .args(["--evaluator-command", "sh eval.sh"])
        .output()
        .unwrap();
    assert_eq!(code(&text), 0);
    assert_eq!(
        stdout_text(&text),
        format!(
            "preflight ok: 1 candidate(s); command 'sh eval.sh' (cwd: {}) answered the probe with score 1\n",
            canonical(&sb)
        )
    );
}

#[test]
fn preflight_never_scores_candidates() {
    let sb = Sandbox::new();
    sb.write("eval.sh", LOG_PAYLOAD);
    succeeded(
        sb.evalctl()
            .args([
                "preflight",
                "--format",
                "json",
                "--evaluator-command",
                "sh eval.sh",
            ])
            .args([
                "--candidate",
                "a",
                "--candidate",
                "b",
                "--output",
                "out.jsonl",
            ]),
    );
    assert_eq!(sb.lines("payloads.log").len(), 1);
    assert!(sb.read("out.jsonl").is_empty());
}

#[test]
fn run_probes_first_and_skip_preflight_does_not() {
    let sb = Sandbox::new();
    succeeded(sb.run_with(LOG_PAYLOAD).args(["--candidate", "c"]));
    let payloads = sb.lines("payloads.log");
    assert_eq!(payloads.len(), 2);
    assert_eq!(
        payloads,
        [
            r#"{"_protocol_version":2,"candidate":"__evalctl_preflight__"}"#,
            r#"{"_protocol_version":2,"candidate":"c"}"#
        ]
    );

    let sb = Sandbox::new();
    succeeded(
        sb.run_with(LOG_PAYLOAD)
            .args(["--candidate", "c", "--skip-preflight"]),
    );
    assert_eq!(
        sb.lines("payloads.log"),
        [r#"{"_protocol_version":2,"candidate":"c"}"#]
    );
}

#[test]
fn a_failing_probe_stops_run_with_exit_3_before_any_call() {
    let sb = Sandbox::new();
    let out = sb
        .run_with("cat >/dev/null\necho call >> calls.log\necho 'config missing' >&2\nexit 1\n")
        .args([
            "--candidate",
            "a",
            "--candidate",
            "b",
            "--output",
            "out.jsonl",
        ])
        .output()
        .unwrap();
    let expected = format!(
        "{PREFIX}command 'sh eval.sh' (cwd: {}): the probe call (candidate \"__evalctl_preflight__\") \
         failed: command exited with code 1; stderr: config missing — an evaluator that cannot score \
         this sentinel candidate can be run with --skip-preflight",
        canonical(&sb)
    );
    assert_fails_on_stderr(&out, &expected);
    // No summary (nothing was evaluated): the failure document only.
    assert_eq!(
        json_stdout(&out),
        serde_json::json!({
            "ok": false,
            "exit": 3,
            "errors": [expected.strip_prefix("error: ")]
        })
    );
    assert_eq!(sb.lines("calls.log").len(), 1, "only the probe ran");
    assert!(sb.read("out.jsonl").is_empty());
}

#[test]
fn inputs_are_validated_before_the_probe() {
    let sb = Sandbox::new();
    sb.write("eval.sh", "touch called\ncat >/dev/null\nexit 1\n");
    sb.write("d.jsonl", "[]\n");
    let out = preflight(
        &sb,
        &["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"],
    )
    .output()
    .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out),
        "error: d.jsonl:1: expected a JSON object, found array\n"
    );
    assert!(!sb.exists("called"));
}

#[test]
fn missing_cwd() {
    let sb = Sandbox::new();
    let out = preflight(
        &sb,
        &[
            "--evaluator-command",
            "sh eval.sh",
            "--evaluator-cwd",
            "no-such-dir",
        ],
    )
    .output()
    .unwrap();
    // A directory that does not exist is bad usage (exit 2), found before any probe.
    assert_eq!(code(&out), 2, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out),
        "error: --evaluator-cwd: no-such-dir: no such directory\n"
    );
    assert_eq!(
        json_stdout(&out),
        serde_json::json!({
            "ok": false,
            "exit": 2,
            "errors": ["--evaluator-cwd: no-such-dir: no such directory"]
        })
    );
    // A file is no working directory either, and is not called a missing one.
    sb.write("eval.sh", "cat >/dev/null\necho '{\"score\": 1}'\n");
    let out = preflight(
        &sb,
        &[
            "--evaluator-command",
            "sh eval.sh",
            "--evaluator-cwd",
            "eval.sh",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            2,
            "error: --evaluator-cwd: eval.sh: is a file, not a directory\n".to_string()
        )
    );
}

#[test]
fn executable_not_found_on_path() {
    let sb = Sandbox::new();
    let out = preflight(
        &sb,
        &["--evaluator-command", "evalctl-no-such-program --flag"],
    )
    .output()
    .unwrap();
    let cwd = canonical(&sb);
    assert_fails(
        &out,
        &format!("{PREFIX}command 'evalctl-no-such-program --flag' (cwd: {cwd}): executable 'evalctl-no-such-program' not found on PATH"),
    );
}

#[test]
fn executable_path_that_does_not_exist() {
    let sb = Sandbox::new();
    let out = preflight(&sb, &["--evaluator-command", "./bin/eval"])
        .output()
        .unwrap();
    let cwd = canonical(&sb);
    assert_fails(
        &out,
        &format!("{PREFIX}command './bin/eval' (cwd: {cwd}): './bin/eval': no such file"),
    );
}

#[test]
fn interpreter_script_must_exist_relative_to_the_cwd() {
    let sb = Sandbox::new();
    let cwd = canonical(&sb);
    for interpreter in ["sh", "bash", "python3", "/bin/sh"] {
        let command = format!("{interpreter} missing.sh");
        let out = preflight(&sb, &["--evaluator-command", &command])
            .output()
            .unwrap();
        assert_fails(
            &out,
            &format!("{PREFIX}command '{command}' (cwd: {cwd}): script 'missing.sh' not found"),
        );
    }
    // Present in --evaluator-cwd (and not in the current directory): fine.
    sb.write("sub/eval.sh", PRINT_EVAL_OUT);
    succeeded(
        preflight(
            &sb,
            &[
                "--evaluator-command",
                "sh eval.sh",
                "--evaluator-cwd",
                "sub",
            ],
        )
        .env("EVAL_OUT", r#"{"score": 1}"#),
    );
    // Present in the current directory but not in --evaluator-cwd: not found.
    sb.write("eval.sh", PRINT_EVAL_OUT);
    std::fs::create_dir(sb.join("empty")).unwrap();
    let out = preflight(
        &sb,
        &[
            "--evaluator-command",
            "sh eval.sh",
            "--evaluator-cwd",
            "empty",
        ],
    )
    .output()
    .unwrap();
    // The message names the cwd the script was looked for in.
    assert_fails(
        &out,
        &format!("{PREFIX}command 'sh eval.sh' (cwd: {cwd}/empty): script 'eval.sh' not found"),
    );
}

#[test]
fn a_directory_named_as_the_script_is_refused_naming_the_file_to_give() {
    let sb = Sandbox::new();
    let cwd = canonical(&sb);
    sb.write("evdir/__main__.py", "print('{\"score\": 1}')\n");
    sb.write("shdir/eval.sh", PRINT_EVAL_OUT);
    for (command, name_it) in [
        (
            "python3 evdir",
            "name the file it runs (python3 evdir/__main__.py)",
        ),
        ("sh shdir", "name the script file"),
    ] {
        let script = command.split(' ').nth(1).unwrap();
        let out = preflight(&sb, &["--evaluator-command", command])
            .output()
            .unwrap();
        assert_fails(
            &out,
            &format!(
                "{PREFIX}command '{command}' (cwd: {cwd}): script '{script}' is a directory: \
                 {name_it}, whose content keys the cache and --resume"
            ),
        );
    }
}

#[test]
fn script_without_shebang_or_run_bit_is_explained() {
    let sb = Sandbox::new();
    sb.write_executable("noshebang.sh", "printf '{\"score\": 1}'\n");
    let out = preflight(&sb, &["--evaluator-command", "./noshebang.sh"])
        .output()
        .unwrap();
    let cwd = canonical(&sb);
    assert_fails(
        &out,
        &format!("{PREFIX}command './noshebang.sh' (cwd: {cwd}): './noshebang.sh' has no shebang line: start it with a line such as #!/bin/sh, or run it as 'sh ./noshebang.sh'"),
    );

    sb.write("norun.sh", "#!/bin/sh\nprintf '{\"score\": 1}'\n");
    let out = preflight(&sb, &["--evaluator-command", "./norun.sh"])
        .output()
        .unwrap();
    assert_fails(
        &out,
        &format!("{PREFIX}command './norun.sh' (cwd: {cwd}): './norun.sh' is not executable (the run bit is not set): chmod +x ./norun.sh, or run it as 'sh ./norun.sh'"),
    );

    // The same script with both is fine.
    sb.write_executable(
        "good.sh",
        "#!/bin/sh\ncat >/dev/null\nprintf '{\"score\": 1}'\n",
    );
    succeeded(preflight(&sb, &["--evaluator-command", "./good.sh"]));
}

#[test]
fn an_interpreter_that_does_not_exist_is_named() {
    let sb = Sandbox::new();
    sb.write_executable("eval", "#!/no/such/interpreter\n");
    let out = preflight(&sb, &["--evaluator-command", "./eval"])
        .output()
        .unwrap();
    let cwd = canonical(&sb);
    assert_fails(
        &out,
        &format!("{PREFIX}command './eval' (cwd: {cwd}): cannot start './eval': its interpreter '/no/such/interpreter' (shebang line) was not found"),
    );
}

#[test]
fn setup_checks_run_even_with_skip_preflight() {
    let sb = Sandbox::new();
    let out = preflight(
        &sb,
        &["--evaluator-command", "sh missing.sh", "--skip-preflight"],
    )
    .output()
    .unwrap();
    let cwd = canonical(&sb);
    assert_fails(
        &out,
        &format!(
            "{PREFIX}command 'sh missing.sh' (cwd: {cwd}): script 'missing.sh' not found \
             (--skip-preflight skips the probe call, not this check)"
        ),
    );

    sb.write("eval.sh", "touch called\nexit 1\n");
    let out = succeeded(preflight(
        &sb,
        &["--evaluator-command", "sh eval.sh", "--skip-preflight"],
    ));
    assert_eq!(json_stdout(&out)["probe"], Value::Null);
    assert!(!sb.exists("called"));
}

#[test]
fn probe_timeout_is_a_preflight_failure() {
    let sb = Sandbox::new();
    // The evaluator would sleep for an hour: the preflight ends at its --timeout (waiting for
    // the sleep would hit the test command's own safety timeout and fail the test).
    sb.write("eval.sh", "cat >/dev/null\nsleep 3600\n");
    let out = preflight(
        &sb,
        &["--evaluator-command", "sh eval.sh", "--timeout", "0.3"],
    )
    .output()
    .unwrap();
    let cwd = canonical(&sb);
    assert_fails(
        &out,
        &format!("{PREFIX}command 'sh eval.sh' (cwd: {cwd}): no answer within 0.3s; the evaluator and its children were killed"),
    );
}

#[test]
fn connection_refused_names_the_url() {
    let sb = Sandbox::new();
    let url = refused_url("/score");
    let out = preflight(&sb, &["--evaluator-url", &url, "--retries", "0"])
        .output()
        .unwrap();
    assert_fails(
        &out,
        &format!("{PREFIX}url {url}: connection refused — is the server running?"),
    );
}

#[test]
fn http_error_status_fails_preflight_on_one_line() {
    let server = Server::fixed(Reply::status(401, "unauthorized\nsee the docs\n"));
    let sb = Sandbox::new();
    let out = preflight(&sb, &["--evaluator-url", &server.url("/score")])
        .output()
        .unwrap();
    let url = server.url("/score");
    assert_fails(
        &out,
        &format!("{PREFIX}url {url}: HTTP 401 Unauthorized: unauthorized ⏎ see the docs — the server wants credentials, and none were sent"),
    );
    assert_eq!(server.request_count(), 1, "a 4xx is not retried");
    let out = preflight(&sb, &["--evaluator-url", &url])
        .args(["--header", "Authorization: Bearer ${EVAL_TOKEN}"])
        .env("EVAL_TOKEN", "tok-Wrong4Token7")
        .output()
        .unwrap();
    assert_fails(
        &out,
        &format!("{PREFIX}url {url}: HTTP 401 Unauthorized: unauthorized ⏎ see the docs — the server refused the credentials sent (the token or key is not shown)"),
    );
}

#[test]
fn a_redirect_or_a_wrong_path_fails_preflight_naming_the_cause_not_the_sentinel() {
    let server = Server::start(|request, _| match request.path.as_str() {
        "/old" => Reply::status(302, "").header("Location", "https://example.test/score?token=x"),
        // A network-path reference, its credentials in it.
        "/away" => Reply::status(302, "").header("Location", "//u:s3cret@example.test/x?token=x"),
        _ => Reply::status(404, "no such route"),
    });
    let sb = Sandbox::new();
    let failure = |path: &str| {
        let out = preflight(&sb, &["--evaluator-url", &server.url(path)])
            .output()
            .unwrap();
        stderr_text(&out)
    };
    assert_eq!(
        failure("/old"),
        format!(
            "{PREFIX}url {}: HTTP \
             302 Found — redirects are not followed (the request and its credentials would go \
             elsewhere): give the URL it points to (Location: https://example.test/score?…)\n",
            server.url("/old")
        )
    );
    assert_eq!(
        failure("/away"),
        format!(
            "{PREFIX}url {}: HTTP \
             302 Found — redirects are not followed (the request and its credentials would go \
             elsewhere): give the URL it points to (Location: //example.test/x?…)\n",
            server.url("/away")
        )
    );
    assert_eq!(
        failure("/scroe"),
        format!(
            "{PREFIX}url {}: HTTP \
             404 Not Found: no such route — is the URL's path right (for a model API, the model's name)?\n",
            server.url("/scroe")
        )
    );
}

#[test]
fn multi_line_bad_output_fails_preflight_on_one_line() {
    let sb = Sandbox::new();
    sb.write("eval.sh", PRINT_EVAL_OUT);
    let out = preflight(&sb, &["--evaluator-command", "sh eval.sh"])
        .env(
            "EVAL_OUT",
            "Traceback (most recent call last):\n  File \"eval.py\"\nValueError: x\n",
        )
        .output()
        .unwrap();
    let cwd = canonical(&sb);
    assert_fails(
        &out,
        &format!("{PREFIX}command 'sh eval.sh' (cwd: {cwd}): the probe call (candidate \"__evalctl_preflight__\") failed: output is not valid JSON (expected value at line 1 column 1): Traceback (most recent call last): ⏎   File \"eval.py\" ⏎ ValueError: x — an evaluator that cannot score this sentinel candidate can be run with --skip-preflight"),
    );
}

/// The cause text each error kind's preflight message must contain.
fn cause_of(kind: &str) -> &'static str {
    match kind {
        "out_of_range" => "outside [0, 1]",
        "non_numeric_score" => "must be a JSON number",
        "missing_score" => "no \"score\"",
        "non_finite_score" => "finite",
        "invalid_output" => "expected a JSON object",
        "invalid_json" => "JSON",
        other => panic!("unexpected kind {other}"),
    }
}

fn check_probe(
    out: &std::process::Output,
    expected: Expect,
    label: &str,
    failures: &mut Vec<String>,
) {
    let err = stderr_text(out);
    match expected {
        Expect::Score(score) => {
            if code(out) != 0 {
                failures.push(format!("{label}: exit {}: {err}", code(out)));
                return;
            }
            let report: Value = serde_json::from_slice(&out.stdout).unwrap();
            let got = report["probe"]["score"].as_f64();
            if got.is_none_or(|got| (got - score).abs() > score.abs() * 1e-12) {
                failures.push(format!("{label}: probe score {got:?}, expected {score}"));
            }
        }
        Expect::Error(kind) => {
            if code(out) != 3 {
                failures.push(format!("{label}: exit {}, expected 3", code(out)));
            } else if err.lines().count() != 1 || !err.starts_with(PREFIX) {
                failures.push(format!("{label}: not one preflight line: {err:?}"));
            } else if !err.contains(cause_of(kind)) {
                failures.push(format!(
                    "{label}: {err:?} does not say {:?}",
                    cause_of(kind)
                ));
            }
        }
    }
}

#[test]
fn score_range_matrix_through_the_command_probe() {
    let sb = Sandbox::new();
    sb.write("eval.sh", PRINT_EVAL_OUT);
    let mut failures = Vec::new();
    for (raw, unit, any) in SCORE_MATRIX {
        for (range, expected) in [("unit", *unit), ("any", *any)] {
            let out = preflight(
                &sb,
                &["--evaluator-command", "sh eval.sh", "--score-range", range],
            )
            .env("EVAL_OUT", raw)
            .output()
            .unwrap();
            check_probe(&out, expected, &format!("{range} {raw:?}"), &mut failures);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn score_range_matrix_through_the_http_probe() {
    let server = Server::start(|request, _| {
        let case: usize = request.header("x-case").unwrap().parse().unwrap();
        Reply::json(SCORE_MATRIX[case].0)
    });
    let sb = Sandbox::new();
    let url = server.url("/");
    let mut failures = Vec::new();
    for (index, (raw, unit, any)) in SCORE_MATRIX.iter().enumerate() {
        for (range, expected) in [("unit", *unit), ("any", *any)] {
            let header = format!("X-Case: {index}");
            let out = preflight(&sb, &["--evaluator-url", &url, "--score-range", range])
                .args(["--header", &header])
                .output()
                .unwrap();
            check_probe(&out, expected, &format!("{range} {raw:?}"), &mut failures);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn preflight_checks_the_output_file_without_creating_it() {
    let sb = Sandbox::new();
    sb.write("eval.sh", LOG_PAYLOAD);
    std::fs::create_dir(sb.join("adir")).unwrap();
    for (output, reason) in [
        ("missing/out.jsonl", "no directory missing"),
        ("adir", "it is a directory"),
    ] {
        let out = preflight(
            &sb,
            &["--evaluator-command", "sh eval.sh", "--output", output],
        )
        .output()
        .unwrap();
        assert_eq!(code(&out), 2, "{output}");
        assert_eq!(
            stderr_text(&out),
            format!("error: {output}: cannot open --output for writing: {reason}\n")
        );
    }
    succeeded(preflight(
        &sb,
        &["--evaluator-command", "sh eval.sh", "--output", "new.jsonl"],
    ));
    assert!(!sb.exists("new.jsonl"), "preflight creates nothing");
}

#[test]
fn a_run_that_fails_preflight_creates_no_output_file() {
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null\nexit 1\n");
    let out = sb
        .evalctl()
        .args([
            "run",
            "--format",
            "json",
            "--evaluator-command",
            "sh eval.sh",
            "--candidate",
            "c",
        ])
        .args(["--output", "out.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 3, "{}", stderr_text(&out));
    assert!(
        !sb.exists("out.jsonl"),
        "nothing was evaluated, so no results file"
    );
}

#[test]
fn preflight_refuses_an_output_that_run_would_refuse() {
    let sb = Sandbox::new();
    sb.write("ev.sh", "cat >/dev/null; echo '{\"score\": 0.5}'\n");
    sb.write("notes.txt", "my notes\n");
    let evaluator = ["--evaluator-command", "sh ev.sh"];
    succeeded(
        sb.evalctl()
            .args(["run", "--candidate", "a", "--output", "r.jsonl"])
            .args(evaluator),
    );
    let preflight = |candidate: &str, extra: &[&str]| {
        let out = sb
            .evalctl()
            .args(["preflight", "--format", "text", "--candidate", candidate])
            .args(evaluator)
            .args(extra)
            .output()
            .unwrap();
        (code(&out), stderr_text(&out))
    };
    // The runs' fingerprints hold the sandbox's path: the lines are checked up to them.
    let (status, stderr) = preflight("b", &["--output", "r.jsonl"]);
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.starts_with("error: r.jsonl: holds 1 line not of this run (run ")
            && stderr.contains(": its candidates or --repeat differ; this one is run "),
        "{stderr}"
    );
    assert_eq!(
        preflight("b", &["--output", "notes.txt"]),
        (
            2,
            "error: notes.txt: is not a results file (1 line and no result line): name another \
             --output file\n"
                .to_string()
        )
    );
    let (status, stderr) = preflight("a", &["--output", "r.jsonl"]);
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.starts_with("error: r.jsonl: already holds 1 line of this run"),
        "{stderr}"
    );
    assert_eq!(preflight("a", &["--output", "r.jsonl", "--resume"]).0, 0);
}
