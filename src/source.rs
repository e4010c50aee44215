//! Where a file-or-stdin argument reads from (`-` means standard input), and reading it whole,
//! with problems worded the same for every command: `DISPLAY: reason`, stdin shown as `<stdin>`.

use std::io::Read;
use std::path::PathBuf;

use crate::input::read_input_file;
use crate::text::io_reason;

/// A file, or standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Standard input (`-`).
    Stdin,
    /// A file.
    File(PathBuf),
}

impl Source {
    /// `-` is standard input; anything else is a file path.
    pub fn from_arg(arg: &str) -> Source {
        match arg {
            "-" => Source::Stdin,
            path => Source::File(PathBuf::from(path)),
        }
    }

    /// How messages name it: the path as given, or `<stdin>`.
    pub fn display(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".to_string(),
            Source::File(path) => path.display().to_string(),
        }
    }

    /// All of it, or the problem `DISPLAY: reason` (a directory, a missing file, ...).
    pub fn read(&self) -> Result<Vec<u8>, String> {
        let read = match self {
            Source::Stdin => {
                let mut bytes = Vec::new();
                std::io::stdin()
                    .lock()
                    .read_to_end(&mut bytes)
                    .map(|_| bytes)
                    .map_err(|err| format!("cannot read: {}", io_reason(&err)))
            }
            Source::File(path) => read_input_file(path),
        };
        read.map_err(|reason| format!("{}: {reason}", self.display()))
    }
}
