//! The EvaluationRequest (FEP 3.1, 5.1): validated in full, as the JSON Schemas of 5.1 say —
//! every problem with its JSON location — before anything is evaluated, then turned into prepared
//! checks per test case. Members the schemas do not list are allowed and ignored (`custom_checks`
//! is evalctl's: see `checks::custom`).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::case::catalog_for_batch;
use super::case::{output_problems, prepare_test_case};
use crate::checks::{parse_check, Catalog, Check, Problem};
use crate::input::strict;
use crate::pool;

/// A request whose every part is valid and whose checks are prepared.
pub struct Request {
    /// The test cases, in order.
    pub test_cases: Vec<Value>,
    /// `outputs[i]` belongs to `test_cases[i]`.
    pub outputs: Vec<Value>,
    /// The checks given in `checks`: shared by all test cases, or one list per test case.
    pub checks: CheckSets,
    /// Each test case's own `checks`, run after those of [`Request::checks`].
    pub own_checks: Vec<Vec<Check>>,
    /// `experiment_metadata`, reported as the result's `experiment`.
    pub experiment: Option<Value>,
}

/// The request's `checks`, in one of the two patterns of FEP 2.3.3.
pub enum CheckSets {
    /// Pattern 1: one list applied to every test case.
    Shared(Vec<Check>),
    /// Pattern 2: `checks[i]` applies to `test_cases[i]`.
    PerCase(Vec<Vec<Check>>),
}

impl Request {
    /// Whether any of its checks calls out (an extended or custom check).
    pub fn calls_out(&self) -> bool {
        let listed = match &self.checks {
            CheckSets::Shared(checks) => checks.iter().any(Check::calls_out),
            CheckSets::PerCase(lists) => lists.iter().flatten().any(Check::calls_out),
        };
        listed || self.own_checks.iter().flatten().any(Check::calls_out)
    }

    /// How many bytes all its check results repeat of their checks as given (see
    /// [`Check::repeated_size`]): each check's once for every test case it applies to.
    pub fn repeated_size(&self, json_size: fn(&Value) -> u64) -> u64 {
        let size = |checks: &[Check]| {
            (checks.iter())
                .map(|check| check.repeated_size(json_size))
                .sum::<u64>()
        };
        let listed = match &self.checks {
            CheckSets::Shared(checks) => size(checks).saturating_mul(self.test_cases.len() as u64),
            CheckSets::PerCase(lists) => lists.iter().map(|list| size(list)).sum(),
        };
        listed.saturating_add(self.own_checks.iter().map(|own| size(own)).sum())
    }
}

impl CheckSets {
    /// The checks from `checks` that apply to test case `index`.
    pub fn for_case(&self, index: usize) -> &[Check] {
        match self {
            CheckSets::Shared(checks) => checks,
            CheckSets::PerCase(lists) => lists.get(index).map_or(&[], Vec::as_slice),
        }
    }
}

