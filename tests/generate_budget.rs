//! What `run --generate` spends, through the real binary against the loopback OpenAI-compatible
//! server of the generate tests (usage in every reply): the task models' tokens per candidate ×
//! task model and in total, with the tokens the cache saved, in the text, JSON and Markdown
//! summaries.

use crate::common::{code, json_stdout, stderr_text, stdout_text, Sandbox};
use crate::generate::{fake_openai, fixture, generate_as, KEY};
use serde_json::json;

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
             score = the candidate's train mean; failed calls count as 0\n\
             ± = half-width of the 95% bootstrap interval over examples (--seed)\n\
             \n\
             exit 0: all 6 calls succeeded\n"
        )
    );
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
    let saved = json!({"usage_saved": {"prompt_tokens": 36, "completion_tokens": 9}});
    assert_eq!(summary["candidates"][0]["generation"], saved);
    assert_eq!(summary["candidates"][1]["generation"], saved);
    assert_eq!(
        summary["generation"],
        json!({"usage_saved": {"prompt_tokens": 72, "completion_tokens": 18}})
    );
    let markdown = two_models(&sb, &url, "markdown", &cache);
    assert_eq!(code(&markdown), 0, "{}", stderr_text(&markdown));
    let markdown = stdout_text(&markdown);
    let evaluator_line = markdown.lines().find(|line| line.starts_with("Evaluator:"));
    let (_, elapsed) = evaluator_line.unwrap().split_once("elapsed: ").unwrap();
    let elapsed = elapsed.split(' ').next().unwrap();
    assert_eq!(
        markdown.replace(&format!("elapsed: {elapsed}"), "elapsed: E"),
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
