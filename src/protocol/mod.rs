//! Protocol v2: the payload every adapter sends, the one score validator every parse path and
//! preflight share, and the outcome of a call with its error kinds.

mod lenient_json;
mod outcome;
mod payload;
mod score;

pub use lenient_json::{replace_nonfinite_tokens, restore_tokens};
pub use outcome::{Attempt, CallError, ErrorKind, Findings, Retry};
pub use payload::{build_payload, PREFLIGHT_CANDIDATE};
pub use score::{parse_evaluator_output, validate_score, ScoreRange};
