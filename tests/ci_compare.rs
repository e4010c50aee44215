//! `evalctl compare` through the binary: two runs paired call by call (and example by example
//! across unequal repeats), per-candidate mean difference with a paired-bootstrap interval,
//! win / tie / loss counts, the largest regressions with their example lines, and `--fail-on-regression`; the Markdown comparison (`--format
//! markdown`) and its copy appended to `$GITHUB_STEP_SUMMARY`.

use crate::common::*;
use serde_json::json;

/// Scores `$SCORES`' word for the example's `i` (`{"i":2}` → the third word).
const EVAL: &str = "p=$(cat)\ni=$(printf '%s' \"$p\" | sed -n 's/.*\"i\":\\([0-9]*\\).*/\\1/p')\n\
                    set -- $SCORES\nshift \"$i\"\nprintf '{\"score\": %s}' \"$1\"\n";

fn run(sb: &Sandbox, scores: &str, output: &str) {
    run_with(sb, scores, output, &[]);
}

/// [`run`] with `extra` flags.
fn run_with(sb: &Sandbox, scores: &str, output: &str, extra: &[&str]) {
    succeeded(&mut run_command(sb, scores, output, extra));
}

/// The `evalctl run` of [`run_with`], to run.
fn run_command(sb: &Sandbox, scores: &str, output: &str, extra: &[&str]) -> assert_cmd::Command {
    let mut command = sb.evalctl();
    command
        .args([
            "run",
            "--format",
            "json",
            "--evaluator-command",
            "sh eval.sh",
        ])
        .args([
            "--candidate",
            "c",
            "--dataset",
            "d.jsonl",
            "--output",
            output,
        ])
        .args(extra)
        .env("SCORES", scores);
    command
}

