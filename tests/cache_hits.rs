//! `run --cache` through the binary, with an evaluator that records its calls: a hit makes no
//! call and is marked `cached`, an edited script misses, errors are never cached, and
//! `evalctl cache stats|clear` count what is stored.

use crate::common;

use crate::common::{json_stdout, mask_elapsed, succeeded, Sandbox};

/// Records each call in `calls.log`; scores 0.5, or fails on the candidate `bad`.
const RECORDING: &str = "p=$(cat)\necho call >> calls.log\ncase \"$p\" in *'\"bad\"'*) exit 3;; esac\nprintf '{\"score\": 0.5, \"why\": \"v1\"}'\n";

fn run(sb: &Sandbox, output: &str) -> std::process::Output {
    sb.evalctl()
        .args(["run", "--format", "json", "--skip-preflight"])
        .args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"])
        .args(["--candidate", "good", "--candidate", "bad"])
        .args(["--cache", "--cache-dir", "cache", "--output", output])
        .output()
        .expect("evalctl runs")
}

fn calls(sb: &Sandbox) -> usize {
    sb.lines("calls.log").len()
}

#[test]
fn a_hit_makes_no_call_errors_are_not_cached_and_an_edited_script_misses() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"q\": 1}\n{\"q\": 2}\n{\"q\": 3}\n");
    sb.write("eval.sh", RECORDING);
    let first = run(&sb, "first.jsonl");
    assert_eq!(json_stdout(&first)["calls"]["errors"], 3);
    assert_eq!(calls(&sb), 6);

    // The three good calls come from the cache; the three errors are made again.
    let second = run(&sb, "second.jsonl");
    assert_eq!(calls(&sb), 9);
    let lines = sb.jsonl("second.jsonl");
    let cached: Vec<_> = lines.iter().filter(|line| line["cached"] == true).collect();
    assert_eq!(cached.len(), 3);
    for line in &cached {
        assert_eq!(line["candidate_id"], "cand-1");
        assert_eq!(line["score"], 0.5);
        assert_eq!(line["side_info"]["why"], "v1");
        assert_eq!(line["attempts"], 0);
    }
    assert!(lines
        .iter()
        .filter(|line| line["cached"] != true)
        .all(|line| !line["error"].is_null()));
    assert_eq!(
        json_stdout(&second)["candidates"],
        json_stdout(&first)["candidates"]
    );

    let stats = succeeded(
        sb.evalctl()
            .args(["cache", "stats", "--cache-dir", "cache"]),
    );
    assert_eq!(json_stdout(&stats)["entries"], 3);

    // An edited script is another evaluator: every call is made.
    sb.write("eval.sh", RECORDING.replace("v1", "v2"));
    run(&sb, "third.jsonl");
    assert_eq!(calls(&sb), 15);
    assert!(sb
        .jsonl("third.jsonl")
        .iter()
        .all(|line| line["cached"].is_null()));

    let cleared = succeeded(
        sb.evalctl()
            .args(["cache", "clear", "--cache-dir", "cache"]),
    );
    assert_eq!(json_stdout(&cleared)["removed"], 6);
    let stats = succeeded(
        sb.evalctl()
            .args(["cache", "stats", "--cache-dir", "cache"]),
    );
    assert_eq!(json_stdout(&stats)["entries"], 0);
}

#[test]
fn several_processes_share_one_cache() {
    let sb = Sandbox::new();
    let dataset: String = (0..40).map(|i| format!("{{\"q\": {i}}}\n")).collect();
    sb.write("d.jsonl", dataset);
    sb.write("eval.sh", RECORDING);
    let runs: Vec<_> = (0..3)
        .map(|index| {
            common::evalctl_process()
                .current_dir(sb.path())
                .args(["run", "--format", "json", "--skip-preflight", "-j", "4"])
                .args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"])
                .args(["--candidate", "good", "--cache", "--cache-dir", "cache"])
                .args(["--output", &format!("run-{index}.jsonl")])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start evalctl")
        })
        .collect();
    for child in runs {
        let output = child.wait_with_output().expect("evalctl ends");
        assert!(output.status.success(), "{}", common::stderr_text(&output));
    }
    let stats = succeeded(
        sb.evalctl()
            .args(["cache", "stats", "--cache-dir", "cache"]),
    );
    assert_eq!(json_stdout(&stats)["entries"], 40);
    for index in 0..3 {
        let lines = sb.jsonl(&format!("run-{index}.jsonl"));
        assert_eq!(lines.len(), 40);
        assert!(lines.iter().all(|line| line["error"].is_null()));
    }
}

