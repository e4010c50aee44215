//! Evidence references and their resolution against one run (the reference's "Evidence references
//! validators understand"; `docs/spec.md`, "Validators" and "The run record"): the reference forms
//! accepted at load time, the run record (challenge inputs and events), the evidence built from the
//! ordered events, and the resolution of a reference to a string, "missing" or an error.

use std::collections::{BTreeMap, HashMap};

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::gostr::{go_json, json_string, loose_string, stringify};
use super::judges::JudgeResult;
use super::model::null_default;
use super::payload::Payload;
use super::validators::ToolCall;
use crate::calendar::{civil_from_days, days_from_civil};

/// Whether `reference` is an evidence reference validation accepts (the evidence-reference table
/// of `docs/spec.md`, "Validators"). `tool_calls` is not one: it is only a `tool_call_assertion`
/// target.
pub fn is_supported_reference(reference: &str) -> bool {
    match reference {
        "final_output"
        | "run.final_output"
        | "challenge_input"
        | "case.payload"
        | "transcript.full"
        | "transcript.from_mismatch"
        | "turn.expectations" => return true,
        _ => {}
    }
    for prefix in [
        "case.payload.",
        "case.inputs.",
        "case.expectations.",
        "artifact.",
    ] {
        if let Some(path) = reference.strip_prefix(prefix) {
            let path = path.trim();
            return !path.is_empty() && path.split('.').all(|segment| !segment.trim().is_empty());
        }
    }
    if let Some(key) = reference.strip_prefix("file:") {
        return !key.trim().is_empty();
    }
    if reference.starts_with("literal:") {
        return true;
    }
    if let Some(count) = reference.strip_prefix("transcript.last_n:") {
        return count.trim().parse::<i64>().is_ok_and(|n| n > 0);
    }
    false
}

/// The fixed evidence references, the ones a misspelt reference is compared with.
const FIXED_REFERENCES: &[&str] = &[
    "final_output",
    "run.final_output",
    "challenge_input",
    "case.payload",
    "transcript.full",
    "transcript.from_mismatch",
    "turn.expectations",
];

/// Every form of evidence reference, as `spec validate` lists them.
const REFERENCE_FORMS: &str = "final_output, run.final_output, challenge_input, \
    case.payload[.PATH], case.inputs.KEY[.PATH], case.expectations.KEY[.PATH], \
    artifact.KEY[.PATH], file:KEY, literal:TEXT, transcript.full, transcript.last_n:N, \
    transcript.from_mismatch, turn.expectations";

/// What is wrong with `reference`, which [`is_supported_reference`] refused: `must be a supported
/// evidence reference (did you mean `final_output`? supported: …)`.
pub fn unsupported_reference(reference: &str) -> String {
    let hint = crate::input::strict::hint(
        reference.trim(),
        FIXED_REFERENCES.iter().copied(),
        &format!("supported: {REFERENCE_FORMS}"),
    );
    format!("must be a supported evidence reference {hint}")
}

/// One recorded run, the scoring input (`docs/spec.md`, "The run record"): `{"id"?,
/// "challenge_inputs": [...], "events": [...], "llm_judge_results"?: [...],
/// "human_preference_score"?: x}`. Unknown members are ignored; events need a `type` and an
/// `occurred_at`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RunRecord {
    /// The run's id (any JSON value), echoed into its evaluation record.
    #[serde(default)]
    pub id: Option<Value>,
    /// The challenge inputs in scope (one for `challenge_input`/`case.*` references to resolve).
    #[serde(default, deserialize_with = "null_default")]
    pub challenge_inputs: Vec<ChallengeInput>,
    /// The run's events, in any order.
    #[serde(default, deserialize_with = "null_default")]
    pub events: Vec<Event>,
    /// Precomputed judge results.
    #[serde(default, deserialize_with = "null_default")]
    pub llm_judge_results: Vec<JudgeResult>,
    /// A human preference score for the `human_preference` source.
    #[serde(default)]
    pub human_preference_score: Option<f64>,
}

