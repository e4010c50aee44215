//! An event payload as scoring reads it: only the members some part of scoring looks at are kept
//! (each as the JSON value it holds); every other member is checked as JSON (nesting depth,
//! string escapes) exactly as a full decode would check it, then dropped. The nested `usage` and
//! `result` objects keep only their own read members. A payload that is not an object, and a
//! `usage` or `result` that is not one, read as having no members: every reader treats a missing
//! member and a non-object alike. Decoding a run this way avoids building a map (keys, hashing,
//! values) for every payload of every event.

use std::fmt;
use std::sync::LazyLock;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::named_values::NamedValues;
use crate::input::{repeated_key_error, UniqueValue};

/// The payload members scoring reads (evidence, tool-call trace, turns, file captures), `usage`
/// and `result` aside, and [`CODE_EXECUTION_RECORD`]: a reader of a new member lists it here.
const PAYLOAD_MEMBERS: &[&str] = &[
    "final_output",
    "output",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "tool_call_count",
    "latency_ms",
    "step_index",
    "tool_name",
    "arguments",
    "failure_origin",
    "provider_key",
    "provider_model_id",
    "model",
    "tokens_added",
    "key",
    "path",
    "exists",
    "content",
    "entries",
    "validator_key",
    "turn_index",
    "phase_id",
    "actor",
    "mismatch",
    "usage",
    "result",
];

/// The members of a recorded result that `code_execution` copies into its evidence.
pub const CODE_EXECUTION_RECORD: &[&str] = &[
    "validator_key",
    "target",
    "target_path",
    "test_command",
    "timeout_ms",
    "exit_code",
    "stdout",
    "stderr",
    "timed_out",
    "execution_error",
    "passed_tests",
    "failed_tests",
    "error_tests",
    "total_tests",
];

/// The members of a payload's `usage` object that scoring reads.
const USAGE_MEMBERS: &[&str] = &["input_tokens", "output_tokens", "total_tokens"];

/// The members of a tool call's `result` object that scoring reads.
const RESULT_MEMBERS: &[&str] = &["is_error", "content"];

/// One event's payload: the members scoring reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Payload {
    members: NamedValues,
    usage: NamedValues,
    result: NamedValues,
}

impl Payload {
    /// The member `key` (not `usage` or `result`: see [`Payload::usage`], [`Payload::result`]).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.members.get(key)
    }

    /// The members of the payload's `usage` object (none when it is not an object).
    pub fn usage(&self) -> &NamedValues {
        &self.usage
    }

    /// The members of the payload's `result` object (none when it is not an object).
    pub fn result(&self) -> &NamedValues {
        &self.result
    }

    /// The kept members (not `usage` or `result`) as a JSON object: what `code_execution` reads
    /// of a recorded result.
    pub fn to_object(&self) -> Value {
        Value::Object(self.members.clone().into_map())
    }
}

impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Shape::Payload.deserialize(deserializer)
    }
}

/// What a JSON value is read as: a payload, a payload's `usage` or `result` object (their kept
/// members land in [`Payload::members`]), or nothing (checked and dropped).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    Payload,
    Usage,
    Result,
    Checked,
}

impl Shape {
    /// The object members this shape keeps (none for `Checked`).
    fn names(self) -> Option<&'static MemberNames> {
        static PAYLOAD: LazyLock<MemberNames> = LazyLock::new(|| {
            let mut names = PAYLOAD_MEMBERS.to_vec();
            names.extend(
                CODE_EXECUTION_RECORD
                    .iter()
                    .filter(|name| !PAYLOAD_MEMBERS.contains(name)),
            );
            MemberNames::new(&names)
        });
        static USAGE: LazyLock<MemberNames> = LazyLock::new(|| MemberNames::new(USAGE_MEMBERS));
        static RESULT: LazyLock<MemberNames> = LazyLock::new(|| MemberNames::new(RESULT_MEMBERS));
        match self {
            Shape::Payload => Some(&PAYLOAD),
            Shape::Usage => Some(&USAGE),
            Shape::Result => Some(&RESULT),
            Shape::Checked => None,
        }
    }
}

