//! Reading evaluator and judge output that is not quite standard JSON, as Python's `json.dumps`
//! and JavaScript's `JSON.stringify` write it:
//! - the `NaN`, `Infinity` and `-Infinity` tokens, so that they are reported as non-finite
//!   scores rather than as unparseable JSON. Each token outside a string is replaced by a
//!   sentinel string before parsing; [`sentinel_token`] recognises a sentinel and
//!   [`restore_tokens`] turns sentinels left in side information into the plain strings `"NaN"`,
//!   `"Infinity"`, `"-Infinity"`;
//! - the `\u` escape of half a UTF-16 surrogate pair without its other half (a text cut in the
//!   middle of an emoji), which no Rust string can hold: it becomes U+FFFD, the replacement
//!   character, so that the score is not lost with it.

use serde_json::Value;

/// Prefix of a sentinel: a NUL byte no real evaluator puts at the start of a string.
const SENTINEL_PREFIX: char = '\u{0}';
const TOKENS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];

/// Parse `text`, accepting bare `NaN`/`Infinity`/`-Infinity` tokens outside strings and lone
/// surrogate escapes inside them. Returns `None` when the text has neither (the strict parse
/// error stands) or is still invalid with them replaced.
pub fn parse_lenient(text: &str) -> Option<Value> {
    serde_json::from_str(&to_standard_json(text)?).ok()
}

/// `text` with every bare `NaN`/`Infinity`/`-Infinity` token outside strings replaced by its
/// sentinel string and every lone surrogate escape inside strings by `\ufffd`, ready for a
/// strict JSON parser; `None` when there is nothing to replace.
pub fn to_standard_json(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 16);
    let mut replaced = false;
    let mut in_string = false;
    let mut rest = text;
    while let Some(ch) = rest.chars().next() {
        if in_string {
            let taken = if ch == '\\' {
                let (escape, lone) = escape_at(rest);
                out.push_str(if lone { "\\ufffd" } else { escape });
                replaced |= lone;
                escape.len()
            } else {
                in_string = ch != '"';
                out.push(ch);
                ch.len_utf8()
            };
            rest = &rest[taken..];
            continue;
        }
        if ch == '"' {
            in_string = true;
        } else if let Some(token) = TOKENS.iter().find(|token| rest.starts_with(*token)) {
            out.push_str(&format!("{SENTINEL_START}{token}\""));
            rest = &rest[token.len()..];
            replaced = true;
            continue;
        }
        out.push(ch);
        rest = &rest[ch.len_utf8()..];
    }
    replaced.then_some(out)
}

/// The escape `text` starts with (at its backslash): a surrogate pair's two `\u` escapes
/// together, else one `\u` escape, else the backslash and the character it escapes; and whether
/// it is the escape of a lone surrogate.
fn escape_at(text: &str) -> (&str, bool) {
    let code = |at: usize| {
        text.get(at..at + 6)
            .and_then(|escape| escape.strip_prefix("\\u"))
            .and_then(|hex| u16::from_str_radix(hex, 16).ok())
    };
    match code(0) {
        Some(0xD800..=0xDBFF) if matches!(code(6), Some(0xDC00..=0xDFFF)) => (&text[..12], false),
        Some(unit) => (&text[..6], (0xD800..=0xDFFF).contains(&unit)),
        None => {
            let next = text[1..].chars().next().map_or(0, char::len_utf8);
            (&text[..1 + next], false)
        }
    }
}

/// The byte offset in `original` of `offset` in `standard`, which [`to_standard_json`] made from
/// it: each token it replaced before there is 8 bytes longer as its sentinel string (`NaN` →
/// `"\u0000NaN"`), and a replaced surrogate escape is as long as it was. A sentinel is told from
/// a string of the text's own that starts the same way by what stands in `original` there: a
/// token, not a quote.
pub fn offset_as_written(original: &str, standard: &str, offset: usize) -> usize {
    let (original, standard) = (original.as_bytes(), standard.as_bytes());
    let (mut at, mut at_standard) = (0, 0);
    while at_standard < offset.min(standard.len()) && at < original.len() {
        let sentinel =
            standard[at_standard..].starts_with(SENTINEL_START.as_bytes()) && original[at] != b'"';
        match TOKENS
            .iter()
            .find(|token| sentinel && original[at..].starts_with(token.as_bytes()))
        {
            Some(token) => {
                at += token.len();
                at_standard += token.len() + SENTINEL_GROWTH;
            }
            None => {
                at += 1;
                at_standard += 1;
            }
        }
    }
    at
}

/// How a sentinel string starts in the standard JSON text.
const SENTINEL_START: &str = "\"\\u0000";

/// How many bytes longer a sentinel string is than its token: its quotes and the `\u0000`.
const SENTINEL_GROWTH: usize = 8;

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
    fn an_offset_in_the_standard_text_is_found_in_the_text_as_written() {
        // A string of the text's own that starts as a sentinel does is no sentinel.
        let text = r#"{"a": NaN, "b": "\u0000x", "c": -Infinity, "d": "\ud83d"}"#;
        let standard = to_standard_json(text).unwrap();
        for (written, name) in [(11, "\"b\""), (27, "\"c\""), (43, "\"d\"")] {
            let offset = standard.find(name).unwrap();
            assert_eq!(
                offset_as_written(text, &standard, offset),
                written,
                "{name}"
            );
            assert_eq!(&text[written..written + name.len()], name);
        }
        assert_eq!(
            offset_as_written(text, &standard, standard.len()),
            text.len()
        );
    }

    #[test]
    fn tokens_outside_strings_become_sentinels() {
        let value =
            parse_lenient(r#"{"score": NaN, "a": [Infinity, -Infinity], "s": "NaN \" Infinity"}"#)
                .unwrap();
        assert_eq!(sentinel_token(&value["score"]), Some("NaN"));
        assert_eq!(sentinel_token(&value["a"][0]), Some("Infinity"));
        assert_eq!(sentinel_token(&value["a"][1]), Some("-Infinity"));
        assert_eq!(value["s"], "NaN \" Infinity");
    }

    #[test]
    fn text_without_tokens_is_left_to_the_strict_error() {
        assert!(to_standard_json("{\"score\": 1} plain").is_none());
        assert!(parse_lenient("{\"score\": }").is_none());
        assert!(parse_lenient("{\"score\": NaN,}").is_none());
    }

    #[test]
    fn lone_surrogate_escapes_become_the_replacement_character() {
        let value = parse_lenient(
            r#"{"cut": "mid-emoji \ud83d", "low": "\uDC00!", "pair": "\ud83d\ude00", "kept": "\\ud83d", "q": "\"\ud800"}"#,
        )
        .unwrap();
        assert_eq!(value["cut"], "mid-emoji \u{fffd}");
        assert_eq!(value["low"], "\u{fffd}!");
        assert_eq!(value["pair"], "\u{1f600}");
        assert_eq!(value["kept"], "\\ud83d");
        assert_eq!(value["q"], "\"\u{fffd}");
        assert!(to_standard_json(r#"{"pair": "\ud83d\ude00", "e": "\\ud83d"}"#).is_none());
    }

    #[test]
    fn restore_turns_sentinels_into_plain_strings() {
        let mut value = parse_lenient(r#"{"x": [NaN]}"#).unwrap();
        restore_tokens(&mut value);
        assert_eq!(value.to_string(), r#"{"x":["NaN"]}"#);
    }
}
