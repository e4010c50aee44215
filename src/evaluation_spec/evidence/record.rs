//! The run record, the scoring input (`docs/spec.md`, "The run record"): its challenge inputs and
//! events as decoded from one JSONL line, and the events in scoring order.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::timestamp::Timestamp;
use crate::evaluation_spec::decode::house_wording;
use crate::evaluation_spec::judges::JudgeResult;
use crate::evaluation_spec::model::null_default;
use crate::evaluation_spec::payload::Payload;
use crate::input::{decode_unique, decode_unique_map, ObjectsOnly};

/// One recorded run, the scoring input (`docs/spec.md`, "The run record"): `{"id"?,
/// "challenge_inputs": [...], "events": [...], "llm_judge_results"?: [...],
/// "human_preference_score"?: x}`. Unknown members are ignored; events need a `type` and an
/// `occurred_at`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct RunRecord {
    /// The run's id (any JSON value), echoed into its evaluation record.
    pub id: Option<Value>,
    /// The challenge inputs in scope (one for `challenge_input`/`case.*` references to resolve).
    #[serde(deserialize_with = "null_default")]
    pub challenge_inputs: Vec<ChallengeInput>,
    /// The run's events, in any order.
    #[serde(deserialize_with = "null_default")]
    pub events: Vec<Event>,
    /// Precomputed judge results.
    #[serde(deserialize_with = "null_default")]
    pub llm_judge_results: Vec<JudgeResult>,
    /// A human preference score for the `human_preference` source.
    pub human_preference_score: Option<f64>,
}

impl RunRecord {
    /// Why a recorded judge result cannot be scored: its `normalized_score` is outside [0, 1],
    /// where every judge's score is normalised (the reference would take it as given and let a
    /// dimension score 1.7 pass the run).
    pub fn judge_score_problem(&self) -> Option<String> {
        self.llm_judge_results
            .iter()
            .enumerate()
            .find_map(|(index, result)| {
                let score = result.normalized_score?;
                (!(0.0..=1.0).contains(&score)).then(|| {
                    format!(
                        "llm_judge_results[{index}].normalized_score is {score}: a judge's \
                         normalized score is in [0, 1]"
                    )
                })
            })
    }

    /// Whether this record, decoded from `line`, is no run: `line` has none of a run record's
    /// members but `id`, or only `null` ones (a line of another file, such as a dataset's,
    /// which may have an `id`).
    /// A run with no events (`{"events": []}`) is a run.
    pub fn lacks_run_members(&self, line: &str) -> bool {
        const RUN_MEMBERS: [&str; 4] = [
            "challenge_inputs",
            "events",
            "llm_judge_results",
            "human_preference_score",
        ];
        let empty = self.challenge_inputs.is_empty()
            && self.events.is_empty()
            && self.llm_judge_results.is_empty()
            && self.human_preference_score.is_none();
        empty
            && serde_json::from_str::<serde_json::Map<String, Value>>(line).is_ok_and(|object| {
                // `null` is an absent member, as everywhere in a run record.
                !RUN_MEMBERS
                    .iter()
                    .any(|key| object.get(*key).is_some_and(|value| !value.is_null()))
            })
    }

    /// Decode one JSONL line straight (no member paths are tracked: see [`Self::from_json_line`]
    /// for what is wrong with a line this refuses). Its structs decode from objects only, as the
    /// reference's do: a struct given as a JSON array is refused, not read field by field.
    pub fn decode(line: &str) -> serde_json::Result<RunRecord> {
        let mut deserializer = serde_json::Deserializer::from_str(line);
        let record = RunRecord::deserialize(ObjectsOnly(&mut deserializer))?;
        deserializer.end()?;
        Ok(record)
    }

    /// Decode one JSONL line, or say what is wrong with it: `expected a JSON object`, or the
    /// offending member's path and the decoder's message (`events[3]: missing field
    /// \`occurred_at\` at column 412`).
    pub fn from_json_line(line: &str) -> Result<RunRecord, String> {
        if !line.trim_start().starts_with('{') {
            return Err("expected a JSON object".to_string());
        }
        let describe = |path: String, err: serde_json::Error| {
            let message = err.to_string();
            let what = message
                .rfind(" at line ")
                .map_or(message.as_str(), |cut| &message[..cut]);
            // `expected an object, found string "x"`, `missing required key `x``: the wording
            // of every other JSON input.
            let what = house_wording(what).unwrap_or_else(|| what.to_string());
            let at = format!("{what} at column {}", err.column());
            if path.is_empty() || path == "." {
                at
            } else {
                format!("{path}: {at}")
            }
        };
        let mut deserializer = serde_json::Deserializer::from_str(line);
        let record =
            serde_path_to_error::deserialize(ObjectsOnly(&mut deserializer)).map_err(|err| {
                let path = err.path().to_string();
                describe(path, err.into_inner())
            })?;
        deserializer
            .end()
            .map_err(|err| describe(String::new(), err))?;
        Ok(record)
    }
}

