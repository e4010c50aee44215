//! Answering the checks that call out: `semantic_similarity` over an OpenAI-compatible
//! `/embeddings` endpoint, `llm_judge` over `/chat/completions` (both through the judge's
//! endpoint resolution, keys, retries and redaction), custom checks by their command (the
//! command evaluator's child handling: own process group, timeout, output limits), and the
//! `spec.TYPE` checks by the evaluation-spec validator of that type.
//!
//! A [`CheckCaller`] sends at most its concurrency at once over one keep-alive client. Every
//! failure becomes the check's error — `timeout_error`, or `unknown_error` (recoverable after a
//! 429, a 5xx or a lost connection) — with the keys scrubbed from its message.

use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use reqwest::Url;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use super::command::{CommandEvaluator, CommandSpec};
use crate::checks::extended::{
    judge_instructions, judge_results, similarity_results, KeySource, ProviderSettings, Spec,
};
use crate::checks::standard::as_text;
use crate::checks::{
    Answer, AnsweredBy, Call, CaseAnswers, Catalog, CheckError, CustomCheck, Declarations,
    EndpointPolicy, Trust,
};
use crate::error::bad_flag;
use crate::evaluation_spec::validators::{
    check_config, needs_expected, needs_file_target, ToolCall, Validator, ValidatorOutcome,
    Verdict, VALIDATOR_TYPES,
};
use crate::in_flight::{shared_places, InFlight, SharedPlaces};
use crate::input::strict;
use crate::judging::reply::top_level_objects;
use crate::llm::reply::{embeddings, message_content};
use crate::llm::{Body, Client, Connection, Endpoint, EndpointFlags};
use crate::protocol::with_retries;
use crate::protocol::{Attempt, CallError, ErrorKind, Retry};
use crate::secrets::Secrets;
use crate::text::{clip, one_line};
use crate::transport::display_url;

/// How the check arguments name what would be flags for `--judge-model`.
const CHECK_SETTINGS: EndpointFlags = EndpointFlags {
    model: "model_config.model",
    base_url: "provider_config.base_url",
    api_key_env: "provider_config.api_key",
};

/// The longest any one request may take, whatever a check's `timeout` says.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(3600);

/// The longest text `spec.rouge_score` compares, in bytes.
const MAX_ROUGE_TEXT: usize = 64 * 1024;

/// Calls made at once by default.
pub const DEFAULT_CONCURRENCY: usize = 8;

/// The custom check types evalctl brings itself: `spec.TYPE` for each evaluation-spec validator
/// that compares two texts, and `spec.tool_call_assertion` (those reading files or a workspace
/// need a run, which an FEP evaluation context is not).
pub fn validator_checks() -> impl Iterator<Item = CustomCheck> {
    VALIDATOR_TYPES
        .iter()
        .filter(|kind| {
            (needs_expected(kind) && !needs_file_target(kind)) || **kind == "tool_call_assertion"
        })
        .map(|kind| CustomCheck::validator(kind, run_validator, validator_config_problems))
}

/// The catalog of a local command: the validators' check types and `custom` (`--custom-check`;
/// a name given twice is a bad flag).
pub fn local_catalog(custom: &[CustomCheck]) -> anyhow::Result<Catalog> {
    for (index, check) in custom.iter().enumerate() {
        if custom[..index]
            .iter()
            .any(|earlier| earlier.name == check.name)
        {
            return Err(bad_flag(
                "--custom-check",
                format!("`{}` is declared twice", check.name),
            ));
        }
    }
    Ok(Catalog::with_custom(
        validator_checks().chain(custom.iter().cloned()),
    ))
}

/// The catalog of a local command whose checks come from a request or checks file: the
/// validators' check types, the command line's custom checks, and what the command line lets
/// the file use (`--allow-custom-check`, `--allow-endpoint`).
pub fn trusted_catalog(trust: &Trust) -> anyhow::Result<Catalog> {
    Ok(Catalog {
        endpoints: EndpointPolicy::Local(trust.endpoints.clone()),
        declarations: Declarations::AllowedByName(trust.commands.clone()),
        ..local_catalog(&trust.custom)?
    })
}

/// The problems the spec loader would find in the `config` of a `spec.KIND` check, worded as
/// its evaluation reports them (see [`crate::checks::ConfigCheckFn`]).
fn validator_config_problems(kind: &str, config: Option<&Value>) -> Vec<(String, String)> {
    check_config(kind, config)
        .into_iter()
        .map(|problem| (problem.at, problem.message))
        .collect()
}

