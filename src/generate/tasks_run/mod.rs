//! The generation of `evalctl tasks run` (its command is `commands::tasks::run`): a task suite
//! against a [`Model`], at most `-j` completions at once (with retries and timeouts), each
//! rendered prompt answered by the model or the cache; the command then post-processes and
//! scores the outputs through exactly the code of `tasks score`. `--save-outputs` is the run's
//! journal (`--resume`, see [`journal`]), and `--cache` answers prompts the model was already
//! given (by the key of [`completion_keys`](super::model::completion_keys)).

pub mod journal;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::model::{Model, ModelSpec, Prompt, Sampling};
use crate::in_flight::InFlight;
use crate::interrupt::{interruption_of_kind, Interruption};
use crate::llm::reply::Unanswered;
use crate::llm::{Completion, Usage};
use crate::protocol::CallError;
use crate::runner::key::KeyedFiles;
use crate::runner::GRACE;
use crate::store::{Cache, CallKey};
use crate::tasks::score::ModelOutput;
use crate::tasks::spec::Task;
use crate::tasks::CodeExecSettings;
use journal::{OutputLine, SavedCompletion};

/// `evalctl tasks run`.
#[derive(Debug, Clone)]
pub struct RunTasksConfig {
    /// The tasks JSONL file.
    pub file: PathBuf,
    /// The model.
    pub model: ModelSpec,
    /// Temperature, token limit, stop sequences.
    pub sampling: Sampling,
    /// Completions in flight at once.
    pub concurrency: usize,
    /// The time limit of one completion.
    pub timeout: Duration,
    /// Extra attempts for transport failures, HTTP 429 and 5xx.
    pub retries: u32,
    /// Only the first N valid tasks.
    pub limit: Option<usize>,
    /// Where to write `{"task_id", "output"}` lines, as `tasks score --outputs` reads them.
    pub save_outputs: Option<PathBuf>,
    /// Where to write one score line per task, as `tasks score --output` does.
    pub output: Option<PathBuf>,
    /// Take up the run whose journal is `save_outputs`: tasks with a saved completion are not
    /// generated again.
    pub resume: bool,
    /// `--cache` (with `--cache-dir`): the directory of the cache completions are kept in.
    pub cache_dir: Option<PathBuf>,
    /// Run the valid tasks even when others are invalid.
    pub allow_bad_tasks: bool,
    /// How `code_exec` assertion scripts run.
    pub code: CodeExecSettings,
}

/// A task whose completion failed, after its retries.
#[derive(Debug, Clone, Serialize)]
pub struct GenerationFailure {
    /// The task.
    pub task_id: String,
    /// Why.
    pub error: CallError,
    /// Attempts made.
    pub attempts: u32,
    /// The task's position, for file order.
    #[serde(skip)]
    index: usize,
}

