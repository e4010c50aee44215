//! Pacing model calls to a server's announced limits, through the real binary: `tasks run` and
//! the judge against a loopback OpenAI-compatible server that refuses requests past its limit
//! with 429 and `Retry-After`, `retry-after-ms` and `x-ratelimit-*` headers finish with zero
//! failed calls at `--retries 0` and few 429s; so does `tasks run` against a server with a
//! request rate; a 429 without an announced limit is waited out too; announced waits are
//! bounded per call, over all its attempts.
//!
//! The 429 counts are asserted against a server whose limit is on requests in flight, which it
//! counts itself: evalctl counts each request from before it is sent until its reply is read, so
//! the server never sees more in flight than evalctl has started, whatever the machine's speed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::{code, json_stdout, stderr_text, Reply, Request, Sandbox, Server};
use serde_json::{json, Value};

const KEY: &str = "sk-Rt5mW2qX8vL4nJ7pB3cK";
/// Requests the fake server holds at once; more draw a 429.
const IN_FLIGHT_LIMIT: usize = 4;
/// Model calls per run.
const CALLS: usize = 200;
/// Requests evalctl makes at once (`-j`).
const CONCURRENCY: usize = 16;

/// A fake OpenAI-compatible chat-completions server with a limit, and what it counted.
struct LimitedModel {
    server: Server,
    /// Completions served.
    completions: Arc<AtomicUsize>,
    /// 429s sent.
    rejected: Arc<AtomicUsize>,
}

impl LimitedModel {
    /// A server that holds at most [`IN_FLIGHT_LIMIT`] requests at once (each for a few
    /// milliseconds) and answers any request beyond with a 429 announcing its limit.
    fn in_flight_limited() -> LimitedModel {
        let completions = Arc::new(AtomicUsize::new(0));
        let rejected = Arc::new(AtomicUsize::new(0));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let (served, refused) = (Arc::clone(&completions), Arc::clone(&rejected));
        let server = Server::start(move |request, _| {
            if request.method == "GET" {
                return Reply::json(r#"{"object": "list", "data": []}"#);
            }
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            if now > IN_FLIGHT_LIMIT {
                in_flight.fetch_sub(1, Ordering::SeqCst);
                refused.fetch_add(1, Ordering::SeqCst);
                return limit_headers(Reply::status(429, TOO_MANY), 0)
                    .header("Retry-After", "0")
                    .header("retry-after-ms", "5");
            }
            // The request stays in flight while the model "thinks".
            std::thread::sleep(Duration::from_millis(10));
            let reply = completion(request);
            let before = in_flight.fetch_sub(1, Ordering::SeqCst);
            let left = (IN_FLIGHT_LIMIT + 1).saturating_sub(before);
            served.fetch_add(1, Ordering::SeqCst);
            limit_headers(reply, left)
        });
        LimitedModel {
            server,
            completions,
            rejected,
        }
    }
}

const TOO_MANY: &str = r#"{"error": {"message": "Rate limit reached", "type": "requests"}}"#;

/// `reply` with the server's `x-ratelimit-*` headers, `remaining` requests left.
fn limit_headers(reply: Reply, remaining: usize) -> Reply {
    reply
        .header("x-ratelimit-limit-requests", &IN_FLIGHT_LIMIT.to_string())
        .header("x-ratelimit-remaining-requests", &remaining.to_string())
        .header("x-ratelimit-reset-requests", "0s")
}

/// A chat completion in the real wire format, with usage; its content is a judge's verdict.
fn completion(request: &Request) -> Reply {
    let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
    Reply::json(
        json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message":
                {"role": "assistant", "content": "{\"score\": 1, \"reasoning\": \"fine\"}"}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        })
        .to_string(),
    )
}

/// 429s allowed for a run of `calls` calls: a tenth of them, plus one round of `-j`.
fn few(calls: usize) -> usize {
    calls / 10 + CONCURRENCY
}

/// A tasks file of `count` tasks.
fn tasks(sandbox: &Sandbox, count: usize) {
    let lines: String = (0..count)
        .map(|n| {
            format!(
                "{}\n",
                json!({"task_id": format!("t{n}"), "category": "summary",
                       "prompt": format!("Question {n}"), "targets": ["fine"],
                       "metric_name": "exact_match", "post_process": "strip_whitespace"})
            )
        })
        .collect();
    sandbox.write("tasks.jsonl", lines);
}

/// `evalctl tasks run` of `tasks.jsonl` against `server` with `--retries RETRIES`.
fn tasks_run(sandbox: &Sandbox, server: &Server, retries: &str) -> std::process::Output {
    tasks_run_with(
        sandbox,
        server,
        &["--retries", retries, "-j", &CONCURRENCY.to_string()],
    )
}

