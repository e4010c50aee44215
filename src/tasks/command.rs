//! The three `evalctl tasks` commands: load and validate, do the work, print, pick the exit code.

use std::path::Path;

use super::code_exec::CodeRunner;
use super::report;
use super::score::{read_outputs, runs_code, score_all};
use super::validate::{load_tasks, TaskFile};
use super::{RenderConfig, ScoreConfig, ValidateConfig};
use crate::error::{invalid, Problem};
use crate::exit::Exit;
use crate::report::{print_document, print_stdout, Reporter, ResultsFile};

/// `evalctl tasks validate`: report every error on stdout, a tally on stderr; exit 2 on any
/// error unless `--allow-bad-tasks`.
pub fn validate(config: &ValidateConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    let file = load_tasks(&config.file)?;
    print_document(
        &report::validation_report(&file, reporter.format)?,
        reporter,
    )?;
    reporter.note(report::validation_tally(&file));
    Ok(if file.errors.is_empty() || config.allow_bad_tasks {
        Exit::Success
    } else {
        Exit::BadInput
    })
}

/// `evalctl tasks render`: one `{"task_id", "prompt"}` JSON line per valid task. When
/// `--allow-bad-tasks` skipped every record, stdout stays empty and a warning says so (exit 0).
pub fn render(config: &RenderConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    let file = load_valid(&config.file, config.allow_bad_tasks, reporter)?;
    if file.tasks.is_empty() {
        reporter.warning(format!("{}: no valid tasks to render", file.display));
    }
    print_stdout(&report::rendered_prompts(&file.tasks)?)?;
    Ok(Exit::Success)
}

/// `evalctl tasks score`: score every task's output, write per-task lines to `--output`, print
/// the summary. Exit 1 when a task has no output or an output names no task; an output for a task
/// skipped as invalid (`--allow-bad-tasks`) is only warned about.
pub fn score(config: &ScoreConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    let file = load_valid(&config.file, config.allow_bad_tasks, reporter);
    let outputs = read_outputs(&config.outputs);
    let output = config
        .output
        .as_deref()
        .map_or(Ok(()), ResultsFile::check_writable);
    let (file, (outputs_display, outputs)) = match (file, outputs, output) {
        (Ok(file), Ok(outputs), Ok(())) => (file, outputs),
        (file, outputs, output) => {
            let errors = [file.err(), outputs.err(), output.err()];
            return Err(crate::error::Fatal::merge(errors.into_iter().flatten()));
        }
    };
    let code = runs_code(&file, &outputs)
        .then(|| CodeRunner::prepare(config.code.isolation, config.code.timeout, false))
        .transpose()?;
    let summary = score_all(&file, outputs_display, outputs, code.as_ref())?;
    let mut write_failed = false;
    if let Some(path) = &config.output {
        if let Err(error) = summary.append_lines(path) {
            reporter.diagnose(&error);
            write_failed = true;
        }
    }
    print_document(&report::score_report(&summary, reporter)?, reporter)?;
    if summary.interrupted {
        reporter.note(format!(
            "interrupted: {} of {} tasks scored; the results so far are written and summarised",
            summary.tasks.len(),
            file.tasks.len()
        ));
        return Ok(Exit::Interrupted);
    }
    if !summary.missing.is_empty() {
        reporter.warning(format!(
            "{} of {} tasks have no output and score 0: {}",
            summary.missing.len(),
            summary.overall.tasks,
            summary.missing.join(", ")
        ));
    }
    let at_line = |line, message| Problem::at_line(summary.outputs_file.as_str(), line, message);
    for unknown in &summary.unknown_outputs {
        reporter.warning(at_line(
            unknown.line,
            format!("no task has id {:?}", unknown.task_id),
        ));
    }
    for ignored in &summary.ignored_outputs {
        reporter.warning(at_line(
            ignored.line,
            format!("output for invalid task {:?} ignored", ignored.task_id),
        ));
    }
    Ok(if write_failed {
        Exit::Internal
    } else if summary.missing.is_empty() && summary.unknown_outputs.is_empty() {
        Exit::Success
    } else {
        Exit::EvaluationFailed
    })
}

/// Load a tasks file for `render` or `score`: any invalid record is a bad-input error listing all
/// of them, unless `allow_bad_tasks`, which reports them as warnings and keeps the valid ones.
pub(super) fn load_valid(
    path: &Path,
    allow_bad_tasks: bool,
    reporter: Reporter,
) -> anyhow::Result<TaskFile> {
    let file = load_tasks(path)?;
    let mut problems = report::task_problems(&file);
    if problems.is_empty() {
        return Ok(file);
    }
    if !allow_bad_tasks {
        problems.push(Problem::new(
            file.display.as_str(),
            format!(
                "{} task-spec error{}; fix {} (see `evalctl tasks validate`) or pass \
                 --allow-bad-tasks to skip {}",
                file.errors.len(),
                if file.errors.len() == 1 { "" } else { "s" },
                if file.errors.len() == 1 { "it" } else { "them" },
                if file.errors.len() == 1 { "it" } else { "them" },
            ),
        ));
        return Err(invalid(problems));
    }
    for problem in problems {
        reporter.warning(format!("skipped: {problem}"));
    }
    Ok(file)
}
