//! Source pointers: the event a validator's value was read from.

use serde::Serialize;

use super::record::Event;

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
pub(super) struct EventRef {
    sequence: i64,
    event_type: String,
}

impl EventRef {
    pub(super) fn of(event: &Event) -> Option<EventRef> {
        (event.sequence_number > 0).then(|| EventRef {
            sequence: event.sequence_number,
            event_type: event.kind.clone(),
        })
    }

    pub(super) fn pointer(&self, kind: &'static str, field_path: &str) -> SourcePointer {
        SourcePointer {
            kind,
            sequence: self.sequence,
            event_type: self.event_type.clone(),
            field_path: field_path.to_string(),
        }
    }
}