/// A `config` taken from the evaluated case (a JSONPath), checked when the check runs: its
/// problems in one reason, `argument `config.threshold`: ...`.
fn config_problem(kind: &str, config: Option<&Value>) -> Option<String> {
    let problems: Vec<String> = validator_config_problems(kind, config)
        .into_iter()
        .map(|(at, message)| format!("argument `config{at}`: {message}"))
        .collect();
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// A provider resolved for sending: URL, headers' key, secrets to scrub.
pub struct Provider {
    url: Url,
    connection: Connection,
}

impl Provider {
    /// Resolve `settings` for requests to `{base}/{path}`: the base URL (as `--judge-model`'s)
    /// and the key, which a remote endpoint needs. The problem names the setting.
    pub fn resolve(settings: &ProviderSettings, path: &str) -> Result<Provider, String> {
        let key_env = match &settings.key {
            KeySource::Env(name) => Some(name.as_str()),
            KeySource::ProviderDefault | KeySource::None => None,
        };
        let keyless = settings.key == KeySource::None;
        let endpoint = Endpoint::resolve_for(
            CHECK_SETTINGS,
            &format!("{}/{}", settings.provider, settings.model()),
            settings.base_url.as_deref(),
            key_env,
            // An endpoint the operator allowed without a key gets none, whatever is set.
            |name| (!keyless).then(|| std::env::var(name).ok()).flatten(),
        )
        .map_err(|err| err.to_string())?;
        if !keyless {
            if let Some(reason) = endpoint.missing_key(CHECK_SETTINGS) {
                return Err(reason);
            }
        }
        Ok(Provider {
            url: endpoint.url_for(path),
            connection: Connection::new(endpoint).map_err(|err| err.to_string())?,
        })
    }
}

/// The API path an extended check posts to.
pub fn api_path(spec: &Spec) -> &'static str {
    match spec {
        Spec::Similarity { .. } => "embeddings",
        Spec::Judge { .. } => "chat/completions",
    }
}

/// A [`CheckCaller`] with a runtime of its own, for the commands that are not async
/// (`fep evaluate`). Built only when a run has checks that call out.
pub struct BlockingCaller {
    runtime: tokio::runtime::Runtime,
    caller: CheckCaller,
}

impl BlockingCaller {
    /// A caller making at most `concurrency` calls at once.
    pub fn new(concurrency: usize) -> anyhow::Result<BlockingCaller> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let caller = runtime.block_on(async { CheckCaller::new(concurrency) })?;
        Ok(BlockingCaller { runtime, caller })
    }

    /// [`CheckCaller::answer_cases`], waited for.
    pub fn answer_cases(&self, cases: Vec<Vec<Option<Call>>>) -> Vec<CaseAnswers> {
        self.runtime.block_on(self.caller.answer_cases(cases))
    }
}

/// Sends the calls of checks that call out, a bounded number at once.
#[derive(Clone)]
pub struct CheckCaller {
    client: Client,
    /// Places shared by every user of this caller (and its clones).
    places: SharedPlaces,
    /// The most calls one [`CheckCaller::answer_in_order`] has started and not finished.
    window: usize,
}

impl CheckCaller {
    /// A caller making at most `concurrency` calls at once.
    pub fn new(concurrency: usize) -> anyhow::Result<CheckCaller> {
        let concurrency = concurrency.max(1);
        Ok(CheckCaller {
            client: Client::new(CLIENT_TIMEOUT, concurrency)?,
            places: shared_places(concurrency),
            window: concurrency,
        })
    }

    /// This caller (its client and shared places), with at most `window` calls started at once
    /// by one evaluation: several evaluations share the places, none takes them all.
    pub fn with_window(&self, window: usize) -> CheckCaller {
        CheckCaller {
            window: window.max(1),
            ..self.clone()
        }
    }

    /// The answers to every case's calls, in the order given (a `None` call has no answer).
    pub async fn answer_cases(&self, cases: Vec<Vec<Option<Call>>>) -> Vec<CaseAnswers> {
        let mut answered = self.answer_in_order(cases);
        let mut answers = Vec::new();
        while let Some(case) = answered.recv().await {
            answers.push(case);
        }
        answers
    }

