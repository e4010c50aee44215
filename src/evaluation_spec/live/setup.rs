//! A spec's judges made ready to run: the command line's options and each judge's defaults,
//! every judge model's endpoint and key resolved (a missing key is an error naming its
//! variable), and `scorecard.judge_limits`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::aggregate::Mode;
use crate::error::bad_flag;
use crate::evaluation_spec::evidence::{Evidence, Resolved, RunRecord};
use crate::evaluation_spec::judges::judge_provider;
use crate::evaluation_spec::model::{JudgeDecl, PricingRow, SpecDefinition};
use crate::llm::{Client, Connection, Endpoint};
use crate::secrets::Secrets;
use crate::transport::display_url;

/// A judge call's time limit when the judge sets no `timeout_ms` and the command no other.
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
    /// A judge call's time limit when the judge sets no `timeout_ms` (`run --spec` gives its
    /// `--timeout`).
    pub timeout: Duration,
}

impl Default for LiveJudgeOptions {
    fn default() -> Self {
        LiveJudgeOptions {
            base_url: None,
            retries: 2,
            concurrency: 4,
            timeout: DEFAULT_TIMEOUT,
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
    pub(super) shared: Arc<Shared>,
}

/// Everything the calls of every run share.
pub(super) struct Shared {
    pub(super) judges: Vec<LiveJudge>,
    pub(super) limits: Limits,
    pub(super) client: Client,
    /// Every key and URL secret of every judge endpoint, removed from everything reported.
    pub(super) secrets: Secrets,
    pub(super) retries: u32,
    pub(super) concurrency: usize,
    /// The calls made so far, and those that gave no score.
    pub(super) tally: CallTally,
}

/// How many judge calls were made, how many gave no score, and the first one's reason.
#[derive(Default)]
pub(super) struct CallTally {
    calls: AtomicUsize,
    failed: AtomicUsize,
    first_failure: Mutex<Option<String>>,
}

impl CallTally {
    /// Count one call, which gave a score or failed with `reason`.
    pub(super) fn add(&self, failure: Option<&str>) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        if let Some(reason) = failure {
            self.failed.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut first) = self.first_failure.lock() {
                first.get_or_insert_with(|| reason.to_string());
            }
        }
    }
}

/// One declared judge with its defaults applied.
pub(super) struct LiveJudge {
    pub(super) decl: JudgeDecl,
    pub(super) mode: Mode,
    pub(super) samples: usize,
    pub(super) timeout: Duration,
    pub(super) scale: (f64, f64),
    pub(super) models: Vec<JudgeModel>,
}

/// One model of a judge and where it is reached.
pub(super) struct JudgeModel {
    /// The model id as the spec declares it.
    pub(super) declared: String,
    /// Its API.
    pub(super) connection: Connection,
    /// Its price row, when `max_calls_usd` is set.
    pub(super) price: Option<PricingRow>,
}

/// `scorecard.judge_limits`, 0 meaning "no cap".
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Limits {
    pub(super) max_samples: Option<usize>,
    pub(super) max_tokens: Option<u64>,
    pub(super) max_usd: Option<f64>,
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
    pub(super) fn budgeted(&self) -> bool {
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
                    .map_or(options.timeout, Duration::from_millis),
                scale,
                models,
                decl: decl.clone(),
            });
        }
        let longest = judges
            .iter()
            .map(|judge| judge.timeout)
            .max()
            .unwrap_or(options.timeout);
        let concurrency = options.concurrency.max(1);
        Ok(LiveJudges {
            shared: Arc::new(Shared {
                judges,
                limits,
                client: Client::new(longest, concurrency)?,
                secrets: Secrets::new(secrets),
                retries: options.retries,
                concurrency,
                tally: CallTally::default(),
            }),
        })
    }

    /// A warning when judge calls made so far gave no score (the reference leaves such a judge
    /// out of its run's scoring without a word): how many of how many, and the first reason.
    pub fn failure_warning(&self) -> Option<String> {
        let tally = &self.shared.tally;
        let (calls, failed) = (
            tally.calls.load(Ordering::Relaxed),
            tally.failed.load(Ordering::Relaxed),
        );
        if failed == 0 {
            return None;
        }
        let first = tally
            .first_failure
            .lock()
            .ok()
            .and_then(|first| first.clone());
        let how_many = match (failed, calls) {
            (1, 1) => "the one live judge call gave".to_string(),
            _ if failed == calls => format!("every one of the {calls} live judge calls gave"),
            _ => format!("{failed} of {calls} live judge calls gave"),
        };
        Some(format!(
            "{how_many} no score (the first: {}); a judge without a score is left out of its \
             run's scoring",
            first.unwrap_or_default()
        ))
    }

    /// Whether every judge endpoint lets its key in (`GET {base}/models`, free; see
    /// [`Client::check_access`]), each endpoint and key once, before any run is judged: the first
    /// that does not, as `judge KEY: model MODEL: reason`.
    pub async fn check_access(&self) -> Result<(), String> {
        let mut checked: Vec<(String, String)> = Vec::new();
        for judge in &self.shared.judges {
            for model in &judge.models {
                let endpoint = model.connection.endpoint();
                let reached = (endpoint.base.to_string(), endpoint.key_env.clone());
                if checked.contains(&reached) {
                    continue;
                }
                self.shared
                    .client
                    .check_access(&model.connection, judge.timeout)
                    .await
                    .map_err(|reason| {
                        format!(
                            "judge {}: model {} at {}: {reason}",
                            judge.decl.key,
                            model.declared,
                            display_url(&endpoint.base)
                        )
                    })?;
                checked.push(reached);
            }
        }
        Ok(())
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
}

/// The price row of (provider, model) among the spec's pricing rows.
fn price_row<'p>(rows: &'p [PricingRow], provider: &str, model: &str) -> Option<&'p PricingRow> {
    rows.iter()
        .find(|row| row.provider_key == provider && row.provider_model_id == model)
}
