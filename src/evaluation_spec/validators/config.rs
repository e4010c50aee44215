//! Decoding validator configs: strict (unknown keys rejected) for the scored and assertion types,
//! lenient for the file types. JSON `null` anywhere in a config means "absent" (`docs/spec.md`,
//! "Where evalctl departs from the reference").

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ConfigProblem;
use crate::evaluation_spec::decode::house_wording;
use crate::input::ObjectsOnly;

/// A validator's config as given: absent, a JSON value, or text that is not JSON at all.
#[derive(Debug, Clone, Copy)]
pub(super) enum RawConfig<'a> {
    Absent,
    Json(&'a Value),
    Unparsable(&'a str),
}

impl<'a> RawConfig<'a> {
    /// `None` and JSON `null` are both absent.
    pub(super) fn from_value(config: Option<&'a Value>) -> RawConfig<'a> {
        match config {
            None | Some(Value::Null) => RawConfig::Absent,
            Some(value) => RawConfig::Json(value),
        }
    }

    pub(super) fn is_absent(self) -> bool {
        matches!(self, RawConfig::Absent)
    }
}

/// Decode a config into `T` (absent ⇒ `T::default()`); the error is the decoder's own message.
/// Strictness comes from `T` (`#[serde(deny_unknown_fields)]` or not).
pub(super) fn decode<T: DeserializeOwned + Default>(config: RawConfig<'_>) -> Result<T, String> {
    match config {
        RawConfig::Absent => Ok(T::default()),
        RawConfig::Json(value) => {
            serde_path_to_error::deserialize(ObjectsOnly(value)).map_err(|err| {
                let at = err.path().to_string();
                let message = err.into_inner().to_string();
                // serde_json's words for a fraction where a whole number goes say neither.
                let message = match (message.as_str(), value_at(value, &at)) {
                    ("invalid number", Some(number @ Value::Number(_))) => {
                        format!("expected an integer, found {number}")
                    }
                    // `expected a number, found string "high"`, as every other input says it.
                    (text, _) if text.starts_with("invalid ") => {
                        house_wording(text).unwrap_or(message)
                    }
                    _ => message,
                };
                // An unknown key's message names it already.
                match at.as_str() {
                    "" | "." => message,
                    _ if message.starts_with("unknown field") => message,
                    at => format!("{at}: {message}"),
                }
            })
        }
        RawConfig::Unparsable(message) => Err(message.to_string()),
    }
}

/// The value at the path serde_path_to_error gives (`max_ngram`, `pipeline[0]`) in `config`.
fn value_at<'a>(config: &'a Value, at: &str) -> Option<&'a Value> {
    let mut value = config;
    for step in at.split('.').filter(|step| !step.is_empty()) {
        let (key, indexes) = step.split_once('[').unwrap_or((step, ""));
        if !key.is_empty() {
            value = value.get(key)?;
        }
        for index in indexes.split('[').filter(|index| !index.is_empty()) {
            value = value.get(index.trim_end_matches(']').parse::<usize>().ok()?)?;
        }
    }
    Some(value)
}

/// Collects load-time config problems.
#[derive(Debug, Default)]
pub(super) struct Problems(pub(super) Vec<ConfigProblem>);

impl Problems {
    /// A problem at `at` (empty, or starting with `.`).
    pub(super) fn add(&mut self, at: &str, message: impl Into<String>) {
        self.0.push(ConfigProblem {
            at: at.to_string(),
            message: message.into(),
        });
    }

    /// A config that does not decode at all: reported at `config` as `invalid config: …` (the
    /// decoder's own words, as the reference's load-time errors have them, but for the names of
    /// Rust types: `expected an object`, not `expected struct FuzzyConfig`).
    pub(super) fn undecodable(err: String) -> Vec<ConfigProblem> {
        let mut problems = Problems::default();
        problems.add("", format!("invalid config: {}", without_type_names(&err)));
        problems.0
    }
}

/// `message` with each `struct NAME` the decoder expected said as `an object`.
fn without_type_names(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("expected struct ") {
        out.push_str(&rest[..at]);
        out.push_str("expected an object");
        rest = &rest[at + "expected struct ".len()..];
        rest = rest.trim_start_matches(|ch: char| ch.is_ascii_alphanumeric() || ch == '_');
    }
    out.push_str(rest);
    out
}

/// Problems as the reference's run-time reasons list them: `config.count cannot be …; config …`.
pub(super) fn run_time_text(problems: &[ConfigProblem]) -> String {
    problems
        .iter()
        .map(|problem| format!("config{} {}", problem.at, problem.message))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Decode a strict config for its load-time check: absent ⇒ no checks at all; undecodable ⇒ one
/// `invalid config` problem; otherwise `check` runs on the decoded value.
pub(super) fn check_strict<T: DeserializeOwned + Default>(
    config: RawConfig<'_>,
    check: impl FnOnce(&T, &mut Problems),
) -> Vec<ConfigProblem> {
    if config.is_absent() {
        return Vec::new();
    }
    match decode::<T>(config) {
        Ok(decoded) => {
            let mut problems = Problems::default();
            check(&decoded, &mut problems);
            problems.0
        }
        Err(err) => Problems::undecodable(err),
    }
}

/// Decode a config that must be given, for its load-time check: absent ⇒ one problem, `missing`;
/// undecodable ⇒ one `invalid config` problem; otherwise the problems `check` finds in it.
pub(super) fn check_required<T: DeserializeOwned + Default>(
    config: RawConfig<'_>,
    missing: &str,
    check: impl FnOnce(T) -> Vec<ConfigProblem>,
) -> Vec<ConfigProblem> {
    if config.is_absent() {
        let mut problems = Problems::default();
        problems.add("", missing);
        return problems.0;
    }
    match decode::<T>(config) {
        Ok(decoded) => check(decoded),
        Err(err) => Problems::undecodable(err),
    }
}

/// Whether an optional threshold-like value lies in [0, 1] (absent is fine).
pub(super) fn in_unit_range(value: Option<f64>) -> bool {
    value.is_none_or(|value| (0.0..=1.0).contains(&value))
}
