//! Reading an OpenAI-compatible API's replies, one reader for each kind: the message of a chat
//! completion (a string, or an array of text parts; a refusal or an API error said as such), the
//! text and token usage of a (chat) completion, and the two vectors of an embeddings reply.
//! Error messages carry one-line excerpts of the reply, redacted before they are cut.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::request::Api;
use crate::protocol::{parse_lenient, CallError, ErrorKind};
use crate::secrets::Secrets;
use crate::text::{clip, one_line};

/// How many characters of a raw reply an error message carries.
pub const REPLY_EXCERPT_CHARS: usize = 500;

/// Tokens a completion used, as the API reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Both.
    pub total_tokens: u64,
}

impl Usage {
    /// Whether no token was counted.
    pub fn is_zero(&self) -> bool {
        *self == Usage::default()
    }

    /// Add `other` to this total.
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.total_tokens += other.total_tokens;
    }
}

/// One completion.
#[derive(Debug, Clone)]
pub struct Completion {
    /// The generated text.
    pub text: String,
    /// Its token usage (zero from a command).
    pub usage: Usage,
    /// The API's reply reported no token usage (some servers and proxies leave it out): its
    /// tokens are unknown, not zero.
    pub usage_missing: bool,
    /// The model stopped at its token limit (`finish_reason: length`): the text may be cut
    /// short.
    pub cut_short: bool,
}

/// A completion call that gave no completion: why, and the tokens its reply reported (a
/// refusal, or a reply the content filter withheld, spent them all the same).
#[derive(Debug, Clone)]
pub struct Unanswered {
    /// Why there is no completion.
    pub error: CallError,
    /// The tokens the reply reported (zero when it reported none, or there was no reply).
    pub usage: Usage,
}

impl From<CallError> for Unanswered {
    /// A call whose reply reported no tokens (or that had no reply).
    fn from(error: CallError) -> Unanswered {
        Unanswered {
            error,
            usage: Usage::default(),
        }
    }
}

impl Completion {
    /// A completion the cache kept: its text, the prompt, completion and total tokens it
    /// reported when it was made, and whether the model stopped at its token limit.
    pub fn kept(text: String, tokens: [u64; 3], cut_short: bool) -> Completion {
        let [prompt_tokens, completion_tokens, total_tokens] = tokens;
        Completion {
            text,
            cut_short,
            usage: Usage {
                prompt_tokens,
                completion_tokens,
                total_tokens,
            },
            usage_missing: false,
        }
    }
}

/// The text of `choices[0].message.content` (a string, or an array of text parts).
pub fn message_content(envelope: &Value, secrets: &Secrets) -> Result<String, CallError> {
    let message = envelope.pointer("/choices/0/message");
    match message.and_then(|message| message.get("content")) {
        Some(Value::String(text)) => return Ok(text.clone()),
        Some(Value::Array(parts)) => {
            return Ok(parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect())
        }
        _ => {}
    }
    let shown = |value: &Value| {
        excerpt(
            value.as_str().map_or(&value.to_string(), |text| text),
            secrets,
        )
    };
    Err(
        if let Some(refusal) = message.and_then(|message| message.get("refusal")) {
            CallError::new(
                ErrorKind::InvalidOutput,
                format!("the judge refused: {}", shown(refusal)),
            )
        } else if let Some(error) = envelope.get("error") {
            CallError::new(
                ErrorKind::InvalidOutput,
                format!("the API answered with an error: {}", shown(error)),
            )
        } else if message.is_some() {
            CallError::new(ErrorKind::InvalidJson, "the judge's reply is empty")
        } else {
            CallError::new(
                ErrorKind::InvalidOutput,
                format!(
                    "the response has no choices[0].message: {}",
                    shown(envelope)
                ),
            )
        },
    )
}

