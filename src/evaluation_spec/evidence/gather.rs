//! The evidence of one run: everything scoring reads from it (final output, timing, failures, token
//! usage, verification captures, the tool-call trace, turns), gathered once from its ordered events.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::members::{id, number, text, usage, verification_key};
use super::record::{order_events, ChallengeInput, RunRecord};
use super::source::EventRef;
use super::timestamp::Timestamp;
use super::trace::{trace_entry, TraceEntry};
use super::turns::{turns, Turn};
use super::usage::{CallUsage, ModelUsage, UsageTally};
use crate::evaluation_spec::gostr::json_string;
use crate::evaluation_spec::payload::Payload;

/// A file captured after the run.
#[derive(Debug, Clone, Default)]
pub(super) struct FileCapture {
    pub(super) path: String,
    pub(super) exists: bool,
    pub(super) content: String,
}

/// One completed step's duration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepDuration {
    /// The step's index.
    pub step_index: i64,
    /// Whole milliseconds.
    pub duration_ms: f64,
    /// Start time as recorded.
    pub started_at: String,
    /// Completion time as recorded.
    pub completed_at: String,
}

/// Everything scoring reads from one run, built once from its ordered events.
#[derive(Debug, Default)]
pub struct Evidence<'a> {
    pub(super) final_output: Option<String>,
    pub(super) final_output_source: Option<EventRef>,
    pub(super) last_model_call_source: Option<EventRef>,
    pub(super) challenge_payload: Option<&'a Value>,
    pub(super) challenge_id: Option<&'a str>,
    pub(super) regression_case_id: Option<&'a str>,
    pub(super) case_input: Option<&'a ChallengeInput>,
    pub(super) case_reason: &'static str,
    /// First `system.run.started`.
    pub started_at: Option<&'a Timestamp>,
    /// First output event.
    pub first_output_at: Option<&'a Timestamp>,
    /// Terminal time (nanoseconds) and its text.
    pub terminal_at: Option<Timestamp>,
    /// Whether the last terminal event was `system.run.completed`.
    pub completed_successfully: Option<bool>,
    /// Failed runs, tool calls and sandbox commands.
    pub failure_count: u64,
    /// Input tokens.
    pub input_tokens: Option<f64>,
    /// Output tokens.
    pub output_tokens: Option<f64>,
    /// Total tokens.
    pub total_tokens: Option<f64>,
    /// Tool calls.
    pub tool_call_count: Option<f64>,
    /// Tokens injected by race standings.
    pub race_context_tokens: f64,
    /// Usage per (provider, model), sorted.
    pub model_usage: Vec<ModelUsage>,
    /// Models seen on model-call events, sorted.
    pub observed_models: Vec<(String, String)>,
    /// Completed steps.
    pub step_durations: Vec<StepDuration>,
    pub(super) files: HashMap<&'a str, (FileCapture, Option<EventRef>)>,
    pub(super) listings: HashMap<&'a str, (String, Option<EventRef>)>,
    pub(super) code_results: HashMap<&'a str, (&'a Payload, Option<EventRef>)>,
    /// The tool-call trace.
    pub trace: Vec<TraceEntry<'a>>,
    /// Conversation turns, by index.
    pub turns: Vec<Turn>,
    /// The run's human preference score.
    pub human_preference_score: Option<f64>,
    /// Evidence warnings (the record's `warnings`; `docs/spec.md`, "The evaluation record").
    pub warnings: Vec<&'static str>,
}

