//! The LLM-judge adapter over OpenAI-compatible chat-completions APIs (`--judge-model
//! PROVIDER/MODEL`): one `POST {base}/chat/completions` per call, scored from the judge's JSON
//! reply and always clamped to [0, 1], whatever `--score-range` says.
//!
//! `endpoint` resolves where to send and with which key, `rubric` reads `--rubric`, `prompt`
//! writes the messages, `reply` reads the answer. The API key never leaves the `Authorization`
//! header: every message and side-info string is scrubbed of it before it leaves this module.

pub(crate) mod endpoint;
pub(crate) mod prompt;
pub(crate) mod reply;
mod rubric;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{HeaderValue, AUTHORIZATION};
use serde_json::{json, Value};

use super::transport::{build_client, display_url, send_json, transport_error, url_secrets};
use super::{Call, Evaluator};
use crate::error::bad_flag;
use crate::protocol::{Attempt, ErrorKind, Retry};
use crate::secrets::Secrets;
use endpoint::Endpoint;
use rubric::Rubric;

/// `--judge-model` and its companion flags.
#[derive(Debug, Clone)]
pub struct JudgeSpec {
    /// `PROVIDER/MODEL`.
    pub model: String,
    /// `--objective`.
    pub objective: String,
    /// `--rubric FILE.json`.
    pub rubric: Option<PathBuf>,
    /// `--judge-base-url`.
    pub base_url: Option<String>,
    /// `--judge-api-key-env`.
    pub api_key_env: Option<String>,
    /// `--judge-temperature`.
    pub temperature: f64,
    /// `--judge-max-tokens`.
    pub max_tokens: Option<u32>,
    /// `--probe-judge`.
    pub probe: bool,
}

/// Build the judge evaluator: resolve the endpoint and key from the flags and the environment,
/// load the rubric. Configuration problems are bad input (exit 2); a missing key is reported by
/// preflight's setup check (exit 3).
pub fn build(
    spec: &JudgeSpec,
    timeout: Duration,
    concurrency: usize,
) -> anyhow::Result<Arc<dyn Evaluator>> {
    if spec.objective.trim().is_empty() {
        return Err(bad_flag("--objective", "must not be empty"));
    }
    if !spec.temperature.is_finite() || spec.temperature < 0.0 {
        return Err(bad_flag(
            "--judge-temperature",
            format!("{}: must be a finite number >= 0", spec.temperature),
        ));
    }
    if spec.max_tokens == Some(0) {
        return Err(bad_flag("--judge-max-tokens", "must be at least 1"));
    }
    let endpoint = Endpoint::resolve(
        &spec.model,
        spec.base_url.as_deref(),
        spec.api_key_env.as_deref(),
        |name| std::env::var(name).ok(),
    )?;
    let rubric = spec.rubric.as_deref().map(Rubric::load).transpose()?;
    let authorization = authorization(&endpoint)?;
    let secrets = Secrets::new(endpoint_secrets(&endpoint));
    Ok(Arc::new(JudgeEvaluator {
        secrets,
        system_message: prompt::system_message(rubric.as_ref()),
        client: build_client(timeout, concurrency)?,
        timeout,
        objective: spec.objective.clone(),
        temperature: spec.temperature,
        max_tokens: spec.max_tokens,
        probe: spec.probe,
        model_flag: spec.model.clone(),
        endpoint,
        rubric,
        authorization,
    }))
}

/// Scores each call with one chat-completions request.
pub struct JudgeEvaluator {
    endpoint: Endpoint,
    /// `--judge-model` as given, for summaries.
    model_flag: String,
    objective: String,
    rubric: Option<Rubric>,
    system_message: String,
    temperature: f64,
    max_tokens: Option<u32>,
    probe: bool,
    /// `Bearer KEY`, marked sensitive; `None` without a key.
    authorization: Option<HeaderValue>,
    /// The key, removed from every excerpt, message and side-info string.
    secrets: Secrets,
    client: reqwest::Client,
    timeout: Duration,
}

impl JudgeEvaluator {
    /// The chat-completions request body for `call`.
    fn request_body(&self, call: &Call<'_>) -> Value {
        let mut body = json!({
            "model": self.endpoint.model,
            "messages": [
                {"role": "system", "content": self.system_message},
                {"role": "user", "content": prompt::user_message(&self.objective, self.rubric.as_ref(), call)},
            ],
            "temperature": self.temperature,
            "response_format": {"type": "json_object"},
        });
        if let Some(max_tokens) = self.max_tokens {
            body[self.endpoint.max_tokens_field()] = Value::from(max_tokens);
        }
        body
    }

