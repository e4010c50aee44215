//! What `run --generate` spends, through the real binary against the loopback OpenAI-compatible
//! server of the generate tests (usage in every reply): the task models' tokens per candidate ×
//! task model and in total, with the tokens the cache saved, in the text, JSON and Markdown
//! summaries; their cost and the LLM judge's at `--price`, and `--max-cost` holding a run, with or
//! without `--generate`, within a budget that counts both.

use crate::common::{code, json_stdout, stderr_text, stdout_text, Reply, Sandbox, Server};
use crate::generate::{fake_openai, fixture, generate_as, with_terse_prompt, KEY};
use serde_json::{json, Value};

/// `run --generate` of the terse prompt by `acme/small` and `acme/large` on `server`, one call
/// at a time, with `extra` flags, in `format`.
fn two_models(sb: &Sandbox, url: &str, format: &str, extra: &[&str]) -> std::process::Output {
    sb.write(
        "terse.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    generate_as(sb, format)
        .env("ACME_API_KEY", KEY)
        .args(["--task-model", "acme/small", "--task-model", "acme/large"])
        .args(["--task-base-url", url, "--skip-preflight", "-j", "1"])
        .args(extra)
        .arg("terse.txt")
        .output()
        .unwrap()
}

/// The text summary with its elapsed time replaced by `E`.
fn text_without_elapsed(output: &std::process::Output) -> String {
    let text = stdout_text(output);
    let elapsed = text.lines().nth(1).unwrap().to_string();
    let (calls, _) = elapsed.split_once("elapsed: ").unwrap();
    text.replace(&elapsed, &format!("{calls}elapsed: E"))
}

/// The Markdown summary with its elapsed time replaced by `E`.
fn markdown_without_elapsed(output: &std::process::Output) -> String {
    let markdown = stdout_text(output);
    let evaluator_line = markdown.lines().find(|line| line.starts_with("Evaluator:"));
    let (_, elapsed) = evaluator_line.unwrap().split_once("elapsed: ").unwrap();
    let elapsed = elapsed.split(' ').next().unwrap();
    markdown.replace(&format!("elapsed: {elapsed}"), "elapsed: E")
}

#[test]
fn the_summary_counts_the_task_models_tokens_per_pair_and_in_total() {
    let server = fake_openai();
    let sb = Sandbox::new();
    let output = two_models(&sb, &server.url("/v1"), "text", &[]);
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    let checks = fixture("checks.json");
    assert_eq!(
        text_without_elapsed(&output),
        format!(
            "evaluator: checks {checks}   score range: unit\n\
             calls: 6 (6 ok, 0 errors)   elapsed: E\n\
             task model tokens: 72 prompt, 18 completion\n\
             \n\
             candidate  task model  score            train mean       n / errors  tokens in / out\n\
             terse.txt  acme/small  1.0000 ± 0.0000  1.0000 ± 0.0000  3 / 0       36 / 9\n\
             terse.txt  acme/large  0.0000 ± 0.0000  0.0000 ± 0.0000  3 / 0       36 / 9\n\
             \n\
             best: terse.txt × acme/small (score 1.0000)\n\
             \n\
             score = the candidate's train mean; failed calls count as 0\n\
             ± = half-width of the 95% bootstrap interval over examples (--seed)\n\
             \n\
             exit 0: all 6 calls succeeded\n"
        )
    );
}

#[test]
fn summarize_lists_the_rows_in_the_order_of_the_file_every_time() {
    // The rows of two task models, read back: they came out in a different order from one
    // `summarize` to the next.
    let server = fake_openai();
    let sb = Sandbox::new();
    sb.write(
        "tutor.txt",
        std::fs::read(fixture("prompts/tutor.txt")).unwrap(),
    );
    let extra = ["--output", "results.jsonl", "tutor.txt"];
    let output = two_models(&sb, &server.url("/v1"), "json", &extra);
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    let rows = |document: &Value| -> Vec<String> {
        (document["candidates"].as_array().unwrap().iter())
            .map(|row| format!("{} {}", row["id"], row["task_model"]))
            .collect()
    };
    let run_rows = rows(&json_stdout(&output));
    for _ in 0..4 {
        let summarized = sb
            .evalctl()
            .args(["summarize", "--format", "json", "results.jsonl"])
            .output()
            .unwrap();
        assert_eq!(rows(&json_stdout(&summarized)), run_rows);
    }
}

#[test]
fn a_run_the_cache_answers_whole_pays_for_no_probe_either() {
    // With preflight on, each task model answers a probe first: a completion like any other,
    // which the cache answers the second time.
    let server = fake_openai();
    let sb = Sandbox::new();
    sb.write(
        "terse.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    let run = || {
        generate_as(&sb, "json")
            .env("ACME_API_KEY", KEY)
            .args([
                "--task-model",
                "acme/small",
                "--task-base-url",
                &server.url("/v1"),
            ])
            .args(["--cache", "--cache-dir", "cache", "-j", "1", "terse.txt"])
            .output()
            .unwrap()
    };
    let completions = || {
        (server.requests().iter())
            .filter(|request| request.method == "POST")
            .count()
    };
    let first = run();
    assert_eq!(code(&first), 0, "{}", stderr_text(&first));
    assert_eq!(completions(), 4, "a probe and three examples");
    let again = run();
    assert_eq!(code(&again), 0, "{}", stderr_text(&again));
    assert_eq!(completions(), 4, "no completion is paid for again");
    assert_eq!(json_stdout(&again)["calls"]["cached"], 3);
}

#[test]
fn tokens_the_cache_answered_are_shown_as_saved_in_json_and_markdown() {
    let server = fake_openai();
    let sb = Sandbox::new();
    let url = server.url("/v1");
    let cache = ["--cache", "--cache-dir", "cache"];
    let first = two_models(&sb, &url, "json", &cache);
    assert_eq!(code(&first), 0, "{}", stderr_text(&first));
    // The second run's answers all come from the cache: none of its tokens is spent.
    let again = two_models(&sb, &url, "json", &cache);
    assert_eq!(code(&again), 0, "{}", stderr_text(&again));
    assert_eq!(server.requests().len(), 6);
    let summary = json_stdout(&again);
    let none = json!({"prompt_tokens": 0, "completion_tokens": 0});
    let saved =
        json!({"usage": none, "usage_saved": {"prompt_tokens": 36, "completion_tokens": 9}});
    assert_eq!(summary["candidates"][0]["generation"], saved);
    assert_eq!(summary["candidates"][1]["generation"], saved);
    assert_eq!(
        summary["generation"],
        json!({"usage": none, "usage_saved": {"prompt_tokens": 72, "completion_tokens": 18}})
    );
    let markdown = two_models(&sb, &url, "markdown", &cache);
    assert_eq!(code(&markdown), 0, "{}", stderr_text(&markdown));
    assert_eq!(
        markdown_without_elapsed(&markdown),
        format!(
            "### evalctl: ✅ passed (exit 0)\n\n\
             all 6 calls succeeded\n\n\
             | candidate | task model | score | train mean | n / errors | tokens in / out |\n\
             |---|---|---|---|---|---|\n\
             | terse.txt | acme/small | 1.0000 ± 0.0000 | 1.0000 ± 0.0000 | 3 / 0 | 0 / 0 (saved 36 / 9) |\n\
             | terse.txt | acme/large | 0.0000 ± 0.0000 | 0.0000 ± 0.0000 | 3 / 0 | 0 / 0 (saved 36 / 9) |\n\
             \n\
             Evaluator: checks {} · score range unit · 6 calls (6 ok, 0 errors, 6 from the cache) · elapsed: E \
             · task model tokens: 0 prompt, 0 completion (saved by the cache: 72 prompt, 18 completion)\n\
             \n\
             best: terse.txt × acme/small (score 1.0000)\n\
             \n\
             _score = the candidate's train mean; failed calls count as 0_\n\
             \n\
             _± = half-width of the 95% bootstrap interval over examples (--seed)_\n",
            fixture("checks.json")
        )
    );
}

#[test]
fn a_price_turns_the_tokens_into_a_cost_per_pair() {
    let server = fake_openai();
    let sb = Sandbox::new();
    // Only acme/small has a price: the total has no cost, acme/large's row shows none.
    let output = two_models(
        &sb,
        &server.url("/v1"),
        "text",
        &["--price", "acme/small=1000,2000"],
    );
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    let checks = fixture("checks.json");
    assert_eq!(
        text_without_elapsed(&output),
        format!(
            "evaluator: checks {checks}   score range: unit\n\
             calls: 6 (6 ok, 0 errors)   elapsed: E\n\
             task model tokens: 72 prompt, 18 completion\n\
             \n\
             candidate  task model  score            train mean       n / errors  tokens in / out  cost\n\
             terse.txt  acme/small  1.0000 ± 0.0000  1.0000 ± 0.0000  3 / 0       36 / 9           $0.054000\n\
             terse.txt  acme/large  0.0000 ± 0.0000  0.0000 ± 0.0000  3 / 0       36 / 9           -\n\
             \n\
             best: terse.txt × acme/small (score 1.0000)\n\
             \n\
             score = the candidate's train mean; failed calls count as 0\n\
             ± = half-width of the 95% bootstrap interval over examples (--seed)\n\
             \n\
             exit 0: all 6 calls succeeded\n"
        )
    );
}

/// evalctl.toml for [`two_models`] runs from `sb`'s directory: `prices` as its `[prices]` table.
fn priced_project(sb: &Sandbox, url: &str, prices: &str) {
    sb.write(
        "terse.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    sb.write(
        "evalctl.toml",
        format!(
            "[evaluator]\nchecks = {:?}\n\n[run]\ndataset = {:?}\ngenerate = true\n\
             task_model = [\"acme/small\", \"acme/large\"]\ntask_base_url = {url:?}\n\
             skip_preflight = true\nconcurrency = 1\n\n[prices]\n{prices}",
            fixture("checks.json"),
            fixture("qa.jsonl")
        ),
    );
}

#[test]
fn the_prices_table_costs_every_pair_and_the_cache_shows_what_it_saved() {
    let server = fake_openai();
    let sb = Sandbox::new();
    priced_project(
        &sb,
        &server.url("/v1"),
        "\"acme/small\" = [1000, 2000]\n\"acme/large\" = [0.5, 2]\n",
    );
    let run = |format: &str| {
        let output = sb
            .evalctl()
            .env("ACME_API_KEY", KEY)
            .args(["run", "--format", format, "--cache", "--cache-dir", "cache"])
            .arg("terse.txt")
            .output()
            .unwrap();
        assert_eq!(code(&output), 0, "{}", stderr_text(&output));
        output
    };
    let first = json_stdout(&run("json"));
    let spent = |prompt: u64, completion: u64, cost: f64| json!({"usage": {"prompt_tokens": prompt, "completion_tokens": completion}, "cost_usd": cost});
    assert_eq!(first["candidates"][0]["generation"], spent(36, 9, 0.054));
    assert_eq!(first["candidates"][1]["generation"], spent(36, 9, 0.000036));
    assert_eq!(first["generation"], spent(72, 18, 0.054 + 0.000036));
    let again = run("text");
    let checks = fixture("checks.json");
    assert_eq!(
        text_without_elapsed(&again),
        format!(
            "evaluator: checks {checks}   score range: unit\n\
             calls: 6 (6 ok, 0 errors, 6 from the cache)   elapsed: E\n\
             task model tokens: 0 prompt, 0 completion (saved by the cache: 72 prompt, 18 completion)\n\
             cost: $0.000000 (saved by the cache: $0.054036)\n\
             \n\
             candidate  task model  score            train mean       n / errors  tokens in / out       cost\n\
             terse.txt  acme/small  1.0000 ± 0.0000  1.0000 ± 0.0000  3 / 0       0 / 0 (saved 36 / 9)  $0.000000 (saved $0.054000)\n\
             terse.txt  acme/large  0.0000 ± 0.0000  0.0000 ± 0.0000  3 / 0       0 / 0 (saved 36 / 9)  $0.000000 (saved $0.000036)\n\
             \n\
             best: terse.txt × acme/small (score 1.0000)\n\
             \n\
             score = the candidate's train mean; failed calls count as 0\n\
             ± = half-width of the 95% bootstrap interval over examples (--seed)\n\
             \n\
             exit 0: all 6 calls succeeded\n"
        )
    );
}

#[test]
fn a_price_that_is_not_two_amounts_is_refused_naming_the_line_or_flag() {
    let sb = Sandbox::new();
    priced_project(&sb, "http://127.0.0.1:9/v1", "\"acme/small\" = [1000]\n");
    let output = sb.evalctl().args(["run", "terse.txt"]).output().unwrap();
    assert_eq!(code(&output), 2);
    assert_eq!(
        stderr_text(&output),
        "error: evalctl.toml:12: prices: \"acme/small\": expected [IN, OUT], two numbers >= 0 \
         (USD per million input and output tokens)\n"
    );
    let output = generate_as(&sb, "text")
        .args(["--task-model", "acme/small", "--price", "acme/small=1000"])
        .arg("terse.txt")
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert_eq!(
        stderr_text(&output),
        "error: invalid value 'acme/small=1000' for '--price <MODEL=IN,OUT>': expected \
         MODEL=IN,OUT (USD per million input and output tokens, e.g. \
         openai/gpt-4o-mini=0.15,0.60)\n\nFor more information, try '--help'.\n"
    );
}

/// `run --generate` of the terse prompt by `acme/small` alone on `server`, one call at a time,
/// priced at $0.018 a call (12 prompt and 3 completion tokens) unless `extra` gives its own
/// `--price`, recording results.jsonl.
fn small_on_a_budget(
    sb: &Sandbox,
    url: &str,
    format: &str,
    extra: &[&str],
) -> std::process::Output {
    sb.write(
        "terse.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    let price = match extra.contains(&"--price") {
        true => &[][..],
        false => &["--price", "acme/small=1000,2000"][..],
    };
    generate_as(sb, format)
        .env("ACME_API_KEY", KEY)
        .args(["--task-model", "acme/small", "--task-base-url", url])
        .args(["--skip-preflight", "-j", "1", "--output", "results.jsonl"])
        .args(price)
        .args(extra)
        .arg("terse.txt")
        .output()
        .unwrap()
}

#[test]
fn max_cost_stops_the_run_with_exit_5_and_resume_continues_it() {
    let server = fake_openai();
    let sb = Sandbox::new();
    let url = server.url("/v1");
    // After two calls ($0.036), a third (estimated at $0.018) would pass $0.04.
    let output = small_on_a_budget(&sb, &url, "text", &["--max-cost", "0.04"]);
    assert_eq!(code(&output), 5, "{}", stderr_text(&output));
    assert_eq!(server.requests().len(), 2);
    assert_eq!(sb.jsonl("results.jsonl").len(), 2);
    let checks = fixture("checks.json");
    assert_eq!(
        text_without_elapsed(&output),
        format!(
            "evaluator: checks {checks}   score range: unit\n\
             calls: 2 (2 ok, 0 errors)   elapsed: E\n\
             task model tokens: 24 prompt, 6 completion\n\
             cost: $0.036000\n\
             budget: $0.036000 of --max-cost 0.04 spent: stopped, 1 call not made (--resume continues)\n\
             \n\
             candidate  task model  score            train mean       n / errors  tokens in / out  cost\n\
             terse.txt  acme/small  1.0000 ± 0.0000  1.0000 ± 0.0000  2 / 0       24 / 6           $0.036000\n\
             \n\
             score = the candidate's train mean; failed calls count as 0\n\
             ± = half-width of the 95% bootstrap interval over examples (--seed)\n\
             \n\
             exit 5: stopped by --max-cost 0.04: 1 call not made (--resume continues); all 2 calls succeeded\n"
        )
    );
    assert_eq!(stderr_text(&output), "");
    // The same budget resumed: the run has spent $0.036 already, so nothing more is made.
    let again = small_on_a_budget(&sb, &url, "json", &["--max-cost", "0.04", "--resume"]);
    assert_eq!(code(&again), 5, "{}", stderr_text(&again));
    assert_eq!(server.requests().len(), 2);
    assert_eq!(
        json_stdout(&again)["budget"],
        json!({"max_cost_usd": 0.04, "spent_usd": 0.036, "stopped": true, "calls_not_made": 1})
    );
    // Nor is the task model probed: its probe is a paid call too.
    let probed = generate_as(&sb, "json")
        .env("ACME_API_KEY", KEY)
        .args(["--task-model", "acme/small", "--task-base-url", &url])
        .args(["-j", "1", "--output", "results.jsonl", "--resume"])
        .args(["--price", "acme/small=1000,2000", "--max-cost", "0.04"])
        .arg("terse.txt")
        .output()
        .unwrap();
    assert_eq!(code(&probed), 5, "{}", stderr_text(&probed));
    assert_eq!(server.requests().len(), 2);
    // A larger budget resumed makes the last call only.
    let last = small_on_a_budget(&sb, &url, "markdown", &["--max-cost", "0.06", "--resume"]);
    assert_eq!(code(&last), 0, "{}", stderr_text(&last));
    assert_eq!(server.requests().len(), 3);
    assert_eq!(sb.jsonl("results.jsonl").len(), 3);
    assert_eq!(
        markdown_without_elapsed(&last),
        format!(
            "### evalctl: ✅ passed (exit 0)\n\n\
             all 3 calls succeeded\n\n\
             | candidate | task model | score | train mean | n / errors | tokens in / out | cost |\n\
             |---|---|---|---|---|---|---|\n\
             | terse.txt | acme/small | 1.0000 ± 0.0000 | 1.0000 ± 0.0000 | 3 / 0 | 36 / 9 | \\$0.054000 |\n\
             \n\
             Evaluator: checks {} · score range unit · 3 calls (3 ok, 0 errors) · elapsed: E \
             · task model tokens: 36 prompt, 9 completion · cost: \\$0.054000\n\
             \n\
             **Budget:** \\$0.054000 of --max-cost 0.06 spent\n\
             \n\
             _score = the candidate's train mean; failed calls count as 0_\n\
             \n\
             _± = half-width of the 95% bootstrap interval over examples (--seed)_\n",
            fixture("checks.json")
        )
    );
}

#[test]
fn a_call_that_failed_before_spending_does_not_lower_the_estimate_of_a_call() {
    // The first call fails with a 500 ($0); the others cost $0.018 each. Counted at $0, it made
    // a call look like $0.009, and a third call started past the budget of $0.03.
    let server = Server::start(|_, index| {
        if index == 0 {
            return Reply::status(500, r#"{"error": {"message": "try again"}}"#);
        }
        Reply::json(
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris"},
                                "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}})
            .to_string(),
        )
    });
    let sb = Sandbox::new();
    let output = small_on_a_budget(
        &sb,
        &server.url("/v1"),
        "json",
        &["--max-cost", "0.03", "--retries", "0"],
    );
    assert_eq!(code(&output), 5, "{}", stderr_text(&output));
    assert_eq!(server.requests().len(), 2);
    assert_eq!(
        json_stdout(&output)["budget"],
        json!({"max_cost_usd": 0.03, "spent_usd": 0.018, "stopped": true, "calls_not_made": 1})
    );
}

#[test]
fn a_budget_that_the_calls_spend_exactly_lets_every_call_be_made() {
    // Three calls of 12 prompt tokens at $11 a million spend $0.000396, which floating point
    // sums as 0.00039600000000000003.
    let server = fake_openai();
    let sb = Sandbox::new();
    let output = small_on_a_budget(
        &sb,
        &server.url("/v1"),
        "json",
        &["--price", "acme/small=11,0", "--max-cost", "0.000396"],
    );
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(server.requests().len(), 3);
    assert_eq!(json_stdout(&output)["budget"]["stopped"], json!(false));
}

#[test]
fn a_budget_stop_is_its_own_verdict_in_markdown_and_json() {
    let server = fake_openai();
    let sb = Sandbox::new();
    let url = server.url("/v1");
    let output = small_on_a_budget(&sb, &url, "markdown", &["--max-cost", "0.02"]);
    assert_eq!(code(&output), 5, "{}", stderr_text(&output));
    assert_eq!(
        markdown_without_elapsed(&output),
        format!(
            "### evalctl: ⏸️ stopped by the budget (exit 5)\n\n\
             stopped by --max-cost 0.02: 2 calls not made (--resume continues); the call succeeded\n\n\
             | candidate | task model | score | train mean | n / errors | tokens in / out | cost |\n\
             |---|---|---|---|---|---|---|\n\
             | terse.txt | acme/small | 1.0000 | 1.0000 | 1 / 0 | 12 / 3 | \\$0.018000 |\n\
             \n\
             Evaluator: checks {} · score range unit · 1 call (1 ok, 0 errors) · elapsed: E \
             · task model tokens: 12 prompt, 3 completion · cost: \\$0.018000\n\
             \n\
             **Budget:** \\$0.018000 of --max-cost 0.02 spent: stopped, 2 calls not made (--resume continues)\n\
             \n\
             _score = the candidate's train mean; failed calls count as 0_\n",
            fixture("checks.json")
        )
    );
}

#[test]
fn a_budget_without_a_price_for_every_task_model_is_refused_before_any_call() {
    let server = fake_openai();
    let sb = with_terse_prompt();
    let output = generate_as(&sb, "text")
        .env("ACME_API_KEY", KEY)
        .args(["--task-model", "acme/small", "--task-model", "acme/large"])
        .args(["--task-model-command", "sh model.sh"])
        .args(["--task-base-url", &server.url("/v1")])
        .args(["--price", "acme/small=1,2", "--max-cost", "1", "terse.txt"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert_eq!(
        stderr_text(&output),
        "error: --max-cost: no price for acme/large, --task-model-command: give every model the \
         run calls one with --price MODEL=IN,OUT (USD per million input and output tokens) or a \
         [prices] table in evalctl.toml (a --task-model-command reports no tokens, so it cannot \
         be held to a budget)\n"
    );
    assert_eq!(stdout_text(&output), "");
    assert!(server.requests().is_empty());
    let output = sb
        .evalctl()
        .args(["run", "--no-config", "--evaluator-command", "true"])
        .args(["--max-cost", "1", "--candidate", "x"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert_eq!(
        stderr_text(&output),
        "error: --max-cost: only applies to --generate or --judge-model (the task models' and \
         the judge's calls are what it counts)\n"
    );
    let output = generate_as(&sb, "text")
        .args(["--task-model", "acme/small", "--max-cost", "0", "terse.txt"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert_eq!(
        stderr_text(&output),
        "error: invalid value '0' for '--max-cost <USD>': must be an amount in USD above 0\n\nFor more information, try '--help'.\n"
    );
}

/// `run` judged by `acme/judge` on `server` (`{"score": 1}`, 12 prompt and 3 completion tokens a
/// call, as the task models), one call at a time, in `format`, with `extra` flags.
fn judged(sb: &Sandbox, url: &str, format: &str, extra: &[&str]) -> std::process::Output {
    sb.evalctl()
        .env("ACME_API_KEY", KEY)
        .args(["run", "--no-config", "--format", format, "--dataset"])
        .arg(fixture("qa.jsonl"))
        .args(["--judge-model", "acme/judge", "--judge-base-url", url])
        .args([
            "--objective",
            "Name the capital.",
            "--skip-preflight",
            "-j",
            "1",
        ])
        .args(extra)
        .output()
        .unwrap()
}

/// Prices at which a call of `acme/small` or `acme/judge` (12 prompt and 3 completion tokens)
/// costs $0.018.
const SMALL_AND_JUDGE_AT_0_018: [&str; 4] = [
    "--price",
    "acme/small=1000,2000",
    "--price",
    "acme/judge=1000,2000",
];

/// [`judged`] under `--generate`: the terse prompt answered by `acme/small`, recording
/// results.jsonl.
fn judged_generation(
    sb: &Sandbox,
    url: &str,
    format: &str,
    extra: &[&str],
) -> std::process::Output {
    sb.write(
        "terse.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    let generation = [
        "--generate",
        "--task-model",
        "acme/small",
        "--task-base-url",
        url,
        "--output",
        "results.jsonl",
        "terse.txt",
    ];
    judged(sb, url, format, &[extra, &generation].concat())
}

#[test]
fn the_judge_s_calls_are_priced_beside_the_task_models_and_in_the_total() {
    let server = fake_openai();
    let sb = Sandbox::new();
    let url = server.url("/v1");
    // A task model call costs $0.018, a judge call $0.0018.
    let prices = [
        "--price",
        "acme/small=1000,2000",
        "--price",
        "acme/judge=100,200",
    ];
    let output = judged_generation(&sb, &url, "text", &prices);
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(server.requests().len(), 6);
    assert_eq!(
        text_without_elapsed(&output),
        "evaluator: judge acme/judge   score range: unit\n\
         calls: 3 (3 ok, 0 errors)   elapsed: E\n\
         tokens: 36 prompt, 9 completion\n\
         task model tokens: 36 prompt, 9 completion\n\
         judge cost: $0.005400\n\
         cost: $0.059400\n\
         \n\
         candidate  task model  score            train mean       n / errors  tokens in / out  cost\n\
         terse.txt  acme/small  1.0000 ± 0.0000  1.0000 ± 0.0000  3 / 0       36 / 9           $0.054000\n\
         \n\
         score = the candidate's train mean; failed calls count as 0\n\
         ± = half-width of the 95% bootstrap interval over examples (--seed)\n\
         \n\
         exit 0: all 3 calls succeeded\n"
    );
    // Each result line keeps the judge's tokens beside the task model's.
    let line = &sb.jsonl("results.jsonl")[0];
    let usage = json!({"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15});
    assert_eq!(line["side_info"]["usage"], usage);
    assert_eq!(line["generation"]["usage"], usage);
    let sb = Sandbox::new();
    let summary = json_stdout(&judged_generation(&sb, &url, "json", &prices));
    assert_eq!(
        summary["judge"],
        json!({"model": "acme/judge", "usage": {"prompt_tokens": 36, "completion_tokens": 9},
               "cost_usd": 0.0054})
    );
    assert_eq!(summary["generation"]["cost_usd"], json!(0.054));
    assert_eq!(summary["cost_usd"], json!(0.054 + 0.0054));
    // Without the judge's price, its tokens leave the whole cost unknown.
    let sb = Sandbox::new();
    let summary = json_stdout(&judged_generation(&sb, &url, "json", &prices[..2]));
    assert_eq!(summary["generation"]["cost_usd"], json!(0.054));
    assert_eq!(
        (&summary["judge"], &summary["cost_usd"]),
        (&Value::Null, &Value::Null)
    );
    let sb = Sandbox::new();
    let markdown = judged_generation(&sb, &url, "markdown", &prices);
    let evaluator_line = markdown_without_elapsed(&markdown)
        .lines()
        .find(|line| line.starts_with("Evaluator:"))
        .unwrap()
        .to_string();
    assert_eq!(
        evaluator_line,
        "Evaluator: judge acme/judge · score range unit · 3 calls (3 ok, 0 errors) · elapsed: E \
         · tokens: 36 prompt, 9 completion · task model tokens: 36 prompt, 9 completion \
         · judge cost: \\$0.005400 · cost: \\$0.059400"
    );
}

#[test]
fn max_cost_counts_the_judge_s_calls_and_resume_continues() {
    let server = fake_openai();
    let sb = Sandbox::new();
    let url = server.url("/v1");
    // A call costs $0.036, the task model's $0.018 and the judge's $0.018: after one, a second
    // (estimated at $0.036) would pass $0.06. Counting the task model alone would allow three.
    let prices = SMALL_AND_JUDGE_AT_0_018;
    let budget = [&prices[..], &["--max-cost", "0.06"]].concat();
    let output = judged_generation(&sb, &url, "text", &budget);
    assert_eq!(code(&output), 5, "{}", stderr_text(&output));
    assert_eq!(server.requests().len(), 2);
    assert_eq!(sb.jsonl("results.jsonl").len(), 1);
    assert_eq!(
        text_without_elapsed(&output),
        "evaluator: judge acme/judge   score range: unit\n\
         calls: 1 (1 ok, 0 errors)   elapsed: E\n\
         tokens: 12 prompt, 3 completion\n\
         task model tokens: 12 prompt, 3 completion\n\
         judge cost: $0.018000\n\
         cost: $0.036000\n\
         budget: $0.036000 of --max-cost 0.06 spent: stopped, 2 calls not made (--resume continues)\n\
         \n\
         candidate  task model  score   train mean  n / errors  tokens in / out  cost\n\
         terse.txt  acme/small  1.0000  1.0000      1 / 0       12 / 3           $0.018000\n\
         \n\
         score = the candidate's train mean; failed calls count as 0\n\
         \n\
         exit 5: stopped by --max-cost 0.06: 2 calls not made (--resume continues); the call succeeded\n"
    );
    // Resumed with a larger budget: the judge's spending so far counts, and the rest is made.
    let resumed = [&budget[..2 * 2], &["--max-cost", "0.2", "--resume"]].concat();
    let again = judged_generation(&sb, &url, "json", &resumed);
    assert_eq!(code(&again), 0, "{}", stderr_text(&again));
    assert_eq!(server.requests().len(), 6);
    let budget = &json_stdout(&again)["budget"];
    assert_eq!(
        (budget["stopped"].clone(), budget["calls_not_made"].clone()),
        (json!(false), json!(0))
    );
    assert!(
        (budget["spent_usd"].as_f64().unwrap() - 0.108).abs() < 1e-12,
        "{budget}"
    );
}

#[test]
fn max_cost_holds_a_judged_run_without_generate() {
    let server = fake_openai();
    let sb = Sandbox::new();
    let output = judged(
        &sb,
        &server.url("/v1"),
        "text",
        &[
            "--price",
            "acme/judge=1000,2000",
            "--max-cost",
            "0.02",
            "--candidate",
            "Paris",
        ],
    );
    assert_eq!(code(&output), 5, "{}", stderr_text(&output));
    assert_eq!(server.requests().len(), 1);
    assert_eq!(
        text_without_elapsed(&output),
        "evaluator: judge acme/judge   score range: unit\n\
         calls: 1 (1 ok, 0 errors)   elapsed: E\n\
         tokens: 12 prompt, 3 completion\n\
         judge cost: $0.018000\n\
         cost: $0.018000\n\
         budget: $0.018000 of --max-cost 0.02 spent: stopped, 2 calls not made (--resume continues)\n\
         \n\
         candidate  score   train mean  n / errors\n\
         cand-1     1.0000  1.0000      1 / 0\n\
         \n\
         score = the candidate's train mean; failed calls count as 0\n\
         \n\
         exit 5: stopped by --max-cost 0.02: 2 calls not made (--resume continues); the call succeeded\n"
    );
}

#[test]
fn a_budget_without_a_price_for_the_judge_is_refused_before_any_call() {
    let server = fake_openai();
    let sb = Sandbox::new();
    let url = server.url("/v1");
    let refusal = "error: --max-cost: no price for acme/judge (--judge-model): give every model \
                   the run calls one with --price MODEL=IN,OUT (USD per million input and output \
                   tokens) or a [prices] table in evalctl.toml\n";
    let output = judged_generation(
        &sb,
        &url,
        "text",
        &["--price", "acme/small=1,2", "--max-cost", "1"],
    );
    assert_eq!(code(&output), 2);
    assert_eq!(stderr_text(&output), refusal);
    let output = judged(
        &sb,
        &url,
        "text",
        &["--max-cost", "1", "--candidate", "Paris"],
    );
    assert_eq!(code(&output), 2);
    assert_eq!(stderr_text(&output), refusal);
    assert_eq!(stdout_text(&output), "");
    assert!(server.requests().is_empty());
    assert!(!sb.exists("results.jsonl"));
}

/// A command evaluator that scores each repeat of an example by the next digit of its `runs`
/// field (1 passes, 0 fails), counting repeats per example id in files: the same scores
/// whatever order the calls run in.
const BY_RUNS: &str = r#"p=$(cat)
id=$(printf '%s' "$p" | sed 's/.*"id": *"\([^"]*\)".*/\1/')
runs=$(printf '%s' "$p" | sed 's/.*"runs": *"\([^"]*\)".*/\1/')
n=$(cat "count.$id" 2>/dev/null || echo 0)
echo $((n + 1)) > "count.$id"
printf '{"score": %s}' "$(printf '%s' "$runs" | cut -c$((n + 1)))"
"#;

#[test]
fn repeats_with_a_pass_score_report_pass_at_1_and_pass_at_n_and_the_flaky_examples() {
    let sb = Sandbox::new();
    sb.write("eval.sh", BY_RUNS);
    sb.write(
        "d.jsonl",
        "{\"id\": \"a\", \"runs\": \"111\"}\n{\"id\": \"b\", \"runs\": \"100\"}\n\
         {\"id\": \"c\", \"runs\": \"000\"}\n{\"id\": \"d\", \"runs\": \"110\"}\n",
    );
    let run = |format: &str| {
        for file in ["count.a", "count.b", "count.c", "count.d", "results.jsonl"] {
            let _ = std::fs::remove_file(sb.path().join(file));
        }
        sb.evalctl()
            .args([
                "run",
                "--no-config",
                "--format",
                format,
                "--skip-preflight",
                "-j",
                "1",
            ])
            .args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"])
            .args(["--repeat", "3", "--pass-score", "0.5", "--candidate", "x"])
            .args(["--output", "results.jsonl"])
            .output()
            .unwrap()
    };
    let output = run("json");
    assert_eq!(code(&output), 1, "{}", stderr_text(&output));
    // pass@1: (3/3 + 1/3 + 0/3 + 2/3) / 4; pass@3: (1 + 1 + 0 + 1) / 4.
    let pass_at_k = json!({"k": 3, "pass_at_1": 0.5, "pass_at_k": 0.75, "flaky": ["b", "d"]});
    assert_eq!(
        json_stdout(&output)["candidates"][0]["pass_at_k"],
        pass_at_k
    );
    // The results file alone gives the same.
    let summarized = sb
        .evalctl()
        .args([
            "summarize",
            "--format",
            "json",
            "--pass-score",
            "0.5",
            "results.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&summarized), 1, "{}", stderr_text(&summarized));
    assert_eq!(
        json_stdout(&summarized)["candidates"][0]["pass_at_k"],
        pass_at_k
    );
    let output = run("text");
    assert_eq!(code(&output), 1, "{}", stderr_text(&output));
    assert_eq!(
        text_without_elapsed(&output),
        "evaluator: command sh eval.sh   score range: unit\n\
         calls: 12 (12 ok, 0 errors)   elapsed: E\n\
         \n\
         candidate  score            train mean       n / errors  pass@1  pass@3\n\
         cand-1     0.5000 ± 0.3333  0.5000 ± 0.3333  12 / 0      0.5000  0.7500\n\
         \n\
         flaky in cand-1 (passed in some repeats, failed in others): b, d\n\
         \n\
         score = the candidate's train mean; failed calls count as 0\n\
         ± = half-width of the 95% bootstrap interval over examples (--seed)\n\
         pass@k = chance that at least one of k repeats scores --pass-score or more (unbiased estimator, averaged over examples)\n\
         \n\
         exit 1: all 12 calls succeeded; 6 of 12 calls scored below --pass-score 0.5\n"
    );
}

#[test]
fn pass_at_k_is_reported_per_candidate_and_task_model() {
    let server = fake_openai();
    let sb = Sandbox::new();
    let output = two_models(
        &sb,
        &server.url("/v1"),
        "json",
        &["--repeat", "2", "--pass-score", "1"],
    );
    assert_eq!(code(&output), 1, "{}", stderr_text(&output));
    let summary = json_stdout(&output);
    let pass = |at: f64| json!({"k": 2, "pass_at_1": at, "pass_at_k": at, "flaky": []});
    assert_eq!(summary["candidates"][0]["task_model"], "acme/small");
    assert_eq!(summary["candidates"][0]["pass_at_k"], pass(1.0));
    assert_eq!(summary["candidates"][1]["task_model"], "acme/large");
    assert_eq!(summary["candidates"][1]["pass_at_k"], pass(0.0));
}

/// A loopback OpenAI-compatible API whose judge (`judge`) answers prose, not JSON, to the
/// first `garbled` requests, then `{"score": 1}`; every other model answers `Paris`. Every
/// reply reports 12 prompt and 3 completion tokens, but `mute`'s.
fn judge_garbled_at_first(garbled: usize) -> Server {
    Server::start(move |request, index| {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let answer = match body["model"].as_str() {
            Some("judge") if index < garbled => "It looks right to me.".to_string(),
            Some("judge") => json!({"score": 1}).to_string(),
            _ => "Paris".to_string(),
        };
        let mut reply = json!({"choices": [{"index": 0, "message": {"role": "assistant",
                                                                    "content": answer},
                                            "finish_reason": "stop"}],
                               "usage": {"prompt_tokens": 12, "completion_tokens": 3,
                                         "total_tokens": 15}});
        if body["model"] == "mute" {
            reply.as_object_mut().unwrap().remove("usage");
        }
        Reply::json(reply.to_string())
    })
}

#[test]
fn a_resumed_run_counts_what_its_superseded_judge_calls_spent() {
    // Every call costs $0.018, the task model's and the judge's. The first run's three judge
    // calls answer prose: three failed calls, $0.108 spent.
    let server = judge_garbled_at_first(6);
    let sb = Sandbox::new();
    let url = server.url("/v1");
    let prices = SMALL_AND_JUDGE_AT_0_018;
    let first = judged_generation(&sb, &url, "json", &prices);
    assert_eq!(code(&first), 1, "{}", stderr_text(&first));
    assert_eq!(json_stdout(&first)["cost_usd"], json!(0.108));
    // Resumed, the answers recorded are scored again: what the failed lines spent counts
    // ($0.108), and each answer's tokens count once, on the line that spent them. After two
    // judge calls ($0.108 + 2 × $0.018), a third would pass $0.15: the failed line of the call
    // not made still answers it, as `summarize` says.
    let budget = [&prices[..], &["--max-cost", "0.15", "--resume"]].concat();
    let resumed = judged_generation(&sb, &url, "text", &budget);
    assert_eq!(code(&resumed), 5, "{}", stderr_text(&resumed));
    assert_eq!(server.requests().len(), 8);
    assert_eq!(
        text_without_elapsed(&resumed),
        "evaluator: judge acme/judge   score range: unit\n\
         calls: 3 (2 ok, 1 error)   elapsed: E\n\
         tokens: 60 prompt, 15 completion\n\
         task model tokens: 36 prompt, 9 completion\n\
         judge cost: $0.090000\n\
         cost: $0.144000\n\
         budget: $0.144000 of --max-cost 0.15 spent: stopped, 1 call not made (--resume continues)\n\
         \n\
         candidate  task model  score            train mean       n / errors  tokens in / out  cost\n\
         terse.txt  acme/small  0.6667 ± 0.5000  0.6667 ± 0.5000  3 / 1       36 / 9           $0.054000\n\
         \n\
         score = the candidate's train mean; failed calls count as 0\n\
         ± = half-width of the 95% bootstrap interval over examples (--seed)\n\
         \n\
         exit 5: stopped by --max-cost 0.15: 1 call not made (--resume continues); 1 of 3 calls failed\n"
    );
    // The summary of the results file counts the same calls and tokens.
    let summary = sb
        .evalctl()
        .args(["summarize", "--format", "json", "results.jsonl"])
        .output()
        .unwrap();
    let summary = json_stdout(&summary);
    assert_eq!(
        (&summary["calls"], &summary["usage"]),
        (
            &json!({"total": 3, "ok": 2, "errors": 1, "cached": 0}),
            &json!({"prompt_tokens": 60, "completion_tokens": 15})
        )
    );
}

#[test]
fn a_reply_without_token_usage_stops_a_budget_and_is_said_beside_a_cost() {
    let server = fake_openai();
    let sb = Sandbox::new();
    let url = server.url("/v1");
    sb.write(
        "terse.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    // `acme/mute`'s API leaves the token usage out of its replies.
    let mute = |format: &str, extra: &[&str]| {
        generate_as(&sb, format)
            .env("ACME_API_KEY", KEY)
            .args(["--task-model", "acme/mute", "--task-base-url", &url])
            .args(["--skip-preflight", "-j", "1", "--output", "results.jsonl"])
            .args(["--price", "acme/mute=1000,2000"])
            .args(extra)
            .arg("terse.txt")
            .output()
            .unwrap()
    };
    // Under a budget, the first such reply stops the run: what it spends cannot be counted.
    let output = mute("text", &["--max-cost", "1"]);
    assert_eq!(code(&output), 5, "{}", stderr_text(&output));
    assert_eq!(server.requests().len(), 1);
    let checks = fixture("checks.json");
    assert_eq!(
        text_without_elapsed(&output),
        format!(
            "evaluator: checks {checks}   score range: unit\n\
             calls: 1 (1 ok, 0 errors)   elapsed: E\n\
             budget: $0.000000 of --max-cost 1 spent: stopped, 2 calls not made (acme/mute's API \
             reported no token usage, so the budget cannot count its calls: run without --max-cost \
             to make them)\n\
             \n\
             candidate  task model  score   train mean  n / errors\n\
             terse.txt  acme/mute   0.0000  0.0000      1 / 0\n\
             \n\
             score = the candidate's train mean; failed calls count as 0\n\
             \n\
             exit 5: stopped by --max-cost 1: 2 calls not made (acme/mute's API reported no token \
             usage, so the budget cannot count its calls: run without --max-cost to make them); \
             the call succeeded\n"
        )
    );
    let warning = "warning: acme/mute's API reported no token usage for 1 call: their tokens \
                   and cost are not counted\n";
    assert_eq!(stderr_text(&output), warning);
    let generation = &sb.jsonl("results.jsonl")[0]["generation"];
    assert_eq!(generation["usage_missing"], json!(true));
    assert_eq!(generation["usage"]["total_tokens"], json!(0));
    // Resumed under a budget, the line already recorded stops it before any call.
    let again = mute("json", &["--max-cost", "1", "--resume"]);
    assert_eq!(code(&again), 5, "{}", stderr_text(&again));
    assert_eq!(server.requests().len(), 1);
    assert_eq!(
        json_stdout(&again)["budget"],
        json!({"max_cost_usd": 1.0, "spent_usd": 0.0, "stopped": true, "calls_not_made": 2,
               "usage_missing_from": "acme/mute"})
    );
    assert_eq!(
        json_stdout(&again)["usage_missing"],
        json!({"acme/mute": 1})
    );
    // Without a budget, the run makes every call and says what its cost leaves out.
    let all = mute("text", &["--resume"]);
    assert_eq!(code(&all), 0, "{}", stderr_text(&all));
    assert_eq!(server.requests().len(), 3);
    assert_eq!(
        stderr_text(&all),
        "resuming results.jsonl: 1 of 3 calls already done, 2 to make\n\
         warning: acme/mute's API reported no token usage for 3 calls: their tokens and cost \
         are not counted\n"
    );
}

#[test]
fn a_resumed_run_still_knows_which_answers_reported_no_tokens() {
    // `acme/mute` reports no tokens; the first run's judge calls all fail.
    let server = judge_garbled_at_first(6);
    let sb = with_terse_prompt();
    let run = |extra: &[&str]| {
        judged(
            &sb,
            &server.url("/v1"),
            "text",
            &[
                &["--generate", "--task-model", "acme/mute"][..],
                &[
                    "--task-base-url",
                    &server.url("/v1"),
                    "--output",
                    "results.jsonl",
                ],
                &["--price", "acme/mute=1,1", "--price", "acme/judge=1,1"],
                extra,
                &["terse.txt"],
            ]
            .concat(),
        )
    };
    let first = run(&[]);
    assert_eq!(code(&first), 1, "{}", stderr_text(&first));
    assert!(stderr_text(&first).ends_with(
        "warning: acme/mute's API reported no token usage for 3 calls: their tokens and cost \
         are not counted\nexit 1: 3 of 3 calls failed\n"
    ));
    // Resumed under a budget, the answers recorded without their tokens stop it at once.
    let resumed = run(&["--max-cost", "1", "--resume"]);
    assert_eq!(code(&resumed), 5, "{}", stderr_text(&resumed));
    assert_eq!(server.requests().len(), 6);
    assert_eq!(
        text_without_elapsed(&resumed),
        "evaluator: judge acme/judge   score range: unit\n\
         calls: 3 (0 ok, 3 errors)   elapsed: E\n\
         tokens: 36 prompt, 9 completion\n\
         judge cost: $0.000045\n\
         cost: $0.000045\n\
         budget: $0.000045 of --max-cost 1 spent: stopped, 3 calls not made (acme/mute's API \
         reported no token usage, so the budget cannot count its calls: run without --max-cost \
         to make them)\n\
         \n\
         candidate  task model  score            train mean       n / errors\n\
         terse.txt  acme/mute   0.0000 ± 0.0000  0.0000 ± 0.0000  3 / 3\n\
         \n\
         score = the candidate's train mean; failed calls count as 0\n\
         ± = half-width of the 95% bootstrap interval over examples (--seed)\n\
         \n\
         exit 5: stopped by --max-cost 1: 3 calls not made (acme/mute's API reported no token \
         usage, so the budget cannot count its calls: run without --max-cost to make them); 3 \
         of 3 calls failed\n"
    );
}

#[test]
fn a_refusal_spends_against_the_budget() {
    let server = fake_openai();
    let sb = with_terse_prompt();
    // Each refusal reports 12 prompt and 3 completion tokens: $0.018. After one, a second
    // would pass $0.03.
    let output = generate_as(&sb, "json")
        .env("ACME_API_KEY", KEY)
        .args([
            "--task-model",
            "acme/prude",
            "--task-base-url",
            &server.url("/v1"),
        ])
        .args(["--skip-preflight", "-j", "1", "--retries", "0"])
        .args(["--price", "acme/prude=1000,2000", "--max-cost", "0.03"])
        .arg("terse.txt")
        .output()
        .unwrap();
    assert_eq!(code(&output), 5, "{}", stderr_text(&output));
    assert_eq!(server.requests().len(), 1);
    let summary = json_stdout(&output);
    assert_eq!(
        (&summary["cost_usd"], &summary["budget"]["spent_usd"]),
        (&json!(0.018), &json!(0.018))
    );
}

#[test]
fn a_call_stopped_while_its_answer_is_scored_keeps_the_answer_and_what_it_spent() {
    let server = fake_openai();
    let sb = with_terse_prompt();
    // While `hold` is there, the evaluator says it started and waits.
    sb.write(
        "eval.sh",
        "cat > /dev/null\nif [ -e hold ]; then touch \"started.$$\"; fi\n\
         while [ -e hold ]; do sleep 0.05; done\nprintf '{\"score\": 1}'\n",
    );
    sb.write("hold", "");
    let url = server.url("/v1");
    let run = |format: &str| {
        let mut command = crate::common::evalctl_process();
        command
            .current_dir(sb.path())
            .env("ACME_API_KEY", KEY)
            .args(["run", "--no-config", "--format", format, "--generate"])
            .args(["--dataset", &fixture("qa.jsonl")])
            .args([
                "--evaluator-command",
                "sh eval.sh",
                "--task-model",
                "acme/small",
            ])
            .args(["--task-base-url", &url, "--skip-preflight", "-j", "3"])
            .args([
                "--price",
                "acme/small=1000,2000",
                "--output",
                "results.jsonl",
            ])
            .arg("terse.txt");
        command
    };
    let started = || {
        std::fs::read_dir(sb.path())
            .unwrap()
            .filter(|entry| {
                let name = entry.as_ref().unwrap().file_name();
                name.to_string_lossy().starts_with("started.")
            })
            .count()
    };
    let child = run("json")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        crate::common::wait_until(std::time::Duration::from_secs(60), || started() == 3),
        "the evaluator never scored the three answers"
    );
    // SIGTERM stops the three calls in flight: each task model had answered, at $0.018.
    // SAFETY: kill with a live child's pid has no memory-safety preconditions.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) },
        0
    );
    let stopped = child.wait_with_output().unwrap();
    assert_eq!(code(&stopped), 130, "{}", stderr_text(&stopped));
    assert_eq!(
        stderr_text(&stopped),
        "interrupted: stopped the 3 calls in flight; the task model had answered 3 of them: the \
         answers are kept in results.jsonl, and --resume scores them\n\
         interrupted: 0 of 3 calls finished; the summary covers them\n"
    );
    let summary = json_stdout(&stopped);
    assert_eq!(summary["calls"]["total"], json!(0));
    assert_eq!(
        (&summary["generation"]["usage"], &summary["cost_usd"]),
        (
            &json!({"prompt_tokens": 36, "completion_tokens": 9}),
            &json!(0.054)
        )
    );
    let lines = sb.jsonl("results.jsonl");
    assert_eq!(lines.len(), 3);
    for line in &lines {
        assert_eq!(line["error"]["kind"], json!("interrupted"), "{line}");
        assert_eq!(line["generation"]["usage"]["total_tokens"], json!(15));
        assert!(line["output"]
            .as_str()
            .is_some_and(|output| !output.is_empty()));
    }
    assert_eq!(
        lines[0]["error"]["message"],
        json!("the run stopped before the evaluator scored the task model's answer: --resume scores it")
    );
    // The file's summary says the same: no call, and the tokens spent.
    let read = sb
        .evalctl()
        .args([
            "summarize",
            "--allow-partial",
            "--format",
            "json",
            "results.jsonl",
        ])
        .output()
        .unwrap();
    let summary = json_stdout(&read);
    assert_eq!(
        (&summary["calls"]["total"], &summary["generation"]["usage"]),
        (
            &json!(0),
            &json!({"prompt_tokens": 36, "completion_tokens": 9})
        )
    );
    let rows: Vec<(&Value, &Value)> = (summary["candidates"].as_array().unwrap().iter())
        .map(|row| (&row["id"], &row["task_model"]))
        .collect();
    assert_eq!(rows, [(&json!("terse.txt"), &json!("acme/small"))]);
    // Resumed, the answers kept are scored: no task model is called again, and the cost is the
    // whole run's.
    std::fs::remove_file(sb.join("hold")).unwrap();
    let resumed = run("text").arg("--resume").output().unwrap();
    assert_eq!(code(&resumed), 0, "{}", stderr_text(&resumed));
    assert_eq!(server.requests().len(), 3);
    let text = text_without_elapsed(&resumed);
    assert_eq!(
        text.lines().collect::<Vec<_>>()[1..6],
        [
            "calls: 3 (3 ok, 0 errors)   elapsed: E",
            "task model tokens: 36 prompt, 9 completion",
            "cost: $0.054000",
            "",
            "candidate  task model  score            train mean       n / errors  tokens in / out  cost",
        ]
    );
}

#[test]
fn a_call_whose_task_model_and_judge_both_report_no_tokens_counts_for_each() {
    // Neither `acme/mute` nor the judge `mute` reports its token usage: each of the three calls
    // is uncounted for both models, and each model is named.
    let server = Server::start(|request, _| {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let answer = match body["messages"][0]["content"].as_str() {
            Some(system) if system.contains("score") => json!({"score": 1}).to_string(),
            _ => "Paris".to_string(),
        };
        Reply::json(
            json!({"choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": answer}}]})
            .to_string(),
        )
    });
    let sb = with_terse_prompt();
    let url = server.url("/v1");
    let output = sb
        .evalctl()
        .env("ACME_API_KEY", KEY)
        .args(["run", "--no-config", "--format", "json", "--dataset"])
        .arg(fixture("qa.jsonl"))
        .args(["--judge-model", "acme/mute", "--judge-base-url", &url])
        .args([
            "--objective",
            "Name the capital.",
            "--skip-preflight",
            "-j",
            "1",
        ])
        .args([
            "--generate",
            "--task-model",
            "acme/quiet",
            "--task-base-url",
            &url,
        ])
        .args(["--price", "acme/quiet=1,1", "--price", "acme/mute=1,1"])
        .arg("terse.txt")
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(
        json_stdout(&output)["usage_missing"],
        json!({"acme/mute": 3, "acme/quiet": 3})
    );
    assert_eq!(
        stderr_text(&output),
        "warning: acme/mute's API reported no token usage for 3 calls: their tokens and cost \
         are not counted\n\
         warning: acme/quiet's API reported no token usage for 3 calls: their tokens and cost \
         are not counted\n"
    );
}