impl<'a> Evidence<'a> {
    /// Build the evidence of one run.
    pub fn build(run: &'a RunRecord) -> Evidence<'a> {
        let events = order_events(&run.events);
        let mut evidence = Evidence {
            human_preference_score: run.human_preference_score,
            ..Evidence::default()
        };
        evidence.read_challenge_inputs(&run.challenge_inputs);
        let mut step_started: HashMap<i64, &Timestamp> = HashMap::new();
        let mut calls = UsageTally::default();
        for event in &events {
            let payload = &event.payload;
            match event.kind.as_str() {
                "system.run.started" => {
                    evidence.started_at.get_or_insert(&event.occurred_at);
                }
                "system.step.started" => {
                    if let Some(index) = number(payload, "step_index") {
                        step_started.insert(index as i64, &event.occurred_at);
                    }
                }
                "system.step.completed" => {
                    let index = number(payload, "step_index").map(|index| index as i64);
                    if let Some((index, started)) =
                        index.and_then(|index| Some((index, *step_started.get(&index)?)))
                    {
                        evidence.step_durations.push(StepDuration {
                            step_index: index,
                            duration_ms: ((event.occurred_at.nanos - started.nanos) / 1_000_000)
                                as f64,
                            started_at: started.rfc3339(),
                            completed_at: event.occurred_at.rfc3339(),
                        });
                    }
                }
                "model.output.delta" | "system.output.finalized" => {
                    evidence.first_output_at.get_or_insert(&event.occurred_at);
                    if event.kind == "system.output.finalized" && evidence.final_output.is_none() {
                        if let Some(output) =
                            text(payload, "final_output").or_else(|| text(payload, "output"))
                        {
                            evidence.final_output = Some(output.to_string());
                            evidence.final_output_source = EventRef::of(event);
                        }
                    }
                }
                "system.run.completed" => {
                    evidence.terminal_at = Some(event.occurred_at);
                    evidence.completed_successfully = Some(true);
                    if let Some(output) = text(payload, "final_output") {
                        evidence.final_output = Some(output.to_string());
                    }
                    let read = |key| number(payload, key).or_else(|| usage(payload, key));
                    if let Some(value) = read("input_tokens") {
                        evidence.input_tokens = Some(value);
                    }
                    if let Some(value) = read("output_tokens") {
                        evidence.output_tokens = Some(value);
                    }
                    if let Some(value) = read("total_tokens") {
                        evidence.total_tokens = Some(value);
                    }
                    if let Some(value) = number(payload, "tool_call_count") {
                        evidence.tool_call_count = Some(value);
                    }
                    // A latency beyond Go's `time.Duration` (±292 years in nanoseconds) is
                    // no latency: the terminal time stays the event's.
                    let latency_nanos = number(payload, "latency_ms").and_then(|latency| {
                        let nanos = (latency as i128).checked_mul(1_000_000)?;
                        i64::try_from(nanos).ok()
                    });
                    if let (Some(latency), Some(started)) = (latency_nanos, evidence.started_at) {
                        let nanos = started.nanos + i128::from(latency);
                        evidence.terminal_at = Some(Timestamp { nanos });
                    }
                }
                "system.run.failed" => {
                    evidence.terminal_at = Some(event.occurred_at);
                    evidence.completed_successfully = Some(false);
                    evidence.failure_count += 1;
                }
                "tool.call.completed" | "tool.call.failed" => match trace_entry(event) {
                    Some(entry) => {
                        if entry.failed {
                            evidence.failure_count += 1;
                        }
                        evidence.trace.push(entry);
                    }
                    None if event.kind == "tool.call.failed" => evidence.failure_count += 1,
                    None => {}
                },
                "sandbox.command.failed" => evidence.failure_count += 1,
                "model.call.completed" | "model.call.started" => {
                    calls.model_call(event);
                    if event.kind == "model.call.completed" {
                        if let Some(source) = EventRef::of(event) {
                            evidence.last_model_call_source = Some(source);
                        }
                    }
                }
                "race.standings.injected" => {
                    if let Some(added) = number(payload, "tokens_added") {
                        evidence.race_context_tokens += added;
                    }
                }
                "grader.verification.file_captured" => {
                    if let Some(key) = verification_key(payload, "key") {
                        let capture = FileCapture {
                            path: text(payload, "path").unwrap_or("").to_string(),
                            exists: payload
                                .get("exists")
                                .and_then(Value::as_bool)
                                .unwrap_or(false),
                            content: payload
                                .get("content")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                        };
                        evidence.files.insert(key, (capture, EventRef::of(event)));
                    }
                }
                "grader.verification.directory_listed" => {
                    if let Some(key) = verification_key(payload, "key") {
                        evidence
                            .listings
                            .insert(key, (listing_json(key, payload), EventRef::of(event)));
                    }
                }
                "grader.verification.code_executed" => {
                    if let Some(key) = verification_key(payload, "validator_key") {
                        evidence
                            .code_results
                            .insert(key, (payload, EventRef::of(event)));
                    }
                }
                _ => {}
            }
        }
        let CallUsage {
            from_calls,
            model_usage,
            observed_models,
        } = calls.finish();
        if let Some(from_calls) = from_calls {
            evidence.input_tokens.get_or_insert(from_calls.0);
            evidence.output_tokens.get_or_insert(from_calls.1);
            if evidence.total_tokens.is_none() && from_calls.2 > 0.0 {
                evidence.total_tokens = Some(from_calls.2);
            }
        }
        // Else input + output when both are known, wherever they came from (the run's completion
        // or its calls).
        if let (None, Some(input), Some(output)) = (
            evidence.total_tokens,
            evidence.input_tokens,
            evidence.output_tokens,
        ) {
            evidence.total_tokens = Some(input + output);
        }
        if evidence.tool_call_count.is_none() && !evidence.trace.is_empty() {
            evidence.tool_call_count = Some(evidence.trace.len() as f64);
        }
        evidence.model_usage = model_usage;
        evidence.observed_models = observed_models;
        if evidence.final_output.is_none() {
            evidence
                .warnings
                .push("final output evidence is unavailable");
        }
        if evidence.completed_successfully.is_none() {
            evidence
                .warnings
                .push("terminal run evidence is unavailable");
        }
        evidence.turns = turns(&events);
        evidence
    }

    fn read_challenge_inputs(&mut self, inputs: &'a [ChallengeInput]) {
        match inputs {
            [] => {
                self.warnings.push("challenge input set is unavailable");
                self.case_reason = "case evidence is unavailable";
            }
            [input] => {
                self.case_input = Some(input);
                self.challenge_id = id(&input.challenge_identity_id);
                self.regression_case_id = input.regression_case_id.as_deref().and_then(id);
                if input.payload.is_null() {
                    self.warnings.push("challenge input payload is empty");
                } else {
                    self.challenge_payload = Some(&input.payload);
                }
            }
            _ => {
                self.warnings
                    .push("challenge input is ambiguous across multiple items");
                self.case_reason = "case evidence is ambiguous across multiple cases";
            }
        }
    }
}

/// The directory listing of a `directory_listed` payload as the reference serialises it:
/// `{"key","path","entries":[{"path","size","is_dir"?}]}`.
fn listing_json(key: &str, payload: &Payload) -> String {
    let mut out = String::from("{\"key\":");
    json_string(key, &mut out);
    out.push_str(",\"path\":");
    json_string(text(payload, "path").unwrap_or(""), &mut out);
    out.push_str(",\"entries\":");
    match payload.get("entries").and_then(Value::as_array) {
        None => out.push_str("null"),
        Some(entries) => {
            out.push('[');
            for (i, entry) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str("{\"path\":");
                json_string(
                    entry.get("path").and_then(Value::as_str).unwrap_or(""),
                    &mut out,
                );
                let size = entry.get("size").and_then(Value::as_i64).unwrap_or(0);
                out.push_str(&format!(",\"size\":{size}"));
                if entry.get("is_dir").and_then(Value::as_bool) == Some(true) {
                    out.push_str(",\"is_dir\":true");
                }
                out.push('}');
            }
            out.push(']');
        }
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latency_beyond_go_durations_is_ignored_not_a_crash() {
        let run = |latency: &str| {
            RunRecord::from_json_line(&format!(
                r#"{{"events": [
                {{"type": "system.run.started", "occurred_at": "2026-01-01T00:00:00Z"}},
                {{"type": "system.run.completed", "occurred_at": "2026-01-01T00:00:01Z",
                  "payload": {{"latency_ms": {latency}}}}}]}}"#
            ))
            .expect("a valid run")
        };
        let terminal = |run: &RunRecord| Evidence::build(run).terminal_at.map(Timestamp::rfc3339);
        let sane = run("2500");
        assert_eq!(terminal(&sane).as_deref(), Some("2026-01-01T00:00:02.5Z"));
        for huge in ["1e300", "-1e300", "1e13"] {
            let absurd = run(huge);
            assert_eq!(
                terminal(&absurd).as_deref(),
                Some("2026-01-01T00:00:01Z"),
                "{huge}"
            );
        }
    }
}
