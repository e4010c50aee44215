//! Running a spec's LLM judges live (`--judges live`; `docs/spec.md`, "Live judges"): each judge's
//! samples go through the OpenAI-compatible judge client (its endpoint and key rules, transport,
//! retries on 429/5xx/timeouts, reply reading and redaction), then become one
//! [`JudgeResult`] per judge as `llm_judge_results` would carry it.
//!
//! [`LiveJudges::new`] is built once per spec; [`LiveJudges::judge_run`] judges one run from
//! already-resolved evidence ([`JudgeInputs`]). `scorecard.judge_limits` are enforced per run: a
//! judge asking for more samples than `max_samples_per_judge`, or whose calls reach
//! `max_tokens` / `max_calls_usd`, is unavailable with a reason. With a token or cost cap the
//! run's calls go one at a time, in declaration order, so the cap is exact; otherwise up to
//! [`LiveJudgeOptions::concurrency`] calls are in flight.

mod aggregate;
mod prompt;

pub use aggregate::NO_SAMPLE_REASON;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::error::bad_flag;
use crate::evaluation_spec::evidence::{Evidence, Resolved, RunRecord};
use crate::evaluation_spec::judges::{judge_provider, JudgeResult};
use crate::evaluation_spec::model::{JudgeDecl, PricingRow, SpecDefinition};
use crate::in_flight;
use crate::judging::reply::read_response;
use crate::llm::{Body, Client, Connection, Endpoint};
use crate::protocol::with_retries;
use crate::protocol::{Attempt, CallError, ErrorKind};
use crate::secrets::Secrets;
use aggregate::{combine, Mode, ModelSamples, Reading};
use prompt::Shown;

/// A judge call's time limit when the judge sets no `timeout_ms`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Samples per model when a judge sets none (or 0).
const DEFAULT_SAMPLES: usize = 3;
/// The raw score range of rubric and reference replies when a judge sets no `score_scale`.
const DEFAULT_SCALE: (f64, f64) = (1.0, 5.0);
/// The flag that makes configuration problems here matter, named in their messages.
const FLAG: &str = "--judges live";

/// How judges are run, from the command line.
#[derive(Debug, Clone)]
pub struct LiveJudgeOptions {
    /// `--judge-base-url`: one endpoint for every judge model (else `EVALCTL_JUDGE_BASE_URL`,
    /// else each provider's default, as the judge client resolves it).
    pub base_url: Option<String>,
    /// Retries of a call after a transport failure, 429, 5xx or timeout.
    pub retries: u32,
    /// Judge calls of one run in flight at once (at least 1).
    pub concurrency: usize,
}

impl Default for LiveJudgeOptions {
    fn default() -> Self {
        LiveJudgeOptions {
            base_url: None,
            retries: 2,
            concurrency: 4,
        }
    }
}

/// What the judges of one run are shown, resolved by the caller. A value is the evidence string
/// or, as `Err`, why it is missing (a judge needing it is then unavailable with that reason).
#[derive(Debug, Clone)]
pub struct JudgeInputs {
    /// The run's final output.
    pub final_output: Result<String, String>,
    /// Every reference of [`LiveJudges::references`] (`context_from`, `reference_from`).
    pub evidence: HashMap<String, Result<String, String>>,
    /// The final outputs of the other agents judged with this run (n_wise; empty for one agent).
    pub other_agent_outputs: Vec<String>,
}

/// A spec's judges, ready to run: endpoints and keys resolved, one HTTP client.
pub struct LiveJudges {
    shared: Arc<Shared>,
}

/// Everything the calls of every run share.
struct Shared {
    judges: Vec<LiveJudge>,
    limits: Limits,
    client: Client,
    /// Every key and URL secret of every judge endpoint, removed from everything reported.
    secrets: Secrets,
    retries: u32,
    concurrency: usize,
}

/// One declared judge with its defaults applied.
struct LiveJudge {
    decl: JudgeDecl,
    mode: Mode,
    samples: usize,
    timeout: Duration,
    scale: (f64, f64),
    models: Vec<JudgeModel>,
}

/// One model of a judge and where it is reached.
struct JudgeModel {
    /// The model id as the spec declares it.
    declared: String,
    /// Its API.
    connection: Connection,
    /// Its price row, when `max_calls_usd` is set.
    price: Option<PricingRow>,
}

/// `scorecard.judge_limits`, 0 meaning "no cap".
#[derive(Debug, Clone, Copy, Default)]
struct Limits {
    max_samples: Option<usize>,
    max_tokens: Option<u64>,
    max_usd: Option<f64>,
}

