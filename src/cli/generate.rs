//! Flags of `run --generate` (and `preflight --generate`): the task models that answer each
//! candidate, rendered for each example, before the evaluator scores the answer.

use std::path::PathBuf;

use clap::Args;

use super::tasks::{model_command_words, ApiArg};
use super::values::{command_spec, parse_at_least};
use crate::error::bad_flag;
use crate::generate::model::{ModelSpec, Sampling};
use crate::generate::GenerateSpec;
use crate::llm::price::{parse_price, Price, Pricing};
use crate::llm::{Api, EndpointSpec};

const GENERATE: &str = "Generate (--generate)";

/// The flags of `--generate`; `--task-model` itself is [`super::run::RunArgs`]'s.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Call the task models (--task-model, --task-model-command) with each candidate as a prompt
    /// template rendered per example, and score their answers (docs/generate.md).
    #[arg(help_heading = GENERATE, long)]
    pub generate: bool,

    /// With --generate: a command that answers instead of an API: {"candidate_id", "prompt",
    /// "messages", "sampling"} as JSON on stdin, the answer on stdout. One string, split by
    /// shell-word rules (no shell runs).
    #[arg(help_heading = GENERATE, long, value_name = "CMD")]
    pub task_model_command: Option<String>,

    /// Working directory of --task-model-command (from evalctl.toml: the file's directory
    /// unless the file names another).
    #[arg(help_heading = GENERATE, long, value_name = "DIR")]
    pub task_model_cwd: Option<PathBuf>,

    /// Which API --task-model speaks: chat (chat completions) or completions (base models)
    /// [default: chat].
    #[arg(help_heading = GENERATE, long, value_enum, value_name = "API")]
    pub task_api: Option<ApiArg>,

    /// Base URL of the task models' API (default: OPENAI_BASE_URL for openai, else the
    /// provider's).
    #[arg(help_heading = GENERATE, long, value_name = "URL")]
    pub task_base_url: Option<String>,

    /// Name of the environment variable holding the task models' API key (default
    /// <PROVIDER>_API_KEY).
    #[arg(help_heading = GENERATE, long, value_name = "NAME")]
    pub task_api_key_env: Option<String>,

    /// Task model sampling temperature [default: 0].
    #[arg(help_heading = GENERATE, long, value_name = "T", allow_negative_numbers = true)]
    pub task_temperature: Option<f64>,

    /// Task model completion token limit.
    #[arg(help_heading = GENERATE, long, value_name = "N", allow_negative_numbers = true,
          value_parser = parse_at_least::<u32, 1>)]
    pub task_max_tokens: Option<u32>,

    /// A model's price, a task model's or the judge's: MODEL=IN,OUT in USD per million input
    /// and output tokens (e.g. openai/gpt-4o-mini=0.15,0.60); the summary shows the cost.
    /// Repeatable; replaces the [prices] table of evalctl.toml.
    #[arg(help_heading = GENERATE, long, value_name = "MODEL=IN,OUT", value_parser = parse_price)]
    pub price: Vec<(String, Price)>,

    /// Stop dispatching calls once the cost of the task models' and the judge's calls (spent,
    /// plus the calls in flight estimated) would pass USD; what finished is kept and --resume
    /// continues. Needs --generate or --judge-model, and a price for every model they call.
    /// Exits 5 when it stops the run.
    #[arg(help_heading = GENERATE, long, value_name = "USD", allow_negative_numbers = true,
          value_parser = parse_max_cost)]
    pub max_cost: Option<f64>,
}

/// `--max-cost USD`: a finite amount above zero.
fn parse_max_cost(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|amount| amount.is_finite() && *amount > 0.0)
        .ok_or_else(|| "must be an amount in USD above 0".to_string())
}

