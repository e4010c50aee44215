//! The model `tasks run` and `run --generate` generate with: an OpenAI-compatible API through
//! the one LLM client (its key, base-URL, retry and redaction rules; chat completions, or legacy
//! completions for base models), or a command that reads the rendered prompt as JSON on stdin and
//! prints the completion on stdout (the command evaluator's child handling: timeout, process
//! group); and the key of each completion it gives (a SHA-256 of the model's identity, the
//! sampling and the prompt), under which `tasks run`'s journal and the `--cache` keep it.

use std::time::Duration;

use reqwest::Url;
use serde::Serialize;
use serde_json::{json, Value};

use crate::digest::Fields;
use crate::evaluator::command::{CommandEvaluator, CommandSpec};
use crate::evaluator::Evaluator;
use crate::llm::reply::{read_completion, Unanswered};
use crate::llm::{Api, Body, Client, Completion, Connection, EndpointFlags, EndpointSpec, Usage};
use crate::protocol::{with_retries, Attempt, CallError, ErrorKind};
use crate::runner::key::{
    add_command_identity, add_declared_inputs, DeclaredInputs, KeyFields, KeyedFiles,
};
use crate::store::{Cache, CachedCompletion, CallKey};
use crate::transport::display_url;

/// `tasks run`'s flags, as endpoint messages name them.
pub const MODEL_FLAGS: EndpointFlags = EndpointFlags {
    model: "--model",
    base_url: "--base-url",
    api_key_env: "--api-key-env",
};

/// The model, as the flags name it.
#[derive(Debug, Clone)]
pub enum ModelSpec {
    /// `--model PROVIDER/MODEL`.
    Api {
        /// `PROVIDER/MODEL`, `--base-url`, `--api-key-env`.
        endpoint: EndpointSpec,
        /// `--api`.
        api: Api,
    },
    /// `--model-command CMD` (and `--model-cwd`).
    Command(CommandSpec),
}

impl ModelSpec {
    /// `id` when this model sees it with the prompt (a command gets the task's or candidate's
    /// id), so that it keys the completion too; an API gets the prompt alone.
    pub fn seen_id<'a>(&self, id: &'a str) -> Option<&'a str> {
        matches!(self, ModelSpec::Command(_)).then_some(id)
    }
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

/// What the model is asked.
pub struct Prompt<'a> {
    /// The prompt text: what the completions API gets.
    pub text: &'a str,
    /// Its chat form for the chat API; `None` sends the text as one user message.
    pub messages: Option<&'a Value>,
    /// What a model command reads on stdin.
    pub command_input: Value,
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
    connection: Connection,
    api: Api,
    url: Url,
    model_flag: String,
    flags: EndpointFlags,
    client: Client,
    timeout: Duration,
}

