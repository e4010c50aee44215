//! The LLM-judge adapter over OpenAI-compatible chat-completions APIs (`--judge-model
//! PROVIDER/MODEL`): one `POST {base}/chat/completions` per call, scored from the judge's JSON
//! reply and always clamped to [0, 1], whatever `--score-range` says.
//!
//! The LLM client ([`crate::llm`]) resolves where to send and with which key and sends the
//! request; [`crate::judging`] reads `--rubric` and the judge's answer, `prompt` writes the
//! messages. The API key never leaves the `Authorization` header: every message and side-info
//! string is scrubbed of it before it leaves this module.

pub(crate) mod prompt;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;

use super::{Call, Evaluator};
use crate::error::bad_flag;
use crate::judging::reply;
use crate::judging::rubric::Rubric;
use crate::llm::endpoint::JUDGE_FLAGS;
use crate::llm::{endpoint, Api, Body, Client, Connection, EndpointSpec};
use crate::protocol::Attempt;
use crate::transport::display_url;

/// `--judge-model` and its companion flags.
#[derive(Debug, Clone)]
pub struct JudgeSpec {
    /// `--judge-model PROVIDER/MODEL`, `--judge-base-url`, `--judge-api-key-env`.
    pub endpoint: EndpointSpec,
    /// `--objective`.
    pub objective: String,
    /// `--rubric FILE.json`.
    pub rubric: Option<PathBuf>,
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
    let endpoint = spec.endpoint.resolve(JUDGE_FLAGS)?;
    let rubric = spec.rubric.as_deref().map(Rubric::load).transpose()?;
    Ok(Arc::new(JudgeEvaluator {
        system_message: prompt::system_message(rubric.as_ref()),
        client: Client::new(timeout, concurrency)?,
        timeout,
        objective: spec.objective.clone(),
        temperature: spec.temperature,
        max_tokens: spec.max_tokens,
        probe: spec.probe,
        model_flag: spec.endpoint.model.clone(),
        connection: Connection::new(endpoint)?,
        rubric,
    }))
}

/// Scores each call with one chat-completions request.
pub struct JudgeEvaluator {
    /// The judge's API.
    connection: Connection,
    /// `--judge-model` as given, for summaries.
    model_flag: String,
    objective: String,
    rubric: Option<Rubric>,
    system_message: String,
    temperature: f64,
    max_tokens: Option<u32>,
    probe: bool,
    client: Client,
    timeout: Duration,
}

impl JudgeEvaluator {
    /// The chat-completions request body for `call`.
    fn request_body(&self, call: &Call<'_>) -> Body {
        let endpoint = self.connection.endpoint();
        let messages = json!([
            {"role": "system", "content": self.system_message},
            {"role": "user", "content": prompt::user_message(&self.objective, self.rubric.as_ref(), call)},
        ]);
        Body::chat(endpoint, messages)
            .with("temperature", self.temperature)
            .json_object()
            .max_tokens(endpoint, Api::Chat, self.max_tokens)
    }

    /// One request; excerpts are already scrubbed, side info not yet.
    async fn attempt(&self, call: &Call<'_>) -> Attempt {
        let endpoint = self.connection.endpoint();
        let body = self.request_body(call).to_bytes();
        match self
            .client
            .post(&self.connection, &endpoint.chat_url, body, self.timeout)
            .await
        {
            Ok(body) => reply::read_response(
                &body,
                &endpoint.model,
                self.rubric.as_ref(),
                self.connection.secrets(),
            ),
            Err(failed) => failed,
        }
    }
}

#[async_trait]
impl Evaluator for JudgeEvaluator {
    fn kind(&self) -> &'static str {
        "judge"
    }

    /// The judge is probed only with --probe-judge, which --skip-preflight cannot go with.
    fn without_probe(&self) -> &'static str {
        "without --probe-judge"
    }

    fn target(&self) -> String {
        self.model_flag.clone()
    }

    fn describe(&self) -> String {
        format!(
            "judge {} at {}",
            self.model_flag,
            display_url(&self.connection.endpoint().base)
        )
    }

    fn check_setup(&self) -> Result<(), String> {
        match self
            .connection
            .endpoint()
            .missing_key(endpoint::JUDGE_FLAGS)
        {
            Some(reason) => Err(reason),
            None => Ok(()),
        }
    }

    /// `GET {base}/models` with the key (see [`Client::check_access`]).
    async fn check_access(&self) -> Result<(), String> {
        self.client
            .check_access(&self.connection, self.timeout)
            .await
    }

    fn probes(&self) -> bool {
        self.probe
    }

    async fn evaluate(&self, call: &Call<'_>) -> Attempt {
        self.connection.secrets().scrub(self.attempt(call).await)
    }
}