impl Limits {
    fn of(spec: &SpecDefinition) -> Limits {
        let Some(limits) = &spec.scorecard.judge_limits else {
            return Limits::default();
        };
        Limits {
            max_samples: usize::try_from(limits.max_samples_per_judge)
                .ok()
                .filter(|max| *max > 0),
            max_tokens: u64::try_from(limits.max_tokens).ok().filter(|max| *max > 0),
            max_usd: Some(limits.max_calls_usd).filter(|max| *max > 0.0),
        }
    }

    /// Whether calls spend from a per-run budget.
    fn budgeted(&self) -> bool {
        self.max_tokens.is_some() || self.max_usd.is_some()
    }
}

impl LiveJudges {
    /// The judges of `spec` (a loaded, valid spec), with keys from the process environment.
    /// A missing key is an error naming its variable.
    pub fn new(spec: &SpecDefinition, options: &LiveJudgeOptions) -> anyhow::Result<LiveJudges> {
        Self::with_env(spec, options, |name| std::env::var(name).ok())
    }

    /// [`LiveJudges::new`] with `env` looking environment variables up.
    pub fn with_env(
        spec: &SpecDefinition,
        options: &LiveJudgeOptions,
        env: impl Fn(&str) -> Option<String>,
    ) -> anyhow::Result<LiveJudges> {
        let limits = Limits::of(spec);
        let pricing = spec
            .pricing
            .as_ref()
            .map_or(&[][..], |pricing| &pricing.models[..]);
        let mut judges = Vec::new();
        let mut secrets = Vec::new();
        for (index, decl) in spec.llm_judges.iter().enumerate() {
            let at = format!("evaluation_spec.llm_judges[{index}]");
            let mode = Mode::parse(&decl.mode).ok_or_else(|| {
                bad_flag(
                    FLAG,
                    format!("{at}.mode {:?} is not a judge mode", decl.mode),
                )
            })?;
            let scale = decl
                .score_scale
                .as_ref()
                .map_or(DEFAULT_SCALE, |scale| (scale.min, scale.max));
            if scale.0 >= scale.1 {
                return Err(bad_flag(
                    FLAG,
                    format!("{at}.score_scale min must be below max"),
                ));
            }
            let declared = if decl.models.is_empty() {
                std::slice::from_ref(&decl.model)
            } else {
                &decl.models[..]
            };
            let mut models = Vec::new();
            for model in declared {
                let model = model.trim();
                let provider = judge_provider(model).ok_or_else(|| {
                    bad_flag(
                        FLAG,
                        format!("{at}: judge model {model:?} maps to no known provider"),
                    )
                })?;
                let endpoint = Endpoint::resolve(
                    &format!("{provider}/{model}"),
                    options.base_url.as_deref(),
                    None,
                    &env,
                )?;
                if endpoint.key.is_none() && !endpoint.is_local() {
                    return Err(bad_flag(
                        &endpoint.key_env,
                        format!(
                            "not set: judge {:?} needs it for model {model:?} (export it, or \
                             point --judge-base-url at a local server that needs no key)",
                            decl.key
                        ),
                    ));
                }
                let price = match limits.max_usd {
                    None => None,
                    Some(_) => Some(price_row(pricing, provider, model).cloned().ok_or_else(
                        || {
                            bad_flag(
                                FLAG,
                                format!(
                                    "evaluation_spec.scorecard.judge_limits.max_calls_usd is \
                                     set but pricing.models has no row for provider \
                                     {provider:?} model {model:?}, so judge {:?} cannot be \
                                     held to it",
                                    decl.key
                                ),
                            )
                        },
                    )?),
                };
                secrets.extend(Connection::secrets_of(&endpoint));
                models.push(JudgeModel {
                    declared: model.to_string(),
                    connection: Connection::new(endpoint)?,
                    price,
                });
            }
            judges.push(LiveJudge {
                mode,
                samples: usize::try_from(decl.samples)
                    .ok()
                    .filter(|samples| *samples > 0)
                    .unwrap_or(DEFAULT_SAMPLES),
                timeout: decl
                    .timeout_ms
                    .and_then(|ms| u64::try_from(ms).ok())
                    .filter(|ms| *ms > 0)
                    .map_or(DEFAULT_TIMEOUT, Duration::from_millis),
                scale,
                models,
                decl: decl.clone(),
            });
        }
        let longest = judges
            .iter()
            .map(|judge| judge.timeout)
            .max()
            .unwrap_or(DEFAULT_TIMEOUT);
        let concurrency = options.concurrency.max(1);
        Ok(LiveJudges {
            shared: Arc::new(Shared {
                judges,
                limits,
                client: Client::new(longest, concurrency)?,
                secrets: Secrets::new(secrets),
                retries: options.retries,
                concurrency,
            }),
        })
    }

