//! JSON values whose objects name each member once. An object that repeats a name
//! (`{"score": 1, "score": 0}`) says two things at once: JSON readers disagree on which value
//! counts (serde_json and Python take the last, others the first, some refuse). Every JSON input
//! evalctl reads as data (dataset, valset and candidate lines, task records, evaluator answers,
//! FEP requests with their test cases and outputs, `serve`'s request bodies, checks files,
//! rubrics, evaluation specs) is parsed by [`parse_unique`] (or [`decode_unique`], a YAML spec),
//! which refuses such an object at the name where it comes again, in the one pass that builds
//! the value. A record decoded straight into structs (a spec run record) reads its free-form
//! values with [`UniqueValue`] and its maps with [`decode_unique_map`].

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use super::json_error_what;

/// The JSON value of `bytes`, as `serde_json::from_slice` gives it (numbers as written), or its
/// error; an object that repeats a name is a data error (`err.is_data()`) placed where the name
/// comes again, worded by [`repeated_key_reason`].
pub fn parse_unique(bytes: &[u8]) -> serde_json::Result<Value> {
    parse_whole(serde_json::Deserializer::from_slice(bytes))
}

/// [`parse_unique`] of text already known to be UTF-8 (a JSONL line), which is not checked again.
pub fn parse_unique_str(text: &str) -> serde_json::Result<Value> {
    parse_whole(serde_json::Deserializer::from_str(text))
}

/// The one value `deserializer` holds, with nothing after it.
fn parse_whole<'de, R: serde_json::de::Read<'de>>(
    mut deserializer: serde_json::Deserializer<R>,
) -> serde_json::Result<Value> {
    let value = UniqueValue.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// The value `deserializer` (of any format: a YAML spec's) gives, as [`parse_unique`] builds it;
/// an object that repeats a name is the error whose message [`says_repeated_key`].
pub fn decode_unique<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
    UniqueValue.deserialize(deserializer)
}

/// Whether an error's message (without its position) is the refusal of a repeated name.
pub fn says_repeated_key(message: &str) -> bool {
    message.starts_with(REPEATED) && message.contains("is given twice in one object")
}

/// How [`parse_unique`]'s refusal of a repeated name begins.
const REPEATED: &str = "the key";

/// Whether `err` is [`parse_unique`]'s refusal of a repeated name (its other data errors are
/// a malformed number's).
pub(super) fn is_repeated_key(err: &serde_json::Error) -> bool {
    err.is_data() && says_repeated_key(&json_error_what(err))
}

/// The reason [`parse_unique`] refused a repeated name, placed just past the name where it
/// comes again: ``the key `score` is given twice in one object (the second by column 31): keep
/// one``; `None` for any other error.
pub fn repeated_key_reason(err: &serde_json::Error) -> Option<String> {
    repeated_key_reason_at(err, err.column())
}

/// [`repeated_key_reason`] placed at `column` (of a text `err`'s was rewritten from).
pub fn repeated_key_reason_at(err: &serde_json::Error, column: usize) -> Option<String> {
    is_repeated_key(err).then(|| {
        format!(
            "{} (the second by column {column}): keep one",
            json_error_what(err)
        )
    })
}

/// The name under which serde_json (with `arbitrary_precision`) hands a number over as a map of
/// one member, its digits as written.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Up to this many members, an object's keys are compared with a new one rather than looked up.
const SMALL_OBJECT: usize = 16;

/// The refusal of the member `name` given again in one object, in the words
/// [`says_repeated_key`] knows.
pub fn repeated_key_error<E: de::Error>(name: &str) -> E {
    E::custom(format!(
        "{REPEATED} `{}` is given twice in one object",
        crate::text::clip(name, crate::text::ECHOED)
    ))
}

/// A JSON object of `T`s as a map (`null` as none), refusing a member given twice, for a struct
/// field: `#[serde(deserialize_with = "decode_unique_map")]`.
pub fn decode_unique_map<'de, D, T>(deserializer: D) -> Result<BTreeMap<String, T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    deserializer.deserialize_option(UniqueMap(PhantomData))
}

