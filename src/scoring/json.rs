//! JSON primitives for scoring: deep equality under a chosen number rule, and JSON Schema
//! validators compiled the one way every vocabulary compiles them (2020-12 rules, the
//! linear-time `regex` engine for `pattern`, no network).

use serde_json::{Number, Value};

/// Deep equality with every number compared as an f64.
pub fn equal_as_f64(a: &Value, b: &Value) -> bool {
    deep_equal(a, b, |a, b| {
        a.as_f64() == b.as_f64() && a.as_f64().is_some()
    })
}

/// Deep equality where an integer literal and a float literal differ (`1` ≠ `1.0`).
pub fn equal_typed(a: &Value, b: &Value) -> bool {
    deep_equal(a, b, |a, b| {
        let a = typed_number(a);
        a.is_some() && a == typed_number(b)
    })
}

/// Deep equality of two values, numbers compared by `numbers_equal`.
fn deep_equal(a: &Value, b: &Value, numbers_equal: fn(&Number, &Number) -> bool) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => numbers_equal(a, b),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(a, b)| deep_equal(a, b, numbers_equal))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, a)| b.get(key).is_some_and(|b| deep_equal(a, b, numbers_equal)))
        }
        _ => a == b,
    }
}

/// A number as its literal reads: an integer literal, or a float.
#[derive(PartialEq)]
enum TypedNumber {
    Integer(i64),
    Float(f64),
}

fn typed_number(number: &Number) -> Option<TypedNumber> {
    let literal = number.to_string();
    if !literal.contains(['.', 'e', 'E']) {
        if let Ok(integer) = literal.parse::<i64>() {
            return Some(TypedNumber::Integer(integer));
        }
    }
    number.as_f64().map(TypedNumber::Float)
}

/// A validator for `schema` with JSON Schema 2020-12 rules and the `regex` crate for `pattern`.
pub fn schema_validator(
    schema: &Value,
) -> Result<jsonschema::Validator, jsonschema::ValidationError<'_>> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn number_rules() {
        assert!(equal_as_f64(&json!({"a": [1]}), &json!({"a": [1.0]})));
        assert!(!equal_typed(&json!({"a": [1]}), &json!({"a": [1.0]})));
        assert!(equal_typed(
            &json!({"a": [1.5, "x"]}),
            &json!({"a": [1.5, "x"]})
        ));
        assert!(!equal_as_f64(&json!([1, 2]), &json!([1])));
    }
}
