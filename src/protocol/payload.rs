//! The one protocol-v2 payload builder every adapter uses.

use serde_json::{Map, Value};

/// The candidate text preflight probes with.
pub const PREFLIGHT_CANDIDATE: &str = "__evalctl_preflight__";

/// Build `{"_protocol_version": 2, "candidate", "task_model"?, "example"?}`.
///
/// `task_model` appears only when given; `example` only in dataset-backed calls, as the record
/// exactly as loaded (key order and number spelling preserved).
pub fn build_payload(candidate: &str, task_model: Option<&str>, example: Option<&Value>) -> Value {
    let mut payload = Map::with_capacity(4);
    payload.insert("_protocol_version".into(), Value::from(2));
    payload.insert("candidate".into(), Value::from(candidate));
    if let Some(model) = task_model {
        payload.insert("task_model".into(), Value::from(model));
    }
    if let Some(example) = example {
        payload.insert("example".into(), example.clone());
    }
    Value::Object(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_appear_only_when_given() {
        let bare = build_payload("c", None, None);
        assert_eq!(
            bare.to_string(),
            r#"{"_protocol_version":2,"candidate":"c"}"#
        );
        let example: Value = serde_json::from_str(r#"{"z":1.10,"a":[1]}"#).unwrap();
        let full = build_payload("c", Some("openai/gpt-4o-mini"), Some(&example));
        assert_eq!(
            full.to_string(),
            r#"{"_protocol_version":2,"candidate":"c","task_model":"openai/gpt-4o-mini","example":{"z":1.10,"a":[1]}}"#
        );
    }
}
