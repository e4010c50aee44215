//! One test case and its output: shape validation (FEP 2.1, 2.2) and the test case's own
//! `checks` (pattern 2 of FEP 2.3.3), shared by the request and the streaming modes.

use serde_json::Value;

use crate::checks::{parse_check, Check, PathCache, Problem};
use crate::protocol::json_type;

/// Validate a test case and prepare its own `checks`. Problems are located relative to the test
/// case (`.id`, `.checks[0].type`, ...).
pub fn prepare_test_case(
    test_case: &Value,
    paths: &mut PathCache,
) -> Result<Vec<Check>, Vec<Problem>> {
    let Some(object) = test_case.as_object() else {
        return Err(vec![not_an_object("a test case", test_case)]);
    };
    let mut problems = Vec::new();
    match object.get("id") {
        None => problems.push(missing("id")),
        Some(Value::String(_)) => {}
        Some(other) => problems.push(wrong_type(".id", "a string", other)),
    }
    match object.get("input") {
        None => problems.push(missing("input")),
        Some(Value::String(_) | Value::Object(_)) => {}
        Some(other) => problems.push(wrong_type(".input", "a string or an object", other)),
    }
    if let Some(metadata) = object.get("metadata").filter(|m| !m.is_object()) {
        problems.push(wrong_type(".metadata", "an object", metadata));
    }
    let mut own = Vec::new();
    match object.get("checks") {
        None => {}
        Some(Value::Array(checks)) => {
            for (index, raw) in checks.iter().enumerate() {
                match parse_check(raw) {
                    Ok(def) => own.push(Check::prepare(def, paths)),
                    Err(found) => problems.extend(found.into_iter().map(|problem| Problem {
                        at: format!(".checks[{index}]{}", problem.at),
                        reason: problem.reason,
                    })),
                }
            }
        }
        Some(other) => problems.push(wrong_type(".checks", "an array of checks", other)),
    }
    if problems.is_empty() {
        Ok(own)
    } else {
        Err(problems)
    }
}

/// Validate an output: an object with a `value` (any JSON: FEP names strings and objects; numbers,
/// arrays, booleans and null are accepted too), an optional string `id` and object `metadata`.
pub fn output_problems(output: &Value) -> Vec<Problem> {
    let Some(object) = output.as_object() else {
        return vec![not_an_object("an output", output)];
    };
    let mut problems = Vec::new();
    if !object.contains_key("value") {
        problems.push(missing("value"));
    }
    if let Some(id) = object.get("id").filter(|id| !id.is_string()) {
        problems.push(wrong_type(".id", "a string", id));
    }
    if let Some(metadata) = object.get("metadata").filter(|m| !m.is_object()) {
        problems.push(wrong_type(".metadata", "an object", metadata));
    }
    problems
}

fn missing(field: &str) -> Problem {
    Problem {
        at: String::new(),
        reason: format!("missing required field `{field}`"),
    }
}

fn wrong_type(at: &str, expected: &str, found: &Value) -> Problem {
    Problem {
        at: at.to_string(),
        reason: format!("must be {expected}, got {}", json_type(found)),
    }
}

fn not_an_object(what: &str, found: &Value) -> Problem {
    Problem {
        at: String::new(),
        reason: format!("{what} must be an object, got {}", json_type(found)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn test_case_problems_are_all_found() {
        let problems = prepare_test_case(
            &json!({"input": 3, "metadata": [], "checks": [{"type": "nope", "arguments": {}}]}),
            &mut PathCache::new(),
        )
        .unwrap_err();
        let found: Vec<String> = problems
            .iter()
            .map(|p| format!("{}|{}", p.at, p.reason))
            .collect();
        assert_eq!(
            found,
            [
                "|missing required field `id`",
                ".input|must be a string or an object, got number",
                ".metadata|must be an object, got array",
                ".checks[0].type|unknown check type `nope` (known: exact_match, contains, regex, threshold)",
            ]
        );
    }

    #[test]
    fn outputs_need_a_value() {
        assert!(output_problems(&json!({"value": 1})).is_empty());
        assert_eq!(
            output_problems(&json!({"id": 1}))[0].reason,
            "missing required field `value`"
        );
        assert_eq!(output_problems(&json!({"id": 1}))[1].at, ".id");
        assert_eq!(
            output_problems(&json!("x"))[0].reason,
            "an output must be an object, got string"
        );
    }
}