/// Scores 0.5 and reports the tokens a model call would have used.
const WITH_USAGE: &str = "cat >/dev/null\necho call >> calls.log\nprintf '{\"score\": 0.5, \"usage\": {\"prompt_tokens\": 10, \"completion_tokens\": 2}}'\n";

fn usage_run(sb: &Sandbox, format: &str, extra: &[&str]) -> std::process::Output {
    let output = sb
        .evalctl()
        .args([
            "run",
            "--format",
            format,
            "--skip-preflight",
            "--candidate",
            "c",
        ])
        .args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"])
        .args(["--cache", "--cache-dir", "cache"])
        .args(extra)
        .output()
        .expect("evalctl runs");
    assert_eq!(common::code(&output), 0, "{}", common::stderr_text(&output));
    output
}

#[test]
fn every_summary_counts_cached_calls_and_their_tokens_as_saved() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"q\": 1}\n{\"q\": 2}\n");
    sb.write("eval.sh", WITH_USAGE);
    let fresh = usage_run(&sb, "text", &[]);
    assert_eq!(
        mask_elapsed(&common::stdout_text(&fresh)),
        "evaluator: command sh eval.sh   score range: unit\n\
         calls: 2 (2 ok, 0 errors)   elapsed: [..]s\n\
         tokens: 20 prompt, 4 completion\n\
         \n\
         candidate  score            train mean       n / errors\n\
         cand-1     0.5000 ± 0.0000  0.5000 ± 0.0000  2 / 0\n\
         \n\
         score = the candidate's train mean; failed calls count as 0\n\
         ± = half-width of the 95% bootstrap interval over examples (--seed)\n\
         \n\
         exit 0: all 2 calls succeeded\n"
    );

    // A fully cached run spends nothing: its tokens are shown as saved.
    let cached = usage_run(&sb, "text", &[]);
    assert_eq!(sb.lines("calls.log").len(), 2);
    assert_eq!(
        mask_elapsed(&common::stdout_text(&cached)),
        "evaluator: command sh eval.sh   score range: unit\n\
         calls: 2 (2 ok, 0 errors, 2 from the cache)   elapsed: [..]s\n\
         tokens: 0 prompt, 0 completion (saved by the cache: 20 prompt, 4 completion)\n\
         \n\
         candidate  score            train mean       n / errors\n\
         cand-1     0.5000 ± 0.0000  0.5000 ± 0.0000  2 / 0\n\
         \n\
         score = the candidate's train mean; failed calls count as 0\n\
         ± = half-width of the 95% bootstrap interval over examples (--seed)\n\
         \n\
         exit 0: all 2 calls succeeded\n"
    );
    // The JSON says so too: none spent, all saved.
    let json = json_stdout(&usage_run(&sb, "json", &[]));
    assert_eq!(
        (&json["usage"], &json["usage_saved"]),
        (
            &serde_json::json!({"prompt_tokens": 0, "completion_tokens": 0}),
            &serde_json::json!({"prompt_tokens": 20, "completion_tokens": 4})
        )
    );

    // One example more: one call made, two answered by the cache.
    sb.write("d.jsonl", "{\"q\": 1}\n{\"q\": 2}\n{\"q\": 3}\n");
    let json = json_stdout(&usage_run(&sb, "json", &[]));
    assert_eq!(
        json["calls"],
        serde_json::json!({"total": 3, "ok": 3, "errors": 0, "cached": 2})
    );
    assert_eq!(
        json["usage"],
        serde_json::json!({"prompt_tokens": 10, "completion_tokens": 2})
    );
    assert_eq!(
        json["usage_saved"],
        serde_json::json!({"prompt_tokens": 20, "completion_tokens": 4})
    );

    let markdown = usage_run(&sb, "markdown", &["--report", "report.html"]);
    let markdown = mask_elapsed(&common::stdout_text(&markdown));
    let evaluator_line = markdown
        .lines()
        .find(|line| line.starts_with("Evaluator:"))
        .expect("an evaluator line");
    assert_eq!(
        evaluator_line,
        "Evaluator: command sh eval.sh · score range unit · 3 calls (3 ok, 0 errors, 3 from \
         the cache) · elapsed: [..]s · tokens: 0 prompt, 0 completion (saved by the cache: 30 prompt, 6 \
         completion)"
    );

    // The HTML report: the summary it embeds counts them, every row says so, and the page
    // shows the count.
    let page = sb.read("report.html");
    let data = page
        .split_once("type=\"application/json\"")
        .and_then(|(_, rest)| rest.split_once('>'))
        .and_then(|(_, rest)| rest.split_once("</script>"))
        .map(|(json, _)| serde_json::from_str::<serde_json::Value>(json).expect("report data"))
        .expect("embedded data");
    assert_eq!(data["sources"][0]["summary"]["calls"]["cached"], 3);
    let cached_column = data["columns"]
        .as_array()
        .unwrap()
        .iter()
        .position(|column| column == "cached")
        .unwrap();
    assert!(data["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|row| row[cached_column] == true));
    assert!(page.contains("' from the cache'"));
}

/// `run --checks checks.json --cache` of the candidate `hi` with `extra` flags: the calls the
/// cache answered and the candidate's score.
fn cached_checks_run(sb: &Sandbox, extra: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let out = sb
        .evalctl()
        .args(["run", "--no-config", "--format", "json", "--skip-preflight"])
        .args(["--checks", "checks.json"])
        .args(extra)
        .args(["--candidate", "hi", "--cache", "--cache-dir", "cache"])
        .output()
        .expect("evalctl runs");
    let summary = json_stdout(&out);
    (
        summary["calls"]["cached"].clone(),
        summary["candidates"][0]["score"].clone(),
    )
}

#[test]
fn an_edited_custom_check_script_misses() {
    // A custom check's command names its script as a command evaluator's does: its content is
    // part of the key, whether the command line declares the check or the checks file does.
    const CHECKS: &str = r#"{"checks": [{"type": "wc", "arguments": {"text": "$.output.value"}}]}"#;
    const DECLARING: &str = r#"{"custom_checks": {"wc": {"command": ["sh", "wc.sh"]}},
        "checks": [{"type": "wc", "arguments": {"text": "$.output.value"}}]}"#;
    for (checks, lends) in [
        (CHECKS, ["--custom-check", "wc=sh wc.sh"]),
        (DECLARING, ["--allow-custom-check", "wc"]),
    ] {
        let sb = Sandbox::new();
        sb.write("checks.json", checks);
        let verdict = |passed: bool| {
            format!("cat >/dev/null\necho call >> calls.log\necho '{{\"passed\": {passed}}}'\n")
        };
        sb.write("wc.sh", verdict(true));
        let run = || cached_checks_run(&sb, &lends);
        assert_eq!(run(), (0.into(), 1.0.into()), "{lends:?}");
        assert_eq!(run(), (1.into(), 1.0.into()), "{lends:?}");
        sb.write("wc.sh", verdict(false));
        assert_eq!(run(), (0.into(), 0.0.into()), "{lends:?}");
        assert_eq!(calls(&sb), 2, "{lends:?}");
    }
}

