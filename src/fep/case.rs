//! One test case and its output: shape validation (FEP 2.1, 2.2, as the TestCase and Output
//! schemas of 5.1 say: members they do not list are allowed and ignored) and the test case's own
//! `checks` (pattern 2 of FEP 2.3.3), shared by the request and the streaming modes.

use serde_json::Value;

use crate::checks::{parse_check, Catalog, Check, PathCache, Problem};
use crate::input::strict;
use crate::patterns::DocumentPatterns;

/// Validate a test case and prepare its own `checks`. Problems are located relative to the test
/// case (`.id`, `.checks[0].type`, ...).
pub fn prepare_test_case(
    test_case: &Value,
    catalog: &mut Catalog,
) -> Result<Vec<Check>, Vec<Problem>> {
    let Some(object) = test_case.as_object() else {
        return Err(vec![not_an_object(test_case)]);
    };
    // One pass over the members (a lookup per field would hash each name: this runs for every
    // test case of a run). Problems are ranked by field so they read in a fixed order.
    let mut ranked: Vec<(u8, Problem)> = Vec::new();
    let (mut id, mut input, mut own) = (false, false, Vec::new());
    for (key, value) in object {
        match (key.as_str(), value) {
            ("id", value) => {
                id = true;
                if !value.is_string() {
                    ranked.push((0, wrong_type(".id", "a string", value)));
                }
            }
            ("input", value) => {
                input = true;
                if !(value.is_string() || value.is_object()) {
                    ranked.push((1, wrong_type(".input", "a string or an object", value)));
                }
            }
            ("expected", expected)
                if !(expected.is_string() || expected.is_object() || expected.is_null()) =>
            {
                ranked.push((
                    2,
                    wrong_type(".expected", "a string, an object or null", expected),
                ));
            }
            ("metadata", metadata) if !metadata.is_object() => {
                ranked.push((3, wrong_type(".metadata", "an object", metadata)));
            }
            ("checks", Value::Array(checks)) => {
                let mut found = Vec::new();
                own = prepare_own_checks(checks, catalog, &mut found);
                ranked.extend(found.into_iter().map(|problem| (4, problem)));
            }
            ("checks", other) => {
                ranked.push((4, wrong_type(".checks", "an array of checks", other)));
            }
            _ => {}
        }
    }
    if !id {
        ranked.push((0, missing("id")));
    }
    if !input {
        ranked.push((1, missing("input")));
    }
    let problems = by_rank(ranked);
    if problems.is_empty() {
        Ok(own)
    } else {
        Err(problems)
    }
}

/// A catalog for one batch of test cases prepared on a worker: `catalog`'s custom checks,
/// endpoint policy and count of the document's patterns, JSONPaths compiled anew.
pub fn catalog_for_batch(catalog: &Catalog) -> Catalog {
    Catalog {
        paths: PathCache::default(),
        custom: catalog.custom.clone(),
        endpoints: catalog.endpoints.clone(),
        declarations: catalog.declarations.clone(),
        refused: catalog.refused.clone(),
        patterns: catalog.patterns.clone(),
    }
}

/// A catalog for a batch of test cases evaluated and dropped on a worker: as
/// [`catalog_for_batch`], its patterns counted apart (they go with the batch).
pub fn catalog_for_own_batch(catalog: &Catalog) -> Catalog {
    Catalog {
        patterns: DocumentPatterns::default(),
        ..catalog_for_batch(catalog)
    }
}

/// Prepare a test case's own `checks`, adding the problems of malformed ones to `problems`.
fn prepare_own_checks(
    checks: &[Value],
    catalog: &mut Catalog,
    problems: &mut Vec<Problem>,
) -> Vec<Check> {
    let mut own = Vec::with_capacity(checks.len());
    for (index, raw) in checks.iter().enumerate() {
        match parse_check(raw, catalog) {
            Ok(def) => own.push(Check::prepare(def, catalog)),
            Err(found) => {
                let at = format!(".checks[{index}]");
                problems.extend(found.into_iter().map(|problem| problem.under(&at)));
            }
        }
    }
    own
}

/// Validate an output: an object with a `value` (a string or an object), an optional string `id`
/// and object `metadata`.
pub fn output_problems(output: &Value) -> Vec<Problem> {
    let Some(object) = output.as_object() else {
        return vec![not_an_object(output)];
    };
    let mut ranked = Vec::new();
    let mut value = false;
    for (key, member) in object {
        match key.as_str() {
            "value" => {
                value = true;
                if !(member.is_string() || member.is_object()) {
                    ranked.push((0, wrong_type(".value", "a string or an object", member)));
                }
            }
            "id" if !member.is_string() => ranked.push((1, wrong_type(".id", "a string", member))),
            "metadata" if !member.is_object() => {
                ranked.push((2, wrong_type(".metadata", "an object", member)));
            }
            _ => {}
        }
    }
    if !value {
        ranked.push((0, missing("value")));
    }
    by_rank(ranked)
}

/// The problems in rank order (a stable sort: equal ranks keep the order they were found in).
fn by_rank(mut ranked: Vec<(u8, Problem)>) -> Vec<Problem> {
    ranked.sort_by_key(|(rank, _)| *rank);
    ranked.into_iter().map(|(_, problem)| problem).collect()
}

fn missing(field: &str) -> Problem {
    Problem::new("", strict::missing_key(field))
}

fn wrong_type(at: &str, expected: &str, found: &Value) -> Problem {
    Problem::new(at, strict::wrong_type(expected, found))
}

fn not_an_object(found: &Value) -> Problem {
    wrong_type("", "an object", found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn test_case_problems_are_all_found() {
        let problems = prepare_test_case(
            &json!({"input": 3, "metadata": [], "checks": [{"type": "nope", "arguments": {}}]}),
            &mut Catalog::default(),
        )
        .unwrap_err();
        assert_eq!(
            Problem::listed(&problems),
            [
                "|missing required key `id`",
                ".input|expected a string or an object, found number",
                ".metadata|expected an object, found array",
                ".checks[0].type|unknown check type `nope` (known: exact_match, contains, regex, threshold, semantic_similarity, llm_judge; spec.TYPE runs an evaluation-spec validator; a custom type is declared in `custom_checks` or with --custom-check)",
            ]
        );
    }

    #[test]
    fn outputs_need_a_value() {
        assert!(output_problems(&json!({"value": "1"})).is_empty());
        assert!(output_problems(&json!({"value": {"score": 1}})).is_empty());
        for value in [json!(0.5), json!(true), json!([1, 2]), json!(null)] {
            assert_eq!(
                output_problems(&json!({ "value": value }))[0].at,
                ".value",
                "{value}"
            );
        }
        assert_eq!(
            output_problems(&json!({"id": 1}))[0].reason,
            "missing required key `value`"
        );
        assert_eq!(output_problems(&json!({"id": 1}))[1].at, ".id");
        assert_eq!(
            output_problems(&json!("x"))[0].reason,
            "expected an object, found string"
        );
    }
}
