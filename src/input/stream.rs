//! The streaming JSONL reader: records read one line at a time from a file or a pipe, so memory
//! does not grow with the input. Lines are read by the same [`jsonl_line`] as whole-file inputs
//! and problems are worded the same. A read blocked on a pipe gives up when a signal caught by
//! [`crate::interrupt::catch_in_flag`] arrives.

use std::fs::File;
use std::io::{BufRead, BufReader};

use serde_json::Value;

use super::jsonl::{jsonl_line, parse_object_line};
use super::source::Source;
use crate::error::Problem;
use crate::interrupt::InterruptibleRead;
use crate::mapped::{self, Mapped};
use crate::text::io_reason;

/// The non-blank records of a JSONL file or stdin, in order.
pub struct JsonlStream {
    reader: Box<dyn BufRead>,
    /// How messages name the source.
    pub display: String,
    line: usize,
    buffer: Vec<u8>,
    done: bool,
    /// Reading failed before the end (its problem has been returned).
    pub unreadable: bool,
}

impl JsonlStream {
    /// The file behind `source` opened (`None` for stdin), or the problem. Opening a FIFO blocks
    /// until it has a writer: a caller that must stay interruptible opens on another thread
    /// (`crate::interrupt::unless_interrupted_blocking`), then reads with [`JsonlStream::new`].
    pub fn open_file(source: &Source) -> Result<Option<File>, Problem> {
        Self::check_file(source)?;
        match source {
            Source::Stdin => Ok(None),
            Source::File(path) => File::open(path).map(Some).map_err(|err| {
                Problem::new(
                    source.display(),
                    format!("cannot read: {}", io_reason(&err)),
                )
            }),
        }
    }

    /// The problem [`JsonlStream::open_file`] would report for a missing file or a directory,
    /// found without opening it (which could block on a FIFO).
    pub fn check_file(source: &Source) -> Result<(), Problem> {
        let Source::File(path) = source else {
            return Ok(());
        };
        match std::fs::metadata(path) {
            Ok(metadata) if metadata.is_dir() => {
                Err(Problem::new(source.display(), "is a directory, not a file"))
            }
            Ok(_) => Ok(()),
            Err(err) => Err(Problem::new(
                source.display(),
                format!("cannot read: {}", io_reason(&err)),
            )),
        }
    }

    /// How many records a reader will find in `source`, foreseen by counting its non-blank
    /// lines, where that is cheap and safe: `None` for stdin, a FIFO or any file that is not a
    /// regular one, or one that cannot be read, or when an interrupt arrives while it counts. A
    /// line that is not a record is counted too.
    pub fn foresee_records(source: &Source) -> Option<usize> {
        Self::count_records(source, crate::interrupt::interrupt_requested)
    }

    /// [`JsonlStream::foresee_records`] counted to the end even after an interrupt: how many
    /// records a reading that an interrupt cut short left in `source`, and read.
    pub fn records_in(source: &Source) -> Option<usize> {
        Self::count_records(source, || false)
    }

    /// The non-blank lines of `source`, unless `stop` says to give up.
    fn count_records(source: &Source, stop: impl Fn() -> bool) -> Option<usize> {
        let Source::File(path) = source else {
            return None;
        };
        if !std::fs::metadata(path).ok()?.is_file() {
            return None;
        }
        let file = File::open(path).ok()?;
        let size = file.metadata().ok()?.len();
        let (mut records, mut in_record) = (0, false);
        // Mapped a window at a time, not read: reading would copy every byte of a file often
        // larger than the records scored from it.
        for offset in (0..size).step_by(usize::try_from(mapped::WINDOW).ok()?) {
            if stop() {
                return None;
            }
            let len = usize::try_from(mapped::WINDOW.min(size - offset)).ok()?;
            let window = Mapped::for_reading(&file, offset, len)?;
            let mut rest = window.bytes();
            while !rest.is_empty() {
                let line_end = memchr::memchr(b'\n', rest);
                let part = &rest[..line_end.unwrap_or(rest.len())];
                in_record = in_record || part.iter().any(|byte| !byte.is_ascii_whitespace());
                let Some(newline) = line_end else { break };
                records += usize::from(in_record);
                in_record = false;
                rest = &rest[newline + 1..];
            }
        }
        Some(records + usize::from(in_record))
    }