impl RunRecord {
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
            let at = format!("{what} at column {}", err.column());
            if path.is_empty() || path == "." {
                at
            } else {
                format!("{path}: {at}")
            }
        };
        let mut deserializer = serde_json::Deserializer::from_str(line);
        let record = serde_path_to_error::deserialize(&mut deserializer).map_err(|err| {
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
pub struct ChallengeInput {
    /// The challenge's id.
    #[serde(default, deserialize_with = "null_default")]
    pub challenge_identity_id: String,
    /// The regression case's id.
    #[serde(default)]
    pub regression_case_id: Option<String>,
    /// The challenge key.
    #[serde(default, deserialize_with = "null_default")]
    pub challenge_key: String,
    /// The case key.
    #[serde(default, deserialize_with = "null_default")]
    pub case_key: String,
    /// The item key.
    #[serde(default, deserialize_with = "null_default")]
    pub item_key: String,
    /// The case payload (`null` = none).
    #[serde(default)]
    pub payload: Value,
    /// Named case inputs (boxed: a map node of unboxed values is too big for the allocator's
    /// fast path, and every run decodes one).
    #[serde(default, deserialize_with = "null_default")]
    pub inputs: BTreeMap<String, Box<CaseValue>>,
    /// Named case expectations (boxed, as `inputs`).
    #[serde(default, deserialize_with = "null_default")]
    pub expectations: BTreeMap<String, Box<CaseValue>>,
    /// Named artifacts.
    #[serde(default, deserialize_with = "null_default")]
    pub artifacts: BTreeMap<String, Artifact>,
}

/// A case input or expectation: an inline value, a reference to another input or an artifact,
/// or a path.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CaseValue {
    /// Free-form kind.
    #[serde(default, deserialize_with = "null_default")]
    pub kind: String,
    /// The inline JSON value (`null` = none).
    #[serde(default)]
    pub value: Value,
    /// An artifact key.
    #[serde(default, deserialize_with = "null_default")]
    pub artifact_key: String,
    /// `input:<key>` or `artifact:<key>`.
    #[serde(default, deserialize_with = "null_default")]
    pub source: String,
    /// A path string.
    #[serde(default, deserialize_with = "null_default")]
    pub path: String,
}

/// A case artifact.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Artifact {
    /// Its key.
    #[serde(default, deserialize_with = "null_default")]
    pub key: String,
    /// Its kind.
    #[serde(default, deserialize_with = "null_default")]
    pub kind: String,
    /// Its path.
    #[serde(default, deserialize_with = "null_default")]
    pub path: String,
    /// Its media type.
    #[serde(default, deserialize_with = "null_default")]
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

/// An RFC 3339 instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timestamp {
    /// Nanoseconds since the Unix epoch, UTC.
    pub nanos: i128,
}

impl Timestamp {
    /// The instant in RFC 3339 UTC with the fraction's trailing zeros dropped, as the reference
    /// writes times (`2026-03-16T09:00:02.5Z`).
    pub fn rfc3339(self) -> String {
        let seconds = self.nanos.div_euclid(1_000_000_000) as i64;
        let fraction = self.nanos.rem_euclid(1_000_000_000);
        let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
        let of_day = seconds.rem_euclid(86_400);
        let mut text = String::with_capacity(32);
        if (0..=9999).contains(&year) {
            push_digits(&mut text, year, 4);
        } else {
            text.push_str(&format!("{year:04}"));
        }
        for (separator, value) in [
            ('-', i64::from(month)),
            ('-', i64::from(day)),
            ('T', of_day / 3600),
            (':', of_day / 60 % 60),
            (':', of_day % 60),
        ] {
            text.push(separator);
            push_digits(&mut text, value, 2);
        }
        if fraction > 0 {
            let mut digits = String::with_capacity(9);
            push_digits(&mut digits, fraction as i64, 9);
            text.push('.');
            text.push_str(digits.trim_end_matches('0'));
        }
        text.push('Z');
        text
    }
}

