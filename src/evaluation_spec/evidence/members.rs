//! Reading one member of an event's payload: a number, a token count, a string, a verification
//! key, an id.

use serde_json::Value;

use crate::evaluation_spec::gostr::loose_string;
use crate::evaluation_spec::payload::Payload;

pub(super) fn number(payload: &Payload, key: &str) -> Option<f64> {
    payload.get(key)?.as_f64()
}

pub(super) fn usage(payload: &Payload, key: &str) -> Option<f64> {
    payload.usage().get(key)?.as_f64()
}

pub(super) fn text<'v>(payload: &'v Payload, key: &str) -> Option<&'v str> {
    payload.get(key).and_then(loose_string)
}

/// The non-empty string member `name` of a verification event's payload, which keys what it
/// verified.
pub(super) fn verification_key<'v>(payload: &'v Payload, name: &str) -> Option<&'v str> {
    payload
        .get(name)
        .and_then(Value::as_str)
        .filter(|key| !key.is_empty())
}

/// A non-empty id, as the reference treats the zero UUID as none.
pub(super) fn id(text: &str) -> Option<&str> {
    (!text.is_empty() && text != "00000000-0000-0000-0000-000000000000").then_some(text)
}