#[test]
fn a_record_on_another_line_misses_when_the_checks_see_its_line() {
    // A record without an `id` is the test case `line-N`: moved down a line, it is another case.
    let sb = Sandbox::new();
    sb.write(
        "checks.json",
        r#"{"checks": [{"type": "exact_match", "arguments": {"actual": "$.test_case.id", "expected": "line-1"}}]}"#,
    );
    let run = || cached_checks_run(&sb, &["--dataset", "d.jsonl"]);
    sb.write("d.jsonl", "{\"q\": 1}\n");
    assert_eq!(run(), (0.into(), 1.0.into()));
    assert_eq!(run(), (1.into(), 1.0.into()));
    sb.write("d.jsonl", "\n{\"q\": 1}\n");
    assert_eq!(run(), (0.into(), 0.0.into()));
}

#[test]
fn a_cache_input_that_is_no_file_is_refused_not_read() {
    // Reading /dev/zero to key the calls would never end.
    let sb = Sandbox::new();
    sb.write("eval.sh", RECORDING);
    let out = sb
        .evalctl()
        .args([
            "run",
            "--format",
            "text",
            "--evaluator-command",
            "sh eval.sh",
        ])
        .args(["--candidate", "good", "--cache", "--cache-dir", "cache"])
        .args(["--cache-input", "/dev/zero"])
        .output()
        .expect("evalctl runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: /dev/zero: this --cache-input (cache_inputs) is not a regular file or a \
         directory: name the files the evaluator reads\n"
    );
    assert_eq!(calls(&sb), 0);
}

