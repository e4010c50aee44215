//! Examples are named by their `id` field where they have one, by index where they have none:
//! in result lines (`example_id`), the failed calls on stderr, JUnit test cases and the HTML
//! report's rows; and `run --example ID` picks examples by it.

use crate::common::{code, json_stdout, stderr_text, stdout_text, Sandbox, LOG_PAYLOAD};
use serde_json::Value;

/// The `name` of each JUnit test case, in order.
fn test_case_names(junit: &str) -> Vec<&str> {
    junit
        .split("<testcase ")
        .skip(1)
        .filter_map(|case| case.split("name=\"").nth(1)?.split('"').next())
        .collect()
}

#[test]
fn examples_are_named_by_id_where_they_have_one() {
    let sb = Sandbox::new();
    sb.write(
        "d.jsonl",
        "{\"id\": \"q1\", \"s\": 1}\n{\"id\": 7, \"s\": 0}\n{\"s\": 0}\n",
    );
    // Fails every example whose `s` is 0.
    sb.write(
        "eval.sh",
        "p=$(cat)\ncase \"$p\" in *'\"s\": 0'*) echo wrong >&2; exit 3;; esac\nprintf '{\"score\": 1}'\n",
    );
    let output = sb
        .evalctl()
        .args([
            "run",
            "--format",
            "text",
            "--skip-preflight",
            "--candidate",
            "c",
        ])
        .args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"])
        .args([
            "--output",
            "out.jsonl",
            "--junit",
            "junit.xml",
            "--report",
            "r.html",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&output), 1);
    let page_kb = sb.read("r.html").len() as f64 / 1e3;
    assert_eq!(
        stderr_text(&output),
        format!(
            "failed: cand-1 train 7 (line 2): exit_status: command exited with code 3; stderr: \
             wrong\n\
             failed: cand-1 train #2 (line 3): exit_status: command exited with code 3; stderr: \
             wrong\n\
             wrote junit.xml: 3 test cases (0 failures, 2 errors)\n\
             wrote r.html: 3 results (2 failed), {page_kb:.1} kB\n\
             exit 1: 2 of 3 calls failed\n"
        )
    );

    let mut ids: Vec<(u64, Option<serde_json::Value>)> = sb
        .jsonl("out.jsonl")
        .iter()
        .map(|line| {
            let index = line["example_index"].as_u64().unwrap();
            (index, line.get("example_id").cloned())
        })
        .collect();
    ids.sort_by_key(|(index, _)| *index);
    assert_eq!(
        ids,
        [
            (0, Some(serde_json::json!("q1"))),
            (1, Some(serde_json::json!("7"))),
            (2, None)
        ]
    );

    assert_eq!(
        test_case_names(&sb.read("junit.xml")),
        [
            "cand-1 train q1 (line 1)",
            "cand-1 train 7 (line 2)",
            "cand-1 train #2 (line 3)"
        ]
    );

    let page = sb.read("r.html");
    let data = page
        .split_once("type=\"application/json\"")
        .and_then(|(_, rest)| rest.split_once('>'))
        .and_then(|(_, rest)| rest.split_once("</script>"))
        .map(|(json, _)| serde_json::from_str::<serde_json::Value>(json).expect("report data"))
        .expect("embedded data");
    let column = data["columns"]
        .as_array()
        .unwrap()
        .iter()
        .position(|name| name == "example_id")
        .unwrap();
    let mut row_ids: Vec<String> = data["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row[column].to_string())
        .collect();
    row_ids.sort();
    assert_eq!(row_ids, ["\"7\"", "\"q1\"", "null"]);
    // The page names a row by the id, else by the index.
    assert!(page.contains("row[col.example_id] === null ? '#' + row[col.example_index]"));
}

#[test]
fn compare_names_a_regressed_example_by_its_id() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"id\": \"q1\", \"s\": 1}\n{\"s\": 2}\n");
    sb.write("base.sh", "cat >/dev/null\nprintf '{\"score\": 1}'\n");
    // The new evaluator scores every example 0.
    sb.write("new.sh", "cat >/dev/null\nprintf '{\"score\": 0}'\n");
    for (script, results) in [("base.sh", "base.jsonl"), ("new.sh", "new.jsonl")] {
        let run = sb
            .evalctl()
            .args([
                "run",
                "--format",
                "json",
                "--skip-preflight",
                "--candidate",
                "c",
            ])
            .args(["--evaluator-command", &format!("sh {script}")])
            .args(["--dataset", "d.jsonl", "--output", results])
            .output()
            .unwrap();
        assert!(code(&run) <= 1, "{}", stderr_text(&run));
    }
    let compared = sb
        .evalctl()
        .args(["compare", "base.jsonl", "new.jsonl", "--format", "json"])
        .args(["--allow-different-inputs"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&compared.stdout).unwrap();
    let regressions = &report["candidates"][0]["splits"]["train"]["regressions"];
    assert_eq!(regressions[0]["example_id"], "q1", "{report}");
    assert_eq!(regressions[1].get("example_id"), None, "{report}");
    let text = sb
        .evalctl()
        .args(["compare", "base.jsonl", "new.jsonl", "--format", "markdown"])
        .args(["--allow-different-inputs"])
        .output()
        .unwrap();
    let markdown = String::from_utf8(text.stdout).unwrap();
    let rows: Vec<&str> = markdown
        .lines()
        .filter(|line| line.contains("(line"))
        .collect();
    assert_eq!(
        rows,
        [
            "| train q1 (line 1) | 1.0000 | 0.0000 | -1.0000 |",
            "| train #1 (line 2) | 1.0000 | 0.0000 | -1.0000 |"
        ],
        "{markdown}"
    );
}

