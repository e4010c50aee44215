//! Generation: a model answers rendered prompts before anything is scored.
//!
//! `run --generate`: each candidate is a prompt template; for every example a task model (an
//! OpenAI-compatible API through the one LLM client, or a command, as `tasks run` calls them)
//! answers the rendered prompt, and the evaluator scores the answer. `tasks run`: a model answers
//! each task of a suite, and the command scores the answers as `tasks score` does.
//!
//! - [`model`] is the model both ask (an API or a command) and the key of its completions;
//! - [`tasks_run`] generates a task suite's completions (journal, resume, cache);
//! - [`template`] finds and fills the `{{field}}` placeholders;
//! - [`messages`] turns a candidate and an example into the prompt text and its chat form, and
//!   finds, before any call, every example a candidate cannot be rendered for;
//! - [`Generator`] holds the task models and answers the runner's calls (with retries, and the
//!   completion cache under `--cache`), and probes each model in preflight;
//! - [`budget`] holds a run within `--max-cost` (with or without `--generate`), at the prices
//!   of `crate::llm::price`.

pub mod budget;
pub mod messages;
pub mod model;
pub mod tasks_run;
pub mod template;

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::json;

use crate::error::Fatal;
use crate::input::{ExampleSelection, Inputs, Record, Source};
use crate::llm::{Completion, EndpointFlags, Usage};
use crate::protocol::{CallError, ErrorKind, PREFLIGHT_CANDIDATE};
use crate::record::GenerationInfo;
use crate::runner::journal::JournalReader;
use crate::runner::key::{DeclaredInputs, KeyContext, KeyedFiles};
use crate::runner::{plan_generation, Generate, Generated, GenerationCall, PlannedCall};
use crate::store::Cache;
use crate::store::CallKey;
use messages::Rendered;
use model::{completion_configuration, completion_key, Model, ModelSpec, Prompt, Sampling};

/// The task model's flags, as endpoint messages name them.
pub const TASK_MODEL_FLAGS: EndpointFlags = EndpointFlags {
    model: "--task-model",
    base_url: "--task-base-url",
    api_key_env: "--task-api-key-env",
};

/// What `--generate` runs, as the flags name it.
#[derive(Debug, Clone)]
pub struct GenerateSpec {
    /// `--task-model` (each `PROVIDER/MODEL` with the `--task-*` API flags) and
    /// `--task-model-command`, in the order given.
    pub models: Vec<ModelSpec>,
    /// `--task-temperature`, `--task-max-tokens`.
    pub sampling: Sampling,
}

/// One task model, ready.
struct TaskModel {
    model: Model,
    /// It sees the candidate's id with each prompt (a command), so its answers are keyed by it.
    sees_ids: bool,
    label: String,
    /// What every completion key of this model shares (its identity and the sampling).
    configuration: CallKey,
    /// The files that identity hashes (a command's script), as they were.
    keyed_files: KeyedFiles,
}

/// The task models of a run, answering its calls.
pub struct Generator {
    models: Vec<TaskModel>,
    sampling: Sampling,
    retries: u32,
    /// `--cache`: answers a prompt the same model was already given under the same sampling.
    cache: Option<Cache>,
    /// `--resume`: the answers the results file holds for calls made again (the evaluator
    /// failed on them), by call key: they are scored again, not generated again.
    recorded: HashMap<CallKey, (String, GenerationInfo)>,
}

