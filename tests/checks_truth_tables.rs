//! Truth tables of the four standard checks, through `evalctl fep evaluate`.

use crate::fep_support::{check, check_results, passed};
use serde_json::{json, Value};

fn case() -> Value {
    json!({"id": "t", "input": "q"})
}

#[test]
fn exact_match_case_and_negate() {
    let table = [
        // actual, expected, case_sensitive, negate, passed
        ("Paris", "Paris", true, false, true),
        ("paris", "Paris", true, false, false),
        ("paris", "Paris", false, false, true),
        ("Rome", "Paris", false, false, false),
        ("Paris", "Paris", true, true, false),
        ("paris", "Paris", true, true, true),
        ("paris", "Paris", false, true, false),
        ("Rome", "Paris", false, true, true),
    ];
    let checks = table
        .iter()
        .map(|(actual, expected, case_sensitive, negate, _)| {
            check(
                "exact_match",
                json!({"actual": actual, "expected": expected,
                       "case_sensitive": case_sensitive, "negate": negate}),
            )
        })
        .collect();
    let results = check_results(case(), json!({"value": ""}), checks);
    let expected: Vec<Option<bool>> = table.iter().map(|row| Some(row.4)).collect();
    assert_eq!(passed(&results), expected);
}

#[test]
fn exact_match_defaults_are_case_sensitive_and_not_negated() {
    let results = check_results(
        case(),
        json!({"value": "paris"}),
        vec![check(
            "exact_match",
            json!({"actual": "$.output.value", "expected": "Paris"}),
        )],
    );
    assert_eq!(passed(&results), [Some(false)]);
}

#[test]
fn contains_all_phrases_or_with_negate_none() {
    let text = "Paris is the capital of France";
    let table: [(&[&str], bool, bool, bool); 12] = [
        // phrases, case_sensitive, negate, passed
        (&["Paris", "France"], true, false, true),
        (&["Paris", "Spain"], true, false, false),
        (&["paris", "france"], true, false, false),
        (&["paris", "france"], false, false, true),
        (&["paris", "spain"], false, false, false),
        (&["Spain", "Rome"], true, false, false),
        (&["Spain", "Rome"], true, true, true),
        (&["Paris", "Rome"], true, true, false),
        (&["paris"], true, true, true),
        (&["paris"], false, true, false),
        (&["PARIS", "rome"], false, true, false),
        (&["rome", "spain"], false, true, true),
    ];
    let checks = table
        .iter()
        .map(|(phrases, case_sensitive, negate, _)| {
            check(
                "contains",
                json!({"text": "$.output.value", "phrases": phrases,
                       "case_sensitive": case_sensitive, "negate": negate}),
            )
        })
        .collect();
    let results = check_results(case(), json!({"value": text}), checks);
    let expected: Vec<Option<bool>> = table.iter().map(|row| Some(row.3)).collect();
    assert_eq!(passed(&results), expected);
}

#[test]
fn threshold_bounds_inclusive_exclusive_and_negated() {
    let table = [
        // min, max, min_inclusive, max_inclusive, negate, value, passed
        (json!(0.8), json!(1.0), true, true, false, 0.8, true),
        (json!(0.8), json!(1.0), false, true, false, 0.8, false),
        (json!(0.8), json!(1.0), true, true, false, 1.0, true),
        (json!(0.8), json!(1.0), true, false, false, 1.0, false),
        (json!(0.8), json!(1.0), true, true, false, 0.85, true),
        (json!(0.8), json!(1.0), true, true, false, 0.5, false),
        (json!(0.8), json!(1.0), true, true, false, 1.5, false),
        (json!(0), Value::Null, false, true, false, 0.0, false),
        (json!(0), Value::Null, false, true, false, 0.1, true),
        (Value::Null, json!(5000), true, true, false, 5000.0, true),
        (Value::Null, json!(5000), true, false, false, 5000.0, false),
        (json!(20), json!(80), true, true, true, 50.0, false),
        (json!(20), json!(80), true, true, true, 10.0, true),
        (json!(20), json!(80), true, true, true, 90.0, true),
        (json!(20), json!(80), true, true, true, 20.0, false),
        (json!(20), json!(80), false, true, true, 20.0, true),
    ];
    let checks = table
        .iter()
        .enumerate()
        .map(
            |(index, (min, max, min_inclusive, max_inclusive, negate, _, _))| {
                let mut arguments = json!({"value": format!("$.output.value.scores[{index}]"),
                "min_inclusive": min_inclusive, "max_inclusive": max_inclusive, "negate": negate});
                if !min.is_null() {
                    arguments["min_value"] = min.clone();
                }
                if !max.is_null() {
                    arguments["max_value"] = max.clone();
                }
                check("threshold", arguments)
            },
        )
        .collect();
    let values: Vec<f64> = table.iter().map(|row| row.5).collect();
    let results = check_results(case(), json!({"value": {"scores": values}}), checks);
    let expected: Vec<Option<bool>> = table.iter().map(|row| Some(row.6)).collect();
    assert_eq!(passed(&results), expected);
}

#[test]
fn regex_flags_and_negate() {
    let text = "first line\nERROR: disk full\nlast";
    let table = [
        // pattern, flags, negate, passed
        ("ERROR", json!({}), false, true),
        ("error", json!({}), false, false),
        ("error", json!({"case_insensitive": true}), false, true),
        ("^ERROR:", json!({}), false, false),
        ("^ERROR:", json!({"multiline": true}), false, true),
        ("line.ERROR", json!({}), false, false),
        ("line.ERROR", json!({"dot_all": true}), false, true),
        ("ERROR", json!({}), true, false),
        ("^ERROR:", json!({}), true, true),
        (
            "^first.*last$",
            json!({"dot_all": true, "multiline": false}),
            false,
            true,
        ),
    ];
    let checks = table
        .iter()
        .map(|(pattern, flags, negate, _)| {
            check(
                "regex",
                json!({"text": "$.output.value", "pattern": pattern, "flags": flags, "negate": negate}),
            )
        })
        .collect();
    let results = check_results(case(), json!({"value": text}), checks);
    let expected: Vec<Option<bool>> = table.iter().map(|row| Some(row.3)).collect();
    assert_eq!(passed(&results), expected);
}

#[test]
fn non_string_text_arguments_compare_by_compact_json() {
    let results = check_results(
        json!({"id": "t", "input": "q", "expected": "4"}),
        json!({"value": {"n": 4, "obj": {"a": [1, 2]}, "flag": true, "none": null}}),
        vec![
            check(
                "exact_match",
                json!({"actual": "$.output.value.n", "expected": "$.test_case.expected"}),
            ),
            check(
                "exact_match",
                json!({"actual": "$.output.value.obj", "expected": "{\"a\":[1,2]}"}),
            ),
            check(
                "contains",
                json!({"text": "$.output.value", "phrases": ["\"flag\":true", "\"none\":null"]}),
            ),
            check(
                "regex",
                json!({"text": "$.output.value.n", "pattern": "^4$"}),
            ),
            check("exact_match", json!({"actual": 4, "expected": "4"})),
        ],
    );
    assert_eq!(passed(&results), [Some(true); 5]);
}