#[test]
fn ids_with_line_breaks_or_bidi_controls_stay_on_their_line_and_are_shown_not_obeyed() {
    let sb = Sandbox::new();
    sb.write(
        "d.jsonl",
        "{\"id\": \"line\\nbreak\", \"s\": 0}\n{\"id\": \"\u{202e}txt.exe\", \"s\": 0}\n",
    );
    sb.write("base.sh", "cat >/dev/null\nprintf '{\"score\": 1}'\n");
    sb.write("new.sh", "cat >/dev/null\necho wrong >&2\nexit 3\n");
    let run = |script: &str, results: &str, extra: &[&str]| {
        sb.evalctl()
            .args([
                "run",
                "--format",
                "text",
                "--skip-preflight",
                "--candidate",
                "c",
            ])
            .args(["--evaluator-command", &format!("sh {script}")])
            .args(["--dataset", "d.jsonl", "--output", results])
            .args(extra)
            .output()
            .unwrap()
    };
    assert_eq!(code(&run("base.sh", "base.jsonl", &[])), 0);
    let failed = run("new.sh", "new.jsonl", &["--junit", "junit.xml"]);
    assert_eq!(
        stderr_text(&failed),
        "failed: cand-1 train line ⏎ break (line 1): exit_status: command exited with code 3; \
         stderr: wrong\n\
         failed: cand-1 train \\u{202e}txt.exe (line 2): exit_status: command exited with code \
         3; stderr: wrong\n\
         wrote junit.xml: 2 test cases (0 failures, 2 errors)\n\
         exit 1: 2 of 2 calls failed\n"
    );
    assert_eq!(
        test_case_names(&sb.read("junit.xml")),
        [
            "cand-1 train line ⏎ break (line 1)",
            "cand-1 train \u{202e}txt.exe (line 2)"
        ]
    );
    let compared = sb
        .evalctl()
        .args(["compare", "base.jsonl", "new.jsonl", "--format", "text"])
        .arg("--allow-different-inputs")
        .output()
        .unwrap();
    let compared = stdout_text(&compared);
    let regressions: Vec<&str> = compared
        .lines()
        .filter(|line| line.contains("regression:"))
        .collect();
    assert_eq!(
        regressions,
        [
            "  regression: train line ⏎ break (line 1): 1.0000 -> 0.0000 (1 call failed in new)",
            "  regression: train \\u{202e}txt.exe (line 2): 1.0000 -> 0.0000 (1 call failed in \
             new)"
        ]
    );
    // In JSON the control is an escape: the same string, printed safely.
    let compared = sb
        .evalctl()
        .args(["compare", "base.jsonl", "new.jsonl", "--format", "json"])
        .arg("--allow-different-inputs")
        .output()
        .unwrap();
    let ids: Vec<&str> = std::str::from_utf8(&compared.stdout)
        .unwrap()
        .lines()
        .filter(|line| line.contains("\"example_id\""))
        .map(str::trim)
        .collect();
    assert_eq!(
        ids,
        [
            "\"example_id\": \"line\\nbreak\",",
            "\"example_id\": \"\\u202etxt.exe\",",
            "\"example_id\": \"line\\nbreak\",",
            "\"example_id\": \"\\u202etxt.exe\","
        ]
    );
    let regressions = &json_stdout(&compared)["candidates"][0]["splits"]["train"]["regressions"];
    assert_eq!(regressions[1]["example_id"], "\u{202e}txt.exe");
}

