//! Global behaviour of the command line: `--version`, `--help` on every command, `--color`, and
//! usage errors (exit 2) for unknown commands and flags.

use crate::common;

use crate::common::{code, evalctl, mask_elapsed, stderr_text, stdout_text, Sandbox};

#[test]
fn version_names_the_package_version() {
    // Asked of a command, the version is still evalctl's.
    for args in [
        &["--version"][..],
        &["-V"],
        &["run", "-V"],
        &["spec", "score", "--version"],
    ] {
        let out = evalctl().args(args).output().unwrap();
        assert_eq!(code(&out), 0, "{args:?}");
        assert_eq!(
            stdout_text(&out),
            format!("evalctl {}\n", env!("CARGO_PKG_VERSION")),
            "{args:?}"
        );
        assert_eq!(stderr_text(&out), "", "{args:?}");
    }
}

#[test]
fn every_command_has_help() {
    // Each help text is the one pinned by the trycmd case `tests/cmd/<snapshot>.toml` (which
    // `run --help` must list every flag of `run` in, for instance).
    let commands: &[(&[&str], &str)] = &[
        (&[], "help"),
        (&["run"], "help-run"),
        (&["preflight"], "help-preflight"),
        (&["tasks"], "help-tasks"),
        (&["tasks", "validate"], "help-tasks-validate"),
        (&["tasks", "render"], "help-tasks-render"),
        (&["tasks", "score"], "help-tasks-score"),
        (&["fep"], "help-fep"),
        (&["fep", "evaluate"], "help-fep-evaluate"),
    ];
    for (command, snapshot) in commands {
        let out = evalctl().args(*command).arg("--help").output().unwrap();
        assert_eq!(code(&out), 0, "{command:?}: {}", stderr_text(&out));
        let path = format!("{}/tests/cmd/{snapshot}.stdout", env!("CARGO_MANIFEST_DIR"));
        let expected = std::fs::read_to_string(&path).unwrap();
        assert_eq!(stdout_text(&out), expected, "{command:?}");
        assert_eq!(stderr_text(&out), "", "{command:?}");
    }
}