    /// The evidence references the judges read (`context_from`, `reference_from`), each once,
    /// in declaration order: the keys [`JudgeInputs::evidence`] needs.
    pub fn references(&self) -> Vec<String> {
        let mut references: Vec<String> = Vec::new();
        for judge in &self.shared.judges {
            let reference = (judge.mode == Mode::Reference).then_some(&judge.decl.reference_from);
            for reference in judge.decl.context_from.iter().chain(reference) {
                if !references.contains(reference) {
                    references.push(reference.clone());
                }
            }
        }
        references
    }

    /// What the judges are shown for `run`: its final output and every reference they name,
    /// resolved from the run's evidence.
    pub fn inputs_for(&self, run: &RunRecord) -> JudgeInputs {
        let evidence = Evidence::build(run);
        let resolve = |reference: &str| match evidence.resolve(reference).0 {
            Resolved::Value(value) => Ok(value),
            Resolved::Missing(reason) | Resolved::Error(reason) => Err(reason),
        };
        JudgeInputs {
            final_output: resolve("final_output"),
            evidence: self
                .references()
                .into_iter()
                .map(|reference| {
                    let value = resolve(&reference);
                    (reference, value)
                })
                .collect(),
            other_agent_outputs: Vec::new(),
        }
    }

    /// Judge one run: one result per declared judge, in declaration order.
    pub async fn judge_run(&self, inputs: &JudgeInputs) -> Vec<JudgeResult> {
        let shared = &self.shared;
        let mut settled: Vec<Option<JudgeResult>> = Vec::new();
        let mut calls = Vec::new();
        for (index, judge) in shared.judges.iter().enumerate() {
            match plan(index, judge, shared.limits, inputs) {
                Ok(judge_calls) => {
                    calls.extend(judge_calls);
                    settled.push(None);
                }
                Err(reason) => settled.push(Some(unavailable(&judge.decl, reason))),
            }
        }
        for (order, call) in calls.iter_mut().enumerate() {
            call.order = order;
        }
        let (mut outcomes, limit_hits) = if shared.limits.budgeted() {
            self.run_within_budget(calls).await
        } else {
            (self.run_concurrently(calls).await, HashMap::new())
        };
        outcomes.sort_by_key(|outcome| outcome.order);
        shared
            .judges
            .iter()
            .zip(settled)
            .enumerate()
            .map(|(index, (judge, settled))| {
                if let Some(result) = settled {
                    return result;
                }
                if let Some(reason) = limit_hits.get(&index) {
                    return unavailable(&judge.decl, reason.clone());
                }
                let mut models: Vec<ModelSamples> = judge
                    .models
                    .iter()
                    .map(|model| ModelSamples {
                        model: model.declared.clone(),
                        ..ModelSamples::default()
                    })
                    .collect();
                for outcome in outcomes.iter().filter(|outcome| outcome.judge == index) {
                    let samples = &mut models[outcome.model];
                    match &outcome.score {
                        Ok(score) => samples.scores.push(*score),
                        Err(error) => samples.errors.push(error.message.clone()),
                    }
                }
                combine(
                    &judge.decl.key,
                    &judge.decl.mode,
                    judge.mode == Mode::Assertion,
                    judge.decl.consensus.as_ref(),
                    &models,
                )
            })
            .collect()
    }

    /// Every call at once, at most `concurrency` in flight.
    async fn run_concurrently(&self, calls: Vec<PlannedCall>) -> Vec<Outcome> {
        let calls = calls.into_iter().map(|call| {
            let shared = Arc::clone(&self.shared);
            async move {
                let attempt = shared.execute(&call).await;
                call.outcome(attempt)
            }
        });
        in_flight::all(self.shared.concurrency, calls).await
    }

    /// The calls one at a time, each only while the run's judge budget lasts. The second value
    /// names the judges a limit made unavailable, with the reason.
    async fn run_within_budget(
        &self,
        calls: Vec<PlannedCall>,
    ) -> (Vec<Outcome>, HashMap<usize, String>) {
        let mut budget = Budget {
            limits: self.shared.limits,
            tokens: 0,
            usd: 0.0,
        };
        let mut outcomes = Vec::new();
        let mut limit_hits = HashMap::new();
        for call in calls {
            if limit_hits.contains_key(&call.judge) {
                continue;
            }
            if let Err(reason) = budget.check(true) {
                limit_hits.insert(call.judge, reason);
                continue;
            }
            let attempt = self.shared.execute(&call).await;
            let model = &self.shared.judges[call.judge].models[call.model];
            if let Err(reason) = budget.charge(&attempt.side_info, model) {
                limit_hits.insert(call.judge, reason);
            }
            outcomes.push(call.outcome(attempt));
        }
        (outcomes, limit_hits)
    }
}

