//! `evalctl.toml` through the real binary: precedence (flag over env over file over default),
//! discovery from a subdirectory, `--config` and `--no-config`, paths relative to the file, every
//! kind of file problem with its line, `${VAR}` headers, `config show` origins and masking, and
//! `evalctl init`.

use crate::common;

use crate::common::{code, json_stdout, stderr_text, stdout_text, Sandbox};
use serde_json::{json, Value};

/// An evaluator that scores 1.0 and names the directory it ran in, in its side info.
const PWD_EVAL: &str =
    r#"cat >/dev/null; printf '{"score": 1.0, "dir": "%s"}' "$(basename "$PWD")""#;

/// `config show ARGS` in `dir` (a path inside the sandbox), as JSON: each key's value and origin.
fn show(sb: &Sandbox, dir: &str, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut command = sb.evalctl();
    command
        .current_dir(sb.join(dir))
        .args(["config", "show", "--format", "json"])
        .args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    json_stdout(&output)
}

/// The value (its one value, for a flag that takes one) and origin of `key`.
fn setting<'a>(shown: &'a Value, key: &str) -> (&'a Value, &'a str) {
    let found = shown["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|setting| setting["key"] == key)
        .unwrap_or_else(|| panic!("no setting {key}: {shown}"));
    let value = match found["value"].as_array().map(Vec::as_slice) {
        Some([one]) => one,
        _ => &found["value"],
    };
    (value, found["origin"].as_str().unwrap())
}

#[test]
fn flag_beats_env_beats_file_beats_default() {
    let sb = Sandbox::new();
    sb.write(
        "evalctl.toml",
        "[run]\nconcurrency = 3\ntimeout = 7\nretries = 5\n",
    );
    let shown = show(
        &sb,
        "",
        &["run", "-j", "9"],
        &[("EVALCTL_CONCURRENCY", "4"), ("EVALCTL_TIMEOUT", "6")],
    );
    assert_eq!(shown["config_file"], "evalctl.toml");
    assert_eq!(
        setting(&shown, "run.concurrency"),
        (&"9".into(), "flag --concurrency")
    );
    assert_eq!(
        setting(&shown, "run.timeout"),
        (&"6".into(), "env EVALCTL_TIMEOUT")
    );
    assert_eq!(
        setting(&shown, "run.retries"),
        (&"5".into(), "evalctl.toml:4")
    );
    assert_eq!(
        setting(&shown, "run.score_range"),
        (&"unit".into(), "default")
    );
}

#[test]
fn the_file_is_found_from_a_subdirectory_and_its_paths_and_command_are_its_own() {
    let sb = Sandbox::new();
    sb.write("eval.sh", PWD_EVAL);
    sb.write("data/d.jsonl", "{\"x\": 1}\n{\"x\": 2}\n");
    sb.write(
        "evalctl.toml",
        "[evaluator]\ncommand = \"sh eval.sh\"\n\n[run]\ndataset = \"data/d.jsonl\"\n",
    );
    std::fs::create_dir_all(sb.join("deep/er")).unwrap();
    let run = |extra: &[&str]| {
        sb.evalctl()
            .current_dir(sb.join("deep/er"))
            .args(["run", "--format", "json", "--candidate", "c"])
            .args(["--output", "r.jsonl"])
            .args(extra)
            .output()
            .unwrap()
    };
    // Found above the working directory, it chooses no command unless named with --config.
    let found = run(&[]);
    assert_eq!(code(&found), 2);
    assert_eq!(
        stderr_text(&found),
        "warning: ../../evalctl.toml: not used from a parent directory: evaluator.command (line \
         2), run.dataset (line 5): a file found above the working directory may not choose what \
         runs, what is called with your keys, which files are read, or where results are read and \
         written; pass --config ../../evalctl.toml if you trust it\n\
         error: run: no evaluator: ../../evalctl.toml sets one, but it was found in a parent \
         directory and may not choose what runs: pass --config ../../evalctl.toml if you trust \
         it, or pass one of --evaluator-command, --evaluator-url, --judge-model, --checks or \
         --spec\n"
    );
    let output = run(&["--config", "../../evalctl.toml"]);
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    let summary = json_stdout(&output);
    assert_eq!(summary["calls"]["total"], 2);
    let records = sb.jsonl("deep/er/r.jsonl");
    let sandbox_name = sb.path().file_name().unwrap().to_str().unwrap();
    assert_eq!(records[0]["side_info"]["dir"], sandbox_name);
    let shown = show(
        &sb,
        "deep/er",
        &["run", "--config", "../../evalctl.toml"],
        &[],
    );
    assert_eq!(shown["config_file"], "../../evalctl.toml");
    assert_eq!(
        setting(&shown, "run.dataset"),
        (&"../../data/d.jsonl".into(), "../../evalctl.toml:5")
    );
    // Found, not named: the file above chooses no dataset (whose lines go to the evaluator).
    let shown = show(&sb, "deep/er", &["run"], &[]);
    assert_eq!(shown["config_file"], "../../evalctl.toml");
    assert_eq!(setting(&shown, "run.dataset"), (&json!([]), "default"));
}

#[test]
fn config_names_a_file_and_no_config_ignores_it() {
    let sb = Sandbox::new();
    sb.write("evalctl.toml", "[run]\nretries = 5\n");
    sb.write("other.toml", "[run]\nretries = 1\n");
    let shown = show(&sb, "", &["run", "--config", "other.toml"], &[]);
    assert_eq!(
        setting(&shown, "run.retries"),
        (&"1".into(), "other.toml:2")
    );
    let shown = show(&sb, "", &["run", "--no-config"], &[]);
    assert_eq!(shown["config_file"], Value::Null);
    assert_eq!(setting(&shown, "run.retries"), (&"2".into(), "default"));
    let output = sb
        .evalctl()
        .args(["run", "--config", "missing.toml", "--candidate", "c"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert_eq!(
        stderr_text(&output),
        "error: missing.toml: cannot read: No such file or directory\n"
    );
    for (named, reason) in [
        (".", "is a directory, not a file"),
        ("/dev/null", "is not a regular file"),
    ] {
        let output = sb
            .evalctl()
            .args(["run", "--config", named, "--candidate", "c"])
            .output()
            .unwrap();
        assert_eq!(code(&output), 2);
        assert_eq!(stderr_text(&output), format!("error: {named}: {reason}\n"));
    }
}

#[test]
fn an_evaluator_flag_replaces_the_files_evaluator_section() {
    let sb = Sandbox::new();
    sb.write("eval.sh", PWD_EVAL);
    sb.write(
        "evalctl.toml",
        "[evaluator]\nurl = \"http://127.0.0.1:9/score\"\nheaders = { X-Token = \"abcdefgh\" }\n",
    );
    let output = sb
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
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    assert_eq!(json_stdout(&output)["evaluator"]["kind"], "command");
}

/// Each kind of problem, reported `FILE:LINE: key: reason`, all at once, exit 2, nothing run.
#[test]
fn every_file_problem_is_reported_with_its_line() {
    let sb = Sandbox::new();
    let cases: &[(&str, &[&str])] = &[
        (
            "[run]\nconcurency = 4\n",
            &["evalctl.toml:2: run.concurency: unknown key `concurency` (did you mean `concurrency`?)"],
        ),
        (
            "[evaluatr]\n",
            &["evalctl.toml:1: evaluatr: unknown key `evaluatr` (did you mean `evaluator`?)"],
        ),
        (
            "[run]\ntimeout = \"soon\"\nretries = 1.5\nskip_preflight = 1\n",
            &[
                "evalctl.toml:2: run.timeout: expected a number, found string",
                "evalctl.toml:3: run.retries: expected an integer, found float",
                "evalctl.toml:4: run.skip_preflight: expected a boolean, found integer",
            ],
        ),
        (
            "[evaluator]\ncommand = \"sh e.sh\"\n# the judge\njudge_model = \"openai/m\"\n",
            &["evalctl.toml:4: evaluator.judge_model: two evaluators: `command` (line 2) and `judge_model`; keep one"],
        ),
        (
            "[run]\nconcurrency = 0\nscore_range = \"big\"\n",
            &[
                "evalctl.toml:2: run.concurrency: must be a whole number between 1 and 4096",
                "evalctl.toml:3: run.score_range: \"big\" is not one of unit, any",
            ],
        ),
        (
            "[evaluator]\nurl = \"http://127.0.0.1:9/\"\nheaders = { Authorization = \"Bearer ${EVALCTL_TEST_UNSET}\" }\n",
            &["evalctl.toml:3: evaluator.headers: `${EVALCTL_TEST_UNSET}`: the environment variable EVALCTL_TEST_UNSET is not set"],
        ),
        (
            "[run]\nconcurrency = \n",
            &["evalctl.toml:2: invalid TOML: string values must be quoted, expected literal string"],
        ),
    ];
    for (text, expected) in cases {
        sb.write("evalctl.toml", text);
        let output = sb
            .evalctl()
            .args(["run", "--format", "text", "--candidate", "c"])
            .output()
            .unwrap();
        assert_eq!(code(&output), 2, "{text}");
        let expected: String = expected
            .iter()
            .map(|line| format!("error: {line}\n"))
            .collect();
        assert_eq!(stderr_text(&output), expected, "{text}");
        assert_eq!(stdout_text(&output), "");
    }
}

#[test]
fn header_references_expand_and_config_show_masks_them() {
    let sb = Sandbox::new();
    let server = common::Server::fixed(common::Reply::json(r#"{"score": 0.5}"#));
    sb.write(
        "evalctl.toml",
        format!(
            "[evaluator]\nurl = \"{}\"\nheaders = {{ Authorization = \"Bearer ${{EVAL_TOKEN}}\" }}\n",
            server.url("/score")
        ),
    );
    let secret = "tok-Qm4xV8rT2pL9";
    let output = sb
        .evalctl()
        .env("EVAL_TOKEN", secret)
        .args([
            "run",
            "--format",
            "json",
            "--skip-preflight",
            "--candidate",
            "c",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let expected = format!("Bearer {secret}");
    assert_eq!(requests[0].header("Authorization"), Some(expected.as_str()));
    for format in ["json", "text"] {
        let output = sb
            .evalctl()
            .env("EVAL_TOKEN", secret)
            .args(["config", "show", "--format", format])
            .output()
            .unwrap();
        assert_eq!(code(&output), 0);
        let text = stdout_text(&output);
        assert!(text.contains("Authorization: [redacted]"), "{text}");
        assert!(!text.contains(secret), "{text}");
    }
}

#[test]
fn config_show_masks_the_user_info_of_a_url_that_does_not_parse() {
    let sb = Sandbox::new();
    for (url, shown) in [
        (
            "http://u:s3cret@[bad/score?key=s3cret-key",
            "http://[bad/score?…",
        ),
        (
            "ftp://u:s3cret@host/score?key=s3cret-key",
            "ftp://host/score?…",
        ),
        ("u:s3cret@host/score", "u:host/score"),
        (
            "http://alice:s3cr#et@127.0.0.1:9/score",
            "http://127.0.0.1:9/score",
        ),
        // An `@` in a path that parses is no user info.
        (
            "http://127.0.0.1:9/api@v2/score",
            "http://127.0.0.1:9/api@v2/score",
        ),
    ] {
        sb.write("evalctl.toml", format!("[evaluator]\nurl = \"{url}\"\n"));
        let output = sb
            .evalctl()
            .args(["config", "show", "--format", "text"])
            .output()
            .unwrap();
        assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
        let text = stdout_text(&output);
        let row: Vec<&str> = text
            .lines()
            .filter(|line| line.starts_with("evaluator.url"))
            .map(|line| line.split_whitespace().nth(1).unwrap())
            .collect();
        assert_eq!(row, [shown]);
        assert!(!text.contains("s3cret"), "{text}");
    }
}

#[test]
fn init_writes_a_valid_starter_and_never_overwrites() {
    let sb = Sandbox::new();
    let output = sb
        .evalctl()
        .args(["init", "--format", "text"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    let written = sb.read("evalctl.toml");
    assert!(written.starts_with("# evalctl.toml"), "{written}");
    let shown = show(&sb, "", &[], &[]);
    assert_eq!(shown["config_file"], "evalctl.toml");
    sb.write("evalctl.toml", "# mine\n");
    let output = sb
        .evalctl()
        .args(["init", "--format", "text"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert_eq!(
        stderr_text(&output),
        "error: evalctl.toml: already exists; evalctl init never overwrites it (edit it, or \
         remove it first)\n"
    );
    assert_eq!(sb.read("evalctl.toml"), "# mine\n");
}

#[test]
fn no_evaluator_anywhere_names_the_file_section() {
    let sb = Sandbox::new();
    let output = sb
        .evalctl()
        .args(["run", "--format", "text", "--candidate", "c"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert_eq!(
        stderr_text(&output),
        "error: run: no evaluator: pass one of --evaluator-command, --evaluator-url, \
         --judge-model, --checks or --spec, or set one in the [evaluator] section of evalctl.toml \
         (evalctl init writes a starter)\n"
    );
}

#[test]
fn a_bad_value_from_the_file_or_the_environment_is_named_where_it_was_set() {
    let sb = Sandbox::new();
    sb.write("eval.sh", PWD_EVAL);
    sb.write(
        "evalctl.toml",
        "[evaluator]\ncommand = \"sh eval.sh\"\n\n[run]\nfail_under = 1.5\n",
    );
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut command = sb.evalctl();
        command
            .args(["run", "--candidate", "c", "--format", "text"])
            .args(args);
        for (name, value) in env {
            command.env(name, value);
        }
        let out = command.output().unwrap();
        (code(&out), stderr_text(&out))
    };
    let outside = "1.5 is outside the unit score range [0, 1], so the gate could never pass; \
                   pass --score-range any for scores outside [0, 1]";
    // Checked after parsing (against the score range), yet named at the file's line...
    assert_eq!(
        run(&[], &[]),
        (
            2,
            format!("error: evalctl.toml:5: run.fail_under: {outside}\n")
        )
    );
    // ...or by the variable that set it, and by the flag only when the flag was typed.
    assert_eq!(
        run(
            &["--no-config"],
            &[
                ("EVALCTL_FAIL_UNDER", "1.5"),
                ("EVALCTL_EVALUATOR_COMMAND", "sh eval.sh")
            ]
        ),
        (2, format!("error: EVALCTL_FAIL_UNDER: {outside}\n"))
    );
    assert_eq!(
        run(&["--fail-under", "1.5"], &[]),
        (2, format!("error: --fail-under: {outside}\n"))
    );
    // A value the flag's own parser rejects, from a variable.
    assert_eq!(
        run(
            &["--no-config", "--evaluator-command", "sh eval.sh"],
            &[("EVALCTL_CONCURRENCY", "abc")]
        ),
        (
            2,
            "error: EVALCTL_CONCURRENCY: must be a whole number between 1 and 4096\n".to_string()
        )
    );
    // Every bad variable is said at once, not one a run.
    assert_eq!(
        run(
            &["--no-config", "--evaluator-command", "sh eval.sh"],
            &[
                ("EVALCTL_CONCURRENCY", "abc"),
                ("EVALCTL_LIMIT", "1e3"),
                ("EVALCTL_SKIP_PREFLIGHT", "maybe")
            ]
        ),
        (
            2,
            "error: EVALCTL_CONCURRENCY: must be a whole number between 1 and 4096\n\
             error: EVALCTL_LIMIT: must be a whole number of at least 1\n\
             error: EVALCTL_SKIP_PREFLIGHT: \"maybe\" is not one of true, false\n"
                .to_string()
        )
    );
    // The seed says its range, from a variable as from the file.
    let seed = "must be a whole number between 0 and 18446744073709551615";
    assert_eq!(
        run(
            &["--no-config", "--evaluator-command", "sh eval.sh"],
            &[("EVALCTL_SEED", "-1")]
        ),
        (2, format!("error: EVALCTL_SEED: {seed}\n"))
    );
    sb.write(
        "evalctl.toml",
        "[evaluator]\ncommand = \"sh eval.sh\"\n\n[run]\nseed = -1\n",
    );
    assert_eq!(
        run(&[], &[]),
        (2, format!("error: evalctl.toml:5: run.seed: {seed}\n"))
    );
    // A file a setting names that cannot be read keeps its name, placed where it was set.
    let missing = "nope.jsonl: cannot read: No such file or directory";
    assert_eq!(
        run(
            &["--no-config", "--evaluator-command", "sh eval.sh"],
            &[("EVALCTL_DATASET", "nope.jsonl")]
        ),
        (2, format!("error: EVALCTL_DATASET: {missing}\n"))
    );
    sb.write(
        "evalctl.toml",
        "[evaluator]\ncommand = \"sh eval.sh\"\n\n[run]\ndataset = \"nope.jsonl\"\n",
    );
    assert_eq!(
        run(&[], &[]),
        (
            2,
            format!("error: evalctl.toml:5: run.dataset: {missing}\n")
        )
    );
    assert_eq!(
        run(&["--dataset", "nope.jsonl"], &[]),
        (2, format!("error: {missing}\n"))
    );
    // `config show` names it alike.
    let shown = sb
        .evalctl()
        .args(["config", "show", "run", "--format", "text"])
        .env("EVALCTL_CACHE", "maybe")
        .output()
        .unwrap();
    assert_eq!(
        (code(&shown), stderr_text(&shown)),
        (
            2,
            "error: EVALCTL_CACHE: \"maybe\" is not one of true, false\n".to_string()
        )
    );
}

#[test]
fn a_switch_its_variable_sets_needs_what_its_flag_needs_and_its_variable_is_named() {
    // `EVALCTL_RESUME=false` is resume off: it needs no --output (`tasks run`: no
    // --save-outputs), as `--resume` would.
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null; echo '{\"score\": 1}'\n");
    let run = |args: &[&str], variable: &str, value: &str| {
        let out = sb
            .evalctl()
            .args(["--format", "text"])
            .args(args)
            .arg("--no-config")
            .env(variable, value)
            .output()
            .unwrap();
        // What is said before clap's usage line.
        let stderr = stderr_text(&out);
        let said: Vec<&str> = stderr.lines().take_while(|line| !line.is_empty()).collect();
        (code(&out), said.join("\n"))
    };
    let evaluate = [
        "run",
        "--evaluator-command",
        "sh eval.sh",
        "--candidate",
        "c",
    ];
    for variable in ["EVALCTL_RESUME", "EVALCTL_RESUME_KEEP_ERRORS"] {
        assert_eq!(
            run(&evaluate, variable, "false"),
            (0, String::new()),
            "{variable}"
        );
    }
    // Set true, the switch needs what `--resume` needs, and the variable is named as the cause.
    let needs = |variable: &str, flag: &str, needed: &str| {
        format!(
            "error: {variable}: turns on {flag}, which needs {needed}: give it, or unset {variable}"
        )
    };
    assert_eq!(
        run(&evaluate, "EVALCTL_RESUME", "true"),
        (
            2,
            needs("EVALCTL_RESUME", "--resume", "--output <FILE.jsonl>")
        )
    );
    let json = sb
        .evalctl()
        .args(["--format", "json"])
        .args(evaluate)
        .arg("--no-config")
        .env("EVALCTL_RESUME_KEEP_ERRORS", "true")
        .output()
        .unwrap();
    assert_eq!(
        (code(&json), stdout_text(&json)),
        (
            2,
            "{\n  \"ok\": false,\n  \"exit\": 2,\n  \"errors\": [\n    \"EVALCTL_RESUME_KEEP_ERRORS: \
             turns on --resume-keep-errors, which needs --output <FILE.jsonl>, --resume: give \
             them, or unset EVALCTL_RESUME_KEEP_ERRORS\"\n  ]\n}\n"
                .to_string()
        )
    );
    // `config show`, which says where settings come from, names it too.
    let shown = sb
        .evalctl()
        .args(["config", "show", "tasks", "run", "t.jsonl", "--no-config"])
        .args(["--format", "text"])
        .env("EVALCTL_RESUME", "true")
        .output()
        .unwrap();
    assert_eq!(
        (code(&shown), stderr_text(&shown)),
        (
            2,
            format!(
                "{}\n",
                needs("EVALCTL_RESUME", "--resume", "--save-outputs <FILE.jsonl>")
            )
        )
    );
    // Typed, the flag is what clap names.
    let typed = [&evaluate[..], &["--resume"]].concat();
    assert_eq!(
        run(&typed, "EVALCTL_RESUME", "true"),
        (
            2,
            "error: the following required arguments were not provided:\n  --output <FILE.jsonl>"
                .to_string()
        )
    );
    // Nor does it conflict with what the switch on would: `--skip-preflight` with
    // `EVALCTL_PROBE_JUDGE=false`.
    let skipped = [&evaluate[..], &["--skip-preflight"]].concat();
    assert_eq!(
        run(&skipped, "EVALCTL_PROBE_JUDGE", "false"),
        (0, String::new())
    );
    let generate = ["tasks", "run", "--model-command", "echo hi", "tasks.jsonl"];
    assert_eq!(
        run(&generate, "EVALCTL_RESUME", "false"),
        (
            2,
            "error: tasks.jsonl: cannot read: No such file or directory".to_string()
        )
    );
    assert_eq!(
        run(&generate, "EVALCTL_RESUME", "true"),
        (
            2,
            needs("EVALCTL_RESUME", "--resume", "--save-outputs <FILE.jsonl>")
        )
    );
    // The variable comes before the file, and `config show` says where the value came from.
    sb.write(
        "evalctl.toml",
        "[run]\nresume = true\noutput = \"o.jsonl\"\n",
    );
    let resume = |env: &[(&str, &str)]| {
        let mut command = sb.evalctl();
        command.args(["config", "show", "run", "--format", "text"]);
        for (name, value) in env {
            command.env(name, value);
        }
        let shown = stdout_text(&command.output().unwrap());
        (shown.lines())
            .find(|line| line.starts_with("run.resume "))
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    assert_eq!(
        resume(&[]).as_deref(),
        Some("run.resume true evalctl.toml:2")
    );
    assert_eq!(
        resume(&[("EVALCTL_RESUME", "false")]).as_deref(),
        Some("run.resume false env EVALCTL_RESUME")
    );
}

#[test]
fn a_switch_the_file_turns_on_needs_what_its_flag_needs_and_the_files_values_count_for_it() {
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null; echo '{\"score\": 1}'\n");
    // `run` of one candidate in `format`.
    let evaluate = |format: &str| {
        let mut command = sb.evalctl();
        command
            .args([
                "run",
                "--format",
                format,
                "--evaluator-command",
                "sh eval.sh",
            ])
            .args(["--candidate", "c"]);
        command
    };
    let run = |args: &[&str]| {
        let out = evaluate("text").args(args).output().unwrap();
        // What is said before clap's usage line, if any.
        let stderr = stderr_text(&out);
        let said: Vec<&str> = stderr.lines().take_while(|line| !line.is_empty()).collect();
        (code(&out), said.join("\n"))
    };
    // Turned on by the file with nothing to resume, the switch is an error at its line (it was
    // ignored), in every format.
    sb.write("evalctl.toml", "[run]\nconcurrency = 2\nresume = true\n");
    assert_eq!(
        run(&[]),
        (
            2,
            "error: evalctl.toml:3: run.resume: turns on --resume, which needs --output \
             <FILE.jsonl>: give it, or remove this line"
                .to_string()
        )
    );
    let json = evaluate("json").output().unwrap();
    assert_eq!(
        (code(&json), stdout_text(&json)),
        (
            2,
            "{\n  \"ok\": false,\n  \"exit\": 2,\n  \"errors\": [\n    \"evalctl.toml:3: \
             run.resume: turns on --resume, which needs --output <FILE.jsonl>: give it, or \
             remove this line\"\n  ]\n}\n"
                .to_string()
        )
    );
    sb.write("evalctl.toml", "[run]\nresume_keep_errors = true\n");
    assert_eq!(
        run(&[]),
        (
            2,
            "error: evalctl.toml:2: run.resume_keep_errors: turns on --resume-keep-errors, which \
             needs --output <FILE.jsonl>, --resume: give them, or remove this line"
                .to_string()
        )
    );
    // Given on the command line, what it needs is there.
    sb.write("evalctl.toml", "[run]\nresume = true\n");
    assert_eq!(
        run(&["--output", "typed.jsonl"]),
        (
            0,
            "resuming typed.jsonl: 0 of 1 calls already done, 1 to make".to_string()
        )
    );
    assert_eq!(sb.read("typed.jsonl").lines().count(), 1);
    // Switched off by its variable, the line is not looked at.
    let off = evaluate("text")
        .env("EVALCTL_RESUME", "false")
        .output()
        .unwrap();
    assert_eq!(code(&off), 0, "{}", stderr_text(&off));

    // The file's `output` is what a typed `--resume` needs (it was refused as missing): the run
    // resumes the file's journal and makes no call again.
    sb.write("evalctl.toml", "[run]\noutput = \"o.jsonl\"\n");
    assert_eq!(run(&[]), (0, String::new()));
    assert_eq!(sb.read("o.jsonl").lines().count(), 1);
    let resumed = (
        0,
        "resuming o.jsonl: 1 of 1 calls already done, 0 to make".to_string(),
    );
    assert_eq!(run(&["--resume"]), resumed);
    assert_eq!(sb.read("o.jsonl").lines().count(), 1);
    // And `config show` says the value came from the file, not the command line.
    let shown = show(&sb, ".", &["run", "--resume"], &[]);
    assert_eq!(
        setting(&shown, "run.output"),
        (&json!("o.jsonl"), "evalctl.toml:2")
    );
    // A chain: typed `--resume-keep-errors` needs `resume`, which needs `output`, both the file's.
    sb.write(
        "evalctl.toml",
        "[run]\nresume = true\noutput = \"o.jsonl\"\n",
    );
    assert_eq!(run(&["--resume-keep-errors"]), resumed);
    assert_eq!(sb.read("o.jsonl").lines().count(), 1);
    // A switch the file turns off is not what a typed flag needs.
    sb.write(
        "evalctl.toml",
        "[run]\nresume = false\noutput = \"o.jsonl\"\n",
    );
    assert_eq!(
        run(&["--resume-keep-errors"]),
        (
            2,
            "error: the following required arguments were not provided:\n  --resume".to_string()
        )
    );
    assert_eq!(sb.read("o.jsonl").lines().count(), 1);
    // `tasks run`: the file's `save_outputs` for a typed `--resume`.
    sb.write(
        "tasks.jsonl",
        concat!(
            r#"{"task_id":"add","category":"arithmetic","prompt":"1+1","targets":["2"],"#,
            r#""metric_name":"exact_match","post_process":"strip_whitespace"}"#,
            "\n"
        ),
    );
    sb.write("evalctl.toml", "[tasks]\nsave_outputs = \"saved.jsonl\"\n");
    let tasks = |extra: &[&str]| {
        let out = sb
            .evalctl()
            .args([
                "tasks",
                "run",
                "--format",
                "json",
                "--model-command",
                "echo 2",
            ])
            .args(extra)
            .arg("tasks.jsonl")
            .output()
            .unwrap();
        (code(&out), stderr_text(&out))
    };
    // Without its tasks file, that file is all that is missing.
    let no_tasks = sb
        .evalctl()
        .args([
            "tasks",
            "run",
            "--format",
            "text",
            "--model-command",
            "echo 2",
            "--resume",
        ])
        .output()
        .unwrap();
    let said = stderr_text(&no_tasks);
    assert_eq!(
        (code(&no_tasks), said.lines().take(2).collect::<Vec<_>>()),
        (
            2,
            vec![
                "error: the following required arguments were not provided:",
                "  <FILE>"
            ]
        )
    );
    assert_eq!(tasks(&[]), (0, String::new()));
    assert_eq!(
        tasks(&["--resume"]),
        (
            0,
            "resuming saved.jsonl: 1 of 1 calls already done, 0 to make\n".to_string()
        )
    );
    assert_eq!(sb.read("saved.jsonl").lines().count(), 1);
}