#[test]
fn a_candidate_named_with_line_breaks_names_its_junit_suite_on_one_line_as_its_cases() {
    let sb = Sandbox::new();
    sb.write("prompt\u{2028}v2\nfinal.txt", "Answer briefly.");
    sb.write("d.jsonl", "{\"id\": \"q1\"}\n");
    sb.write("eval.sh", "cat >/dev/null\nprintf '{\"score\": 1}'\n");
    let output = sb
        .evalctl()
        .args(["run", "--format", "json", "--skip-preflight"])
        .args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"])
        .args(["--junit", "junit.xml", "prompt\u{2028}v2\nfinal.txt"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    let junit = sb.read("junit.xml");
    let lines: Vec<&str> = junit
        .lines()
        .filter(|line| line.contains("<testsuite ") || line.contains("<testcase "))
        // Up to the times, which vary.
        .filter_map(|line| line.trim().split(" time=").next())
        .collect();
    assert_eq!(
        lines,
        [
            "<testsuite name=\"prompt ⏎ v2 ⏎ final.txt train\" tests=\"1\" failures=\"0\" \
             errors=\"0\" skipped=\"0\"",
            "<testcase name=\"prompt ⏎ v2 ⏎ final.txt train q1 (line 1)\" \
             classname=\"prompt ⏎ v2 ⏎ final.txt.train\""
        ]
    );
}

/// A dataset and a valset whose examples have ids, and an evaluator that logs each payload.
fn picking_sandbox() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "train.jsonl",
        "{\"id\": \"q1\"}\n{\"id\": \"q2\"}\n{\"id\": \"q3\"}\n{\"id\": 4}\n",
    );
    sb.write("val.jsonl", "{\"id\": \"v1\"}\n{\"id\": \"q2\"}\n");
    sb.write("eval.sh", LOG_PAYLOAD);
    sb
}

/// `evalctl run` over [`picking_sandbox`]'s splits with `args` (the picks), its JSON summary
/// on stdout and its results in `out.jsonl`.
fn pick(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.evalctl()
        .args(["run", "--format", "json", "--skip-preflight", "-j", "1"])
        .args(["--candidate", "c", "--evaluator-command", "sh eval.sh"])
        .args(["--dataset", "train.jsonl", "--valset", "val.jsonl"])
        .args(["--output", "out.jsonl", "--cache", "--cache-dir", "cache"])
        .args(args)
        .output()
        .unwrap()
}

/// `(split, example_index, example_id, cached)` of every line of `out.jsonl`.
fn picked(sb: &Sandbox) -> Vec<(String, u64, String, bool)> {
    sb.jsonl("out.jsonl")
        .iter()
        .map(|line| {
            (
                line["split"].as_str().unwrap().to_string(),
                line["example_index"].as_u64().unwrap(),
                line["example_id"].as_str().unwrap().to_string(),
                line["cached"] == Value::Bool(true),
            )
        })
        .collect()
}

#[test]
fn example_picks_the_examples_with_these_ids_in_every_split() {
    let sb = picking_sandbox();
    let out = pick(&sb, &["--example", "4", "--example", "q2"]);
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    let summary = json_stdout(&out);
    assert_eq!(summary["calls"]["total"], 3, "{summary}");
    let line = |split: &str, index, id: &str| (split.to_string(), index, id.to_string(), false);
    assert_eq!(
        picked(&sb),
        [
            line("train", 1, "q2"),
            line("train", 3, "4"),
            line("val", 1, "q2")
        ]
    );
    // The payloads carry the picked examples, in plan order.
    let examples: Vec<String> = sb
        .lines("payloads.log")
        .iter()
        .map(|payload| serde_json::from_str::<Value>(payload).unwrap()["example"].to_string())
        .collect();
    assert_eq!(
        examples,
        ["{\"id\":\"q2\"}", "{\"id\":4}", "{\"id\":\"q2\"}"]
    );
}