/// One challenge input (case) of a run.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ChallengeInput {
    /// The challenge's id.
    #[serde(deserialize_with = "null_default")]
    pub challenge_identity_id: String,
    /// The regression case's id.
    pub regression_case_id: Option<String>,
    /// The challenge key.
    #[serde(deserialize_with = "null_default")]
    pub challenge_key: String,
    /// The case key.
    #[serde(deserialize_with = "null_default")]
    pub case_key: String,
    /// The item key.
    #[serde(deserialize_with = "null_default")]
    pub item_key: String,
    /// The case payload (`null` = none).
    #[serde(deserialize_with = "decode_unique")]
    pub payload: Value,
    /// Named case inputs (boxed: a map node of unboxed values is too big for the allocator's
    /// fast path, and every run decodes one).
    #[serde(deserialize_with = "decode_unique_map")]
    pub inputs: BTreeMap<String, Box<CaseValue>>,
    /// Named case expectations (boxed, as `inputs`).
    #[serde(deserialize_with = "decode_unique_map")]
    pub expectations: BTreeMap<String, Box<CaseValue>>,
    /// Named artifacts.
    #[serde(deserialize_with = "decode_unique_map")]
    pub artifacts: BTreeMap<String, Artifact>,
}

/// A case input or expectation: an inline value, a reference to another input or an artifact,
/// or a path.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CaseValue {
    /// Free-form kind.
    #[serde(deserialize_with = "null_default")]
    pub kind: String,
    /// The inline JSON value (`null` = none).
    #[serde(deserialize_with = "decode_unique")]
    pub value: Value,
    /// An artifact key.
    #[serde(deserialize_with = "null_default")]
    pub artifact_key: String,
    /// `input:<key>` or `artifact:<key>`.
    #[serde(deserialize_with = "null_default")]
    pub source: String,
    /// A path string.
    #[serde(deserialize_with = "null_default")]
    pub path: String,
}

/// A case artifact.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Artifact {
    /// Its key.
    #[serde(deserialize_with = "null_default")]
    pub key: String,
    /// Its kind.
    #[serde(deserialize_with = "null_default")]
    pub kind: String,
    /// Its path.
    #[serde(deserialize_with = "null_default")]
    pub path: String,
    /// Its media type.
    #[serde(deserialize_with = "null_default")]
    pub media_type: String,
}

/// One run event (its `source` member, who emitted it, plays no part in scoring and is not kept).
#[derive(Debug, Clone, Deserialize)]
pub struct Event {
    /// The event type (`system.run.completed`, `tool.call.failed`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// Position in the run's event stream (positive values order first).
    #[serde(default, deserialize_with = "null_default")]
    pub sequence_number: i64,
    /// When it happened (RFC 3339).
    pub occurred_at: Timestamp,
    /// Its payload, as scoring reads it (none = no members).
    #[serde(default)]
    pub payload: Payload,
}

/// The events in scoring order: positive sequence numbers first, ascending; then the others by
/// `occurred_at`, ties by type (stable).
pub fn order_events(events: &[Event]) -> Vec<&Event> {
    let mut ordered: Vec<&Event> = events.iter().collect();
    ordered.sort_by(|left, right| {
        let left_seq = left.sequence_number > 0;
        let right_seq = right.sequence_number > 0;
        right_seq
            .cmp(&left_seq)
            .then_with(|| {
                if left_seq {
                    left.sequence_number.cmp(&right.sequence_number)
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .then_with(|| left.occurred_at.nanos.cmp(&right.occurred_at.nanos))
            .then_with(|| left.kind.cmp(&right.kind))
    });
    ordered
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_lines_decode_or_say_what_is_wrong() {
        let run = RunRecord::from_json_line(
            r#"{"id": 7, "events": [{"type": "system.run.started", "occurred_at": "2026-01-02T03:04:05.5+01:00"}]}"#,
        )
        .expect("a valid run");
        assert_eq!(
            run.events[0].occurred_at.rfc3339(),
            "2026-01-02T02:04:05.5Z"
        );
        assert_eq!(
            RunRecord::from_json_line("[1]").unwrap_err(),
            "expected a JSON object"
        );
        let missing = RunRecord::from_json_line(r#"{"events": [{"type": "x"}]}"#).unwrap_err();
        assert_eq!(
            missing,
            "events[0]: missing required key `occurred_at` at column 25"
        );
        let bad_time =
            RunRecord::from_json_line(r#"{"events": [{"type": "x", "occurred_at": "yesterday"}]}"#)
                .unwrap_err();
        assert!(
            bad_time.starts_with("events[0].occurred_at: invalid RFC 3339 timestamp"),
            "{bad_time}"
        );
    }

    #[test]
    fn events_order_by_sequence_then_time_then_type() {
        let run = RunRecord::from_json_line(
            r#"{"events": [
                {"type": "b", "occurred_at": "2026-01-01T00:00:01Z"},
                {"type": "a", "occurred_at": "2026-01-01T00:00:01Z"},
                {"type": "s2", "sequence_number": 2, "occurred_at": "2026-01-01T00:00:00Z"},
                {"type": "s1", "sequence_number": 1, "occurred_at": "2026-01-01T00:00:09Z"}]}"#,
        )
        .expect("a valid run");
        let order: Vec<&str> = order_events(&run.events)
            .iter()
            .map(|event| event.kind.as_str())
            .collect();
        assert_eq!(order, ["s1", "s2", "a", "b"]);
    }
}
