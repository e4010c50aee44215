//! What the `evalctl tasks` commands print: validation errors (text lines or a JSON array),
//! rendered prompts (JSON lines), and the `tasks score` and `tasks run` summaries (a text table,
//! or the JSON document).

use serde::Serialize;

use crate::error::Problem;
use crate::generate::tasks_run::Generation;
use crate::report::{counted, tokens_of, Document, Paint, Styled, Usage};
use crate::tasks::render::render_prompt;
use crate::tasks::rules::TaskError;
use crate::tasks::score::{Aggregate, ScoreSummary};
use crate::tasks::spec::Task;
use crate::tasks::validate::TaskFile;

/// The validation report: one `FILE:LINE: task ID, field F: rule: detail` line per error, or a JSON
/// array of `{line, task_id, rule, field, detail}` objects.
#[derive(Serialize)]
#[serde(transparent)]
pub struct ValidationReport<'a> {
    errors: &'a [TaskError],
    #[serde(skip)]
    file: &'a TaskFile,
}

impl<'a> ValidationReport<'a> {
    pub fn of(file: &'a TaskFile) -> Self {
        ValidationReport {
            errors: &file.errors,
            file,
        }
    }
}

impl Document for ValidationReport<'_> {
    fn text(&self) -> Styled {
        Styled::from(
            task_problems(self.file)
                .iter()
                .map(|problem| format!("{problem}\n"))
                .collect::<String>(),
        )
    }
}

/// The one-line tally for stderr: `FILE: N valid tasks, M errors`.
pub fn validation_tally(file: &TaskFile) -> String {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}: {}, {}",
        file.display,
        plural(file.tasks.len(), "valid task"),
        plural(file.errors.len(), "error")
    )
}

/// Every error as a located problem, for stderr when `render` or `score` meets invalid tasks.
pub fn task_problems(file: &TaskFile) -> Vec<Problem> {
    file.errors
        .iter()
        .map(|error: &TaskError| error.to_problem(&file.display))
        .collect()
}

/// One `{"task_id", "prompt"}` JSON line per task.
pub fn rendered_prompts(tasks: &[Task]) -> anyhow::Result<String> {
    #[derive(Serialize)]
    struct Rendered<'a> {
        task_id: &'a str,
        prompt: String,
    }
    let mut text = String::new();
    for task in tasks {
        let line = Rendered {
            task_id: &task.task_id,
            prompt: render_prompt(task),
        };
        text.push_str(&serde_json::to_string(&line)?);
        text.push('\n');
    }
    Ok(text)
}

/// The `tasks score` summary: the score table, or the JSON document.
impl Document for ScoreSummary {
    fn text(&self) -> Styled {
        let title = format!(
            "tasks {} scored against outputs {}",
            self.tasks_file, self.outputs_file
        );
        score_table(&title, self)
    }
}

/// The score table under a `title` line, its header painted.
fn score_table(title: &str, summary: &ScoreSummary) -> Styled {
    let row = |name: &str, agg: &Aggregate| {
        let shown = |value: Option<f64>| {
            value.map_or_else(|| "—".to_string(), |v| crate::text::Fixed4(v).to_string())
        };
        format!(
            "  {name:<16} {:>6} {:>7} {:>8} {:>8} {:>8}\n",
            agg.tasks,
            agg.scored,
            agg.missing,
            shown(agg.mean()),
            shown(agg.stderr())
        )
    };
    let header = format!(
        "  {:<16} {:>6} {:>7} {:>8} {:>8} {:>8}",
        "", "tasks", "scored", "missing", "mean", "stderr"
    );
    let mut table = Styled::from(format!(
        "{title}{}\n\n",
        if summary.interrupted {
            " (interrupted: partial results)"
        } else {
            ""
        }
    ));
    table.push_painted(Paint::Heading, header);
    let mut text = format!("\n{}", row("all", &summary.overall));
    text.push_str("\nby category\n");
    for (category, agg) in &summary.by_category {
        text.push_str(&row(category.name(), agg));
    }
    text.push_str("\nby metric\n");
    for (metric, agg) in &summary.by_metric {
        text.push_str(&row(metric.name(), agg));
    }
    text.push_str("\nstderr = standard error of the mean over the tasks (— for a single task)\n");
    if !summary.code_exec_limits.is_empty() {
        let hits: Vec<String> = summary
            .code_exec_limits
            .iter()
            .map(|(limit, count)| format!("{} {count}", limit.label()))
            .collect();
        text.push_str(&format!(
            "\ncode_exec assertions stopped by a limit: {}\n",
            hits.join(", ")
        ));
    }
    if !summary.missing.is_empty() {
        text.push_str(&format!(
            "\nmissing outputs (scored 0): {}\n",
            summary.missing.join(", ")
        ));
    }
    let unmatched = [
        ("outputs naming no task", &summary.unknown_outputs),
        (
            "outputs for invalid tasks (ignored)",
            &summary.ignored_outputs,
        ),
    ];
    for (title, outputs) in unmatched {
        if outputs.is_empty() {
            continue;
        }
        text.push_str(&format!("\n{title}:\n"));
        for output in outputs {
            text.push_str(&format!(
                "  {}:{}: {}\n",
                summary.outputs_file,
                output.line,
                crate::text::one_line(&output.task_id)
            ));
        }
    }
    table.push(text);
    table
}

/// Everything `tasks run` reports: the `tasks score` summary and the generation.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    /// Scores per task, category and metric.
    #[serde(flatten)]
    pub scores: ScoreSummary,
    /// The generation.
    pub generation: Generation,
}

/// The `tasks run` summary: the scores as `tasks score` shows them, then the generation and its
/// token usage; or the JSON document.
impl Document for RunSummary {
    fn text(&self) -> Styled {
        let generation = &self.generation;
        let title = format!(
            "tasks {} run against {}",
            self.scores.tasks_file, generation.model
        );
        let mut text = score_table(&title, &self.scores);
        text.push(generation_text(generation));
        text
    }
}

/// The generation's lines of the `tasks run` summary: completions, time and tokens.
fn generation_text(generation: &Generation) -> String {
    let mut text = String::new();
    let usage = &generation.usage;
    text.push_str(&format!(
        "
generation: {} of {} tasks completed, {} failed{}, {:.2} s
",
        generation.completed,
        generation.tasks,
        generation.failed.len(),
        match generation.not_run {
            0 => String::new(),
            not_run => format!(", {not_run} not run (their completions could not be saved)"),
        },
        generation.elapsed_ms / 1000.0
    ));
    let saved = (!generation.usage_saved.is_zero()).then(|| Usage::from(generation.usage_saved));
    let mut parts: Vec<String> = tokens_of(Some(&Usage::from(*usage)), saved.as_ref())
        .map(|tokens| format!("tokens: {tokens}"))
        .into_iter()
        .collect();
    if generation.usage_missing > 0 {
        parts.push(format!(
            "{} reported no token usage (their tokens are unknown, counted as 0)",
            counted(generation.usage_missing, "completion", "completions")
        ));
    }
    if generation.resumed > 0 {
        parts.push(format!(
            "{} resumed from --save-outputs",
            counted(generation.resumed, "completion", "completions")
        ));
    }
    if generation.cached > 0 {
        parts.push(format!(
            "{} from the cache",
            counted(generation.cached, "completion", "completions")
        ));
    }
    if !parts.is_empty() {
        text.push_str(&parts.join("; "));
        text.push('\n');
    }
    text
}
