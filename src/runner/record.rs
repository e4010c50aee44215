//! The result record of one evaluator call: one `--output` line, and what summaries aggregate.

use serde::Serialize;
use serde_json::{Map, Value};

use super::Split;
use crate::protocol::CallError;

/// One finished call, as written to `--output`.
#[derive(Debug, Clone, Serialize)]
pub struct CallRecord {
    /// The candidate's id.
    pub candidate_id: String,
    /// `single`, `train` or `val`.
    pub split: Split,
    /// 0-based index of the example within its split; null for single calls.
    pub example_index: Option<usize>,
    /// 1-based line of the example in its file; null for single calls.
    pub example_line: Option<usize>,
    /// The score; 0.0 when the call failed.
    pub score: f64,
    /// Every other key of the evaluator's answer, verbatim.
    pub side_info: Map<String, Value>,
    /// Why the call failed, or null.
    pub error: Option<CallError>,
    /// Attempts made (1 + retries used).
    pub attempts: u32,
    /// Wall time of the call, retries included, in milliseconds.
    pub latency_ms: f64,
    /// An evaluation spec's pass verdict (`run --spec`); absent for other evaluators.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    /// The built-in checks that errored (also in `side_info.errored_checks`).
    #[serde(skip)]
    pub errored_checks: Vec<String>,
}

impl CallRecord {
    /// A short human label: `prompt.txt train #3 (line 4)`.
    pub fn call_label(&self) -> String {
        let split = match self.split {
            Split::Single => return self.candidate_id.clone(),
            Split::Train => "train",
            Split::Val => "val",
        };
        match (self.example_index, self.example_line) {
            (Some(index), Some(line)) => {
                format!("{} {split} #{index} (line {line})", self.candidate_id)
            }
            _ => format!("{} {split}", self.candidate_id),
        }
    }
}