/// Validate `document` as an EvaluationRequest and prepare its checks through `catalog` (its
/// `custom_checks` are added to it). On failure, every problem with its JSON location
/// (`test_cases[3]`: missing required key `id`).
pub fn parse_request(document: Value, catalog: &mut Catalog) -> Result<Request, Vec<Problem>> {
    let mut object = match document {
        Value::Object(object) => object,
        other => {
            return Err(vec![Problem::new(
                "",
                strict::wrong_type("an object", &other),
            )])
        }
    };
    let mut problems: Vec<Problem> = Vec::new();
    if let Some(declarations) = object.get("custom_checks") {
        problems.extend(catalog.declare(declarations));
    }
    let test_cases = take_array(&mut object, "test_cases", &mut problems);
    let outputs = take_array(&mut object, "outputs", &mut problems);
    let raw_checks = take_array(&mut object, "checks", &mut problems);
    let checks_given = raw_checks.is_some();
    if let (Some(test_cases), Some(outputs)) = (&test_cases, &outputs) {
        if test_cases.len() != outputs.len() {
            problems.push(Problem::new(
                ".outputs",
                format!(
                    "{} outputs for {} test cases (outputs[i] belongs to test_cases[i])",
                    outputs.len(),
                    test_cases.len()
                ),
            ));
        }
    }
    let (test_cases, outputs) = (test_cases.unwrap_or_default(), outputs.unwrap_or_default());
    // Test cases and outputs are validated on the worker pool, their problems kept in order.
    let shared_catalog = &*catalog;
    let prepared = pool::map(
        &test_cases,
        || catalog_for_batch(shared_catalog),
        |catalog, test_case| prepare_test_case(test_case, catalog),
    );
    // FEP 2.1: a test case's id is unique (its results are told apart by it).
    let mut first_with_id: HashMap<&str, usize> = HashMap::with_capacity(test_cases.len());
    let own_checks = prepared
        .into_iter()
        .enumerate()
        .map(|(index, prepared)| {
            if let Some(id) = test_cases[index].get("id").and_then(Value::as_str) {
                let first = *first_with_id.entry(id).or_insert(index);
                if first != index {
                    problems.push(Problem::new(
                        format!(".test_cases[{index}].id"),
                        format!(
                            "{} is also the id of test_cases[{first}]: each test case's id is \
                             unique (FEP 2.1)",
                            Value::from(id)
                        ),
                    ));
                }
            }
            prepared.unwrap_or_else(|found| {
                located(&mut problems, &format!(".test_cases[{index}]"), found);
                Vec::new()
            })
        })
        .collect::<Vec<Vec<Check>>>();
    let output_found = pool::map(&outputs, || (), |(), output| output_problems(output));
    for (index, found) in output_found.into_iter().enumerate() {
        located(&mut problems, &format!(".outputs[{index}]"), found);
    }
    let raw_checks = raw_checks.unwrap_or_default();
    let checks = prepare_check_sets(&raw_checks, test_cases.len(), catalog, &mut problems);
    let own_check_count: usize = own_checks.iter().map(Vec::len).sum();
    // Shared checks, or one list per test case (`[[]]` holds none); a check already found bad
    // is said as it is.
    let given_check_count: usize = raw_checks
        .iter()
        .map(|item| item.as_array().map_or(1, Vec::len))
        .sum();
    let checks_found_bad = problems
        .iter()
        .any(|problem| problem.at.contains(".checks"));
    if given_check_count == 0
        && own_check_count == 0
        && !test_cases.is_empty()
        && checks_given
        && !checks_found_bad
    {
        problems.push(Problem::new(
            ".checks",
            "no checks to run: give `checks` (shared, or one list per test case) or \
             per-test-case `checks`",
        ));
    }
    let experiment = object.remove("experiment_metadata");
    if let Some(experiment) = &experiment {
        experiment_problems(experiment, &mut problems);
    }
    if problems.is_empty() {
        Ok(Request {
            test_cases,
            outputs,
            checks,
            own_checks,
            experiment,
        })
    } else {
        Err(problems)
    }
}

/// Remove the required `key` from `object` as an array; `None` after reporting it missing or
/// not an array.
fn take_array(
    object: &mut Map<String, Value>,
    key: &str,
    problems: &mut Vec<Problem>,
) -> Option<Vec<Value>> {
    match object.remove(key) {
        Some(Value::Array(items)) => Some(items),
        None => {
            // Other keys are allowed (and ignored), but one a letter or two from `key` is its typo.
            let typo = strict::nearest(key, object.keys().map(String::as_str))
                .map(|typo| {
                    format!(
                        " (found `{}`: did you mean `{key}`?)",
                        strict::key_name(typo)
                    )
                })
                .unwrap_or_default();
            problems.push(Problem::new(
                "",
                format!("{}{typo}", strict::missing_key(key)),
            ));
            None
        }
        Some(other) => {
            problems.push(Problem::at_key(key, strict::wrong_type("an array", &other)));
            None
        }
    }
}

