//! Scale-out through the binary, as docs/scale-out.md runs it: N shards of one run (`--shard
//! K/N`, K taken from `JOB_COMPLETION_INDEX` as a Kubernetes Indexed Job sets it, or from a
//! GitHub Actions matrix value) split the calls exactly once, and `evalctl merge` of their
//! results files prints the unsharded run's summary; `evalctl summarize` of one run's file
//! prints that run's summary.

use crate::common::*;
use serde_json::{json, Value};

/// Scores the example's `s` (`{"s":0.25}`); exits 3 without one.
const EVAL: &str = "p=$(cat)\ns=$(printf '%s' \"$p\" | sed -n 's/.*\"s\":\\([0-9.]*\\).*/\\1/p')\n\
                    [ -n \"$s\" ] || exit 3\nprintf '{\"score\": %s}' \"$s\"\n";

const SHARDS: usize = 3;

fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    let train: Vec<String> = (0..12)
        .map(|i| {
            if i == 5 {
                json!({"broken": i}).to_string()
            } else {
                json!({"s": f64::from(i % 5) / 4.0}).to_string()
            }
        })
        .collect();
    sb.write("train.jsonl", train.join("\n") + "\n");
    sb.write("val.jsonl", "{\"s\":1}\n{\"s\":0.5}\n{\"s\":0}\n");
    sb
}

const RUN: &[&str] = &[
    "run",
    "--format",
    "json",
    "--evaluator-command",
    "sh eval.sh",
    "--candidate",
    "first",
    "--candidate",
    "second",
    "--dataset",
    "train.jsonl",
    "--valset",
    "val.jsonl",
    "--repeat",
    "2",
    "--max-errors",
    "10",
];

/// The summary without what differs between any two runs (wall time).
fn comparable(mut summary: Value) -> Value {
    summary.as_object_mut().unwrap().remove("elapsed_ms");
    summary
}

#[test]
fn merged_shards_print_the_unsharded_summary() {
    let sb = sandbox();
    let single = succeeded(sb.evalctl().args(RUN).args(["--output", "all.jsonl"]));
    let single = json_stdout(&single);
    assert_eq!(single["calls"]["total"], 2 * 15 * 2);

    // A Kubernetes Indexed Job: each pod gets JOB_COMPLETION_INDEX = 0..N-1 (a GitHub
    // Actions matrix passes its `shard` value the same way).
    for index in 0..SHARDS {
        let script = format!(
            "exec \"$EVALCTL\" \"$@\" --shard \"$JOB_COMPLETION_INDEX/{SHARDS}\" \
             --output shard-$JOB_COMPLETION_INDEX.jsonl"
        );
        let mut command = std::process::Command::new("sh");
        clean_environment(&mut command)
            .current_dir(sb.path())
            .env("EVALCTL", bin())
            .env("JOB_COMPLETION_INDEX", index.to_string())
            .args(["-c", &script, "sh"])
            .args(RUN);
        let out = command.output().unwrap();
        assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    }
    let shard_files: Vec<String> = (0..SHARDS).map(|k| format!("shard-{k}.jsonl")).collect();
    let mut keys: Vec<String> = shard_files
        .iter()
        .flat_map(|file| sb.jsonl(file))
        .map(|line| line["key"].as_str().unwrap().to_string())
        .collect();
    let shard_sizes: Vec<usize> = shard_files.iter().map(|f| sb.lines(f).len()).collect();
    assert!(shard_sizes.iter().all(|&n| n > 0), "{shard_sizes:?}");
    keys.sort();
    let mut all_keys: Vec<String> = sb
        .jsonl("all.jsonl")
        .iter()
        .map(|line| line["key"].as_str().unwrap().to_string())
        .collect();
    all_keys.sort();
    assert_eq!(keys, all_keys, "the shards make every call exactly once");

    let merged = succeeded(
        sb.evalctl()
            .args(["merge", "--format", "json", "--max-errors", "10"])
            .args(&shard_files),
    );
    assert_eq!(comparable(json_stdout(&merged)), comparable(single.clone()));

    // The report of the shards is the report of their lines in one file (the run they make),
    // its source named by them all.
    let joined: String = shard_files.iter().map(|file| sb.read(file)).collect();
    sb.write("joined.jsonl", &joined);
    let one_file = ["joined.jsonl".to_string()];
    for (files, html) in [
        (&shard_files[..], "shards.html"),
        (&one_file[..], "one.html"),
    ] {
        succeeded(
            sb.evalctl()
                .args(["report", "--title", "t", "-o", html])
                .args(files),
        );
    }
    assert_eq!(
        sb.read("shards.html").replace(
            "shard-0.jsonl + shard-1.jsonl + shard-2.jsonl",
            "joined.jsonl"
        ),
        sb.read("one.html")
    );

    // One run's file alone: its own summary.
    let summarized = succeeded(sb.evalctl().args([
        "summarize",
        "--format",
        "json",
        "--max-errors",
        "10",
        "all.jsonl",
    ]));
    assert_eq!(comparable(json_stdout(&summarized)), comparable(single));
}