/// Fill a cache with 300 results, `damage` its database file, then check that `run --cache`
/// refuses it as bad input naming `cache clear` before any call, and runs again once `cache
/// clear` has removed it.
fn refuses_a_damaged_cache(damage: impl FnOnce(&std::path::Path)) {
    let sb = Sandbox::new();
    sb.write("eval.sh", RECORDING);
    let candidates: String = (0..300)
        .map(|i| format!("{{\"candidate\": \"c{i}\"}}\n"))
        .collect();
    sb.write("cands.jsonl", candidates);
    let run = || {
        sb.evalctl()
            .args(["run", "--no-config", "--format", "text", "--skip-preflight"])
            .args([
                "--evaluator-command",
                "sh eval.sh",
                "--candidates",
                "cands.jsonl",
            ])
            .args(["--cache", "--cache-dir", "cache"])
            .output()
            .expect("evalctl runs")
    };
    assert_eq!(run().status.code(), Some(0));
    assert_eq!(calls(&sb), 300);
    damage(&sb.path().join("cache/results.sqlite3"));
    let refused = run();
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "error: cache/results.sqlite3: the cache database is damaged (database disk image is \
         malformed): `evalctl cache clear --cache-dir cache` removes it, or name another \
         --cache-dir\n"
    );
    assert_eq!(calls(&sb), 300, "no call is made");
    let cleared = sb
        .evalctl()
        .args(["cache", "clear", "--cache-dir", "cache", "--format", "text"])
        .output()
        .expect("evalctl runs");
    assert_eq!(cleared.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&cleared.stdout),
        "removed the damaged cache database (its results could not be counted)\n"
    );
    assert_eq!(run().status.code(), Some(0));
}

#[test]
fn a_cache_cut_short_is_bad_input_and_cache_clear_removes_it() {
    // A disk that filled up, a copy cut short: half the database is gone.
    refuses_a_damaged_cache(|database| {
        let length = std::fs::metadata(database).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(database)
            .unwrap()
            .set_len(length / 2)
            .unwrap();
    });
}

#[test]
fn a_cache_garbled_past_its_header_is_bad_input_and_cache_clear_removes_it() {
    // Every page after the first overwritten in part: the header still says SQLite, and only
    // reading the results finds the damage.
    refuses_a_damaged_cache(|database| {
        let mut bytes = std::fs::read(database).unwrap();
        for byte in bytes.iter_mut().skip(4096).step_by(7) {
            *byte = byte.wrapping_mul(31).wrapping_add(17);
        }
        std::fs::write(database, bytes).unwrap();
    });
}

#[test]
fn a_cached_score_the_run_would_refuse_is_not_used() {
    // A stored score goes through the score validator as an evaluator's does.
    let sb = Sandbox::new();
    sb.write("eval.sh", RECORDING);
    let run = || {
        let out = sb
            .evalctl()
            .args(["run", "--no-config", "--format", "json", "--skip-preflight"])
            .args(["--evaluator-command", "sh eval.sh", "--candidate", "good"])
            .args(["--cache", "--cache-dir", "cache"])
            .output()
            .expect("evalctl runs");
        let summary = json_stdout(&out);
        (
            summary["calls"]["cached"].clone(),
            summary["candidates"][0]["score"].clone(),
        )
    };
    assert_eq!(run(), (0.into(), 0.5.into()));
    let database = rusqlite::Connection::open(sb.path().join("cache/results.sqlite3")).unwrap();
    database
        .execute_batch("UPDATE results SET score = 7.5")
        .unwrap();
    drop(database);
    assert_eq!(run(), (0.into(), 0.5.into()));
    assert_eq!(calls(&sb), 2);
}

