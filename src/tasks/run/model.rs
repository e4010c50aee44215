//! The model `tasks run` generates with: an OpenAI-compatible API through the judge's client
//! (its key, base-URL, retry and redaction rules; chat completions, or legacy completions for
//! base models), or a command that reads the rendered prompt as JSON on stdin and prints the
//! completion on stdout (the command evaluator's child handling: timeout, process group).

use std::time::Duration;

use reqwest::header::{HeaderValue, AUTHORIZATION};
use reqwest::Url;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::evaluator::command::{CommandEvaluator, CommandSpec};
use crate::evaluator::judge::endpoint::{Endpoint, EndpointFlags};
use crate::evaluator::judge::{authorization, endpoint_secrets, retry_timeouts};
use crate::evaluator::transport::{build_client, display_url, send_json};
use crate::evaluator::Evaluator;
use crate::protocol::{Attempt, CallError, ErrorKind};
use crate::secrets::Secrets;

/// `tasks run`'s flags, as endpoint messages name them.
const MODEL_FLAGS: EndpointFlags = EndpointFlags {
    model: "--model",
    base_url: "--base-url",
    api_key_env: "--api-key-env",
};

/// Which API of an OpenAI-compatible server generates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `POST {base}/chat/completions`, the prompt as one user message.
    Chat,
    /// `POST {base}/completions`, the prompt as is (base models).
    Completions,
}

/// The model, as the flags name it.
#[derive(Debug, Clone)]
pub enum ModelSpec {
    /// `--model PROVIDER/MODEL`.
    Api {
        /// `PROVIDER/MODEL`.
        model: String,
        /// `--api`.
        api: Api,
        /// `--base-url`.
        base_url: Option<String>,
        /// `--api-key-env`.
        api_key_env: Option<String>,
    },
    /// `--model-command CMD` (and `--model-cwd`).
    Command(CommandSpec),
}

/// How every completion is sampled.
#[derive(Debug, Clone, Serialize)]
pub struct Sampling {
    /// `--temperature`.
    pub temperature: f64,
    /// `--max-tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// `--stop` sequences.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
}

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
}

/// A model ready to generate.
pub enum Model {
    /// An OpenAI-compatible API.
    Api(Box<ApiModel>),
    /// A command.
    Command {
        /// The child handling of the command evaluator.
        runner: CommandEvaluator,
        /// The command line, for summaries.
        label: String,
    },
}

/// An OpenAI-compatible endpoint and the client that calls it.
pub struct ApiModel {
    endpoint: Endpoint,
    api: Api,
    url: Url,
    model_flag: String,
    authorization: Option<HeaderValue>,
    secrets: Secrets,
    client: reqwest::Client,
    timeout: Duration,
}

impl Model {
    /// Build the model: resolve the endpoint and key (bad input on a problem) or the command.
    pub fn build(spec: &ModelSpec, timeout: Duration, concurrency: usize) -> anyhow::Result<Model> {
        match spec {
            ModelSpec::Command(command) => Ok(Model::Command {
                label: format!("command '{}'", shell_words::join(&command.argv)),
                runner: CommandEvaluator::model(command.clone(), timeout),
            }),
            ModelSpec::Api {
                model,
                api,
                base_url,
                api_key_env,
            } => {
                let endpoint = Endpoint::resolve_for(
                    MODEL_FLAGS,
                    model,
                    base_url.as_deref(),
                    api_key_env.as_deref(),
                    |name| std::env::var(name).ok(),
                )?;
                let url = endpoint.url_for(match api {
                    Api::Chat => "chat/completions",
                    Api::Completions => "completions",
                });
                Ok(Model::Api(Box::new(ApiModel {
                    authorization: authorization(&endpoint)?,
                    secrets: Secrets::new(endpoint_secrets(&endpoint)),
                    client: build_client(timeout, concurrency)?,
                    api: *api,
                    url,
                    model_flag: model.clone(),
                    endpoint,
                    timeout,
                })))
            }
        }
    }

    /// What the summary calls the model: `PROVIDER/MODEL` or `command 'CMD'`.
    pub fn label(&self) -> String {
        match self {
            Model::Api(model) => model.model_flag.clone(),
            Model::Command { label, .. } => label.clone(),
        }
    }

    /// How messages name it, with where it is reached (no secret).
    pub fn describe(&self) -> String {
        match self {
            Model::Api(model) => format!(
                "model {} at {}",
                model.model_flag,
                display_url(&model.endpoint.base)
            ),
            Model::Command { runner, .. } => format!("model {}", runner.describe()),
        }
    }

