//! What the REST and gRPC front ends share: request validation (the wording of `fep evaluate`),
//! the limits, evaluation through the FEP engine, storing results, and the API's errors.
//!
//! Parsing and evaluating a request is CPU work: it runs on a blocking thread, never on the
//! async workers that answer `/health` and every other client, within `--request-timeout`. A
//! request past its deadline is answered `deadline_exceeded`; its evaluation stops at its next
//! test case and keeps its place among `--max-concurrent` until then.
//!
//! [`state`] holds the [`Engine`] (limits, token, admission, request validation), [`place`] a
//! request's place among `--max-concurrent` and its share of `--max-memory`, [`evaluate`]
//! evaluates a request into its stored document, [`stream`] evaluates one line by line, and
//! [`error`] holds the API's errors.

mod error;
mod evaluate;
mod place;
mod state;
mod stream;

pub use error::{ApiError, ErrorKind};
pub use evaluate::blocking;
#[cfg(test)]
pub use place::MemoryBudget;
pub use place::{JsonCount, Place};
pub use state::{too_many_test_cases, Engine, Limits, FEP_VERSION};
pub use stream::Line;