#[test]
fn picked_calls_are_the_calls_of_the_whole_run_and_limit_counts_the_picks() {
    // The whole run fills the cache; a pick makes no call of its own: its calls are the same
    // calls (the same keys), so the cache answers them and `compare` pairs them.
    let sb = picking_sandbox();
    assert_eq!(code(&pick(&sb, &[])), 0);
    let whole = sb.lines("payloads.log").len();
    assert_eq!(whole, 6);
    std::fs::rename(sb.path().join("out.jsonl"), sb.path().join("whole.jsonl")).unwrap();
    // Picked in train: q2 and q3, of which --limit 1 keeps q2; in val: v1 and q2, keeps v1.
    let picks = ["--example", "q3", "--example", "v1", "--example", "q2"];
    let out = pick(&sb, &[&picks[..], &["--limit", "1"]].concat());
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        sb.lines("payloads.log").len(),
        whole,
        "a call was made again"
    );
    let line = |split: &str, index, id: &str| (split.to_string(), index, id.to_string(), true);
    assert_eq!(picked(&sb), [line("train", 1, "q2"), line("val", 0, "v1")]);
    let compared = sb
        .evalctl()
        .args(["compare", "--format", "json", "whole.jsonl", "out.jsonl"])
        .arg("--allow-different-inputs")
        .output()
        .unwrap();
    assert_eq!(code(&compared), 0, "{}", stderr_text(&compared));
    assert_eq!(
        json_stdout(&compared)["unpaired"],
        serde_json::json!({"base": 4, "new": 0})
    );
}

#[test]
fn a_valset_with_no_pick_takes_no_part_and_the_probe_sends_a_picked_example() {
    let sb = picking_sandbox();
    // Only train examples picked: the score is their mean, and --fail-under sees it.
    let out = pick(
        &sb,
        &["--example", "q1", "--example", "q3", "--fail-under", "0.5"],
    );
    // Said, since the gate then judges the train mean of a run given a valset.
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            0,
            "warning: --example picks no example of the valset val.jsonl: the score (and \
             --fail-under) is the train mean, and `compare` pairs this run only with runs \
             without a valset\n"
                .to_string()
        )
    );
    let candidate = &json_stdout(&out)["candidates"][0];
    assert_eq!(
        (
            &candidate["score"],
            &candidate["train"]["n"],
            &candidate["val"]
        ),
        (&Value::from(1.0), &Value::from(2), &Value::Null),
        "{candidate}"
    );
    // An evaluator that fails on q1: preflight probes with the first example the run uses.
    sb.write(
        "eval.sh",
        "p=$(cat)\ncase \"$p\" in *'\"q1\"'*) echo q1 breaks me >&2; exit 3;; esac\n\
         printf '{\"score\": 1}'\n",
    );
    let preflight = |picks: &[&str]| {
        sb.evalctl()
            .args(["preflight", "--format", "json", "--candidate", "c"])
            .args([
                "--evaluator-command",
                "sh eval.sh",
                "--dataset",
                "train.jsonl",
            ])
            .args(picks)
            .output()
            .unwrap()
    };
    assert_eq!(code(&preflight(&[])), 3);
    let picked = preflight(&["--example", "q2"]);
    assert_eq!(code(&picked), 0, "{}", stderr_text(&picked));
    // The report counts the examples the run would use beside the records the files hold.
    let report = json_stdout(&picked);
    assert_eq!(
        (&report["dataset_records"], &report["dataset_used"]),
        (&Value::from(4), &Value::from(1)),
        "{report}"
    );
}

