//! What one attempt at an evaluator call produced: a score or a typed error, the side information,
//! and whether the runner may retry it.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The error kinds a failed call can have (`docs/output.md`, results files); each carries exactly
/// one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The evaluator process could not be started.
    Spawn,
    /// The evaluator process exited non-zero (or was killed by a signal).
    ExitStatus,
    /// The call did not finish within `--timeout`.
    Timeout,
    /// The output is not JSON.
    InvalidJson,
    /// The output is JSON but not a usable result (not an object, too large, ...).
    InvalidOutput,
    /// The output object has no `score`.
    MissingScore,
    /// `score` is a string, bool, null, array or object.
    NonNumericScore,
    /// `score` is NaN, ±Infinity or overflows f64.
    NonFiniteScore,
    /// `score` is outside [0, 1] under `--score-range unit`.
    OutOfRange,
    /// The HTTP evaluator answered with a non-2xx status.
    HttpStatus,
    /// The HTTP request failed below HTTP (connect, reset, ...).
    Transport,
    /// Nothing was there to score: a task no output answered (`tasks score`, `tasks run`).
    MissingOutput,
    /// The run was stopped (Ctrl-C, SIGTERM, SIGHUP) after the task model answered and before
    /// the evaluator scored the answer: the line keeps the answer and what it spent, and
    /// answers no call (`--resume` scores the answer).
    Interrupted,
}

impl ErrorKind {
    /// The kind's name as it appears in result lines (`non_finite_score`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Spawn => "spawn",
            ErrorKind::ExitStatus => "exit_status",
            ErrorKind::Timeout => "timeout",
            ErrorKind::InvalidJson => "invalid_json",
            ErrorKind::InvalidOutput => "invalid_output",
            ErrorKind::MissingScore => "missing_score",
            ErrorKind::NonNumericScore => "non_numeric_score",
            ErrorKind::NonFiniteScore => "non_finite_score",
            ErrorKind::OutOfRange => "out_of_range",
            ErrorKind::HttpStatus => "http_status",
            ErrorKind::Transport => "transport",
            ErrorKind::MissingOutput => "missing_output",
            ErrorKind::Interrupted => "interrupted",
        }
    }
}

impl Serialize for ErrorKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl ErrorKind {
    /// Every kind, for reading a kind back from its name.
    const ALL: [ErrorKind; 13] = [
        ErrorKind::Spawn,
        ErrorKind::ExitStatus,
        ErrorKind::Timeout,
        ErrorKind::InvalidJson,
        ErrorKind::InvalidOutput,
        ErrorKind::MissingScore,
        ErrorKind::NonNumericScore,
        ErrorKind::NonFiniteScore,
        ErrorKind::OutOfRange,
        ErrorKind::HttpStatus,
        ErrorKind::Transport,
        ErrorKind::MissingOutput,
        ErrorKind::Interrupted,
    ];
}

/// A kind read back from a results file by its [`ErrorKind::as_str`] name.
impl<'de> Deserialize<'de> for ErrorKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        ErrorKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = ErrorKind::ALL.iter().map(|kind| kind.as_str()).collect();
                serde::de::Error::custom(format!(
                    "unknown error kind `{name}` (expected one of {})",
                    names.join(", ")
                ))
            })
    }
}

/// A failed call: its kind and a human-readable reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallError {
    /// Which of the documented kinds this is.
    pub kind: ErrorKind,
    /// What went wrong, for the user (never contains a secret).
    pub message: String,
    /// The message names a cause evalctl recognised that no candidate changes (log lines on
    /// stdout, refused credentials): a failed preflight probe then does not suggest
    /// `--skip-preflight`. Not part of result lines.
    #[serde(skip)]
    pub setup_fault: bool,
}

impl CallError {
    /// A new error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        CallError {
            kind,
            message: message.into(),
            setup_fault: false,
        }
    }

    /// A new error of `kind` whose `message` names a cause no candidate changes.
    pub fn setup_fault(kind: ErrorKind, message: impl Into<String>) -> Self {
        CallError {
            setup_fault: true,
            ..CallError::new(kind, message)
        }
    }
}

/// Whether an attempt may be retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Final: a score, a bad score, a non-zero exit, a timeout of a command.
    Never,
    /// Transient (transport failure, HTTP 429 or 5xx): retry, after the server's `Retry-After`
    /// when it gave one, else after the runner's backoff.
    Allowed {
        /// The server's `Retry-After`, if any.
        after: Option<Duration>,
    },
}

/// What an in-process evaluator (built-in checks, an evaluation spec) reports beyond its score,
/// typed, for the summary (the same facts are in the side information for people).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// The evaluation spec's pass verdict, when there is one.
    pub passed: Option<bool>,
    /// The built-in checks that errored (and counted as failed).
    pub errored_checks: Vec<String>,
}

/// One attempt at an evaluator call.
#[derive(Debug, Clone)]
pub struct Attempt {
    /// The validated score, or why there is none.
    pub score: Result<f64, CallError>,
    /// Every key of the evaluator's answer except `score`, verbatim (also on errors).
    pub side_info: Map<String, Value>,
    /// May the runner try again?
    pub retry: Retry,
    /// What an in-process evaluator reports beyond its score.
    pub findings: Findings,
}

impl Attempt {
    /// A final failed attempt with no side information.
    pub fn failed(error: CallError) -> Self {
        Attempt {
            score: Err(error),
            side_info: Map::new(),
            retry: Retry::Never,
            findings: Findings::default(),
        }
    }

    /// A failed attempt the runner may retry.
    pub fn transient(error: CallError, after: Option<Duration>) -> Self {
        Attempt {
            score: Err(error),
            side_info: Map::new(),
            retry: Retry::Allowed { after },
            findings: Findings::default(),
        }
    }
}