impl Model {
    /// Build the model: resolve the endpoint and key (bad input naming `flags` on a problem) or
    /// the command.
    pub fn build(
        spec: &ModelSpec,
        flags: EndpointFlags,
        timeout: Duration,
        concurrency: usize,
    ) -> anyhow::Result<Model> {
        match spec {
            ModelSpec::Command(command) => Ok(Model::Command {
                label: format!("command '{}'", shell_words::join(&command.argv)),
                runner: CommandEvaluator::model(command.clone(), timeout),
            }),
            ModelSpec::Api { endpoint, api } => {
                let model = &endpoint.model;
                let endpoint = endpoint.resolve(flags)?;
                let url = endpoint.url_for(match api {
                    Api::Chat => "chat/completions",
                    Api::Completions => "completions",
                });
                Ok(Model::Api(Box::new(ApiModel {
                    connection: Connection::new(endpoint)?,
                    client: Client::new(timeout, concurrency)?,
                    api: *api,
                    url,
                    model_flag: model.clone(),
                    flags,
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
                display_url(&model.connection.endpoint().base)
            ),
            Model::Command { runner, .. } => format!("model {}", runner.describe()),
        }
    }

    /// What would make every generation fail, found before the first: no key for a remote API,
    /// a command that cannot start.
    pub fn check_setup(&self) -> Result<(), String> {
        match self {
            Model::Api(model) => match model.connection.endpoint().missing_key(model.flags) {
                Some(reason) => Err(reason),
                None => Ok(()),
            },
            Model::Command { runner, .. } => runner.check_setup(),
        }
    }

    /// Whether the API lets this key in: `GET {base}/models`, free (see
    /// [`Client::check_access`]), so that a rejected key or an unreachable server shows once,
    /// before any task; a command has nothing to check.
    pub async fn check_access(&self) -> Result<(), String> {
        match self {
            Model::Api(model) => {
                model
                    .client
                    .check_access(&model.connection, model.timeout)
                    .await
            }
            Model::Command { .. } => Ok(()),
        }
    }

    /// Complete `prompt` with up to `retries` retries, keeping a completion in `cache` under
    /// `key` while the files the key hashes still hold: the completion or the last attempt's
    /// error (with the tokens its reply reported), and how many attempts were made.
    pub async fn complete_and_keep(
        &self,
        prompt: &Prompt<'_>,
        sampling: &Sampling,
        retries: u32,
        cache: Option<(&Cache, &CallKey, &KeyedFiles)>,
    ) -> (Result<Completion, Unanswered>, u32) {
        let (completion, attempts) =
            with_retries(retries, || self.complete(prompt, sampling)).await;
        let completion = completion.map_err(|attempt| {
            let usage = (attempt.side_info.get("usage"))
                .and_then(|usage| serde_json::from_value(usage.clone()).ok())
                .unwrap_or_default();
            let error = match attempt.score {
                Err(error) => error,
                Ok(_) => CallError::new(ErrorKind::InvalidOutput, "no completion"),
            };
            Unanswered { error, usage }
        });
        let cache = cache.filter(|(_, _, files)| completion.is_ok() && files.still_hold());
        if let (Some((cache, key, _)), Ok(completion)) = (cache, &completion) {
            let usage = completion.usage;
            let tokens = [
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.total_tokens,
            ];
            let text = completion.text.clone();
            let cut_short = completion.cut_short;
            cache.put_completion(
                key,
                CachedCompletion {
                    text,
                    tokens,
                    cut_short,
                },
            );
        }
        (completion, attempts)
    }

    /// One attempt at completing `prompt`. A failure is the failed attempt (retryable for
    /// transport failures, timeouts of the API, HTTP 429 and 5xx).
    pub async fn complete(
        &self,
        prompt: &Prompt<'_>,
        sampling: &Sampling,
    ) -> Result<Completion, Attempt> {
        match self {
            Model::Api(model) => model.complete(prompt, sampling).await,
            Model::Command { runner, .. } => {
                let input = serde_json::to_vec(&prompt.command_input).map_err(|err| {
                    Attempt::failed(CallError::new(ErrorKind::InvalidOutput, err.to_string()))
                })?;
                runner
                    .complete(&input)
                    .await
                    .map(|text| Completion {
                        text: until_stop(text, &sampling.stop),
                        usage: Usage::default(),
                        // A command reports no tokens: none are missing.
                        usage_missing: false,
                        cut_short: false,
                    })
                    .map_err(Attempt::failed)
            }
        }
    }
}

/// `text` up to the first of the `stops` it holds, as an API cuts a completion at its stop
/// sequences (the sequence itself is not kept).
fn until_stop(mut text: String, stops: &[String]) -> String {
    let first = (stops.iter())
        .filter(|stop| !stop.is_empty())
        .filter_map(|stop| text.find(stop.as_str()))
        .min();
    if let Some(at) = first {
        text.truncate(at);
    }
    text
}

impl ApiModel {
    fn request_body(&self, prompt: &Prompt<'_>, sampling: &Sampling) -> Body {
        let endpoint = self.connection.endpoint();
        let body = match (self.api, prompt.messages) {
            (Api::Chat, Some(messages)) => Body::chat(endpoint, messages.clone()),
            (Api::Chat, None) => {
                Body::chat(endpoint, json!([{"role": "user", "content": prompt.text}]))
            }
            (Api::Completions, _) => Body::completion(endpoint, prompt.text),
        };
        body.with("temperature", sampling.temperature)
            .max_tokens(endpoint, self.api, sampling.max_tokens)
            .stop(&sampling.stop)
    }

    async fn complete(
        &self,
        prompt: &Prompt<'_>,
        sampling: &Sampling,
    ) -> Result<Completion, Attempt> {
        let body = self.request_body(prompt, sampling).to_bytes();
        let reply = self
            .client
            .post(&self.connection, &self.url, body, self.timeout)
            .await?;
        read_completion(&reply, self.api).map_err(|unanswered| {
            let mut attempt = Attempt::failed(unanswered.error);
            // A refusal spent tokens: the failed attempt keeps them, as the judge's does.
            if !unanswered.usage.is_zero() {
                attempt
                    .side_info
                    .insert("usage".into(), json!(unanswered.usage));
            }
            self.connection.secrets().scrub(attempt)
        })
    }
}

/// The key of the completion of each `(task_id, prompt)` by `model` under `sampling`, in order,
/// and the files they hash. A model command script that cannot be read is bad input naming it.
pub fn completion_keys<'a>(
    model: &ModelSpec,
    sampling: &Sampling,
    tasks: impl Iterator<Item = (&'a str, &'a String)>,
) -> anyhow::Result<(Vec<CallKey>, KeyedFiles)> {
    let (configuration, files) =
        completion_configuration(model, sampling, &DeclaredInputs::default())?;
    let keys = tasks
        .map(|(task_id, prompt)| {
            completion_key(&configuration, prompt.as_bytes(), model.seen_id(task_id))
        })
        .collect();
    Ok((keys, files))
}

/// What every completion key of `model` under `sampling` shares: the model's identity (its
/// command script's contents, or its provider, model, API and base URL), the sampling, and what
/// the user declares decides an answer (`--cache-input`, `--cache-salt`); and the files it
/// hashes (the command's script, the declared files), watched as an evaluator's are.
pub fn completion_configuration(
    model: &ModelSpec,
    sampling: &Sampling,
    declared: &DeclaredInputs,
) -> anyhow::Result<(CallKey, KeyedFiles)> {
    let mut fields = KeyFields::new("evalctl completion key v1");
    match model {
        ModelSpec::Api {
            endpoint, // which variable holds the key does not change a completion
            api,
        } => {
            let api = match api {
                Api::Chat => "chat",
                Api::Completions => "completions",
            };
            fields
                .add(b'K', b"api")
                .add(b'J', endpoint.model.as_bytes())
                .add(b'G', api.as_bytes())
                .add_optional(
                    b'B',
                    endpoint.chosen_base_url().as_deref().map(str::as_bytes),
                );
        }
        ModelSpec::Command(command) => add_command_identity(&mut fields, command)?,
    }
    fields.add(b'X', &sampling.temperature.to_le_bytes());
    let max_tokens = sampling.max_tokens.map(u32::to_le_bytes);
    fields.add_optional(b'N', max_tokens.as_ref().map(|n| &n[..]));
    for stop in &sampling.stop {
        fields.add(b'S', stop.as_bytes());
    }
    // A command's completion is cut at its stop sequences by evalctl (an earlier evalctl kept
    // it whole): what was kept whole is not its answer.
    if matches!(model, ModelSpec::Command(_)) && !sampling.stop.is_empty() {
        fields.add(b'T', b"cut at the stop sequences");
    }
    add_declared_inputs(&mut fields, declared)?;
    let (fields, files) = fields.into_parts();
    Ok((fields.key(), files))
}

/// The key of the completion of `prompt` (its exact bytes) under `configuration`, by a model
/// that also sees the id `seen_id` (a command gets the task's or candidate's id, and may answer
/// by it).
pub fn completion_key(configuration: &CallKey, prompt: &[u8], seen_id: Option<&str>) -> CallKey {
    let mut fields = Fields::new("evalctl completion");
    fields.add(b'C', configuration.as_bytes()).add(b'P', prompt);
    if let Some(id) = seen_id {
        fields.add(b'I', id.as_bytes());
    }
    fields.key()
}
