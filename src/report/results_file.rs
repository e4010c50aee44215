//! The one results writer (`run --output`, `tasks score --output`): one JSON line per result,
//! appended and flushed as each result is ready, so an interrupted command loses nothing that
//! finished. An existing file is appended to, never truncated; a new one is readable by its owner
//! only (results quote evaluators, which may quote secrets). The file is checked for writing
//! before any work starts (a problem then is bad input, exit 2); a write that fails once work has
//! begun stops the writing, the command finishes what it was doing, and exits 4.
//!
//! `run`'s results file is its journal ([`ResultsFile::in_background`]): one writer thread
//! takes the lines over a channel, so a slow disk never stalls the calls in flight; it writes
//! each batch as it comes, `fsync`s at least once a second while lines arrive, and once more at
//! [`ResultsFile::finish`].

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::{bad_input, Fatal, Problem};
use crate::input::Source;
use crate::runner::journal::{ends_with_newline, JournalReader};
use crate::text::io_reason;

/// `PATH: cannot open FLAG for writing: REASON` (the flag the user gave the path with).
fn cannot_open(path: &Path, flag: &str, reason: &str) -> anyhow::Error {
    bad_input(Problem::new(
        path.display().to_string(),
        format!("cannot open {flag} for writing: {reason}"),
    ))
}

/// How often, at least, the journal writer `fsync`s while lines arrive.
const SYNC_EVERY: Duration = Duration::from_secs(1);
/// How long the journal writer lets lines gather after a write before it looks for more.
const GATHER: Duration = Duration::from_millis(2);

/// An open results file.
pub struct ResultsFile {
    path: PathBuf,
    sink: Sink,
    /// The file read back, when it is a regular file: [`ResultsFile::finish`] writes its lines
    /// to the path again if the path no longer names it (removed while they were written).
    written: Option<File>,
}

/// Where appended lines go.
enum Sink {
    /// Written by the caller, line by line.
    Direct(File),
    /// Sent to the writer thread.
    /// Both are taken once the writer has failed and its error was reported.
    Background {
        lines: Option<Sender<Vec<u8>>>,
        writer: Option<JoinHandle<std::io::Result<()>>>,
        failed: Arc<AtomicBool>,
    },
}

