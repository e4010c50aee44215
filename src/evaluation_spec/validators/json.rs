//! The JSON validators: json_schema (2020-12 by default; a schema declaring draft-07 gets
//! draft-07 rules, where the reference applies 2020-12 rules to it; through the `jsonschema` crate
//! with the linear-time `regex` engine for `pattern`) and json_path_match (the reference's
//! small path language and comparators). Deep equality and schema compilation are the core's
//! ([`crate::scoring::json`]).
//!
//! Documents are decoded with serde_json, whose nesting limit (128) turns a 10,000-deep document
//! into a clear `recursion limit exceeded` error instead of a stack overflow.

use serde::Deserialize;
use serde_json::{json, Value};

use super::cache::LastCompiled;
use super::text::{evidence, go_quote};
use super::Comparison;
use crate::scoring::json::{equal_typed, schema_validator, within_validation_bounds};

const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";
const DRAFTS_07: &[&str] = &[
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft-07/schema#",
];

/// The most values a JSON document decoded from text may hold: decoded, each takes tens of
/// bytes (an 8 MB array of 4 million numbers took 400 MB), which a request's size does not show.
const MAX_DOCUMENT_VALUES: usize = 250_000;

/// Decode exactly one JSON value, of at most [`MAX_DOCUMENT_VALUES`] values.
pub(super) fn parse_document(text: &str) -> Result<Value, String> {
    if values_at_least(text) > MAX_DOCUMENT_VALUES {
        return Err(format!(
            "the document holds more than {MAX_DOCUMENT_VALUES} values (the limit)"
        ));
    }
    serde_json::from_str(text).map_err(|err| err.to_string())
}

/// How many values `text` holds as JSON, at least: one, and one more for each `,` outside a
/// string (a malformed text is left to the decoder).
fn values_at_least(text: &str) -> usize {
    let (mut values, mut in_string, mut escaped) = (1, false, false);
    for byte in text.bytes() {
        match (in_string, escaped, byte) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (false, _, b'"') => in_string = true,
            (false, _, b',') => values += 1,
            _ => {}
        }
    }
    values
}

// ---- equality rules -------------------------------------------------------------------------

/// json_path_match's `equals`: a top-level number compares by value (10 == 10.0); anything else
/// by typed deep equality.
pub(super) fn path_equals(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Number(a), Value::Number(b)) => a.as_f64().is_some() && a.as_f64() == b.as_f64(),
        (Value::Number(_), _) => false,
        _ => equal_typed(actual, expected),
    }
}

// ---- json_schema ----------------------------------------------------------------------------

/// A compiled schema with the draft URL it declared (or 2020-12).
#[derive(Debug)]
pub(super) struct CompiledSchema {
    validator: jsonschema::Validator,
    /// The schema, for the work its validation of a document may take.
    schema: Value,
    draft: String,
}

/// Compile a schema value; errors are complete reasons (`parse JSON schema: …`,
/// `resolve JSON schema: …`).
pub(super) fn compile_schema(schema: &Value) -> Result<CompiledSchema, String> {
    if !schema.is_object() {
        return Err("parse JSON schema: schema must be a JSON object".to_string());
    }
    let draft = match schema.get("$schema") {
        None | Some(Value::Null) => DRAFT_2020_12.to_string(),
        Some(Value::String(url)) if url == DRAFT_2020_12 || DRAFTS_07.contains(&url.as_str()) => {
            url.clone()
        }
        Some(other) => {
            let shown = other
                .as_str()
                .map_or_else(|| other.to_string(), String::from);
            return Err(format!(
                "parse JSON schema: unsupported JSON schema draft {}",
                go_quote(&shown)
            ));
        }
    };
    schema_validator(schema)
        .map(|validator| CompiledSchema {
            validator,
            schema: schema.clone(),
            draft,
        })
        .map_err(|err| {
            let stage = if err.unresolved { "resolve" } else { "parse" };
            format!("{stage} JSON schema: {err}")
        })
}