/// Reads [`decode_unique_map`]'s map.
struct UniqueMap<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for UniqueMap<T> {
    type Value = BTreeMap<String, T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(BTreeMap::new())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(BTreeMap::new())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<Self::Value, A::Error> {
        let mut map = BTreeMap::new();
        while let Some(name) = members.next_key::<String>()? {
            match map.entry(name) {
                Entry::Occupied(taken) => return Err(repeated_key_error(taken.key())),
                Entry::Vacant(slot) => {
                    slot.insert(members.next_value()?);
                }
            }
        }
        Ok(map)
    }
}

/// Builds a [`Value`] as serde_json does, failing at the first object that repeats a name (a
/// seed for a value read inside another's visitor).
pub struct UniqueValue;

impl<'de> DeserializeSeed<'de> for UniqueValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Value, A::Error> {
        let mut array = Vec::with_capacity(items.size_hint().unwrap_or(0));
        while let Some(item) = items.next_element_seed(UniqueValue)? {
            array.push(item);
        }
        Ok(Value::Array(array))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(name) = members.next_key::<String>()? {
            if object.is_empty() && name == NUMBER_TOKEN {
                let digits: String = members.next_value()?;
                return Number::from_str(&digits)
                    .map(Value::Number)
                    .map_err(de::Error::custom);
            }
            // Refused where the key comes again, before its value is read. The keys of a small
            // object are compared one by one, cheaper than hashing the key a second time.
            let repeated = if object.len() <= SMALL_OBJECT {
                object.keys().any(|key| *key == name)
            } else {
                object.contains_key(&name)
            };
            if repeated {
                return Err(repeated_key_error(&name));
            }
            object.insert(name, members.next_value_seed(UniqueValue)?);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_parsed_as_serde_json_parses_it() {
        for text in [
            r#"{"a": [1, -2, 1.50, -0, 1e400, 18446744073709551616, -9223372036854775809]}"#,
            r#"[true, false, null, "x\u00e4\n", {}, [], {"b": {"c": [{"d": 0.1}]}}]"#,
            "  \"text\"  ",
        ] {
            let ours = parse_unique(text.as_bytes()).unwrap();
            let theirs: Value = serde_json::from_str(text).unwrap();
            assert_eq!(ours, theirs, "{text}");
            assert_eq!(ours.to_string(), theirs.to_string(), "{text}");
        }
        for text in ["{\"a\": 1} x", "[1,]", "{\"a\" 1}", ""] {
            let ours = parse_unique(text.as_bytes()).unwrap_err().to_string();
            let theirs = serde_json::from_str::<Value>(text).unwrap_err().to_string();
            assert_eq!(ours, theirs, "{text}");
        }
    }

    /// The first member name an object of `text` repeats, worded; `None` when none is repeated
    /// or `text` is no JSON.
    fn repeated_key(text: &str) -> Option<String> {
        parse_unique_str(text)
            .err()
            .and_then(|err| repeated_key_reason(&err))
    }

    #[test]
    fn a_name_repeated_at_any_depth_is_found_with_where_it_comes_again() {
        assert_eq!(
            repeated_key(r#"{"score": 1, "why": "x", "score": 0}"#).as_deref(),
            Some(
                "the key `score` is given twice in one object (the second by column 32): \
                 keep one"
            )
        );
        assert_eq!(
            repeated_key(r#"{"a": [{"b": 1.5, "b": 2}]}"#).as_deref(),
            Some("the key `b` is given twice in one object (the second by column 21): keep one")
        );
        // The same name in two objects, numbers of every kind, and text that is no JSON.
        assert_eq!(
            repeated_key(r#"[{"a": 1}, {"a": -2e400}, {"a": 18446744073709551616}]"#),
            None
        );
        assert_eq!(repeated_key(r#"{"a": 1"#), None);
        assert_eq!(
            parse_unique(br#"{"a": 1, "a": 1}"#)
                .unwrap_err()
                .to_string(),
            "the key `a` is given twice in one object at line 1 column 12"
        );
    }
}