fn prepare_check_sets(
    raw: &[Value],
    test_cases: usize,
    catalog: &mut Catalog,
    problems: &mut Vec<Problem>,
) -> CheckSets {
    let mut prepare_list = |list: &[Value], at: &str, problems: &mut Vec<Problem>| -> Vec<Check> {
        list.iter()
            .enumerate()
            .filter_map(|(index, raw)| match parse_check(raw, catalog) {
                Ok(def) => Some(Check::prepare(def, catalog)),
                Err(found) => {
                    located(problems, &format!("{at}[{index}]"), found);
                    None
                }
            })
            .collect()
    };
    if !raw.iter().any(Value::is_array) {
        return CheckSets::Shared(prepare_list(raw, ".checks", problems));
    }
    if raw.len() != test_cases {
        problems.push(Problem::new(
            ".checks",
            format!(
                "{} check lists for {} test cases (checks[i] applies to test_cases[i])",
                raw.len(),
                test_cases
            ),
        ));
    }
    let lists = raw
        .iter()
        .enumerate()
        .map(|(index, list)| match list {
            Value::Array(list) => prepare_list(list, &format!(".checks[{index}]"), problems),
            other => {
                problems.push(Problem::new(
                    format!(".checks[{index}]"),
                    strict::wrong_type(
                        "an array of checks like the other items of `checks`",
                        other,
                    ),
                ));
                Vec::new()
            }
        })
        .collect();
    CheckSets::PerCase(lists)
}

fn experiment_problems(experiment: &Value, problems: &mut Vec<Problem>) {
    let at = ".experiment_metadata";
    let object = match strict::as_object(experiment) {
        Ok(object) => object,
        Err(reason) => return problems.push(Problem::new(at, reason)),
    };
    if let Some(Err(reason)) = object.get("name").map(strict::as_str) {
        problems.push(Problem::new(format!("{at}.name"), reason));
    }
    if let Some(Err(reason)) = object.get("metadata").map(strict::as_object) {
        problems.push(Problem::new(format!("{at}.metadata"), reason));
    }
}

/// Add `found`, located under `prefix`, to `problems`.
fn located(problems: &mut Vec<Problem>, prefix: &str, found: Vec<Problem>) {
    problems.extend(found.into_iter().map(|problem| problem.under(prefix)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(request: Value) -> Vec<String> {
        match parse_request(request, &mut Catalog::default()) {
            Ok(_) => Vec::new(),
            Err(problems) => problems
                .iter()
                .map(|problem| problem.describe(""))
                .collect(),
        }
    }

    #[test]
    fn every_request_problem_is_reported_with_its_location() {
        let found = problems(json!({
            "test_cases": [{"id": "a", "input": "q", "expected": 0.5}, {"input": "q"}],
            "outputs": [{"value": true}],
            "checks": [{"type": "fuzzy", "arguments": {}}],
            "experiment": {}
        }));
        assert_eq!(
            found,
            [
                "outputs: 1 outputs for 2 test cases (outputs[i] belongs to test_cases[i])",
                "test_cases[0].expected: expected a string, an object or null, found number",
                "test_cases[1]: missing required key `id`",
                "outputs[0].value: expected a string or an object, found boolean",
                "checks[0].type: unknown check type `fuzzy` (known: exact_match, contains, regex, threshold, semantic_similarity, llm_judge; spec.TYPE runs an evaluation-spec validator; a custom type is declared in `custom_checks` or with --custom-check)",
            ]
        );
    }

    #[test]
    fn per_case_check_lists_must_match_the_test_cases() {
        let found = problems(json!({
            "test_cases": [{"id": "a", "input": "q"}, {"id": "b", "input": "q"}],
            "outputs": [{"value": "x"}, {"value": "y"}],
            "checks": [[], {"type": "regex", "arguments": {}}],
        }));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("checks[1]: expected an array of checks"));
        assert_eq!(
            problems(
                json!({"test_cases": [{"id": "a", "input": "q"}], "outputs": [{"value": "1"}],
                            "checks": [[], []]})
            ),
            ["checks: 2 check lists for 1 test cases (checks[i] applies to test_cases[i])"]
        );
        // A test case's only check, bad, is said as it is, not also as no check at all.
        assert_eq!(
            problems(json!({"test_cases": [{"id": "a", "input": "q",
                "checks": [{"type": "zzz", "arguments": {}}]}],
                "outputs": [{"value": "1"}], "checks": []})),
            [
                "test_cases[0].checks[0].type: unknown check type `zzz` (known: exact_match, \
              contains, regex, threshold, semantic_similarity, llm_judge; spec.TYPE runs an \
              evaluation-spec validator; a custom type is declared in `custom_checks` or with \
              --custom-check)"
            ]
        );
    }

    #[test]
    fn missing_arrays_are_reported_once() {
        assert_eq!(
            problems(json!({"outputs": 3})),
            [
                "missing required key `test_cases`",
                "outputs: expected an array, found number",
                "missing required key `checks`",
            ]
        );
    }
}