/// The first [`REPLY_EXCERPT_CHARS`] characters of `text` on one line, redacted before the cut.
pub fn excerpt(text: &str, secrets: &Secrets) -> String {
    clip(&one_line(&secrets.redact(text.trim())), REPLY_EXCERPT_CHARS)
}

/// An API's reply as JSON. A lone surrogate escape in it (`"\ud83d"`: a text cut mid-emoji, as
/// some servers send it) is read as U+FFFD, as in an evaluator's answer; a reply that is not
/// JSON is an `invalid_json` error quoting it.
pub fn parse_reply(body: &[u8]) -> Result<Value, CallError> {
    serde_json::from_slice(body).or_else(|err| {
        std::str::from_utf8(body)
            .ok()
            .and_then(parse_lenient)
            .ok_or_else(|| not_json(body, &err))
    })
}

/// The error of a reply that is not JSON, with an excerpt of what came back (a web server's
/// page, a proxy's login form: the usual sign of a wrong base URL). Replies reach here free of
/// the key ([`super::Client::post`] redacts them).
fn not_json(body: &[u8], err: &serde_json::Error) -> CallError {
    CallError::new(
        ErrorKind::InvalidJson,
        format!(
            "the API's reply is not JSON ({err}): {}",
            excerpt(&String::from_utf8_lossy(body), &Secrets::default())
        ),
    )
}

/// Why a reply the API's content filter withheld has no answer.
const CONTENT_FILTERED: &str =
    "the API's content filter withheld the reply (finish_reason content_filter)";

/// The completion text and usage of a (chat) completions reply; a refusal or a reply the API's
/// content filter withheld is an `invalid_output` error, with the tokens it reported.
pub fn read_completion(body: &[u8], api: Api) -> Result<Completion, Unanswered> {
    let reply = parse_reply(body)?;
    let (usage, usage_missing) = usage_in(&reply);
    match completion_text(&reply, api) {
        Ok(text) => Ok(Completion {
            text,
            usage,
            usage_missing,
            cut_short: reply.pointer("/choices/0/finish_reason") == Some(&Value::from("length")),
        }),
        Err(error) => Err(Unanswered { error, usage }),
    }
}

/// The tokens a reply reports, and whether it reports none at all.
fn usage_in(reply: &Value) -> (Usage, bool) {
    let count = |name: &str| {
        reply
            .pointer(&format!("/usage/{name}"))
            .and_then(Value::as_u64)
    };
    let (prompt_tokens, completion_tokens) = (count("prompt_tokens"), count("completion_tokens"));
    let usage_missing = prompt_tokens.is_none() && completion_tokens.is_none();
    let (prompt_tokens, completion_tokens) =
        (prompt_tokens.unwrap_or(0), completion_tokens.unwrap_or(0));
    let usage = Usage {
        prompt_tokens,
        completion_tokens,
        // Some servers leave the total out: it is the sum of the two.
        total_tokens: count("total_tokens")
            .unwrap_or(prompt_tokens.saturating_add(completion_tokens)),
    };
    (usage, usage_missing)
}

