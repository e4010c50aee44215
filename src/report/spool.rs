//! Where `spec score` keeps the evaluation records while it checks the runs file: nothing reaches
//! `--output` or stdout unless every line is a run record. The records end with the `run` member,
//! known only once every run is scored. When `--output` does not exist yet, the spool is an
//! unnamed file in its directory (Linux `O_TMPFILE`), each record holding room for the member
//! before its closing brace; once the member is known and fits (as many runs were scored as the
//! runs file was counted to hold), it is written into that room and the spool is linked as
//! `--output`, so the records are written once. Otherwise the member is inserted as the records
//! leave the spool: appended to an existing `--output`, written to stdout, or written once more to
//! a new unnamed file that is linked. Either way a run cut short leaves nothing behind.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, Write};
use std::path::Path;

use serde::Serialize;

use crate::error::Fatal;
use crate::mapped::{self, Mapped};
use crate::report::ResultsFile;

/// How many bytes of records are gathered before they are written: large writes, few system
/// calls.
const BUFFER: usize = 1 << 20;

/// The spooled records.
pub struct Spool {
    file: File,
    /// Records not written to `file` yet, each serialized straight into it.
    pending: Vec<u8>,
    /// The spool is an unnamed file in the directory of `--output` (which did not exist).
    unnamed: bool,
    /// The bytes each record holds free before its closing brace for its members.
    room: usize,
    /// Where each record's room starts in the file, while there is room.
    rooms: Vec<u64>,
    /// How many bytes have been written to `file`.
    written: u64,
}

impl Spool {
    /// A spool for records bound for `output` (`None`: stdout). When `output` does not exist
    /// yet, each record is given `room()` bytes for the members it will end with (their
    /// foreseen length), so that they can be written in place.
    pub fn create(output: Option<&Path>, room: impl FnOnce() -> usize) -> anyhow::Result<Spool> {
        let unnamed = output
            .filter(|path| std::fs::symlink_metadata(path).is_err())
            .and_then(|path| unnamed_file_beside(path).ok());
        let (file, unnamed) = match unnamed {
            Some(file) => (file, true),
            None => (
                tempfile::tempfile().map_err(|err| spool_error(&err))?,
                false,
            ),
        };
        Ok(Spool {
            file,
            pending: Vec::with_capacity(BUFFER + (BUFFER >> 3)),
            unnamed,
            room: if unnamed { room() } else { 0 },
            rooms: Vec::new(),
            written: 0,
        })
    }

    /// Spool one record (a JSON object) as a line.
    pub fn write(&mut self, record: &impl Serialize) -> anyhow::Result<()> {
        let start = self.pending.len();
        if let Err(err) = serde_json::to_writer(&mut self.pending, record) {
            self.pending.truncate(start);
            return Err(err.into());
        }
        if self.room > 0 && self.pending.len() > start && self.pending.ends_with(b"}") {
            let brace = self.pending.len() - 1;
            self.rooms.push(self.written + brace as u64);
            self.pending.resize(brace + self.room, b' ');
            self.pending.push(b'}');
        }
        self.pending.push(b'\n');
        if self.pending.len() >= BUFFER {
            self.write_pending()?;
        }
        Ok(())
    }

    fn write_pending(&mut self) -> anyhow::Result<()> {
        self.file
            .write_all(&self.pending)
            .map_err(|err| spool_error(&err))?;
        self.written += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }

    /// Append the records, each JSON object given `members` (`,"run":{...}`, known only once
    /// every run is scored) before its closing brace, to `output`. When `output` still does not
    /// exist, the members are written into the room the records hold (or, when they do not
    /// fit it, the records are written once more, with them, to an unnamed file beside
    /// `output`), and that file is linked as `output`; else they go to the end of it as they
    /// are read.
    pub fn append_to(mut self, output: &Path, members: &[u8]) -> anyhow::Result<()> {
        if !self.unnamed {
            return ResultsFile::open(output)?.append_from(&mut self.records(members)?);
        }
        let (mut file, linkable) = if self.write_into_rooms(members)? {
            (self.file, true)
        } else {
            let spool = Spool::create(Some(output), || 0)?;
            let linkable = spool.unnamed;
            let mut writer = BufWriter::with_capacity(BUFFER, spool.into_file()?);
            std::io::copy(&mut self.records(members)?, &mut writer)
                .map_err(|err| spool_error(&err))?;
            let file = writer
                .into_inner()
                .map_err(|err| spool_error(err.error()))?;
            (file, linkable)
        };
        if linkable && link_as(&file, output).is_ok() {
            return Ok(());
        }
        file.rewind().map_err(|err| spool_error(&err))?;
        ResultsFile::open(output)?.append_from(&mut file)
    }

