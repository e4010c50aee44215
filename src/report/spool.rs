//! Where `spec score` keeps the evaluation records while it checks the runs file: nothing reaches
//! `--output` or stdout unless every line is a run record. The records end with the `run` member,
//! known only once every run is scored, so it is inserted as they leave the spool: appended to an
//! existing `--output` or written to stdout as they are read back, or, when `--output` does not
//! exist yet, written once more to an unnamed file in its directory (Linux `O_TMPFILE`) that is
//! then linked as `--output`. Either way a run cut short leaves nothing behind.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, Write};
use std::path::Path;

use crate::error::Fatal;
use crate::report::ResultsFile;

/// The write buffer in front of the spool: large writes, few system calls.
const BUFFER: usize = 1 << 20;

/// The spooled records.
pub struct Spool {
    writer: BufWriter<File>,
    /// The spool is an unnamed file in the directory of `--output` (which did not exist).
    unnamed: bool,
}

impl Spool {
    /// A spool for records bound for `output` (`None`: stdout).
    pub fn create(output: Option<&Path>) -> anyhow::Result<Spool> {
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
            writer: BufWriter::with_capacity(BUFFER, file),
            unnamed,
        })
    }

    /// Spool one record line.
    pub fn write(&mut self, line: &[u8]) -> anyhow::Result<()> {
        self.writer.write_all(line).map_err(|err| spool_error(&err))
    }

    /// Append the records, each JSON object given `members` (`,"run":{...}`, known only once
    /// every run is scored) before its closing brace, to `output`. When `output` still does not
    /// exist they are written once more, to an unnamed file beside it that is then linked as
    /// `output`; else they go to the end of it as they are read.
    pub fn append_to(self, output: &Path, members: &[u8]) -> anyhow::Result<()> {
        if self.unnamed {
            let mut spool = Spool::create(Some(output))?;
            std::io::copy(&mut self.records(members)?, &mut spool.writer)
                .map_err(|err| spool_error(&err))?;
            let unnamed = spool.unnamed;
            let mut file = spool.into_file()?;
            if unnamed && link_as(&file, output).is_ok() {
                return Ok(());
            }
            file.rewind().map_err(|err| spool_error(&err))?;
            return ResultsFile::open(output)?.append_from(&mut file);
        }
        ResultsFile::open(output)?.append_from(&mut self.records(members)?)
    }

    /// The spooled records from the start, each JSON object given `members` before its closing
    /// brace as it is read.
    pub fn records(self, members: &[u8]) -> anyhow::Result<WithMembers> {
        let mut file = self.into_file()?;
        file.rewind().map_err(|err| spool_error(&err))?;
        Ok(WithMembers {
            spooled: BufReader::with_capacity(BUFFER, file),
            members: members.to_vec(),
            line: Vec::new(),
            given: 0,
        })
    }

    fn into_file(self) -> anyhow::Result<File> {
        self.writer
            .into_inner()
            .map_err(|err| spool_error(err.error()))
    }
}

/// The spooled records as they are read back, each given the members the records end with.
pub struct WithMembers {
    spooled: BufReader<File>,
    members: Vec<u8>,
    /// The record being given out, members inserted.
    line: Vec<u8>,
    /// How much of `line` has been given out.
    given: usize,
}

impl Read for WithMembers {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        if self.given == self.line.len() {
            self.line.clear();
            self.given = 0;
            if self.spooled.read_until(b'\n', &mut self.line)? == 0 {
                return Ok(0);
            }
            // Every spooled line is a JSON object and its newline: `...}\n`.
            if let Some(end) = self.line.iter().rposition(|&byte| byte == b'}') {
                self.line.splice(end..end, self.members.iter().copied());
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

    fn spooled(output: &Path, lines: &[&str]) {
        let mut spool = Spool::create(Some(output)).expect("a spool");
        for line in lines {
            spool.write(line.as_bytes()).expect("spooled");
        }
        spool.append_to(output, b",\"m\":0").expect("appended");
    }

    #[test]
    fn records_given_their_members_become_a_new_output_or_are_appended_to_an_existing_one() {
        let dir = tempfile::tempdir().expect("a directory");
        let output = dir.path().join("records.jsonl");
        spooled(&output, &["{\"a\":1}\n", "{\"b\":2}\n"]);
        spooled(&output, &["{\"c\":3}\n"]);
        let written = std::fs::read_to_string(&output).expect("written");
        assert_eq!(
            written,
            "{\"a\":1,\"m\":0}\n{\"b\":2,\"m\":0}\n{\"c\":3,\"m\":0}\n"
        );
    }

    #[test]
    fn an_output_created_meanwhile_is_appended_to_and_a_dropped_spool_leaves_nothing() {
        let dir = tempfile::tempdir().expect("a directory");
        let output = dir.path().join("records.jsonl");
        let mut spool = Spool::create(Some(&output)).expect("a spool");
        spool.write(b"{\"late\":1}\n").expect("spooled");
        std::fs::write(&output, "{\"first\":1}\n").expect("written");
        spool.append_to(&output, b",\"m\":0").expect("appended");
        let written = std::fs::read_to_string(&output).expect("written");
        assert_eq!(written, "{\"first\":1}\n{\"late\":1,\"m\":0}\n");
        let other = dir.path().join("other.jsonl");
        let mut dropped = Spool::create(Some(&other)).expect("a spool");
        dropped.write(b"{}\n").expect("spooled");
        drop(dropped);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("listed")
            .map(|entry| entry.expect("an entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("records.jsonl")]);
    }
}