#[test]
fn merge_gates_and_reports_like_run() {
    let sb = sandbox();
    succeeded(sb.evalctl().args(RUN).args(["--output", "all.jsonl"]));
    let out = sb
        .evalctl()
        .args(["merge", "--format", "json", "all.jsonl", "--junit", "r.xml"])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        1,
        "errors are not tolerated without --max-errors"
    );
    assert_eq!(json_stdout(&out)["exit_reason"], "4 of 60 calls failed");
    assert!(sb
        .read("r.xml")
        .contains("<testsuites name=\"evalctl\" tests=\"60\" failures=\"0\" errors=\"4\""));
}

#[test]
fn shards_that_name_one_checks_file_two_ways_merge() {
    // The run is the file's content: `checks.json` and `./checks.json` are one run's shards.
    let sb = Sandbox::new();
    sb.write(
        "checks.json",
        r#"{"checks": [{"type": "contains", "arguments": {"text": "$.output.value", "phrases": ["a"]}}]}"#,
    );
    sb.write(
        "d.jsonl",
        "{\"input\": \"q1\"}\n{\"input\": \"q2\"}\n{\"input\": \"q3\"}\n",
    );
    for (shard, checks) in [("0/2", "checks.json"), ("1/2", "./checks.json")] {
        succeeded(
            sb.evalctl()
                .args(["run", "--format", "json", "--candidate", "a cat"])
                .args(["--checks", checks, "--dataset", "d.jsonl", "--shard", shard])
                .args(["--output", &format!("s{}.jsonl", &shard[..1])]),
        );
    }
    let merged = json_stdout(&succeeded(
        sb.evalctl()
            .args(["merge", "s0.jsonl", "s1.jsonl", "--format", "json"]),
    ));
    assert_eq!(merged["candidates"][0]["train"]["n"], json!(3), "{merged}");
}