/// One judge call to make.
struct PlannedCall {
    /// Position among the run's calls, so samples keep their order (set once all are planned).
    order: usize,
    judge: usize,
    model: usize,
    /// The chat-completions request body.
    body: Vec<u8>,
    reading: Reading,
}

impl PlannedCall {
    fn outcome(&self, attempt: Attempt) -> Outcome {
        Outcome {
            order: self.order,
            judge: self.judge,
            model: self.model,
            score: attempt.score,
        }
    }
}

/// What one call gave.
struct Outcome {
    order: usize,
    judge: usize,
    model: usize,
    score: Result<f64, CallError>,
}

/// The calls of `judge` for one run, or why it cannot be judged.
fn plan(
    index: usize,
    judge: &LiveJudge,
    limits: Limits,
    inputs: &JudgeInputs,
) -> Result<Vec<PlannedCall>, String> {
    let decl = &judge.decl;
    if let Some(max) = limits.max_samples.filter(|max| judge.samples > *max) {
        return Err(format!(
            "judge_limits.max_samples_per_judge is {max} but judge {:?} asks for {} samples per \
             model",
            decl.key, judge.samples
        ));
    }
    let final_output = inputs.final_output.as_deref().map_err(Clone::clone)?;
    let resolved = |reference: &str| match inputs.evidence.get(reference) {
        Some(value) => value.clone(),
        None => Err(format!(
            "evidence {reference:?} was not resolved for the judge"
        )),
    };
    let context = decl
        .context_from
        .iter()
        .map(|reference| Ok((reference.clone(), resolved(reference)?)))
        .collect::<Result<Vec<_>, String>>()?;
    let reference = (judge.mode == Mode::Reference)
        .then(|| resolved(&decl.reference_from))
        .transpose()?;
    let agents: Vec<&str> = std::iter::once(final_output)
        .chain(inputs.other_agent_outputs.iter().map(String::as_str))
        .collect();
    if judge.mode == Mode::NWise && agents.len() < 2 {
        return Err(
            "n_wise judging needs the outputs of at least two agents; this run has one".into(),
        );
    }
    let instruction = match judge.mode {
        Mode::Rubric | Mode::Reference => &decl.rubric,
        Mode::Assertion => &decl.assertion,
        Mode::NWise => &decl.prompt,
    };
    let mut calls = Vec::new();
    for (model_index, model) in judge.models.iter().enumerate() {
        for sample in 0..judge.samples {
            let (outputs, reading) = shown_outputs(judge, &agents, sample);
            let shown = Shown {
                mode: judge.mode,
                instruction,
                scale: judge.scale,
                context: &context,
                reference: reference.as_deref(),
                outputs: &outputs,
                anti_gaming_clauses: &decl.anti_gaming_clauses,
            };
            let messages = json!([
                {"role": "system", "content": prompt::system_message(&shown)},
                {"role": "user", "content": prompt::user_message(&shown)},
            ]);
            let body = Body::chat(model.connection.endpoint(), messages)
                .with("temperature", 0.0)
                .json_object();
            calls.push(PlannedCall {
                order: 0,
                judge: index,
                model: model_index,
                body: body.to_bytes(),
                reading,
            });
        }
    }
    Ok(calls)
}