impl Generator {
    /// Build every task model of `spec` (bad input naming the flag on a problem); with
    /// `cache_dir`, answers are cached there.
    pub fn build(
        spec: &GenerateSpec,
        timeout: Duration,
        concurrency: usize,
        retries: u32,
        cache_dir: Option<&Path>,
        declared: &DeclaredInputs,
    ) -> anyhow::Result<Generator> {
        let models = spec
            .models
            .iter()
            .map(|model_spec| {
                let model = Model::build(model_spec, TASK_MODEL_FLAGS, timeout, concurrency)?;
                let (configuration, keyed_files) =
                    completion_configuration(model_spec, &spec.sampling, declared)?;
                Ok(TaskModel {
                    sees_ids: model_spec.seen_id("").is_some(),
                    label: model.label(),
                    configuration,
                    keyed_files,
                    model,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Generator {
            models,
            sampling: spec.sampling.clone(),
            retries,
            cache: cache_dir.map(Cache::open).transpose()?,
            recorded: HashMap::new(),
        })
    }

    /// Take the answers of the results file at `path` (`--resume`): a call made again scores
    /// the answer recorded for it. Lines that cannot be read are left to the resume itself,
    /// which reports them.
    pub fn recall(&mut self, path: &Path) {
        let Ok(lines) = JournalReader::open(&Source::File(path.to_path_buf())) else {
            return;
        };
        // Only a failed call is made again (a successful one is done).
        for line in lines.flatten().filter(|line| line.record.error.is_some()) {
            let record = line.record;
            let key = record.key.as_deref().and_then(CallKey::parse);
            if let (Some(key), Some(output), Some(info)) = (key, record.output, record.generation) {
                self.recorded.insert(key, (output, info));
            }
        }
    }

    /// The plan of a run of `inputs` (the examples `selection` picks in each split, `repeat` times)
    /// under `keys`, and the key context of the whole run: every key joins the task models and
    /// sampling, and each call's key its own task model.
    pub fn plan(
        &self,
        keys: &KeyContext,
        inputs: &Inputs,
        selection: &ExampleSelection,
        repeat: Option<u32>,
    ) -> (KeyContext, Vec<PlannedCall>) {
        let all: Vec<u8> = self
            .models
            .iter()
            .flat_map(|model| model.configuration.as_bytes().to_vec())
            .collect();
        let keys = keys.joined(b'G', &all);
        let per_model: Vec<KeyContext> = self
            .models
            .iter()
            .map(|model| keys.joined(b'M', model.configuration.as_bytes()))
            .collect();
        let plan = plan_generation(inputs, selection, repeat, &per_model);
        (keys, plan)
    }

    /// The cache of the task models' completions, if `--cache` is on.
    pub fn cache(&self) -> Option<&Cache> {
        self.cache.as_ref()
    }

    /// The files each task model's completion keys hash (a command's script), as they were.
    pub fn keyed_files(&self) -> impl Iterator<Item = &KeyedFiles> {
        self.models.iter().map(|model| &model.keyed_files)
    }

    /// The labels of the task models, in order.
    pub fn labels(&self) -> Vec<String> {
        self.models
            .iter()
            .map(|model| model.label.clone())
            .collect()
    }

    /// Preflight of every task model: what needs no call (a key for a remote API, a command
    /// that can start), then, when `probe`, one probe completion each. A failure is a
    /// [`Fatal::Preflight`] naming the model.
    pub async fn preflight(&self, probe: bool) -> anyhow::Result<()> {
        let fail = |model: &TaskModel, cause: String| -> anyhow::Error {
            Fatal::Preflight(format!(
                "task model preflight failed for {}: {cause}",
                model.model.describe()
            ))
            .into()
        };
        for model in &self.models {
            model.model.check_setup().map_err(|reason| match probe {
                true => fail(model, reason),
                false => fail(
                    model,
                    format!("{reason} (--skip-preflight skips the probe call, not this check)"),
                ),
            })?;
        }
        if !probe {
            return Ok(());
        }
        // Each probe is a completion like any other: under `--cache`, one the model gave this
        // configuration before answers it, and a run answered wholly from the cache pays for none.
        for model in &self.models {
            let rendered = Rendered::probe(PREFLIGHT_CANDIDATE);
            let (completion, _) = self
                .complete(model, PREFLIGHT_CANDIDATE, &rendered, None)
                .await;
            if let Err(error) = completion {
                return Err(fail(
                    model,
                    format!(
                        "the probe completion (prompt {PREFLIGHT_CANDIDATE:?}) failed: {}",
                        error.message
                    ),
                ));
            }
        }
        Ok(())
    }

    /// What the model is asked for `rendered`: the command reads
    /// `{"candidate_id", "prompt", "messages", "sampling"}`.
    fn prompt<'a>(&self, candidate_id: &str, rendered: &'a Rendered) -> Prompt<'a> {
        Prompt {
            text: &rendered.text,
            messages: Some(&rendered.messages),
            command_input: json!({
                "candidate_id": candidate_id,
                "prompt": rendered.text,
                "messages": rendered.messages,
                "sampling": self.sampling,
            }),
        }
    }

    /// The answer of `model` to `rendered` (repeat `repeat`): from the cache, else from the
    /// model with retries (an answer it gave is then cached).
    async fn complete(
        &self,
        model: &TaskModel,
        candidate_id: &str,
        rendered: &Rendered,
        repeat: Option<u32>,
    ) -> (Result<Completion, CallError>, GenerationInfo) {
        let key = self.cache.as_ref().map(|_| {
            let mut prompt = serde_json::to_vec(&rendered.messages).unwrap_or_default();
            prompt.extend_from_slice(rendered.text.as_bytes());
            if let Some(repeat) = repeat {
                prompt.extend_from_slice(&repeat.to_le_bytes());
            }
            let seen_id = model.sees_ids.then_some(candidate_id);
            completion_key(&model.configuration, &prompt, seen_id)
        });
        if let Some(hit) = self
            .cache
            .as_ref()
            .zip(key.as_ref())
            .and_then(|(cache, key)| cache.get_completion(key))
        {
            let completion = Completion::kept(hit.text, hit.tokens, hit.cut_short);
            let info = GenerationInfo {
                usage: completion.usage,
                latency_ms: 0.0,
                attempts: 0,
                cached: true,
                recalled: false,
                usage_missing: false,
                cut_short: completion.cut_short,
            };
            return (Ok(completion), info);
        }
        let started = Instant::now();
        let prompt = self.prompt(candidate_id, rendered);
        let keep = (self.cache.as_ref().zip(key.as_ref()))
            .map(|(cache, key)| (cache, key, &model.keyed_files));
        let (completion, attempts) = model
            .model
            .complete_and_keep(&prompt, &self.sampling, self.retries, keep)
            .await;
        let latency_ms = crate::text::milliseconds(started.elapsed());
        let info = GenerationInfo {
            // A reply that gave no answer (a refusal) spent its tokens too.
            usage: match &completion {
                Ok(completion) => completion.usage,
                Err(unanswered) => unanswered.usage,
            },
            latency_ms,
            attempts,
            cached: false,
            recalled: false,
            usage_missing: completion.as_ref().is_ok_and(|c| c.usage_missing),
            cut_short: completion.as_ref().is_ok_and(|c| c.cut_short),
        };
        (completion.map_err(|unanswered| unanswered.error), info)
    }
}

#[async_trait]
impl Generate for Generator {
    fn label(&self, index: usize) -> &str {
        &self.models[index].label
    }

