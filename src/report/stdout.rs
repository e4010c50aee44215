//! Standard output for data: a reader going away (a broken pipe, as with `evalctl ... | head`) is
//! a normal end of the output, not an error, so a run still completes and its exit code still
//! reports its status. Documents reach it through [`super::Document`].

use std::io::{self, Write};

/// Standard output that takes a reader going away (a broken pipe, as with `| head`) as the end of
/// the output: the rest is discarded, so the run still completes and the exit code reports its
/// status.
pub struct UntilClosed<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> UntilClosed<W> {
    fn unless_closed<T>(
        &mut self,
        done: T,
        op: impl FnOnce(&mut W) -> io::Result<T>,
    ) -> io::Result<T> {
        if self.closed {
            return Ok(done);
        }
        match op(&mut self.inner) {
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(done)
            }
            other => other,
        }
    }
}

impl<W: Write> Write for UntilClosed<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.unless_closed(buf.len(), |inner| inner.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.unless_closed((), Write::flush)
    }
}

/// Locked standard output that discards what follows a broken pipe.
pub fn stdout_until_closed() -> UntilClosed<io::StdoutLock<'static>> {
    UntilClosed {
        inner: io::stdout().lock(),
        closed: false,
    }
}

/// Print `text` on stdout (see the module doc for a closed pipe).
pub fn print_stdout(text: &str) -> anyhow::Result<()> {
    let mut stdout = stdout_until_closed();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|err| stdout_error(&err))
}

/// A failed write to stdout (a full disk, say) as evalctl's own failure (exit 4), saying it was
/// stdout that could not be written.
pub fn stdout_error(err: &io::Error) -> anyhow::Error {
    crate::error::Fatal::Internal(format!(
        "cannot write to stdout: {}",
        crate::text::io_reason(err)
    ))
    .into()
}
