//! The four `evalctl tasks` commands: load and validate, do the work, print, pick the exit code.
//! What they print is in [`documents`].

mod documents;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::error::{invalid, Fatal, Problem};
use crate::exit::Exit;
use crate::generate::model::{completion_keys, Model, MODEL_FLAGS};
use crate::generate::tasks_run::journal;
use crate::generate::tasks_run::{
    generate, Generated, Generation, GenerationFailure, RunTasksConfig, Work,
};
use crate::protocol::CallError;
use crate::report::{check_distinct, print, print_resumed, print_stdout, Reporter, ResultsFile};
use crate::store::{Cache, Table};
use crate::tasks::code_exec::CodeRunner;
use crate::tasks::render::render_prompt;
use crate::tasks::score::{read_outputs, runs_code, score_all, ScoreSummary};
use crate::tasks::spec::Task;
use crate::tasks::validate::{load_tasks, TaskFile};
use crate::tasks::{MetricName, RenderConfig, ScoreConfig, ValidateConfig};
use documents::{rendered_prompts, task_problems, validation_tally, RunSummary, ValidationReport};

/// `evalctl tasks validate`: report every error on stdout, a tally on stderr; exit 2 on any
/// error unless `--allow-bad-tasks`.
pub fn validate(config: &ValidateConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    let file = load_tasks(&config.file)?;
    print(&ValidationReport::of(&file), reporter)?;
    reporter.note(validation_tally(&file));
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
    print_stdout(&rendered_prompts(&file.tasks)?)?;
    Ok(Exit::Success)
}

/// `evalctl tasks score`: score every task's output, write per-task lines to `--output`, print
/// the summary. Exit 1 when a task has no output or an output names no task; an output for a task
/// skipped as invalid (`--allow-bad-tasks`) is only warned about.
pub fn score(config: &ScoreConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    let file = load_valid(&config.file, config.allow_bad_tasks, reporter);
    let outputs = read_outputs(&config.outputs);
    let output = config.output.as_deref().map_or(Ok(()), |path| {
        ResultsFile::check_scoring_output(
            path,
            &[
                ("the task file", &config.file),
                ("--outputs", config.outputs.path()),
            ],
        )
    });
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
        if let Err(error) = append_lines(&summary, "tasks score", &file.tasks, &[], path) {
            reporter.diagnose(&error);
            write_failed = true;
        }
    }
    print(&summary, reporter)?;
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

