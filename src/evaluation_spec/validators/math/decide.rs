//! The verdict: both sides normalised, parsed and compared by canonical form, else by value
//! within the tolerance.

use serde_json::json;

use super::canonical::{canonical, evaluate};
use super::grammar::{parse, Expr};
use super::normalize::normalize_expression;
use super::settings::MathConfig;
use crate::evaluation_spec::gostr::go_g;
use crate::evaluation_spec::validators::text::evidence;
use crate::evaluation_spec::validators::Comparison;

pub(in crate::evaluation_spec::validators) fn math_equivalence(
    config: &MathConfig,
    actual: &str,
    expected: &str,
) -> Comparison {
    let comparison_mode = config.comparison_mode.as_deref().unwrap_or("symbolic");
    if comparison_mode != "symbolic" && comparison_mode != "numeric" {
        return Comparison::error(
            "parse math_equivalence config: comparison_mode must be \"symbolic\" or \"numeric\""
                .to_string(),
        );
    }
    let numeric_mode = comparison_mode == "numeric";
    let fallback = numeric_mode || config.numeric_fallback.unwrap_or(true);
    let tolerance = config.tolerance.unwrap_or(1e-6);
    let normalized_actual = match normalize_expression(actual, config) {
        Ok(text) => text,
        Err(err) => {
            return Comparison::error(format!("normalize actual math expression: {err}"))
                .with_evidence(evidence([("actual_raw", json!(actual))]))
        }
    };
    let normalized_expected = match normalize_expression(expected, config) {
        Ok(text) => text,
        Err(err) => {
            return Comparison::error(format!("normalize expected math expression: {err}"))
                .with_evidence(evidence([("expected_raw", json!(expected))]))
        }
    };
    let mut recorded = evidence([
        ("actual_raw", json!(actual)),
        ("expected_raw", json!(expected)),
        ("normalized_actual", json!(normalized_actual)),
        ("normalized_expected", json!(normalized_expected)),
        ("comparison_mode", json!(comparison_mode)),
        (
            "extract_answer",
            json!(config.extract_answer.unwrap_or(false)),
        ),
        ("answer_delimiter", json!(config.answer_delimiter)),
        ("numeric_fallback", json!(fallback)),
        ("tolerance", json!(tolerance)),
    ]);
    let mut record = |key: &'static str, value: serde_json::Value| {
        recorded.insert(key, value);
    };
    let actual_ast = parse(&normalized_actual);
    let expected_ast = parse(&normalized_expected);
    let mut verdict: Option<Comparison> = None;
    if let (false, Ok(actual_ast), Ok(expected_ast)) = (numeric_mode, &actual_ast, &expected_ast) {
        // A literal division by zero has no canonical form: it is never symbolically equal.
        if let (Ok(a), Ok(e)) = (canonical(actual_ast), canonical(expected_ast)) {
            let (actual_key, expected_key) = (a.key(), e.key());
            let equal = actual_key == expected_key;
            record("canonical_actual", json!(actual_key));
            record("canonical_expected", json!(expected_key));
            if equal {
                record("mode_used", json!("symbolic"));
                verdict = Some(Comparison::binary(true, ""));
            }
        }
    }
    let parse_errors: Vec<String> = [&actual_ast, &expected_ast]
        .into_iter()
        .filter_map(|parsed| parsed.as_ref().err().cloned())
        .collect();
    if let Err(err) = &actual_ast {
        record("actual_parse_error", json!(err));
    }
    if let Err(err) = &expected_ast {
        record("expected_parse_error", json!(err));
    }
    if verdict.is_none() && fallback {
        let evaluated =
            |parsed: &Result<Expr, String>| parsed.clone().and_then(|ast| evaluate(&ast));
        match (evaluated(&actual_ast), evaluated(&expected_ast)) {
            (Ok(a), Ok(e)) => {
                let difference = (a - e).abs();
                record("numeric_actual", json!(a));
                record("numeric_expected", json!(e));
                record("absolute_difference", json!(difference));
                let mode = if numeric_mode {
                    "numeric"
                } else {
                    "numeric_fallback"
                };
                record("mode_used", json!(mode));
                verdict = Some(Comparison::binary(
                    difference <= tolerance,
                    &format!(
                        "numeric values differ by {} which exceeds tolerance {}",
                        go_g(difference, Some(10)),
                        go_g(tolerance, Some(10))
                    ),
                ));
            }
            (a, e) => {
                if let Err(err) = &a {
                    record("actual_numeric_error", json!(err));
                }
                if let Err(err) = &e {
                    record("expected_numeric_error", json!(err));
                }
                if numeric_mode || !parse_errors.is_empty() {
                    let all: Vec<String> = parse_errors
                        .iter()
                        .cloned()
                        .chain([a.err(), e.err()].into_iter().flatten())
                        .collect();
                    return Comparison::error(format!(
                        "evaluate math_equivalence expressions: {}",
                        all.join("; ")
                    ))
                    .with_evidence(recorded);
                }
            }
        }
    }
    let verdict = match verdict {
        Some(verdict) => verdict,
        None if !parse_errors.is_empty() => {
            return Comparison::error(format!(
                "parse math_equivalence expressions: {}",
                parse_errors.join("; ")
            ))
            .with_evidence(recorded)
        }
        None => Comparison::binary(false, "symbolic forms are not equivalent"),
    };
    verdict.with_evidence(recorded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluation_spec::validators::Verdict;

    fn verdict(actual: &str, expected: &str) -> Comparison {
        math_equivalence(&MathConfig::default(), actual, expected)
    }

    #[test]
    fn no_like_term_collection_and_no_implicit_products() {
        let outcome = verdict("x - x", "0");
        assert_eq!(outcome.verdict(), Verdict::Fail);
        let outcome = verdict("2x", "2*x");
        outcome
            .assert_error(|reason| reason.starts_with("evaluate math_equivalence expressions: "));
    }

    #[test]
    fn canonical_forms_follow_the_reference_tree_shape() {
        // A spliced sum keeps its own constant apart, as the reference's canonicaliser does.
        assert_eq!(verdict("x + 1 + 2", "x + 3").verdict(), Verdict::Fail);
        assert_eq!(verdict("x + (1 + 2)", "x + 3").verdict(), Verdict::Pass);
        assert_eq!(verdict("2 * x / 4", "x * 0.5").verdict(), Verdict::Fail);
        assert_eq!(verdict("x * (2 / 4)", "x * 0.5").verdict(), Verdict::Pass);
        // `,` is removed before `\,` is looked for, so a thin space leaves a backslash behind.
        let outcome = verdict("1\\,000", "1000");
        outcome.assert_error(|reason| reason.contains("unexpected character '\\'"));
    }

    #[test]
    fn division_by_zero_is_not_equivalent_and_never_panics() {
        assert_ne!(verdict("1/0", "1/0").verdict(), Verdict::Pass);
        assert_ne!(verdict("0^-1", "2").verdict(), Verdict::Pass);
    }

    #[test]
    fn deep_nesting_is_refused() {
        let deep = "(".repeat(10_000) + "1" + &")".repeat(10_000);
        let outcome = verdict(&deep, "1");
        outcome.assert_error(|reason| reason.contains("nested too deeply"));
        let long = vec!["1"; 20_000].join("+");
        assert_eq!(verdict(&long, "20000").verdict(), Verdict::Pass);
    }

    #[test]
    fn a_long_chain_is_folded_once_and_sorted_once() {
        // 20,000 factors: folding pair by pair with a sort (or a copy) at each pair took
        // minutes; sorted once at the end, a moment. The order of the factors does not count.
        let factors = vec!["(x+1)"; 20_000].join("*");
        let outcome = verdict(&format!("{factors}*y"), &format!("y*{factors}"));
        assert_eq!(outcome.verdict(), Verdict::Pass);
        let sum = vec!["x"; 20_000].join("+");
        assert_eq!(
            verdict(&format!("{sum}+1"), &format!("1+{sum}")).verdict(),
            Verdict::Pass
        );
    }

    #[test]
    fn numeric_fallback_fails_with_the_difference() {
        let outcome = verdict("41", "42");
        assert_eq!(outcome.verdict(), Verdict::Fail);
        assert_eq!(
            outcome.reason(),
            "numeric values differ by 1 which exceeds tolerance 1e-06"
        );
    }
}
