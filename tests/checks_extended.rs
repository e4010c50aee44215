//! The extended checks of FEP 2.3.6 (`semantic_similarity`, `llm_judge`) through the real
//! binary, against a fake OpenAI-compatible API on loopback that speaks the real wire format
//! (`POST /v1/embeddings`, `POST /v1/chat/completions`): results, requests sent, retries,
//! timeouts, keys (named, never written, never shown) and `run --checks` scores.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{evalctl, json_stdout, refused_url, Reply, Request, Server};
use crate::extended_support::{
    allow, api_reply, embedding, fake_api, judge, provider, refused_before_run, scored_line,
    similarity, KEY,
};

/// Run `fep evaluate` on `request` with the key set, allowed for the APIs of `servers`.
fn evaluate(request: &Value, servers: &[&Server]) -> (i32, Value) {
    let output = evalctl()
        .env("EXT_TEST_KEY", KEY)
        .args(["fep", "evaluate", "-"])
        .args(servers.iter().flat_map(|server| allow(server)))
        .write_stdin(request.to_string())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).to_string()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(!text.contains(KEY), "the key leaked: {text}");
    (output.status.code().unwrap_or(-1), json_stdout(&output))
}

/// A check result with its clock readings fixed, so it can be compared whole.
fn steady(mut result: Value) -> Value {
    result["evaluated_at"] = json!("T");
    result["metadata"]["execution_time_ms"] = json!(0);
    if let Some(metadata) = result["results"].get_mut("metadata") {
        metadata["response_time_ms"] = json!(0);
    }
    result
}

/// `fep evaluate` of one test case (the capital of France, answered `paris`) with a similarity
/// and a judge check against `server`: the document, after checking it exits 0.
fn capital_of_france(server: &Server) -> Value {
    let request = json!({
        "test_cases": [{"id": "t1", "input": "Capital of France?", "expected": "Paris"}],
        "outputs": [{"value": "paris"}],
        "checks": [similarity(server), judge(server)]
    });
    let (code, document) = evaluate(&request, &[server]);
    assert_eq!(code, 0, "{document}");
    document
}