    /// What would make every generation fail, found before the first: no key for a remote API,
    /// a command that cannot start.
    pub fn check_setup(&self) -> Result<(), String> {
        match self {
            Model::Api(model) => match model.endpoint.missing_key(MODEL_FLAGS) {
                Some(reason) => Err(reason),
                None => Ok(()),
            },
            Model::Command { runner, .. } => runner.check_setup(),
        }
    }

    /// One attempt at completing `prompt`. A failure is the failed attempt (retryable for
    /// transport failures, timeouts of the API, HTTP 429 and 5xx).
    pub async fn complete(
        &self,
        task_id: &str,
        prompt: &str,
        sampling: &Sampling,
    ) -> Result<Completion, Attempt> {
        match self {
            Model::Api(model) => model.complete(prompt, sampling).await,
            Model::Command { runner, .. } => {
                let input = json!({"task_id": task_id, "prompt": prompt, "sampling": sampling});
                let input = serde_json::to_vec(&input).map_err(|err| {
                    Attempt::failed(CallError::new(ErrorKind::InvalidOutput, err.to_string()))
                })?;
                runner
                    .complete(&input)
                    .await
                    .map(|text| Completion {
                        text,
                        usage: Usage::default(),
                    })
                    .map_err(Attempt::failed)
            }
        }
    }
}

impl ApiModel {
    fn request_body(&self, prompt: &str, sampling: &Sampling) -> Value {
        let mut body = match self.api {
            Api::Chat => json!({
                "model": self.endpoint.model,
                "messages": [{"role": "user", "content": prompt}],
            }),
            Api::Completions => json!({"model": self.endpoint.model, "prompt": prompt}),
        };
        body["temperature"] = Value::from(sampling.temperature);
        if let Some(max_tokens) = sampling.max_tokens {
            let field = match self.api {
                Api::Chat => self.endpoint.max_tokens_field(),
                Api::Completions => "max_tokens",
            };
            body[field] = Value::from(max_tokens);
        }
        if !sampling.stop.is_empty() {
            body["stop"] = Value::from(sampling.stop.clone());
        }
        body
    }

    async fn complete(&self, prompt: &str, sampling: &Sampling) -> Result<Completion, Attempt> {
        let body = self.request_body(prompt, sampling).to_string();
        let mut request = self.client.post(self.url.clone()).body(body);
        if let Some(authorization) = &self.authorization {
            request = request.header(AUTHORIZATION, authorization.clone());
        }
        let reply = send_json(request, self.timeout, &self.secrets)
            .await
            .map_err(|failed| self.secrets.scrub(retry_timeouts(failed)))?;
        read_reply(&reply, self.api).map_err(|error| self.secrets.scrub(Attempt::failed(error)))
    }
}

/// The completion text and usage of a (chat) completions reply.
fn read_reply(body: &[u8], api: Api) -> Result<Completion, CallError> {
    let invalid = |reason: String| CallError::new(ErrorKind::InvalidOutput, reason);
    let reply: Value = serde_json::from_slice(body).map_err(|err| {
        CallError::new(
            ErrorKind::InvalidJson,
            format!("the reply is not JSON: {err}"),
        )
    })?;
    let (pointer, field) = match api {
        Api::Chat => ("/choices/0/message/content", "choices[0].message.content"),
        Api::Completions => ("/choices/0/text", "choices[0].text"),
    };
    let text = match reply.pointer(pointer) {
        Some(Value::String(text)) => text.clone(),
        // A reply cut by a content filter or a tool call carries no text.
        Some(Value::Null) => String::new(),
        Some(other) => {
            return Err(invalid(format!(
                "{field}: {}",
                crate::input::strict::wrong_type("a string", other)
            )))
        }
        None => return Err(invalid(format!("the reply has no {field}"))),
    };
    let count = |name: &str| {
        reply
            .pointer(&format!("/usage/{name}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Ok(Completion {
        text,
        usage: Usage {
            prompt_tokens: count("prompt_tokens"),
            completion_tokens: count("completion_tokens"),
            total_tokens: count("total_tokens"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_of_both_apis() {
        let chat = br#"{"choices":[{"message":{"content":"41"}}],"usage":{"prompt_tokens":7,"completion_tokens":1,"total_tokens":8}}"#;
        let completion = read_reply(chat, Api::Chat).unwrap();
        assert_eq!(completion.text, "41");
        assert_eq!(completion.usage.total_tokens, 8);
        let base = br#"{"choices":[{"text":" 41"}]}"#;
        assert_eq!(read_reply(base, Api::Completions).unwrap().text, " 41");
        assert_eq!(
            read_reply(base, Api::Chat).unwrap_err().message,
            "the reply has no choices[0].message.content"
        );
        assert_eq!(
            read_reply(b"[", Api::Chat).unwrap_err().kind,
            ErrorKind::InvalidJson
        );
    }
}