impl ResultsFile {
    /// Check, without creating or changing anything, that [`ResultsFile::open`] would succeed
    /// for the file `flag` names: every command with `--output` calls this before any work.
    pub fn check_writable(path: &Path, flag: &str) -> anyhow::Result<()> {
        if path.as_os_str() == "-" {
            return Err(bad_input(Problem::new(
                flag,
                format!(
                    "'-' is not a file: results go to a file while the summary goes to stdout; \
                     name a file, e.g. {flag} results.jsonl"
                ),
            )));
        }
        let fail = |reason: String| cannot_open(path, flag, &reason);
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

    /// Check, before any work, the `--output` at `path` of a command that appends the lines of
    /// its scoring (`tasks score`, `tasks run`, `spec score`): it can be written, it is none of
    /// the command's `inputs` (each named as the problem says it), and it is a results file whose
    /// last line is whole ([`ResultsFile::check_appendable`]).
    pub fn check_scoring_output(path: &Path, inputs: &[(&str, &Path)]) -> anyhow::Result<()> {
        ResultsFile::check_writable(path, "--output")
            .and_then(|()| super::check_distinct(&[("--output", path)], inputs))
            .and_then(|()| ResultsFile::check_appendable(path, "--output"))
    }

    /// Check that result lines may be appended to the file at `path` that `flag` names, when
    /// it exists: it is a results file (its first line is a result line, of whichever run) and
    /// its last line is whole. A dataset or notes named by mistake, or a file a killed run cut
    /// short (appended lines would join its torn line), is bad input before any work.
    pub fn check_appendable(path: &Path, flag: &str) -> anyhow::Result<()> {
        if std::fs::metadata(path)
            .map_or(true, |metadata| metadata.len() == 0 || !metadata.is_file())
        {
            return Ok(());
        }
        let refuse = |reason: String| {
            bad_input(Problem::new(
                path.display().to_string(),
                format!("{reason}: name another {flag} file"),
            ))
        };
        let mut reader =
            JournalReader::open(&Source::File(path.to_path_buf())).map_err(bad_input)?;
        match reader.next() {
            Some(Err(problem)) => {
                return Err(refuse(format!(
                    "is not a results file (line {} is no result line)",
                    problem.line.unwrap_or(1)
                )))
            }
            None if reader.torn().is_some() => {
                return Err(refuse(
                    "holds only a line cut short (a run stopped while writing it?)".into(),
                ))
            }
            _ => {}
        }
        if !ends_with_newline(path) {
            return Err(bad_input(Problem::new(
                path.display().to_string(),
                format!(
                    "ends with a line cut short (no closing newline), which lines appended would \
                     join: remove that line, or name another {flag} file"
                ),
            )));
        }
        Ok(())
    }

    /// Open (create, readable by its owner only, or append to) `path`, already checked by
    /// [`ResultsFile::check_writable`], and hold it as its only writer: while another evalctl
    /// writes it (a second `run` or `tasks run` given the same file), it is bad input, since
    /// the two runs' lines would be mixed in it.
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let file = crate::owner_only::file_options()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|err| cannot_open(path, "the file", &io_reason(&err)))?;
        use std::os::fd::AsRawFd;
        // SAFETY: `file` is an open descriptor for the whole call; the lock goes with it.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(bad_input(Problem::new(
                path.display().to_string(),
                "another evalctl is writing this file now: wait until it has finished, or \
                 name another file",
            )));
        }
        Ok(ResultsFile {
            path: path.to_path_buf(),
            written: read_back(&file, path),
            sink: Sink::Direct(file),
        })
    }

    /// Hand the writing to a writer thread of its own (`run`'s journal): [`ResultsFile::append`]
    /// then only queues the line. Call [`ResultsFile::finish`] at the end.
    pub fn in_background(self) -> ResultsFile {
        let Sink::Direct(file) = self.sink else {
            return self;
        };
        let (lines, queued) = std::sync::mpsc::channel();
        let failed = Arc::new(AtomicBool::new(false));
        let writer = {
            let failed = Arc::clone(&failed);
            std::thread::spawn(move || {
                let written = write_queued(&file, &queued);
                // Said before the file is closed: whoever sees it closed sees the failure.
                failed.store(written.is_err(), Ordering::SeqCst);
                drop(file);
                written
            })
        };
        ResultsFile {
            path: self.path,
            written: self.written,
            sink: Sink::Background {
                lines: Some(lines),
                writer: Some(writer),
                failed,
            },
        }
    }

    /// Whether a write has failed (in the background, as far as the writer thread has got):
    /// the lines from there on are not in the file.
    pub fn has_failed(&self) -> bool {
        match &self.sink {
            Sink::Direct(_) => false,
            Sink::Background { failed, .. } => failed.load(Ordering::SeqCst),
        }
    }

    /// Write what is queued, `fsync` the file, and report the first write that failed. When
    /// the path no longer names the file (a cleanup removed it, or its folder, while the lines
    /// were written), the lines are written there again, and the warning that says so is
    /// returned.
    pub fn finish(self) -> anyhow::Result<Option<String>> {
        let path = self.path;
        match self.sink {
            Sink::Direct(file) => sync(&file).map_err(|err| write_failed(&path, &err))?,
            Sink::Background { lines, writer, .. } => {
                drop(lines);
                let written = writer.map_or(Ok(()), |writer| {
                    writer
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                });
                // The writer thread stops at its first failure, wherever the caller was then:
                // the same words as a failure an append saw.
                written.map_err(|err| lines_lost(&path, &err))?
            }
        }
        match self.written {
            Some(written) => write_again_if_gone(&path, written),
            None => Ok(None),
        }
    }

    /// Append everything `reader` holds (result lines spooled while the input was checked),
    /// streamed: memory stays flat however much there is.
    pub fn append_from(&mut self, reader: &mut impl std::io::Read) -> anyhow::Result<()> {
        let appended = match &mut self.sink {
            Sink::Direct(file) => std::io::copy(reader, file).map(drop),
            Sink::Background { .. } => {
                let mut spooled = Vec::new();
                reader
                    .read_to_end(&mut spooled)
                    .and_then(|_| self.write(spooled))
            }
        };
        appended.map_err(|err| {
            Fatal::Internal(format!(
                "{}: writing results failed: {}",
                self.path.display(),
                io_reason(&err)
            ))
            .into()
        })
    }

    /// Append one record as a JSON line. A failure is evalctl's own (exit 4): the caller stops
    /// writing and keeps what finished. In the background, a failure shows at the next append
    /// after it (or at [`ResultsFile::finish`]).
    pub fn append(&mut self, record: &impl Serialize) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        self.write(line).map_err(|err| lines_lost(&self.path, &err))
    }

    fn write(&mut self, bytes: Vec<u8>) -> std::io::Result<()> {
        match &mut self.sink {
            Sink::Direct(file) => file.write_all(&bytes),
            Sink::Background {
                lines,
                writer,
                failed,
            } => {
                if failed.load(Ordering::SeqCst) {
                    lines.take();
                    return match writer.take().map(JoinHandle::join) {
                        Some(Ok(Err(err))) => Err(err),
                        _ => Err(std::io::Error::other("the results writer stopped")),
                    };
                }
                // A send fails only when the writer is gone, which `failed` says first.
                if let Some(lines) = lines {
                    let _ = lines.send(bytes);
                }
                Ok(())
            }
        }
    }
}

