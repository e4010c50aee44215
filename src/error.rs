//! What goes wrong, typed: a [`Problem`] is one located problem with something the user gave (a
//! file, a line in it, a place inside a document, or a flag); a [`Fatal`] is the error that ends a
//! command, one variant per failure class, each with the exit code it maps to.
//!
//! Messages carry no `error: ` prefix and no colour: the report layer adds both, on every line.

use std::fmt;

use crate::exit::Exit;

/// One problem with an input, located as precisely as the input allows:
/// `SOURCE[:LINE][: LOCATION]: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Problem {
    /// What the problem is in: a path as given, `<stdin>`, or a flag such as `--objective`.
    pub source: String,
    /// The 1-based line in `source`, when it has lines.
    pub line: Option<usize>,
    /// Where inside the line or document: a JSON location (`checks[1].arguments`), a task id, ...
    pub location: Option<String>,
    /// What is wrong, and where it helps, how to fix it.
    pub message: String,
}

impl Problem {
    /// A problem with `source` as a whole (a file, stdin or a flag).
    pub fn new(source: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            source: source.into(),
            line: None,
            location: None,
            message: message.into(),
        }
    }

    /// A problem on one line of `source`.
    pub fn at_line(source: impl Into<String>, line: usize, message: impl Into<String>) -> Problem {
        Problem {
            line: Some(line),
            ..Problem::new(source, message)
        }
    }

    /// The same problem, placed at `location` inside its line or document.
    pub fn at(mut self, location: impl Into<String>) -> Problem {
        self.location = Some(location.into());
        self
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(location) = &self.location {
            write!(f, ": {location}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// An error that stops a command, tagged with its exit code. Any other error reaching the top is
/// evalctl's own failure (exit 4).
#[derive(Debug, thiserror::Error)]
pub enum Fatal {
    /// Bad usage or invalid input: exit 2, nothing was evaluated. Every problem found, in order.
    #[error("{}", lines(.0))]
    Invalid(Vec<Problem>),
    /// The evaluator failed preflight: exit 3. One line naming the evaluator and the cause.
    #[error("{0}")]
    Preflight(String),
    /// A signal stopped the command (SIGINT, SIGTERM or SIGHUP): exit 130.
    #[error("{0}")]
    Interrupted(String),
    /// evalctl itself failed after evaluation began (a write failed, a full disk): exit 4.
    #[error("{0}")]
    Internal(String),
}

fn lines(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(Problem::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

impl Fatal {
    /// The exit code this error maps to.
    pub fn exit(&self) -> Exit {
        match self {
            Fatal::Invalid(_) => Exit::BadInput,
            Fatal::Preflight(_) => Exit::PreflightFailed,
            Fatal::Interrupted(_) => Exit::Interrupted,
            Fatal::Internal(_) => Exit::Internal,
        }
    }

    /// The exit code of any error: a [`Fatal`]'s own, else exit 4 (evalctl itself failed).
    pub fn exit_of(error: &anyhow::Error) -> Exit {
        error
            .downcast_ref::<Fatal>()
            .map_or(Exit::Internal, Fatal::exit)
    }

    /// One error for several: their bad-input problems together when every one is bad input,
    /// else the first that is not.
    pub fn merge(errors: impl IntoIterator<Item = anyhow::Error>) -> anyhow::Error {
        let mut problems = Vec::new();
        for error in errors {
            match error.downcast::<Fatal>() {
                Ok(Fatal::Invalid(mut found)) => problems.append(&mut found),
                Ok(other) => return other.into(),
                Err(other) => return other,
            }
        }
        Fatal::Invalid(problems).into()
    }

    /// The messages this error reports, one a line, without prefix.
    pub fn messages(error: &anyhow::Error) -> Vec<String> {
        match error.downcast_ref::<Fatal>() {
            Some(Fatal::Invalid(problems)) => problems.iter().map(Problem::to_string).collect(),
            Some(fatal) => fatal.to_string().lines().map(str::to_string).collect(),
            None => vec![format!("{error:#}")],
        }
    }
}

/// A bad-input error (exit 2) for one problem.
pub fn bad_input(problem: Problem) -> anyhow::Error {
    Fatal::Invalid(vec![problem]).into()
}

/// A bad-input error (exit 2) for every problem in `problems` (which must not be empty).
pub fn invalid(problems: Vec<Problem>) -> anyhow::Error {
    Fatal::Invalid(problems).into()
}

/// A bad-input error about a flag: `FLAG: MESSAGE`.
pub fn bad_flag(flag: &str, message: impl Into<String>) -> anyhow::Error {
    bad_input(Problem::new(flag, message))
}
