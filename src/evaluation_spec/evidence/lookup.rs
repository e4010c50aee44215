//! Questions scoring asks of a run's gathered evidence: a reference's value, the source pointer of
//! a target, the tool calls, a code execution's result, the challenge and regression case ids.

use serde_json::{Map, Value};

use super::gather::Evidence;
use super::members::id;
use super::resolve::{resolve_artifact_reference, resolve_case, unsupported, Resolved};
use super::source::SourcePointer;
use super::turns::resolve_transcript;
use crate::evaluation_spec::gostr::loose_string;
use crate::evaluation_spec::validators::ToolCall;

impl<'a> Evidence<'a> {
    /// The single challenge input's id (the validators' and metrics' `challenge_identity_id`).
    pub fn challenge_id(&self) -> Option<&'a str> {
        self.challenge_id
    }

    /// The regression case id that goes with `challenge_id`.
    pub fn regression_case_for(&self, challenge_id: Option<&str>) -> Option<&'a str> {
        challenge_id
            .filter(|wanted| Some(*wanted) == self.challenge_id)
            .and(self.regression_case_id)
    }

    /// The payload of the last `grader.verification.code_executed` event for `validator_key` (the
    /// members scoring reads, as an object), and its source pointer (field path = the validator's
    /// target).
    pub fn code_execution(
        &self,
        validator_key: &str,
        target: &str,
    ) -> (Option<Value>, Option<SourcePointer>) {
        match self.code_results.get(validator_key) {
            Some((payload, source)) => (
                Some(payload.to_object()),
                source
                    .as_ref()
                    .map(|source| source.pointer("tool_call", target)),
            ),
            None => (None, None),
        }
    }

    /// The trace as the validators take it.
    pub fn tool_calls(&self) -> Vec<ToolCall<'a>> {
        static NO_ARGUMENTS: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        let no_arguments = NO_ARGUMENTS.get_or_init(|| Value::Object(Map::new()));
        self.trace
            .iter()
            .map(|entry| ToolCall {
                name: entry.tool_name,
                arguments: entry.arguments.unwrap_or(no_arguments),
                failed: entry.failed,
            })
            .collect()
    }

    /// The source pointer of a tool-call trace entry.
    pub fn tool_call_source(&self, index: usize) -> Option<SourcePointer> {
        let entry = self.trace.get(index)?;
        (entry.sequence > 0).then(|| SourcePointer {
            kind: "tool_call",
            sequence: entry.sequence,
            event_type: entry.event_type.to_string(),
            field_path: "tool_calls".to_string(),
        })
    }

    /// The source pointer of a validator target: the event its value was read from.
    pub fn source_of(&self, target: &str) -> Option<SourcePointer> {
        if target == "final_output" || target == "run.final_output" {
            if let Some(source) = &self.final_output_source {
                return Some(source.pointer("final_output", "final_output"));
            }
            return self
                .last_model_call_source
                .as_ref()
                .map(|source| source.pointer("model_call", "final_output"));
        }
        let key = target.strip_prefix("file:")?;
        let source = match self.files.get(key) {
            Some((_, source)) => source.as_ref(),
            None => self.listings.get(key)?.1.as_ref(),
        };
        source.map(|source| source.pointer("tool_call", target))
    }

    /// Resolve an evidence reference against this run (the evidence-reference table of
    /// `docs/spec.md`, "Validators"), with the challenge id the value belongs to.
    pub fn resolve(&self, reference: &str) -> (Resolved, Option<&'a str>) {
        let challenge = self.challenge_id;
        let missing = |reason: &str| Resolved::Missing(reason.to_string());
        match reference {
            "final_output" | "run.final_output" => (
                self.final_output.clone().map_or_else(
                    || missing("final output evidence is unavailable"),
                    Resolved::Value,
                ),
                challenge,
            ),
            "challenge_input" => (
                self.challenge_payload.map_or_else(
                    || missing("challenge input evidence is unavailable"),
                    |payload| {
                        Resolved::Value(
                            loose_string(payload)
                                .map(str::to_string)
                                .unwrap_or_else(|| payload.to_string()),
                        )
                    },
                ),
                challenge,
            ),
            "transcript.full" | "transcript.from_mismatch" | "turn.expectations" => {
                (resolve_transcript(reference, &self.turns), None)
            }
            _ if reference.starts_with("case.") || reference.starts_with("artifact.") => {
                match self.case_input {
                    None => (missing(self.case_reason), challenge),
                    Some(input) => {
                        let resolved = if reference.starts_with("case.") {
                            resolve_case(reference, input)
                        } else {
                            resolve_artifact_reference(reference, input)
                        };
                        (resolved, id(&input.challenge_identity_id))
                    }
                }
            }
            _ => {
                if let Some(key) = reference.strip_prefix("file:") {
                    (self.resolve_file(key), None)
                } else if let Some(value) = reference.strip_prefix("literal:") {
                    (Resolved::Value(value.to_string()), None)
                } else if reference.starts_with("transcript.last_n:") {
                    (resolve_transcript(reference, &self.turns), None)
                } else {
                    (unsupported(reference), None)
                }
            }
        }
    }

    fn resolve_file(&self, key: &str) -> Resolved {
        if let Some((capture, _)) = self.files.get(key) {
            return if capture.exists {
                Resolved::Value(capture.content.clone())
            } else {
                Resolved::Missing(format!(
                    "captured file {key:?} does not exist at path {:?}",
                    capture.path
                ))
            };
        }
        match self.listings.get(key) {
            Some((listing, _)) => Resolved::Value(listing.clone()),
            None => Resolved::Missing(format!("file capture key {key:?} is unavailable")),
        }
    }
}