/// `evalctl tasks run`: exit 0 when every task was generated and scored, 1 when a generation
/// failed, 2 on invalid input, 3 when the model cannot be used at all, 130 when interrupted.
pub fn run(config: &RunTasksConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    let file = load_valid(&config.file, config.allow_bad_tasks, reporter);
    let written: Vec<_> = [
        ("--save-outputs", &config.save_outputs),
        ("--output", &config.output),
    ]
    .into_iter()
    .filter_map(|(flag, path)| Some((flag, path.as_deref()?)))
    .collect();
    let cache = config.cache_dir.as_deref().map(crate::store::database);
    let read: Vec<_> = [("the task file", Some(config.file.as_path()))]
        .into_iter()
        .chain([("the --cache database", cache.as_deref())])
        .filter_map(|(what, path)| Some((what, path?)))
        .collect();
    let writable = written
        .iter()
        .map(|(flag, path)| ResultsFile::check_writable(path, flag))
        .chain([check_distinct(&written, &read)])
        .chain(
            config
                .output
                .as_deref()
                .map(|path| ResultsFile::check_appendable(path, "--output")),
        )
        .chain(
            (config.save_outputs.as_deref())
                .filter(|_| !config.resume)
                .map(journal::check_unused),
        )
        .find_map(Result::err);
    let model = Model::build(
        &config.model,
        MODEL_FLAGS,
        config.timeout,
        config.concurrency,
    );
    let (mut file, model) = match (file, writable, model) {
        (Ok(file), None, Ok(model)) => (file, model),
        (file, writable, model) => {
            let errors = [file.err(), writable, model.err()];
            return Err(Fatal::merge(errors.into_iter().flatten()));
        }
    };
    if let Some(limit) = config.limit {
        file.tasks.truncate(limit);
    }
    // Whether code can run is known before any model call.
    let code = file
        .tasks
        .iter()
        .any(|task| task.metric == MetricName::CodeExec)
        .then(|| CodeRunner::prepare(config.code.isolation, config.code.timeout, true))
        .transpose()?;
    model
        .check_setup()
        .map_err(|reason| Fatal::Preflight(format!("{} cannot run: {reason}", model.describe())))?;
    if file.tasks.is_empty() {
        reporter.warning(format!("{}: no valid tasks to run", file.display));
    }
    let saved = config
        .save_outputs
        .as_deref()
        .map(ResultsFile::open)
        .transpose()?;
    let prompts: Vec<String> = file.tasks.iter().map(render_prompt).collect();
    let ids = file.tasks.iter().map(|task| task.task_id.as_str());
    let (keys, keyed_files) = completion_keys(&config.model, &config.sampling, ids.zip(&prompts))?;
    let resumed = match (&config.save_outputs, config.resume) {
        (Some(path), true) => {
            let task_ids: Vec<&str> = file
                .tasks
                .iter()
                .map(|task| task.task_id.as_str())
                .collect();
            let (saved, resumed) = journal::resume_from(path, &task_ids, &keys)?;
            print_resumed(path, &resumed, file.tasks.len(), reporter);
            saved
        }
        _ => Vec::new(),
    };
    let cache = config.cache_dir.as_deref().map(Cache::open).transpose()?;
    let cache = cache
        .map(|cache| cache.expect(Table::Completions, &keys))
        .transpose()?;
    // A key the API rejects, or an API out of reach, shows once, before any task; a run whose
    // completions are all saved or cached calls no model, and needs none.
    let resumed_tasks: std::collections::HashSet<usize> =
        resumed.iter().map(|saved| saved.index).collect();
    let calls_the_model = keys.iter().enumerate().any(|(index, key)| {
        !resumed_tasks.contains(&index) && !cache.as_ref().is_some_and(|cache| cache.holds(key))
    });
    if calls_the_model {
        crate::runner::block_on(model.check_access())?.map_err(|reason| {
            Fatal::Preflight(format!("{} cannot run: {reason}", model.describe()))
        })?;
    }
    let mut saved = saved.map(ResultsFile::in_background);
    let work = Arc::new(Work {
        model: Arc::new(model),
        tasks: file.tasks.clone().into(),
        prompts,
        keys,
        keyed_files,
        cache,
    });
    let on_stopping =
        |in_flight| crate::report::print_stopping(in_flight, crate::runner::GRACE, reporter);
    let generated = crate::runner::block_on(generate(
        Arc::clone(&work),
        resumed,
        config,
        |output| match &mut saved {
            Some(results) => results.append(output),
            None => Ok(()),
        },
        on_stopping,
    ))?;
    let Generated {
        outputs,
        failed,
        cut_short,
        interrupted,
        mut write_error,
        not_started,
        ..
    } = generated;
    match saved.map(ResultsFile::finish) {
        Some(Err(error)) => {
            write_error.get_or_insert(error);
        }
        Some(Ok(Some(warning))) => reporter.warning(warning),
        _ => {}
    }
    let cache_lost = work.cache.as_ref().and_then(crate::store::Cache::flush);
    for warning in [work.keyed_files.changed_during_the_run(), cache_lost]
        .into_iter()
        .flatten()
    {
        reporter.warning(warning);
    }
    let model = &work.model;
    let cut_short = task_ids(cut_short, &work.tasks);
    if let Some(first) = cut_short.first() {
        reporter.warning(format!(
            "{} stopped at its token limit in {} (task {first:?}{}): their completions may be \
             cut short (--max-tokens raises the limit)",
            model.label(),
            crate::text::counted(cut_short.len(), "task", "tasks"),
            if cut_short.len() > 1 {
                " and others"
            } else {
                ""
            }
        ));
    }
    let generation = Generation {
        model: model.label(),
        tasks: file.tasks.len(),
        completed: outputs.len(),
        failed,
        resumed: generated.resumed,
        cached: generated.cached,
        usage: generated.usage,
        usage_saved: generated.usage_saved,
        usage_missing: generated.usage_missing,
        not_run: not_started,
        cut_short,
        elapsed_ms: crate::text::milliseconds(generated.elapsed),
    };
    if interrupted {
        // The signal stopped the generation; what was generated is scored, unless another
        // signal stops that too (the code runner's handler saw the first one as well).
        crate::interrupt::forget_request();
    }
    if interrupted || not_started > 0 {
        // Score the tasks the generation reached, answered or failed after their retries (a
        // failure scores 0, as in a whole run); the tasks not reached are not the model's fault.
        let reached: std::collections::HashSet<&str> = outputs
            .iter()
            .map(|output| output.task_id.as_str())
            .chain(
                generation
                    .failed
                    .iter()
                    .map(|failure| failure.task_id.as_str()),
            )
            .collect();
        file.tasks
            .retain(|task| reached.contains(task.task_id.as_str()));
    }
    let mut scores = score_all(&file, model.label(), outputs, code.as_ref())?;
    // The summary says the generation was cut short, as it says of the scoring.
    scores.interrupted |= interrupted;
    let mut write_failed = write_error.is_some();
    if let Some(error) = write_error {
        reporter.diagnose(&error);
    }
    if let Some(saved) = config.save_outputs.as_deref().filter(|_| not_started > 0) {
        reporter.note(format!(
            "stopped: no task is started once its completion cannot be saved: {} not run \
             (tasks run --resume runs them once {} can be written)",
            crate::text::counted(not_started, "task", "tasks"),
            saved.display()
        ));
    }
    match (&config.output, &config.save_outputs) {
        // Resumable: the lines of part of the tasks would be a scoring of their own, beside the
        // complete one `--resume` appends; the outputs are saved, and `--resume` writes them all.
        (Some(path), Some(saved)) if scores.interrupted => reporter.note(format!(
            "{}: not written: the run was interrupted and its completions are saved in {}; the \
             same command with --resume completes it and writes a line for every task",
            path.display(),
            saved.display()
        )),
        // Tasks not run for want of their journal: as when interrupted, the completions saved
        // are resumed and the others made. (When the journal failed only as it was closed,
        // every task was run and scored: the scoring is whole.)
        (Some(path), Some(saved)) if not_started > 0 => reporter.note(format!(
            "{}: not written: not every task was run, for want of {}; the same command with \
             --resume, once it can be written, completes the run and writes a line for every \
             task",
            path.display(),
            saved.display()
        )),
        (Some(path), _) => {
            // The plan is every task the run was to generate, not only those it reached.
            if let Err(error) =
                append_lines(&scores, "tasks run", &work.tasks, &generation.failed, path)
            {
                reporter.diagnose(&error);
                write_failed = true;
            }
        }
        (None, _) => {}
    }
    for failure in &generation.failed {
        reporter.failure(format!(
            "task {}: {}: {} (scored 0)",
            failure.task_id,
            failure.error.kind.as_str(),
            failure.error.message
        ));
    }
    crate::report::print_rate_limits(reporter);
    let summary = RunSummary { scores, generation };
    print(&summary, reporter)?;
    // A signal after generation ended (the handlers stay in place) let the summary be written.
    if interrupted || summary.scores.interrupted || crate::interrupt::interrupt_requested() {
        let failed = match summary.generation.failed.len() {
            0 => String::new(),
            failed => format!(", {failed} of them a failed generation (scored 0)"),
        };
        reporter.note(format!(
            "interrupted: {} of {} tasks scored{failed}; the summary covers them",
            summary.scores.tasks.len(),
            summary.generation.tasks
        ));
        return Ok(Exit::Interrupted);
    }
    Ok(if write_failed {
        Exit::Internal
    } else if summary.generation.failed.is_empty() {
        Exit::Success
    } else {
        Exit::EvaluationFailed
    })
}

