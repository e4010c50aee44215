//! The result of one check on one test case (FEP section 2.3.4), serialised straight from
//! borrowed data: resolved argument values point into the check or the evaluation context.
//! A standard check's `results` is `{"passed": bool}`; an extended or custom check's is the
//! object it answered with (see [`Results`]).

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::timestamp::Timestamp;
use crate::scoring::Outcome;

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
pub enum ErrorType {
    /// A JSONPath selected nothing or could not be evaluated.
    #[serde(rename = "jsonpath_error")]
    Jsonpath,
    /// An argument is missing, unknown or of the wrong type, or the check is malformed.
    #[serde(rename = "validation_error")]
    Validation,
    /// An extended or custom check did not answer in time.
    #[serde(rename = "timeout_error")]
    Timeout,
    /// An extended or custom check failed otherwise (the API or command failed, its reply was
    /// unusable).
    #[serde(rename = "unknown_error")]
    Unknown,
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
        Self::new(ErrorType::Validation, message)
    }

    /// A `jsonpath_error`.
    pub fn jsonpath(message: impl Into<String>) -> Self {
        Self::new(ErrorType::Jsonpath, message)
    }

    /// A `timeout_error`: retrying may help.
    pub fn timeout(message: impl Into<String>) -> Self {
        CheckError {
            recoverable: true,
            ..Self::new(ErrorType::Timeout, message)
        }
    }

    /// An `unknown_error`; `recoverable` when retrying may help (a 429 or 5xx, a lost
    /// connection).
    pub fn unknown(message: impl Into<String>, recoverable: bool) -> Self {
        CheckError {
            recoverable,
            ..Self::new(ErrorType::Unknown, message)
        }
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

/// What a completed check found: its `results`.
#[derive(Debug, Clone, PartialEq)]
pub enum Results {
    /// A standard check: whether it passed (`{"passed": bool}`).
    Passed(bool),
    /// An extended or custom check: the results object it answered with.
    Answered(Value),
}

impl From<Outcome> for Results {
    /// A standard check's results: its verdict (each standard check gives one).
    #[inline]
    fn from(outcome: Outcome) -> Self {
        Results::Passed(outcome.is_pass())
    }
}

/// Whether a check's `results` say it passed: a boolean `passed` at their top or in their
/// `response` (`semantic_similarity` with a threshold, an `llm_judge` whose format has one).
pub fn passed_in(results: &Value) -> Option<bool> {
    (results.get("passed"))
        .or_else(|| results.pointer("/response/passed"))
        .and_then(Value::as_bool)
}

impl Results {
    /// Whether the check passed, when its results say: a standard check always does; an
    /// answered object does through a boolean `passed`, at its top or in its `response`
    /// (`semantic_similarity` with a threshold, an `llm_judge` whose format has one).
    pub fn passed(&self) -> Option<bool> {
        match self {
            Results::Passed(passed) => Some(*passed),
            Results::Answered(results) => passed_in(results),
        }
    }

    /// A score in [0, 1] the results carry (`score`, at the top or in `response`), if any.
    pub fn score(&self) -> Option<f64> {
        self.any_score().filter(|score| (0.0..=1.0).contains(score))
    }

    /// A score the results carry outside [0, 1] (an `llm_judge` whose judge answered 1.5, or
    /// on a scale of 10), which is no score: `run --checks` refuses it.
    pub fn score_out_of_range(&self) -> Option<f64> {
        self.any_score()
            .filter(|score| !(0.0..=1.0).contains(score))
    }

    /// The number the results carry as `score` (at the top or in `response`), if any.
    fn any_score(&self) -> Option<f64> {
        let Results::Answered(results) = self else {
            return None;
        };
        results
            .get("score")
            .or_else(|| results.pointer("/response/score"))
            .and_then(Value::as_f64)
    }
}

/// The result of one check on one evaluation context.
#[derive(Debug, Clone)]
pub struct CheckResult<'a> {
    /// The check type, e.g. `exact_match`.
    pub check_type: &'a str,
    /// The results, when the check completed.
    pub outcome: Result<Results, CheckError>,
    /// The arguments that resolved, in the order they were given.
    pub resolved: Vec<Resolved<'a>>,
    /// When the check ran.
    pub evaluated_at: Timestamp,
    /// The check implementation's semantic version.
    pub check_version: &'static str,
    /// How long the check took, in milliseconds.
    pub execution_time_ms: f64,
    /// The check's members that its schema allows and evalctl ignored (`metadata.ignored`).
    pub ignored: &'a [String],
}

