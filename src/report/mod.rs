//! Everything a run reports: the per-call result records and their `--output` file, the summary
//! (text or JSON), and the progress display. Only this layer prints run results.

mod preflight;
mod progress;
mod results_file;
mod stdout;
mod summary;
mod text;

pub use preflight::{print_preflight, print_preflight_failure, PreflightReport, ProbeAnswer};
pub use progress::progress_bar;
pub use results_file::ResultsFile;
pub use stdout::{print_stdout, stdout_until_closed};
pub use summary::{CandidateSummary, Diagnostics, EvaluatorInfo, Splits, Summary, Tally};

use std::io::IsTerminal;

/// The styles evalctl paints with, when colour is on.
#[derive(Debug, Clone, Copy)]
pub enum Paint {
    /// Bold red: `error:`.
    Error,
    /// Yellow: `warning:`.
    Warning,
    /// Bold: table headers.
    Heading,
}

/// `text` in `style` when `color` is on (decided once, from `--color` and NO_COLOR), else as is.
pub fn paint(style: Paint, text: &str, color: bool) -> String {
    let code = match style {
        Paint::Error => "1;31",
        Paint::Warning => "33",
        Paint::Heading => "1",
    };
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// How a report is printed on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A table for people.
    Text,
    /// One JSON document for programs.
    Json,
}

impl Format {
    /// The explicit choice, else text on a terminal and JSON otherwise.
    pub fn resolve(choice: Option<Format>) -> Format {
        choice.unwrap_or(if std::io::stdout().is_terminal() {
            Format::Text
        } else {
            Format::Json
        })
    }
}

/// Print the run summary in `format`.
pub fn print_summary(summary: &Summary, format: Format, color: bool) -> anyhow::Result<()> {
    match format {
        Format::Json => print_stdout(&format!("{}\n", serde_json::to_string_pretty(summary)?)),
        Format::Text => print_stdout(&text::render(summary, color)),
    }
}

/// Print a diagnostic line on stderr, its `warning:` prefix painted.
pub fn print_warning(line: &str, color: bool) {
    match line.strip_prefix("warning:") {
        Some(rest) => diag!("{}{rest}", paint(Paint::Warning, "warning", color) + ":"),
        None => diag!("{line}"),
    }
}

/// Tell the user, on stderr, which candidates failed `--fail-under threshold`.
pub fn print_gate_failures(failed: &[&CandidateSummary], threshold: f64) {
    for candidate in failed {
        match candidate.score {
            Some(score) => diag!(
                "fail-under: candidate {} scored {score:.4}, below {threshold}",
                candidate.id
            ),
            None => diag!(
                "fail-under: candidate {} has no score (no call finished)",
                candidate.id
            ),
        }
    }
}

/// Tell the user, on stderr, how far an interrupted run got.
pub fn print_interrupted(finished: usize, planned: usize) {
    diag!("interrupted: {finished} of {planned} calls finished; the summary covers them");
}

/// Tell the user, on stderr, about the first failed calls and the built-in checks that errored.
/// `calls` is how many calls finished; `output` is the `--output` file, if any, where every call
/// can be read in full.
pub fn print_diagnostics(
    diagnostics: &Diagnostics,
    calls: usize,
    output: Option<&std::path::Path>,
    color: bool,
) {
    let prefix = paint(Paint::Warning, "warning", color);
    for failure in &diagnostics.failures {
        diag!("{prefix}: {failure}");
    }
    if diagnostics.more_failures > 0 {
        let more = diagnostics.more_failures;
        match output {
            Some(path) => diag!("{prefix}: … and {more} more failed calls (every call is in {})", path.display()),
            None => diag!("{prefix}: … and {more} more failed calls (pass --output FILE.jsonl to keep every call)"),
        }
    }
    for (check, errored) in &diagnostics.errored_checks {
        diag!(
            "{prefix}: check {check} errored in {errored} of {} calls and counted as failed (see side_info.check_results{})",
            calls,
            output.map_or(String::new(), |path| format!(" in {}", path.display()))
        );
    }
}