/// Load a tasks file for `render` or `score`: any invalid record is a bad-input error listing all
/// of them, unless `allow_bad_tasks`, which reports them as warnings and keeps the valid ones.
/// The ids of the tasks at `indices`, in the file's order.
fn task_ids(mut indices: Vec<usize>, tasks: &[Task]) -> Vec<String> {
    indices.sort_unstable();
    (indices.into_iter())
        .map(|index| tasks[index].task_id.clone())
        .collect()
}

fn load_valid(path: &Path, allow_bad_tasks: bool, reporter: Reporter) -> anyhow::Result<TaskFile> {
    let file = load_tasks(path)?;
    let mut problems = task_problems(&file);
    if problems.is_empty() {
        return Ok(file);
    }
    if looks_like_outputs(&file) {
        // One line, not every field every line lacks.
        return Err(invalid(vec![Problem::new(
            file.display.as_str(),
            "not a task file: every line holds an `output`, as a `tasks score --outputs` file \
             does (the task file comes first)",
        )]));
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

/// Whether the task file is an outputs file given in its place (`tasks score OUTPUTS --outputs
/// TASKS`): no valid task, and an unknown `output` member on every line that has an error.
fn looks_like_outputs(file: &TaskFile) -> bool {
    let lines: std::collections::BTreeSet<usize> =
        file.errors.iter().map(|error| error.line).collect();
    let with_output: std::collections::BTreeSet<usize> = file
        .errors
        .iter()
        .filter(|error| error.field.as_deref() == Some("output"))
        .map(|error| error.line)
        .collect();
    file.tasks.is_empty() && !lines.is_empty() && lines == with_output
}

/// Append one line per scored task to the results file `path` (`--output`), as `command`
/// writes it of a plan of the tasks `planned`; `failed` holds the model's errors (`tasks run`).
fn append_lines(
    summary: &ScoreSummary,
    command: &'static str,
    planned: &[Task],
    failed: &[GenerationFailure],
    path: &Path,
) -> anyhow::Result<()> {
    let run = summary.run_info(command, planned)?;
    let failed: HashMap<&str, &CallError> = failed
        .iter()
        .map(|failure| (failure.task_id.as_str(), &failure.error))
        .collect();
    let mut results = ResultsFile::open(path)?;
    for line in summary.lines(&run, &failed) {
        results.append(&line)?;
    }
    Ok(())
}
