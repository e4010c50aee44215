//! What a child prints: its pipes read up to a cap (stdout's head, stderr's tail), and its
//! failures worded with the stderr it left.

use std::process::ExitStatus;

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::protocol::{CallError, ErrorKind};
use crate::text::{clip_tail, one_line};

/// How much stderr is kept for error messages: its last bytes (the rest is read and dropped).
pub(super) const MAX_STDERR_BYTES: usize = 16 * 1024;
/// How much of the kept stderr an error message quotes (its tail).
const STDERR_IN_MESSAGE: usize = 500;

/// What was read from a pipe.
#[derive(Default)]
pub(super) struct Captured {
    pub(super) bytes: Vec<u8>,
    /// More than the cap arrived.
    pub(super) overflowed: bool,
}

/// Which part of a pipe's output [`read_capped`] keeps.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Keep {
    /// The first `cap` bytes, and stop reading there (stdout: past the cap the answer is invalid
    /// and the caller kills the child).
    Head,
    /// The last `cap` bytes of a stream read to its end (stderr: its final line says what went
    /// wrong).
    Tail,
}

/// The least room [`read_capped`] offers each read.
const READ_AHEAD: usize = 8 * 1024;

/// Read a pipe into `into`, keeping at most `cap` bytes as `keep` says. What was read is in `into`
/// even when the read is abandoned half-way.
pub(super) async fn read_capped(
    pipe: &mut (impl AsyncRead + Unpin),
    into: &mut Captured,
    cap: usize,
    keep: Keep,
) {
    let Captured { bytes, overflowed } = into;
    loop {
        // Read straight into the spare room of `bytes` (no zeroed buffer to copy from: most
        // answers are a few bytes, and a run makes thousands of calls).
        bytes.reserve(READ_AHEAD);
        match pipe.read_buf(bytes).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if bytes.len() > cap {
            *overflowed = true;
            match keep {
                Keep::Head => {
                    bytes.truncate(cap);
                    break;
                }
                Keep::Tail => {
                    let excess = bytes.len() - cap;
                    bytes.drain(..excess);
                }
            }
        }
    }
}

pub(super) fn exit_reason(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("command exited with code {code}"),
        (None, Some(signal)) => format!("command was killed by signal {signal}"),
        (None, None) => "command failed".to_string(),
    }
}

pub(super) fn stderr_suffix(stderr: &str) -> String {
    let trimmed = stderr.trim();
    if trimmed.is_empty() {
        return String::new();
    }
    format!(
        "; stderr: {}",
        one_line(&clip_tail(trimmed, STDERR_IN_MESSAGE))
    )
}

/// An answer that is not JSON but holds a JSON object on a line of its own beside other lines
/// comes from an evaluator that prints its progress or debug lines to stdout: say so (a cause
/// every call shares, whatever the candidate).
pub(super) fn logs_on_stdout(error: CallError, stdout: &[u8]) -> CallError {
    if error.kind != ErrorKind::InvalidJson {
        return error;
    }
    let text = String::from_utf8_lossy(stdout);
    let mut lines = text.lines().filter(|line| !line.trim().is_empty());
    let has_object = lines.clone().any(|line| {
        matches!(
            serde_json::from_str(line.trim()),
            Ok(serde_json::Value::Object(_))
        )
    });
    if !has_object || lines.nth(1).is_none() {
        return error;
    }
    CallError::setup_fault(
        error.kind,
        format!(
            "{} — stdout must hold only the JSON object; log to stderr",
            error.message
        ),
    )
}

pub(super) fn with_stderr(mut error: CallError, stderr: &str) -> CallError {
    if matches!(
        error.kind,
        ErrorKind::InvalidJson | ErrorKind::InvalidOutput
    ) {
        error.message.push_str(&stderr_suffix(stderr));
    }
    error
}