/// What generation did.
#[derive(Debug, Clone, Serialize)]
pub struct Generation {
    /// The model (`PROVIDER/MODEL` or `command 'CMD'`).
    pub model: String,
    /// Tasks sent to the model.
    pub tasks: usize,
    /// Completions received.
    pub completed: usize,
    /// Tasks without a completion (they score 0).
    pub failed: Vec<GenerationFailure>,
    /// Completions taken from the journal by `--resume`.
    #[serde(skip_serializing_if = "is_zero")]
    pub resumed: usize,
    /// Completions answered by the cache.
    #[serde(skip_serializing_if = "is_zero")]
    pub cached: usize,
    /// Tokens used, totalled (resumed completions count what they used then; cached ones are in
    /// `usage_saved`).
    pub usage: Usage,
    /// Tokens of the completions the cache answered: spent when they were stored, not now.
    #[serde(skip_serializing_if = "Usage::is_zero")]
    pub usage_saved: Usage,
    /// Completions whose reply reported no token usage (some servers and proxies leave it out):
    /// their tokens are unknown, not the zero `usage` counts them as.
    #[serde(skip_serializing_if = "is_zero")]
    pub usage_missing: usize,
    /// Tasks not sent to the model because completions could no longer be saved
    /// (`--save-outputs` could not be written): the scores cover the others only.
    #[serde(skip_serializing_if = "is_zero")]
    pub not_run: usize,
    /// The tasks whose completion the model cut at its token limit, in the file's order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cut_short: Vec<String>,
    /// Wall time of generation, in milliseconds.
    pub elapsed_ms: f64,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// What every completion of the run shares.
pub struct Work {
    pub model: Arc<Model>,
    pub tasks: Arc<[Task]>,
    /// Each task's rendered prompt.
    pub prompts: Vec<String>,
    /// Each task's completion key.
    pub keys: Vec<CallKey>,
    /// The files the keys hash (the model command's script), as they were.
    pub keyed_files: KeyedFiles,
    pub cache: Option<Cache>,
}

/// What generation produced.
pub struct Generated {
    pub outputs: Vec<ModelOutput>,
    pub failed: Vec<GenerationFailure>,
    pub resumed: usize,
    pub cached: usize,
    pub usage: Usage,
    pub usage_saved: Usage,
    /// Completions (spent, not cached) whose reply reported no token usage.
    pub usage_missing: usize,
    /// The tasks (their indices) whose completion the model cut at its token limit.
    pub cut_short: Vec<usize>,
    pub interrupted: bool,
    pub elapsed: Duration,
    /// The first failed write of `--save-outputs` (writing stops there, and no task starts).
    pub write_error: Option<anyhow::Error>,
    /// Tasks not started because their completions could not be saved.
    pub not_started: usize,
}

/// One task's completion, after its retries.
struct Finished {
    index: usize,
    completion: Result<Completion, Unanswered>,
    attempts: u32,
    cached: bool,
}

/// Generate the completion of every task `resumed` does not hold, at most `-j` at once, each from
/// the cache when it has it; `save` gets each new output as it arrives. Ctrl-C stops starting
/// completions and gives those in flight [`GRACE`] to finish (`on_stopping` is told how many
/// there are), as `run` does; a second Ctrl-C, SIGTERM, SIGHUP or the end of the grace aborts
/// them (killing model commands).
pub async fn generate(
    work: Arc<Work>,
    resumed: Vec<SavedCompletion>,
    config: &RunTasksConfig,
    mut save: impl FnMut(&OutputLine<'_>) -> anyhow::Result<()>,
    on_stopping: impl FnOnce(usize),
) -> Generated {
    let started = Instant::now();
    let sampling = Arc::new(config.sampling.clone());
    let mut generated = Generated {
        outputs: Vec::with_capacity(work.tasks.len()),
        failed: Vec::new(),
        resumed: resumed.len(),
        cached: 0,
        usage: Usage::default(),
        usage_saved: Usage::default(),
        usage_missing: 0,
        cut_short: Vec::new(),
        interrupted: false,
        elapsed: Duration::ZERO,
        write_error: None,
        not_started: 0,
    };
    let mut done = vec![false; work.tasks.len()];
    for saved in resumed {
        done[saved.index] = true;
        generated.usage.add(saved.usage);
        generated.usage_missing += usize::from(saved.usage_missing);
        if saved.cut_short {
            generated.cut_short.push(saved.index);
        }
        generated.outputs.push(ModelOutput {
            line: generated.outputs.len() + 1,
            task_id: work.tasks[saved.index].task_id.clone(),
            output: saved.output,
        });
    }
    let retries = config.retries;
    let mut pending = (0..work.tasks.len())
        .filter(|&index| !done[index])
        .map(|index| {
            let (work, sampling) = (Arc::clone(&work), Arc::clone(&sampling));
            async move { complete(&work, index, &sampling, retries).await }
        });
    let mut in_flight = InFlight::new(config.concurrency);
    let mut on_stopping = Some(on_stopping);
    let signal = interruption_of_kind();
    tokio::pin!(signal);
    loop {
        // Once a completion cannot be saved, no task starts: its completion would be lost.
        if generated.write_error.is_none() {
            in_flight.fill(&mut pending);
        }
        if in_flight.is_empty() {
            break;
        }
        tokio::select! {
            biased;
            kind = &mut signal => {
                generated.interrupted = true;
                let on_finished = |finished| record(&mut generated, &work, finished, &mut save);
                match (kind, on_stopping.take()) {
                    (Interruption::CtrlC, Some(tell)) => {
                        tell(in_flight.len());
                        in_flight
                            .finish_within(GRACE, interruption_of_kind(), on_finished)
                            .await;
                    }
                    _ => {
                        in_flight.stop_handing_on(on_finished).await;
                    }
                }
                break;
            }
            Some(finished) = in_flight.next() => record(&mut generated, &work, finished, &mut save),
        }
    }
    if !generated.interrupted {
        generated.not_started = pending.count();
    }
    generated.elapsed = started.elapsed();
    generated.failed.sort_by_key(|failure| failure.index);
    generated
}

/// Task `index`'s completion: from the cache, else from the model with retries (a completion the
/// model gave is then cached).
async fn complete(work: &Work, index: usize, sampling: &Sampling, retries: u32) -> Finished {
    let key = &work.keys[index];
    if let Some(hit) = work
        .cache
        .as_ref()
        .and_then(|cache| cache.get_completion(key))
    {
        return Finished {
            index,
            completion: Ok(Completion::kept(hit.text, hit.tokens, hit.cut_short)),
            attempts: 0,
            cached: true,
        };
    }
    let task = &work.tasks[index];
    let text = &work.prompts[index];
    let prompt = Prompt {
        text,
        messages: None,
        command_input: serde_json::json!({"task_id": task.task_id, "prompt": text, "sampling": sampling}),
    };
    let (completion, attempts) = work
        .model
        .complete_and_keep(
            &prompt,
            sampling,
            retries,
            work.cache
                .as_ref()
                .map(|cache| (cache, key, &work.keyed_files)),
        )
        .await;
    Finished {
        index,
        completion,
        attempts,
        cached: false,
    }
}

fn record(
    generated: &mut Generated,
    work: &Work,
    finished: Finished,
    save: &mut impl FnMut(&OutputLine<'_>) -> anyhow::Result<()>,
) {
    let task_id = &work.tasks[finished.index].task_id;
    match finished.completion {
        Ok(completion) => {
            if finished.cached {
                generated.cached += 1;
                generated.usage_saved.add(completion.usage);
            } else {
                generated.usage.add(completion.usage);
                generated.usage_missing += usize::from(completion.usage_missing);
            }
            if completion.cut_short {
                generated.cut_short.push(finished.index);
            }
            if generated.write_error.is_none() {
                let line = OutputLine {
                    task_id,
                    output: &completion.text,
                    key: work.keys[finished.index].to_string(),
                    usage: completion.usage,
                    usage_missing: completion.usage_missing && !finished.cached,
                    cut_short: completion.cut_short,
                };
                generated.write_error = save(&line).err();
            }
            generated.outputs.push(ModelOutput {
                line: generated.outputs.len() + 1,
                task_id: task_id.clone(),
                output: completion.text,
            });
        }
        Err(Unanswered { error, usage }) => {
            // A reply that gave no answer (a refusal) spent its tokens too.
            generated.usage.add(usage);
            generated.failed.push(GenerationFailure {
                task_id: task_id.clone(),
                error,
                attempts: finished.attempts,
                index: finished.index,
            })
        }
    }
}
