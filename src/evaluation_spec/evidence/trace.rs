//! The tool-call trace: one entry per `tool.call.completed`/`failed` event, with the canonical
//! arguments and error message validators and signals compare.

use serde::Serialize;
use serde_json::Value;

use super::members::text;
use super::record::Event;
use crate::evaluation_spec::gostr::{go_json, loose_string};

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
pub(super) fn trace_entry(event: &Event) -> Option<TraceEntry<'_>> {
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