    /// Read `file` (from [`JsonlStream::open_file`]), or stdin when there is none.
    pub fn new(source: &Source, file: Option<File>) -> JsonlStream {
        let reader: Box<dyn BufRead> = match file {
            Some(file) => Box::new(BufReader::with_capacity(1 << 16, InterruptibleRead(file))),
            None => Box::new(BufReader::with_capacity(
                1 << 16,
                InterruptibleRead(std::io::stdin().lock()),
            )),
        };
        JsonlStream {
            reader,
            display: source.display(),
            line: 0,
            buffer: Vec::new(),
            done: false,
            unreadable: false,
        }
    }

    /// The next record and its 1-based line, the problem of its line, or `None` at the end.
    pub fn next_record(&mut self) -> Option<Result<(usize, Value), Problem>> {
        let (line, text) = match self.next_text()? {
            Ok(found) => found,
            Err(problem) => return Some(Err(problem)),
        };
        Some(
            parse_object_line(text)
                .map(|value| (line, value))
                .map_err(|reason| Problem::at_line(self.display.as_str(), line, reason)),
        )
    }

    /// The length of the line last read when it has no closing newline: the end of a file
    /// whose writer stopped mid-line (every line evalctl writes ends with one).
    pub fn unterminated_len(&self) -> Option<usize> {
        (!self.buffer.ends_with(b"\n")).then_some(self.buffer.len())
    }

    /// The next non-blank line's text and its 1-based number, for a caller that decodes the line
    /// itself (straight into its own type, with [`parse_object_line`] to word a bad line); the
    /// problem of an unreadable line; or `None` at the end.
    pub fn next_text(&mut self) -> Option<Result<(usize, &str), Problem>> {
        // Find the next non-blank line; the loop only decides, so the buffer is borrowed for the
        // answer after it.
        loop {
            if self.done {
                return None;
            }
            self.buffer.clear();
            match read_line(self.reader.as_mut(), &mut self.buffer) {
                Ok(0) => self.done = true,
                Ok(_) => {
                    self.line += 1;
                    let raw = self.buffer.strip_suffix(b"\n").unwrap_or(&self.buffer);
                    if jsonl_line(self.line, raw).is_some() {
                        break;
                    }
                }
                Err(err) => {
                    self.done = true;
                    self.unreadable = true;
                    return Some(Err(Problem::new(
                        self.display.as_str(),
                        format!("cannot read: {}", io_reason(&err)),
                    )));
                }
            }
        }
        let line = self.line;
        let raw = self.buffer.strip_suffix(b"\n").unwrap_or(&self.buffer);
        let display = self.display.as_str();
        jsonl_line(line, raw).map(|text| {
            text.map(|text| (line, text))
                .map_err(|reason| Problem::at_line(display, line, reason))
        })
    }
}

/// `BufRead::read_until(b'\n')` with the newline found by the `memchr` crate's vectorised search
/// rather than the standard library's word-at-a-time one (run lines are kilobytes long).
fn read_line(reader: &mut dyn BufRead, line: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut read = 0;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let (used, done) = match memchr::memchr(b'\n', available) {
            Some(newline) => (newline + 1, true),
            None => (available.len(), available.is_empty()),
        };
        line.extend_from_slice(&available[..used]);
        reader.consume(used);
        read += used;
        if done {
            return Ok(read);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_records_foreseen_are_the_non_blank_lines_of_a_regular_file() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("runs.jsonl");
        let cases: [(&[u8], usize); 5] = [
            (b"", 0),
            (b"{}\n\n  \t\r\n{}", 2),
            (b"{}\r\n{\"a\":1}\n  {}\n", 3),
            (b"not json\n\n", 1),
            (b"\n\n\n", 0),
        ];
        for (content, records) in cases {
            std::fs::write(&path, content).expect("written");
            let source = Source::File(path.clone());
            assert_eq!(JsonlStream::foresee_records(&source), Some(records));
        }
        let long = format!("{{\"a\":\"{}\"}}\n", "x".repeat(3 << 20)).repeat(2);
        std::fs::write(&path, long).expect("written");
        assert_eq!(
            JsonlStream::foresee_records(&Source::File(path.clone())),
            Some(2)
        );
        assert_eq!(JsonlStream::foresee_records(&Source::Stdin), None);
        let directory = Source::File(dir.path().to_path_buf());
        assert_eq!(JsonlStream::foresee_records(&directory), None);
    }
}
