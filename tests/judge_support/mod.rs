//! Test support for the judge: a fake OpenAI-compatible chat-completions endpoint, a responder
//! on the shared loopback server (`common::server`), and commands that point the real binary at it.
//!
//! The fake checks every request (method, path, `Content-Type`, `Authorization`, `model`,
//! `response_format`, the two messages) and answers 400 with the reason when one is wrong. It
//! picks its answer from the `scenario:NAME` marker in the candidate text. It also answers the
//! free `GET /v1/models` key check preflight makes (401 for a wrong or missing key), counted apart
//! from the completions. A test crate using it also declares `mod common;`.

#![allow(dead_code)] // each test crate uses its own part of this module

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{json, Value};

use crate::common::{evalctl, refused_url, Reply, Request, Server};

/// The API key the tests use. Random-looking, so no 8-character piece of it occurs in an output
/// by chance.
pub const KEY: &str = "sk-Zq7xW9pL3mK8vT2nR5bYd4";
/// The model id the fake server expects in every request.
pub const MODEL: &str = "judge-model";
/// What the server reports as the model that answered.
pub const ANSWERING_MODEL: &str = "judge-model-2024-01-01";
/// Tokens the server reports per completion.
pub const PROMPT_TOKENS: u64 = 100;
/// Completion tokens the server reports per completion.
pub const COMPLETION_TOKENS: u64 = 20;

/// One request the fake received, its body parsed.
#[derive(Debug, Clone)]
pub struct Received {
    /// The JSON body (`null` when it was not JSON).
    pub body: Value,
}

impl Received {
    /// The user message's text.
    pub fn user_message(&self) -> &str {
        self.body["messages"][1]["content"]
            .as_str()
            .unwrap_or_default()
    }
}

/// A running fake judge. It lives until the test process ends.
pub struct FakeJudge {
    server: Server,
}

impl FakeJudge {
    /// Start a fake that requires `Authorization: Bearer KEY` when `expected_key` is given,
    /// and no `Authorization` header otherwise.
    pub fn start(expected_key: Option<&str>) -> FakeJudge {
        let expected_authorization = expected_key.map(|key| format!("Bearer {key}"));
        let seen = Mutex::new(HashMap::new());
        let server = Server::start(move |request, _| {
            if is_model_list(request) {
                return list_models(request, expected_authorization.as_deref());
            }
            match check(request, expected_authorization.as_deref()) {
                Err(problem) => {
                    Reply::status(400, json!({"error": {"message": problem}}).to_string())
                }
                Ok(body) => answer(request, &body, &seen),
            }
        });
        FakeJudge { server }
    }

    /// The base URL to pass as `--judge-base-url`.
    pub fn base_url(&self) -> String {
        self.server.url("/v1")
    }

    /// Every chat-completions request received so far (each one spends tokens), in arrival
    /// order.
    pub fn received(&self) -> Vec<Received> {
        self.server
            .requests()
            .iter()
            .filter(|request| !is_model_list(request))
            .map(|request| Received {
                body: serde_json::from_slice(&request.body).unwrap_or(Value::Null),
            })
            .collect()
    }

    /// How many `GET /v1/models` key checks (free) were received so far.
    pub fn model_lists(&self) -> usize {
        self.server
            .requests()
            .iter()
            .filter(|request| is_model_list(request))
            .count()
    }
}

/// Whether `request` is the free key check `GET /v1/models`.
fn is_model_list(request: &Request) -> bool {
    request.method == "GET" && request.path == "/v1/models"
}

