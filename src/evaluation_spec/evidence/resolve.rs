//! What a reference resolves to, and the resolution of the case and artifact references
//! (`case.payload`, `case.inputs.KEY`, `case.expectations.KEY`, `artifact.KEY`, each with an
//! optional path) against the run's one challenge input.

use serde_json::Value;

use super::record::{CaseValue, ChallengeInput};
use crate::evaluation_spec::gostr::stringify;

/// What a reference resolved to.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    /// The value.
    Value(String),
    /// No value, and why (the validator becomes `unavailable`).
    Missing(String),
    /// The reference cannot be resolved (the validator becomes `error`).
    Error(String),
}

impl Resolved {
    /// The value, if any.
    pub fn value(&self) -> Option<&str> {
        match self {
            Resolved::Value(value) => Some(value),
            _ => None,
        }
    }
}

pub(super) fn unsupported(source: &str) -> Resolved {
    Resolved::Error(format!("unsupported evidence source {source:?}"))
}

/// Walk a dotted path through objects (by member) and arrays (by decimal index).
fn walk<'v>(value: &'v Value, segments: &[&str]) -> Option<&'v Value> {
    segments
        .iter()
        .try_fold(value, |current, segment| match current {
            Value::Object(map) => map.get(*segment),
            Value::Array(items) => segment
                .parse::<i64>()
                .ok()
                .and_then(|index| usize::try_from(index).ok())
                .and_then(|index| items.get(index)),
            _ => None,
        })
}

/// A JSON value resolved with an optional further path.
fn resolve_json(value: &Value, rest: &[&str]) -> Resolved {
    if value.is_null() {
        return Resolved::Missing("evidence is unavailable".to_string());
    }
    match walk(value, rest) {
        Some(found) => Resolved::Value(stringify(found)),
        None => Resolved::Missing("evidence path is unavailable".to_string()),
    }
}

/// A string value (a case value's `path`) with an optional further path: a path cannot be
/// walked into a string.
fn resolve_string(text: &str, rest: &[&str]) -> Resolved {
    resolve_json(&Value::String(text.to_string()), rest)
}

pub(super) fn resolve_case(reference: &str, input: &ChallengeInput) -> Resolved {
    let segments: Vec<&str> = reference.split('.').collect();
    match segments.get(1).copied() {
        Some("payload") => resolve_json(&input.payload, &segments[2..]),
        Some(group @ ("inputs" | "expectations")) => {
            let Some(key) = segments.get(2).filter(|key| !key.trim().is_empty()) else {
                return unsupported(reference);
            };
            let (values, noun) = if group == "inputs" {
                (&input.inputs, "input")
            } else {
                (&input.expectations, "expectation")
            };
            match values.get(*key) {
                Some(value) => resolve_case_value(value, input, &segments[3..], 0),
                None => Resolved::Missing(format!("case {noun} {key:?} is unavailable")),
            }
        }
        _ => unsupported(reference),
    }
}

/// The deepest `input:` chain a case value may follow.
const MAX_REFERENCE_DEPTH: usize = 8;

fn resolve_case_value(
    value: &CaseValue,
    input: &ChallengeInput,
    rest: &[&str],
    depth: usize,
) -> Resolved {
    if depth > MAX_REFERENCE_DEPTH {
        return Resolved::Error("evidence reference chain exceeds maximum depth".to_string());
    }
    if !value.value.is_null() {
        return resolve_json(&value.value, rest);
    }
    if !value.source.is_empty() {
        if let Some(key) = value.source.strip_prefix("input:") {
            let key = key.trim();
            if key.is_empty() {
                return Resolved::Missing("referenced input is unavailable".to_string());
            }
            return match input.inputs.get(key) {
                Some(next) => resolve_case_value(next, input, rest, depth + 1),
                None => Resolved::Missing(format!("case input {key:?} is unavailable")),
            };
        }
        if let Some(key) = value.source.strip_prefix("artifact:") {
            let key = key.trim();
            if key.is_empty() {
                return Resolved::Missing("referenced artifact is unavailable".to_string());
            }
            return resolve_artifact(key, input, rest);
        }
        return unsupported(&value.source);
    }
    if !value.artifact_key.is_empty() {
        return resolve_artifact(&value.artifact_key, input, rest);
    }
    if !value.path.trim().is_empty() {
        return resolve_string(&value.path, rest);
    }
    Resolved::Missing("evidence is unavailable".to_string())
}

pub(super) fn resolve_artifact_reference(reference: &str, input: &ChallengeInput) -> Resolved {
    let segments: Vec<&str> = reference.split('.').collect();
    match segments.get(1).filter(|key| !key.trim().is_empty()) {
        Some(key) => resolve_artifact(key, input, &segments[2..]),
        None => unsupported(reference),
    }
}

fn resolve_artifact(key: &str, input: &ChallengeInput, rest: &[&str]) -> Resolved {
    let Some(artifact) = input.artifacts.get(key) else {
        return Resolved::Missing(format!("artifact {key:?} is unavailable"));
    };
    if rest.is_empty() {
        return Resolved::Value(artifact.path.clone());
    }
    let object = serde_json::json!({
        "key": artifact.key,
        "kind": artifact.kind,
        "path": artifact.path,
        "media_type": artifact.media_type,
    });
    resolve_json(&object, rest)
}