impl GenerateArgs {
    /// What `--generate` runs with the task models `task_models`, or `None` without
    /// `--generate` (where a flag of it is a usage error, and so are several task models); and
    /// the run's prices and budget, whose models (the task models, and `judge_model` when the
    /// LLM judge scores) must each have a price under `--max-cost`.
    pub fn into_spec(
        self,
        task_models: &[String],
        judge_model: Option<&str>,
    ) -> anyhow::Result<(Option<GenerateSpec>, Pricing)> {
        let pricing = Pricing {
            prices: self.price.into_iter().collect(),
            max_cost: self.max_cost,
        };
        if !self.generate {
            let given = [
                (self.task_model_command.is_some(), "--task-model-command"),
                (self.task_model_cwd.is_some(), "--task-model-cwd"),
                (self.task_api.is_some(), "--task-api"),
                (self.task_base_url.is_some(), "--task-base-url"),
                (self.task_api_key_env.is_some(), "--task-api-key-env"),
                (self.task_temperature.is_some(), "--task-temperature"),
                (self.task_max_tokens.is_some(), "--task-max-tokens"),
            ];
            if let Some((_, flag)) = given.iter().find(|(given, _)| *given) {
                return Err(bad_flag(flag, "only applies to --generate"));
            }
            if pricing.max_cost.is_some() && judge_model.is_none() {
                return Err(bad_flag(
                    "--max-cost",
                    "only applies to --generate or --judge-model (the task models' and the \
                     judge's calls are what it counts)",
                ));
            }
            if task_models.len() > 1 {
                return Err(bad_flag(
                    "--task-model",
                    "without --generate, one task model is metadata for the evaluator; pass \
                     --generate to have several task models answer",
                ));
            }
            check_priced(&pricing, &[], false, judge_model)?;
            return Ok((None, pricing));
        }
        let temperature = self.task_temperature.unwrap_or(0.0);
        if !temperature.is_finite() || temperature < 0.0 {
            return Err(bad_flag(
                "--task-temperature",
                format!("{temperature}: must be a finite number >= 0"),
            ));
        }
        let api = match self.task_api.unwrap_or(ApiArg::Chat) {
            ApiArg::Chat => Api::Chat,
            ApiArg::Completions => Api::Completions,
        };
        let mut models = Vec::new();
        for (index, model) in task_models.iter().enumerate() {
            if task_models[..index].contains(model) {
                return Err(bad_flag("--task-model", format!("{model} is given twice")));
            }
            models.push(ModelSpec::Api {
                endpoint: EndpointSpec {
                    model: model.clone(),
                    base_url: self.task_base_url.clone(),
                    api_key_env: self.task_api_key_env.clone(),
                },
                api,
            });
        }
        match (&self.task_model_command, self.task_model_cwd) {
            (Some(command), cwd) => {
                let argv = model_command_words("--task-model-command", command)?;
                models.push(ModelSpec::Command(command_spec(
                    argv,
                    cwd,
                    "--task-model-cwd",
                )?));
            }
            (None, Some(_)) => {
                return Err(bad_flag(
                    "--task-model-cwd",
                    "only applies to --task-model-command",
                ))
            }
            (None, None) => {}
        }
        check_priced(
            &pricing,
            task_models,
            self.task_model_command.is_some(),
            judge_model,
        )?;
        if models.is_empty() {
            return Err(bad_flag(
                "--generate",
                "no task model: pass --task-model PROVIDER/MODEL (repeatable) or \
                 --task-model-command CMD, or set run.task_model in evalctl.toml",
            ));
        }
        let spec = GenerateSpec {
            models,
            sampling: Sampling {
                temperature,
                max_tokens: self.task_max_tokens,
                stop: Vec::new(),
            },
        };
        Ok((Some(spec), pricing))
    }
}

/// Under `--max-cost`, every model the run calls has a price: the API `task_models`, the
/// `judge_model`; a `--task-model-command` (`command`) reports no tokens, so it cannot have one.
fn check_priced(
    pricing: &Pricing,
    task_models: &[String],
    command: bool,
    judge_model: Option<&str>,
) -> anyhow::Result<()> {
    if pricing.max_cost.is_none() {
        return Ok(());
    }
    let priced = |model: &str| pricing.prices.contains_key(model);
    let unpriced: Vec<String> = task_models
        .iter()
        .filter(|model| !priced(model))
        .cloned()
        .chain(command.then(|| "--task-model-command".to_string()))
        .chain(
            judge_model
                .filter(|model| !priced(model))
                .map(|model| format!("{model} (--judge-model)")),
        )
        .collect();
    if unpriced.is_empty() {
        return Ok(());
    }
    let command_note = if command {
        " (a --task-model-command reports no tokens, so it cannot be held to a budget)"
    } else {
        ""
    };
    Err(bad_flag(
        "--max-cost",
        format!(
            "no price for {}: give every model the run calls one with --price MODEL=IN,OUT (USD \
             per million input and output tokens) or a [prices] table in evalctl.toml{command_note}",
            unpriced.join(", ")
        ),
    ))
}
