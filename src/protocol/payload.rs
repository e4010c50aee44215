//! The one protocol-v2 payload builder every adapter uses.

/// The candidate text preflight probes with.
pub const PREFLIGHT_CANDIDATE: &str = "__evalctl_preflight__";

/// Build the bytes of `{"_protocol_version": 2, "candidate", "task_model"?, "example"?,
/// "prompt"?, "output"?}`.
///
/// `task_model` appears only when given; `example` only in dataset-backed calls; `prompt` (the
/// rendered prompt) and `output` (the task model's answer) only under `run --generate`, from
/// `generated`. The example is the record's JSON text exactly as it stands in its file (already
/// validated as a JSON object by the loader), so key order, number spelling and string escapes
/// reach the evaluator unchanged.
pub fn build_payload(
    candidate: &str,
    task_model: Option<&str>,
    example: Option<&str>,
    generated: Option<(&str, &str)>,
) -> Vec<u8> {
    let mut payload = Vec::with_capacity(
        64 + candidate.len() + example.map_or(0, str::len) + task_model.map_or(0, str::len),
    );
    payload.extend_from_slice(br#"{"_protocol_version":2,"candidate":"#);
    write_json_string(&mut payload, candidate);
    if let Some(model) = task_model {
        payload.extend_from_slice(br#","task_model":"#);
        write_json_string(&mut payload, model);
    }
    if let Some(example) = example {
        payload.extend_from_slice(br#","example":"#);
        payload.extend_from_slice(example.as_bytes());
    }
    if let Some((prompt, output)) = generated {
        payload.extend_from_slice(br#","prompt":"#);
        write_json_string(&mut payload, prompt);
        payload.extend_from_slice(br#","output":"#);
        write_json_string(&mut payload, output);
    }
    payload.push(b'}');
    payload
}

fn write_json_string(out: &mut Vec<u8>, text: &str) {
    serde_json::to_writer(out, text).expect("writing a string to memory cannot fail");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: Vec<u8>) -> String {
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn keys_appear_only_when_given() {
        assert_eq!(
            text(build_payload("c", None, None, None)),
            r#"{"_protocol_version":2,"candidate":"c"}"#
        );
        assert_eq!(
            text(build_payload(
                "say \"hi\"\n",
                Some("openai/gpt-4o-mini"),
                Some(r#"{"z": 1.10, "a": 1e2}"#),
                None
            )),
            r#"{"_protocol_version":2,"candidate":"say \"hi\"\n","task_model":"openai/gpt-4o-mini","example":{"z": 1.10, "a": 1e2}}"#
        );
    }

    #[test]
    fn the_payload_is_valid_json() {
        let bytes = build_payload(
            "\u{0}é\t",
            Some("m"),
            Some(r#"{"k": [1, {"x": null}]}"#),
            Some(("Q: 1+1?", "2")),
        );
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(value["candidate"], "\u{0}é\t");
        assert_eq!(value["example"]["k"][1]["x"], serde_json::Value::Null);
        assert_eq!(
            (&value["prompt"], &value["output"]),
            (&"Q: 1+1?".into(), &"2".into())
        );
    }
}