/// The text of a (chat) completions reply; a refusal or a reply the API's content filter
/// withheld is an `invalid_output` error.
fn completion_text(reply: &Value, api: Api) -> Result<String, CallError> {
    let invalid = |reason: String| CallError::new(ErrorKind::InvalidOutput, reason);
    let (pointer, field) = match api {
        Api::Chat => ("/choices/0/message/content", "choices[0].message.content"),
        Api::Completions => ("/choices/0/text", "choices[0].text"),
    };
    // A refusal, or a reply the API's content filter withheld, is no answer to score.
    if let Some(refusal) = reply
        .pointer("/choices/0/message/refusal")
        .and_then(Value::as_str)
        .filter(|refusal| !refusal.trim().is_empty())
    {
        return Err(invalid(format!(
            "the model refused: {}",
            clip(&one_line(refusal.trim()), 200)
        )));
    }
    let filtered =
        reply.pointer("/choices/0/finish_reason") == Some(&Value::from("content_filter"));
    let text = match reply.pointer(pointer) {
        Some(Value::String(text)) if filtered && text.is_empty() => {
            return Err(invalid(CONTENT_FILTERED.into()))
        }
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) if filtered => return Err(invalid(CONTENT_FILTERED.into())),
        // A reply that calls a tool instead carries no text.
        Some(Value::Null) if calls_a_tool(reply) => String::new(),
        // Anything else with no text is no answer (not an empty one to score).
        Some(Value::Null) => {
            let finish = (reply
                .pointer("/choices/0/finish_reason")
                .and_then(Value::as_str))
            .map_or(String::new(), |reason| format!(" (finish_reason {reason})"));
            return Err(invalid(format!(
                "the reply's {field} is null: no answer{finish}"
            )));
        }
        Some(other) => {
            return Err(invalid(format!(
                "{field}: {}",
                crate::input::strict::wrong_type("a string", other)
            )))
        }
        // Replies reach here free of the key ([`super::Client::post`] redacts them).
        None => {
            let shown = |value: &Value| {
                let text = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_string);
                excerpt(&text, &Secrets::default())
            };
            return Err(invalid(match reply.get("error") {
                Some(error) => format!("the API answered with an error: {}", shown(error)),
                None => format!("the reply has no {field}: {}", shown(reply)),
            }));
        }
    };
    Ok(text)
}

/// Whether a chat reply calls a tool (or a function) instead of answering in text.
fn calls_a_tool(reply: &Value) -> bool {
    let message = reply.pointer("/choices/0/message");
    let finish = reply
        .pointer("/choices/0/finish_reason")
        .and_then(Value::as_str);
    message.is_some_and(|message| {
        message
            .get("tool_calls")
            .is_some_and(|calls| !calls.is_null())
            || message
                .get("function_call")
                .is_some_and(|call| !call.is_null())
    }) || matches!(finish, Some("tool_calls" | "function_call"))
}

