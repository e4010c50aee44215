//! Check arguments through `evalctl fep evaluate`: literals vs JSONPath, the escape rule, zero-
//! and multi-match paths, and validation errors that name the argument.

use crate::fep_support::{check, check_results, error_of, passed};
use serde_json::{json, Value};

fn case() -> Value {
    json!({"id": "t", "input": "q", "expected": "Paris", "tags": ["a", "b"]})
}

#[test]
fn an_escaped_dollar_is_a_literal() {
    let results = check_results(
        case(),
        json!({"value": "$.this.is.literal"}),
        vec![
            check(
                "exact_match",
                json!({"actual": "$.output.value", "expected": "\\$.this.is.literal"}),
            ),
            check(
                "regex",
                json!({"text": "\\$.output.value", "pattern": "^\\$\\.output"}),
            ),
        ],
    );
    assert_eq!(passed(&results), [Some(true), Some(true)]);
    assert_eq!(
        results[0]["resolved_arguments"]["expected"],
        json!({"value": "$.this.is.literal"})
    );
    assert_eq!(
        results[1]["resolved_arguments"]["text"],
        json!({"value": "$.output.value"})
    );
}

#[test]
fn a_lone_dollar_is_literal_and_a_path_takes_the_first_of_several_matches() {
    let results = check_results(
        case(),
        json!({"value": "x"}),
        vec![
            check(
                "exact_match",
                json!({"actual": "$.test_case.tags[*]", "expected": "a"}),
            ),
            // FEP 2.3.2: only strings beginning with `$.` are paths; `$` is a regex's end of
            // text, or a price's currency.
            check("regex", json!({"text": "costs 5", "pattern": "$"})),
            check(
                "exact_match",
                json!({"actual": "$..expected", "expected": "Paris"}),
            ),
        ],
    );
    assert_eq!(passed(&results), [Some(true), Some(true), Some(true)]);
    assert_eq!(
        results[0]["resolved_arguments"]["actual"],
        json!({"jsonpath": "$.test_case.tags[*]", "value": "a"})
    );
}

#[test]
fn a_path_that_matches_nothing_is_a_jsonpath_error_and_others_still_run() {
    let results = check_results(
        case(),
        json!({"value": "Paris"}),
        vec![
            check(
                "exact_match",
                json!({"actual": "$.output.answer", "expected": "$.test_case.expected"}),
            ),
            check(
                "exact_match",
                json!({"actual": "$.output.value", "expected": "$.test_case.expected"}),
            ),
        ],
    );
    let (kind, message) = error_of(&results[0]);
    assert_eq!(kind, "jsonpath_error");
    assert!(message.contains("`$.output.answer`"), "{message}");
    assert!(message.contains("`actual`"), "{message}");
    assert_eq!(results[0]["results"], json!({}));
    assert_eq!(results[0]["error"]["recoverable"], false);
    assert_eq!(passed(&results)[1], Some(true));
}

#[test]
fn invalid_arguments_are_validation_errors_naming_the_argument() {
    let cases = [
        (
            check("exact_match", json!({"actual": "$.output.value"})),
            "arguments: missing required key `expected`",
        ),
        (
            check(
                "exact_match",
                json!({"actual": "a", "expected": "a", "negate": "yes"}),
            ),
            "arguments.negate: expected a boolean, found string",
        ),
        (
            check("contains", json!({"text": "a", "phrases": "a"})),
            "arguments.phrases: expected an array of strings, found string",
        ),
        (
            check("contains", json!({"text": "a", "phrases": []})),
            "arguments.phrases: must hold at least one phrase",
        ),
        (
            check("contains", json!({"text": "a", "phrases": ["a", 1]})),
            "arguments.phrases: expected an array of strings, found number at [1]",
        ),
        (
            check("regex", json!({"text": "a", "pattern": "("})),
            "arguments.pattern: not a valid regular expression",
        ),
        (
            check(
                "regex",
                json!({"text": "a", "pattern": "a", "flags": {"multiline": 1}}),
            ),
            "arguments.flags: flag `multiline`: expected a boolean, found number",
        ),
        (
            check("threshold", json!({"value": 1})),
            "arguments: threshold needs at least one of `min_value` and `max_value`",
        ),
        (
            check("threshold", json!({"value": "high", "min_value": 1})),
            "arguments.value: expected a number, found string",
        ),
        (
            check(
                "threshold",
                json!({"value": "$.output.value", "min_value": 1}),
            ),
            "argument `value` (from `$.output.value`): expected a number, found string",
        ),
        (
            check(
                "threshold",
                json!({"value": 1, "min_value": 0, "unit": "ms"}),
            ),
            "arguments.unit: unknown key `unit` (expected one of value, min_value, max_value, min_inclusive, max_inclusive, negate)",
        ),
        (
            json!({"type": "exact_match", "version": "2.0.0", "arguments": {"actual": "a", "expected": "a"}}),
            "version: `2.0.0` is not available: evalctl implements 1.0.0 (any 1.x.y is accepted)",
        ),
    ];
    let checks = cases.iter().map(|(check, _)| check.clone()).collect();
    let results = check_results(case(), json!({"value": "text"}), checks);
    for ((_, expected), result) in cases.iter().zip(&results) {
        let (kind, message) = error_of(result);
        assert_eq!(kind, "validation_error", "{message}");
        assert!(
            message.starts_with(expected),
            "{message:?} should start with {expected:?}"
        );
    }
}