/// Compile schema text (the `expected` of json_schema).
pub(super) fn compile_schema_text(text: &str) -> Result<CompiledSchema, String> {
    let schema = parse_document(text).map_err(|err| format!("parse JSON schema: {err}"))?;
    compile_schema(&schema)
}

/// The last schema compiled from an evidence string.
pub(super) type SchemaCache = LastCompiled<CompiledSchema>;

/// Validate `actual` (a JSON document) against a compiled schema.
pub(super) fn validate_against(schema: &CompiledSchema, actual: &str) -> Comparison {
    let document = match parse_document(actual) {
        Ok(document) => document,
        Err(err) => return Comparison::error(format!("parse actual JSON document: {err}")),
    };
    if let Err(too_much) = within_validation_bounds(&schema.schema, &document) {
        return Comparison::error(format!("validate JSON document: {too_much}"));
    }
    match schema.validator.validate(&document) {
        Ok(()) => Comparison::binary(true, "")
            .with_evidence(evidence([("schema_draft", json!(schema.draft))])),
        Err(err) => {
            Comparison::binary(false, "json schema validation failed").with_evidence(evidence([
                ("schema_draft", json!(schema.draft)),
                ("validation_error", json!(err.to_string())),
                ("validation_target", json!("actual_value")),
            ]))
        }
    }
}

pub(super) fn json_schema(cache: &SchemaCache, actual: &str, expected: &str) -> Comparison {
    match cache.get(expected, compile_schema_text) {
        Ok(schema) => validate_against(&schema, actual),
        Err(err) => Comparison::error(err),
    }
}

// ---- json_path_match ------------------------------------------------------------------------

/// One step of a path.
#[derive(Debug, PartialEq)]
enum Step {
    Property(String),
    /// A negative index never resolves.
    Index(i64),
}

/// Parse the reference's path subset: `$`, then `.name`, `[N]`, `["name"]`, `[name]`. Positions in
/// messages are byte offsets, as in the reference.
fn parse_path(path: &str) -> Result<Vec<Step>, String> {
    let path = path.trim();
    if path.is_empty() {
        return Err("path is empty".to_string());
    }
    if !path.starts_with('$') {
        return Err("path must start with '$'".to_string());
    }
    let bytes = path.as_bytes();
    let mut steps = Vec::new();
    let mut index = 1;
    while index < bytes.len() {
        match bytes[index] {
            b'.' => {
                let start = index + 1;
                let mut end = start;
                while end < bytes.len()
                    && (bytes[end].is_ascii_alphanumeric() || matches!(bytes[end], b'_' | b'-'))
                {
                    end += 1;
                }
                if end == start {
                    return Err(format!("missing property name at position {start}"));
                }
                steps.push(Step::Property(path[start..end].to_string()));
                index = end;
            }
            b'[' => {
                let Some(close) = path[index + 1..].find(']').map(|offset| index + 1 + offset)
                else {
                    return Err(format!(
                        "unterminated bracket expression at position {index}"
                    ));
                };
                let content = path[index + 1..close].trim();
                if content.is_empty() {
                    return Err(format!("empty bracket expression at position {index}"));
                }
                steps.push(bracket_step(content)?);
                index = close + 1;
            }
            _ => {
                let shown = path[index..].chars().next().unwrap_or('?');
                return Err(format!("unexpected token '{shown}' at position {index}"));
            }
        }
    }
    Ok(steps)
}

/// The step inside `[…]` (already trimmed).
fn bracket_step(content: &str) -> Result<Step, String> {
    let invalid = || {
        format!(
            "invalid quoted property {}: invalid syntax",
            go_quote(content)
        )
    };
    if content.starts_with('"') {
        return serde_json::from_str::<String>(content)
            .map(Step::Property)
            .map_err(|_| invalid());
    }
    if content.starts_with('\'') {
        // A Go rune literal: exactly one character between the quotes.
        let inner = content
            .strip_prefix('\'')
            .and_then(|rest| rest.strip_suffix('\''))
            .ok_or_else(invalid)?;
        let mut chars = inner.chars();
        return match (chars.next(), chars.next()) {
            (Some(only), None) if only != '\'' && only != '\\' => {
                Ok(Step::Property(only.to_string()))
            }
            _ => Err(invalid()),
        };
    }
    match content.parse::<i64>() {
        Ok(number) => Ok(Step::Index(number)),
        Err(_) => Ok(Step::Property(content.to_string())),
    }
}

