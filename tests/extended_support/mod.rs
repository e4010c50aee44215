//! Test support for the extended checks: a fake OpenAI-compatible API on loopback that speaks
//! the real wire format (`POST /v1/embeddings`, `POST /v1/chat/completions`), and check objects
//! pointed at it.

#![allow(dead_code)] // each test file uses its own part of this module

use serde_json::{json, Value};

use crate::common::{Reply, Request, Server};

/// The key the fake API wants.
pub const KEY: &str = "sk-Ext7Qw2Lp9Zr4Mx8Vb3";

/// A letter-count embedding of `text`: texts with the same letters are identical vectors.
pub fn embedding(text: &str) -> Vec<f64> {
    let mut counts = vec![0.0; 26];
    for ch in text.to_ascii_lowercase().chars() {
        if ch.is_ascii_lowercase() {
            counts[(ch as u8 - b'a') as usize] += 1.0;
        }
    }
    counts
}

/// The fake API: embeddings by letter counts; the judge answers `{"passed": true,
/// "reasoning": ...}` when the prompt mentions Paris, `{"passed": "maybe"}` (against the
/// schema) when it mentions "vague", an invalid object around a valid one when it mentions
/// "nested", else `{"passed": false, ...}`. A missing or wrong key
/// is a 401 that echoes the header it got.
pub fn fake_api() -> Server {
    Server::start(|request: &Request, _| api_reply(request))
}

/// The fake API's answer to `request`.
pub fn api_reply(request: &Request) -> Reply {
    {
        if request.header("authorization") != Some(&format!("Bearer {KEY}")) {
            let echoed = request
                .header("authorization")
                .unwrap_or_default()
                .to_string();
            return Reply::status(
                401,
                json!({"error": {"message": format!("bad key {echoed}")}}).to_string(),
            );
        }
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        match request.path.as_str() {
            "/v1/embeddings" => {
                let inputs = body["input"].as_array().cloned().unwrap_or_default();
                let data: Vec<Value> = inputs
                    .iter()
                    .enumerate()
                    .map(|(index, text)| {
                        json!({"object": "embedding", "index": index,
                        "embedding": embedding(text.as_str().unwrap_or_default())})
                    })
                    .collect();
                Reply::json(
                    json!({"object": "list", "data": data, "model": "embed-2024",
                           "usage": {"prompt_tokens": 7, "total_tokens": 7}})
                    .to_string(),
                )
            }
            "/v1/chat/completions" => {
                let prompt = body["messages"][1]["content"].as_str().unwrap_or_default();
                let verdict = if prompt.contains("vague") {
                    json!({"passed": "maybe"})
                } else if prompt.contains("out of 10") {
                    json!({"score": 7})
                } else if prompt.contains("nested") {
                    json!({"passed": "no", "detail": {"passed": true}})
                } else {
                    json!({"passed": prompt.contains("Paris"), "reasoning": "compared"})
                };
                // A long-winded judge is cut off at its token limit.
                let (content, finish) = if prompt.contains("long-winded") {
                    ("{\"reasoning\": \"First, let us".to_string(), "length")
                } else {
                    (format!("```json\n{verdict}\n```"), "stop")
                };
                Reply::json(
                    json!({"id": "c1", "object": "chat.completion", "model": "judge-2024",
                        "choices": [{"index": 0, "finish_reason": finish,
                            "message": {"role": "assistant", "content": content}}],
                        "usage": {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59}})
                    .to_string(),
                )
            }
            other => Reply::status(404, format!("no {other}")),
        }
    }
}

/// `--allow-endpoint` for `server`'s API with the test key: what a local command needs to let a
/// request or checks file call it.
pub fn allow(server: &Server) -> [String; 2] {
    [
        "--allow-endpoint".to_string(),
        format!("EXT_TEST_KEY@{}", server.url("/v1")),
    ]
}

pub fn provider(server: &Server) -> Value {
    json!({"base_url": server.url("/v1"), "api_key": "${EXT_TEST_KEY}", "max_retries": 0})
}

pub fn similarity(server: &Server) -> Value {
    json!({"type": "semantic_similarity", "arguments": {
        "text": "$.output.value", "reference": "$.test_case.expected",
        "threshold": {"min_value": 0.9}, "provider_config": provider(server),
        "model_config": {"model": "embed", "dimensions": 26}}})
}

pub fn judge(server: &Server) -> Value {
    json!({"type": "llm_judge", "arguments": {
        "prompt": "Question: {{$.test_case.input}}\nAnswer: {{$.output.value}}",
        "response_format": {"type": "object", "required": ["passed"],
            "properties": {"passed": {"type": "boolean"}, "reasoning": {"type": "string"}}},
        "provider_config": provider(server),
        "model_config": {"model": "judge", "temperature": 0}}})
}

/// The scored line (the one with `side_info`) of a run's `out.jsonl` in `dir`.
pub fn scored_line(dir: &std::path::Path) -> Value {
    std::fs::read_to_string(dir.join("out.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|line| line.get("side_info").is_some())
        .unwrap()
}

/// Write `checks` to `dir/name` and assert that `run --checks FLAGS` refuses it before the run:
/// exit 2 with exactly `stderr` (no key in the environment).
pub fn refused_before_run(
    dir: &std::path::Path,
    name: &str,
    checks: Value,
    flags: &[String],
    stderr: &str,
) {
    std::fs::write(dir.join(name), json!({ "checks": checks }).to_string()).unwrap();
    crate::common::evalctl()
        .current_dir(dir)
        .env_remove("OPENAI_API_KEY")
        .args([
            "run",
            "--checks",
            name,
            "--candidate",
            "x",
            "--format",
            "text",
        ])
        .args(flags)
        .assert()
        .code(2)
        .stderr(stderr.to_string());
}
