//! JSON primitives for scoring: deep equality under a chosen number rule, and JSON Schema
//! validators compiled the one way every vocabulary compiles them (2020-12 rules, the
//! linear-time `regex` engine for `pattern` within the size limits of every pattern from an
//! input, at most [`MAX_SCHEMA_PATTERNS`] patterns a schema, no network).

use serde_json::{Number, Value};

use crate::patterns::MAX_COMPILED_BYTES;

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

/// The most patterns one schema may hold (`pattern` strings and `patternProperties` keys, as
/// many as it names, repeats included): each compiles to at most [`MAX_COMPILED_BYTES`], and its
/// lazy DFA takes as much, so a schema's patterns cost at most 64 MiB to compile and hold.
pub const MAX_SCHEMA_PATTERNS: usize = 32;

/// Why a schema gave no validator.
#[derive(Debug)]
pub struct SchemaError {
    /// A `$ref` did not resolve (the schema may be well formed).
    pub unresolved: bool,
    /// The reason, as the validator words it.
    pub reason: String,
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// A validator for `schema` with JSON Schema 2020-12 rules and the `regex` crate for `pattern`,
/// each pattern compiled within [`MAX_COMPILED_BYTES`]; a schema of more than
/// [`MAX_SCHEMA_PATTERNS`] patterns is refused before any is compiled.
pub fn schema_validator(schema: &Value) -> Result<jsonschema::Validator, SchemaError> {
    let patterns = patterns_in(schema);
    if patterns > MAX_SCHEMA_PATTERNS {
        return Err(SchemaError {
            unresolved: false,
            reason: format!(
                "the schema holds {patterns} patterns (pattern, patternProperties), more than \
                 the {MAX_SCHEMA_PATTERNS} one schema may hold"
            ),
        });
    }
    let pattern_options = jsonschema::PatternOptions::regex()
        .size_limit(MAX_COMPILED_BYTES)
        .dfa_size_limit(MAX_COMPILED_BYTES);
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_pattern_options(pattern_options)
        .build(schema)
        .map_err(|err| SchemaError {
            unresolved: matches!(
                err.kind(),
                jsonschema::error::ValidationErrorKind::Referencing(_)
            ),
            reason: err.to_string(),
        })
}

/// How many patterns `schema` names: `pattern` members whose value is a string, and the keys
/// of `patternProperties` objects, wherever they stand.
fn patterns_in(schema: &Value) -> usize {
    match schema {
        Value::Object(members) => members
            .iter()
            .map(|(name, value)| {
                let own = match (name.as_str(), value) {
                    ("pattern", Value::String(_)) => 1,
                    ("patternProperties", Value::Object(keys)) => keys.len(),
                    _ => 0,
                };
                own + patterns_in(value)
            })
            .sum(),
        Value::Array(items) => items.iter().map(patterns_in).sum(),
        _ => 0,
    }
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
