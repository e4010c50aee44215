//! Numbers that cannot be silently wrong, through the binary: every result line names its run
//! (fingerprint) and shard; `merge`, `summarize`, `report` and `compare` refuse a missing or
//! duplicated shard and lines of different runs, or summarize them marked partial under
//! `--allow-partial`; `run --output` refuses a file holding this run without `--resume` or
//! another run without `--append-run`; `compare` compares train and val each and gates on the
//! score split.

use crate::common::*;
use serde_json::{json, Value};

/// Scores `$SCORES`' word for the example's `i` (`{"i":2}` → the third word).
const EVAL: &str = "p=$(cat)\ni=$(printf '%s' \"$p\" | sed -n 's/.*\"i\":\\([0-9]*\\).*/\\1/p')\n\
                    set -- $SCORES\nshift \"$i\"\nprintf '{\"score\": %s}' \"$1\"\n";

/// 18 train examples (`i` 0..17) and 2 val examples (`i` 18, 19).
fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    let train: Vec<String> = (0..18).map(|i| json!({ "i": i }).to_string()).collect();
    sb.write("train.jsonl", train.join("\n") + "\n");
    sb.write("val.jsonl", "{\"i\":18}\n{\"i\":19}\n");
    sb
}

/// The scores of the scenario: base pools to 0.65 with val 1.0, new to 0.70 with val 0.
const BASE: &str = "1 1 1 1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 1 1";
const NEW: &str = "1 1 1 1 1 1 1 1 1 1 1 1 1 1 0 0 0 0 0 0";

/// `evalctl run` over the sandbox's dataset and valset with `SCORES=scores`, plus `extra`.
fn run(sb: &Sandbox, scores: &str, extra: &[&str]) -> assert_cmd::Command {
    let mut command = sb.evalctl();
    command
        .args([
            "run",
            "--format",
            "json",
            "--evaluator-command",
            "sh eval.sh",
        ])
        .args(["--dataset", "train.jsonl", "--valset", "val.jsonl"])
        .args(extra)
        .env("SCORES", scores);
    command
}

