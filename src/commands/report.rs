//! `evalctl report RESULTS.jsonl [MORE.jsonl ...] -o report.html`: read every results file,
//! write one self-contained HTML file, and say what it holds.

use std::path::Path;

use crate::error::Fatal;
use crate::exit::Exit;
use crate::input::Source;
use crate::report::html;
use crate::report::{check_distinct, check_read_once, Reporter, Selection};

/// Read every file of `files` (the runs `selection` picks), write the report titled `title` (by
/// default, the files' names) to `output`, and say what it holds.
pub fn report(
    files: &[String],
    output: &Path,
    title: Option<String>,
    selection: &Selection,
    reporter: Reporter,
) -> anyhow::Result<Exit> {
    check_read_once(files)?;
    let sources: Vec<Source> = files.iter().map(|f| Source::from_arg(f)).collect();
    // Every problem with the inputs and the output is reported together.
    let read: Vec<_> = files
        .iter()
        .map(|file| ("a results file", Path::new(file)))
        .collect();
    let writable = html::check_writable(output, "--output")
        .and_then(|()| check_distinct(&[("--output", output)], &read));
    let (report, notes) = match (html::load_results(&sources, selection), writable) {
        (Ok(loaded), Ok(())) => loaded,
        (report, writable) => {
            return Err(Fatal::merge(
                [report.err(), writable.err()].into_iter().flatten(),
            ))
        }
    };
    for note in notes {
        reporter.note(format!("note: {note}"));
    }
    let title = title.unwrap_or_else(|| format!("evalctl report: {}", files.join(", ")));
    html::write_report(&report, &title, output, files.len(), reporter)?;
    Ok(Exit::Success)
}