#[test]
fn similarity_and_judge_results_follow_the_spec() {
    let server = fake_api();
    let document = capital_of_france(&server);
    let results = &document["results"][0]["check_results"];
    assert_eq!(
        steady(results[0].clone()),
        json!({
            "check_type": "semantic_similarity", "status": "completed",
            "results": {"response": {"score": 1.0, "passed": true},
                "metadata": {"model_version": "embed-2024", "response_time_ms": 0,
                    "tokens_processed": 7, "similarity_metric": "cosine", "similarity": 1.0,
                    "dimensions_used": 26}},
            "resolved_arguments": {
                "text": {"jsonpath": "$.output.value", "value": "paris"},
                "reference": {"jsonpath": "$.test_case.expected", "value": "Paris"},
                "threshold": {"value": {"min_value": 0.9}},
                "provider_config": {"value": provider(&server)},
                "model_config": {"value": {"model": "embed", "dimensions": 26}}},
            "evaluated_at": "T",
            "metadata": {"check_version": "1.0.0", "execution_time_ms": 0}
        })
    );
    assert_eq!(
        steady(results[1].clone())["results"],
        json!({"response": {"passed": false, "reasoning": "compared"},
            "metadata": {"model_version": "judge-2024", "response_time_ms": 0,
                "finish_reason": "stop", "tokens_used": 59, "prompt_tokens": 50,
                "completion_tokens": 9}})
    );
    // What was sent: the model_config members, both texts in one embeddings request, the
    // filled prompt and the schema in the judge's instructions.
    let requests = server.requests();
    let bodies: Vec<Value> = requests
        .iter()
        .map(|request| serde_json::from_slice(&request.body).unwrap())
        .collect();
    let embed = bodies
        .iter()
        .find(|body| body.get("input").is_some())
        .unwrap();
    assert_eq!(
        embed,
        &json!({"model": "embed", "dimensions": 26, "input": ["paris", "Paris"]})
    );
    let chat = bodies
        .iter()
        .find(|body| body.get("messages").is_some())
        .unwrap();
    assert_eq!(chat["model"], "judge");
    assert_eq!(chat["temperature"], 0);
    assert_eq!(chat["response_format"], json!({"type": "json_object"}));
    assert_eq!(
        chat["messages"][1]["content"],
        "Question: Capital of France?\nAnswer: paris"
    );
    assert!(chat["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains(r#""required":["passed"]"#));
}

#[test]
fn the_text_summary_counts_an_extended_checks_verdict_as_passed_or_failed() {
    // The answer `Lyon`: the similarity to `Paris` is under its threshold, and the judge says
    // `passed: false`. Both verdicts sit in `results.response`; they were counted as scores.
    let server = fake_api();
    let request = json!({
        "test_cases": [{"id": "t1", "input": "Capital of France?", "expected": "Paris"}],
        "outputs": [{"value": "Lyon"}],
        "checks": [similarity(&server), judge(&server)]
    });
    let output = evalctl()
        .env("EXT_TEST_KEY", KEY)
        .args(["fep", "evaluate", "-", "--format", "text"])
        .args(allow(&server))
        .write_stdin(request.to_string())
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{text}");
    // Past the first line, which names the evaluation.
    let (_, summary) = text.split_once('\n').unwrap();
    assert_eq!(
        summary,
        "test cases: 1   checks: 0 passed, 2 failed, 0 errors\n\
         \n\
         check type           passed  failed  scored  errors  skipped\n\
         llm_judge            0       1       0       0       0\n\
         semantic_similarity  0       1       0       0       0\n\
         all                  0       2       0       0       0\n\
         \n\
         not passed (1):\n\
         \x20 t1: semantic_similarity failed; llm_judge failed\n"
    );
}

#[test]
fn a_reply_against_the_response_format_is_an_error_and_the_other_checks_run() {
    let server = fake_api();
    let request = json!({
        "test_cases": [{"id": "t1", "input": "be vague", "expected": "Paris"}],
        "outputs": [{"value": "Lyon"}],
        "checks": [judge(&server), {"type": "exact_match",
            "arguments": {"actual": "$.output.value", "expected": "$.test_case.expected"}}]
    });
    let (code, document) = evaluate(&request, &[&server]);
    assert_eq!(code, 1);
    let results = &document["results"][0]["check_results"];
    assert_eq!(results[0]["status"], "error");
    assert_eq!(
        results[0]["error"],
        json!({"type": "unknown_error", "recoverable": false,
            "message": "the judge's reply does not match response_format: /passed: \"maybe\" is not of type \"boolean\""})
    );
    assert_eq!(results[1]["results"], json!({"passed": false}));
}

#[test]
fn a_response_format_whose_validation_would_multiply_is_not_applied_to_the_reply() {
    // Each level is allOf two references to the level below: 2^30 steps on any reply.
    let server = fake_api();
    let mut defs = serde_json::Map::new();
    defs.insert("d0".into(), json!({"type": "object"}));
    for level in 1..=30 {
        let below = json!({"$ref": format!("#/$defs/d{}", level - 1)});
        defs.insert(format!("d{level}"), json!({"allOf": [below, below]}));
    }
    let mut check = judge(&server);
    check["arguments"]["response_format"] = json!({"$defs": defs, "$ref": "#/$defs/d30"});
    let request = json!({
        "test_cases": [{"id": "t1", "input": "Capital of France?"}],
        "outputs": [{"value": "Paris"}],
        "checks": [check]
    });
    let (code, document) = evaluate(&request, &[&server]);
    assert_eq!(code, 1);
    assert_eq!(
        document["results"][0]["check_results"][0]["error"],
        json!({"type": "unknown_error", "recoverable": false,
            "message": "the judge's reply was not checked against response_format: validating \
                this document against the schema would take more than 250000 steps (each \
                subschema counted for each part of the document it applies to, as often as \
                oneOf, anyOf, allOf and $ref reach it)"})
    );
}

#[test]
fn a_prompt_placeholder_that_is_no_jsonpath_is_a_jsonpath_error() {
    let server = fake_api();
    let mut check = judge(&server);
    check["arguments"]["prompt"] = json!("Answer: {{$.output.value[}}");
    let request = json!({"test_cases": [{"id": "t1", "input": "q"}],
        "outputs": [{"value": "Lyon"}], "checks": [check]});
    let (_, document) = evaluate(&request, &[&server]);
    let error = &document["results"][0]["check_results"][0]["error"];
    assert_eq!(
        json!([error["type"], error["recoverable"]]),
        json!(["jsonpath_error", false])
    );
    assert_eq!(server.request_count(), 0);
}

#[test]
fn a_reply_cut_off_at_the_token_limit_says_so() {
    let server = fake_api();
    let request = json!({
        "test_cases": [{"id": "t1", "input": "be long-winded"}],
        "outputs": [{"value": "Lyon"}],
        "checks": [judge(&server)]
    });
    let (_, document) = evaluate(&request, &[&server]);
    assert_eq!(
        document["results"][0]["check_results"][0]["error"]["message"],
        "the judge's reply holds no JSON object: {\"reasoning\": \"First, let us (the reply was \
         cut off at the token limit: raise model_config.max_tokens)"
    );
}

#[test]
fn retryable_failures_are_retried_and_a_slow_api_is_a_timeout_error() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    // Fails the first call with a 503, then answers like the fake API.
    let flaky = Server::start(move |request: &Request, _| {
        if seen.fetch_add(1, Ordering::SeqCst) == 0 {
            return Reply::status(503, "busy");
        }
        api_reply(request)
    });
    let slow = Server::start(|_: &Request, _| Reply::json("{}").after(Duration::from_secs(3)));
    let mut retried = similarity(&flaky);
    retried["arguments"]["provider_config"]["max_retries"] = json!(2);
    let mut timed_out = similarity(&slow);
    timed_out["arguments"]["provider_config"]["timeout"] = json!(0.3);
    let request = json!({
        "test_cases": [{"id": "t1", "input": "q", "expected": "Paris"}],
        "outputs": [{"value": "Paris"}],
        "checks": [retried, timed_out]
    });
    let (code, document) = evaluate(&request, &[&flaky, &slow]);
    assert_eq!(code, 1);
    let results = &document["results"][0]["check_results"];
    assert_eq!(results[0]["status"], "completed", "{}", results[0]);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(results[1]["error"]["type"], "timeout_error");
    assert_eq!(results[1]["error"]["recoverable"], true);
}

#[test]
fn a_429_is_waited_out_and_the_rate_limit_is_named_on_stderr() {
    // The first request draws a 429 that asks for no wait; it is sent again, without using the
    // check's retries (max_retries 0), and the run ends with a note of what the limit cost.
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    let limited = Server::start(move |request: &Request, _| {
        if seen.fetch_add(1, Ordering::SeqCst) == 0 {
            return Reply::status(429, r#"{"error": {"message": "slow down"}}"#)
                .header("Retry-After", "0");
        }
        api_reply(request)
    });
    let request = json!({
        "test_cases": [{"id": "t1", "input": "q", "expected": "Paris"}],
        "outputs": [{"value": "Paris"}],
        "checks": [similarity(&limited)]
    });
    let output = evalctl()
        .env("EXT_TEST_KEY", KEY)
        .args(["fep", "evaluate", "-"])
        .args(allow(&limited))
        .write_stdin(request.to_string())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let document = json_stdout(&output);
    assert_eq!(
        document["results"][0]["check_results"][0]["status"],
        "completed"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "rate limited: embed at {} answered 1 of 2 requests with 429 Too Many Requests: 1 \
             waited out and sent again (0s of waiting, summed over the calls)\n",
            limited.url("/v1")
        )
    );
}

#[test]
fn keys_are_named_by_variable_and_never_shown() {
    let server = fake_api();
    let other = fake_api();
    let mut literal = similarity(&server);
    literal["arguments"]["provider_config"]["api_key"] = json!(KEY);
    let mut wrong = similarity(&other);
    wrong["arguments"]["provider_config"]["api_key"] = json!("${EXT_WRONG_KEY}");
    let mut remote = similarity(&server);
    remote["arguments"]["provider_config"] = json!({"base_url": "https://embeddings.example.invalid/v1", "api_key_env": "EXT_UNSET_KEY"});
    let request = json!({
        "test_cases": [{"id": "t1", "input": "q", "expected": "Paris"}],
        "outputs": [{"value": "Paris"}],
        "checks": [literal, wrong, remote]
    });
    let output = evalctl()
        .env("EXT_TEST_KEY", KEY)
        .env("EXT_WRONG_KEY", "sk-Wrong5Key8Value2Here")
        .env_remove("EXT_UNSET_KEY")
        .args(["fep", "evaluate", "-"])
        .args(allow(&server))
        .args([
            "--allow-endpoint",
            &format!("EXT_WRONG_KEY@{}", other.url("/v1")),
        ])
        .args([
            "--allow-endpoint",
            "EXT_UNSET_KEY@https://embeddings.example.invalid/v1",
        ])
        .write_stdin(request.to_string())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        !text.contains(KEY) && !text.contains("sk-Wrong5Key8Value2Here"),
        "{text}"
    );
    let document = json_stdout(&output);
    let errors: Vec<&Value> = document["results"][0]["check_results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| &result["error"])
        .collect();
    assert_eq!(errors[0]["type"], "validation_error");
    assert!(errors[0]["message"]
        .as_str()
        .unwrap()
        .contains("provider_config.api_key: must name an environment variable as \"${NAME}\""));
    assert_eq!(
        errors[1]["message"],
        "HTTP 401 Unauthorized: {\"error\":{\"message\":\"bad key Bearer [redacted]\"}} — the \
         server refused the credentials sent (the token or key is not shown)"
    );
    assert_eq!(
        errors[2]["message"],
        "no API key: EXT_UNSET_KEY is not set (export it, or name another variable with \
         provider_config.api_key; only a local provider_config.base_url works without a key)"
    );
}

#[test]
fn run_checks_scores_extended_checks_and_reports_setup_problems_first() {
    let server = fake_api();
    let dir = tempfile::tempdir().unwrap();
    let mut unthresholded = similarity(&server);
    unthresholded["arguments"]
        .as_object_mut()
        .unwrap()
        .remove("threshold");
    let checks = json!({"checks": [similarity(&server), unthresholded, judge(&server)]});
    std::fs::write(dir.path().join("checks.json"), checks.to_string()).unwrap();
    std::fs::write(
        dir.path().join("data.jsonl"),
        "{\"input\": \"Capital of France?\", \"expected\": \"Paris\"}\n",
    )
    .unwrap();
    evalctl()
        .current_dir(dir.path())
        .env("EXT_TEST_KEY", KEY)
        .args([
            "run",
            "--checks",
            "checks.json",
            "--dataset",
            "data.jsonl",
            "--candidate",
            "Lyons",
        ])
        .args(allow(&server))
        .args(["--output", "out.jsonl", "--format", "json"])
        .assert()
        .code(0);
    let record = scored_line(dir.path());
    let report = &record;
    // Failed threshold 0, the similarity of the texts by letters, judge `passed: false` 0.
    let expected = embedding_cosine("Lyons", "Paris") / 3.0;
    assert!(expected > 0.0);
    assert!(
        (record["score"].as_f64().unwrap() - expected).abs() < 1e-9,
        "{report}"
    );
    assert_eq!(
        record["side_info"]["failed_checks"],
        json!(["semantic_similarity#1", "llm_judge"])
    );
    // A judge whose format has no `passed` or `score` cannot be scored: said before the run.
    let mut unscored = judge(&server);
    unscored["arguments"]["response_format"] = json!({"type": "object"});
    refused_before_run(
        dir.path(),
        "unscored.json",
        json!([unscored]),
        &allow(&server),
        "error: unscored.json: check llm_judge: run --checks scores an llm_judge by its \
             response's `passed` (boolean) or `score` (0 to 1): declare one of them in \
             response_format.properties\n",
    );
    // A check whose endpoint cannot be reached without a key stops the run before it starts.
    let mut keyless = similarity(&server);
    keyless["arguments"]["provider_config"] = json!({"base_url": "https://api.example.invalid/v1"});
    refused_before_run(
        dir.path(),
        "keyless.json",
        json!([keyless]),
        &[
            "--allow-endpoint".into(),
            "OPENAI_API_KEY@https://api.example.invalid/v1".into(),
        ],
        "error: keyless.json: check semantic_similarity: no API key: OPENAI_API_KEY is not set \
             (export it, or name another variable with provider_config.api_key; only a local \
             provider_config.base_url works without a key)\n",
    );
}

fn embedding_cosine(a: &str, b: &str) -> f64 {
    let (a, b) = (embedding(a), embedding(b));
    let dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (norm(&a) * norm(&b))
}

/// `fep evaluate FLAGS --test-cases --outputs --checks` over `cases` and `outputs` (JSONL) and the
/// one shared `check`, with the test key set.
fn fep_jsonl(cases: &str, outputs: &str, check: Value, flags: &[String]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    std::fs::write(path("cases.jsonl"), cases).unwrap();
    std::fs::write(path("outputs.jsonl"), outputs).unwrap();
    std::fs::write(path("checks.json"), json!({"checks": [check]}).to_string()).unwrap();
    evalctl()
        .env("EXT_TEST_KEY", KEY)
        .args(["fep", "evaluate"])
        .args(flags)
        .arg("--test-cases")
        .arg(path("cases.jsonl"))
        .arg("--outputs")
        .arg(path("outputs.jsonl"))
        .arg("--checks")
        .arg(path("checks.json"))
        .output()
        .unwrap()
}

#[test]
fn the_streaming_mode_answers_each_test_case() {
    let server = fake_api();
    let output = fep_jsonl(
        "{\"id\": \"a\", \"input\": \"Capital of France?\"}\n{\"id\": \"b\", \"input\": \"Capital of Peru?\"}\n",
        "{\"value\": \"Paris\"}\n{\"value\": \"Lima\"}\n",
        judge(&server),
        &[allow(&server).as_slice(), &["--stream".into(), "-j".into(), "2".into()]].concat(),
    );
    assert_eq!(output.status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let verdicts: Vec<&Value> = lines[..2]
        .iter()
        .map(|line| &line["check_results"][0]["results"]["response"]["passed"])
        .collect();
    assert_eq!(verdicts, [&json!(true), &json!(false)]);
    assert_eq!(lines[2]["summary"]["completed_checks"], 2);
}

#[test]
fn an_object_nested_in_the_judges_reply_is_not_the_reply() {
    let server = fake_api();
    let request = json!({
        "test_cases": [{"id": "t1", "input": "nested please"}],
        "outputs": [{"value": "x"}],
        "checks": [judge(&server)]
    });
    let (code, document) = evaluate(&request, &[&server]);
    assert_eq!(code, 1);
    assert_eq!(
        document["results"][0]["check_results"][0]["error"]["message"],
        "the judge's reply does not match response_format: /passed: \"no\" is not of type \"boolean\""
    );
}

#[test]
fn run_checks_retries_a_call_whose_check_may_pass_on_another_try() {
    let busy = Server::start(|_: &Request, _| Reply::status(503, "busy"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("checks.json"),
        json!({"checks": [similarity(&busy)]}).to_string(),
    )
    .unwrap();
    std::fs::write(dir.path().join("data.jsonl"), "{\"expected\": \"Paris\"}\n").unwrap();
    evalctl()
        .current_dir(dir.path())
        .env("EXT_TEST_KEY", KEY)
        .args([
            "run",
            "--checks",
            "checks.json",
            "--candidate",
            "Paris",
            "--retries",
            "1",
        ])
        .args(allow(&busy))
        .args([
            "--dataset",
            "data.jsonl",
            "--output",
            "out.jsonl",
            "--format",
            "json",
        ])
        .assert()
        .code(1);
    let line = scored_line(dir.path());
    assert_eq!(line["attempts"], 2, "{line}");
    assert_eq!(line["error"]["kind"], "transport");
    assert_eq!(
        line["error"]["message"],
        "check semantic_similarity: HTTP 503 Service Unavailable: busy"
    );
    assert_eq!(busy.requests().len(), 2);
    // A base_url carrying a credential is refused before the run, without repeating it.
    let mut leaky = similarity(&busy);
    leaky["arguments"]["provider_config"]["base_url"] =
        json!(format!("{}?key=sk-Leak3Leak5Leak7", busy.url("/v1")));
    refused_before_run(
        dir.path(),
        "leaky.json",
        json!([leaky]),
        &[],
        "error: leaky.json: checks[0].arguments.provider_config.base_url: must not carry a \
             user, password or query (a key belongs in an environment variable)\n",
    );
}

#[test]
fn calls_run_at_once_up_to_j_across_test_cases() {
    // Each request waits until three are in flight (or every request has arrived): with -j 3 the
    // calls overlap three at a time, whatever the machine's speed, and never more.
    let state = Arc::new((
        std::sync::Mutex::new((0usize, 0usize, 0usize)),
        std::sync::Condvar::new(),
    ));
    let seen = Arc::clone(&state);
    let server = Server::start(move |request: &Request, _| {
        let (lock, changed) = &*seen;
        let mut guard = lock.lock().unwrap();
        let (running, arrived, peak) = &mut *guard;
        *running += 1;
        *arrived += 1;
        *peak = (*peak).max(*running);
        changed.notify_all();
        let (mut guard, _) = changed
            .wait_timeout_while(guard, crate::common::TIMEOUT, |(running, arrived, _)| {
                *running < 3 && *arrived < 8
            })
            .unwrap();
        guard.0 -= 1;
        drop(guard);
        api_reply(request)
    });
    let cases: String = (0..8)
        .map(|i| format!("{{\"id\": \"t{i}\", \"input\": \"q\", \"expected\": \"Paris\"}}\n"))
        .collect();
    let outputs = "{\"value\": \"Paris\"}\n".repeat(8);
    let flags = [allow(&server).as_slice(), &["-j".into(), "3".into()]].concat();
    let output = fep_jsonl(&cases, &outputs, similarity(&server), &flags);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(json_stdout(&output)["summary"]["completed_checks"], 8);
    let peak = state.0.lock().unwrap().2;
    assert_eq!(peak, 3, "{peak} calls at once with -j 3");
}

#[test]
fn a_key_the_api_echoes_in_a_reply_that_succeeds_is_redacted_in_results_reports_and_caches() {
    // The API names its model after the header it got, "embed-2024 Bearer sk-…", with `/`
    // escaped as `\/` as some JSON encoders do.
    let server = Server::start(|request: &Request, _| {
        let echoed = request
            .header("authorization")
            .unwrap_or_default()
            .to_string();
        let mut reply = api_reply(request);
        let mut body: Value = serde_json::from_slice(&reply.body).unwrap();
        body["model"] = json!(format!("{} {echoed}", body["model"].as_str().unwrap()));
        reply.body = body.to_string().replace('/', "\\/").into_bytes();
        reply
    });
    let document = capital_of_france(&server);
    let results = &document["results"][0]["check_results"];
    assert_eq!(
        results[0]["results"]["metadata"]["model_version"],
        "embed-2024 Bearer [redacted]"
    );
    assert_eq!(
        results[1]["results"]["metadata"]["model_version"],
        "judge-2024 Bearer [redacted]"
    );
    // Through `run --checks`, its results file, report and cache.
    let dir = tempfile::tempdir().unwrap();
    let (mut similar, mut judged) = (similarity(&server), judge(&server));
    similar["arguments"]["reference"] = json!("Paris");
    judged["arguments"]["prompt"] = json!("Capital of France: {{$.output.value}}");
    std::fs::write(
        dir.path().join("checks.json"),
        json!({"checks": [similar, judged]}).to_string(),
    )
    .unwrap();
    let output = evalctl()
        .current_dir(dir.path())
        .env("EXT_TEST_KEY", KEY)
        .args(["run", "--checks", "checks.json", "--candidate", "Paris"])
        .args(allow(&server))
        .args(["--output", "out.jsonl", "--report", "report.html"])
        .args(["--cache", "--cache-dir", "cache", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let mut written = vec![output.stdout, output.stderr];
    for entry in walk(dir.path()) {
        written.push(std::fs::read(entry).unwrap());
    }
    assert!(
        written
            .iter()
            .all(|bytes| find_bytes(bytes, KEY.as_bytes()).is_none()),
        "the key leaked"
    );
    let results = &scored_line(dir.path())["side_info"]["check_results"];
    assert_eq!(
        (
            &results[0]["results"]["metadata"]["model_version"],
            &results[1]["results"]["metadata"]["model_version"]
        ),
        (
            &json!("embed-2024 Bearer [redacted]"),
            &json!("judge-2024 Bearer [redacted]")
        )
    );
}

#[test]
fn a_key_spelled_with_escapes_in_the_models_json_verdict_is_redacted() {
    // The judge's verdict is JSON inside the reply's JSON; its reasoning echoes the key with
    // every character written as `\uXXXX`.
    let server = Server::start(|request: &Request, _| {
        let mut reply = api_reply(request);
        if request.path == "/v1/chat/completions" {
            let echoed = request.header("authorization").unwrap_or_default();
            let spelled: String = echoed
                .chars()
                .map(|c| format!("\\u{:04x}", c as u32))
                .collect();
            let mut body: Value = serde_json::from_slice(&reply.body).unwrap();
            body["choices"][0]["message"]["content"] = json!(format!(
                r#"{{"passed": true, "reasoning": "got {spelled}"}}"#
            ));
            reply.body = body.to_string().into_bytes();
        }
        reply
    });
    let request = json!({
        "test_cases": [{"id": "t1", "input": "Capital of France?"}],
        "outputs": [{"value": "Paris"}],
        "checks": [judge(&server)]
    });
    let (code, document) = evaluate(&request, &[&server]);
    assert_eq!(code, 0, "{document}");
    let response = &document["results"][0]["check_results"][0]["results"]["response"];
    assert_eq!(
        response,
        &json!({"passed": true, "reasoning": "got Bearer [redacted]"})
    );
    assert_eq!(
        find_bytes(document.to_string().as_bytes(), KEY.as_bytes()),
        None
    );
}

/// Every file below `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flat_map(|entry| {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path)
            } else {
                vec![path]
            }
        })
        .collect()
}

/// Where `needle` is in `haystack`.
fn find_bytes(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[test]
fn run_checks_neither_buys_a_bad_reply_twice_nor_counts_a_score_outside_the_unit_interval() {
    let server = fake_api();
    let dir = tempfile::tempdir().unwrap();
    let mut scored = judge(&server);
    scored["arguments"]["response_format"] = json!({"type": "object", "required": ["score"],
        "properties": {"score": {"type": "number"}}});
    std::fs::write(
        dir.path().join("checks.json"),
        json!({"checks": [scored]}).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("data.jsonl"),
        "{\"input\": \"be vague\"}\n{\"input\": \"score it out of 10\"}\n",
    )
    .unwrap();
    let out = evalctl()
        .current_dir(dir.path())
        .env("EXT_TEST_KEY", KEY)
        .args(["run", "--checks", "checks.json", "--candidate", "Lyon"])
        .args(allow(&server))
        .args(["--dataset", "data.jsonl", "--output", "out.jsonl"])
        .args(["--format", "json", "-j", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<Value> = std::fs::read_to_string(dir.path().join("out.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let outcome = |line: &Value| {
        json!([
            line["example_index"],
            line["attempts"],
            line["score"],
            line["error"],
            line["side_info"]["errored_checks"]
        ])
    };
    let mut outcomes: Vec<Value> = lines.iter().map(outcome).collect();
    outcomes.sort_by_key(|outcome| outcome[0].as_u64());
    assert_eq!(
        outcomes,
        vec![
            // A reply against the format is the check's error, asked once.
            json!([0, 1, 0.0, null, ["llm_judge"]]),
            // A judge scoring on a scale of 10 is no score in [0, 1]: the call's error, not a 0.
            json!([1, 1, 0.0, {"kind": "invalid_output", "message": "check llm_judge: its score \
                7 is outside [0, 1], which run --checks counts (a judge answering on another \
                scale?)"}, []]),
        ]
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn an_endpoint_that_cannot_be_reached_is_named_in_the_checks_error() {
    let base = refused_url("/v1");
    let mut check = json!({"type": "llm_judge", "arguments": {
        "prompt": "Answer: {{$.output.value}}",
        "response_format": {"type": "object", "properties": {"passed": {"type": "boolean"}}},
        "provider_config": {"base_url": base, "max_retries": 0},
        "model_config": {"model": "judge"}}});
    let request = json!({"test_cases": [{"id": "t1", "input": "q"}],
        "outputs": [{"value": "Paris"}], "checks": [check.take()]});
    let output = evalctl()
        .args(["fep", "evaluate", "-", "--allow-endpoint", &base])
        .write_stdin(request.to_string())
        .output()
        .unwrap();
    let document = json_stdout(&output);
    assert_eq!(
        document["results"][0]["check_results"][0]["error"],
        json!({"type": "unknown_error", "recoverable": true, "message": format!(
            "{base}/chat/completions: connection refused — is the server running?")})
    );
}

#[test]
fn vectors_of_huge_or_tiny_values_are_compared_exactly_or_said_to_be_beyond_a_number() {
    // An embeddings API may answer values whose squares overflow or vanish: identical vectors
    // are still a cosine of 1, and a dot product beyond a number is an error, not a score.
    let vectors = Arc::new(std::sync::Mutex::new(json!([[6e80, 8e80], [6e80, 8e80]])));
    let answered = Arc::clone(&vectors);
    let server = Server::start(move |request: &Request, _| {
        if request.path != "/v1/embeddings" {
            return api_reply(request);
        }
        let pair = answered.lock().unwrap().clone();
        let data: Vec<Value> = (0..2)
            .map(|index| json!({"object": "embedding", "index": index, "embedding": pair[index]}))
            .collect();
        Reply::json(json!({"object": "list", "data": data, "model": "embed-2024"}).to_string())
    });
    let check = |metric: &str| {
        let mut check = similarity(&server);
        check["arguments"]["similarity_metric"] = json!(metric);
        check["arguments"]["model_config"] = json!({"model": "embed"});
        check
    };
    let request = |metric: &str| {
        json!({
            "test_cases": [{"id": "t1", "input": "q", "expected": "a"}],
            "outputs": [{"value": "a"}],
            "checks": [check(metric)]
        })
    };
    for pair in [
        json!([[6e80, 8e80], [6e80, 8e80]]),
        json!([[6e-90, 8e-90], [6e-90, 8e-90]]),
    ] {
        *vectors.lock().unwrap() = pair.clone();
        let (code, document) = evaluate(&request("cosine"), &[&server]);
        let result = &document["results"][0]["check_results"][0];
        assert_eq!(
            (
                code,
                &result["results"]["response"]["score"],
                &result["results"]["response"]["passed"]
            ),
            (0, &json!(1.0), &json!(true)),
            "{pair}: {document}"
        );
    }
    *vectors.lock().unwrap() = json!([[1e200, 1e200], [1e200, 1e200]]);
    let (code, document) = evaluate(&request("dot"), &[&server]);
    let result = &document["results"][0]["check_results"][0];
    assert_eq!(
        (code, &result["status"], &result["error"]["message"]),
        (
            1,
            &json!("error"),
            &json!("the dot product of the embeddings is beyond what a number holds")
        ),
        "{document}"
    );
    // A vector of zeros has no direction: its cosine is no score (two of them scored 0, while
    // their distance scored 1).
    *vectors.lock().unwrap() = json!([[0.0, 0.0], [0.0, 0.0]]);
    let (code, document) = evaluate(&request("cosine"), &[&server]);
    let result = &document["results"][0]["check_results"][0];
    assert_eq!(
        (code, &result["error"]["message"]),
        (
            1,
            &json!(
                "the embeddings API returned a vector of zeros for the text and the \
                    reference: its cosine with another vector is undefined"
            )
        ),
        "{document}"
    );
    *vectors.lock().unwrap() = json!([[0.0, 0.0], [0.6, 0.8]]);
    let (_, document) = evaluate(&request("cosine"), &[&server]);
    assert_eq!(
        document["results"][0]["check_results"][0]["error"]["message"],
        json!(
            "the embeddings API returned a vector of zeros for the text: its cosine with \
               another vector is undefined"
        )
    );
    let (code, document) = evaluate(&request("euclidean"), &[&server]);
    assert_eq!(
        (
            code,
            &document["results"][0]["check_results"][0]["results"]["response"]["score"]
        ),
        (0, &json!(0.5)),
        "{document}"
    );
}