/// Kept member names grouped by length: a key is compared only with the names as long as it
/// (every member of every payload of every run is looked up).
struct MemberNames(Vec<Vec<&'static str>>);

impl MemberNames {
    fn new(names: &[&'static str]) -> MemberNames {
        let mut by_length: Vec<Vec<&'static str>> = Vec::new();
        for name in names {
            if by_length.len() <= name.len() {
                by_length.resize(name.len() + 1, Vec::new());
            }
            by_length[name.len()].push(name);
        }
        MemberNames(by_length)
    }

    /// The kept name `key` is, if any.
    fn find(&self, key: &str) -> Option<&'static str> {
        let same_length = self.0.get(key.len())?;
        same_length.iter().find(|name| **name == key).copied()
    }
}

impl<'de> DeserializeSeed<'de> for Shape {
    type Value = Payload;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Payload, D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// `Visitor` methods that read a scalar of each listed type as an empty payload: a scalar where
/// an object is expected keeps nothing.
macro_rules! scalars_read_as_empty {
    ($($visit:ident($scalar:ty)),* $(,)?) => {
        $(
            fn $visit<E: de::Error>(self, _: $scalar) -> Result<Payload, E> {
                Ok(Payload::default())
            }
        )*
    };
}

impl<'de> Visitor<'de> for Shape {
    type Value = Payload;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Payload, A::Error> {
        let mut read = Payload::default();
        // A kept member given twice says two things at once (the others are dropped unread).
        let (mut usage_read, mut result_read) = (false, false);
        while let Some(name) = map.next_key_seed(KnownKey(self.names()))? {
            match (self, name) {
                (_, None) => {
                    map.next_value_seed(Shape::Checked)?;
                }
                (Shape::Payload, Some(name @ ("usage" | "result"))) => {
                    let (read_before, members, shape) = if name == "usage" {
                        (&mut usage_read, &mut read.usage, Shape::Usage)
                    } else {
                        (&mut result_read, &mut read.result, Shape::Result)
                    };
                    if std::mem::replace(read_before, true) {
                        return Err(repeated_key_error(name));
                    }
                    *members = map.next_value_seed(shape)?.members;
                }
                (_, Some(name)) => {
                    if read.members.contains_key(name) {
                        return Err(repeated_key_error(name));
                    }
                    read.members.insert(name, map.next_value_seed(UniqueValue)?);
                }
            }
        }
        Ok(read)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Payload, A::Error> {
        while seq.next_element_seed(Shape::Checked)?.is_some() {}
        Ok(Payload::default())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Payload, D::Error> {
        deserializer.deserialize_any(self)
    }

    scalars_read_as_empty!(
        visit_bool(bool),
        visit_i64(i64),
        visit_u64(u64),
        visit_i128(i128),
        visit_u128(u128),
        visit_f64(f64),
        visit_str(&str),
    );

    fn visit_unit<E: de::Error>(self) -> Result<Payload, E> {
        Ok(Payload::default())
    }

    fn visit_none<E: de::Error>(self) -> Result<Payload, E> {
        Ok(Payload::default())
    }
}

/// An object key: which of the names `self.0` it is, `None` for one not kept (read without
/// allocating).
struct KnownKey(Option<&'static MemberNames>);

impl<'de> DeserializeSeed<'de> for KnownKey {
    type Value = Option<&'static str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KnownKey {
    type Value = Option<&'static str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        Ok(self.0.and_then(|names| names.find(key)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(text: &str) -> Payload {
        serde_json::from_str(text).expect("a payload")
    }

    #[test]
    fn only_read_members_are_kept_and_a_read_member_given_twice_is_refused() {
        let read = payload(
            r#"{"tool_name": "b", "noise": {"deep": [1, {"x": "y", "x": "z"}]}, "noise": 1,
                "usage": {"input_tokens": 3, "cached": 1}, "result": {"is_error": true}}"#,
        );
        assert_eq!(read.get("tool_name"), Some(&Value::from("b")));
        assert_eq!(read.get("noise"), None);
        assert_eq!(read.usage().get("input_tokens"), Some(&Value::from(3)));
        assert_eq!(read.usage().get("cached"), None);
        assert_eq!(read.result().get("is_error"), Some(&Value::Bool(true)));
        assert_eq!(read, serde_json::from_value(serde_json::from_str::<Value>(
            r#"{"tool_name": "b", "usage": {"input_tokens": 3}, "result": {"is_error": true}}"#,
        ).expect("json")).expect("a payload"));
        // A member scoring reads, given twice at any depth, says two things at once.
        for (text, key) in [
            (r#"{"tool_name": "a", "tool_name": "b"}"#, "tool_name"),
            (r#"{"arguments": {"q": 1, "q": 2}}"#, "q"),
            (r#"{"usage": {}, "usage": {"input_tokens": 3}}"#, "usage"),
            (
                r#"{"usage": {"input_tokens": 3, "input_tokens": 4}}"#,
                "input_tokens",
            ),
            (r#"{"result": {"is_error": true}, "result": {}}"#, "result"),
        ] {
            let err = serde_json::from_str::<Payload>(text).expect_err(text);
            assert!(
                err.to_string()
                    .starts_with(&format!("the key `{key}` is given twice in one object")),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn non_objects_have_no_members_and_dropped_members_are_still_checked() {
        for text in [
            "5",
            "\"text\"",
            "[1, 2]",
            "null",
            "{\"usage\": 7, \"result\": [1]}",
        ] {
            let read = payload(text);
            assert_eq!(read.get("usage"), None, "{text}");
            assert_eq!(read.usage(), &NamedValues::default(), "{text}");
            assert_eq!(read.result(), &NamedValues::default(), "{text}");
        }
        let deep = format!("{{\"noise\": {}{}}}", "[".repeat(200), "]".repeat(200));
        let err = serde_json::from_str::<Payload>(&deep).expect_err("too deep");
        assert!(
            err.to_string().starts_with("recursion limit exceeded"),
            "{err}"
        );
        let surrogate = r#"{"noise": "\ud800"}"#;
        assert!(serde_json::from_str::<Payload>(surrogate).is_err());
        assert!(serde_json::from_str::<Value>(surrogate).is_err());
    }
}
