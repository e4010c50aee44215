//! Writing the report: the check, before any work, that its path can be written; the page
//! written atomically and readable by its owner only; and what is printed once it is written.

use std::path::Path;

use serde::Serialize;

use super::data::Report;
use crate::error::{bad_input, Problem};
use crate::report::{print, Document, Reporter, Styled};
use crate::text::counted;
use crate::text::{io_reason, size};

/// Check, before any work, that the report can be written to `path` (`flag` names the option
/// in the message): not a directory, and its directory exists.
pub fn check_writable(path: &Path, flag: &str) -> anyhow::Result<()> {
    let fail = |reason: String| bad_input(Problem::new(path.display().to_string(), reason));
    if path.as_os_str() == "-" {
        return Err(bad_input(Problem::new(
            flag,
            "'-' is not a file: the report is one HTML file; name it, e.g. report.html",
        )));
    }
    if path.is_dir() {
        return Err(fail(format!("cannot write {flag}: it is a directory")));
    }
    // A link is written through: the directory that counts is its target's.
    let target = crate::input::link_target(path);
    let target = target.as_deref().unwrap_or(path);
    match target.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(fail(format!(
            "cannot write {flag}: no directory {}",
            dir.display()
        ))),
        _ => Ok(()),
    }
}

/// What `evalctl report` prints once the report is written.
#[derive(Debug, Serialize)]
struct Written<'a> {
    ok: bool,
    report: &'a Path,
    files: usize,
    results: usize,
    errors: usize,
    /// Of `spec score` records: runs that did not pass their scorecard.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_passed: Option<usize>,
    #[serde(skip)]
    runs: usize,
    bytes: usize,
}

/// Render `report` under `title`, write it to `path`, and print what was written (text: one
/// line; JSON: `{"ok", "report", "files", "results", "errors", "bytes"}`).
pub fn write_report(
    report: &Report,
    title: &str,
    path: &Path,
    files: usize,
    reporter: Reporter,
) -> anyhow::Result<()> {
    let written = write_page(report, title, path, files)?;
    print(&written, reporter)
}

/// What `evalctl report` wrote: one line, or the JSON document.
impl Document for Written<'_> {
    fn text(&self) -> Styled {
        Styled::from(format!(
            "{} from {} {}, {}\n",
            self.line(),
            self.files,
            if self.files == 1 { "file" } else { "files" },
            size(self.bytes as u64)
        ))
    }
}

/// Render the report of the run that just finished (`run --report`) and write it to `path`:
/// the line that tells the user so, `wrote report.html: 60 results (4 failed), 12.3 kB`.
pub fn write_run_report(report: &Report, path: &Path) -> anyhow::Result<String> {
    let written = write_page(report, "evalctl run", path, 1)?;
    Ok(format!(
        "{}, {}",
        written.line(),
        size(written.bytes as u64)
    ))
}

/// Render `report` under `title` and write it to `path`: what was written.
fn write_page<'a>(
    report: &Report,
    title: &str,
    path: &'a Path,
    files: usize,
) -> anyhow::Result<Written<'a>> {
    let page = report.render(title)?;
    write(path, &page)?;
    Ok(Written {
        ok: true,
        report: path,
        files,
        results: report.rows(),
        errors: report.errors(),
        not_passed: report.not_passed().map(|(failed, _)| failed),
        runs: report.not_passed().map_or(0, |(_, runs)| runs),
        bytes: page.len(),
    })
}

impl Written<'_> {
    /// `wrote PATH: N results (M failed)`, and of `spec score` records `(M failed; K of R runs
    /// did not pass)`.
    fn line(&self) -> String {
        let verdicts = self.not_passed.map_or(String::new(), |failed| {
            format!(
                "; {failed} of {} did not pass",
                counted(self.runs, "run", "runs")
            )
        });
        format!(
            "wrote {}: {} ({} failed{verdicts})",
            self.report.display(),
            counted(self.results, "result", "results"),
            self.errors
        )
    }
}

/// Write the page to `path`, replacing it atomically (a failure leaves an earlier report as it
/// was) and readable by its owner only: a failure is evalctl's own (exit 4), since the path was
/// checked before the work.
fn write(path: &Path, page: &str) -> anyhow::Result<()> {
    crate::owner_only::replace(path, page.as_bytes()).map_err(|err| {
        crate::error::Fatal::Internal(format!(
            "{}: writing the report failed: {}",
            path.display(),
            io_reason(&err)
        ))
        .into()
    })
}