/// The run fingerprint the first line of `file` carries.
fn fingerprint(sb: &Sandbox, file: &str) -> String {
    sb.jsonl(file)[0]["run"]["fingerprint"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn every_line_names_its_run_shard_and_call_counts() {
    let sb = sandbox();
    succeeded(run(
        &sb,
        BASE,
        &["--candidate", "c", "--output", "all.jsonl"],
    ));
    for k in 0..2 {
        let shard = format!("{k}/2");
        let file = format!("s{k}.jsonl");
        let extra = ["--candidate", "c", "--shard", &shard, "--output", &file];
        succeeded(run(&sb, BASE, &extra));
    }
    let all = sb.jsonl("all.jsonl");
    let id = fingerprint(&sb, "all.jsonl");
    assert_eq!(id.len(), 16);
    let shard_sizes: Vec<usize> = (0..2)
        .map(|k| sb.lines(&format!("s{k}.jsonl")).len())
        .collect();
    for line in &all {
        let run = &line["run"];
        assert_eq!(run["fingerprint"], id.as_str());
        assert_eq!(
            (
                run["shard"].clone(),
                run["shard_calls"].clone(),
                run["plan_calls"].clone()
            ),
            (json!("0/1"), json!(20), json!(20))
        );
        assert_eq!(line["candidate_digest"].as_str().unwrap().len(), 16);
    }
    for (k, size) in shard_sizes.iter().enumerate() {
        for line in sb.jsonl(&format!("s{k}.jsonl")) {
            let run = &line["run"];
            assert_eq!(
                run["fingerprint"],
                id.as_str(),
                "shards share the fingerprint"
            );
            assert_eq!(run["shard"], format!("{k}/2").as_str());
            assert_eq!(run["shard_calls"], *size);
            assert_eq!(run["plan_calls"], 20);
        }
    }
    // Another candidate text is another run.
    succeeded(run(
        &sb,
        BASE,
        &["--candidate", "d", "--output", "other.jsonl"],
    ));
    assert_ne!(fingerprint(&sb, "other.jsonl"), id);
}

#[test]
fn compare_gates_on_the_val_score_split_by_split() {
    let sb = sandbox();
    succeeded(run(
        &sb,
        BASE,
        &["--candidate", "c", "--output", "base.jsonl"],
    ));
    succeeded(run(
        &sb,
        NEW,
        &["--candidate", "c", "--output", "new.jsonl"],
    ));
    let out = sb
        .evalctl()
        .args(["compare", "--format", "text", "base.jsonl", "new.jsonl"])
        .args(["--fail-on-regression", "0.02"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    assert_eq!(
        stdout_text(&out),
        "cand-1 train: 0.6111 -> 0.7778, +0.1667 (95% CI +0.0000 to +0.3333); 18 pairs: 3 wins, \
         15 ties, 0 losses\n\
         cand-1 val: 1.0000 -> 0.0000, -1.0000 (95% CI -1.0000 to -1.0000); 2 pairs: 0 wins, 0 \
         ties, 2 losses\n\
         \x20 regression: val #0 (line 1): 1.0000 -> 0.0000\n\
         \x20 regression: val #1 (line 2): 1.0000 -> 0.0000\n\
         exit 1: the val score dropped by more than --fail-on-regression 0.02: cand-1 -1.0000\n"
    );
    assert_eq!(
        stderr_text(&out),
        "exit 1: the val score dropped by more than --fail-on-regression 0.02: cand-1 -1.0000\n"
    );

    let out = sb
        .evalctl()
        .args(["compare", "--format", "json", "base.jsonl", "new.jsonl"])
        .args(["--fail-on-regression", "0.02"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    let comparison = json_stdout(&out);
    assert_eq!(comparison["score_split"], "val");
    assert_eq!(comparison["regressed"], json!(["cand-1"]));
    let c = &comparison["candidates"][0];
    assert_eq!(
        (
            c["split"].clone(),
            c["pairs"].clone(),
            c["difference"].clone()
        ),
        (json!("val"), json!(2), json!(-1.0))
    );
    assert_eq!(
        (c["base_mean"].clone(), c["new_mean"].clone()),
        (json!(1.0), json!(0.0))
    );
    let train = &c["splits"]["train"];
    assert_eq!(
        (
            train["pairs"].clone(),
            train["wins"].clone(),
            train["ties"].clone(),
            train["losses"].clone()
        ),
        (json!(18), json!(3), json!(15), json!(0))
    );
    assert_eq!(c["splits"]["val"]["difference"], -1.0);
    assert_eq!(
        (
            comparison["exit"].clone(),
            comparison["exit_reason"].clone()
        ),
        (
            json!(1),
            json!("the val score dropped by more than --fail-on-regression 0.02: cand-1 -1.0000")
        )
    );
    assert_eq!(
        comparison["verdict"],
        "exit 1: the val score dropped by more than --fail-on-regression 0.02: cand-1 -1.0000"
    );

    // The other way round, the val score rose: the gate passes, whatever train did.
    let out = succeeded(
        sb.evalctl()
            .args(["compare", "--format", "text", "new.jsonl", "base.jsonl"])
            .args(["--fail-on-regression", "0.02"]),
    );
    assert!(stdout_text(&out).ends_with(
        "exit 0: no candidate's val score dropped by more than --fail-on-regression 0.02 (1 of 1 \
         candidates compared)\n"
    ));
}

#[test]
fn compare_refuses_runs_whose_evaluator_or_inputs_differ_unless_allowed() {
    let sb = sandbox();
    succeeded(run(
        &sb,
        BASE,
        &["--candidate", "c", "--output", "base.jsonl"],
    ));
    sb.write("eval2.sh", format!("# version 2\n{EVAL}"));
    let out = sb
        .evalctl()
        .args([
            "run",
            "--format",
            "json",
            "--evaluator-command",
            "sh eval2.sh",
        ])
        .args([
            "--dataset",
            "train.jsonl",
            "--valset",
            "val.jsonl",
            "--limit",
            "5",
        ])
        .args(["--candidate", "c", "--output", "new.jsonl"])
        .env("SCORES", NEW)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    let (base_id, new_id) = (
        fingerprint(&sb, "base.jsonl"),
        fingerprint(&sb, "new.jsonl"),
    );
    let digest = |file: &str, field: &str| {
        sb.jsonl(file)[0]["run"][field]
            .as_str()
            .unwrap()
            .to_string()
    };
    let problems = [
        format!(
            "base.jsonl, new.jsonl: the runs' evaluators differ (base.jsonl: run {base_id}, 20 \
             calls, command `sh eval.sh`, evaluator {}; new.jsonl: run {new_id}, 7 calls, command \
             `sh eval2.sh`, evaluator {}): their scores are not comparable; pass \
             --allow-different-inputs if this is intended",
            digest("base.jsonl", "evaluator_digest"),
            digest("new.jsonl", "evaluator_digest"),
        ),
        format!(
            "base.jsonl, new.jsonl: the runs' inputs differ (dataset and valset examples: \
             base.jsonl: 20 calls, inputs {}; new.jsonl: 7 calls, inputs {}): pass \
             --allow-different-inputs if this is intended",
            digest("base.jsonl", "inputs_digest"),
            digest("new.jsonl", "inputs_digest"),
        ),
    ];
    let out = sb
        .evalctl()
        .args(["compare", "--format", "text", "base.jsonl", "new.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        format!("error: {}\nerror: {}\n", problems[0], problems[1])
    );
    assert_eq!(stdout_text(&out), "");
    let out = sb
        .evalctl()
        .args(["compare", "--format", "json", "base.jsonl", "new.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        json_stdout(&out),
        json!({"ok": false, "exit": 2, "errors": problems})
    );

    let out = succeeded(
        sb.evalctl()
            .args(["compare", "--format", "json", "base.jsonl", "new.jsonl"])
            .arg("--allow-different-inputs"),
    );
    assert_eq!(json_stdout(&out)["unpaired"], json!({"base": 13, "new": 0}));
    assert_eq!(
        stderr_text(&out),
        "warning: 13 of 20 calls in base.jsonl and 0 of 7 calls in new.jsonl are in one run \
         only: they are not compared; with most calls unpaired, these are probably not two runs \
         of the same candidates and examples: check the files\n"
    );
}

#[test]
fn merge_refuses_a_missing_shard_and_allow_partial_marks_every_format() {
    let sb = sandbox();
    for k in 0..3 {
        let shard = format!("{k}/3");
        let file = format!("s{k}.jsonl");
        let extra = [
            "--candidate",
            "c",
            "--candidate",
            "d",
            "--shard",
            &shard,
            "--output",
            &file,
        ];
        succeeded(run(&sb, BASE, &extra));
    }
    let id = fingerprint(&sb, "s0.jsonl");
    let absent = sb.lines("s2.jsonl").len();
    for command in ["merge", "summarize"] {
        let out = sb
            .evalctl()
            .args([command, "--format", "json", "s0.jsonl", "s1.jsonl"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 2);
        assert_eq!(
            stderr_text(&out),
            format!(
                "error: s0.jsonl, s1.jsonl: shard 2/3 missing: {absent} of 40 calls absent (run \
                 {id}): pass every shard's file, or --allow-partial to summarize what is there\n"
            )
        );
        assert_eq!(
            json_stdout(&out)["errors"][0],
            format!(
                "s0.jsonl, s1.jsonl: shard 2/3 missing: {absent} of 40 calls absent (run {id}): \
                 pass every shard's file, or --allow-partial to summarize what is there"
            )
        );
    }
    let description = format!("shard 2/3 missing: {absent} of 40 calls absent");

    let out = succeeded(sb.evalctl().args([
        "merge",
        "--format",
        "json",
        "--allow-partial",
        "s0.jsonl",
        "s1.jsonl",
        "--junit",
        "r.xml",
    ]));
    let summary = json_stdout(&out);
    assert_eq!(
        summary["partial"],
        json!({"missing_calls": absent, "plan_calls": 40, "missing_shards": ["2/3"],
               "description": description})
    );
    assert_eq!(summary["calls"]["total"], 40 - absent);
    assert!(sb.read("r.xml").contains(&format!(
        "<testsuite name=\"partial\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\" \
         time=\"0.000\">\n    <testcase name=\"missing calls\" classname=\"partial\" \
         time=\"0.000\">\n      <skipped message=\"partial: {description}\"/>\n"
    )));

    let out = succeeded(sb.evalctl().args([
        "merge",
        "--format",
        "text",
        "--allow-partial",
        "s0.jsonl",
        "s1.jsonl",
    ]));
    let text = stdout_text(&out);
    let second = text.lines().nth(2).unwrap();
    assert_eq!(second, format!("partial: {description}"), "{text}");

    let out = succeeded(sb.evalctl().args([
        "merge",
        "--format",
        "markdown",
        "--allow-partial",
        "s0.jsonl",
        "s1.jsonl",
    ]));
    assert!(
        stdout_text(&out).contains(&format!("\n**Partial:** {description}\n")),
        "{}",
        stdout_text(&out)
    );

    // The HTML report refuses the shard alone, and marks it partial when allowed.
    let out = sb
        .evalctl()
        .args(["report", "s0.jsonl", "-o", "r.html"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    let missing = 40 - sb.lines("s0.jsonl").len();
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: s0.jsonl: shards 1/3, 2/3 missing: {missing} of 40 calls absent (run {id}): \
             pass every shard's file, or --allow-partial to summarize what is there\n"
        )
    );
    succeeded(
        sb.evalctl()
            .args(["report", "--allow-partial", "s0.jsonl", "-o", "r.html"]),
    );
    assert!(sb.read("r.html").contains(&format!(
        "\"description\":\"shards 1/3, 2/3 missing: {missing} of 40 calls absent\""
    )));

    // Every shard: no refusal, nothing partial.
    let out = succeeded(sb.evalctl().args([
        "merge", "--format", "json", "s0.jsonl", "s1.jsonl", "s2.jsonl",
    ]));
    assert_eq!(json_stdout(&out).get("partial"), None);
}

#[test]
fn merge_refuses_a_duplicated_shard_and_shards_of_another_run() {
    let sb = sandbox();
    for (k, text) in [(0, "first"), (1, "first"), (1, "second")] {
        let shard = format!("{k}/2");
        let file = format!("{text}-{k}.jsonl");
        let extra = ["--candidate", text, "--shard", &shard, "--output", &file];
        succeeded(run(&sb, BASE, &extra));
    }
    std::fs::copy(sb.join("first-1.jsonl"), sb.join("copy-1.jsonl")).unwrap();
    let first = fingerprint(&sb, "first-0.jsonl");
    let second = fingerprint(&sb, "second-1.jsonl");
    let lines = |file: &str| sb.lines(file).len();

    let out = sb
        .evalctl()
        .args([
            "merge",
            "--format",
            "json",
            "first-0.jsonl",
            "first-1.jsonl",
            "copy-1.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: first-1.jsonl, copy-1.jsonl: shard 1/2 of run {first} is in 2 files: pass \
             each shard's file once\n"
        )
    );
    // The same file named twice is said to be that.
    let out = sb
        .evalctl()
        .args([
            "merge",
            "--format",
            "json",
            "first-0.jsonl",
            "first-1.jsonl",
        ])
        .arg("first-1.jsonl")
        .output()
        .unwrap();
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            2,
            "error: first-1.jsonl: given twice: pass each file once\n".to_string()
        )
    );
    // However it is named, in merge and in the report, which would count its calls twice.
    for command in [
        &["merge", "--format", "json"][..],
        &["report", "-o", "twice.html"],
    ] {
        let out = sb
            .evalctl()
            .args(command)
            .args(["first-0.jsonl", "first-1.jsonl", "./first-1.jsonl"])
            .output()
            .unwrap();
        assert_eq!(
            (code(&out), stderr_text(&out)),
            (
                2,
                "error: ./first-1.jsonl: given twice: pass each file once\n".to_string()
            ),
            "{command:?}"
        );
    }
    assert!(!sb.exists("twice.html"));

    // The same run split two ways. A call's key holds the sandbox's path, so which calls a
    // shard gets changes from one test run to the next, and a shard of three may get none of
    // the 20: the last shard of three that got some is merged.
    let k = (0..3)
        .rev()
        .find(|k| {
            let (shard, file) = (format!("{k}/3"), format!("third-{k}.jsonl"));
            let extra = ["--candidate", "first", "--shard", &shard, "--output", &file];
            succeeded(run(&sb, BASE, &extra));
            !sb.lines(&file).is_empty()
        })
        .expect("some shard of three has some of the 20 calls");
    let third = format!("third-{k}.jsonl");
    let out = sb
        .evalctl()
        .args(["merge", "--format", "text", "first-0.jsonl", &third])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: first-0.jsonl, {third}: run {first} is split into different numbers of \
             shards: 0/2 in first-0.jsonl; {k}/3 in {third}\n"
        )
    );

    // Same candidate id, another text: the 63 / 0 examples of a 50-example dataset, refused.
    let out = sb
        .evalctl()
        .args([
            "merge",
            "--format",
            "json",
            "first-0.jsonl",
            "second-1.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: second-1.jsonl: lines of different runs: run {second} ({} lines in \
             second-1.jsonl; shard 1/2), beside run {first} ({} lines in first-0.jsonl; shard \
             0/2): candidate cand-1 has two different texts; pass the files of one run, or \
             choose one with --run ({first} or {second})\n",
            lines("second-1.jsonl"),
            lines("first-0.jsonl"),
        )
    );
}

#[test]
fn output_never_mixes_runs_silently() {
    let sb = sandbox();
    let first = ["--candidate", "c", "--output", "r.jsonl"];
    succeeded(run(&sb, BASE, &first));
    let id = fingerprint(&sb, "r.jsonl");

    // The same run again without --resume: refused before any call.
    let out = run(&sb, BASE, &first).output().unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: r.jsonl: already holds 20 lines of this run (run {id}): pass --resume to \
             continue it, or name another --output file\n"
        )
    );
    assert_eq!(
        json_stdout(&out)["errors"][0],
        format!(
            "r.jsonl: already holds 20 lines of this run (run {id}): pass --resume to continue \
             it, or name another --output file"
        )
    );
    assert_eq!(sb.lines("r.jsonl").len(), 20);
    succeeded(run(
        &sb,
        BASE,
        &["--candidate", "c", "--output", "r.jsonl", "--resume"],
    ));
    assert_eq!(sb.lines("r.jsonl").len(), 20);

    // Another prompt text into the same file: refused, whether resuming or not.
    let other = ["--candidate", "other prompt", "--output", "r.jsonl"];
    let out = run(&sb, NEW, &other).output().unwrap();
    assert_eq!(code(&out), 2);
    let stderr = stderr_text(&out);
    let other_id = stderr
        .split("this one is run ")
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap()
        .to_string();
    let refusal = format!(
        "error: r.jsonl: holds 20 lines not of this run (run {id}: its candidates or --repeat \
         differ; this one is run {other_id}): name another --output file, or pass --append-run to add this run beside them \
         (summarize, merge and report then take one run at a time: --run ID)\n"
    );
    assert_eq!(stderr, refusal);
    let out = run(&sb, NEW, &[&other[..], &["--resume"]].concat())
        .output()
        .unwrap();
    assert_eq!((code(&out), stderr_text(&out)), (2, refusal));
    assert_eq!(sb.lines("r.jsonl").len(), 20);

    // --append-run adds it; the summaries tell the runs apart.
    let out = succeeded(run(&sb, NEW, &[&other[..], &["--append-run"]].concat()));
    assert_eq!(json_stdout(&out)["calls"]["total"], 20);
    assert_eq!(sb.lines("r.jsonl").len(), 40);
    let out = summarize(&sb, &["r.jsonl"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: r.jsonl: lines of different runs: run {other_id} (20 lines in r.jsonl; \
             shard 0/1), beside run {id} (20 lines in r.jsonl; shard 0/1): candidate cand-1 has \
             two different texts; pass the files of one run, or choose one with --run ({id} or \
             {other_id})\n"
        )
    );
    for (run_id, score) in [(&id, 1.0), (&other_id, 0.0)] {
        let out = succeeded(sb.evalctl().args([
            "summarize",
            "--format",
            "json",
            "r.jsonl",
            "--run",
            &run_id[..6],
        ]));
        let summary = json_stdout(&out);
        assert_eq!(summary["calls"]["total"], 20, "n is one run's, not both");
        assert_eq!(summary["candidates"][0]["score"], score);
    }
    // compare takes one run of the file as base, another as new.
    let out = sb
        .evalctl()
        .args(["compare", "--format", "json", "r.jsonl", "r.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(
        stderr_text(&out).ends_with(&format!(
            "or choose one with --base-run ({id} or {other_id})\n"
        )),
        "{}",
        stderr_text(&out)
    );
    let out = succeeded(sb.evalctl().args([
        "compare",
        "--format",
        "json",
        "r.jsonl",
        "r.jsonl",
        "--base-run",
        &id,
        "--new-run",
        &other_id,
    ]));
    let comparison = json_stdout(&out);
    assert_eq!(comparison["candidates"][0]["split"], "val");
    assert_eq!(comparison["candidates"][0]["difference"], -1.0);
    assert_eq!(comparison["unpaired"], json!({"base": 0, "new": 0}));

    let out = summarize(&sb, &["r.jsonl", "--run", ""]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: r.jsonl: --run : names several runs (run {id} (20 lines in r.jsonl; shard \
             0/1); run {other_id} (20 lines in r.jsonl; shard 0/1)); give more of the id\n"
        )
    );
    let out = summarize(&sb, &["r.jsonl", "--run", "zz"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: r.jsonl: --run zz: no line of such a run; the lines are of run {id} (20 lines \
             in r.jsonl; shard 0/1); run {other_id} (20 lines in r.jsonl; shard 0/1)\n"
        )
    );
}

#[test]
fn lines_without_a_fingerprint_are_one_unsharded_run_and_absent_calls_are_partial() {
    let sb = sandbox();
    succeeded(run(&sb, BASE, &["--candidate", "c", "--output", "r.jsonl"]));
    let mut lines = sb.jsonl("r.jsonl");
    // An interrupted run: two calls have no line. Summarized and marked partial, not refused;
    // the summary fails (as a missing shard is refused) unless --allow-partial.
    sb.write(
        "cut.jsonl",
        lines[2..]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    );
    let out = summarize(&sb, &["cut.jsonl"]);
    assert_eq!(code(&out), 1);
    let summary = json_stdout(&out);
    assert_eq!(
        (
            &summary["partial"]["description"],
            &summary["gates"]["complete"],
            &summary["exit_reason"]
        ),
        (
            &json!("2 of 20 calls absent"),
            &json!({"missing_calls": 2, "plan_calls": 20, "passed": false}),
            &json!(
                "2 of 20 calls absent: the run did not finish (run --resume completes it; \
                 --allow-partial summarizes what is there); all 18 calls succeeded"
            )
        )
    );
    let out = succeeded(sb.evalctl().args([
        "summarize",
        "--format",
        "json",
        "--allow-partial",
        "cut.jsonl",
    ]));
    let summary = json_stdout(&out);
    assert_eq!(
        (
            &summary["partial"]["description"],
            &summary["gates"].get("complete"),
            &summary["exit_reason"]
        ),
        (
            &json!("2 of 20 calls absent"),
            &None,
            &json!("all 18 calls succeeded")
        )
    );

    // An older evalctl's lines: no fingerprint, no shard. Read as one unsharded run, said so.
    for line in &mut lines {
        let run = line["run"].as_object_mut().unwrap();
        for field in [
            "fingerprint",
            "evaluator_digest",
            "inputs_digest",
            "shard",
            "shard_calls",
            "plan_calls",
        ] {
            run.remove(field);
        }
        line.as_object_mut().unwrap().remove("candidate_digest");
    }
    sb.write(
        "old.jsonl",
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    );
    let out = succeeded(
        sb.evalctl()
            .args(["summarize", "--format", "json", "old.jsonl"]),
    );
    let summary: Value = json_stdout(&out);
    assert_eq!(summary["calls"]["total"], 20);
    assert_eq!(summary.get("partial"), None);
    assert_eq!(
        stderr_text(&out),
        "note: old.jsonl: the lines carry no run fingerprint (written by an older evalctl): \
         read as one unsharded run; runs and shards are not checked\n"
    );
    // A journal an older evalctl began, resumed by this one: one run, said so.
    sb.write(
        "half.jsonl",
        lines[..10]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    );
    succeeded(run(
        &sb,
        BASE,
        &["--candidate", "c", "--output", "half.jsonl", "--resume"],
    ));
    assert_eq!(sb.lines("half.jsonl").len(), 20);
    let id = sb.jsonl("half.jsonl")[19]["run"]["fingerprint"]
        .as_str()
        .unwrap()
        .to_string();
    let out = succeeded(
        sb.evalctl()
            .args(["summarize", "--format", "json", "half.jsonl"]),
    );
    let summary = json_stdout(&out);
    assert_eq!(summary["calls"]["total"], 20);
    assert_eq!(summary.get("partial"), None);
    assert_eq!(
        stderr_text(&out),
        format!(
            "note: half.jsonl: 10 lines without a run fingerprint (an older evalctl's) counted \
             with run {id}: same evaluator, splits and candidates\n"
        )
    );
}

#[test]
fn an_output_file_that_is_not_a_results_file_is_refused() {
    let sb = sandbox();
    succeeded(run(
        &sb,
        BASE,
        &["--candidate", "c", "--output", "probe.jsonl"],
    ));
    let id = fingerprint(&sb, "probe.jsonl");
    sb.write("notes.jsonl", "my notes\n");
    let out = run(&sb, BASE, &["--candidate", "c", "--output", "notes.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    // A file without a result line is no run to add this one beside: --append-run is not
    // offered.
    assert_eq!(
        stderr_text(&out),
        "error: notes.jsonl: is not a results file (1 line and no result line): name another \
         --output file\n"
    );
    assert_eq!(sb.read("notes.jsonl"), "my notes\n");
    // Beside result lines of another run, a line that is not one counts with them.
    let probe = format!("{}my notes\n", sb.read("probe.jsonl"));
    sb.write("notes.jsonl", &probe);
    let out = run(&sb, BASE, &["--candidate", "d", "--output", "notes.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    succeeded(run(&sb, BASE, &["--candidate", "d", "--output", "d.jsonl"]));
    let id2 = fingerprint(&sb, "d.jsonl");
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: notes.jsonl: holds 21 lines not of this run (run {id}: its candidates or \
             --repeat differ; 1 line that is not a result line; this one is run {id2}): name another --output file, or pass \
             --append-run to add this run beside them (summarize, merge and report then take \
             one run at a time: --run ID)\n"
        )
    );
    assert_eq!(sb.read("notes.jsonl"), probe);
}

#[test]
fn an_output_holding_only_a_torn_first_line_points_at_resume() {
    let sb = sandbox();
    sb.write(
        "torn.jsonl",
        "{\"key\":\"abc\",\"candidate_id\":\"c\",\"spl",
    );
    let out = run(&sb, BASE, &["--candidate", "c", "--output", "torn.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        "error: torn.jsonl: holds only a line cut short (a run stopped while writing its first \
         result?): pass --resume to drop it and continue that run, or name another --output \
         file\n"
    );
    succeeded(run(
        &sb,
        BASE,
        &["--candidate", "c", "--output", "torn.jsonl", "--resume"],
    ));
    assert!(sb
        .jsonl("torn.jsonl")
        .iter()
        .all(|line| line["candidate_id"] == "cand-1"));
}

#[test]
fn a_dataset_given_as_results_is_one_problem_per_file() {
    let sb = sandbox();
    let out = sb
        .evalctl()
        .args(["summarize", "--format", "text", "train.jsonl", "val.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        "error: train.jsonl:1: not a result line: expected a `run --output` result line \
         (candidate_id, split, score, ...)\n\
         error: val.jsonl:1: not a result line: expected a `run --output` result line \
         (candidate_id, split, score, ...)\n"
    );
}

/// `evalctl summarize --format json ARGS` in the sandbox.
fn summarize(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.evalctl()
        .args(["summarize", "--format", "json"])
        .args(args)
        .output()
        .unwrap()
}

/// A run's whole journal `r.jsonl`, and what a SIGKILL in the middle of its last write leaves
/// (the last line without its end), with the length of that torn line.
fn journal_and_torn_copy(sb: &Sandbox) -> (String, String, usize) {
    succeeded(run(sb, BASE, &["--candidate", "c", "--output", "r.jsonl"]));
    let whole = sb.read("r.jsonl");
    let torn = whole[..whole.len() - 40].to_string();
    let bytes = torn.len() - torn.rfind('\n').unwrap() - 1;
    (whole, torn, bytes)
}

#[test]
fn a_last_line_a_killed_run_cut_short_is_left_out_with_a_note() {
    let sb = sandbox();
    let (whole, torn, bytes) = journal_and_torn_copy(&sb);
    let torn = torn.as_str();
    sb.write("torn.jsonl", torn);
    let note = format!(
        "note: torn.jsonl:20: the last line was cut short by an interrupted run ({bytes} bytes): \
         left out (run --resume completes the run)\n"
    );
    let out = summarize(&sb, &["torn.jsonl"]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stderr_text(&out),
        format!(
            "{note}exit 1: 1 of 20 calls absent: the run did not finish (run --resume completes \
             it; --allow-partial summarizes what is there); all 19 calls succeeded\n"
        )
    );
    assert_eq!(json_stdout(&out)["calls"]["total"], 19);
    let out =
        succeeded(
            sb.evalctl()
                .args(["report", "torn.jsonl", "-o", "r.html", "--format", "text"]),
        );
    assert_eq!(stderr_text(&out), note);
    assert_eq!(
        stdout_text(&out).split_once(", ").map(|(head, _)| head),
        Some("wrote r.html: 19 results (0 failed) from 1 file")
    );
    // Cut in the middle of a character, it is the same torn line.
    let mut cut = torn.as_bytes().to_vec();
    cut.push(0xC3);
    sb.write("cut.jsonl", &cut);
    let out = sb
        .evalctl()
        .args([
            "summarize",
            "--format",
            "json",
            "--allow-partial",
            "cut.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            0,
            format!(
                "note: cut.jsonl:20: the last line was cut short by an interrupted run ({} \
                 bytes): left out (run --resume completes the run)\n",
                bytes + 1
            )
        )
    );
    // A file holding nothing but such a line has nothing to summarize.
    let first = whole.lines().next().unwrap();
    sb.write("only.jsonl", &first[..first.len() / 2]);
    let out = sb
        .evalctl()
        .args(["summarize", "--format", "text", "only.jsonl"])
        .output()
        .unwrap();
    let only = format!(
        "error: only.jsonl:1: the last line was cut short by an interrupted run ({} bytes): left \
         out (run --resume completes the run)\n",
        first.len() / 2
    );
    assert_eq!((code(&out), stderr_text(&out)), (2, only.clone()));
    // The report says it alike.
    let out = sb
        .evalctl()
        .args([
            "report",
            "only.jsonl",
            "-o",
            "only.html",
            "--format",
            "text",
        ])
        .output()
        .unwrap();
    assert_eq!((code(&out), stderr_text(&out)), (2, only));
    // A line cut after its first byte is one byte long.
    sb.write(
        "brace.jsonl",
        format!("{}{{", &torn[..=torn.rfind('\n').unwrap()]),
    );
    let out = sb
        .evalctl()
        .args([
            "summarize",
            "--format",
            "json",
            "--allow-partial",
            "brace.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            0,
            "note: brace.jsonl:20: the last line was cut short by an interrupted run (1 byte): \
             left out (run --resume completes the run)\n"
                .to_string()
        )
    );
}

#[test]
fn a_run_is_not_appended_after_a_line_cut_short() {
    let sb = sandbox();
    let (whole, torn, bytes) = journal_and_torn_copy(&sb);
    let torn = torn.as_str();
    sb.write("r.jsonl", torn);
    // Another run beside those lines would begin on the torn line and break both.
    let out = run(
        &sb,
        BASE,
        &["--candidate", "d", "--output", "r.jsonl", "--append-run"],
    )
    .output()
    .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: r.jsonl: line 20 was cut short by an interrupted run ({bytes} bytes): pass \
             --resume to drop it and continue that run, or name another --output file\n"
        )
    );
    assert_eq!(sb.read("r.jsonl"), torn);
    // A whole last line without its newline would be joined the same way.
    sb.write("whole.jsonl", whole.trim_end());
    let out = run(
        &sb,
        BASE,
        &[
            "--candidate",
            "d",
            "--output",
            "whole.jsonl",
            "--append-run",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            2,
            "error: whole.jsonl: its last line has no closing newline: pass --resume to \
             continue that run (a whole line is kept), or name another --output file\n"
                .to_string()
        )
    );
    // Its own run resumes: the line is dropped and made again.
    succeeded(run(
        &sb,
        BASE,
        &["--candidate", "c", "--output", "r.jsonl", "--resume"],
    ));
    assert_eq!(sb.jsonl("r.jsonl").len(), 20);
}

#[test]
fn a_resume_after_the_evaluator_changed_is_refused_naming_what_differs() {
    let sb = sandbox();
    succeeded(run(&sb, BASE, &["--candidate", "c", "--output", "r.jsonl"]));
    let id = fingerprint(&sb, "r.jsonl");
    // The evaluator script is edited: its calls are not this run's, whose keys it is part of.
    sb.write("eval.sh", format!("{EVAL}# fixed\n"));
    let out = run(
        &sb,
        BASE,
        &["--candidate", "c", "--output", "r.jsonl", "--resume"],
    )
    .output()
    .unwrap();
    assert_eq!(code(&out), 2);
    let stderr = stderr_text(&out);
    assert!(
        stderr.starts_with(&format!(
            "error: r.jsonl: holds 20 lines not of this run (run {id}: its evaluator or task \
             models differ; this one is run "
        )),
        "{stderr}"
    );
}

#[test]
fn an_appended_run_resumes_only_its_own_lines() {
    let sb = sandbox();
    let two = |second: &'static str| {
        [
            "--candidate",
            "c",
            "--candidate",
            second,
            "--output",
            "r.jsonl",
        ]
    };
    succeeded(run(&sb, BASE, &two("d")));
    let first = fingerprint(&sb, "r.jsonl");
    // Another run beside it shares candidate c's calls (the same keys), not its run: resuming it
    // makes every one of its own calls, so that its lines are complete; resumed again, it is
    // whole.
    let resumed = |done: usize| {
        let out = run(
            &sb,
            BASE,
            &[&two("e")[..], &["--append-run", "--resume"]].concat(),
        )
        .output()
        .unwrap();
        assert_eq!(
            (code(&out), stderr_text(&out)),
            (
                0,
                format!(
                    "warning: r.jsonl: ignoring 40 lines of other runs (another configuration: a \
                     different evaluator, inputs, candidates, score range or task model)\n\
                     resuming r.jsonl: {done} of 40 calls already done, {} to make\n",
                    40 - done
                )
            )
        );
    };
    resumed(0);
    let lines = sb.jsonl("r.jsonl");
    assert_eq!(lines.len(), 80);
    let second = lines[79]["run"]["fingerprint"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(first, second);
    let summary = summarize(&sb, &["r.jsonl", "--run", &second]);
    assert_eq!(code(&summary), 0, "{}", stderr_text(&summary));
    let summary: Value = serde_json::from_slice(&summary.stdout).unwrap();
    assert_eq!(summary["calls"]["total"], 40);
    assert_eq!(summary["partial"], Value::Null);
    resumed(40);
}

#[test]
fn an_empty_file_among_the_shards_is_said_to_add_nothing() {
    let sb = sandbox();
    for k in 0..2 {
        let (shard, file) = (format!("{k}/2"), format!("s{k}.jsonl"));
        succeeded(run(
            &sb,
            BASE,
            &["--candidate", "c", "--shard", &shard, "--output", &file],
        ));
    }
    sb.write("empty.jsonl", "");
    let with_empty = succeeded(sb.evalctl().args([
        "merge",
        "--format",
        "json",
        "s0.jsonl",
        "empty.jsonl",
        "s1.jsonl",
    ]));
    assert_eq!(
        stderr_text(&with_empty),
        "note: empty.jsonl: no result lines: it adds nothing\n"
    );
    let without = succeeded(
        sb.evalctl()
            .args(["merge", "--format", "json", "s0.jsonl", "s1.jsonl"]),
    );
    assert_eq!(json_stdout(&with_empty), json_stdout(&without));
}
