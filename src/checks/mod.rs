//! Built-in checks (FEP 0.0.1, section 2.3): check definitions, argument resolution with JSONPath,
//! the four standard checks and their results.
//!
//! A check object goes through two stages. [`parse_check`] validates its shape as FEP's Check
//! schema says (an object with a known `type`, an `arguments` object, a semver `version`; other
//! members are ignored); a failure there is a problem of the whole request. [`Check::prepare`]
//! then validates the arguments, compiles JSONPaths (once per run, through a [`PathCache`]) and a
//! literal regex; problems found there make that one check a `validation_error` (a
//! `jsonpath_error` when only JSONPaths fail to parse) when it runs, and never stop the other
//! checks.
//!
//! A check that calls out (`semantic_similarity`, `llm_judge`, a custom type) is evaluated in two
//! steps: [`Check::call`] resolves what to send, someone sends it (`evaluator::check_calls`), and
//! [`Check::evaluate`] turns the [`Answer`] into the result.

//!
//! From the ground up: [`trust`] (what the command line lends a request's checks), [`catalog`]
//! (what one run's checks are prepared with), [`definition`] (the shape of a check object),
//! [`prepare`] (a check ready to run), [`evaluate`] (a check run on one evaluation context) and
//! [`context`] (that context).

pub mod args;
mod catalog;
mod context;
pub mod custom;
mod definition;
mod evaluate;
pub mod extended;
pub mod file;
mod path_budget;
mod prepare;
pub mod result;
pub mod standard;
pub mod timestamp;
mod trust;

pub use args::PathCache;
pub use catalog::Catalog;
pub use context::Context;
pub use custom::{AnsweredBy, CustomCheck};
pub use definition::parse_check;
pub use extended::{AllowedEndpoint, Answer, Call, CaseAnswers, EndpointPolicy};
pub use file::load_checks_file;
pub use prepare::Check;
pub use result::{CheckError, CheckResult, Status};
pub use timestamp::{CaseClock, Timestamp};
pub use trust::{Declarations, Trust};

/// A problem with a check definition, located relative to the check object (`at` is empty, or
/// starts with `.`, e.g. `.arguments.pattern`).
pub use crate::input::strict::JsonProblem as Problem;

#[cfg(test)]
mod tests {
    use super::result::Results;
    use super::*;
    use serde_json::{json, Value};

    fn prepare(check: Value) -> Check {
        Check::prepare(
            parse_check(&check, &Catalog::default()).unwrap(),
            &mut Catalog::default(),
        )
    }

    #[test]
    fn argument_problems_are_located_and_named() {
        let check = prepare(json!({"type": "regex", "version": "2.0.0",
            "arguments": {"text": 5, "pattern": "(", "negate": "yes", "extra": 1}}));
        let found: Vec<(&str, &str)> = check
            .problems()
            .iter()
            .map(|p| (p.at.as_str(), p.reason.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (".arguments.negate", "expected a boolean, found string"),
                (".arguments.pattern", "not a valid regular expression: regex parse error: ⏎     ( ⏎     ^ ⏎ error: unclosed group"),
                (".version", "`2.0.0` is not available: evalctl implements 1.0.0 (any 1.x.y is accepted)"),
            ]
        );
    }

    #[test]
    fn a_bad_literal_regex_is_found_before_the_run() {
        let check = prepare(json!({"type": "regex", "arguments": {"text": "a", "pattern": "("}}));
        assert_eq!(check.problems()[0].at, ".arguments.pattern");
        assert!(check.problems()[0]
            .reason
            .starts_with("not a valid regular expression"));
    }

    #[test]
    fn a_bad_literal_regex_is_found_whatever_the_flags() {
        for flags in [
            json!("$.test_case.flags"),
            json!({"multiline": 1}),
            json!(3),
        ] {
            let check = prepare(json!({"type": "regex",
                "arguments": {"text": "a", "pattern": "(", "flags": flags}}));
            let at: Vec<&str> = check.problems().iter().map(|p| p.at.as_str()).collect();
            let expected: &[&str] = if flags.is_string() {
                &[".arguments.pattern"]
            } else {
                &[".arguments.flags", ".arguments.pattern"]
            };
            assert_eq!(at, expected, "flags {flags}");
        }
        let by_path = prepare(json!({"type": "regex",
            "arguments": {"text": "a", "pattern": "a", "flags": "$.test_case.flags"}}));
        assert!(by_path.problems().is_empty() && by_path.regex.is_none());
    }

    #[test]
    fn unknown_members_are_ignored_where_the_schemas_allow_them() {
        let check = prepare(json!({"type": "regex", "weight": 2, "arguments": {
            "text": "abc", "pattern": "B", "flags": {"case_insensitive": true, "global": true},
            "ignore_case": true}}));
        assert!(check.problems().is_empty(), "{:?}", check.problems());
        assert_eq!(
            check.ignored,
            ["weight", "arguments.flags.global", "arguments.ignore_case"]
        );
        let ctx = Context::new(json!({"id": "t"}), json!({"value": "x"}));
        let result = check.evaluate(ctx.value(), &mut CaseClock::start(), None);
        assert_eq!(result.outcome, Ok(Results::Passed(true)));
        let closed = prepare(json!({"type": "threshold",
            "arguments": {"value": 1, "min_value": 0, "unit": "ms"}}));
        assert_eq!(
            closed.problems()[0].describe(""),
            "arguments.unit: unknown key `unit` (expected one of value, min_value, max_value, \
             min_inclusive, max_inclusive, negate)"
        );
    }

    #[test]
    fn a_jsonpath_that_cannot_be_parsed_is_a_jsonpath_error() {
        let ctx = Context::new(json!({"id": "t"}), json!({"value": "x"}));
        let broken = prepare(json!({"type": "exact_match",
            "arguments": {"actual": "$.output.value[", "expected": "x"}}));
        let result = broken.evaluate(ctx.value(), &mut CaseClock::start(), None);
        assert_eq!(
            result.outcome.unwrap_err().kind,
            result::ErrorType::Jsonpath
        );
        // With another problem too, the check is malformed: a validation_error.
        let also_invalid = prepare(json!({"type": "exact_match",
            "arguments": {"actual": "$.output.value[", "expected": "x", "negate": 1}}));
        let result = also_invalid.evaluate(ctx.value(), &mut CaseClock::start(), None);
        assert_eq!(
            result.outcome.unwrap_err().kind,
            result::ErrorType::Validation
        );
    }

    #[test]
    fn evaluation_resolves_literals_and_paths_in_order() {
        let check = prepare(json!({"type": "exact_match", "arguments": {
            "expected": "$.test_case.expected", "actual": "Paris", "case_sensitive": false}}));
        let ctx = Context::new(
            json!({"id": "t", "expected": "paris"}),
            json!({"value": "x"}),
        );
        let result = check.evaluate(ctx.value(), &mut CaseClock::start(), None);
        assert_eq!(result.outcome, Ok(Results::Passed(true)));
        let json = serde_json::to_value(&result).unwrap();
        assert_eq!(
            json["resolved_arguments"],
            json!({"expected": {"jsonpath": "$.test_case.expected", "value": "paris"},
                   "actual": {"value": "Paris"}, "case_sensitive": {"value": false}})
        );
        assert_eq!(json["metadata"]["check_version"], "1.0.0");
        assert!(json.get("error").is_none());
    }
}