    /// The spooled records from the start, each JSON object given `members` before its closing
    /// brace (in the room it holds) as it is read.
    pub fn records(self, members: &[u8]) -> anyhow::Result<WithMembers> {
        let room = self.room;
        let mut file = self.into_file()?;
        file.rewind().map_err(|err| spool_error(&err))?;
        Ok(WithMembers::new(file, room, members))
    }

    /// Write `members` into the room of every record, in place, through a mapping of the spool,
    /// a window at a time (no system call a record); `false` when they do not fit the room or
    /// the spool cannot be mapped (the records then leave the spool as they do for stdout).
    fn write_into_rooms(&mut self, members: &[u8]) -> anyhow::Result<bool> {
        if members.len() != self.room {
            return Ok(false);
        }
        self.write_pending()?;
        let (page, length) = (mapped::page_size(), members.len() as u64);
        let mut rooms = self.rooms.as_slice();
        // A window from the page of the first room left, holding every room that ends in it.
        while let Some(&first) = rooms.first() {
            let start = first - first % page;
            let end = (start + mapped::WINDOW)
                .min(self.written)
                .max(first + length);
            let count = rooms.partition_point(|&at| at + length <= end);
            // (When a window cannot be mapped, the rooms written so far are written over again
            // as the records are copied out of the spool.)
            let Some(mut window) = usize::try_from(end - start)
                .ok()
                .and_then(|len| Mapped::for_writing(&self.file, start, len))
            else {
                return Ok(false);
            };
            let bytes = window.bytes_mut();
            for &at in &rooms[..count] {
                let at = (at - start) as usize;
                bytes[at..at + members.len()].copy_from_slice(members);
            }
            rooms = &rooms[count..];
        }
        Ok(true)
    }

    fn into_file(mut self) -> anyhow::Result<File> {
        self.write_pending()?;
        Ok(self.file)
    }
}

/// The spooled records as they are read back, each given the members the records end with in
/// place of the room it holds for them.
pub struct WithMembers {
    spooled: BufReader<File>,
    /// The bytes each record holds free before its closing brace.
    room: usize,
    members: Vec<u8>,
    /// The record being given out, members inserted.
    line: Vec<u8>,
    /// How much of `line` has been given out.
    given: usize,
}

impl WithMembers {
    fn new(file: File, room: usize, members: &[u8]) -> WithMembers {
        WithMembers {
            spooled: BufReader::with_capacity(BUFFER, file),
            room,
            members: members.to_vec(),
            line: Vec::new(),
            given: 0,
        }
    }
}

impl Read for WithMembers {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        if self.given == self.line.len() {
            self.line.clear();
            self.given = 0;
            if self.spooled.read_until(b'\n', &mut self.line)? == 0 {
                return Ok(0);
            }
            // Every spooled line is a JSON object, its room and its newline: `...<room>}\n`.
            if let Some(end) = self.line.iter().rposition(|&byte| byte == b'}') {
                let start = end.saturating_sub(self.room);
                self.line.splice(start..end, self.members.iter().copied());
            }
        }
        let count = buffer.len().min(self.line.len() - self.given);
        buffer[..count].copy_from_slice(&self.line[self.given..self.given + count]);
        self.given += count;
        Ok(count)
    }
}

fn spool_error(err: &std::io::Error) -> anyhow::Error {
    Fatal::Internal(format!(
        "cannot write the evaluation records to a temporary file: {}",
        crate::text::io_reason(err)
    ))
    .into()
}

/// An unnamed file, open for reading and writing, in the directory `path` would be in; it gets
/// the mode of every results file evalctl creates (readable by its owner only).
#[cfg(target_os = "linux")]
fn unnamed_file_beside(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    crate::owner_only::file_options()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .open(directory)
}