#[test]
fn a_semver_version_is_accepted() {
    let results = check_results(
        case(),
        json!({"value": "Paris"}),
        vec![json!({"type": "exact_match", "version": "1.0.0",
                    "arguments": {"actual": "$.output.value", "expected": "Paris"}})],
    );
    assert_eq!(passed(&results), [Some(true)]);
    assert_eq!(results[0]["metadata"]["check_version"], "1.0.0");
}

#[test]
fn arguments_other_than_text_can_come_from_paths() {
    let results = check_results(
        json!({"id": "t", "input": "q", "phrases": ["Par", "is"], "pattern": "^P", "min": 0.5}),
        json!({"value": {"text": "Paris", "score": 0.7}}),
        vec![
            check(
                "contains",
                json!({"text": "$.output.value.text", "phrases": "$.test_case.phrases"}),
            ),
            check(
                "regex",
                json!({"text": "$.output.value.text", "pattern": "$.test_case.pattern"}),
            ),
            check(
                "threshold",
                json!({"value": "$.output.value.score", "min_value": "$.test_case.min"}),
            ),
        ],
    );
    assert_eq!(passed(&results), [Some(true); 3]);
}

#[test]
fn threshold_compares_whole_numbers_exactly() {
    // 2^53 + 1 and 2^53 are one 64-bit float; as the whole numbers they are, one is above.
    let bounds = |extra: Value| {
        let mut arguments = json!({"value": "$.output.value.v"});
        arguments
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        check("threshold", arguments)
    };
    let results = check_results(
        case(),
        json!({"value": {"v": 9007199254740993u64}}),
        vec![
            bounds(json!({"min_value": 9007199254740992u64, "min_inclusive": false})),
            bounds(json!({"max_value": 9007199254740992u64})),
            bounds(json!({"min_value": 9007199254740993u64, "max_value": 9007199254740993u64})),
        ],
    );
    assert_eq!(passed(&results), [Some(true), Some(false), Some(true)]);
}

#[test]
fn threshold_compares_whole_numbers_beyond_128_bits_exactly() {
    // 2^64 and 2^64 - 1 are one 64-bit float; so are -2^127 - 1 and -2^127; and 2^130 + 1 is
    // beyond every integer type.
    let number = |digits: &str| serde_json::from_str::<Value>(digits).unwrap();
    let within = |value: &str, min: &str, max: &str| {
        let results = check_results(
            case(),
            json!({"value": {"v": number(value)}}),
            vec![check(
                "threshold",
                json!({"value": "$.output.value.v", "min_value": number(min), "max_value": number(max)}),
            )],
        );
        passed(&results)[0]
    };
    let (two_64, below_two_64) = ("18446744073709551616", "18446744073709551615");
    assert_eq!(within(two_64, "0", below_two_64), Some(false));
    assert_eq!(within(below_two_64, "0", two_64), Some(true));
    assert_eq!(within(two_64, two_64, two_64), Some(true));
    let (min_128, below_min_128) = (
        "-170141183460469231731687303715884105728",
        "-170141183460469231731687303715884105729",
    );
    assert_eq!(within(below_min_128, min_128, "0"), Some(false));
    assert_eq!(within(min_128, below_min_128, "0"), Some(true));
    let (two_130, above_two_130) = (
        "1361129467683753853853498429727072845824",
        "1361129467683753853853498429727072845825",
    );
    assert_eq!(within(above_two_130, "-1", two_130), Some(false));
    assert_eq!(within(two_130, "-1", above_two_130), Some(true));
    assert_eq!(
        within(two_130, "-1e400", "1e300"),
        None,
        "-1e400 is no finite bound"
    );
    assert_eq!(
        within(two_130, "-1", "1e300"),
        Some(true),
        "a float bound compares as floats"
    );
}
