//! Reading evaluator output that uses the non-standard `NaN`, `Infinity` and `-Infinity` tokens
//! (Python's `json.dumps` writes them), so they are reported as non-finite scores rather than as
//! unparseable JSON.
//!
//! Each token outside a string is replaced by a sentinel string before parsing; [`sentinel_token`]
//! recognises a sentinel and [`restore_tokens`] turns sentinels left in side information into the
//! plain strings `"NaN"`, `"Infinity"`, `"-Infinity"`.

use serde_json::Value;

/// Prefix of a sentinel: a NUL byte no real evaluator puts at the start of a string.
const SENTINEL_PREFIX: char = '\u{0}';
const TOKENS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];

/// Parse `text`, accepting bare `NaN`/`Infinity`/`-Infinity` tokens outside strings.
/// Returns `None` when the text has no such token (the strict parse error stands) or is still
/// invalid with them replaced.
pub fn parse_with_nonfinite_tokens(text: &str) -> Option<Value> {
    serde_json::from_str(&replace_nonfinite_tokens(text)?).ok()
}

/// `text` with every bare `NaN`/`Infinity`/`-Infinity` token outside strings replaced by its
/// sentinel string, ready for a strict JSON parser; `None` when there is no such token.
pub fn replace_nonfinite_tokens(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 16);
    let mut replaced = false;
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(ch) = rest.chars().next() {
        if in_string {
            out.push(ch);
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_string = false;
            }
            rest = &rest[ch.len_utf8()..];
            continue;
        }
        if ch == '"' {
            in_string = true;
        } else if let Some(token) = TOKENS.iter().find(|token| rest.starts_with(*token)) {
            out.push_str(&format!("\"\\u0000{token}\""));
            rest = &rest[token.len()..];
            replaced = true;
            continue;
        }
        out.push(ch);
        rest = &rest[ch.len_utf8()..];
    }
    replaced.then_some(out)
}

/// If `value` is a sentinel, the token it stands for.
pub fn sentinel_token(value: &Value) -> Option<&str> {
    let text = value.as_str()?.strip_prefix(SENTINEL_PREFIX)?;
    TOKENS.iter().copied().find(|token| *token == text)
}

/// Replace every sentinel inside `value` by the plain string of its token.
pub fn restore_tokens(value: &mut Value) {
    match value {
        Value::String(_) => {
            if let Some(token) = sentinel_token(value) {
                *value = Value::String(token.to_string());
            }
        }
        Value::Array(items) => items.iter_mut().for_each(restore_tokens),
        Value::Object(map) => map.values_mut().for_each(restore_tokens),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_outside_strings_become_sentinels() {
        let value = parse_with_nonfinite_tokens(
            r#"{"score": NaN, "a": [Infinity, -Infinity], "s": "NaN \" Infinity"}"#,
        )
        .unwrap();
        assert_eq!(sentinel_token(&value["score"]), Some("NaN"));
        assert_eq!(sentinel_token(&value["a"][0]), Some("Infinity"));
        assert_eq!(sentinel_token(&value["a"][1]), Some("-Infinity"));
        assert_eq!(value["s"], "NaN \" Infinity");
    }

    #[test]
    fn text_without_tokens_is_left_to_the_strict_error() {
        assert!(replace_nonfinite_tokens("{\"score\": 1} plain").is_none());
        assert!(parse_with_nonfinite_tokens("{\"score\": }").is_none());
        assert!(parse_with_nonfinite_tokens("{\"score\": NaN,}").is_none());
    }

    #[test]
    fn restore_turns_sentinels_into_plain_strings() {
        let mut value = parse_with_nonfinite_tokens(r#"{"x": [NaN]}"#).unwrap();
        restore_tokens(&mut value);
        assert_eq!(value.to_string(), r#"{"x":["NaN"]}"#);
    }
}