    async fn answer(&self, call: GenerationCall<'_>) -> Generated {
        let not_called = GenerationInfo {
            usage: Usage::default(),
            latency_ms: 0.0,
            attempts: 0,
            cached: false,
            recalled: false,
            usage_missing: false,
            cut_short: false,
        };
        let rendered = match Rendered::of(
            &call.candidate.text,
            call.example.map(|record| &record.value),
        ) {
            Ok(rendered) => rendered,
            // Preflight found every missing field already: this is for a call it did not see.
            Err(field) => {
                return Generated {
                    prompt: String::new(),
                    answer: Err(CallError::new(
                        ErrorKind::InvalidOutput,
                        format!("the example has no field `{field}` for the candidate's prompt"),
                    )),
                    info: not_called,
                }
            }
        };
        if let Some((output, info)) = self.recorded.get(call.key) {
            return Generated {
                prompt: rendered.text,
                answer: Ok(output.clone()),
                info: GenerationInfo {
                    recalled: true,
                    ..info.clone()
                },
            };
        }
        let model = &self.models[call.task_model];
        let (completion, info) = self
            .complete(model, &call.candidate.id, &rendered, call.repeat)
            .await;
        Generated {
            prompt: rendered.text,
            answer: completion.map(|completion| completion.text),
            info,
        }
    }
}

/// Check, before any call, that every candidate renders for every example the run uses (those
/// `selection` picks in each split; `splits` names each split's file as given): every missing
/// field is reported at once (exit 2).
pub fn check_templates(
    inputs: &Inputs,
    splits: [Option<&std::path::Path>; 2],
    selection: &ExampleSelection,
) -> anyhow::Result<()> {
    let names: Vec<String> = splits
        .iter()
        .map(|path| path.map_or_else(String::new, |path| path.display().to_string()))
        .collect();
    let checked: Vec<(&str, Vec<&Record>)> = names
        .iter()
        .zip([&inputs.dataset, &inputs.valset])
        .filter_map(|(name, records)| {
            let used = selection.used(records.as_deref()?);
            Some((name.as_str(), used.map(|(_, record)| record).collect()))
        })
        .collect();
    let problems = messages::missing_fields(&inputs.candidates, &checked);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(crate::error::invalid(problems))
    }
}
