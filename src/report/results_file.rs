//! The `--output FILE.jsonl` writer: one line per call, appended and flushed as each call
//! finishes, so an interrupted run loses nothing that finished. An existing file is appended to,
//! never truncated.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::error::bad_input;
use crate::runner::CallRecord;

fn cannot_open(path: &Path, reason: &str) -> anyhow::Error {
    bad_input(format!(
        "error: --output {}: cannot open for writing: {reason}",
        path.display()
    ))
}

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
            .map_err(|err| cannot_open(path, &crate::text::io_reason(&err)))?;
        Ok(ResultsFile {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Check, without creating or changing anything, that `open` would succeed (for preflight).
    pub fn check_writable(path: &Path) -> anyhow::Result<()> {
        let fail = |reason: String| cannot_open(path, &reason);
        match std::fs::metadata(path) {
            Ok(metadata) if metadata.is_dir() => Err(fail("it is a directory".into())),
            Ok(_) => std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .map(drop)
                .map_err(|err| fail(crate::text::io_reason(&err))),
            Err(_) => {
                let parent = path
                    .parent()
                    .filter(|parent| !parent.as_os_str().is_empty());
                match parent {
                    Some(dir) if !dir.is_dir() => {
                        Err(fail(format!("no directory {}", dir.display())))
                    }
                    _ => Ok(()),
                }
            }
        }
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
