//! The three `evalctl tasks` commands: load and validate, do the work, print, pick the exit code.

use std::path::Path;

use super::report;
use super::score::{read_outputs, score_all};
use super::validate::{load_tasks, TaskFile};
use super::{RenderConfig, ScoreConfig, ValidateConfig};
use crate::error::bad_input;
use crate::exit::Exit;
use crate::report::print_stdout;

/// `evalctl tasks validate`: report every error on stdout, a tally on stderr; exit 2 on any
/// error unless `--allow-bad-tasks`.
pub fn validate(config: &ValidateConfig) -> anyhow::Result<Exit> {
    let file = load_tasks(&config.file)?;
    print_stdout(&report::validation_report(&file, config.format)?)?;
    diag!("{}", report::validation_tally(&file));
    Ok(if file.errors.is_empty() || config.allow_bad_tasks {
        Exit::Success
    } else {
        Exit::BadInput
    })
}

/// `evalctl tasks render`: one `{"task_id", "prompt"}` JSON line per valid task. When
/// `--allow-bad-tasks` skipped every record, stdout stays empty and a warning says so (exit 0).
pub fn render(config: &RenderConfig) -> anyhow::Result<Exit> {
    let file = load_valid(&config.file, config.allow_bad_tasks)?;
    if file.tasks.is_empty() {
        diag!("warning: {}: no valid tasks to render", file.display);
    }
    print_stdout(&report::rendered_prompts(&file.tasks)?)?;
    Ok(Exit::Success)
}

/// `evalctl tasks score`: score every task's output, write per-task lines to `--output`, print
/// the summary. Exit 1 when a task has no output or an output names no task; an output for a task
/// skipped as invalid (`--allow-bad-tasks`) is only warned about.
pub fn score(config: &ScoreConfig) -> anyhow::Result<Exit> {
    let file = load_valid(&config.file, config.allow_bad_tasks)?;
    let (outputs_display, outputs) = read_outputs(&config.outputs)?;
    let summary = score_all(&file, outputs_display, outputs, config.code_timeout)?;
    if let Some(path) = &config.output {
        report::write_task_scores(path, &summary.tasks)?;
    }
    print_stdout(&report::score_report(&summary, config.format)?)?;
    if summary.interrupted {
        diag!(
            "interrupted: {} of {} tasks scored; the results so far are written and summarised",
            summary.tasks.len(),
            file.tasks.len()
        );
        return Ok(Exit::Interrupted);
    }
    if !summary.missing.is_empty() {
        diag!(
            "warning: {} of {} tasks have no output and score 0: {}",
            summary.missing.len(),
            summary.overall.tasks,
            summary.missing.join(", ")
        );
    }
    for unknown in &summary.unknown_outputs {
        diag!(
            "warning: {}:{}: no task has id {:?}",
            summary.outputs_file,
            unknown.line,
            unknown.task_id
        );
    }
    for ignored in &summary.ignored_outputs {
        diag!(
            "warning: {}:{}: output for invalid task {:?} ignored",
            summary.outputs_file,
            ignored.line,
            ignored.task_id
        );
    }
    Ok(
        if summary.missing.is_empty() && summary.unknown_outputs.is_empty() {
            Exit::Success
        } else {
            Exit::EvaluationFailed
        },
    )
}

/// Load a tasks file for `render` or `score`: any invalid record is a bad-input error listing all
/// of them, unless `allow_bad_tasks`, which reports them as warnings and keeps the valid ones.
fn load_valid(path: &Path, allow_bad_tasks: bool) -> anyhow::Result<TaskFile> {
    let file = load_tasks(path)?;
    let mut lines = report::task_error_lines(&file);
    if lines.is_empty() {
        return Ok(file);
    }
    if !allow_bad_tasks {
        lines.push(format!(
            "{}: {} task-spec errors; fix them (see `evalctl tasks validate`) or pass \
             --allow-bad-tasks to skip them",
            file.display,
            file.errors.len()
        ));
        return Err(bad_input(report::error_message(&lines)));
    }
    for line in lines {
        diag!("warning: skipped: {line}");
    }
    Ok(file)
}