    /// Answer every case's calls and send each case's answers, in case order, as soon as that
    /// case and those before it are answered. Calls start in order, at most the window at once
    /// (and never more than the shared places allow). Dropping the receiver stops every call:
    /// those in flight (a command's process group is killed) and those not yet made.
    pub fn answer_in_order(&self, cases: Vec<Vec<Option<Call>>>) -> mpsc::Receiver<CaseAnswers> {
        let (sender, receiver) = mpsc::channel(64);
        let caller = self.clone();
        tokio::spawn(async move {
            let mut answers: Vec<CaseAnswers> = Vec::with_capacity(cases.len());
            let mut waiting: Vec<usize> = Vec::with_capacity(cases.len());
            for case_calls in &cases {
                answers.push(case_calls.iter().map(|_| None).collect());
                waiting.push(case_calls.iter().flatten().count());
            }
            let mut pending = cases
                .into_iter()
                .enumerate()
                .flat_map(|(case, calls)| {
                    calls
                        .into_iter()
                        .enumerate()
                        .filter_map(move |(index, call)| call.map(|call| (case, index, call)))
                })
                .map(|(case, index, call)| {
                    let caller = caller.clone();
                    async move { (case, index, caller.answer(call).await) }
                });
            let mut calls = InFlight::new(caller.window).sharing(Arc::clone(&caller.places));
            let mut next = 0;
            loop {
                calls.fill(&mut pending);
                while next < answers.len() && waiting[next] == 0 {
                    let case = std::mem::take(&mut answers[next]);
                    if sender.send(case).await.is_err() {
                        return;
                    }
                    next += 1;
                }
                if next == answers.len() {
                    return;
                }
                let answered = tokio::select! {
                    answered = calls.next() => answered,
                    // No one wants the answers: dropping `calls` stops the calls in flight.
                    () = sender.closed() => return,
                };
                match answered {
                    Some((case, index, answer)) => {
                        answers[case][index] = Some(answer);
                        waiting[case] -= 1;
                    }
                    None => waiting.iter_mut().for_each(|count| *count = 0),
                }
            }
        });
        receiver
    }

    /// Answer one call (its [`InFlight`] has taken a shared place for it).
    async fn answer(&self, call: Call) -> Answer {
        let started = Instant::now();
        let outcome = match call {
            Call::Embed {
                spec,
                text,
                reference,
            } => self.embed(&spec, &text, &reference, started).await,
            Call::Judge { spec, prompt } => self.judge(&spec, &prompt, started).await,
            Call::Command { check, arguments } => match &check.by {
                AnsweredBy::Command { argv, timeout } => {
                    run_command(&check.name, argv, *timeout, &arguments).await
                }
                // Evaluations answer a validator where its check is evaluated and send no call
                // for it; a call made all the same is answered the same way.
                AnsweredBy::Validator(kind, answer, _) => answer(kind, &arguments),
            },
        };
        Answer {
            outcome,
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
        }
    }

    async fn embed(
        &self,
        spec: &Spec,
        text: &str,
        reference: &str,
        started: Instant,
    ) -> Result<Value, CheckError> {
        let settings = spec.provider();
        let body =
            Body::configured(settings.model_config.clone()).with("input", json!([text, reference]));
        let (provider, reply) = self.post(spec, body).await?;
        let vectors = embeddings(&reply).map_err(|reason| {
            CheckError::unknown(
                provider
                    .connection
                    .secrets()
                    .redact(&format!("the embeddings API's reply: {reason}")),
                false,
            )
        })?;
        let mut metadata = call_metadata(&reply, settings, started);
        if let Some(tokens) = reply.pointer("/usage/total_tokens") {
            metadata.insert("tokens_processed".into(), tokens.clone());
        }
        similarity_results(spec, &vectors[0], &vectors[1], metadata)
    }

