//! Writing request bodies for an OpenAI-compatible API, in one place: which API generates
//! ([`Api`]), and a [`Body`] built field by field in the order the API's examples use (the
//! model, the messages or prompt, then the sampling parameters), with the token-limit field the
//! provider expects.

use serde_json::{Map, Value};

use super::endpoint::Endpoint;

/// Which API of an OpenAI-compatible server generates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `POST {base}/chat/completions`, the prompt as one user message.
    Chat,
    /// `POST {base}/completions`, the prompt as is (base models).
    Completions,
}

/// A request body, built field by field.
#[derive(Debug, Clone, Default)]
pub struct Body(Map<String, Value>);

impl Body {
    /// A chat-completions body for `endpoint`'s model.
    pub fn chat(endpoint: &Endpoint, messages: Value) -> Body {
        let mut body = Body::default();
        body.0
            .insert("model".into(), Value::from(endpoint.model.as_str()));
        body.0.insert("messages".into(), messages);
        body
    }

    /// A legacy completions body for `endpoint`'s model.
    pub fn completion(endpoint: &Endpoint, prompt: &str) -> Body {
        let mut body = Body::default();
        body.0
            .insert("model".into(), Value::from(endpoint.model.as_str()));
        body.0.insert("prompt".into(), Value::from(prompt));
        body
    }

    /// A body that starts from parameters a user configured (an FEP check's `model_config`).
    pub fn configured(parameters: Map<String, Value>) -> Body {
        Body(parameters)
    }

    /// Set field `name`.
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Body {
        self.0.insert(name.into(), value.into());
        self
    }

    /// Ask for one JSON object as the reply (`response_format`).
    pub fn json_object(self) -> Body {
        self.with(
            "response_format",
            serde_json::json!({"type": "json_object"}),
        )
    }

    /// The token limit, in the field `api` and `endpoint`'s provider expect (see
    /// [`Endpoint::max_tokens_field`]); nothing without a limit.
    pub fn max_tokens(self, endpoint: &Endpoint, api: Api, limit: Option<u32>) -> Body {
        match limit {
            None => self,
            Some(limit) => {
                let field = match api {
                    Api::Chat => endpoint.max_tokens_field(),
                    Api::Completions => "max_tokens",
                };
                self.with(field, limit)
            }
        }
    }

    /// Stop sequences; nothing when there are none.
    pub fn stop(self, stop: &[String]) -> Body {
        if stop.is_empty() {
            self
        } else {
            self.with("stop", stop.to_vec())
        }
    }

    /// The body as it is sent.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.0).expect("a JSON map serialises")
    }
}
