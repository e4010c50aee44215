//! `tasks run`'s journal: each `--save-outputs` line carries the completion's key (a SHA-256 of
//! the model's identity, the sampling and the rendered prompt, see
//! [`completion_keys`](crate::generate::model::completion_keys)) and its token usage, so
//! `--resume` can take up an interrupted run where it stopped. A changed model command script,
//! model, API, base URL, temperature, token limit, stop sequence or prompt changes the key.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{invalid, Problem};
use crate::input::Source;
use crate::llm::Usage;
use crate::runner::journal::{mend_tail, tail_of, Tail};
use crate::runner::resume::Resumed;
use crate::store::CallKey;
use crate::tasks::score::outputs_in;

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
    /// The API's reply reported no token usage: `usage` is unknown, not zero.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub usage_missing: bool,
    /// The model stopped at its token limit: the completion may be cut short.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
}

/// How every [`OutputLine`] starts: `task_id` is the first member it serializes.
const OUTPUT_LINE_START: &[u8] = b"{\"task_id\":\"";

/// A completion an earlier run saved.
pub struct SavedCompletion {
    /// The task's position in this run.
    pub index: usize,
    /// The completion.
    pub output: String,
    /// Its token usage.
    pub usage: Usage,
    /// Its reply reported no token usage.
    pub usage_missing: bool,
    /// The model stopped at its token limit.
    pub cut_short: bool,
}

/// Check, before any call, that the `--save-outputs` file at `path` holds no saved output when
/// the run does not `--resume`: appending a second run's outputs would give its tasks two outputs
/// each (which neither `--resume` nor `tasks score --outputs` accepts), and regenerate what was
/// paid for.
pub fn check_unused(path: &Path) -> anyhow::Result<()> {
    // A device or a pipe (`/dev/null`, `/dev/stderr`) holds nothing to resume, and is not read.
    if !std::fs::metadata(path).is_ok_and(|file| file.is_file()) {
        return Ok(());
    }
    let bytes = std::fs::read(path).unwrap_or_default();
    let lines: Vec<&[u8]> = bytes
        .split(|&byte| byte == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .collect();
    let is_saved_output = |line: &&&[u8]| {
        serde_json::from_slice::<Value>(line)
            .is_ok_and(|value| value.get("task_id").is_some() && value.get("output").is_some())
    };
    let held = lines.iter().filter(is_saved_output).count();
    if held == 0 && !lines.is_empty() {
        return Err(invalid(vec![Problem::new(
            path.display().to_string(),
            "is not a --save-outputs journal (no line is a saved output): name another \
             --save-outputs file",
        )]));
    }
    match held {
        0 => Ok(()),
        held => Err(invalid(vec![Problem::new(
            path.display().to_string(),
            format!(
                "already holds {held} saved output{}: pass --resume to take up the run that saved \
                 them, or name another --save-outputs file",
                if held == 1 { "" } else { "s" }
            ),
        )])),
    }
}

/// Read the `--save-outputs` file at `path` for `--resume`: take each line whose task is one of
/// `task_ids` and whose key is that task's key in `keys`, then cut a torn last line off (a file
/// with a problem is left as it was). A line
/// of a task of this run under another key (another model, sampling or prompt) is bad input:
/// its task would then have two outputs in the file. Lines of other tasks are counted as foreign.
pub fn resume_from(
    path: &Path,
    task_ids: &[&str],
    keys: &[CallKey],
) -> anyhow::Result<(Vec<SavedCompletion>, Resumed)> {
    let mut resumed = Resumed::default();
    if !path.exists() {
        return Ok((Vec::new(), resumed));
    }
    let tail = tail_of(path, OUTPUT_LINE_START).map_err(|problem| invalid(vec![problem]))?;
    let source = Source::File(path.to_path_buf());
    let mut bytes = source.read().map_err(|problem| invalid(vec![problem]))?;
    if let Tail::Torn { keep, .. } = tail {
        bytes.truncate(keep as usize);
    }
    let (display, lines) = outputs_in(source.display(), &bytes, |record| {
        let key = record.get("key").and_then(Value::as_str);
        let usage = match record.get("usage").map(Usage::deserialize) {
            None => Usage::default(),
            Some(Ok(usage)) => usage,
            Some(Err(err)) => return Err(("usage", err.to_string())),
        };
        let marked = |name| record.get(name) == Some(&Value::Bool(true));
        let (usage_missing, cut_short) = (marked("usage_missing"), marked("cut_short"));
        Ok((
            key.and_then(CallKey::parse),
            usage,
            usage_missing,
            cut_short,
        ))
    })?;
    let position: HashMap<&str, usize> = task_ids
        .iter()
        .enumerate()
        .map(|(index, &task_id)| (task_id, index))
        .collect();
    let mut saved = Vec::new();
    let mut problems = Vec::new();
    for (output, (key, usage, usage_missing, cut_short)) in lines {
        let Some(&index) = position.get(output.task_id.as_str()) else {
            resumed.other_tasks += 1;
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
            usage_missing,
            cut_short,
        });
    }
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    resumed.torn = mend_tail(path, tail).map_err(|problem| invalid(vec![problem]))?;
    resumed.done = saved.len();
    Ok((saved, resumed))
}
