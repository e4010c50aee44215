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

/// A writer of JSON that writes the characters a terminal obeys and JSON may hold raw (DEL, the
/// C1 controls such as U+009B, which some terminals read as an escape sequence, and the
/// bidirectional controls) as `\u` escapes: the same JSON value, safe to print. They stand only
/// inside strings, where JSON escapes every other control itself. JSON may come in pieces
/// (`fep evaluate`'s): a character split between two writes is held until its end arrives.
pub struct JsonVisible<W> {
    inner: W,
    /// The start of a character the last write ended inside.
    held: Vec<u8>,
}

impl<W: Write> JsonVisible<W> {
    /// JSON written to `inner`, escaped.
    pub fn new(inner: W) -> JsonVisible<W> {
        JsonVisible {
            inner,
            held: Vec::new(),
        }
    }

    fn escape(&mut self, bytes: &[u8]) -> io::Result<()> {
        let (mut written, mut at) = (0, 0);
        while let Some(found) = memchr::memchr3(0x7f, 0xc2, 0xe2, &bytes[at..]) {
            let start = at + found;
            // The UTF-8 of DEL, U+0080-U+009F, U+202A-U+202E and U+2066-U+2069.
            let escaped = match &bytes[start..] {
                [0x7f, ..] => Some((1, 0x7f)),
                [0xc2, second @ 0x80..=0x9f, ..] => Some((2, u32::from(*second))),
                [0xe2, 0x80, third @ 0xaa..=0xae, ..] => {
                    Some((3, 0x2000 | u32::from(third & 0x3f)))
                }
                [0xe2, 0x81, third @ 0xa6..=0xa9, ..] => {
                    Some((3, 0x2040 | u32::from(third & 0x3f)))
                }
                partial @ ([0xc2] | [0xe2] | [0xe2, 0x80 | 0x81]) => {
                    self.inner.write_all(&bytes[written..start])?;
                    self.held = partial.to_vec();
                    return Ok(());
                }
                _ => None,
            };
            at = start + 1;
            if let Some((length, code)) = escaped {
                self.inner.write_all(&bytes[written..start])?;
                write!(self.inner, "\\u{code:04x}")?;
                at = start + length;
                written = at;
            }
        }
        self.inner.write_all(&bytes[written..])
    }
}

impl<W: Write> Write for JsonVisible<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.held.is_empty() {
            self.escape(buf)?;
        } else {
            let mut joined = std::mem::take(&mut self.held);
            joined.extend_from_slice(buf);
            self.escape(&joined)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let held = std::mem::take(&mut self.held);
        self.inner.write_all(&held)?;
        self.inner.flush()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_in_any_pieces_has_what_a_terminal_would_obey_escaped_and_stays_the_same_value() {
        let value = serde_json::json!({"id": "c1\u{9b}31m\u{7f} \u{202e}x\u{2069} …é\u{85}",
                                       "plain": "\u{2026}\u{2030}\u{c3}"});
        let whole = serde_json::to_string(&value).expect("serialized");
        let expected = r#"{"id":"c1\u009b31m\u007f \u202ex\u2069 …é\u0085","plain":"…‰Ã"}"#;
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(expected).expect("JSON"),
            value
        );
        for piece in [1, 2, 3, 4, whole.len()] {
            let mut out = JsonVisible::new(Vec::new());
            for chunk in whole.as_bytes().chunks(piece) {
                out.write_all(chunk).expect("written");
            }
            out.flush().expect("flushed");
            assert_eq!(
                String::from_utf8(out.inner).expect("UTF-8"),
                expected,
                "{piece}"
            );
        }
    }
}
