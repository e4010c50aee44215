//! Protocol v2: the payload every adapter sends, the one score validator every parse path and
//! preflight share, the outcome of a call with its error kinds, and how a failed call is retried.

/// The most an evaluator may answer (a command's stdout, an HTTP body); more is an
/// `invalid_output` error, not an out-of-memory.
pub const MAX_OUTPUT_BYTES: usize = 8 * 1024 * 1024;

mod lenient_json;
mod outcome;
mod payload;
mod retry;
mod score;

pub use lenient_json::{offset_as_written, parse_lenient, restore_tokens, to_standard_json};
pub use outcome::{Attempt, CallError, ErrorKind, Findings, Retry};
pub use payload::{build_payload, PREFLIGHT_CANDIDATE};
pub use retry::{with_retries, CallWaits};
pub use score::{parse_evaluator_output, validate_score, ScoreRange};
