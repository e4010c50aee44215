//! The result of one check on one test case (FEP section 2.3.4), serialised straight from
//! borrowed data: resolved argument values point into the check or the evaluation context.

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::timestamp::Timestamp;

/// Execution status of a check, a test case or a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Ran to the end.
    Completed,
    /// Skipped (no error elsewhere). Part of FEP's status vocabulary and of its precedence
    /// rule; none of the four standard checks skips, so evalctl never produces it yet.
    #[allow(dead_code)]
    Skip,
    /// Could not run: see its `error`.
    Error,
}

impl Status {
    /// The status of a group (FEP 4.1): `error` if any member errored, else `skip` if any was
    /// skipped, else `completed` (also for an empty group).
    pub fn combine(statuses: impl IntoIterator<Item = Status>) -> Status {
        statuses.into_iter().max().unwrap_or(Status::Completed)
    }
}

/// Category of a check error (FEP 2.3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    /// A JSONPath selected nothing or could not be evaluated.
    JsonpathError,
    /// An argument is missing, unknown or of the wrong type, or the check is malformed.
    ValidationError,
}

/// Why a check could not run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckError {
    /// The category.
    #[serde(rename = "type")]
    pub kind: ErrorType,
    /// What went wrong, naming the argument or path.
    pub message: String,
    /// Whether retrying could help: never, for deterministic checks.
    pub recoverable: bool,
}

impl CheckError {
    /// A `validation_error`.
    pub fn validation(message: impl Into<String>) -> Self {
        Self::new(ErrorType::ValidationError, message)
    }

    /// A `jsonpath_error`.
    pub fn jsonpath(message: impl Into<String>) -> Self {
        Self::new(ErrorType::JsonpathError, message)
    }

    fn new(kind: ErrorType, message: impl Into<String>) -> Self {
        CheckError {
            kind,
            message: message.into(),
            recoverable: false,
        }
    }
}

/// One argument after resolution: its name, the JSONPath it came from (if any) and its value.
#[derive(Debug, Clone, Copy)]
pub struct Resolved<'a> {
    /// The argument name.
    pub name: &'a str,
    /// The JSONPath, for arguments that were paths.
    pub jsonpath: Option<&'a str>,
    /// The resolved value.
    pub value: &'a Value,
}

/// The result of one check on one evaluation context.
#[derive(Debug, Clone)]
pub struct CheckResult<'a> {
    /// The check type, e.g. `exact_match`.
    pub check_type: &'static str,
    /// `passed`, when the check completed.
    pub outcome: Result<bool, CheckError>,
    /// The arguments that resolved, in the order they were given.
    pub resolved: Vec<Resolved<'a>>,
    /// When the check ran.
    pub evaluated_at: Timestamp,
    /// The check implementation's semantic version.
    pub check_version: &'static str,
    /// How long the check took, in milliseconds.
    pub execution_time_ms: f64,
}

impl CheckResult<'_> {
    /// `completed` or `error` (the standard checks never skip).
    pub fn status(&self) -> Status {
        match self.outcome {
            Ok(_) => Status::Completed,
            Err(_) => Status::Error,
        }
    }

    /// Whether the check completed and passed.
    pub fn passed(&self) -> bool {
        matches!(self.outcome, Ok(true))
    }
}

impl Serialize for CheckResult<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = if self.outcome.is_err() { 7 } else { 6 };
        let mut out = serializer.serialize_struct("CheckResult", fields)?;
        out.serialize_field("check_type", self.check_type)?;
        out.serialize_field("status", &self.status())?;
        out.serialize_field("results", &Outcome(&self.outcome))?;
        out.serialize_field("resolved_arguments", &ResolvedArguments(&self.resolved))?;
        out.serialize_field("evaluated_at", &self.evaluated_at)?;
        out.serialize_field(
            "metadata",
            &Metadata {
                check_version: self.check_version,
                execution_time_ms: self.execution_time_ms,
            },
        )?;
        if let Err(error) = &self.outcome {
            out.serialize_field("error", error)?;
        }
        out.end()
    }
}

/// `results`: `{"passed": bool}`, or `{}` when the check errored.
struct Outcome<'r>(&'r Result<bool, CheckError>);

impl Serialize for Outcome<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Ok(passed) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("passed", passed)?;
                map.end()
            }
            Err(_) => serializer.serialize_map(Some(0))?.end(),
        }
    }
}

struct ResolvedArguments<'r, 'a>(&'r [Resolved<'a>]);

impl Serialize for ResolvedArguments<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for argument in self.0 {
            map.serialize_entry(argument.name, &ResolvedValue(argument))?;
        }
        map.end()
    }
}

struct ResolvedValue<'r, 'a>(&'r Resolved<'a>);

impl Serialize for ResolvedValue<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let argument = self.0;
        let mut map =
            serializer.serialize_map(Some(1 + usize::from(argument.jsonpath.is_some())))?;
        if let Some(path) = argument.jsonpath {
            map.serialize_entry("jsonpath", path)?;
        }
        map.serialize_entry("value", argument.value)?;
        map.end()
    }
}

#[derive(Serialize)]
struct Metadata {
    check_version: &'static str,
    execution_time_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_status_follows_the_precedence_rules() {
        use Status::*;
        assert_eq!(Status::combine([]), Completed);
        assert_eq!(Status::combine([Completed, Completed]), Completed);
        assert_eq!(Status::combine([Completed, Skip]), Skip);
        assert_eq!(Status::combine([Skip, Error, Completed]), Error);
    }
}