    /// One request; excerpts are already scrubbed, side info not yet.
    async fn attempt(&self, call: &Call<'_>) -> Attempt {
        let body = serde_json::to_vec(&self.request_body(call)).expect("a JSON value serialises");
        let mut request = self.client.post(self.endpoint.chat_url.clone()).body(body);
        if let Some(authorization) = &self.authorization {
            request = request.header(AUTHORIZATION, authorization.clone());
        }
        match send_json(request, self.timeout, &self.secrets).await {
            Ok(body) => reply::read_response(
                &body,
                &self.endpoint.model,
                self.rubric.as_ref(),
                &self.secrets,
            ),
            Err(failed) => retry_timeouts(failed),
        }
    }
}

/// The `Authorization: Bearer KEY` header for `endpoint`, marked sensitive; `None` without a key.
pub(crate) fn authorization(endpoint: &Endpoint) -> anyhow::Result<Option<HeaderValue>> {
    endpoint
        .key
        .as_ref()
        .map(|key| {
            HeaderValue::from_str(&format!("Bearer {}", key.expose())).map(|mut value| {
                value.set_sensitive(true);
                value
            })
        })
        .transpose()
        .map_err(|_| {
            bad_flag(
                &endpoint.key_env,
                "the API key is not usable in an HTTP header",
            )
        })
}

/// What requests to `endpoint` send that must never be shown: the key and the base URL's
/// secrets (for [`Secrets::new`]).
pub(crate) fn endpoint_secrets(endpoint: &Endpoint) -> Vec<String> {
    let url_secrets = url_secrets(&endpoint.base);
    endpoint
        .key
        .iter()
        .map(|key| key.expose().to_string())
        .chain(Secrets::sent_values(url_secrets.iter().map(String::as_str)))
        .collect()
}

/// A failed attempt, with a judge that did not answer in time made retryable like a 5xx.
pub(crate) fn retry_timeouts(mut failed: Attempt) -> Attempt {
    if failed
        .score
        .as_ref()
        .is_err_and(|error| error.kind == ErrorKind::Timeout)
    {
        failed.retry = Retry::Allowed { after: None };
    }
    failed
}

#[async_trait]
impl Evaluator for JudgeEvaluator {
    fn kind(&self) -> &'static str {
        "judge"
    }

    fn target(&self) -> String {
        self.model_flag.clone()
    }

    fn describe(&self) -> String {
        format!(
            "judge {} at {}",
            self.model_flag,
            display_url(&self.endpoint.base)
        )
    }

    fn check_setup(&self) -> Result<(), String> {
        match self.endpoint.missing_key(endpoint::JUDGE_FLAGS) {
            Some(reason) => Err(reason),
            None => Ok(()),
        }
    }

    /// `GET {base}/models` with the key: free, and a rejected key (401, 403) or an unreachable
    /// server shows before any call. Any other answer (some compatible servers have no models
    /// endpoint) says nothing against the judge.
    async fn check_access(&self) -> Result<(), String> {
        let mut models_url = self.endpoint.base.clone();
        models_url.set_path(&format!(
            "{}/models",
            self.endpoint.base.path().trim_end_matches('/')
        ));
        let mut request = self.client.get(models_url).timeout(self.timeout);
        if let Some(authorization) = &self.authorization {
            request = request.header(AUTHORIZATION, authorization.clone());
        }
        match request.send().await {
            Ok(response) if matches!(response.status().as_u16(), 401 | 403) => Err(format!(
                "the API rejected the key in {} (HTTP {} from the models endpoint)",
                self.endpoint.key_env,
                response.status().as_u16()
            )),
            Ok(_) => Ok(()),
            Err(err) => Err(self.secrets.redact(
                &transport_error(&err, self.timeout)
                    .score
                    .err()
                    .map_or_else(String::new, |error| error.message),
            )),
        }
    }

    fn probes(&self) -> bool {
        self.probe
    }

    async fn evaluate(&self, call: &Call<'_>) -> Attempt {
        self.secrets.scrub(self.attempt(call).await)
    }
}