#[test]
fn preflight_text_says_how_many_examples_the_picks_and_the_limit_leave() {
    let sb = picking_sandbox();
    sb.write("eval.sh", "cat >/dev/null; printf '{\"score\": 1}'\n");
    let preflight = |picks: &[&str]| {
        let out = sb
            .evalctl()
            .args(["preflight", "--format", "text", "--candidate", "c"])
            .args(["--evaluator-command", "sh eval.sh"])
            .args(["--dataset", "train.jsonl", "--valset", "val.jsonl"])
            .args(picks)
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr_text(&out));
        stdout_text(&out)
    };
    let cwd = sb.path().display().to_string();
    let probe = format!("command 'sh eval.sh' (cwd: {cwd}) answered the probe with score 1");
    assert_eq!(
        preflight(&[]),
        format!("preflight ok: 1 candidate(s), dataset 4 records, valset 2 records; {probe}\n")
    );
    assert_eq!(
        preflight(&["--example", "q2", "--example", "4"]),
        format!(
            "preflight ok: 1 candidate(s), dataset 4 records (2 used), valset 2 records (1 \
             used); {probe}\n"
        )
    );
    assert_eq!(
        preflight(&["--limit", "3"]),
        format!(
            "preflight ok: 1 candidate(s), dataset 4 records (3 used), valset 2 records; {probe}\n"
        )
    );
}

#[test]
fn an_id_no_example_has_is_an_error_naming_the_files_and_a_near_id() {
    let sb = picking_sandbox();
    let out = pick(
        &sb,
        &["--example", "q9", "--example", "q2", "--example", "zzz"],
    );
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        "error: --example: no example of train.jsonl or val.jsonl has the id \"q9\" (did you \
         mean `q1`?)\n\
         error: --example: no example of train.jsonl or val.jsonl has the id \"zzz\"\n"
    );
    assert!(
        !sb.path().join("payloads.log").exists(),
        "an evaluator call was made"
    );
    let single = sb
        .evalctl()
        .args(["run", "--format", "text", "--candidate", "c"])
        .args(["--evaluator-command", "sh eval.sh", "--example", "q1"])
        .output()
        .unwrap();
    assert_eq!(code(&single), 2);
    assert_eq!(
        stderr_text(&single),
        "error: --example: picks examples of --dataset and --valset, and neither was given\n"
    );
    assert_eq!(stdout_text(&single), "");
    sb.write("anonymous.jsonl", "{\"q\": 1}\n{\"q\": 2}\n");
    let anonymous = sb
        .evalctl()
        .args(["run", "--format", "text", "--candidate", "c"])
        .args(["--evaluator-command", "sh eval.sh", "--example", "q1"])
        .args(["--dataset", "anonymous.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&anonymous), 2);
    assert_eq!(
        stderr_text(&anonymous),
        "error: --example: no example of anonymous.jsonl has an `id` (a string or a number) to \
         pick it by\n"
    );
}

#[test]
fn an_id_two_examples_of_a_split_share_is_warned_about_once_a_number_and_a_string_alike() {
    let sb = Sandbox::new();
    sb.write(
        "train.jsonl",
        "{\"id\": 4}\n{\"id\": \"4\"}\n{\"id\": \"x1\"}\n{\"id\": \"x1\"}\n{\"id\": \"x1\"}\n",
    );
    // The same id in two splits names two examples of two splits: no warning.
    sb.write("val.jsonl", "{\"id\": \"x1\"}\n");
    sb.write("eval.sh", LOG_PAYLOAD);
    let run = |picks: &[&str]| {
        let out = sb
            .evalctl()
            .args([
                "run",
                "--format",
                "json",
                "--skip-preflight",
                "--candidate",
                "c",
            ])
            .args(["--evaluator-command", "sh eval.sh"])
            .args(["--dataset", "train.jsonl", "--valset", "val.jsonl"])
            .args(picks)
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr_text(&out));
        stderr_text(&out)
    };
    let out = run(&[]);
    assert_eq!(
        out,
        "warning: train.jsonl:2: id \"4\" is also line 1's: results and failures name both \
         \"4\", and --example \"4\" picks both\n\
         warning: train.jsonl:4: id \"x1\" is also line 3's: results and failures name both \
         \"x1\", and --example \"x1\" picks both\n"
    );
    // Among the examples picked only.
    let out = run(&["--example", "x1"]);
    assert_eq!(
        out,
        "warning: train.jsonl:4: id \"x1\" is also line 3's: results and failures name both \
         \"x1\", and --example \"x1\" picks both\n"
    );
}