/// Append `value` (not negative, below 10^width) with `width` digits, zero-padded.
fn push_digits(text: &mut String, value: i64, width: u32) {
    for place in (0..width).rev() {
        let digit = (value / 10_i64.pow(place) % 10) as u8;
        text.push(char::from(b'0' + digit));
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TimestampVisitor;

        impl de::Visitor<'_> for TimestampVisitor {
            type Value = Timestamp;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an RFC 3339 timestamp string")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Timestamp, E> {
                parse_rfc3339(text)
                    .map(|nanos| Timestamp { nanos })
                    .ok_or_else(|| E::custom(format!("invalid RFC 3339 timestamp {text:?}")))
            }
        }

        deserializer.deserialize_str(TimestampVisitor)
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM)` as nanoseconds since the epoch.
fn parse_rfc3339(text: &str) -> Option<i128> {
    let bytes = text.as_bytes();
    // The decimal number in `bytes[range]` (a few digits and nothing else).
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        bytes.get(range)?.iter().try_fold(0, |value: i64, byte| {
            byte.is_ascii_digit()
                .then(|| value * 10 + i64::from(byte - b'0'))
        })
    };
    if bytes.len() < 20
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return None;
    }
    if !matches!(bytes[10], b'T' | b't' | b' ') {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut fraction_nanos: i128 = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let kept = &fraction.as_bytes()[..digits.min(9)];
        let value = kept
            .iter()
            .fold(0, |value: i128, byte| value * 10 + i128::from(byte - b'0'));
        fraction_nanos = value * 10_i128.pow(9 - kept.len() as u32);
        rest = &fraction[digits..];
    }
    let offset_seconds: i64 = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (h, m) = rest[1..].split_once(':')?;
            if h.len() != 2 || m.len() != 2 {
                return None;
            }
            sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60)
        }
    };
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        - offset_seconds;
    Some(i128::from(seconds) * 1_000_000_000 + fraction_nanos)
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

/// An event a value was read from: the source pointer of a validator result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourcePointer {
    /// `final_output`, `model_call`, `tool_call` or `run_event`.
    pub kind: &'static str,
    /// The event's sequence number.
    pub sequence: i64,
    /// The event's type.
    pub event_type: String,
    /// What was read.
    pub field_path: String,
}

/// A positive-sequence event's (sequence, type), the raw material of a [`SourcePointer`].
#[derive(Debug, Clone, PartialEq)]
struct EventRef {
    sequence: i64,
    event_type: String,
}

impl EventRef {
    fn of(event: &Event) -> Option<EventRef> {
        (event.sequence_number > 0).then(|| EventRef {
            sequence: event.sequence_number,
            event_type: event.kind.clone(),
        })
    }

    fn pointer(&self, kind: &'static str, field_path: &str) -> SourcePointer {
        SourcePointer {
            kind,
            sequence: self.sequence,
            event_type: self.event_type.clone(),
            field_path: field_path.to_string(),
        }
    }
}

/// One entry of the tool-call trace (the `tool.call.*` events of `docs/spec.md`, "The run
/// record"), borrowing from its event. The canonical arguments and the error message are derived
/// when asked for: most specs never need them.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceEntry<'a> {
    /// Trimmed tool name.
    pub tool_name: &'a str,
    /// The payload's `arguments` (`None` when absent or null: `{}`).
    pub arguments: Option<&'a Value>,
    /// `tool.call.failed`, or `result.is_error` true.
    pub failed: bool,
    /// The payload's `failure_origin`, trimmed.
    pub failure_origin: &'a str,
    /// The result's `content` (loose string).
    pub result_content: Option<&'a str>,
    /// The event's sequence number (0 when none).
    pub sequence: i64,
    /// The event's type.
    pub event_type: &'a str,
}

impl TraceEntry<'_> {
    /// Canonical (sorted-key, compact) JSON of the arguments; `{}` when absent.
    fn canonical_arguments(&self) -> String {
        self.arguments.map_or_else(|| "{}".to_string(), go_json)
    }

    /// The result's error text: the `error` member of a JSON object content, else the content;
    /// trimmed. Empty without content.
    pub fn error_message(&self) -> String {
        let Some(content) = self.result_content else {
            return String::new();
        };
        let error = match serde_json::from_str::<Value>(content) {
            Ok(Value::Object(map)) => map.get("error").and_then(loose_string).map(str::to_string),
            _ => None,
        };
        error.as_deref().unwrap_or(content).trim().to_string()
    }

    /// Name and canonical arguments: two calls with the same signature are the same call.
    pub fn signature(&self) -> (&str, String) {
        (self.tool_name, self.canonical_arguments())
    }
}

impl Serialize for TraceEntry<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut out = serializer.serialize_map(None)?;
        out.serialize_entry("tool_name", self.tool_name)?;
        out.serialize_entry("arguments_canonical", &self.canonical_arguments())?;
        out.serialize_entry("failed", &self.failed)?;
        if !self.failure_origin.is_empty() {
            out.serialize_entry("failure_origin", self.failure_origin)?;
        }
        let message = self.error_message();
        if !message.is_empty() {
            out.serialize_entry("error_message", &message)?;
        }
        out.end()
    }
}

/// The trace entry of a `tool.call.completed`/`failed` event, `None` without a tool name.
fn trace_entry(event: &Event) -> Option<TraceEntry<'_>> {
    let payload = &event.payload;
    let name = text(payload, "tool_name")?.trim();
    if name.is_empty() {
        return None;
    }
    let result = payload.result();
    let is_error = result.get("is_error") == Some(&Value::Bool(true));
    Some(TraceEntry {
        tool_name: name,
        arguments: payload
            .get("arguments")
            .filter(|arguments| !arguments.is_null()),
        failed: event.kind == "tool.call.failed" || is_error,
        failure_origin: text(payload, "failure_origin").map_or("", str::trim),
        result_content: result.get("content").and_then(loose_string),
        sequence: event.sequence_number,
        event_type: &event.kind,
    })
}

/// The tool-call trace of events already in scoring order.
pub fn tool_trace<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<TraceEntry<'a>> {
    events
        .into_iter()
        .filter(|event| {
            matches!(
                event.kind.as_str(),
                "tool.call.completed" | "tool.call.failed"
            )
        })
        .filter_map(trace_entry)
        .collect()
}

/// One conversation turn (multi-turn runs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Turn {
    /// The turn's index.
    pub turn_index: i64,
    /// Its phase id.
    pub phase_id: String,
    /// Who spoke for the user.
    pub actor: String,
    /// The user message.
    pub user_message: String,
    /// The assistant message.
    pub assistant_message: String,
    /// Whether the turn mismatched its script.
    pub mismatch: bool,
}

/// A file captured after the run.
#[derive(Debug, Clone, Default)]
struct FileCapture {
    path: String,
    exists: bool,
    content: String,
}

/// Token usage of one (provider, model).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelUsage {
    /// Provider key.
    pub provider_key: String,
    /// Model id.
    pub provider_model_id: String,
    /// Input tokens.
    pub input_tokens: f64,
    /// Output tokens.
    pub output_tokens: f64,
    /// Total tokens.
    pub total_tokens: f64,
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
    final_output: Option<String>,
    final_output_source: Option<EventRef>,
    last_model_call_source: Option<EventRef>,
    challenge_payload: Option<&'a Value>,
    challenge_id: Option<&'a str>,
    regression_case_id: Option<&'a str>,
    case_input: Option<&'a ChallengeInput>,
    case_reason: &'static str,
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
    files: HashMap<&'a str, (FileCapture, Option<EventRef>)>,
    listings: HashMap<&'a str, (String, Option<EventRef>)>,
    code_results: HashMap<&'a str, (&'a Payload, Option<EventRef>)>,
    /// The tool-call trace.
    pub trace: Vec<TraceEntry<'a>>,
    /// Conversation turns, by index.
    pub turns: Vec<Turn>,
    /// The run's human preference score.
    pub human_preference_score: Option<f64>,
    /// Evidence warnings (the record's `warnings`; `docs/spec.md`, "The evaluation record").
    pub warnings: Vec<&'static str>,
}

fn number(payload: &Payload, key: &str) -> Option<f64> {
    payload.get(key)?.as_f64()
}

fn usage(payload: &Payload, key: &str) -> Option<f64> {
    payload.usage().get(key)?.as_f64()
}

fn text<'v>(payload: &'v Payload, key: &str) -> Option<&'v str> {
    payload.get(key).and_then(loose_string)
}

/// The non-empty string member `name` of a verification event's payload, which keys what it
/// verified.
fn verification_key<'v>(payload: &'v Payload, name: &str) -> Option<&'v str> {
    payload
        .get(name)
        .and_then(Value::as_str)
        .filter(|key| !key.is_empty())
}

/// A non-empty id, as the reference treats the zero UUID as none.
fn id(text: &str) -> Option<&str> {
    (!text.is_empty() && text != "00000000-0000-0000-0000-000000000000").then_some(text)
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
        let mut from_calls = (0.0, 0.0, 0.0);
        let mut usage_from_calls = false;
        let mut step_started: HashMap<i64, &Timestamp> = HashMap::new();
        let mut usage_by_model: Vec<ModelUsage> = Vec::new();
        let mut seen_models: Vec<(String, String)> = Vec::new();
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
                    let provider = text(payload, "provider_key").unwrap_or("");
                    let (first, second) = if event.kind == "model.call.completed" {
                        ("provider_model_id", "model")
                    } else {
                        ("model", "provider_model_id")
                    };
                    let model = text(payload, first)
                        .filter(|model| !model.is_empty())
                        .or_else(|| text(payload, second))
                        .unwrap_or("");
                    let seen = seen_models.iter().any(|(known_provider, known_model)| {
                        known_provider == provider && known_model == model
                    });
                    if !seen && (!provider.is_empty() || !model.is_empty()) {
                        seen_models.push((provider.to_string(), model.to_string()));
                    }
                    if event.kind == "model.call.completed" {
                        if let Some(source) = EventRef::of(event) {
                            evidence.last_model_call_source = Some(source);
                        }
                        let counts = [
                            usage(payload, "input_tokens"),
                            usage(payload, "output_tokens"),
                            usage(payload, "total_tokens"),
                        ];
                        if counts.iter().any(Option::is_some) {
                            usage_from_calls = true;
                            let index = match usage_by_model.iter().position(|row| {
                                row.provider_key == provider && row.provider_model_id == model
                            }) {
                                Some(index) => index,
                                None => {
                                    usage_by_model.push(ModelUsage {
                                        provider_key: provider.to_string(),
                                        provider_model_id: model.to_string(),
                                        ..ModelUsage::default()
                                    });
                                    usage_by_model.len() - 1
                                }
                            };
                            let row = &mut usage_by_model[index];
                            let [input, output, total] = counts.map(|count| count.unwrap_or(0.0));
                            row.input_tokens += input;
                            row.output_tokens += output;
                            row.total_tokens += total;
                            from_calls.0 += input;
                            from_calls.1 += output;
                            from_calls.2 += total;
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
        if usage_from_calls {
            evidence.input_tokens.get_or_insert(from_calls.0);
            evidence.output_tokens.get_or_insert(from_calls.1);
            if evidence.total_tokens.is_none() {
                if from_calls.2 > 0.0 {
                    evidence.total_tokens = Some(from_calls.2);
                } else if let (Some(input), Some(output)) =
                    (evidence.input_tokens, evidence.output_tokens)
                {
                    evidence.total_tokens = Some(input + output);
                }
            }
        }
        if evidence.tool_call_count.is_none() && !evidence.trace.is_empty() {
            evidence.tool_call_count = Some(evidence.trace.len() as f64);
        }
        for row in &mut usage_by_model {
            if row.total_tokens == 0.0 && (row.input_tokens > 0.0 || row.output_tokens > 0.0) {
                row.total_tokens = row.input_tokens + row.output_tokens;
            }
        }
        usage_by_model.sort_by(|a, b| {
            (&a.provider_key, &a.provider_model_id).cmp(&(&b.provider_key, &b.provider_model_id))
        });
        seen_models.sort();
        evidence.model_usage = usage_by_model;
        evidence.observed_models = seen_models;
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

fn unsupported(source: &str) -> Resolved {
    Resolved::Error(format!("unsupported evidence source {source:?}"))
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

fn resolve_case(reference: &str, input: &ChallengeInput) -> Resolved {
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

fn resolve_artifact_reference(reference: &str, input: &ChallengeInput) -> Resolved {
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

/// The conversation turns carried by events with a payload `turn_index`, by index.
fn turns(events: &[&Event]) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    for event in events {
        let payload = &event.payload;
        let Some(index) = number(payload, "turn_index").map(|index| index as i64) else {
            continue;
        };
        let position = match turns.iter().position(|turn| turn.turn_index == index) {
            Some(position) => position,
            None => {
                turns.push(Turn {
                    turn_index: index,
                    ..Turn::default()
                });
                turns.len() - 1
            }
        };
        let turn = &mut turns[position];
        if let Some(phase) = text(payload, "phase_id") {
            turn.phase_id = phase.to_string();
        }
        match event.kind.as_str() {
            "turn.user.message" => {
                if let Some(content) = text(payload, "content") {
                    turn.user_message = content.to_string();
                }
                if let Some(actor) = text(payload, "actor") {
                    turn.actor = actor.to_string();
                }
            }
            "turn.assistant.message" => {
                if let Some(content) = text(payload, "content") {
                    turn.assistant_message = content.to_string();
                }
            }
            "turn.completed" => {
                if let Some(Value::Bool(mismatch)) = payload.get("mismatch") {
                    turn.mismatch = *mismatch;
                }
                if turn.actor.is_empty() {
                    if let Some(actor) = text(payload, "actor") {
                        turn.actor = actor.to_string();
                    }
                }
            }
            _ => {}
        }
    }
    turns.sort_by_key(|turn| turn.turn_index);
    turns
}

fn transcript(turns: &[Turn]) -> Resolved {
    if turns.is_empty() {
        return Resolved::Missing("transcript evidence is unavailable".to_string());
    }
    let mut lines = Vec::with_capacity(turns.len() * 2);
    for turn in turns {
        if !turn.user_message.trim().is_empty() {
            lines.push(format!("user[{}]: {}", turn.turn_index, turn.user_message));
        }
        if !turn.assistant_message.trim().is_empty() {
            lines.push(format!(
                "assistant[{}]: {}",
                turn.turn_index, turn.assistant_message
            ));
        }
    }
    Resolved::Value(lines.join("\n"))
}

fn resolve_transcript(reference: &str, turns: &[Turn]) -> Resolved {
    match reference {
        "transcript.full" => transcript(turns),
        "transcript.from_mismatch" => match turns.iter().position(|turn| turn.mismatch) {
            Some(first) => transcript(&turns[first..]),
            None => Resolved::Missing("transcript mismatch evidence is unavailable".to_string()),
        },
        "turn.expectations" => {
            if turns.is_empty() {
                return Resolved::Missing("turn expectations evidence is unavailable".to_string());
            }
            let mut out = String::from("[");
            for (i, turn) in turns.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&format!("{{\"turn_index\":{}", turn.turn_index));
                if !turn.phase_id.is_empty() {
                    out.push_str(",\"phase_id\":");
                    json_string(&turn.phase_id, &mut out);
                }
                out.push_str(&format!(",\"mismatch\":{}}}", turn.mismatch));
            }
            out.push(']');
            Resolved::Value(out)
        }
        _ => {
            let count = reference
                .strip_prefix("transcript.last_n:")
                .and_then(|count| count.trim().parse::<i64>().ok())
                .filter(|count| *count > 0);
            match count {
                None => unsupported(reference),
                Some(_) if turns.is_empty() => {
                    Resolved::Missing("transcript evidence is unavailable".to_string())
                }
                Some(count) => {
                    let start = turns.len().saturating_sub(count as usize);
                    transcript(&turns[start..])
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_are_written_as_the_reference_writes_them() {
        let write = |text: &str| parse_rfc3339(text).map(|nanos| Timestamp { nanos }.rfc3339());
        for (read, written) in [
            ("2026-03-16T09:00:04.380Z", "2026-03-16T09:00:04.38Z"),
            (
                "0001-01-01T00:00:00.000000001Z",
                "0001-01-01T00:00:00.000000001Z",
            ),
            ("1999-12-31T23:59:59-00:30", "2000-01-01T00:29:59Z"),
        ] {
            assert_eq!(write(read).as_deref(), Some(written), "{read}");
        }
        assert_eq!(
            Timestamp { nanos: -1 }.rfc3339(),
            "1969-12-31T23:59:59.999999999Z"
        );
        let before_year_zero = Timestamp {
            nanos: -62_200_000_000 * 1_000_000_000,
        };
        assert_eq!(before_year_zero.rfc3339(), "-002-12-17T14:13:20Z");
    }

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
        assert!(
            missing.starts_with("events[0]: missing field `occurred_at`"),
            "{missing}"
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