/// The two vectors of an embeddings reply (`data[i].embedding`, by `index` when given).
pub fn embeddings(reply: &Value) -> Result<[Vec<f64>; 2], String> {
    let data = reply
        .get("data")
        .and_then(Value::as_array)
        .ok_or("it has no `data` array")?;
    let mut vectors: [Option<Vec<f64>>; 2] = [None, None];
    for (position, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(Value::as_u64)
            .map_or(position, |index| index as usize);
        let vector = item
            .get("embedding")
            .and_then(Value::as_array)
            .and_then(|numbers| {
                numbers
                    .iter()
                    .map(Value::as_f64)
                    .collect::<Option<Vec<f64>>>()
            })
            .ok_or(format!(
                "data[{position}].embedding is not an array of numbers"
            ))?;
        if let Some(slot) = vectors.get_mut(index) {
            *slot = Some(vector);
        }
    }
    match vectors {
        [Some(text), Some(reference)] => Ok([text, reference]),
        _ => Err(format!("expected 2 embeddings, found {}", data.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replies_of_both_apis() {
        let chat = br#"{"choices":[{"message":{"content":"41"}}],"usage":{"prompt_tokens":7,"completion_tokens":1,"total_tokens":8}}"#;
        let completion = read_completion(chat, Api::Chat).unwrap();
        assert_eq!(completion.text, "41");
        assert_eq!(completion.usage.total_tokens, 8);
        assert!(!completion.usage_missing);
        let base = br#"{"choices":[{"text":" 41"}]}"#;
        let completion = read_completion(base, Api::Completions).unwrap();
        // No usage at all: its tokens are unknown, not zero.
        assert_eq!(
            (completion.text.as_str(), completion.usage_missing),
            (" 41", true)
        );
        assert_eq!(
            read_completion(base, Api::Chat).unwrap_err().error.message,
            r#"the reply has no choices[0].message.content: {"choices":[{"text":" 41"}]}"#
        );
        // An error object in a 200 reply is the API's own words.
        let error = br#"{"error":{"message":"internal thing failed","type":"server_error"}}"#;
        assert_eq!(
            read_completion(error, Api::Chat).unwrap_err().error.message,
            r#"the API answered with an error: {"message":"internal thing failed","type":"server_error"}"#
        );
        assert_eq!(
            read_completion(b"[", Api::Chat).unwrap_err().error.kind,
            ErrorKind::InvalidJson
        );
    }

    #[test]
    fn a_lone_surrogate_escape_in_a_reply_is_read_as_a_replacement_character() {
        let cut = br#"{"choices":[{"message":{"content":"Paris \ud83d"}}],"usage":{"prompt_tokens":7,"completion_tokens":2}}"#;
        let completion = read_completion(cut, Api::Chat).unwrap();
        assert_eq!(
            (completion.text.as_str(), completion.usage.total_tokens),
            ("Paris \u{fffd}", 9)
        );
        assert_eq!(
            read_completion(b"<html>", Api::Chat)
                .unwrap_err()
                .error
                .message,
            "the API's reply is not JSON (expected value at line 1 column 1): <html>"
        );
    }

    #[test]
    fn a_refusal_or_a_filtered_reply_is_no_answer() {
        let message = |reply: Value| {
            let error = read_completion(reply.to_string().as_bytes(), Api::Chat)
                .unwrap_err()
                .error;
            (error.kind, error.message)
        };
        let refused = json!({"choices": [{"message": {"content": null,
            "refusal": "I can't\nhelp."}, "finish_reason": "stop"}]});
        assert_eq!(
            message(refused),
            (
                ErrorKind::InvalidOutput,
                "the model refused: I can't ⏎ help.".into()
            )
        );
        for content in [Value::Null, json!("")] {
            let filtered = json!({"choices": [{"message": {"content": content},
                "finish_reason": "content_filter"}]});
            assert_eq!(
                message(filtered),
                (ErrorKind::InvalidOutput, CONTENT_FILTERED.into())
            );
        }
        // Text cut short by the filter is still the text; a tool call's null content is empty.
        let cut = json!({"choices": [{"message": {"content": "partial"}, "finish_reason": "content_filter"}]});
        assert_eq!(
            read_completion(cut.to_string().as_bytes(), Api::Chat)
                .unwrap()
                .text,
            "partial"
        );
        let tool = json!({"choices": [{"message": {"content": null, "tool_calls": []}, "finish_reason": "tool_calls"}]});
        assert_eq!(
            read_completion(tool.to_string().as_bytes(), Api::Chat)
                .unwrap()
                .text,
            ""
        );
        // Null content without a tool call is no answer, whatever the reason it ended.
        let empty = json!({"choices": [{"message": {"content": null}, "finish_reason": "stop"}]});
        assert_eq!(
            message(empty),
            (
                ErrorKind::InvalidOutput,
                "the reply's choices[0].message.content is null: no answer (finish_reason stop)"
                    .into()
            )
        );
        let cut = json!({"choices": [{"message": {"content": null}, "finish_reason": "length"}]});
        assert_eq!(
            message(cut),
            (
                ErrorKind::InvalidOutput,
                "the reply's choices[0].message.content is null: no answer (finish_reason length)"
                    .into()
            )
        );
    }

    #[test]
    fn embeddings_are_read_by_index() {
        let reply = json!({"data": [{"index": 1, "embedding": [0, 1]}, {"index": 0, "embedding": [1.5, 0]}]});
        assert_eq!(
            embeddings(&reply).unwrap(),
            [vec![1.5, 0.0], vec![0.0, 1.0]]
        );
        assert_eq!(
            embeddings(&json!({"data": [{"embedding": [1]}]})).unwrap_err(),
            "expected 2 embeddings, found 1"
        );
        assert!(embeddings(&json!({"data": [{"embedding": ["x"]}]}))
            .unwrap_err()
            .contains("not an array of numbers"));
    }
}
