//! `tasks run`'s journal and cache: each `--save-outputs` line carries the completion's key (a
//! SHA-256 of the model's identity, the sampling and the rendered prompt) and its token usage, so
//! `--resume` can take up an interrupted run where it stopped, and `--cache` can answer a prompt
//! the same model was already given. A changed model command script, model, API, base URL,
//! temperature, token limit, stop sequence or prompt changes the key.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::model::{ModelSpec, Sampling};
use crate::digest::Fields;
use crate::error::{invalid, Problem};
use crate::input::Source;
use crate::llm::{Api, Usage};
use crate::runner::journal::repair_torn_tail;
use crate::runner::key::add_command_identity;
use crate::runner::resume::Resumed;
use crate::store::CallKey;
use crate::tasks::score::read_outputs_with;

/// The key of each prompt's completion by `model` under `sampling`, in order. A model command
/// script that cannot be read is bad input naming it.
pub fn completion_keys(
    model: &ModelSpec,
    sampling: &Sampling,
    prompts: &[String],
) -> anyhow::Result<Vec<CallKey>> {
    let configuration = completion_configuration(model, sampling)?;
    Ok(prompts
        .iter()
        .map(|prompt| completion_key(&configuration, prompt.as_bytes()))
        .collect())
}

/// What every completion key of `model` under `sampling` shares: the model's identity (its
/// command script's contents, or its provider, model, API and base URL) and the sampling.
pub fn completion_configuration(model: &ModelSpec, sampling: &Sampling) -> anyhow::Result<CallKey> {
    let mut fields = Fields::new("evalctl completion key v1");
    match model {
        ModelSpec::Api {
            model,
            api,
            base_url,
            api_key_env: _, // which variable holds the key does not change a completion
        } => {
            let api = match api {
                Api::Chat => "chat",
                Api::Completions => "completions",
            };
            fields
                .add(b'K', b"api")
                .add(b'J', model.as_bytes())
                .add(b'G', api.as_bytes())
                .add_optional(b'B', base_url.as_deref().map(str::as_bytes));
        }
        ModelSpec::Command(command) => add_command_identity(&mut fields, command)?,
    }
    fields.add(b'X', &sampling.temperature.to_le_bytes());
    let max_tokens = sampling.max_tokens.map(u32::to_le_bytes);
    fields.add_optional(b'N', max_tokens.as_ref().map(|n| &n[..]));
    for stop in &sampling.stop {
        fields.add(b'S', stop.as_bytes());
    }
    Ok(fields.key())
}

/// The key of the completion of `prompt` (its exact bytes) under `configuration`.
pub fn completion_key(configuration: &CallKey, prompt: &[u8]) -> CallKey {
    let mut fields = Fields::new("evalctl completion");
    fields.add(b'C', configuration.as_bytes()).add(b'P', prompt);
    fields.key()
}

/// A `--save-outputs` line: what `tasks score --outputs` reads (`task_id`, `output`), plus the
/// completion's key and token usage for `--resume`.
#[derive(Serialize)]
pub struct OutputLine<'a> {
    /// The task.
    pub task_id: &'a str,
    /// The completion.
    pub output: &'a str,
    /// The completion's key, as 64 hex digits.
    pub key: String,
    /// Its token usage.
    pub usage: Usage,
}

/// A completion an earlier run saved.
pub struct SavedCompletion {
    /// The task's position in this run.
    pub index: usize,
    /// The completion.
    pub output: String,
    /// Its token usage.
    pub usage: Usage,
}

/// Read the `--save-outputs` file at `path` for `--resume`: repair a torn last line, and take
/// each line whose task is one of `task_ids` and whose key is that task's key in `keys`. A line
/// of a task of this run under another key (another model, sampling or prompt) is bad input:
/// its task would then have two outputs in the file. Lines of other tasks are counted as foreign.
pub fn resume_from(
    path: &Path,
    task_ids: &[&str],
    keys: &[CallKey],
) -> anyhow::Result<(Vec<SavedCompletion>, Resumed)> {
    let torn = repair_torn_tail(path).map_err(|problem| invalid(vec![problem]))?;
    let mut resumed = Resumed {
        torn,
        ..Resumed::default()
    };
    if !path.exists() {
        return Ok((Vec::new(), resumed));
    }
    let source = Source::File(path.to_path_buf());
    let (display, lines) = read_outputs_with(&source, |record| {
        let key = record.get("key").and_then(Value::as_str);
        let usage = match record.get("usage").map(Usage::deserialize) {
            None => Usage::default(),
            Some(Ok(usage)) => usage,
            Some(Err(err)) => return Err(("usage", err.to_string())),
        };
        Ok((key.and_then(CallKey::parse), usage))
    })?;
    let position: HashMap<&str, usize> = task_ids
        .iter()
        .enumerate()
        .map(|(index, &task_id)| (task_id, index))
        .collect();
    let mut saved = Vec::new();
    let mut problems = Vec::new();
    for (output, (key, usage)) in lines {
        let Some(&index) = position.get(output.task_id.as_str()) else {
            resumed.foreign += 1;
            continue;
        };
        if key != Some(keys[index]) {
            problems.push(Problem::at_line(
                display.as_str(),
                output.line,
                format!(
                    "task {:?} was generated by another configuration (model, sampling or \
                     prompt); resume with the same flags, or save to a new --save-outputs file",
                    output.task_id
                ),
            ));
            continue;
        }
        saved.push(SavedCompletion {
            index,
            output: output.output,
            usage,
        });
    }
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    resumed.done = saved.len();
    Ok((saved, resumed))
}