#[test]
fn a_merge_names_the_shard_whose_calls_are_absent() {
    // Shard 1/3 was interrupted: its file lacks its last two calls. The merge says which shard
    // (and file) to resume.
    let sb = sandbox();
    for shard in 0..SHARDS {
        sb.evalctl()
            .args(RUN)
            .args(["--shard", &format!("{shard}/{SHARDS}")])
            .args(["--output", &format!("shard-{shard}.jsonl")])
            .output()
            .unwrap();
    }
    let lines = sb.lines("shard-1.jsonl");
    let kept: String = (lines[..lines.len() - 2].iter())
        .map(|line| format!("{line}\n"))
        .collect();
    sb.write("shard-1.jsonl", &kept);
    let out = sb
        .evalctl()
        .args(["merge", "--format", "json", "--max-errors", "10"])
        .args(["shard-0.jsonl", "shard-1.jsonl", "shard-2.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    let summary = json_stdout(&out);
    assert_eq!(
        summary["partial"]["incomplete_shards"],
        json!(["1/3 (shard-1.jsonl)"])
    );
    assert_eq!(
        summary["partial"]["description"],
        "2 of 60 calls absent, from shard 1/3 (shard-1.jsonl)"
    );
    assert_eq!(
        summary["exit_reason"],
        "2 of 60 calls absent, from shard 1/3 (shard-1.jsonl): the run did not finish (run \
         --resume completes it; --allow-partial summarizes what is there); 4 of 58 calls failed, \
         within --max-errors 10"
    );
}

#[test]
fn bad_shards_and_foreign_lines_are_bad_input() {
    let sb = sandbox();
    // Past the most shards a run may have, a summary naming each missing shard would be work
    // without end.
    for shard in ["3/3", "0/100001"] {
        let out = sb
            .evalctl()
            .args(RUN)
            .args(["--shard", shard])
            .output()
            .unwrap();
        assert_eq!(code(&out), 2);
        assert_eq!(
            stderr_text(&out),
            format!(
                "error: invalid value '{shard}' for '--shard <K/N>': '{shard}' is not K/N with 0 \
                 <= K < N <= 100000 (shards are numbered from 0: 0/3, 1/3, 2/3)\n\nFor more \
                 information, try '--help'.\n"
            )
        );
    }
    sb.write("old.jsonl", "{\"candidate_id\": \"c\", \"split\": \"single\", \"example_index\": null, \"example_line\": null, \"score\": 1, \"side_info\": {}, \"error\": null, \"attempts\": 1, \"latency_ms\": 1}\n[1]\n");
    let out = sb
        .evalctl()
        .args([
            "summarize",
            "--format",
            "json",
            "old.jsonl",
            "missing.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        "error: old.jsonl:1: no \"run\" member: written by an older evalctl, it does not say \
         which evaluator and splits it belongs to; rerun with --resume to complete it\n\
         error: old.jsonl:2: expected a JSON object, found array\n\
         error: missing.jsonl: cannot read: No such file or directory\n"
    );
}

#[test]
fn a_line_claiming_more_shards_than_a_run_may_have_is_no_result_line() {
    // A summary names every missing shard: a results file claiming 100 million shards (as
    // `--shard 0/100000000` once made) would keep it busy for minutes, deaf to SIGTERM. A line
    // that names its run in a form evalctl never writes is no line of an older evalctl either.
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null\nprintf '{\"score\": 1}'\n");
    sb.write("train.jsonl", "{\"i\":0}\n");
    succeeded(sb.evalctl().args([
        "run",
        "--evaluator-command",
        "sh eval.sh",
        "--candidate",
        "c",
        "--dataset",
        "train.jsonl",
        "--output",
        "whole.jsonl",
    ]));
    let line = sb.read("whole.jsonl");
    assert!(line.contains("\"shard\":\"0/1\""), "{line}");
    sb.write(
        "huge.jsonl",
        line.replace("\"shard\":\"0/1\"", "\"shard\":\"0/100000000\""),
    );
    let out = sb
        .evalctl()
        .args(["summarize", "--format", "text", "huge.jsonl"])
        .output()
        .unwrap();
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            2,
            "error: huge.jsonl:1: not a result line: run.shard: expected K/N with 0 <= K < N <= \
             100000, found \"0/100000000\"\n"
                .to_string()
        )
    );
}

#[test]
fn a_shard_does_not_fail_fail_under_for_a_candidate_whose_scoring_calls_are_elsewhere() {
    let sb = Sandbox::new();
    sb.write("eval.sh", "cat >/dev/null\nprintf '{\"score\": 0.9}'\n");
    sb.write("train.jsonl", "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n");
    sb.write("val.jsonl", "{\"v\":0}\n{\"v\":1}\n");
    let mut not_judged_anywhere = 0;
    for shard in 0..SHARDS {
        let out = succeeded(
            sb.evalctl()
                .args([
                    "run",
                    "--format",
                    "json",
                    "--evaluator-command",
                    "sh eval.sh",
                ])
                .args(["--candidate", "first", "--candidate", "second"])
                .args(["--dataset", "train.jsonl", "--valset", "val.jsonl"])
                .args(["--fail-under", "0.3", "--junit", "junit.xml"])
                .args(["--shard", &format!("{shard}/{SHARDS}")]),
        );
        let summary = json_stdout(&out);
        // Every score is 0.9: a candidate with no val call in this shard is not judged, and
        // said so, rather than failed as "no score".
        let unscored: Vec<&str> = summary["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["score"].is_null())
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        not_judged_anywhere += unscored.len();
        // How many calls a shard has depends on the calls' keys, which vary with the sandbox.
        let mut reason = match summary["calls"]["total"].as_u64().unwrap() {
            0 => "no call finished".to_string(),
            1 => "the call succeeded".to_string(),
            calls => format!("all {calls} calls succeeded"),
        };
        reason.push_str("; no candidate below --fail-under 0.3");
        for id in &unscored {
            reason.push_str(&format!(
                "; candidate {id} has no val score among the calls read: not judged by \
                 --fail-under 0.3"
            ));
        }
        assert_eq!(summary["exit_reason"], json!(reason));
        let mut gate = json!({"threshold": 0.3, "below": [], "passed": true});
        if !unscored.is_empty() {
            gate["not_judged"] = json!(unscored);
        }
        assert_eq!(summary["gates"]["fail_under"], gate);
        let skipped = sb
            .read("junit.xml")
            .matches("<skipped message=\"has no val score among the calls read")
            .count();
        assert_eq!(skipped, unscored.len());
    }
    // Each candidate's two val calls cannot reach all three shards.
    assert!(
        not_judged_anywhere >= 2,
        "some shard has a candidate without a val call"
    );
}

#[test]
fn a_shard_pointed_at_another_shards_output_is_told_so() {
    // A matrix typo: shard 1/3 given shard 0/3's file. Not "pass --resume", which would mix the
    // two shards in one file.
    let sb = sandbox();
    let shard = |index: &str, extra: &[&str]| {
        sb.evalctl()
            .args(RUN)
            .args(["--shard", index, "--output", "shard.jsonl"])
            .args(extra)
            .output()
            .unwrap()
    };
    // Whether its calls all succeed does not matter here.
    shard("0/3", &[]);
    let lines = sb.lines("shard.jsonl").len();
    for extra in [&[][..], &["--resume"][..]] {
        let out = shard("1/3", extra);
        assert_eq!(code(&out), 2, "{}", stderr_text(&out));
        let fingerprint = serde_json::from_str::<Value>(&sb.lines("shard.jsonl")[0]).unwrap()
            ["run"]["fingerprint"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(
            stderr_text(&out),
            format!(
                "error: shard.jsonl: holds {lines} lines of shard 0/3 of this run (run \
                 {fingerprint}), and this is shard 1/3: give each shard its own --output file \
                 (merge reads them together)\n"
            )
        );
    }
    assert_eq!(sb.lines("shard.jsonl").len(), lines);
}