#[cfg(not(target_os = "linux"))]
fn unnamed_file_beside(_: &Path) -> std::io::Result<File> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// Give the unnamed `file` the name `path`; fails when `path` exists.
#[cfg(target_os = "linux")]
fn link_as(file: &File, path: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let invalid = |_| std::io::Error::from(std::io::ErrorKind::InvalidInput);
    let source = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).map_err(invalid)?;
    let target = CString::new(path.as_os_str().as_bytes()).map_err(invalid)?;
    // SAFETY: both paths are NUL-terminated strings that outlive the call.
    let linked = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            source.as_ptr(),
            libc::AT_FDCWD,
            target.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if linked == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn link_as(_: &File, _: &Path) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `line` as the record it holds.
    fn record(line: &str) -> serde_json::Value {
        serde_json::from_str(line).expect("a JSON line")
    }

    fn spooled(output: &Path, room: usize, lines: &[&str], members: &[u8]) {
        let mut spool = Spool::create(Some(output), || room).expect("a spool");
        for line in lines {
            spool.write(&record(line)).expect("spooled");
        }
        spool.append_to(output, members).expect("appended");
    }

    #[test]
    fn records_given_their_members_become_a_new_output_or_are_appended_to_an_existing_one() {
        let dir = tempfile::tempdir().expect("a directory");
        let output = dir.path().join("records.jsonl");
        spooled(&output, 6, &["{\"a\":1}\n", "{\"b\":2}\n"], b",\"m\":0");
        spooled(&output, 6, &["{\"c\":3}\n"], b",\"m\":0");
        let written = std::fs::read_to_string(&output).expect("written");
        assert_eq!(
            written,
            "{\"a\":1,\"m\":0}\n{\"b\":2,\"m\":0}\n{\"c\":3,\"m\":0}\n"
        );
    }

    #[test]
    fn members_are_written_into_rooms_across_every_window_of_the_spool() {
        let dir = tempfile::tempdir().expect("a directory");
        let output = dir.path().join("records.jsonl");
        // 20,000 records of 1 KiB: the rooms span five windows, some across their edges.
        let text = "x".repeat(1000);
        let mut spool = Spool::create(Some(&output), || 7).expect("a spool");
        for index in 0..20_000 {
            spool
                .write(&serde_json::json!({"i": index, "t": text}))
                .expect("spooled");
        }
        spool.append_to(&output, b",\"m\":42").expect("appended");
        let written = std::fs::read_to_string(&output).expect("written");
        let lines: Vec<&str> = written.lines().collect();
        assert_eq!(lines.len(), 20_000);
        for (index, line) in lines.iter().enumerate() {
            assert_eq!(
                line.strip_prefix(&format!("{{\"i\":{index},\"t\":\"{text}\""))
                    .expect("the record"),
                ",\"m\":42}",
                "record {index}"
            );
        }
    }

    #[test]
    fn members_that_do_not_fit_the_room_foreseen_are_written_with_the_records_once_more() {
        let dir = tempfile::tempdir().expect("a directory");
        for (room, members) in [(0, ",\"m\":10"), (6, ",\"m\":10"), (9, ",\"m\":1")] {
            let output = dir.path().join(format!("records-{room}.jsonl"));
            spooled(&output, room, &["{\"a\":1}\n", "{}\n"], members.as_bytes());
            let written = std::fs::read_to_string(&output).expect("written");
            let expected = format!("{{\"a\":1{members}}}\n{{{members}}}\n");
            assert_eq!(written, expected, "room {room}");
        }
    }

    #[test]
    fn an_output_created_meanwhile_is_appended_to_and_a_dropped_spool_leaves_nothing() {
        let dir = tempfile::tempdir().expect("a directory");
        let output = dir.path().join("records.jsonl");
        for (room, late) in [(6, "{\"late\":1}\n"), (7, "{\"later\":2}\n")] {
            let mut spool = Spool::create(Some(&output), || room).expect("a spool");
            spool.write(&record(late)).expect("spooled");
            if !output.exists() {
                std::fs::write(&output, "{\"first\":1}\n").expect("written");
            }
            spool.append_to(&output, b",\"m\":0").expect("appended");
        }
        let written = std::fs::read_to_string(&output).expect("written");
        assert_eq!(
            written,
            "{\"first\":1}\n{\"late\":1,\"m\":0}\n{\"later\":2,\"m\":0}\n"
        );
        let other = dir.path().join("other.jsonl");
        let mut dropped = Spool::create(Some(&other), || 6).expect("a spool");
        dropped.write(&record("{}")).expect("spooled");
        drop(dropped);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("listed")
            .map(|entry| entry.expect("an entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("records.jsonl")]);
    }
}
