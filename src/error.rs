//! The error that ends a command early, carrying the exit code it maps to.
//!
//! Library code returns `anyhow::Error` with context at the edges; the variants here are the ones
//! whose exit code differs from plain bad input (exit 2).

use crate::exit::Exit;

/// An error that stops a command before or instead of evaluating, tagged with its exit code.
#[derive(Debug, thiserror::Error)]
pub enum Fatal {
    /// Bad usage or invalid input: exit 2. The message is already formatted for the user; it may
    /// span several lines (one per problem found).
    #[error("{0}")]
    BadInput(String),
    /// The evaluator failed preflight: exit 3.
    #[error("{0}")]
    Preflight(String),
    /// A signal stopped the command (SIGINT, SIGTERM, SIGHUP): exit 130.
    #[error("{0}")]
    Interrupted(String),
}

impl Fatal {
    /// The exit code this error maps to.
    pub fn exit(&self) -> Exit {
        match self {
            Fatal::BadInput(_) => Exit::BadInput,
            Fatal::Preflight(_) => Exit::PreflightFailed,
            Fatal::Interrupted(_) => Exit::Interrupted,
        }
    }
}

/// Shorthand for a bad-input error with a formatted message.
pub fn bad_input(message: impl Into<String>) -> anyhow::Error {
    Fatal::BadInput(message.into()).into()
}