/// The answer to `GET /v1/models`: the model list, or 401 for a wrong or missing key.
fn list_models(request: &Request, expected_authorization: Option<&str>) -> Reply {
    if request.header("authorization") == expected_authorization {
        Reply::json(
            json!({"object": "list", "data": [{"id": MODEL, "object": "model"}]}).to_string(),
        )
    } else {
        let error =
            json!({"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}});
        Reply::status(401, error.to_string())
    }
}

/// The wire-format checks; `Ok` is the parsed body, `Err` names the first problem.
fn check(request: &Request, expected_authorization: Option<&str>) -> Result<Received, String> {
    if request.method != "POST" || request.path != "/v1/chat/completions" {
        return Err(format!(
            "unexpected request line {:?}",
            format!("{} {}", request.method, request.path)
        ));
    }
    if request.header("content-type") != Some("application/json") {
        return Err("Content-Type must be application/json".into());
    }
    if request.header("authorization") != expected_authorization {
        return Err(format!(
            "Authorization header {}",
            if expected_authorization.is_some() {
                "missing or wrong"
            } else {
                "sent without a key"
            }
        ));
    }
    let received = Received {
        body: serde_json::from_slice(&request.body).unwrap_or(Value::Null),
    };
    let body = &received.body;
    if body["model"] != MODEL {
        return Err(format!("model must be {MODEL:?}, found {}", body["model"]));
    }
    if body["response_format"] != json!({"type": "json_object"}) {
        return Err("response_format must be {\"type\": \"json_object\"}".into());
    }
    if body["messages"][0]["role"] != "system" || body["messages"][1]["role"] != "user" {
        return Err("messages must be [system, user]".into());
    }
    if !body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .contains("JSON")
    {
        return Err("the system message must ask for JSON".into());
    }
    if !body["temperature"].is_number() {
        return Err("temperature must be a number".into());
    }
    Ok(received)
}

/// The canned answer for the request's scenario (`received` is its checked body).
fn answer(request: &Request, received: &Received, seen: &Mutex<HashMap<String, usize>>) -> Reply {
    let message = received.user_message();
    let scenario = message
        .split("scenario:")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or("plain")
        .to_string();
    let seen = {
        let mut seen = seen.lock().expect("lock");
        let count = seen.entry(scenario.clone()).or_insert(0);
        *count += 1;
        *count
    };
    let echoed_key = request.header("authorization").unwrap_or_default();
    let completion = |content: &str| Reply::json(completion(content));
    let error =
        |status: u16, error: Value| Reply::status(status, json!({"error": error}).to_string());
    match scenario.as_str() {
        "plain" => completion(r#"{"score": 0.8, "reasoning": "clear and correct"}"#),
        "fenced" => completion("```json\n{\"score\": 0.6, \"reasoning\": \"fenced\"}\n```"),
        "prose" => completion(
            "Here is my verdict.\n{\"score\": 0.4, \"reasoning\": \"prose around\"}\nHope this helps!",
        ),
        "high" => completion(r#"{"score": 1.7, "reasoning": "too generous"}"#),
        "low" => completion(r#"{"score": -2, "reasoning": "too harsh"}"#),
        "dims" => completion(r#"{"dimensions": {"clarity": 0.8}, "hard_constraints_satisfied": true, "reasoning": "accuracy forgotten"}"#),
        "violation" => completion(r#"{"dimensions": {"clarity": 1, "accuracy": 1}, "hard_constraints_satisfied": false, "reasoning": "too long"}"#),
        "nojson" => completion("I would rather not.\nThere is no JSON here.\nGoodbye."),
        // A NaN and a string that starts as its stand-in does, then a nested `score`.
        "nestednan" => completion(r#"{"verdict": NaN, "a": "\u0000", "b": "\u0000", "note": {"score": 1}}"#),
        "perfect" => completion(r#"{"dimensions": {"clarity": 1, "accuracy": 1}, "hard_constraints_satisfied": true, "reasoning": "flawless"}"#),
        // Dimensions as top-level keys, one of them as `{"score": x}`: the nested object with a
        // `score` is part of the reply, not the reply.
        "toplevel" => completion(r#"{"clarity": 0.5, "accuracy": {"score": 1}, "hard_constraints_satisfied": true, "reasoning": "nested"}"#),
        "unchecked" => completion(r#"{"dimensions": {"clarity": 1, "accuracy": 0.5}, "reasoning": "constraints not mentioned"}"#),
        "constraintstring" => completion(r#"{"dimensions": {"clarity": 1, "accuracy": 1}, "hard_constraints_satisfied": "False", "reasoning": "stringly"}"#),
        "constraintbad" => completion(r#"{"dimensions": {"clarity": 1, "accuracy": 1}, "hard_constraints_satisfied": "mostly", "reasoning": "hedging"}"#),
        "malformed" => completion(r#"{"score": 0.5, "reasoning": "unterminated"#),
        "echo" => completion(&format!(r#"{{"score": 0.5, "reasoning": "you sent {echoed_key}"}}"#)),
        // The key echoed encoded: `Authorization: Bearer KEY` in base64, the key in hex and
        // upper-cased; then the hex of ordinary text that shares the key's first six bytes.
        "encoded" => completion(&format!(
            r#"{{"score": 0.5, "reasoning": "b64 {} hex {} up {} digest 7461736b2d5a713737"}}"#,
            "QmVhcmVyIHNrLVpxN3hXOXBMM21LOHZUMm5SNWJZZDQ=",
            "736b2d5a7137785739704c336d4b387654326e523562596434",
            KEY.to_uppercase()
        )),
        "ratelimited" if seen == 1 => error(
            429,
            json!({"message": "Rate limit reached", "type": "requests"}),
        )
        .header("Retry-After", "1"),
        "ratelimited" => completion(r#"{"score": 0.7, "reasoning": "after waiting"}"#),
        "down" => error(500, json!({"message": "The server had an error"})),
        "unauthorized" => error(
            401,
            json!({"message": format!("Incorrect API key provided: {echoed_key}"), "code": "invalid_api_key"}),
        ),
        // The key echoed masked, as some APIs do: all but its last six characters.
        "masked401" => error(
            401,
            json!({"message": format!("Incorrect API key provided: {}******", &KEY[..KEY.len() - 6])}),
        ),
        // The key echoed just before the 300-character excerpt of an HTTP error body ends.
        "leak401" | "leak500" => Reply::status(
            if scenario == "leak401" { 401 } else { 500 },
            padded_to(r#"{"error": {"message": ""#, LEAK_AT_STATUS, echoed_key, r#""}}"#),
        ),
        // The key echoed just before the 500-character excerpt of an unusable reply ends.
        "leakmalformed" => completion(&padded_to(
            r#"{"score": 0.5, "reasoning": ""#,
            LEAK_AT_REPLY,
            echoed_key,
            "",
        )),
        "slow" => completion(r#"{"score": 0.9}"#).after(Duration::from_secs(3)),
        other => error(400, json!({"message": format!("unknown scenario {other}")})),
    }
}

/// Where the `leak401`/`leak500` scenarios put the echoed `Bearer KEY` in the body: the key
/// itself starts a few characters before the 300th, where an HTTP error excerpt is cut.
const LEAK_AT_STATUS: usize = 281;
/// Where the `leakmalformed` scenario puts the echoed `Bearer KEY` in the reply: the key starts a
/// few characters before the 500th, where a reply excerpt is cut.
const LEAK_AT_REPLY: usize = 483;

/// `head`, filler text up to character `at`, `echoed`, then `tail`.
fn padded_to(head: &str, at: usize, echoed: &str, tail: &str) -> String {
    let filler: String = "the server explains at length why it will not answer; "
        .chars()
        .cycle()
        .take(at - head.chars().count())
        .collect();
    format!("{head}{filler}{echoed}{tail}")
}

/// A base URL on 127.0.0.1 where nothing listens: connecting is refused.
pub fn refused_base_url() -> String {
    refused_url("/v1")
}

/// A chat-completions response whose message content is `content`.
fn completion(content: &str) -> String {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": ANSWERING_MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS, "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS}
    })
    .to_string()
}

/// `evalctl run` against `server` as provider `fake` (key from `FAKE_API_KEY` when given). The
/// summary is JSON: stdout is not a terminal.
pub fn judge_run(server: &FakeJudge, key: Option<&str>) -> Command {
    judge_command(
        server,
        key,
        "run",
        "Answer the user's question correctly and briefly.",
    )
}

/// `evalctl preflight --probe-judge` against `server` with `objective` (the probe's candidate is
/// fixed, so a `scenario:` in the objective steers the fake), the key in `FAKE_API_KEY`.
pub fn judge_probe(server: &FakeJudge, objective: &str) -> Command {
    let mut command = judge_command(server, Some(KEY), "preflight", objective);
    command.arg("--probe-judge");
    command
}

fn judge_command(
    server: &FakeJudge,
    key: Option<&str>,
    subcommand: &str,
    objective: &str,
) -> Command {
    let mut command = evalctl();
    command.args([
        subcommand,
        "--judge-model",
        &format!("fake/{MODEL}"),
        "--judge-base-url",
        &server.base_url(),
        "--objective",
        objective,
    ]);
    if let Some(key) = key {
        command.env("FAKE_API_KEY", key);
    }
    command
}

/// What a finished run left behind.
pub struct RunResult {
    /// The exit code.
    pub code: i32,
    /// The summary on stdout, parsed.
    pub summary: Value,
    /// The `--output` lines, parsed.
    pub records: Vec<Value>,
    /// Raw stdout.
    pub stdout: String,
    /// Raw stderr.
    pub stderr: String,
    /// Raw `--output` file.
    pub output: String,
}

/// Run `command` with `--output` in `dir` and collect everything it produced.
pub fn finish(mut command: Command, dir: &Path) -> RunResult {
    let output_path = dir.join("out.jsonl");
    let _ = std::fs::remove_file(&output_path);
    let done = command
        .arg("--output")
        .arg(&output_path)
        .output()
        .expect("run evalctl");
    let stdout = String::from_utf8_lossy(&done.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&done.stderr).into_owned();
    let output = std::fs::read_to_string(&output_path).unwrap_or_default();
    RunResult {
        code: done.status.code().unwrap_or(-1),
        summary: serde_json::from_str(&stdout).unwrap_or(Value::Null),
        records: output
            .lines()
            .map(|line| serde_json::from_str(line).expect("a JSON result line"))
            .collect(),
        stdout,
        stderr,
        output,
    }
}

/// The record of candidate `id`.
pub fn record<'a>(result: &'a RunResult, id: &str) -> &'a Value {
    result
        .records
        .iter()
        .find(|record| record["candidate_id"] == id)
        .unwrap_or_else(|| panic!("no record for {id}; stderr: {}", result.stderr))
}

/// The path of a judge fixture.
pub fn fixture(name: &str) -> String {
    format!("{}/fixtures/judge/{name}", env!("CARGO_MANIFEST_DIR"))
}