/// A handle that reads back the regular file `file` opened at `path` (none for a device or a
/// FIFO, or when it cannot be opened for reading).
fn read_back(file: &File, path: &Path) -> Option<File> {
    use std::os::unix::fs::MetadataExt;
    let opened = file.metadata().ok().filter(std::fs::Metadata::is_file)?;
    let reader = File::open(path).ok()?;
    let read = reader.metadata().ok()?;
    (read.dev() == opened.dev() && read.ino() == opened.ino()).then_some(reader)
}

/// When `path` no longer names the file `written` reads (removed, or its folder removed, while
/// the lines were written: they would go with the last handle), write them to `path` again,
/// its folder made again, and say so. A path that names another file now is left as it is:
/// the lines go to `PATH.PID` beside it, and that is an error (exit 4).
fn write_again_if_gone(path: &Path, mut written: File) -> anyhow::Result<Option<String>> {
    use std::io::{Seek, SeekFrom};
    use std::os::unix::fs::MetadataExt;
    let ours = written.metadata().map_err(|err| write_failed(path, &err))?;
    let named = std::fs::metadata(path);
    if named
        .as_ref()
        .is_ok_and(|named| named.dev() == ours.dev() && named.ino() == ours.ino())
    {
        return Ok(None);
    }
    let replaced = named.is_ok();
    let target = if replaced {
        PathBuf::from(format!("{}.{}", path.display(), std::process::id()))
    } else {
        // A link whose file was removed: the file it names is made again.
        match std::fs::read_link(path) {
            Ok(linked) => path
                .parent()
                .map_or(linked.clone(), |dir| dir.join(&linked)),
            Err(_) => path.to_path_buf(),
        }
    };
    let copied = (|| {
        if let Some(dir) = target.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            crate::owner_only::create_dir_all(dir)?;
        }
        let mut again = crate::owner_only::file_options()
            .write(true)
            .create_new(true)
            .open(&target)?;
        written.seek(SeekFrom::Start(0))?;
        std::io::copy(&mut written, &mut again)?;
        again.sync_all()
    })();
    let shown = path.display();
    match (copied, replaced) {
        (Ok(()), false) => Ok(Some(format!(
            "{shown} was removed while the results were written to it: they are written to it \
             again"
        ))),
        (Ok(()), true) => Err(Fatal::Internal(format!(
            "{shown} was replaced by another file while the results were written to it: that \
             file is left as it is, and the results are in {}",
            target.display()
        ))
        .into()),
        (Err(err), replaced) => Err(Fatal::Internal(format!(
            "{shown} was {} while the results were written to it, and writing them to {} \
             failed: {}",
            if replaced { "replaced" } else { "removed" },
            target.display(),
            io_reason(&err)
        ))
        .into()),
    }
}

/// A write failed, and the lines from there on are not in the file.
fn lines_lost(path: &Path, err: &std::io::Error) -> anyhow::Error {
    write_failed_because(path, err, "; the results after this one are not written")
}

fn write_failed(path: &Path, err: &std::io::Error) -> anyhow::Error {
    write_failed_because(path, err, "")
}

/// `PATH: writing results failed: REASON` and what follows from it (`then`).
fn write_failed_because(path: &Path, err: &std::io::Error, then: &str) -> anyhow::Error {
    Fatal::Internal(format!(
        "{}: writing results failed: {}{then}",
        path.display(),
        io_reason(err)
    ))
    .into()
}

/// The writer thread: write each batch of queued lines as it comes (one `write` for all that
/// are waiting), `fsync` when a second has passed since the last one and lines were written,
/// and once more when the queue closes.
fn write_queued(file: &File, queued: &Receiver<Vec<u8>>) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 16, file);
    let mut synced = Instant::now();
    let mut dirty = false;
    loop {
        let next = if dirty {
            let left = SYNC_EVERY.saturating_sub(synced.elapsed());
            queued.recv_timeout(left)
        } else {
            queued.recv().map_err(|_| RecvTimeoutError::Disconnected)
        };
        match next {
            Ok(line) => {
                out.write_all(&line)?;
                while let Ok(line) = queued.try_recv() {
                    out.write_all(&line)?;
                }
                out.flush()?;
                dirty = true;
                // Let the next lines gather: one wake-up and one `write` then serve many calls
                // (a flood of fast calls would otherwise pay a thread switch per line).
                std::thread::sleep(GATHER);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if dirty && synced.elapsed() >= SYNC_EVERY {
            sync(out.get_ref())?;
            synced = Instant::now();
            dirty = false;
        }
    }
    out.flush()?;
    sync(out.get_ref())
}

/// Make what was written to `file` durable. A file that takes no sync (a character device such
/// as `/dev/null`, a FIFO: `EINVAL`) has nothing to keep.
fn sync(file: &File) -> std::io::Result<()> {
    match file.sync_data() {
        Err(err) if err.raw_os_error() == Some(libc::EINVAL) => Ok(()),
        synced => synced,
    }
}