/// `evalctl tasks run` of `tasks.jsonl` against `server` with `flags`.
fn tasks_run_with(sandbox: &Sandbox, server: &Server, flags: &[&str]) -> std::process::Output {
    sandbox
        .evalctl()
        .env("ACME_API_KEY", KEY)
        .args([
            "tasks",
            "run",
            "--no-config",
            "--format",
            "json",
            "tasks.jsonl",
        ])
        .args(["--model", "acme/m", "--base-url", &server.url("/v1")])
        .args(flags)
        .output()
        .unwrap()
}

#[test]
fn tasks_run_at_the_limit_loses_no_call_at_zero_retries() {
    let model = LimitedModel::in_flight_limited();
    let sandbox = Sandbox::new();
    tasks(&sandbox, CALLS);
    let output = tasks_run(&sandbox, &model.server, "0");
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    let run = json_stdout(&output);
    assert_eq!(run["generation"]["failed"], json!([]));
    assert_eq!(run["generation"]["completed"], CALLS);
    few_429s_each_waited_out(&model, &output, "m");
}

/// `model` served every call once and sent few 429s, and `output` (of calls to its model
/// `name`) ends with the note that each was waited out for the 5 ms the server asked.
fn few_429s_each_waited_out(model: &LimitedModel, output: &std::process::Output, name: &str) {
    assert_eq!(model.completions.load(Ordering::SeqCst), CALLS);
    let rejected = model.rejected.load(Ordering::SeqCst);
    assert!(
        rejected < few(CALLS),
        "{rejected} 429s for {CALLS} completions"
    );
    assert_eq!(
        stderr_text(output),
        rate_limited_note(
            &model.server,
            CALLS + rejected,
            rejected,
            rejected,
            5 * rejected,
            0
        )
        .replace(" m at ", &format!(" {name} at "))
    );
}

/// The note a command ends with when `server`'s model `m` answered `too_many` of `requests`
/// with 429: `waited_out` of them waited out for `waited_ms` in all, `failed` failed attempts;
/// none without a 429.
fn rate_limited_note(
    server: &Server,
    requests: usize,
    too_many: usize,
    waited_out: usize,
    waited_ms: usize,
    failed: usize,
) -> String {
    if too_many == 0 {
        return String::new();
    }
    let mut outcomes = Vec::new();
    if waited_out > 0 {
        outcomes.push(format!(
            "{waited_out} waited out and sent again ({}s of waiting, summed over the calls)",
            waited_ms as f64 / 1000.0
        ));
    }
    match failed {
        0 => {}
        1 => outcomes.push("1 counted as a failed attempt".to_string()),
        _ => outcomes.push(format!("{failed} counted as failed attempts")),
    }
    format!(
        "rate limited: m at {} answered {too_many} of {requests} requests with 429 Too Many \
         Requests: {}\n",
        server.url("/v1"),
        outcomes.join(", ")
    )
}

/// `evalctl run` of `examples.jsonl` in `sandbox`, judged by `acme/judge` at `server` with
/// `--retries 0` and `flags`, its summary in JSON.
fn judge_run(sandbox: &Sandbox, server: &Server, flags: &[&str]) -> std::process::Output {
    sandbox
        .evalctl()
        .env("ACME_API_KEY", KEY)
        .args(["run", "--no-config", "--format", "json"])
        .args(["--candidate", "an answer", "--dataset", "examples.jsonl"])
        .args(["--objective", "Answer well.", "--judge-model", "acme/judge"])
        .args(["--judge-base-url", &server.url("/v1"), "--retries", "0"])
        .args(flags)
        .output()
        .unwrap()
}

#[test]
fn the_judge_at_the_limit_loses_no_call_at_zero_retries() {
    let model = LimitedModel::in_flight_limited();
    let sandbox = Sandbox::new();
    let examples: String = (0..CALLS)
        .map(|n| format!("{}\n", json!({"input": format!("question {n}")})))
        .collect();
    sandbox.write("examples.jsonl", examples);
    let output = judge_run(
        &sandbox,
        &model.server,
        &["-j", &CONCURRENCY.to_string(), "--output", "results.jsonl"],
    );
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    let results = std::fs::read_to_string(sandbox.join("results.jsonl")).unwrap();
    let scored: Vec<Value> = results
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line.get("score").is_some())
        .collect();
    assert_eq!(scored.len(), CALLS);
    for line in &scored {
        assert_eq!(
            (&line["error"], &line["attempts"]),
            (&json!(null), &json!(1))
        );
    }
    few_429s_each_waited_out(&model, &output, "judge");
}