impl CheckResult<'_> {
    /// `completed` or `error` (the standard checks never skip).
    pub fn status(&self) -> Status {
        match self.outcome {
            Ok(_) => Status::Completed,
            Err(_) => Status::Error,
        }
    }

    /// Whether the check errored, completed with `passed: false`, or completed with results that
    /// hold neither a `passed` nor a `score` in [0, 1] (nothing to count it by). A
    /// `semantic_similarity` without a threshold has a score, and has not failed.
    pub fn failed(&self) -> bool {
        self.outcome.as_ref().map_or(true, |results| {
            results.passed() == Some(false)
                || (results.passed().is_none() && results.score().is_none())
        })
    }

    /// The check's share of a score in [0, 1]: 1 when it passed, 0 when it failed or errored.
    /// A completed check whose results hold no `passed` gives their `score` in [0, 1]
    /// (`semantic_similarity` without a threshold), and 0 when they hold neither.
    pub fn credit(&self) -> f64 {
        match &self.outcome {
            Err(_) => 0.0,
            Ok(results) => match results.passed() {
                Some(passed) => f64::from(u8::from(passed)),
                None => results.score().unwrap_or(0.0),
            },
        }
    }
}

impl Serialize for CheckResult<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = if self.outcome.is_err() { 7 } else { 6 };
        let mut out = serializer.serialize_struct("CheckResult", fields)?;
        out.serialize_field("check_type", self.check_type)?;
        out.serialize_field("status", &self.status())?;
        out.serialize_field("results", &ResultsField(&self.outcome))?;
        out.serialize_field("resolved_arguments", &ResolvedArguments(&self.resolved))?;
        out.serialize_field("evaluated_at", &self.evaluated_at)?;
        out.serialize_field(
            "metadata",
            &Metadata {
                check_version: self.check_version,
                execution_time_ms: self.execution_time_ms,
                ignored: self.ignored,
            },
        )?;
        if let Err(error) = &self.outcome {
            out.serialize_field("error", error)?;
        }
        out.end()
    }
}

/// `results`: `{"passed": bool}`, the answered object, or `{}` when the check errored.
struct ResultsField<'r>(&'r Result<Results, CheckError>);

impl Serialize for ResultsField<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Ok(Results::Passed(passed)) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("passed", passed)?;
                map.end()
            }
            Ok(Results::Answered(results)) => results.serialize(serializer),
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
struct Metadata<'a> {
    check_version: &'static str,
    execution_time_ms: f64,
    /// Left out when nothing was ignored.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    ignored: &'a [String],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_becomes_its_verdict() {
        assert_eq!(Results::from(Outcome::verdict(true)), Results::Passed(true));
        assert_eq!(
            Results::from(Outcome::verdict(false)),
            Results::Passed(false)
        );
        let passed = Results::from(Outcome::verdict(true));
        assert_eq!((passed.passed(), passed.score()), (Some(true), None));
    }

    #[test]
    fn group_status_follows_the_precedence_rules() {
        use Status::*;
        assert_eq!(Status::combine([]), Completed);
        assert_eq!(Status::combine([Completed, Completed]), Completed);
        assert_eq!(Status::combine([Completed, Skip]), Skip);
        assert_eq!(Status::combine([Skip, Error, Completed]), Error);
    }
}