    async fn judge(
        &self,
        spec: &Spec,
        prompt: &str,
        started: Instant,
    ) -> Result<Value, CheckError> {
        let Spec::Judge {
            provider: settings,
            response_format,
            ..
        } = spec
        else {
            return Err(CheckError::unknown("not an llm_judge check", false));
        };
        let body = Body::configured(settings.model_config.clone())
            .with(
                "messages",
                json!([
                    {"role": "system", "content": judge_instructions(response_format)},
                    {"role": "user", "content": prompt},
                ]),
            )
            .json_object();
        let (provider, reply) = self.post(spec, body).await?;
        let content = message_content(&reply, provider.connection.secrets())
            .map_err(|error| CheckError::unknown(error.message, false))?;
        let mut metadata = call_metadata(&reply, settings, started);
        if let Some(reason) = reply.pointer("/choices/0/finish_reason") {
            metadata.insert("finish_reason".into(), reason.clone());
        }
        for (name, pointer) in [
            ("tokens_used", "/usage/total_tokens"),
            ("prompt_tokens", "/usage/prompt_tokens"),
            ("completion_tokens", "/usage/completion_tokens"),
        ] {
            if let Some(count) = reply.pointer(pointer) {
                metadata.insert(name.into(), count.clone());
            }
        }
        judge_results(spec, &content, metadata, top_level_objects(&content)).map_err(|mut error| {
            error.message = provider.connection.secrets().redact(&error.message);
            error
        })
    }

    /// Post `body` to the check's endpoint with retries; the provider and the reply as JSON.
    async fn post(&self, spec: &Spec, body: Body) -> Result<(Provider, Value), CheckError> {
        let settings = spec.provider();
        let provider =
            Provider::resolve(settings, api_path(spec)).map_err(CheckError::validation)?;
        let body = body.to_bytes();
        let (reply, _) = with_retries(settings.max_retries, || {
            self.client.post(
                &provider.connection,
                &provider.url,
                body.clone(),
                settings.timeout,
            )
        })
        .await;
        let reply = reply.map_err(|failed| check_error(failed, &provider))?;
        let reply = crate::llm::reply::parse_reply(&reply)
            .map_err(|error| CheckError::unknown(error.message, false))?;
        Ok((provider, reply))
    }
}

/// A failed attempt at `provider` as the check's error, its message scrubbed; one that never
/// reached the endpoint names its URL (which a default or an environment variable may have
/// chosen).
fn check_error(failed: Attempt, provider: &Provider) -> CheckError {
    let error = failed
        .score
        .err()
        .unwrap_or_else(|| CallError::new(ErrorKind::InvalidOutput, "no reply"));
    let message = provider.connection.secrets().redact(&error.message);
    match error.kind {
        ErrorKind::Timeout => CheckError::timeout(message),
        ErrorKind::Transport => CheckError::unknown(
            format!("{}: {message}", display_url(&provider.url)),
            matches!(failed.retry, Retry::Allowed { .. }),
        ),
        _ => CheckError::unknown(message, matches!(failed.retry, Retry::Allowed { .. })),
    }
}

/// What every extended check's results carry about the call.
fn call_metadata(
    reply: &Value,
    settings: &ProviderSettings,
    started: Instant,
) -> Map<String, Value> {
    let mut metadata = Map::new();
    metadata.insert(
        "model_version".into(),
        reply
            .get("model")
            .cloned()
            .unwrap_or_else(|| Value::from(settings.model())),
    );
    metadata.insert(
        "response_time_ms".into(),
        json!((started.elapsed().as_secs_f64() * 1000.0).round()),
    );
    metadata
}

/// Answer custom check `name` by its command: the resolved arguments on stdin, the results on
/// stdout.
async fn run_command(
    name: &str,
    argv: &[String],
    timeout: Duration,
    arguments: &Value,
) -> Result<Value, CheckError> {
    let command = CommandEvaluator::check_command(
        CommandSpec {
            argv: argv.to_vec(),
            cwd: None,
        },
        timeout,
    );
    // What the command prints reaches the request's client (and `serve`'s store): no secret of
    // the environment's goes with it (its stderr, quoted in errors, lost them as it was read).
    let stdout = command
        .complete(arguments.to_string().as_bytes())
        .await
        .map_err(|error| match error.kind {
            ErrorKind::Timeout => CheckError::timeout(error.message),
            _ => CheckError::unknown(error.message, false),
        })?;
    let secrets = Secrets::of_environment();
    match serde_json::from_str::<Value>(stdout.trim()) {
        Ok(results @ Value::Object(_)) => Ok(secrets.redact_value(results)),
        _ => Err(CheckError::unknown(
            format!(
                "the command of custom check `{name}` printed no JSON object of results: {:?}",
                clip(&one_line(&secrets.redact(stdout.trim())), 200)
            ),
            false,
        )),
    }
}

