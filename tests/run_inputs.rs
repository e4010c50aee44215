//! Inputs of `evalctl run`: where candidates come from and which ids they get, the JSONL loader's
//! one-pass error report (dataset, valset, candidates file), and usage errors. Every input
//! problem exits 2 before any evaluator call — asserted through a marker file the evaluator would
//! create.

use crate::common::{code, json_stdout, stderr_text, succeeded, Sandbox, LOG_PAYLOAD};
use serde_json::{json, Value};

/// An evaluator that leaves `called` behind and logs its payload.
const MARKING: &str =
    "touch called\np=$(cat)\nprintf '%s\\n' \"$p\" >> payloads.log\nprintf '{\"score\": 1}'\n";

fn ids(summary: &Value) -> Vec<String> {
    summary["candidates"]
        .as_array()
        .expect("candidates array")
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

/// The `candidate` of every logged payload, the preflight probe excluded.
fn logged_candidates(sb: &Sandbox) -> Vec<String> {
    sb.lines("payloads.log")
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .map(|p| p["candidate"].as_str().unwrap().to_string())
        .filter(|c| c != "__evalctl_preflight__")
        .collect()
}

/// Assert that stdout is the JSON failure document of a bad-input exit (2): its errors are the
/// stderr lines, in order, each without its `error: ` prefix.
fn assert_failure_document(out: &std::process::Output) {
    let stderr = stderr_text(out);
    let errors: Vec<&str> = stderr
        .lines()
        .map(|line| {
            line.strip_prefix("error: ")
                .unwrap_or_else(|| panic!("{line:?} lacks the error: prefix"))
        })
        .collect();
    assert_eq!(
        json_stdout(out),
        json!({"ok": false, "exit": 2, "errors": errors})
    );
}

// ----- candidates ------------------------------------------------------------------------------

#[test]
fn positional_files_are_candidates_with_their_path_as_id() {
    let sb = Sandbox::new();
    sb.write("a.txt", "first prompt\n");
    sb.write("sub/b.txt", "second\nprompt");
    let out = succeeded(
        sb.run_with(LOG_PAYLOAD)
            .args(["-j", "1", "a.txt", "sub/b.txt"]),
    );
    assert_eq!(ids(&json_stdout(&out)), ["a.txt", "sub/b.txt"]);
    assert_eq!(logged_candidates(&sb), ["first prompt\n", "second\nprompt"]);
}

#[test]
fn inline_candidates_are_numbered_cand_n() {
    let sb = Sandbox::new();
    let out = succeeded(sb.run_with(LOG_PAYLOAD).args([
        "-j",
        "1",
        "--candidate",
        "x",
        "--candidate",
        "y y",
    ]));
    assert_eq!(ids(&json_stdout(&out)), ["cand-1", "cand-2"]);
    assert_eq!(logged_candidates(&sb), ["x", "y y"]);
}

#[test]
fn candidates_file_ids_default_to_physical_line_numbers() {
    let sb = Sandbox::new();
    sb.write(
        "c.jsonl",
        "{\"candidate\": \"A\", \"id\": \"alpha\"}\n\n{\"candidate\": \"B\"}\n{\"id\": null, \"candidate\": \"C\"}\n",
    );
    let out = succeeded(
        sb.run_with(LOG_PAYLOAD)
            .args(["-j", "1", "--candidates", "c.jsonl"]),
    );
    assert_eq!(ids(&json_stdout(&out)), ["alpha", "line-3", "line-4"]);
    assert_eq!(logged_candidates(&sb), ["A", "B", "C"]);
}

#[test]
fn candidates_file_from_stdin() {
    let sb = Sandbox::new();
    let out = succeeded(
        sb.run_with(LOG_PAYLOAD)
            .args(["-j", "1", "--candidates", "-"])
            .write_stdin("{\"candidate\": \"one\"}\n{\"candidate\": \"two\", \"id\": \"t\"}\n"),
    );
    assert_eq!(ids(&json_stdout(&out)), ["line-1", "t"]);
    assert_eq!(logged_candidates(&sb), ["one", "two"]);
}

#[test]
fn bad_candidate_lines_are_all_reported_and_nothing_runs() {
    let sb = Sandbox::new();
    sb.write(
        "c.jsonl",
        "{\"candidate\": 1}\n[\"x\"]\n{\"id\": \"only-id\"}\n{\"candidate\": \"a\", \"id\": \"d\"}\n{\"candidate\": \"b\", \"id\": \"d\"}\n{\"candidate\": \"c\", \"id\": 7}\n{oops\n\
         {\"candidate\": \"e\", \"idd\": \"e\"}\n{\"candidate\": \"f\", \"source\": \"notes\"}\n\
         {\"candidate\": \"g\", \"id\": \"g\", \"uid\": \"7\"}\n{\"candidate\": \"h\", \"in\": 1}\n",
    );
    let out = sb
        .run_with(MARKING)
        .args(["--candidates", "c.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    // Every bad line, and line 4 (which is fine) not.
    assert_eq!(
        stderr_text(&out),
        "error: c.jsonl:1: candidate: expected a string, found number
error: c.jsonl:2: expected a JSON object, found array
error: c.jsonl:3: missing required key `candidate`
error: c.jsonl:5: duplicate candidate id \"d\" (first on line 4)
error: c.jsonl:6: id: expected a non-empty string without control characters, found number
error: c.jsonl:7: invalid JSON: key must be a string at column 2
error: c.jsonl:8: unknown key `idd` (did you mean `id`?)
"
    );
    // Lines 9 to 11 keep keys of their own (`source`, `uid` beside an `id`, `in`): only a typo of
    // `candidate` or `id` on a line without it is refused.
    assert!(!sb.exists("called"), "the evaluator must not be called");
    assert_failure_document(&out);
}

#[test]
fn piped_stdin_is_one_candidate_with_id_stdin() {
    let sb = Sandbox::new();
    let out = succeeded(
        sb.run_with(LOG_PAYLOAD)
            .write_stdin("piped text\nline two\n"),
    );
    assert_eq!(ids(&json_stdout(&out)), ["stdin"]);
    assert_eq!(logged_candidates(&sb), ["piped text\nline two\n"]);
}

#[test]
fn empty_stdin_is_an_error_that_says_what_to_do() {
    let sb = Sandbox::new();
    sb.write("prompt.txt", "a candidate");
    sb.write(
        "eval",
        "#!/bin/sh\ntouch called\ncat >/dev/null\necho '{\"score\": 1}'\n",
    );
    std::fs::set_permissions(
        sb.join("eval"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    // Nothing given and empty stdin; and the classic slip: a candidate file swallowed as an
    // argument of a non-interpreter evaluator command.
    let attempts: [&[&str]; 3] = [
        &["run", "--evaluator-command", "./eval"],
        &["run", "--evaluator-command", "./eval", "prompt.txt"],
        &["run", "--evaluator-command", "./eval", "-"],
    ];
    for args in attempts {
        let out = sb.evalctl().args(args).write_stdin("").output().unwrap();
        assert_eq!(code(&out), 2, "{args:?}");
        assert_eq!(
            stderr_text(&out),
            "error: <stdin>: no candidate: stdin is empty. Pass candidate files, --candidate TEXT or --candidates FILE.jsonl (values right after --evaluator-command belong to the evaluator: put candidate files before it, or quote the command)\n",
            "{args:?}"
        );
        assert!(!sb.exists("called"), "{args:?}: the evaluator ran");
    }
}

#[test]
fn empty_candidates_are_scored_with_a_warning() {
    let sb = Sandbox::new();
    sb.write("empty.txt", "");
    let out = succeeded(sb.run_with(LOG_PAYLOAD).arg("empty.txt"));
    assert_eq!(stderr_text(&out), "warning: candidate empty.txt is empty\n");
}

#[test]
fn positional_dash_reads_stdin() {
    let sb = Sandbox::new();
    let out = succeeded(sb.run_with(LOG_PAYLOAD).arg("-").write_stdin("dash text"));
    assert_eq!(ids(&json_stdout(&out)), ["stdin"]);
    assert_eq!(logged_candidates(&sb), ["dash text"]);
}

#[test]
fn multi_word_command_words_after_the_script_are_candidate_files() {
    let sb = Sandbox::new();
    sb.write("eval.sh", LOG_PAYLOAD);
    sb.write("prompt.txt", "from prompt.txt");
    sb.write("other.txt", "from other.txt");
    let out = succeeded(
        sb.evalctl()
            .args(["run", "--format", "json", "-j", "1"])
            .args(["--evaluator-command", "sh", "eval.sh", "prompt.txt"])
            .arg("other.txt"),
    );
    assert_eq!(ids(&json_stdout(&out)), ["prompt.txt", "other.txt"]);
    assert_eq!(
        logged_candidates(&sb),
        ["from prompt.txt", "from other.txt"]
    );
}

#[test]
fn candidate_kinds_conflict_with_exit_2() {
    let sb = Sandbox::new();
    sb.write("eval.sh", MARKING);
    sb.write("a.txt", "a");
    sb.write("c.jsonl", "{\"candidate\": \"c\"}\n");
    let cases: &[&[&str]] = &[
        &[
            "--evaluator-command",
            "sh eval.sh",
            "a.txt",
            "--candidate",
            "x",
        ],
        &[
            "--evaluator-command",
            "sh eval.sh",
            "--candidate",
            "x",
            "--candidates",
            "c.jsonl",
        ],
        &[
            "--evaluator-command",
            "sh eval.sh",
            "a.txt",
            "--candidates",
            "c.jsonl",
        ],
        &[
            "--evaluator-command",
            "sh",
            "eval.sh",
            "a.txt",
            "--candidate",
            "x",
        ],
        // Candidate files given through the multi-word command form must not be dropped silently.
        &[
            "--evaluator-command",
            "sh",
            "eval.sh",
            "a.txt",
            "--candidates",
            "c.jsonl",
        ],
    ];
    for args in cases {
        let out = sb.evalctl().arg("run").args(*args).output().unwrap();
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr_text(&out));
        assert!(!sb.exists("called"), "{args:?}: the evaluator ran");
    }
}

#[test]
fn unreadable_candidate_files_exit_2() {
    let sb = Sandbox::new();
    std::fs::create_dir(sb.join("adir")).unwrap();
    sb.write("bad.txt", b"ok\n\xff\xfe\n");
    let out = sb
        .run_with(MARKING)
        .args(["missing.txt", "adir", "bad.txt"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        "error: missing.txt: cannot read: No such file or directory
error: adir: is a directory, not a file
error: bad.txt:2: invalid UTF-8 (candidate text must be UTF-8)
"
    );
    assert!(!sb.exists("called"));
}

// ----- the JSONL loader ------------------------------------------------------------------------

#[test]
fn every_bad_line_of_dataset_and_valset_is_reported_in_one_pass() {
    let sb = Sandbox::new();
    sb.write(
        "d.jsonl",
        "{\"ok\": 1}\n\n[1, 2]\n{bad\n{\"ok\": 2}\n\"str\"\n{\"x\": \"\\ud800\"}\n",
    );
    sb.write(
        "v.jsonl",
        b"{}\n\xff\xfe{}\n{\"a\": }\n42\n\n\n{\"x\": null}\n",
    );
    let out = sb
        .run_with(MARKING)
        .args([
            "--candidate",
            "c",
            "--dataset",
            "d.jsonl",
            "--valset",
            "v.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        "error: d.jsonl:3: expected a JSON object, found array
error: d.jsonl:4: invalid JSON: key must be a string at column 2
error: d.jsonl:6: expected a JSON object, found string
error: d.jsonl:7: invalid JSON: a \\u escape of half a UTF-16 surrogate pair (\\uD800-\\uDFFF) without its other half: a string must hold Unicode characters at column 14
error: v.jsonl:2: invalid UTF-8 (bad byte at column 1)
error: v.jsonl:3: invalid JSON: expected value at column 7
error: v.jsonl:4: expected a JSON object, found number
"
    );
    assert!(!sb.exists("called"), "the evaluator must not be called");
    assert_failure_document(&out);
}

#[test]
fn candidates_file_and_dataset_problems_are_reported_together() {
    let sb = Sandbox::new();
    sb.write("c.jsonl", "{\"candidate\": \"ok\"}\nnope\n");
    sb.write("d.jsonl", "{}\n[]\n");
    let out = sb
        .run_with(MARKING)
        .args(["--candidates", "c.jsonl", "--dataset", "d.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        "error: c.jsonl:2: invalid JSON: expected ident at column 2
error: d.jsonl:2: expected a JSON object, found array
"
    );
    assert!(!sb.exists("called"));
}

#[test]
fn bom_crlf_and_blank_lines_are_accepted_with_physical_line_numbers() {
    let sb = Sandbox::new();
    sb.write(
        "d.jsonl",
        b"\xEF\xBB\xBF{\"n\": 1}\r\n\r\n   \n{\"n\": 2}\r\n",
    );
    let out = succeeded(
        sb.run_with(LOG_PAYLOAD)
            .args(["-j", "1", "--candidate", "c", "--dataset", "d.jsonl"])
            .args(["--output", "out.jsonl"]),
    );
    let results = sb.jsonl("out.jsonl");
    let lines: Vec<&Value> = results.iter().map(|r| &r["example_line"]).collect();
    assert_eq!(lines, [&json!(1), &json!(4)]);
    let payloads = sb.lines("payloads.log");
    assert_eq!(
        payloads[1],
        r#"{"_protocol_version":2,"candidate":"c","example":{"n": 1}}"#
    );
    assert_eq!(json_stdout(&out)["candidates"][0]["train"]["n"], 2);
}

#[test]
fn missing_file_and_directory_each_get_one_line() {
    let sb = Sandbox::new();
    std::fs::create_dir(sb.join("vdir")).unwrap();
    let out = sb
        .run_with(MARKING)
        .args([
            "--candidate",
            "c",
            "--dataset",
            "nope.jsonl",
            "--valset",
            "vdir",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        "error: nope.jsonl: cannot read: No such file or directory
error: vdir: is a directory, not a file
"
    );
    assert!(!sb.exists("called"));
}

#[test]
fn one_bad_file_as_dataset_and_valset_has_its_problems_said_once() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{}\nbad\n");
    // Named the same way, or two ways: the problems are said under --dataset's name.
    for valset in ["d.jsonl", "./d.jsonl"] {
        let out = sb
            .run_with(MARKING)
            .args([
                "--candidate",
                "c",
                "--dataset",
                "d.jsonl",
                "--valset",
                valset,
            ])
            .output()
            .unwrap();
        assert_eq!(
            (code(&out), stderr_text(&out)),
            (
                2,
                "error: d.jsonl:2: invalid JSON: expected value at column 1\n".to_string()
            ),
            "{valset}"
        );
    }
    assert!(!sb.exists("called"));
}

#[test]
fn a_record_or_candidate_that_gives_a_key_twice_is_refused_naming_it() {
    // Which `id` (or text) counts would be the JSON reader's choice.
    let sb = Sandbox::new();
    sb.write(
        "d.jsonl",
        "{\"id\": \"a\"}\n{\"id\": \"b\", \"x\": {\"id\": 1}, \"id\": \"c\"}\n",
    );
    sb.write("c.jsonl", "{\"candidate\": \"p\", \"candidate\": \"q\"}\n");
    let out = sb
        .run_with(MARKING)
        .args(["--candidates", "c.jsonl", "--dataset", "d.jsonl"])
        .output()
        .unwrap();
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            2,
            "error: c.jsonl:1: the key `candidate` is given twice in one object (the second by \
             column 30): keep one\n\
             error: d.jsonl:2: the key `id` is given twice in one object (the second by column \
             32): keep one\n"
                .to_string()
        )
    );
    assert!(!sb.exists("called"));
}

#[test]
fn empty_files_have_no_records() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "");
    sb.write("v.jsonl", "\n  \n\n");
    let out = sb
        .run_with(MARKING)
        .args([
            "--candidate",
            "c",
            "--dataset",
            "d.jsonl",
            "--valset",
            "v.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out).lines().collect::<Vec<_>>(),
        ["error: d.jsonl: no records", "error: v.jsonl: no records"]
    );
    assert!(!sb.exists("called"));
}

#[test]
fn more_than_10000_records_is_an_error_blank_lines_do_not_count() {
    let sb = Sandbox::new();
    sb.write("big.jsonl", "{}\n".repeat(10_001));
    sb.write("ok.jsonl", "{}\n\n".repeat(10_000));
    let out = sb
        .run_with(MARKING)
        .args(["--candidate", "c", "--dataset", "big.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out).trim_end(),
        "error: big.jsonl: too many records: 10001 (maximum 10000)"
    );
    assert!(!sb.exists("called"));

    // Exactly 10,000 records (with as many blank lines) is fine: preflight validates it.
    let out = succeeded(
        sb.evalctl()
            .args([
                "preflight",
                "--format",
                "json",
                "--evaluator-command",
                "sh eval.sh",
            ])
            .args(["--candidate", "c", "--dataset", "ok.jsonl"]),
    );
    assert_eq!(json_stdout(&out)["dataset_records"], 10_000);
}

// ----- usage ------------------------------------------------------------------------------------

#[test]
fn usage_errors_exit_2_without_calling_the_evaluator() {
    let sb = Sandbox::new();
    sb.write("eval.sh", MARKING);
    sb.write("d.jsonl", "{}\n");
    let cases: &[&[&str]] = &[
        // valset requires a dataset
        &[
            "--evaluator-command",
            "sh eval.sh",
            "--candidate",
            "c",
            "--valset",
            "d.jsonl",
        ],
        // no evaluator
        &["--candidate", "c"],
        // two evaluators
        &[
            "--evaluator-command",
            "sh eval.sh",
            "--evaluator-url",
            "http://127.0.0.1:9/",
            "--candidate",
            "c",
        ],
        // unknown flag
        &[
            "--evaluator-command",
            "sh eval.sh",
            "--candidate",
            "c",
            "--no-such-flag",
        ],
        // bad numbers
        &[
            "--evaluator-command",
            "sh eval.sh",
            "--candidate",
            "c",
            "--timeout",
            "0",
        ],
        &[
            "--evaluator-command",
            "sh eval.sh",
            "--candidate",
            "c",
            "--timeout",
            "soon",
        ],
        &[
            "--evaluator-command",
            "sh eval.sh",
            "--candidate",
            "c",
            "-j",
            "0",
        ],
        &[
            "--evaluator-command",
            "sh eval.sh",
            "--candidate",
            "c",
            "--fail-under",
            "NaN",
        ],
        &[
            "--evaluator-command",
            "sh eval.sh",
            "--candidate",
            "c",
            "--score-range",
            "percent",
        ],
        // an unsplittable single-string command
        &["--evaluator-command", "sh 'eval.sh", "--candidate", "c"],
        // a malformed URL and a malformed header
        &["--evaluator-url", "not a url", "--candidate", "c"],
        &[
            "--evaluator-url",
            "http://127.0.0.1:9/",
            "--header",
            "NoColonHere",
            "--candidate",
            "c",
        ],
    ];
    for args in cases {
        for command in ["run", "preflight"] {
            let out = sb.evalctl().arg(command).args(*args).output().unwrap();
            assert_eq!(code(&out), 2, "{command} {args:?}: {}", stderr_text(&out));
            assert!(!stderr_text(&out).is_empty(), "{command} {args:?}: silent");
        }
    }
    assert!(!sb.exists("called"));
}

#[test]
fn a_candidate_file_given_twice_is_rejected() {
    // Ids are paths: the same path twice would merge both candidates' aggregates.
    let sb = Sandbox::new();
    sb.write("a.txt", "a");
    let out = sb
        .run_with(MARKING)
        .args(["a.txt", "a.txt"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out),
        "error: a.txt: candidate given twice (candidate ids must be unique)\n"
    );
    assert!(!sb.exists("called"));
}

#[test]
fn two_candidates_with_one_text_are_rejected_in_every_form() {
    // They would make the same calls, and their results would share keys: a results file could
    // not tell them apart (summarize would find half the calls absent).
    let sb = Sandbox::new();
    sb.write("base.txt", "Answer briefly.");
    sb.write("copy.txt", "Answer briefly.");
    sb.write(
        "c.jsonl",
        "{\"candidate\": \"p\", \"id\": \"baseline\"}\n{\"candidate\": \"q\"}\n\
         {\"candidate\": \"p\", \"id\": \"b\"}\n",
    );
    let cases: [(&[&str], &str); 3] = [
        (
            &["base.txt", "copy.txt"],
            "error: copy.txt: it has the same text as base.txt: a run scores each text once \
             (--repeat N scores every text N times)\n",
        ),
        (
            &["--candidate", "x", "--candidate", "y", "--candidate", "x"],
            "error: --candidate: cand-3 has the same text as cand-1: a run scores each text \
             once (--repeat N scores every text N times)\n",
        ),
        (
            &["--candidates", "c.jsonl"],
            "error: c.jsonl:3: candidate \"b\" has the same text as line 1's: a run scores each \
             text once (--repeat N scores every text N times)\n",
        ),
    ];
    for (args, expected) in cases {
        let out = sb.run_with(MARKING).args(args).output().unwrap();
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr_text(&out));
        assert_eq!(stderr_text(&out), expected, "{args:?}");
    }
    assert!(!sb.exists("called"));
}

#[test]
fn stdin_datasets_pretty_printed_json_and_bad_ids_are_explained() {
    let sb = Sandbox::new();
    sb.write("pretty.json", "[\n  {\"a\": 1},\n  {\"a\": 2}\n]\n");
    sb.write(
        "cands.jsonl",
        "{\"candidate\": \"x\", \"id\": \"\"}\n{\"candidate\": \"y\", \"id\": \"a\\u001b[31mb\"}\n",
    );
    let out = sb
        .run_with(MARKING)
        .args([
            "--candidates",
            "cands.jsonl",
            "--dataset",
            "pretty.json",
            "--valset",
            "-",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    // The escape code is shown escaped: none reaches the terminal.
    assert_eq!(stderr_text(&out), "error: cands.jsonl:1: id: expected a non-empty string without control characters, found \"\"
error: cands.jsonl:2: id: expected a non-empty string without control characters, found \"a\\u{1b}[31mb\"
error: pretty.json:1: invalid JSON: EOF while parsing a list at column 1
error: pretty.json:2: invalid JSON: trailing characters at column 11
error: pretty.json:4: invalid JSON: expected value at column 1
error: pretty.json: this looks like a pretty-printed JSON document; JSONL needs one JSON object per line (e.g. jq -c '.[]' pretty.json)
error: --valset: '-' is not a file: a split is read from a file, not stdin (candidates can come from stdin)
");
    assert!(!sb.exists("called"));
}

#[test]
fn candidates_file_problems_come_in_line_order() {
    let sb = Sandbox::new();
    sb.write(
        "c.jsonl",
        "{\"id\": \"a\"}\n{bad\n{\"candidate\": \"x\", \"id\": 3}\n[1]\n{\"candidate\": \"y\", \"id\": \"a\"}\n{\"candidate\": \"z\", \"id\": \"a\"}\n",
    );
    let out = sb
        .run_with(MARKING)
        .args(["--candidates", "c.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        "error: c.jsonl:1: missing required key `candidate`
error: c.jsonl:2: invalid JSON: key must be a string at column 2
error: c.jsonl:3: id: expected a non-empty string without control characters, found number
error: c.jsonl:4: expected a JSON object, found array
error: c.jsonl:6: duplicate candidate id \"a\" (first on line 5)
"
    );
    assert!(!sb.exists("called"));
}

#[test]
fn stdin_given_twice_is_reported_once_as_a_duplicate() {
    let sb = Sandbox::new();
    let out = sb
        .run_with(MARKING)
        .args(["-", "-"])
        .write_stdin("hi")
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    let stderr = stderr_text(&out);
    assert_eq!(
        stderr.trim(),
        "error: -: candidate given twice (candidate ids must be unique)"
    );
    assert!(!sb.exists("called"));
}

#[test]
fn no_evaluator_and_missing_input_files_are_reported_together() {
    let sb = Sandbox::new();
    let out = sb
        .evalctl()
        .args(["run", "--no-config", "--format", "text"])
        .args(["--dataset", "nope.jsonl", "--valset", "-", "missing.txt"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        "error: run: no evaluator: pass one of --evaluator-command, --evaluator-url, \
         --judge-model, --checks or --spec, or set one in the [evaluator] section of \
         evalctl.toml (evalctl init writes a starter)\n\
         error: nope.jsonl: cannot read: No such file or directory\n\
         error: missing.txt: cannot read: No such file or directory\n"
    );
    // `preflight` says so under its own name.
    let out = sb
        .evalctl()
        .args(["preflight", "--no-config", "--format", "text"])
        .output()
        .unwrap();
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            2,
            "error: preflight: no evaluator: pass one of --evaluator-command, --evaluator-url, \
             --judge-model, --checks or --spec, or set one in the [evaluator] section of \
             evalctl.toml (evalctl init writes a starter)\n"
                .to_string()
        )
    );
}

#[test]
fn an_input_read_from_a_file_only_says_so_for_a_dash() {
    let sb = Sandbox::new();
    for args in [
        &["tasks", "validate", "-"][..],
        &["run", "--no-config", "--candidate", "x", "--checks", "-"],
    ] {
        let out = sb
            .evalctl()
            .args(args)
            .args(["--format", "text"])
            .write_stdin("{}\n")
            .output()
            .unwrap();
        assert_eq!(
            (code(&out), stderr_text(&out)),
            (
                2,
                "error: -: this input is read from a file, not stdin: name the file\n".to_string()
            ),
            "{args:?}"
        );
    }
}
