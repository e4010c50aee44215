//! The one results writer (`run --output`, `tasks score --output`): one JSON line per result,
//! appended and flushed as each result is ready, so an interrupted command loses nothing that
//! finished. An existing file is appended to, never truncated. The file is checked for writing
//! before any work starts (a problem then is bad input, exit 2); a write that fails once work has
//! begun stops the writing, the command finishes what it was doing, and exits 4.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{bad_input, Fatal, Problem};
use crate::text::io_reason;

fn cannot_open(path: &Path, reason: &str) -> anyhow::Error {
    bad_input(Problem::new(
        path.display().to_string(),
        format!("cannot open --output for writing: {reason}"),
    ))
}

/// An open results file.
pub struct ResultsFile {
    path: PathBuf,
    file: File,
}

impl ResultsFile {
    /// Check, without creating or changing anything, that [`ResultsFile::open`] would succeed:
    /// every command with `--output` calls this before any work.
    pub fn check_writable(path: &Path) -> anyhow::Result<()> {
        if path.as_os_str() == "-" {
            return Err(bad_input(Problem::new(
                "--output",
                "'-' is not a file: results go to a file while the summary goes to stdout; \
                 name a file, e.g. --output results.jsonl",
            )));
        }
        let fail = |reason: String| cannot_open(path, &reason);
        match std::fs::metadata(path) {
            Ok(metadata) if metadata.is_dir() => Err(fail("it is a directory".into())),
            Ok(_) => std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .map(drop)
                .map_err(|err| fail(io_reason(&err))),
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

    /// Open (create or append to) `path`, already checked by [`ResultsFile::check_writable`].
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|err| cannot_open(path, &io_reason(&err)))?;
        Ok(ResultsFile {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Append everything `reader` holds (result lines spooled while the input was checked).
    pub fn append_from(&mut self, reader: &mut impl std::io::Read) -> anyhow::Result<()> {
        std::io::copy(reader, &mut self.file)
            .map(drop)
            .map_err(|err| {
                Fatal::Internal(format!(
                    "{}: writing results failed: {}",
                    self.path.display(),
                    io_reason(&err)
                ))
                .into()
            })
    }

    /// Append one record as a JSON line. A failure is evalctl's own (exit 4): the caller stops
    /// writing and keeps what finished.
    pub fn append(&mut self, record: &impl Serialize) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        self.file.write_all(&line).map_err(|err| {
            Fatal::Internal(format!(
                "{}: writing results failed: {}; the results after this one are not written",
                self.path.display(),
                io_reason(&err)
            ))
            .into()
        })
    }
}
