//! Flags of `evalctl report`: results files in, one self-contained HTML file out.

use std::path::PathBuf;

use clap::Args;

use crate::commands;
use crate::exit::Exit;
use crate::report::Reporter;

/// `evalctl report RESULTS.jsonl [MORE.jsonl ...] -o report.html`
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results files: `run --output` result lines, `tasks score --output` lines or `spec score`
    /// evaluation records (the kind is told per file). Several files are compared side by side.
    #[arg(required = true, value_name = "RESULTS.jsonl")]
    pub files: Vec<String>,

    /// The HTML file to write (created or replaced): CSS, JavaScript and data inline, no
    /// network access; it opens from disk in any browser.
    #[arg(short, long, value_name = "FILE.html")]
    pub output: PathBuf,

    /// The report's title (default: the files' names).
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,

    /// Which run of each `run --output` file, and whether a run with missing shards is shown.
    #[command(flatten)]
    pub runs: super::results::RunSelectionArgs,
}

impl ReportArgs {
    /// Read every file, write the report, and say what it holds.
    pub fn execute(self, reporter: Reporter) -> anyhow::Result<Exit> {
        commands::report::report(
            &self.files,
            &self.output,
            self.title,
            &self.runs.selection(),
            reporter,
        )
    }
}