/// A fake OpenAI-compatible server with a request rate limit on its own clock: a bucket of
/// [`BUCKET`] requests refilled one per [`REFILL`], 429 with `retry-after-ms`, `Retry-After` and
/// `x-ratelimit-*` headers (OpenAI's meaning: the reset is the time until the bucket is full)
/// when it is empty. Counts completions and 429s.
fn rate_limited_model() -> LimitedModel {
    let completions = Arc::new(AtomicUsize::new(0));
    let rejected = Arc::new(AtomicUsize::new(0));
    let bucket = std::sync::Mutex::new((BUCKET as f64, std::time::Instant::now()));
    let (served, refused) = (Arc::clone(&completions), Arc::clone(&rejected));
    let server = Server::start(move |request, _| {
        if request.method == "GET" {
            return Reply::json(r#"{"object": "list", "data": []}"#);
        }
        let (allowed, left) = {
            let mut bucket = bucket.lock().unwrap();
            let now = std::time::Instant::now();
            let refilled = now.duration_since(bucket.1).as_secs_f64() / REFILL.as_secs_f64();
            *bucket = ((bucket.0 + refilled).min(BUCKET as f64), now);
            let allowed = bucket.0 >= 1.0;
            if allowed {
                bucket.0 -= 1.0;
            }
            (allowed, bucket.0)
        };
        let headers = |reply: Reply| {
            let full = REFILL.mul_f64(BUCKET as f64 - left);
            reply
                .header("x-ratelimit-limit-requests", &BUCKET.to_string())
                .header("x-ratelimit-remaining-requests", &(left as u64).to_string())
                .header(
                    "x-ratelimit-reset-requests",
                    &format!("{}ms", full.as_millis()),
                )
        };
        if !allowed {
            refused.fetch_add(1, Ordering::SeqCst);
            let wait = REFILL.mul_f64(1.0 - left);
            return headers(Reply::status(429, TOO_MANY))
                .header("retry-after-ms", &wait.as_millis().to_string())
                .header("Retry-After", "1");
        }
        served.fetch_add(1, Ordering::SeqCst);
        headers(completion(request))
    });
    LimitedModel {
        server,
        completions,
        rejected,
    }
}

/// The rate-limited server's bucket.
const BUCKET: usize = 10;
/// The rate-limited server's time per request.
const REFILL: Duration = Duration::from_millis(10);

#[test]
fn tasks_run_at_an_announced_rate_loses_no_call_at_zero_retries() {
    let model = rate_limited_model();
    let sandbox = Sandbox::new();
    tasks(&sandbox, CALLS);
    let output = tasks_run(&sandbox, &model.server, "0");
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    let run = json_stdout(&output);
    assert_eq!(run["generation"]["failed"], json!([]));
    // Each task was completed once: no answer was thrown away and asked for again. How many
    // 429s the bucket drew depends on this machine's timing, so only the in-flight tests above
    // bound them.
    assert_eq!(model.completions.load(Ordering::SeqCst), CALLS);
}

#[test]
fn a_429_without_an_announced_limit_is_waited_out_without_the_retries() {
    // A limit that says nothing (no Retry-After, no x-ratelimit-*): the pacer waits a second of
    // its own and sends the request again, at --retries 0.
    let completions = Arc::new(AtomicUsize::new(0));
    let server = Server::start({
        let completions = Arc::clone(&completions);
        move |request: &Request, _| {
            if request.method != "POST" {
                return Reply::json(r#"{"object": "list", "data": []}"#);
            }
            match completions.fetch_add(1, Ordering::SeqCst) {
                0 => Reply::status(429, TOO_MANY),
                _ => completion_of_any(),
            }
        }
    });
    let sandbox = Sandbox::new();
    tasks(&sandbox, 1);
    let output = tasks_run(&sandbox, &server, "0");
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    assert_eq!(json_stdout(&output)["generation"]["failed"], json!([]));
    assert_eq!(
        completions.load(Ordering::SeqCst),
        2,
        "the 429, then the completion"
    );
    assert_eq!(
        stderr_text(&output),
        rate_limited_note(&server, 2, 1, 1, 1000, 0)
    );
}

#[test]
fn announced_waits_are_bounded_per_call_over_all_its_attempts() {
    // A server that always says "wait 0 ms": 20 announced waits, then the 429 is a failure,
    // and the retries wait no more.
    for (retries, requests) in [("0", 21), ("2", 23)] {
        let server = Server::fixed(Reply::status(429, TOO_MANY).header("retry-after-ms", "0"));
        let sandbox = Sandbox::new();
        tasks(&sandbox, 1);
        let output = tasks_run(&sandbox, &server, retries);
        assert_eq!(code(&output), 1, "stderr: {}", stderr_text(&output));
        let failed = &json_stdout(&output)["generation"]["failed"];
        assert_eq!(
            failed[0]["error"]["message"],
            format!(
                "HTTP 429 Too Many Requests: {TOO_MANY} (after the 20 waits a call makes, it \
                 waits no more)"
            )
        );
        let completions = server
            .requests()
            .iter()
            .filter(|request| request.method == "POST")
            .count();
        assert_eq!(completions, requests, "--retries {retries}");
        assert_eq!(
            stderr_text(&output),
            format!(
                "failed: task t0: http_status: {} (scored 0)\n{}",
                failed[0]["error"]["message"].as_str().unwrap(),
                rate_limited_note(&server, requests, requests, 20, 0, requests - 20)
            ),
            "--retries {retries}"
        );
    }
}

#[test]
fn a_wait_past_the_calls_budget_is_not_made_and_the_failure_says_why() {
    // Retry-After: 100 is waited at most a minute, which is still past --timeout 1's 10 s; no
    // retry makes that wait either.
    let server = Server::fixed(Reply::status(429, TOO_MANY).header("retry-after", "100"));
    let sandbox = Sandbox::new();
    tasks(&sandbox, 1);
    let output = tasks_run_with(&sandbox, &server, &["--retries", "2", "--timeout", "1"]);
    assert_eq!(code(&output), 1, "stderr: {}", stderr_text(&output));
    assert_eq!(
        json_stdout(&output)["generation"]["failed"][0]["error"]["message"],
        format!(
            "HTTP 429 Too Many Requests: {TOO_MANY} (the API asks the call to wait at least \
             60s, past what it may wait in all: 10s (10 times its time limit, --timeout), of \
             which 0s are spent)"
        )
    );
    let completions = server
        .requests()
        .iter()
        .filter(|request| request.method == "POST")
        .count();
    assert_eq!(completions, 1, "the wait was not made");
    let failed = &json_stdout(&output)["generation"]["failed"][0]["error"]["message"];
    assert_eq!(
        stderr_text(&output),
        format!(
            "failed: task t0: http_status: {} (scored 0)\n{}",
            failed.as_str().unwrap(),
            rate_limited_note(&server, 1, 1, 0, 0, 1)
        )
    );
}

/// A completion whatever the request.
fn completion_of_any() -> Reply {
    completion(&Request {
        method: "POST".into(),
        path: "/v1/chat/completions".into(),
        headers: Vec::new(),
        body: br#"{"model": "m"}"#.to_vec(),
        at: std::time::Instant::now(),
        connection: 0,
    })
}

#[test]
fn a_pause_past_what_a_call_may_wait_fails_the_calls_after_it_at_once() {
    // Every request is answered 429 with a wait far past any call's (a quota used up for the
    // day): the call that drew it fails at once, and so do the calls after it, unsent, instead
    // of each sitting out the pause first.
    let posts = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&posts);
    let server = Server::start(move |request, _| {
        if request.method == "GET" {
            return Reply::json(r#"{"object": "list", "data": []}"#);
        }
        counted.fetch_add(1, Ordering::SeqCst);
        Reply::status(429, TOO_MANY).header("Retry-After", "99999999999999999999")
    });
    let sandbox = Sandbox::new();
    sandbox.write(
        "examples.jsonl",
        "{\"input\": \"a\"}\n{\"input\": \"b\"}\n{\"input\": \"c\"}\n",
    );
    let output = judge_run(&sandbox, &server, &["-j", "1", "--timeout", "1"]);
    assert_eq!(code(&output), 1);
    assert_eq!(posts.load(Ordering::SeqCst), 1, "one request sent");
    let budget = "may wait in all: 10s (10 times its time limit, --timeout), of which 0s are \
                  spent";
    let unsent = |n: usize| {
        format!(
            "failed: cand-1 train #{n} (line {}): http_status: not sent: the API pauses every \
             request for 60s more (HTTP 429 Too Many Requests, or a limit used up), past what the \
             call {budget}\n",
            n + 1
        )
    };
    assert_eq!(
        stderr_text(&output),
        format!(
            "failed: cand-1 train #0 (line 1): http_status: HTTP 429 Too Many Requests: {TOO_MANY} \
             (the API asks the call to wait at least 60s, past what it {budget})\n{}{}\
             rate limited: judge at {} answered 1 of 1 requests with 429 Too Many Requests: 1 \
             counted as a failed attempt; 2 requests not sent, as the pause it asked for was \
             longer than their calls could wait\nexit 1: 3 of 3 calls failed\n",
            unsent(1),
            unsent(2),
            server.url("/v1")
        )
    );
}