/// Walk a parsed path; a missing member or a type mismatch is "not found".
fn walk<'a>(document: &'a Value, steps: &[Step]) -> Option<&'a Value> {
    steps.iter().try_fold(document, |current, step| match step {
        Step::Property(name) => current.as_object()?.get(name),
        Step::Index(index) => current.as_array()?.get(usize::try_from(*index).ok()?),
    })
}

/// The comparators of json_path_match.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Comparator {
    Equals,
    Contains,
    GreaterThan,
    LessThan,
    Exists,
}

impl Comparator {
    fn parse(name: &str) -> Result<Comparator, String> {
        Ok(match name {
            "equals" => Comparator::Equals,
            "contains" => Comparator::Contains,
            "greater_than" => Comparator::GreaterThan,
            "less_than" => Comparator::LessThan,
            "exists" => Comparator::Exists,
            other => return Err(format!("unsupported comparator {}", go_quote(other))),
        })
    }

    fn name(self) -> &'static str {
        match self {
            Comparator::Equals => "equals",
            Comparator::Contains => "contains",
            Comparator::GreaterThan => "greater_than",
            Comparator::LessThan => "less_than",
            Comparator::Exists => "exists",
        }
    }
}

/// The object form of an expectation (keys matched leniently: unknown keys are ignored).
#[derive(Debug, Default, Deserialize)]
struct ExpectationObject {
    path: Option<String>,
    comparator: Option<String>,
    value: Option<Value>,
}

/// A decoded expectation.
struct Expectation {
    path: String,
    comparator: Comparator,
    value: Value,
}

fn parse_expectation(expected: &str) -> Result<Expectation, String> {
    let trimmed = expected.trim();
    if trimmed.is_empty() {
        return Err("expectation is empty".to_string());
    }
    if trimmed.starts_with('$') {
        return Ok(Expectation {
            path: trimmed.to_string(),
            comparator: Comparator::Exists,
            value: Value::Null,
        });
    }
    let object: ExpectationObject = serde_json::from_str(trimmed).map_err(|err| err.to_string())?;
    let path = object
        .path
        .filter(|path| !path.trim().is_empty())
        .ok_or("path is required")?;
    let value = object.value.unwrap_or(Value::Null);
    let comparator = match object.comparator.as_deref().map(str::trim) {
        None | Some("") if value.is_null() => Comparator::Exists,
        None | Some("") => Comparator::Equals,
        Some(name) => Comparator::parse(name)?,
    };
    Ok(Expectation {
        path: path.trim().to_string(),
        comparator,
        value,
    })
}

/// Apply a comparator to a found (or missing) value.
fn compare_found(comparator: Comparator, actual: Option<&Value>, expected: &Value) -> Comparison {
    let Some(actual) = actual else {
        return Comparison::binary(false, "json path did not resolve to a value");
    };
    match comparator {
        Comparator::Exists => Comparison::binary(true, ""),
        Comparator::Equals => Comparison::binary(
            path_equals(actual, expected),
            "json path value did not equal expected value",
        ),
        Comparator::Contains => match actual {
            Value::String(text) => match expected.as_str() {
                Some(needle) => Comparison::binary(
                    text.contains(needle),
                    "json path value did not contain expected substring",
                ),
                None => Comparison::error(
                    "compare JSONPath value: expected value must be a string for contains \
                     comparator"
                        .to_string(),
                ),
            },
            Value::Array(items) => Comparison::binary(
                items.iter().any(|item| path_equals(item, expected)),
                "json path array did not contain expected value",
            ),
            other => Comparison::binary(
                other.to_string().contains(&expected.to_string()),
                "json path value did not contain expected value",
            ),
        },
        Comparator::GreaterThan | Comparator::LessThan => {
            let Some(actual) = actual.as_f64() else {
                return Comparison::error(
                    "compare JSONPath value: actual value is not numeric".to_string(),
                );
            };
            let Some(expected) = expected.as_f64() else {
                return Comparison::error(
                    "compare JSONPath value: expected value is not numeric".to_string(),
                );
            };
            if comparator == Comparator::GreaterThan {
                Comparison::binary(
                    actual > expected,
                    "json path value was not greater than expected value",
                )
            } else {
                Comparison::binary(
                    actual < expected,
                    "json path value was not less than expected value",
                )
            }
        }
    }
}

