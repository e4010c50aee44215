//! `run --cache` through the binary, with an evaluator that records its calls: a hit makes no
//! call and is marked `cached`, an edited script misses, errors are never cached, and
//! `evalctl cache stats|clear` count what is stored.

use crate::common;

use crate::common::{json_stdout, succeeded, Sandbox};

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