/// Records each call's example in `calls.log` and `started.Q`, waits for `go.Q`, then scores.
const GATED: &str = "p=$(cat)\nq=${p#*\\\"q\\\": }\nq=${q%%\\}*}\necho \"$q\" >> calls.log\n\
                     touch started.$q\nwhile [ ! -e go.$q ]; do sleep 0.01; done\n\
                     printf '{\"score\": 0.1, \"why\": \"v1\"}'\n";

#[test]
fn a_script_edited_during_the_run_caches_nothing_after_the_change() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"q\": 1}\n{\"q\": 2}\n");
    sb.write("eval.sh", GATED);
    let run = |output: &str| {
        let mut command = common::evalctl_process();
        command
            .current_dir(sb.path())
            .args(["run", "--format", "json", "--skip-preflight", "-j", "1"])
            .args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"])
            .args(["--candidate", "c", "--cache", "--cache-dir", "cache"])
            .args(["--output", output]);
        command
    };
    let running = run("first.jsonl")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("evalctl starts");
    sb.write("go.1", "");
    // The first call is answered (and cached); the second has begun: the script is edited.
    assert!(common::wait_until(
        std::time::Duration::from_secs(30),
        || sb.exists("started.2")
    ));
    sb.write("eval.sh", GATED.replace("0.1", "0.9"));
    sb.write("go.2", "");
    let first = running.wait_with_output().expect("evalctl ends");
    assert_eq!(first.status.code(), Some(0));
    assert_eq!(
        common::stderr_text(&first),
        "warning: eval.sh changed during the run: its results may mix what both versions \
         answered (the cache keys hash the file as it was when the run began, and no answer \
         after the change was cached under them); run again to score one version\n"
    );

    // Back to the first version: the answer given during the change is not served as its own.
    sb.write("eval.sh", GATED);
    let second = run("second.jsonl").output().expect("evalctl runs");
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        common::stderr_text(&second)
    );
    let cached: Vec<_> = sb
        .jsonl("second.jsonl")
        .iter()
        .map(|line| (line["example_index"].clone(), line["cached"].clone()))
        .collect();
    assert_eq!(
        cached,
        [
            (serde_json::json!(0), serde_json::json!(true)),
            (serde_json::json!(1), serde_json::Value::Null)
        ]
    );
    assert_eq!(sb.lines("calls.log"), ["1", "2", "2"]);
}

/// Logs each call; on the call of example 2 (once), writes `lib/data.txt`.
const WRITES_LIB: &str = "p=$(cat)\necho x >> calls.log\ncase \"$p\" in *'\"q\": 2'*) [ -e once ] || \
                          { touch once; echo v2 > lib/data.txt; };; esac\nprintf '{\"score\": 0.5}'\n";

#[test]
fn a_declared_directory_changed_during_the_run_takes_back_the_answers_it_cached() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"q\": 1}\n{\"q\": 2}\n");
    sb.write("eval.sh", WRITES_LIB);
    sb.write("lib/prompt.txt", "v1\n");
    let run = || {
        common::evalctl_process()
            .current_dir(sb.path())
            .args(["run", "--format", "json", "--skip-preflight", "-j", "1"])
            .args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"])
            .args(["--candidate", "c", "--cache", "--cache-dir", "cache"])
            .args(["--cache-input", "lib"])
            .output()
            .expect("evalctl runs")
    };
    let first = run();
    assert_eq!(first.status.code(), Some(0));
    assert_eq!(
        common::stderr_text(&first),
        "warning: a file under lib (--cache-input) was written, added or removed during the run: \
         its results may mix what both versions answered; the 2 answers this run cached under \
         keys that hash the directory as it was when the run began were removed from the cache; \
         run again to score one version\n"
    );
    // Back to the directory the keys hash: nothing is served from the run that saw it change.
    std::fs::remove_file(sb.path().join("lib/data.txt")).unwrap();
    let second = run();
    assert_eq!(common::stderr_text(&second), "");
    assert_eq!(json_stdout(&second)["calls"]["cached"], 0);
    assert_eq!(calls(&sb), 4);
    // Unchanged, its answers stay.
    let third = run();
    assert_eq!(json_stdout(&third)["calls"]["cached"], 2);
    assert_eq!(calls(&sb), 4);
}

