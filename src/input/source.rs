//! Where a file-or-stdin argument reads from (`-` means standard input), and the one way any
//! input file is opened and read: a directory, a missing file and an OS error are worded the same
//! for every command (`PATH: is a directory, not a file`, `PATH: cannot read: REASON`), stdin is
//! named `<stdin>`, and a whole JSON document is decoded the same everywhere (a UTF-8 BOM is
//! ignored, as in JSONL inputs).

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::Problem;
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

    /// The file's path, or `-` for standard input.
    pub fn path(&self) -> &Path {
        match self {
            Source::Stdin => Path::new("-"),
            Source::File(path) => path,
        }
    }

    /// How messages name it: the path as given, or `<stdin>`.
    pub fn display(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".to_string(),
            Source::File(path) => path.display().to_string(),
        }
    }

    /// All of it, or the problem (a directory, a missing file, ...).
    pub fn read(&self) -> Result<Vec<u8>, Problem> {
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
        read.map_err(|reason| Problem::new(self.display(), reason))
    }

    /// The one JSON document it holds (a checks file, an FEP request, a rubric): read whole, a
    /// leading UTF-8 BOM ignored; an empty file is a problem that says what `expected` is.
    pub fn read_json(&self, expected: &str) -> Result<Value, Problem> {
        self.read_json_and_text(expected).map(|(value, _)| value)
    }

    /// [`Source::read_json`], and the document's bytes, for locating its problems at lines
    /// ([`super::strict::JsonProblem::locate_in`]).
    pub fn read_json_and_text(&self, expected: &str) -> Result<(Value, Vec<u8>), Problem> {
        let bytes = self.read_document(expected)?;
        let value = super::parse_unique(&bytes)
            .map_err(|err| Problem::new(self.display(), document_json_reason(&err, &bytes)))?;
        Ok((value, bytes))
    }

    /// The bytes of a JSON document, its UTF-8 BOM removed, for a caller that parses them itself;
    /// a blank file is the problem `the file is empty (expected {expected})`.
    pub fn read_document(&self, expected: &str) -> Result<Vec<u8>, Problem> {
        let mut bytes = self.read()?;
        if bytes.starts_with(b"\xEF\xBB\xBF") {
            bytes.drain(..3);
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(Problem::new(
                self.display(),
                format!("the file is empty (expected {expected})"),
            ));
        }
        Ok(bytes)
    }
}

/// The bytes of an input file, or why not: `-` for stdin, which an input file is not read
/// from; `is a directory, not a file`; or `cannot read: <reason>` (the caller names the file).
pub fn read_input_file(path: &Path) -> Result<Vec<u8>, String> {
    if path.as_os_str() == "-" && !path.exists() {
        return Err("this input is read from a file, not stdin: name the file".to_string());
    }
    if path.is_dir() {
        return Err("is a directory, not a file".to_string());
    }
    std::fs::read(path).map_err(|err| format!("cannot read: {}", io_reason(&err)))
}

/// Why `dir` cannot be a working directory (`no such directory`, `is a file, not a directory`),
/// or `None` when it is a directory (the caller names the flag and the path).
pub fn not_a_directory(dir: &Path) -> Option<&'static str> {
    match std::fs::metadata(dir) {
        Ok(metadata) if metadata.is_dir() => None,
        Ok(_) => Some("is a file, not a directory"),
        Err(_) => Some("no such directory"),
    }
}

/// A serde_json error in `document`, a whole document: "invalid JSON: <what> at line L, column
/// C", and when a second object or array starts a line, that the file looks like JSONL. A byte
/// that is not UTF-8, where the parser stopped or before, is said as the JSONL readers say it:
/// "invalid UTF-8 (bad byte at line L, column C)" (column in bytes).
pub fn document_json_reason(err: &serde_json::Error, document: &[u8]) -> String {
    if let Err(bad) = std::str::from_utf8(document) {
        let before = &document[..bad.valid_up_to()];
        let line = before.iter().filter(|&&byte| byte == b'\n').count() + 1;
        let column = before
            .iter()
            .rev()
            .take_while(|&&byte| byte != b'\n')
            .count()
            + 1;
        if (line, column) <= (err.line(), err.column()) {
            return format!("invalid UTF-8 (bad byte at line {line}, column {column})");
        }
    }
    if super::unique_json::is_repeated_key(err) {
        return format!(
            "{} (the second at line {}, column {}): keep one",
            json_error_what(err),
            err.line(),
            err.column()
        );
    }
    let jsonl = if second_value_starts_line(err, document) {
        " (a JSON value on each line, as in a JSONL file: this takes one JSON document)"
    } else {
        ""
    };
    format!(
        "invalid JSON: {} at line {}, column {}{jsonl}",
        json_error_what(err),
        err.line(),
        err.column()
    )
}

