//! The `--output FILE.jsonl` writer: one line per call, appended and flushed as each call
//! finishes, so an interrupted run loses nothing that finished. An existing file is appended to,
//! never truncated.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::CallRecord;
use crate::error::bad_input;

/// An open results file.
pub struct ResultsFile {
    path: PathBuf,
    file: File,
}

impl ResultsFile {
    /// Open (create or append to) `path`. Failing here is bad input: nothing has run yet.
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|err| {
                bad_input(format!(
                    "error: --output {}: cannot open for writing: {err}",
                    path.display()
                ))
            })?;
        Ok(ResultsFile {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Append one record as a JSON line.
    pub fn append(&mut self, record: &CallRecord) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .with_context(|| format!("writing results to {}", self.path.display()))
    }
}