#[test]
fn compare_pairs_calls_and_gates_on_regressions() {
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n{\"i\":3}\n");
    run(&sb, "1 1 0.5 0", "base.jsonl");
    run(&sb, "1 0 0.5 0.5", "new.jsonl");
    let out =
        succeeded(
            sb.evalctl()
                .args(["compare", "--format", "json", "base.jsonl", "new.jsonl"]),
        );
    let comparison = json_stdout(&out);
    let c = &comparison["candidates"][0];
    assert_eq!(c["id"], "cand-1");
    assert_eq!(c["pairs"], 4);
    assert_eq!(c["difference"], -0.125);
    assert_eq!(
        (c["wins"].clone(), c["ties"].clone(), c["losses"].clone()),
        (1.into(), 2.into(), 1.into())
    );
    assert_eq!(
        c["regressions"],
        serde_json::json!([{"split": "train", "example_index": 1, "example_line": 2, "base": 1.0, "new": 0.0}])
    );
    assert_eq!(c["ci95"], serde_json::json!([-0.75, 0.375]));
    assert_eq!(
        comparison["unpaired"],
        serde_json::json!({"base": 0, "new": 0})
    );

    let out = sb
        .evalctl()
        .args(["compare", "--format", "text", "base.jsonl", "new.jsonl"])
        .args(["--fail-on-regression", "0.1"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    // The interval is the default seed's paired bootstrap.
    assert_eq!(
        stdout_text(&out),
        "cand-1 train: 0.6250 -> 0.5000, -0.1250 (95% CI -0.7500 to +0.3750); 4 pairs: 1 win, \
         2 ties, 1 loss\n  regression: train #1 (line 2): 1.0000 -> 0.0000\nexit 1: the train score \
         dropped by more than --fail-on-regression 0.1: cand-1 -0.1250\n"
    );
    assert_eq!(
        stderr_text(&out),
        "exit 1: the train score dropped by more than --fail-on-regression 0.1: cand-1 -0.1250\n"
    );
    let out = sb
        .evalctl()
        .args(["compare", "--format", "json", "base.jsonl", "new.jsonl"])
        .args(["--fail-on-regression", "0.2"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0);
}

#[test]
fn the_markdown_comparison_is_appended_to_the_step_summary_whatever_the_format() {
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n");
    run(&sb, "1 0.5", "base.jsonl");
    run(&sb, "0 0.5", "new.jsonl");
    let markdown = stdout_text(&succeeded(sb.evalctl().args([
        "compare",
        "--format",
        "markdown",
        "base.jsonl",
        "new.jsonl",
    ])));
    assert_eq!(
        markdown,
        "### evalctl compare: ✅ passed (exit 0)\n\nbase.jsonl → new.jsonl · no \
         --fail-on-regression gate\n\n#### cand-1\n\n\
         | split | pairs | base mean | new mean | difference | 95% CI | wins / ties / losses |\n\
         |---|---|---|---|---|---|---|\n\
         | train (score) | 2 | 0.7500 | 0.2500 | -0.5000 | -1.0000 to +0.0000 | 0 / 1 / 1 |\n\n\
         Largest regressions:\n\n\
         | example | base | new | difference |\n\
         |---|---|---|---|\n\
         | train #0 (line 1) | 1.0000 | 0.0000 | -1.0000 |\n\n\
         exit 0: no --fail-on-regression gate: the train score rose for 0, fell for 1 and held for \
         0 of 1 candidates\n"
    );

    sb.write("step.md", "earlier\n");
    let out = succeeded(
        sb.evalctl()
            .args(["compare", "--format", "json", "base.jsonl", "new.jsonl"])
            .env("GITHUB_STEP_SUMMARY", sb.join("step.md")),
    );
    assert_eq!(json_stdout(&out)["candidates"][0]["difference"], -0.5);
    assert_eq!(sb.read("step.md"), format!("earlier\n{markdown}\n"));

    // A step summary that cannot be written is a warning; the comparison and exit stand.
    let out = succeeded(
        sb.evalctl()
            .args(["compare", "--format", "json", "base.jsonl", "new.jsonl"])
            .env("GITHUB_STEP_SUMMARY", sb.path()),
    );
    assert!(
        stderr_text(&out).starts_with(&format!(
            "warning: GITHUB_STEP_SUMMARY: cannot append to {}: ",
            sb.path().display()
        )),
        "{}",
        stderr_text(&out)
    );
}

/// Scores the calls of a run in the order they are made (`-j 1`) with `$SCORES`' words.
const IN_TURN: &str = "cat >/dev/null\nn=$(cat count 2>/dev/null || echo 0)\n\
                       echo $((n + 1)) > count\nset -- $SCORES\nshift \"$n\"\n\
                       printf '{\"score\": %s}' \"$1\"\n";

fn run_in_turn(sb: &Sandbox, scores: &str, output: &str, extra: &[&str]) {
    std::fs::remove_file(sb.join("count")).ok();
    succeeded(
        sb.evalctl()
            .args(["run", "--format", "json", "--skip-preflight", "-j", "1"])
            .args(["--evaluator-command", "sh in_turn.sh", "--candidate", "c"])
            .args(["--output", output])
            .args(extra)
            .env("SCORES", scores),
    );
}

#[test]
fn compare_gives_each_run_the_mean_run_gave_it_to_the_last_bit_under_repeat() {
    // Two examples of three repeats: their means' mean (0.4666666666666667) is not the calls'
    // mean (0.46666666666666673), which is the one run prints.
    let sb = Sandbox::new();
    sb.write("in_turn.sh", IN_TURN);
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n");
    let repeated = ["--dataset", "d.jsonl", "--repeat", "3"];
    run_in_turn(&sb, "0.7 0.8 0.1 0.0 0.8 0.4", "r.jsonl", &repeated);
    let summary = json_stdout(&succeeded(sb.evalctl().args([
        "summarize",
        "r.jsonl",
        "--format",
        "json",
    ])));
    let compared = json_stdout(&succeeded(
        sb.evalctl()
            .args(["compare", "r.jsonl", "r.jsonl", "--format", "json"]),
    ));
    let mean = &summary["candidates"][0]["train"]["mean"];
    assert_eq!(
        (mean, &compared["candidates"][0]["base_mean"]),
        (&json!(0.46666666666666673), mean)
    );
}

#[test]
fn a_mean_of_equal_scores_is_that_score_with_no_spread() {
    // 0.7 + 0.7 + 0.7 is 2.0999999999999996: a third of it is below every score.
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n");
    let out = run_command(&sb, "0.7 0.7 0.7", "r.jsonl", &[])
        .output()
        .unwrap();
    let train = &json_stdout(&out)["candidates"][0]["train"];
    assert_eq!(
        (&train["mean"], &train["stderr"], &train["ci95"]),
        (&json!(0.7), &json!(0.0), &json!([0.7, 0.7]))
    );
    // Nor is a resample of three 0.7s below 0.7: the interval's top is the highest score.
    let out = run_command(&sb, "0.7 0.25 0.6", "r2.jsonl", &[])
        .output()
        .unwrap();
    let train = &json_stdout(&out)["candidates"][0]["train"];
    assert_eq!(train["ci95"], json!([0.25, 0.7]));
}

#[test]
fn equal_scores_in_any_order_tie_and_a_drop_of_the_limit_itself_passes() {
    let sb = Sandbox::new();
    sb.write("in_turn.sh", IN_TURN);
    sb.write("d.jsonl", "{\"i\":0}\n");
    // 0.1 + 0.2 + 0.3 is not 0.3 + 0.2 + 0.1 in floating point: the same three repeats, made
    // in another order, are still the same mean, every time.
    let repeated = ["--dataset", "d.jsonl", "--repeat", "3"];
    run_in_turn(&sb, "0.1 0.2 0.3", "base.jsonl", &repeated);
    run_in_turn(&sb, "0.3 0.2 0.1", "new.jsonl", &repeated);
    for _ in 0..5 {
        let out = succeeded(
            sb.evalctl()
                .args(["compare", "--format", "text", "base.jsonl", "new.jsonl"])
                .args(["--fail-on-regression", "0"]),
        );
        assert_eq!(
            stdout_text(&out),
            "cand-1 train: 0.2000 -> 0.2000, +0.0000; 1 pair: 0 wins, 1 tie, 0 losses\n\
             exit 0: no candidate's train score dropped by more than --fail-on-regression 0 (1 \
             of 1 candidates compared)\n"
        );
    }
    // 0.7 - 0.8 is -0.10000000000000009: a drop of 0.1 is not more than 0.1.
    run_in_turn(&sb, "0.8", "high.jsonl", &[]);
    run_in_turn(&sb, "0.7", "low.jsonl", &[]);
    let out = succeeded(
        sb.evalctl()
            .args(["compare", "--format", "text", "high.jsonl", "low.jsonl"])
            .args(["--fail-on-regression", "0.1"]),
    );
    assert_eq!(
        stdout_text(&out),
        "cand-1: 0.8000 -> 0.7000, -0.1000; 1 pair: 0 wins, 0 ties, 1 loss\n  \
         regression: single: 0.8000 -> 0.7000\n\
         exit 0: no candidate's score dropped by more than --fail-on-regression 0.1 (1 of 1 \
         candidates compared)\n"
    );
}

/// `evalctl run` of the candidate texts `candidates`, in order, with `eval.sh` over `d.jsonl`,
/// into `output`.
fn run_texts(sb: &Sandbox, candidates: &[&str], output: &str) {
    let mut command = sb.evalctl();
    command.args(["run", "--format", "json", "--skip-preflight"]);
    command.args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"]);
    for candidate in candidates {
        command.args(["--candidate", candidate]);
    }
    succeeded(command.args(["--output", output]));
}

#[test]
fn a_call_pairs_once_and_a_new_candidate_in_front_pairs_with_no_base_call() {
    let sb = Sandbox::new();
    sb.write(
        "eval.sh",
        "p=$(cat)\ncase \"$p\" in *'\"candidate\":\"bad idea\"'*) echo '{\"score\": 0}';; \
         *'\"i\":0'*) echo '{\"score\": 0.2}';; *) echo '{\"score\": 1}';; esac\n",
    );
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n");
    run_texts(&sb, &["good"], "base.jsonl");
    // `good` is now cand-2; cand-1, the position `good` had, is a new text.
    run_texts(&sb, &["bad idea", "good"], "new.jsonl");
    let compare = || {
        sb.evalctl()
            .args(["compare", "--format", "text", "base.jsonl", "new.jsonl"])
            .args(["--fail-on-regression", "0.02"])
            .output()
            .unwrap()
    };
    let first = compare();
    assert_eq!(code(&first), 0, "{}", stderr_text(&first));
    assert_eq!(
        stdout_text(&first),
        "cand-1 → cand-2 train: 0.7333 -> 0.7333, +0.0000 (95% CI +0.0000 to +0.0000); 3 \
         pairs: 0 wins, 3 ties, 0 losses\n\
         unpaired calls: 0 in base, 3 in new\n\
         exit 0: no candidate's train score dropped by more than --fail-on-regression 0.02 (1 \
         of 2 candidates compared; not compared, with no call in both runs: cand-1 in \
         new.jsonl)\n"
    );
    for _ in 0..5 {
        assert_eq!(compare().stdout, first.stdout);
    }
}

#[test]
fn runs_of_one_candidate_each_pair_whatever_its_name() {
    // The prompt edited in a new file: each run scored one candidate, and it is what is compared.
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n");
    sb.write("prompt_v1.txt", "old prompt\n");
    sb.write("prompt_v2.txt", "new prompt\n");
    for (prompt, scores, output) in [
        ("prompt_v1.txt", "1 0.5", "base.jsonl"),
        ("prompt_v2.txt", "0.5 0.5", "new.jsonl"),
    ] {
        let mut command = sb.evalctl();
        command.args(["run", "--format", "json", "--skip-preflight"]);
        command.args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"]);
        succeeded(
            command
                .args([prompt, "--output", output])
                .env("SCORES", scores),
        );
    }
    let out = sb
        .evalctl()
        .args(["compare", "--format", "text", "base.jsonl", "new.jsonl"])
        .args(["--fail-on-regression", "0.1"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    assert_eq!(
        stdout_text(&out),
        "prompt_v1.txt → prompt_v2.txt train: 0.7500 -> 0.5000, -0.2500 (95% CI -0.5000 to \
         +0.0000); 2 pairs: 0 wins, 1 tie, 1 loss\n  regression: train #0 (line 1): 1.0000 \
         -> 0.5000\nexit 1: the train score dropped by more than --fail-on-regression 0.1: \
         prompt_v1.txt → prompt_v2.txt -0.2500\n"
    );
}

#[test]
fn a_candidate_whose_place_another_took_is_named_as_not_compared_with_its_file() {
    // Alpha pairs with itself (base cand-1, new cand-2); Beta, base cand-2, was dropped and
    // Gamma, new cand-1, added: both labels also name the compared Alpha in the other run.
    let sb = Sandbox::new();
    sb.write(
        "eval.sh",
        "p=$(cat)\ncase \"$p\" in *'\"candidate\":\"Beta\"'*) echo '{\"score\": 0.9}';; \
         *'\"candidate\":\"Gamma\"'*) echo '{\"score\": 0}';; *) echo '{\"score\": 0.5}';; \
         esac\n",
    );
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n");
    run_texts(&sb, &["Alpha", "Beta"], "base.jsonl");
    run_texts(&sb, &["Gamma", "Alpha"], "new.jsonl");
    let compare = |format: &str| {
        sb.evalctl()
            .args(["compare", "--format", format, "base.jsonl", "new.jsonl"])
            .args(["--fail-on-regression", "0.01"])
            .output()
            .unwrap()
    };
    let text = compare("text");
    assert_eq!(code(&text), 0, "{}", stderr_text(&text));
    assert_eq!(
        stdout_text(&text),
        "cand-1 → cand-2 train: 0.5000 -> 0.5000, +0.0000 (95% CI +0.0000 to +0.0000); 2 \
         pairs: 0 wins, 2 ties, 0 losses\n\
         unpaired calls: 2 in base, 2 in new\n\
         exit 0: no candidate's train score dropped by more than --fail-on-regression 0.01 (1 \
         of 3 candidates compared; not compared, with no call in both runs: cand-1 in \
         new.jsonl, cand-2 in base.jsonl)\n"
    );
    let json = json_stdout(&compare("json"));
    assert_eq!(
        json["not_compared"],
        json!(["cand-1 in new.jsonl", "cand-2 in base.jsonl"])
    );
}

#[test]
fn an_interrupted_run_fails_the_comparison_unless_allow_partial() {
    // Read like summarize reads it: calls absent from either run fail the comparison, gate or
    // not, and a gate with no candidate compared on the score split does not pass.
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n{\"i\":3}\n");
    run(&sb, "1 1 1 1", "base.jsonl");
    run(&sb, "0 0 0 0", "full.jsonl");
    // An interrupted run: the lines of its first two examples written.
    let written: String = (sb.lines("full.jsonl").iter())
        .filter(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["example_index"].as_u64()
                < Some(2)
        })
        .map(|line| format!("{line}\n"))
        .collect();
    sb.write("new.jsonl", written);
    let compare = |extra: &[&str]| {
        sb.evalctl()
            .args(["compare", "--format", "text", "base.jsonl", "new.jsonl"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = compare(&["--fail-on-regression", "0.5"]);
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    assert_eq!(
        stdout_text(&out),
        "cand-1 train: 1.0000 -> 0.0000, -1.0000 (95% CI -1.0000 to -1.0000); 2 pairs: 0 wins, \
         0 ties, 2 losses\n  regression: train #0 (line 1): 1.0000 -> 0.0000\n  regression: \
         train #1 (line 2): 1.0000 -> 0.0000\nunpaired calls: 2 in base, 0 in new\nexit 1: \
         new.jsonl: 2 of 4 calls absent: the run did not finish (run --resume completes it; --allow-partial compares what is there)\n"
    );
    assert_eq!(code(&compare(&[])), 1);
    let allowed = compare(&["--allow-partial", "--fail-on-regression", "0.5"]);
    assert_eq!(code(&allowed), 1, "the drop itself fails the gate");
    assert!(stdout_text(&allowed).ends_with(
        "exit 1: the train score dropped by more than --fail-on-regression 0.5: cand-1 -1.0000\n"
    ));
    assert_eq!(code(&compare(&["--allow-partial"])), 0);
}

#[test]
fn a_candidate_with_no_call_in_both_runs_is_named_as_not_compared() {
    // The new run was cut before its second candidate's calls: with --allow-partial, the gate
    // judges the first, and says the second was not compared.
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n");
    let two = ["--candidate", "d"];
    run_with(&sb, "1 1", "base.jsonl", &two);
    run_with(&sb, "1 1", "full.jsonl", &two);
    let first_candidate: String = (sb.lines("full.jsonl").iter())
        .filter(|line| line.contains("\"candidate_id\":\"cand-1\""))
        .map(|line| format!("{line}\n"))
        .collect();
    sb.write("new.jsonl", first_candidate);
    let compare = |format: &str| {
        sb.evalctl()
            .args(["compare", "--format", format, "base.jsonl", "new.jsonl"])
            .args(["--allow-partial", "--fail-on-regression", "0.5"])
            .output()
            .unwrap()
    };
    let text = compare("text");
    assert_eq!(code(&text), 0, "{}", stderr_text(&text));
    assert_eq!(
        stdout_text(&text),
        "cand-1 train: 1.0000 -> 1.0000, +0.0000 (95% CI +0.0000 to +0.0000); 2 pairs: 0 wins, \
         2 ties, 0 losses\nunpaired calls: 2 in base, 0 in new\nexit 0: no candidate's train \
         score dropped by more than --fail-on-regression 0.5 (1 of 2 candidates compared; not \
         compared, with no call in both runs: cand-2)\n"
    );
    let json = json_stdout(&compare("json"));
    assert_eq!(json["not_compared"], serde_json::json!(["cand-2"]));
    // Its summary names the candidate it has no line of by its place, counting from 1.
    let summary = sb
        .evalctl()
        .args([
            "summarize",
            "--format",
            "json",
            "--allow-partial",
            "new.jsonl",
        ])
        .output()
        .unwrap();
    let ids: Vec<serde_json::Value> = (json_stdout(&summary)["candidates"].as_array().unwrap())
        .iter()
        .map(|candidate| candidate["id"].clone())
        .collect();
    assert_eq!(
        ids,
        [
            serde_json::json!("cand-1"),
            serde_json::json!("candidate 2 (no line read)")
        ]
    );
    // A gate names it so, once (it read `candidate candidate 2 ...`).
    let gated = sb
        .evalctl()
        .args(["summarize", "--format", "json", "--allow-partial"])
        .args(["--fail-under", "0.5", "new.jsonl"])
        .output()
        .unwrap();
    assert_eq!(
        json_stdout(&gated)["exit_reason"],
        "all 2 calls succeeded; no candidate below --fail-under 0.5; candidate 2 (no line read) \
         has no score among the calls read: not judged by --fail-under 0.5"
    );
}

#[test]
fn examples_with_ids_pair_by_id_when_a_record_is_inserted() {
    // A record put in front of the dataset shifts every index: each example still pairs with
    // itself, by its id.
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    sb.write(
        "d.jsonl",
        "{\"id\":\"q0\",\"i\":0}\n{\"id\":\"q1\",\"i\":1}\n{\"id\":\"q2\",\"i\":2}\n",
    );
    run(&sb, "0.9 0.1 0.5 0.3", "base.jsonl");
    sb.write(
        "d.jsonl",
        "{\"id\":\"new\",\"i\":3}\n{\"id\":\"q0\",\"i\":0}\n{\"id\":\"q1\",\"i\":1}\n\
         {\"id\":\"q2\",\"i\":2}\n",
    );
    run(&sb, "0.9 0.1 0.5 0.3", "new.jsonl");
    let out = sb
        .evalctl()
        .args(["compare", "--format", "text", "base.jsonl", "new.jsonl"])
        .args(["--allow-different-inputs", "--fail-on-regression", "0.05"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        stdout_text(&out),
        "cand-1 train: 0.5000 -> 0.5000, +0.0000 (95% CI +0.0000 to +0.0000); 3 pairs: 0 wins, \
         3 ties, 0 losses\nunpaired calls: 0 in base, 1 in new\nexit 0: no candidate's train \
         score dropped by more than --fail-on-regression 0.05 (1 of 1 candidates compared)\n"
    );
}

#[test]
fn a_regression_a_failed_call_makes_says_so() {
    // The evaluator fails on `q1` in the new run (its score is no number): the drop to 0 is the
    // failure's, not the candidate's, and the regression says so in every format.
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    sb.write(
        "d.jsonl",
        "{\"id\":\"q0\",\"i\":0}\n{\"id\":\"q1\",\"i\":1}\n",
    );
    run(&sb, "0.5 0.75", "base.jsonl");
    let out = run_command(&sb, "0.25 oops", "new.jsonl", &[])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    let compare = |format: &str| {
        let out = sb
            .evalctl()
            .args(["compare", "--format", format, "base.jsonl", "new.jsonl"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr_text(&out));
        stdout_text(&out)
    };
    assert_eq!(
        compare("text"),
        "cand-1 train: 0.6250 -> 0.1250, -0.5000 (95% CI -0.7500 to -0.2500); 2 pairs: 0 wins, \
         0 ties, 2 losses\n  regression: train q1 (line 2): 0.7500 -> 0.0000 (1 call failed in \
         new)\n  regression: train q0 (line 1): 0.5000 -> 0.2500\nexit 0: no \
         --fail-on-regression gate: the train score rose for 0, fell for 1 and held for 0 of 1 \
         candidates\n"
    );
    let json: serde_json::Value = serde_json::from_str(&compare("json")).unwrap();
    let regressions = &json["candidates"][0]["regressions"];
    assert_eq!(
        (&regressions[0]["failed"], &regressions[1].get("failed")),
        (&serde_json::json!({"base": 0, "new": 1}), &None)
    );
    let markdown = compare("markdown");
    let regressions: Vec<&str> = (markdown.lines())
        .skip_while(|line| *line != "Largest regressions:")
        .take(6)
        .collect();
    assert_eq!(
        regressions,
        [
            "Largest regressions:",
            "",
            "| example | base | new | difference |",
            "|---|---|---|---|",
            "| train q1 (line 2) | 0.7500 | 0.0000 (1 call failed in new) | -0.7500 |",
            "| train q0 (line 1) | 0.5000 | 0.2500 | -0.2500 |",
        ]
    );
}

#[test]
fn an_id_of_several_examples_pairs_them_in_order_and_says_so() {
    // Two examples share the id `q1`, in another order in the new dataset: their calls pair in
    // the order of the examples, which is not each example with itself.
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    sb.write(
        "d.jsonl",
        "{\"id\":\"q0\",\"i\":0}\n{\"id\":\"q1\",\"i\":1}\n{\"id\":\"q1\",\"i\":2}\n",
    );
    run(&sb, "0.5 0.1 0.9", "base.jsonl");
    sb.write(
        "d.jsonl",
        "{\"id\":\"q0\",\"i\":0}\n{\"id\":\"q1\",\"i\":2}\n{\"id\":\"q1\",\"i\":1}\n",
    );
    run(&sb, "0.5 0.1 0.9", "new.jsonl");
    let out = sb
        .evalctl()
        .args(["compare", "--format", "json", "base.jsonl", "new.jsonl"])
        .args(["--allow-different-inputs"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0);
    assert_eq!(
        stderr_text(&out),
        "warning: example id \"q1\" names several examples of a run: their calls were paired in \
         the order of those examples, which may not pair each example with itself (give every \
         example an id of its own)\n"
    );
    // Unique ids in another order say nothing.
    for (dataset, output) in [
        (
            "{\"id\":\"q0\",\"i\":0}\n{\"id\":\"q1\",\"i\":1}\n",
            "a.jsonl",
        ),
        (
            "{\"id\":\"q1\",\"i\":1}\n{\"id\":\"q0\",\"i\":0}\n",
            "b.jsonl",
        ),
    ] {
        sb.write("d.jsonl", dataset);
        run(&sb, "0.5 0.1", output);
    }
    let out = sb
        .evalctl()
        .args(["compare", "--format", "json", "a.jsonl", "b.jsonl"])
        .args(["--allow-different-inputs"])
        .output()
        .unwrap();
    assert_eq!((code(&out), stderr_text(&out)), (0, String::new()));
}

#[test]
fn a_partial_repeated_run_has_one_mean_in_summarize_and_compare() {
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n");
    run_with(&sb, "1 0", "full.jsonl", &["--repeat", "2"]);
    // Example 1's second repeat is absent: example 0 scored 1, 1; example 1 scored 0.
    let full = sb.read("full.jsonl");
    let partial: Vec<&str> = full
        .lines()
        .filter(|line| {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            record["example_index"] != 1 || record["repeat"] != 1
        })
        .collect();
    assert_eq!(partial.len(), 3);
    sb.write("partial.jsonl", partial.join("\n") + "\n");
    let summary = json_stdout(
        &sb.evalctl()
            .args([
                "summarize",
                "--format",
                "json",
                "--allow-partial",
                "partial.jsonl",
            ])
            .output()
            .unwrap(),
    );
    let train = &summary["candidates"][0]["train"];
    assert_eq!(
        serde_json::json!([train["n"], train["mean"], train["stderr"]]),
        serde_json::json!([3, 0.5, 0.5])
    );
    let out = sb
        .evalctl()
        .args(["compare", "--format", "text", "--allow-partial"])
        .args(["partial.jsonl", "full.jsonl"])
        .output()
        .unwrap();
    assert_eq!(
        stdout_text(&out),
        "cand-1 train: 0.5000 -> 0.5000, +0.0000 (95% CI +0.0000 to +0.0000); 2 pairs: 0 wins, \
         2 ties, 0 losses\n\
         exit 0: no --fail-on-regression gate: the train score rose for 0, fell for 0 and held \
         for 1 of 1 candidates\n"
    );
}

/// Scores the calls in the order they are made (`-j 1`): 1, 0, 0.5, 0.25, 1, 0, … (the count
/// kept in `calls`), so that repeats of one example differ.
const COUNTING: &str = "cat >/dev/null\nn=$(cat calls 2>/dev/null || echo 0)\n\
                        echo $((n + 1)) > calls\nset -- 1 0 0.5 0.25\nshift $((n % 4))\n\
                        printf '{\"score\": %s}' \"$1\"\n";

#[test]
fn runs_of_different_repeat_counts_compare_each_examples_mean_of_all_its_repeats() {
    let sb = Sandbox::new();
    sb.write("eval.sh", COUNTING);
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n");
    run_with(&sb, "", "once.jsonl", &["-j", "1"]);
    run_with(&sb, "", "r3.jsonl", &["--repeat", "3", "-j", "1"]);
    run_with(&sb, "", "r5.jsonl", &["--repeat", "5", "-j", "1"]);
    let mean = |file: &str| {
        let summary = json_stdout(&succeeded(sb.evalctl().args([
            "summarize",
            "--format",
            "json",
            file,
        ])));
        summary["candidates"][0]["train"]["mean"].clone()
    };
    // Each side's mean is its run's own (the mean of every repeat of each example), not the
    // mean of the repeats the other run also has; a run without --repeat pairs with the first
    // repeat of each example, and every call is compared.
    for (base, new) in [("r3.jsonl", "r5.jsonl"), ("once.jsonl", "r3.jsonl")] {
        let out = sb
            .evalctl()
            .args(["compare", "--format", "json", base, new])
            .args(["--fail-on-regression", "1"])
            .output()
            .unwrap();
        assert_eq!(
            (code(&out), stderr_text(&out)),
            (0, String::new()),
            "{base} {new}"
        );
        let comparison = json_stdout(&out);
        let candidate = &comparison["candidates"][0];
        assert_eq!(
            serde_json::json!([
                candidate["pairs"],
                candidate["base_mean"],
                candidate["new_mean"],
                comparison["unpaired"]
            ]),
            serde_json::json!([3, mean(base), mean(new), {"base": 0, "new": 0}]),
            "{base} {new}"
        );
    }
}

#[test]
fn calls_a_run_lacks_are_not_blamed_on_the_wrong_files() {
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n");
    run(&sb, "1 1 1", "full.jsonl");
    // The same run, interrupted after its first call.
    let first = sb.lines("full.jsonl")[0].clone();
    sb.write("cut.jsonl", first + "\n");
    let out = sb
        .evalctl()
        .args(["compare", "--format", "text", "full.jsonl", "cut.jsonl"])
        .output()
        .unwrap();
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            1,
            "warning: 2 of 3 calls in full.jsonl and 0 of 1 calls in cut.jsonl are in one run \
             only: they are not compared\n\
             exit 1: cut.jsonl: 2 of 3 calls absent: the run did not finish (run --resume \
             completes it; --allow-partial compares what is there)\n"
                .to_string()
        )
    );
}

#[test]
fn runs_whose_scores_are_means_of_different_splits_are_not_compared() {
    // With a valset a run's score is its val mean; without, its train mean: whichever file
    // comes first, the gate would judge one run's score against the other's other split.
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    sb.write("d.jsonl", "{\"i\":0}\n{\"i\":1}\n");
    sb.write("v.jsonl", "{\"i\":2}\n");
    run(&sb, "0.5 0.5 0.9", "train-only.jsonl");
    run_with(
        &sb,
        "0.5 0.5 0.9",
        "with-val.jsonl",
        &["--valset", "v.jsonl"],
    );
    for (base, new) in [
        ("with-val.jsonl", "train-only.jsonl"),
        ("train-only.jsonl", "with-val.jsonl"),
    ] {
        let out = sb
            .evalctl()
            .args(["compare", base, new, "--allow-different-inputs"])
            .args(["--fail-on-regression", "0.05"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 2);
        let split = |file: &str| {
            if file == "with-val.jsonl" {
                "val"
            } else {
                "train"
            }
        };
        assert_eq!(
            stderr_text(&out),
            format!(
                "error: {base}, {new}: the runs' scores are the means of different splits \
                 ({base}: {}; {new}: {}): compare runs that both have a valset, or neither\n",
                split(base),
                split(new)
            )
        );
    }
}