/// The labelled outputs sample `sample` shows and how its reply is read. n_wise shows every
/// agent as `candidate_N`, the run's own output first, or with `position_debiasing` rotated by
/// one place per sample.
fn shown_outputs<'a>(
    judge: &LiveJudge,
    agents: &[&'a str],
    sample: usize,
) -> (Vec<(String, &'a str)>, Reading) {
    match judge.mode {
        Mode::NWise => {
            let count = agents.len();
            let rotation = if judge.decl.position_debiasing {
                sample % count
            } else {
                0
            };
            let outputs: Vec<(String, &str)> = (0..count)
                .map(|place| {
                    (
                        format!("candidate_{}", place + 1),
                        agents[(place + rotation) % count],
                    )
                })
                .collect();
            let own = outputs[(count - rotation) % count].0.clone();
            let labels = outputs.iter().map(|(label, _)| label.clone()).collect();
            (outputs, Reading::Ranking { own, labels })
        }
        Mode::Assertion => (
            vec![("output".into(), agents[0])],
            Reading::Verdict {
                expect: judge.decl.expect.unwrap_or(true),
            },
        ),
        Mode::Rubric | Mode::Reference => (
            vec![("output".into(), agents[0])],
            Reading::Scale {
                min: judge.scale.0,
                max: judge.scale.1,
            },
        ),
    }
}

impl Shared {
    /// One call with the judge client's retries.
    async fn execute(&self, call: &PlannedCall) -> Attempt {
        with_retries(self.retries, || self.attempt(call)).await.0
    }

    /// One request; the score is the judge's per the call's reading; free of secrets.
    async fn attempt(&self, call: &PlannedCall) -> Attempt {
        let judge = &self.judges[call.judge];
        let model = &judge.models[call.model];
        let endpoint = model.connection.endpoint();
        let attempt = match self
            .client
            .post(
                &model.connection,
                &endpoint.chat_url,
                call.body.clone(),
                judge.timeout,
            )
            .await
        {
            Ok(body) => read_spec_reply(
                read_response(&body, &endpoint.model, None, &self.secrets),
                &call.reading,
            ),
            Err(failed) => failed,
        };
        self.secrets.scrub(attempt)
    }
}

/// The judge client's reading of a reply, scored by the spec judge's `reading`. When the reply
/// held no judge object at all (only the client's `model` and `usage` side info), the client's
/// own error says why (no JSON object, a refusal, an API error).
fn read_spec_reply(mut reply: Attempt, reading: &Reading) -> Attempt {
    match reading.score(&reply.side_info) {
        Ok(score) => reply.score = Ok(score),
        Err(problem) => {
            let replied = reply
                .side_info
                .keys()
                .any(|key| key != "model" && key != "usage");
            if replied || reply.score.is_ok() {
                reply.score = Err(CallError::new(ErrorKind::InvalidOutput, problem));
            }
        }
    }
    reply
}

/// The judge spending of one run so far.
struct Budget {
    limits: Limits,
    tokens: u64,
    usd: f64,
}

impl Budget {
    /// `Err` with the reason when a cap is reached (`at_cap`: spending equal to the cap counts,
    /// as before a call) or exceeded.
    fn check(&self, at_cap: bool) -> Result<(), String> {
        let over = |spent: f64, cap: f64| spent > cap || (at_cap && spent >= cap);
        if let Some(cap) = self
            .limits
            .max_tokens
            .filter(|cap| over(self.tokens as f64, *cap as f64))
        {
            return Err(format!(
                "judge_limits.max_tokens is {cap} and this run's judge calls used {} tokens",
                self.tokens
            ));
        }
        if let Some(cap) = self.limits.max_usd.filter(|cap| over(self.usd, *cap)) {
            return Err(format!(
                "judge_limits.max_calls_usd is {cap} and this run's judge calls cost ${:.6}",
                self.usd
            ));
        }
        Ok(())
    }

    /// Add what a call spent (`side_info` as the judge client returns it: `usage` from the API's
    /// answer, `model` whenever an answer arrived); `Err` when that exceeds a cap or cannot be
    /// known.
    fn charge(&mut self, side_info: &Map<String, Value>, model: &JudgeModel) -> Result<(), String> {
        if !side_info.contains_key("model") {
            // No answer arrived (a transport failure or an HTTP error): nothing was generated.
            return Ok(());
        }
        let count = |name: &str| {
            side_info
                .get("usage")
                .and_then(|usage| usage.get(name))
                .and_then(Value::as_u64)
        };
        let (Some(prompt), Some(completion)) = (count("prompt_tokens"), count("completion_tokens"))
        else {
            return Err(format!(
                "the judge API reported no token usage for model {:?}, so judge_limits cannot be \
                 enforced",
                model.declared
            ));
        };
        self.tokens += count("total_tokens").unwrap_or(prompt + completion);
        if let Some(price) = &model.price {
            self.usd += prompt as f64 / 1e6 * price.input_cost_per_million_tokens
                + completion as f64 / 1e6 * price.output_cost_per_million_tokens;
        }
        self.check(false)
    }
}

/// The price row of (provider, model) among the spec's pricing rows.
fn price_row<'p>(rows: &'p [PricingRow], provider: &str, model: &str) -> Option<&'p PricingRow> {
    rows.iter()
        .find(|row| row.provider_key == provider && row.provider_model_id == model)
}

/// A result without a score.
fn unavailable(decl: &JudgeDecl, reason: String) -> JudgeResult {
    JudgeResult {
        judge_key: decl.key.clone(),
        mode: decl.mode.clone(),
        reason,
        ..JudgeResult::default()
    }
}