#[test]
fn unknown_commands_and_flags_are_usage_errors() {
    let cases: [(&[&str], &str); 3] = [
        (
            &["frobnicate"],
            "error: unrecognized subcommand 'frobnicate'

Usage: evalctl [OPTIONS] <COMMAND>

For more information, try '--help'.
",
        ),
        (
            &["run", "--no-such-flag"],
            "error: unexpected argument '--no-such-flag' found

  tip: a similar argument exists: '--no-config'

Usage: evalctl run --no-config [CANDIDATE_FILE]...

For more information, try '--help'.
",
        ),
        (
            &[],
            "error: 'evalctl' requires a subcommand but one was not provided
  [subcommands: fep, spec, summarize, merge, config, init, report, serve, compare, run, preflight, tasks, cache, help]

Usage: evalctl [OPTIONS] <COMMAND>

For more information, try '--help'.
",
        ),
    ];
    for (args, expected) in cases {
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
        assert_eq!(stderr_text(&out), expected, "{args:?}");
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
    assert_eq!(
        mask_elapsed(&stdout),
        "evaluator: command sh bad.sh   score range: unit
calls: 1 (0 ok, 1 error)   elapsed: [..]s

\u{1b}[1mcandidate  score   n / errors\u{1b}[0m
cand-1     0.0000  1 / 1

exit 1: 1 of 1 calls failed
"
    );
    assert_eq!(stderr, "\u{1b}[1;31mfailed\u{1b}[0m: cand-1: invalid_json: output is not valid JSON (expected ident at line 1 column 2): not json
exit 1: 1 of 1 calls failed
");
    for (choice, no_color) in [("never", false), ("auto", false), ("auto", true)] {
        let (stdout, stderr) = text_summary(choice, no_color);
        assert_eq!(
            mask_elapsed(&stdout),
            "evaluator: command sh bad.sh   score range: unit
calls: 1 (0 ok, 1 error)   elapsed: [..]s

candidate  score   n / errors
cand-1     0.0000  1 / 1

exit 1: 1 of 1 calls failed
",
            "--color {choice}"
        );
        assert_eq!(
            stderr,
            "failed: cand-1: invalid_json: output is not valid JSON (expected ident at line 1 column 2): not json
exit 1: 1 of 1 calls failed
",
            "--color {choice}"
        );
    }
}

#[test]
fn a_candidate_under_fail_under_is_a_red_row_when_colour_is_on() {
    let sb = Sandbox::new();
    sb.write(
        "eval.sh",
        "p=$(cat)\ncase \"$p\" in *'\"bad\"'*) printf '{\"score\": 0.2}';; \
         *) printf '{\"score\": 0.9}';; esac\n",
    );
    let out = sb
        .evalctl()
        .args([
            "--color",
            "always",
            "run",
            "--format",
            "text",
            "--skip-preflight",
        ])
        .args(["--evaluator-command", "sh eval.sh", "--candidate", "good"])
        .args(["--candidate", "bad", "--fail-under", "0.5"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    assert_eq!(
        mask_elapsed(&stdout_text(&out)),
        "evaluator: command sh eval.sh   score range: unit
calls: 2 (2 ok, 0 errors)   elapsed: [..]s

\u{1b}[1mcandidate  score   n / errors\u{1b}[0m
cand-1     0.9000  1 / 0
\u{1b}[31mcand-2     0.2000  1 / 0\u{1b}[0m

cand-1 = \"good\"
cand-2 = \"bad\"

best: cand-1 (score 0.9000)

exit 1: all 2 calls succeeded; candidate cand-2 scored 0.2000, below --fail-under 0.5
"
    );
}

#[test]
fn the_summary_names_the_best_row_and_every_row_that_ties_with_it() {
    let sb = Sandbox::new();
    sb.write(
        "eval.sh",
        "p=$(cat)\ncase \"$p\" in *'\"low\"'*) printf '{\"score\": 0.2}';; \
         *) printf '{\"score\": 0.9}';; esac\n",
    );
    let run = |candidates: &[&str]| {
        let mut command = sb.evalctl();
        command.args(["run", "--format", "text", "--skip-preflight", "-j", "1"]);
        command.args(["--evaluator-command", "sh eval.sh"]);
        for candidate in candidates {
            command.args(["--candidate", candidate]);
        }
        let out = command.output().unwrap();
        assert_eq!(code(&out), 0, "{}", stderr_text(&out));
        mask_elapsed(&stdout_text(&out))
    };
    assert_eq!(
        run(&["high", "low", "also high"]),
        "evaluator: command sh eval.sh   score range: unit
calls: 3 (3 ok, 0 errors)   elapsed: [..]s

candidate  score   n / errors
cand-1     0.9000  1 / 0
cand-2     0.2000  1 / 0
cand-3     0.9000  1 / 0

cand-1 = \"high\"
cand-2 = \"low\"
cand-3 = \"also high\"

best: cand-1 and cand-3 tie (score 0.9000)

exit 0: all 3 calls succeeded
"
    );
    assert_eq!(
        run(&["a", "b", "c"]),
        "evaluator: command sh eval.sh   score range: unit
calls: 3 (3 ok, 0 errors)   elapsed: [..]s

candidate  score   n / errors
cand-1     0.9000  1 / 0
cand-2     0.9000  1 / 0
cand-3     0.9000  1 / 0

cand-1 = \"a\"
cand-2 = \"b\"
cand-3 = \"c\"

best: none, all 3 rows score 0.9000

exit 0: all 3 calls succeeded
"
    );
    // One row has no best to name.
    assert_eq!(
        run(&["low"]),
        "evaluator: command sh eval.sh   score range: unit
calls: 1 (1 ok, 0 errors)   elapsed: [..]s

candidate  score   n / errors
cand-1     0.2000  1 / 0

exit 0: the call succeeded
"
    );
}

#[test]
fn means_equal_as_shown_tie_and_a_shard_names_no_best_row() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"n\": 1}\n{\"n\": 2}\n{\"n\": 3}\n");
    // cand-1 scores 0.1, 0.2, 0.3 and cand-2 0.3, 0.2, 0.1: sums in another order, one mean.
    sb.write(
        "eval.sh",
        "p=$(cat)\ncase \"$p\" in\n\
         *'\"up\"'*'\"n\": 1'*|*'\"n\": 1'*'\"up\"'*) s=0.1;;\n\
         *'\"up\"'*'\"n\": 3'*|*'\"n\": 3'*'\"up\"'*) s=0.3;;\n\
         *'\"n\": 1'*) s=0.3;;\n*'\"n\": 3'*) s=0.1;;\n*) s=0.2;;\nesac\n\
         printf '{\"score\": %s}' \"$s\"\n",
    );
    let run = |extra: &[&str]| {
        let out = sb
            .evalctl()
            .args(["run", "--format", "text", "--skip-preflight", "-j", "1"])
            .args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"])
            .args(["--candidate", "up", "--candidate", "down"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr_text(&out));
        mask_elapsed(&stdout_text(&out))
    };
    assert_eq!(
        run(&[]),
        "evaluator: command sh eval.sh   score range: unit
calls: 6 (6 ok, 0 errors)   elapsed: [..]s

candidate  score            train mean       n / errors
cand-1     0.2000 ± 0.1000  0.2000 ± 0.1000  3 / 0
cand-2     0.2000 ± 0.1000  0.2000 ± 0.1000  3 / 0

cand-1 = \"up\"
cand-2 = \"down\"

best: none, both rows score 0.2000

score = the candidate's train mean; failed calls count as 0
± = half-width of the 95% bootstrap interval over examples (--seed)

exit 0: all 6 calls succeeded
"
    );
    // A shard's rows cover different examples (which ones depends on the call keys, and so on
    // the sandbox's path): where a shard misses calls, no best row is named.
    let mut partial = 0;
    for shard in ["0/2", "1/2"] {
        let summary = run(&["--shard", shard]);
        let lines: Vec<&str> = summary.lines().collect();
        if lines.iter().any(|line| line.starts_with("partial: ")) {
            partial += 1;
            assert!(
                !lines.iter().any(|line| line.starts_with("best:")),
                "{summary}"
            );
        }
    }
    assert!(partial > 0, "no shard missed a call");
}

#[test]
fn prompts_that_share_a_preamble_are_quoted_from_where_they_differ() {
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null; printf '{\"score\": 1}'\n");
    let preamble = "You are a careful assistant. Read the question and think about the country";
    let out = sb
        .evalctl()
        .args(["run", "--format", "text", "--skip-preflight", "-j", "1"])
        .args(["--evaluator-command", "sh eval.sh"])
        .arg("--candidate")
        .arg(format!(
            "{preamble} it names, then answer with its capital."
        ))
        .arg("--candidate")
        .arg(format!("{preamble} it names, then answer in one word."))
        .arg("--candidate")
        .arg(preamble)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    let quoted: Vec<String> = stdout_text(&out)
        .lines()
        .filter(|line| line.contains(" = "))
        .map(str::to_string)
        .collect();
    assert_eq!(
        quoted,
        [
            "cand-1 = …\"names, then answer with its capital.\"",
            "cand-2 = …\"names, then answer in one word.\"",
            "cand-3 = …\"about the country\"",
        ]
    );
}

#[test]
fn inline_candidates_are_quoted_under_the_table_cut_and_escaped() {
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null; printf '{\"score\": 1}'\n");
    let long = "Name the capital city of the country the question asks about, and nothing else.";
    let run = |format: &str| {
        let out = sb
            .evalctl()
            .args(["run", "--format", format, "--skip-preflight", "-j", "1"])
            .args(["--evaluator-command", "sh eval.sh"])
            .args([
                "--candidate",
                long,
                "--candidate",
                "line one\n\u{1b}[2J*two*",
            ])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr_text(&out));
        out
    };
    assert_eq!(
        mask_elapsed(&stdout_text(&run("text"))),
        "evaluator: command sh eval.sh   score range: unit
calls: 2 (2 ok, 0 errors)   elapsed: [..]s

candidate  score   n / errors
cand-1     1.0000  1 / 0
cand-2     1.0000  1 / 0

cand-1 = \"Name the capital city of the country the question asks about\"…
cand-2 = \"line one\\n\\u{1b}[2J*two*\"

best: none, both rows score 1.0000

exit 0: all 2 calls succeeded
"
    );
    let markdown = stdout_text(&run("markdown"));
    let quoted: Vec<&str> = markdown
        .lines()
        .filter(|line| line.starts_with("cand-"))
        .collect();
    assert_eq!(
        quoted,
        [
            "cand-1 = \"Name the capital city of the country the question asks about\"…  ",
            "cand-2 = \"line one\\\\n\\\\u{1b}\\[2J\\*two\\*\"",
        ]
    );
    // The JSON summary is unchanged: the caller has the texts it gave.
    let summary: serde_json::Value = serde_json::from_slice(&run("json").stdout).unwrap();
    assert_eq!(summary["candidates"][0].get("text"), None);
    assert_eq!(summary.get("numbered_texts"), None);
}

#[test]
fn candidates_file_lines_without_an_id_are_quoted_and_named_ones_are_not() {
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null; printf '{\"score\": 1}'\n");
    sb.write(
        "candidates.jsonl",
        "{\"candidate\": \"Answer briefly.\"}\n\
         {\"candidate\": \"Think step by step.\", \"id\": \"cot\"}\n\
         {\"candidate\": \"Name the capital only.\"}\n",
    );
    let out = sb
        .evalctl()
        .args(["run", "--format", "text", "--skip-preflight", "-j", "1"])
        .args(["--evaluator-command", "sh eval.sh"])
        .args(["--candidates", "candidates.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        mask_elapsed(&stdout_text(&out)),
        "evaluator: command sh eval.sh   score range: unit
calls: 3 (3 ok, 0 errors)   elapsed: [..]s

candidate  score   n / errors
line-1     1.0000  1 / 0
cot        1.0000  1 / 0
line-3     1.0000  1 / 0

line-1 = \"Answer briefly.\"
line-3 = \"Name the capital only.\"

best: none, all 3 rows score 1.0000

exit 0: all 3 calls succeeded
"
    );
}

#[test]
fn a_line_break_in_a_candidate_file_name_stays_in_its_row() {
    // A file name that would forge a second row, claiming weak.txt scored 1.
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null; printf '{\"score\": 0}'\n");
    let forged = "strong.txt\nweak.txt  1.0000  1 / 0";
    sb.write(forged, "strong");
    sb.write("weak.txt", "weak");
    let out = sb
        .evalctl()
        .args(["run", "--format", "text", "--skip-preflight", "-j", "1"])
        .args(["--evaluator-command", "sh eval.sh"])
        .args(["weak.txt", forged])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        mask_elapsed(&stdout_text(&out)),
        "evaluator: command sh eval.sh   score range: unit
calls: 2 (2 ok, 0 errors)   elapsed: [..]s

candidate                             score   n / errors
weak.txt                              0.0000  1 / 0
strong.txt ⏎ weak.txt  1.0000  1 / 0  0.0000  1 / 0

best: none, both rows score 0.0000

exit 0: all 2 calls succeeded
"
    );
}

#[test]
fn every_text_document_paints_its_table_header_as_run_does() {
    let out = evalctl()
        .args([
            "--color",
            "always",
            "tasks",
            "score",
            "fixtures/tasks/tasks.jsonl",
        ])
        .args([
            "--outputs",
            "fixtures/tasks/outputs.jsonl",
            "--format",
            "text",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    let stdout = stdout_text(&out);
    let head: Vec<&str> = stdout.lines().take(4).collect();
    assert_eq!(
        head,
        [
            "tasks fixtures/tasks/tasks.jsonl scored against outputs fixtures/tasks/outputs.jsonl",
            "",
            "\u{1b}[1m                    tasks  scored  missing     mean   stderr\u{1b}[0m",
            "  all                  10      10        0   0.7585   0.1011",
        ]
    );
}

#[test]
fn on_a_terminal_the_summary_is_text_with_a_progress_display() {
    // `script` gives evalctl a pseudo-terminal for stdout and stderr.
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null\necho '{\"score\": 1}'\n");
    sb.write("d.jsonl", "{\"n\": 1}\n{\"n\": 2}\n");
    let command = format!(
        "{} run -j 1 --dataset d.jsonl --evaluator-command 'sh eval.sh' --candidate c",
        common::bin()
    );
    let out = common::on_a_terminal(sb.path(), &command)
        .output()
        .expect("script (util-linux) runs");
    assert_eq!(code(&out), 0, "{}", stdout_text(&out));
    let screen = stdout_text(&out);
    // The progress display redraws as many times as timing allows: it is checked by a fragment.
    // What follows its last erase (ESC [2K) is the whole text summary.
    let (progress, summary) = screen
        .rsplit_once("\u{1b}[2K")
        .unwrap_or_else(|| panic!("no progress display: {screen:?}"));
    assert!(
        progress.contains("/2 calls"),
        "progress display: {screen:?}"
    );
    assert_eq!(
        mask_elapsed(&summary.replace("\r\n", "\n")),
        "evaluator: command sh eval.sh   score range: unit
calls: 2 (2 ok, 0 errors)   elapsed: [..]s

candidate  score            train mean       n / errors
cand-1     1.0000 ± 0.0000  1.0000 ± 0.0000  2 / 0

score = the candidate's train mean; failed calls count as 0
± = half-width of the 95% bootstrap interval over examples (--seed)

exit 0: all 2 calls succeeded
"
    );
}

#[test]
fn on_a_terminal_a_failed_gate_is_said_once_at_the_end_of_the_summary() {
    // stdout and stderr on one screen: the text summary ends with the exit line, which stderr
    // repeats only for a log whose stdout went elsewhere.
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null\necho '{\"score\": 0.5}'\n");
    sb.write("d.jsonl", "{\"n\": 1}\n");
    let command = format!(
        "{} run --dataset d.jsonl --evaluator-command 'sh eval.sh' --candidate c --fail-under 0.9",
        common::bin()
    );
    let out = common::on_a_terminal(sb.path(), &command)
        .output()
        .expect("script (util-linux) runs");
    assert_eq!(code(&out), 1, "{}", stdout_text(&out));
    let screen = stdout_text(&out).replace("\r\n", "\n");
    let summary = screen
        .rsplit_once("\u{1b}[2K")
        .map_or(screen.as_str(), |(_, summary)| summary);
    assert_eq!(
        mask_elapsed(summary),
        "evaluator: command sh eval.sh   score range: unit
calls: 1 (1 ok, 0 errors)   elapsed: [..]s

candidate  score   train mean  n / errors
cand-1     0.5000  0.5000      1 / 0

score = the candidate's train mean; failed calls count as 0

exit 1: the call succeeded; candidate cand-1 scored 0.5000, below --fail-under 0.9
"
    );
}

#[test]
fn on_a_dumb_terminal_progress_is_heartbeat_lines_without_escape_sequences() {
    // What evalctl writes to its pseudo-terminal reaches `screen` as it comes: the evaluator
    // answers once a heartbeat line is there (or gives up after about 30 s).
    let sb = Sandbox::new();
    sb.write(
        "eval.sh",
        "cat >/dev/null\ni=0\n\
         until grep -q 'progress: ' screen || [ $i -ge 600 ]; do sleep 0.05; i=$((i+1)); done\n\
         echo '{\"score\": 1}'\n",
    );
    sb.write("d.jsonl", "{\"n\": 1}\n");
    let command = format!(
        "{} run --heartbeat 0.1 --dataset d.jsonl --evaluator-command 'sh eval.sh' --candidate c",
        common::bin()
    );
    let out = common::on_a_terminal(sb.path(), &command)
        .env("TERM", "dumb")
        .output()
        .expect("script (util-linux) runs");
    assert_eq!(code(&out), 0, "{}", stdout_text(&out));
    let screen = stdout_text(&out).replace("\r\n", "\n");
    assert!(!screen.contains('\u{1b}'), "an escape sequence: {screen:?}");
    // As many heartbeats as timing allows, each a line of its own, then the text summary.
    let (beats, summary) = screen
        .split_once("evaluator: ")
        .unwrap_or_else(|| panic!("no summary: {screen:?}"));
    let beats: Vec<String> = beats
        .lines()
        .map(|line| {
            let masked = line.replacen(|c: char| c.is_ascii_digit(), "N", 1);
            masked
                .split_once(" calls, elapsed ")
                .map_or(masked.clone(), |(head, tail)| {
                    let rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
                    format!("{head} calls, elapsed [..]{rest}")
                })
        })
        .collect();
    assert!(!beats.is_empty(), "no heartbeat: {screen:?}");
    for beat in &beats {
        assert!(
            beat == "progress: N/1 calls, elapsed [..]s, 1 in flight, 0 errors"
                || beat == "progress: N/1 calls, elapsed [..]s, 0 in flight, 0 errors; mean cand-1 1.000",
            "heartbeat line: {beat:?} in {screen:?}"
        );
    }
    assert_eq!(
        mask_elapsed(&format!("evaluator: {summary}")),
        "evaluator: command sh eval.sh   score range: unit
calls: 1 (1 ok, 0 errors)   elapsed: [..]s

candidate  score   train mean  n / errors
cand-1     1.0000  1.0000      1 / 0

score = the candidate's train mean; failed calls count as 0

exit 0: the call succeeded
"
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
            "error: --judge-model: needs --objective TEXT: what the judge scores candidates against",
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
            assert_eq!(
                stderr_text(&out),
                format!("{message}\n"),
                "{command} {args:?}"
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
    assert_eq!(stderr_text(&out), "error: --evaluator-command: \"sh 'eval.sh\": cannot split into words: missing closing quote\n");
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
    assert_eq!(stderr_text(&out), "error: d.jsonl:1: expected a JSON object, found array
error: checks.json: checks[0].type: unknown check type `fuzzy` (did you mean `spec.fuzzy_match`? known: exact_match, contains, regex, threshold, semantic_similarity, llm_judge; spec.TYPE runs an evaluation-spec validator; a custom type is declared in `custom_checks` or with --custom-check)
");
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
    assert_eq!(stderr_text(&out), "error: unexpected argument '-u' found

Usage: evalctl run [OPTIONS] [CANDIDATE_FILE]...

For more information, try '--help'.
hint: evaluator arguments that start with '-' go inside one quoted string: --evaluator-command \"python3 -u eval.py\"
");
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
            "--lenient",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(stderr_text(&out), "error: unexpected argument '--lenient' found

Usage: evalctl run --candidate <TEXT> --evaluator-command <CMD>... [CANDIDATE_FILE]...

For more information, try '--help'.
hint: evaluator arguments that start with '-' go inside one quoted string: --evaluator-command \"python3 eval.py --lenient\"
");
}

#[test]
fn the_hinted_command_is_quoted_for_the_shell_and_runs_as_copied() {
    let sb = Sandbox::new();
    let script = r#"cat >/dev/null; echo "{\"score\": 1}""#;
    let out = sb
        .evalctl()
        .args(["run", "--candidate", "c", "--evaluator-command", "sh", "-c"])
        .arg(script)
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    let hinted = r#"'sh -c '\''cat >/dev/null; echo "{\"score\": 1}"'\'''"#;
    assert_eq!(
        stderr_text(&out).lines().last(),
        Some(
            format!(
                "hint: evaluator arguments that start with '-' go inside one quoted string: \
                 --evaluator-command {hinted}"
            )
            .as_str()
        )
    );
    // A first value that is itself a quoted command keeps its words (and a candidate file after
    // it stays out of the command).
    let quoted = sb
        .evalctl()
        .args([
            "run",
            "--candidate",
            "c",
            "--evaluator-command",
            "python3 eval.py",
        ])
        .args(["prompt.txt", "--lenient"])
        .output()
        .unwrap();
    assert_eq!(
        stderr_text(&quoted).lines().last(),
        Some(
            "hint: evaluator arguments that start with '-' go inside one quoted string: \
             --evaluator-command \"python3 eval.py --lenient\""
        )
    );
    // The hint, pasted into a shell, is the command that was meant.
    let pasted = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "\"$EVALCTL\" run --format json --candidate c --evaluator-command {hinted}"
        ))
        .env("EVALCTL", crate::common::binary::bin())
        .current_dir(sb.path())
        .output()
        .unwrap();
    assert_eq!(code(&pasted), 0, "{}", stderr_text(&pasted));
    assert_eq!(
        crate::common::json_stdout(&pasted)["candidates"][0]["score"],
        1.0
    );
}

#[test]
fn an_evaluator_argument_like_a_flag_of_evalctl_gets_clap_s_tip_instead() {
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
    // clap finds `--price` similar to `--strict`: a flag of evalctl that may be meant, so its
    // tip is shown as for any typo of a flag, without the evaluator hint.
    assert_eq!(stderr_text(&out), "error: unexpected argument '--strict' found

  tip: a similar argument exists: '--price'

Usage: evalctl run --candidate <TEXT> --evaluator-command <CMD>... --price <MODEL=IN,OUT> [CANDIDATE_FILE]...

For more information, try '--help'.
");
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
    assert_eq!(
        stderr_text(&out),
        "error: the argument '--evaluator-command <CMD>...' cannot be used multiple times

Usage: evalctl run [OPTIONS] [CANDIDATE_FILE]...

For more information, try '--help'.
"
    );
}