/// Evaluate `path` with `comparator` against a parsed document (shared with postcondition).
pub(super) fn evaluate_path(
    document: &Value,
    path: &str,
    comparator_name: &str,
    expected: &Value,
) -> Comparison {
    let comparator = match Comparator::parse(comparator_name) {
        Ok(comparator) => comparator,
        Err(err) => return Comparison::error(format!("parse json_path_match expectation: {err}")),
    };
    let steps = match parse_path(path) {
        Ok(steps) => steps,
        Err(err) => return Comparison::error(format!("evaluate JSONPath expression: {err}")),
    };
    let found = walk(document, &steps);
    compare_found(comparator, found, expected).with_evidence(evidence([
        ("path", json!(path)),
        ("comparator", json!(comparator.name())),
        ("expected", expected.clone()),
        ("actual", found.cloned().unwrap_or(Value::Null)),
        ("exists", json!(found.is_some())),
    ]))
}

pub(super) fn json_path_match(actual: &str, expected: &str) -> Comparison {
    let document = match parse_document(actual) {
        Ok(document) => document,
        Err(err) => return Comparison::error(format!("parse actual JSON document: {err}")),
    };
    match parse_expectation(expected) {
        Ok(expectation) => evaluate_path(
            &document,
            &expectation.path,
            expectation.comparator.name(),
            &expectation.value,
        ),
        Err(err) => Comparison::error(format!("parse json_path_match expectation: {err}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluation_spec::validators::Verdict;

    #[test]
    fn a_document_of_too_many_values_is_not_decoded() {
        assert_eq!(values_at_least(r#"[1, "a,b", "\",", {"c": [2, 3]}]"#), 5);
        let many = format!("[{}0]", "0,".repeat(MAX_DOCUMENT_VALUES));
        assert_eq!(
            parse_document(&many),
            Err("the document holds more than 250000 values (the limit)".to_string())
        );
        let enough = format!("[{}0]", "0,".repeat(MAX_DOCUMENT_VALUES - 1));
        assert!(parse_document(&enough).is_ok());
    }

    #[test]
    fn path_forms() {
        assert_eq!(
            parse_path("$.a[0][\"b c\"][d]['e']"),
            Ok(vec![
                Step::Property("a".into()),
                Step::Index(0),
                Step::Property("b c".into()),
                Step::Property("d".into()),
                Step::Property("e".into()),
            ])
        );
        for (path, error) in [
            (
                "$['ab']",
                "invalid quoted property \"'ab'\": invalid syntax",
            ),
            ("$[", "unterminated bracket expression at position 1"),
            ("$[ ]", "empty bracket expression at position 1"),
            ("$.", "missing property name at position 2"),
            ("$x", "unexpected token 'x' at position 1"),
            (" ", "path is empty"),
        ] {
            assert_eq!(parse_path(path), Err(error.into()), "{path:?}");
        }
    }

    #[test]
    fn negative_index_is_not_found() {
        let outcome = json_path_match("[1,2]", "$[-1]");
        assert_eq!(outcome.verdict(), Verdict::Fail);
    }

    #[test]
    fn nested_numbers_distinguish_integer_and_float_literals() {
        let doc = r#"{"a":[1],"b":10.0}"#;
        let nested = json_path_match(doc, r#"{"path":"$.a","value":[1.0]}"#);
        assert_eq!(nested.verdict(), Verdict::Fail);
        let top = json_path_match(doc, r#"{"path":"$.b","value":10}"#);
        assert_eq!(top.verdict(), Verdict::Pass);
        let contains = json_path_match(
            r#"{"n":42}"#,
            r#"{"path":"$.n","comparator":"contains","value":4}"#,
        );
        assert_eq!(contains.verdict(), Verdict::Pass);
    }

    #[test]
    fn ten_thousand_deep_documents_are_a_clear_error() {
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        let outcome = json_path_match(&deep, "$[0]");
        outcome.assert_error(|reason| reason.contains("recursion limit exceeded"));
        let schema = json_schema(&SchemaCache::default(), &deep, r#"{"type":"array"}"#);
        assert!(schema
            .reason()
            .starts_with("parse actual JSON document: recursion limit"));
        let deep_schema = "{\"items\":".repeat(10_000) + "{}" + &"}".repeat(10_000);
        let outcome = json_schema(&SchemaCache::default(), "[]", &deep_schema);
        assert!(outcome
            .reason()
            .starts_with("parse JSON schema: recursion limit"));
    }

    #[test]
    fn schema_patterns_use_the_linear_engine() {
        let schema = r#"{"type":"string","pattern":"^(a+)+$"}"#;
        let actual = format!("\"{}!\"", "a".repeat(50_000));
        let started = std::time::Instant::now();
        let outcome = json_schema(&SchemaCache::default(), &actual, schema);
        assert_eq!(outcome.verdict(), Verdict::Fail);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn draft_07_definitions_and_integer_floats_validate() {
        let schema = r##"{"$schema":"http://json-schema.org/draft-07/schema#",
            "definitions":{"n":{"type":"integer","minimum":1}},
            "type":"object","properties":{"n":{"$ref":"#/definitions/n"}}}"##;
        let cache = SchemaCache::default();
        assert_eq!(
            json_schema(&cache, r#"{"n": 2.0}"#, schema).verdict(),
            Verdict::Pass
        );
        let outcome = json_schema(&cache, r#"{"n": 0}"#, schema);
        assert_eq!(outcome.verdict(), Verdict::Fail);
        assert_eq!(outcome.reason(), "json schema validation failed");
        assert!(outcome.evidence().contains_key("validation_error"));
        let big = json_schema(&cache, r#"{"n": 123456789012345678901234567890}"#, schema);
        assert_eq!(big.verdict(), Verdict::Pass);
    }

    #[test]
    fn draft_07_schemas_get_draft_07_semantics() {
        // The reference validates draft-07 schemas with 2020-12 rules (ignoring `dependencies`);
        // evalctl honours the draft the schema declares.
        let schema = r##"{"$schema":"http://json-schema.org/draft-07/schema#",
            "dependencies":{"a":["b"]}}"##;
        let outcome = json_schema(&SchemaCache::default(), r#"{"a":1}"#, schema);
        assert_eq!(outcome.verdict(), Verdict::Fail);
        let outcome = json_schema(&SchemaCache::default(), r#"{"a":1,"b":2}"#, schema);
        assert_eq!(outcome.verdict(), Verdict::Pass);
    }

    #[test]
    fn remote_references_are_refused_without_network() {
        let schema = r#"{"$ref":"https://example.com/schema.json"}"#;
        let outcome = json_schema(&SchemaCache::default(), "{}", schema);
        outcome.assert_error(|reason| reason.starts_with("resolve JSON schema: "));
    }

    #[test]
    fn unsupported_drafts_are_schema_errors() {
        let outcome = json_schema(
            &SchemaCache::default(),
            "{}",
            r#"{"$schema":"http://json-schema.org/draft-04/schema#"}"#,
        );
        assert!(outcome
            .reason()
            .starts_with("parse JSON schema: unsupported JSON schema draft"));
    }
}