/// A `spec.TYPE` check: `config` checked as the spec loader checks it, then `actual` compared
/// with `expected`. Results: `passed`, `score` (normalized, 0 to 1), and the validator's `reason`
/// and `evidence` when it gives them; a comparison that errs is the check's `validation_error`.
fn run_validator(kind: &str, arguments: &Value) -> Result<Value, CheckError> {
    let config = arguments.get("config").filter(|config| !config.is_null());
    if let Some(problem) = config_problem(kind, config) {
        return Err(CheckError::validation(problem));
    }
    for name in ["actual", "expected"] {
        let length = arguments.get(name).map_or(0, |value| as_text(value).len());
        if kind == "rouge_score" && length > MAX_ROUGE_TEXT {
            return Err(CheckError::validation(format!(
                "argument `{name}`: {length} bytes; spec.rouge_score compares texts of up to \
                 {MAX_ROUGE_TEXT} bytes (its ROUGE-L is quadratic)"
            )));
        }
    }
    let validator = Validator::new(kind, config);
    let outcome: ValidatorOutcome = if kind == "tool_call_assertion" {
        let calls = tool_calls(arguments.get("calls").unwrap_or(&Value::Null))
            .map_err(CheckError::validation)?;
        validator.tool_call_assertion(&calls)
    } else {
        let text = |name: &str| {
            arguments
                .get(name)
                .map_or(String::new(), |value| as_text(value).into_owned())
        };
        validator.compare(&text("actual"), &text("expected")).into()
    };
    if outcome.verdict == Some(Verdict::Error) {
        return Err(CheckError::validation(outcome.reason));
    }
    let mut results = Map::new();
    results.insert(
        "passed".into(),
        Value::Bool(outcome.verdict == Some(Verdict::Pass)),
    );
    if let Some(score) = outcome.score {
        results.insert("score".into(), json!(score));
    }
    if !outcome.reason.is_empty() {
        results.insert("reason".into(), Value::from(outcome.reason));
    }
    if !outcome.evidence.is_empty() {
        results.insert(
            "evidence".into(),
            Value::Object(outcome.evidence.into_map()),
        );
    }
    if let Some(index) = outcome.source_call {
        results.insert("matched_call".into(), Value::from(index));
    }
    Ok(Value::Object(results))
}

/// The tool-call trace of `spec.tool_call_assertion`'s `calls`: an array of objects with a
/// `tool_name` (or `name`), `arguments` (default `{}`) and `failed` (default false).
fn tool_calls(calls: &Value) -> Result<Vec<ToolCall<'_>>, String> {
    static NO_ARGUMENTS: LazyLock<Value> = LazyLock::new(|| Value::Object(Map::new()));
    let items = calls.as_array().ok_or_else(|| {
        format!(
            "argument `calls`: {}",
            strict::wrong_type("an array of tool calls", calls)
        )
    })?;
    items
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let name = call
                .get("tool_name")
                .or_else(|| call.get("name"))
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    format!(
                        "argument `calls`[{index}]: expected an object with a string `tool_name`"
                    )
                })?;
            Ok(ToolCall {
                name,
                arguments: call.get("arguments").unwrap_or(&NO_ARGUMENTS),
                failed: call.get("failed").and_then(Value::as_bool).unwrap_or(false),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact_match(actual: &str) -> Option<Call> {
        Some(Call::Command {
            check: Arc::new(CustomCheck::validator(
                "exact_match",
                run_validator,
                validator_config_problems,
            )),
            arguments: json!({"actual": actual, "expected": "a"}),
        })
    }

    #[tokio::test]
    async fn cases_are_answered_in_order_whatever_finishes_first() {
        let caller = CheckCaller::new(2).unwrap();
        let cases = vec![
            vec![exact_match("a"), None, exact_match("b")],
            vec![None],
            vec![exact_match("b")],
        ];
        let answers = caller.answer_cases(cases).await;
        let passed: Vec<Vec<Option<bool>>> = answers
            .iter()
            .map(|case| {
                case.iter()
                    .map(|answer| {
                        answer
                            .as_ref()
                            .map(|answer| answer.outcome.as_ref().unwrap()["passed"] == true)
                    })
                    .collect()
            })
            .collect();
        assert_eq!(
            passed,
            [
                vec![Some(true), None, Some(false)],
                vec![None],
                vec![Some(false)]
            ]
        );
    }
}
