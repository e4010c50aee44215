//! Everything a run reports: the per-call result records and their `--output` file, the summary
//! (text or JSON), and the progress display. Only this layer prints run results.

mod progress;
mod record;
mod results_file;
mod summary;
mod text;

pub use progress::progress_bar;
pub use record::CallRecord;
pub use results_file::ResultsFile;
pub use summary::{Aggregate, Calls, CandidateSummary, EvaluatorInfo, Splits, Summary, Usage};

use std::io::{IsTerminal, Write};

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

/// Print `text` on stdout. A closed pipe (`evalctl ... | head`) is a normal end, not an error.
pub fn print_stdout(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => Err(err.into()),
        _ => Ok(()),
    }
}

/// Print the run summary in `format`.
pub fn print_summary(summary: &Summary, format: Format, color: bool) -> anyhow::Result<()> {
    match format {
        Format::Json => print_stdout(&format!("{}\n", serde_json::to_string_pretty(summary)?)),
        Format::Text => print_stdout(&text::render(summary, color)),
    }
}

/// Tell the user, on stderr, about the first few failed calls.
pub fn print_call_errors(records: &[CallRecord], color: bool) {
    const SHOWN: usize = 5;
    let failed: Vec<&CallRecord> = records
        .iter()
        .filter(|record| record.error.is_some())
        .collect();
    let prefix = if color {
        "\x1b[33mwarning\x1b[0m"
    } else {
        "warning"
    };
    for record in failed.iter().take(SHOWN) {
        let error = record.error.as_ref().expect("filtered on errors");
        eprintln!(
            "{prefix}: {}: {}: {}",
            record.call_label(),
            kind_name(error.kind),
            error.message
        );
    }
    if failed.len() > SHOWN {
        eprintln!(
            "{prefix}: … and {} more failed calls (every call is in --output FILE.jsonl)",
            failed.len() - SHOWN
        );
    }
}

fn kind_name(kind: crate::protocol::ErrorKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|value| value.as_str().map(str::to_string))
        .unwrap_or_default()
}
