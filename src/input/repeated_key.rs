//! Member names an object repeats (`{"score": 1, "score": 0}`). JSON readers disagree on which of
//! the values counts (serde_json and Python take the last, others the first, some refuse), so an
//! input that repeats a name says two things at once. Task records (whose format rejects
//! everything outside it), dataset and valset records and evaluator answers are refused with the
//! name; other inputs keep the last value, as serde_json does.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::json_error_what;

/// The first member name an object of the JSON document `text` repeats, worded as a problem:
/// ``the key `score` is given twice in one object (the second by column 31): keep one``; `None` when
/// no object repeats one, or when `text` is no JSON (its parse error is said where it is read).
pub fn repeated_key(text: &str) -> Option<String> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    match Walk.deserialize(&mut deserializer) {
        Err(err) if err.is_data() => Some(format!(
            "{} (the second by column {}): keep one",
            json_error_what(&err),
            err.column()
        )),
        _ => None,
    }
}

/// Walks a JSON value, building nothing, and fails at the first object that repeats a name.
struct Walk;

impl<'de> DeserializeSeed<'de> for Walk {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        while items.next_element_seed(Walk)?.is_some() {}
        Ok(())
    }

    // (A number is a map too, of one member, where serde_json keeps numbers as written.)
    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<(), A::Error> {
        let mut names = HashSet::new();
        while let Some(name) = members.next_key::<String>()? {
            members.next_value_seed(Walk)?;
            if names.contains(&name) {
                return Err(serde::de::Error::custom(format!(
                    "the key `{}` is given twice in one object",
                    crate::text::clip(&name, crate::text::ECHOED)
                )));
            }
            names.insert(name);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_repeated_at_any_depth_is_found_with_where_it_comes_again() {
        assert_eq!(
            repeated_key(r#"{"score": 1, "why": "x", "score": 0}"#).as_deref(),
            Some(
                "the key `score` is given twice in one object (the second by column 36): \
                 keep one"
            )
        );
        assert_eq!(
            repeated_key(r#"{"a": [{"b": 1.5, "b": 2}]}"#).as_deref(),
            Some("the key `b` is given twice in one object (the second by column 25): keep one")
        );
        // The same name in two objects, numbers of every kind, and text that is no JSON.
        assert_eq!(
            repeated_key(r#"[{"a": 1}, {"a": -2e400}, {"a": 18446744073709551616}]"#),
            None
        );
        assert_eq!(repeated_key(r#"{"a": 1"#), None);
    }
}