#[test]
fn without_the_cache_a_changed_directory_is_said_and_compiled_python_is_not_a_change() {
    let sb = Sandbox::new();
    sb.write("lib/prompt.txt", "v1\n");
    sb.write("lib/sub/module.py", "x = 1\n");
    let run = |script: &str| {
        sb.write("eval.sh", script);
        let out = common::evalctl_process()
            .current_dir(sb.path())
            .args(["run", "--format", "json", "--skip-preflight"])
            .args(["--evaluator-command", "sh eval.sh", "--candidate", "c"])
            .args(["--cache-input", "lib"])
            .output()
            .expect("evalctl runs");
        assert_eq!(out.status.code(), Some(0));
        common::stderr_text(&out)
    };
    let pycache = "cat >/dev/null\nmkdir -p lib/__pycache__ lib/sub/__pycache__\n\
                   echo b >> lib/__pycache__/m.pyc\necho b >> lib/sub/__pycache__/m.pyc\n\
                   printf '{\"score\": 1}'\n";
    assert_eq!(run(pycache), "");
    let log = "cat >/dev/null\necho b >> lib/log\nprintf '{\"score\": 1}'\n";
    assert_eq!(
        run(log),
        "warning: a file under lib (--cache-input) was written, added or removed during the run: \
         its results may mix what both versions answered; run again to score one version\n"
    );
}

#[test]
fn results_the_cache_cannot_store_are_said_at_the_end() {
    // A cache whose reads work and whose writes fail: `results` is a view.
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"q\": 1}\n{\"q\": 2}\n{\"q\": 3}\n");
    sb.write("eval.sh", RECORDING);
    std::fs::create_dir(sb.join("cache")).unwrap();
    rusqlite::Connection::open(sb.join("cache/results.sqlite3"))
        .unwrap()
        .execute_batch(
            "CREATE TABLE completions (key BLOB PRIMARY KEY, text TEXT NOT NULL, \
             prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, \
             total_tokens INTEGER NOT NULL) WITHOUT ROWID;
             CREATE VIEW results (key, score, side_info, passed) AS \
             SELECT key, 0.0, text, NULL FROM completions WHERE 0;",
        )
        .unwrap();
    let out = sb
        .evalctl()
        .args(["run", "--format", "json", "--skip-preflight"])
        .args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"])
        .args(["--candidate", "good", "--cache", "--cache-dir", "cache"])
        .output()
        .expect("evalctl runs");
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr_text(&out));
    assert_eq!(
        common::stderr_text(&out),
        "warning: cache/results.sqlite3: 3 answers could not be stored (cannot modify results \
         because it is a view): the run's answers are right, but the cache did not keep them; \
         if the cache is damaged, `evalctl cache clear --cache-dir cache` removes it\n"
    );
}

#[test]
fn a_cache_whose_disk_refuses_writes_is_bad_input_before_any_call() {
    // evalctl may not write a byte to any file (`ulimit -f 0`), as on a full disk: SQLite cannot
    // set the cache's database up, and nothing is evaluated.
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"q\": 1}\n");
    sb.write("eval.sh", "touch called\nprintf '{\"score\": 0.5}'\n");
    let limited = common::clean_environment(&mut std::process::Command::new("sh"))
        .current_dir(sb.path())
        .args(["-c", "ulimit -f 0; exec \"$0\" \"$@\"", common::bin()])
        .args([
            "run",
            "--skip-preflight",
            "--evaluator-command",
            "sh eval.sh",
        ])
        .args(["--dataset", "d.jsonl", "--candidate", "good"])
        .args(["--cache", "--cache-dir", "cache", "--format", "text"])
        .output()
        .expect("sh runs");
    assert_eq!(
        (common::code(&limited), common::stderr_text(&limited)),
        (
            2,
            "error: cache: the cache cannot be set up there (disk I/O error: a full disk, or a \
             file system that cannot hold SQLite's files): free some space, name a writable one \
             with --cache-dir, or run without the cache (leave out --cache, or \
             EVALCTL_CACHE=false)\n"
                .to_string()
        )
    );
    assert!(!sb.exists("called"), "the evaluator was called");
}