/// Whether `err` is a second JSON object or array starting a line of `document` (a JSONL file
/// given where one document belongs), rather than a stray character after the document.
pub fn second_value_starts_line(err: &serde_json::Error, document: &[u8]) -> bool {
    json_error_what(err) == "trailing characters"
        && err.column() == 1
        && document
            .split(|&byte| byte == b'\n')
            .nth(err.line().saturating_sub(1))
            .and_then(|line| line.first())
            .is_some_and(|first| matches!(first, b'{' | b'['))
}

/// A serde_json error's description without its position, in people's words: what it
/// expected, how deep JSON may nest, what a lone surrogate escape is.
pub fn json_error_what(err: &serde_json::Error) -> String {
    let message = err.to_string();
    let what = message
        .rfind(" at line ")
        .map_or(message.as_str(), |cut| &message[..cut]);
    match what {
        "recursion limit exceeded" => {
            return "arrays and objects nest deeper than 127 levels (the limit)".to_string()
        }
        // serde_json's words for `\ud83d` not followed by the `\u` escape of a low surrogate,
        // and for a low surrogate alone: half of a character written as two UTF-16 escapes.
        "unexpected end of hex escape" | "lone leading surrogate in hex escape" => {
            return "a \\u escape of half a UTF-16 surrogate pair (\\uD800-\\uDFFF) without \
                    its other half: a string must hold Unicode characters"
                .to_string()
        }
        _ => {}
    }
    if what == "number out of range" {
        return "a number too large for a 64-bit float (beyond ±1.8e308)".to_string();
    }
    // `invalid type: string "0.5", expected f64`, `invalid value: integer `-1`, expected usize`:
    // said the house way round, `expected a number, found string "0.5"`.
    match what.rsplit_once(", expected ") {
        Some((found, expected)) => super::strict::expected_found(found, expected),
        None => what.to_string(),
    }
}

/// Where the symbolic link `path` leads, followed link by link (at most 40, as the kernel
/// follows them) whether or not its last target exists: `None` when `path` is no link.
pub fn link_target(path: &Path) -> Option<PathBuf> {
    let mut current = path.to_path_buf();
    let mut followed = false;
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&current) else {
            break;
        };
        followed = true;
        current = match current.parent() {
            Some(dir) if target.is_relative() => dir.join(target),
            _ => target,
        };
    }
    followed.then_some(current)
}

/// Whether `a` and `b` are one regular file: both exist and share device and inode, or one does
/// not exist yet and both resolve to the same path (their directories resolved, links
/// followed). A device or FIFO (`/dev/null`) may take any number of outputs.
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.is_file() && b.is_file() && a.dev() == b.dev() && a.ino() == b.ino(),
        (Ok(_), Err(_)) | (Err(_), Ok(_)) => false,
        (Err(_), Err(_)) => resolved(a) == resolved(b),
    }
}

/// The path a file that does not exist yet would have: its directory resolved (links followed,
/// `..` taken), its name kept, or, when it is a link to nothing yet, the path the link names
/// (a report written through it would create that file).
fn resolved(path: &Path) -> PathBuf {
    let path = link_target(path).unwrap_or_else(|| path.to_path_buf());
    let absolute = std::path::absolute(&path).unwrap_or(path);
    match (absolute.parent(), absolute.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .map(|dir| dir.join(name))
            .unwrap_or(absolute),
        _ => absolute,
    }
}

#[cfg(test)]
mod tests {
    use super::json_error_what;

    /// serde's complaint about `json` decoded as `T`, as a reason.
    fn reason<T: serde::de::DeserializeOwned + std::fmt::Debug>(json: &str) -> String {
        json_error_what(&serde_json::from_str::<T>(json).unwrap_err())
    }

    #[test]
    fn serde_complaints_are_said_the_house_way_round() {
        assert_eq!(
            reason::<f64>("\"0.5\""),
            "expected a number, found string \"0.5\""
        );
        assert_eq!(
            reason::<usize>("-1"),
            "expected a whole number of 0 or more, found -1"
        );
        assert_eq!(
            reason::<u64>("1.5"),
            "expected a whole number of 0 or more, found 1.5"
        );
        assert_eq!(
            reason::<i32>("true"),
            "expected an integer, found boolean true"
        );
        assert_eq!(
            reason::<f64>("1e400"),
            "a number too large for a 64-bit float (beyond ±1.8e308)"
        );
    }
}
