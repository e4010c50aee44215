//! The simple text validators (exact_match, contains, regex_match, boolean_assert), the named
//! normalisation steps shared by normalized_match and token_f1 (each a normaliser of
//! [`crate::scoring::normalize`]), fuzzy_match and normalized_match.

use serde::Deserialize;
use serde_json::{json, Value};
use unicode_normalization::UnicodeNormalization;

use super::cache::LastCompiled;
use super::config::{check_strict, in_unit_range, Problems, RawConfig};
use super::gofmt::go_f4;
use super::re2;
use super::{Comparison, ConfigProblem, RawOutput};
use crate::patterns::{self, Pattern, PatternError, RegexFlags};
use crate::scoring::matching::{self, Case, Need};
use crate::scoring::normalize::{
    case_fold, collapse_whitespace, is_punctuation_or_symbol, prepare, remove_articles, sort_lines,
    sort_words, strip_currency, without_chars,
};
use crate::scoring::overlap::levenshtein;

/// The last regex compiled from an evidence string.
pub(super) type RegexCache = LastCompiled<Pattern>;

/// Compile a regex with RE2's meaning ([`re2`]: ASCII Perl classes and word boundaries, quoting,
/// literal braces, RE2's refusals), once
/// per process, within the size limit of [`patterns`]; or give the compiler's error on one line
/// (of the pattern as written), or name the limit.
pub(super) fn compile_regex(pattern: &str) -> Result<Pattern, String> {
    let compile = |pattern: &str| {
        patterns::compile(pattern, RegexFlags::default()).map_err(|err| match err {
            PatternError::Syntax(reason) => one_line_regex_error(&reason),
            limit => limit.to_string(),
        })
    };
    let translated = re2::translate(pattern)?;
    compile(&translated).map_err(|err| match translated == pattern {
        true => err,
        // Said of the pattern as it was written, not as rewritten, where that fails too.
        false => compile(pattern).err().unwrap_or(err),
    })
}

/// The regex crate's multi-line error, on one line.
fn one_line_regex_error(reason: &str) -> String {
    reason
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn exact_match(actual: &str, expected: &str) -> Comparison {
    Comparison::binary(matching::exact(actual, expected, Case::Sensitive), "")
}

pub(super) fn contains(actual: &str, expected: &str) -> Comparison {
    let found = matching::contains(actual, &[expected], Case::Sensitive, Need::All);
    Comparison::binary(found, "")
}

pub(super) fn regex_match(cache: &RegexCache, actual: &str, expected: &str) -> Comparison {
    match cache.get(expected, compile_regex) {
        Ok(regex) => Comparison::binary(regex.is_match(actual), ""),
        Err(err) => Comparison::error(format!("invalid regex pattern: {err}")),
    }
}

pub(super) fn boolean_assert(actual: &str, expected: &str) -> Comparison {
    let actual = match parse_bool(actual) {
        Ok(value) => value,
        Err(err) => {
            return Comparison::error(format!("parse actual boolean assertion value: {err}"))
        }
    };
    match parse_bool(expected) {
        Ok(expected) => Comparison::binary(actual == expected, ""),
        Err(err) => Comparison::error(format!("parse expected boolean assertion value: {err}")),
    }
}

fn parse_bool(text: &str) -> Result<bool, String> {
    match text.trim().to_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(format!("unsupported boolean value {}", go_quote(text))),
    }
}

/// Go's `%q` of a string (close enough for reason texts: JSON string escaping).
pub(super) fn go_quote(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

// ---- normalisation steps --------------------------------------------------------------------

/// Every step `normalized_match` accepts.
pub(super) const NORMALIZATION_STEPS: &[&str] = &[
    "trim",
    "lowercase",
    "collapse_whitespace",
    "strip_punctuation",
    "strip_currency",
    "strip_formatting",
    "normalize_unicode",
    "remove_articles",
    "sort_words",
    "sort_lines",
];

/// Apply one normalisation step; an unknown step is an error.
pub(super) fn apply_step(step: &str, text: &str) -> Result<String, String> {
    Ok(match step {
        "trim" => text.trim().to_string(),
        "lowercase" => case_fold(text),
        "collapse_whitespace" => collapse_whitespace(text),
        "strip_punctuation" => without_chars(text, is_punctuation_or_symbol),
        "strip_currency" => strip_currency(text),
        "strip_formatting" => without_chars(text, |ch| matches!(ch, ',' | '(' | ')' | '[' | ']')),
        "normalize_unicode" => text.nfkc().collect(),
        "remove_articles" => remove_articles(text),
        "sort_words" => sort_words(text),
        "sort_lines" => sort_lines(text),
        other => return Err(format!("unknown normalization step {}", go_quote(other))),
    })
}

/// Apply a pipeline of steps in order.
pub(super) fn normalize<S: AsRef<str>>(pipeline: &[S], text: &str) -> Result<String, String> {
    let mut current = text.to_string();
    for step in pipeline {
        current = apply_step(step.as_ref(), &current)?;
    }
    Ok(current)
}

// ---- fuzzy_match ----------------------------------------------------------------------------

const FUZZY_MAX_RUNES: usize = 100_000;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FuzzyConfig {
    threshold: Option<f64>,
    case_insensitive: Option<bool>,
    normalize: Option<bool>,
}

pub(super) fn check_fuzzy(config: RawConfig<'_>) -> Vec<ConfigProblem> {
    check_strict::<FuzzyConfig>(config, |config, problems| {
        threshold_problem(config.threshold, problems);
    })
}

/// The shared `threshold must be between 0 and 1` check.
pub(super) fn threshold_problem(threshold: Option<f64>, problems: &mut Problems) {
    if !in_unit_range(threshold) {
        problems.add(".threshold", "must be between 0 and 1");
    }
}

pub(super) fn fuzzy_match(config: &FuzzyConfig, actual: &str, expected: &str) -> Comparison {
    let threshold = config.threshold.unwrap_or(0.8).clamp(0.0, 1.0);
    let case_insensitive = config.case_insensitive.unwrap_or(false);
    let normalize = config.normalize.unwrap_or(false);
    let (actual, expected) = (
        prepare(actual, normalize, case_insensitive),
        prepare(expected, normalize, case_insensitive),
    );
    let (actual_len, expected_len) = (actual.chars().count(), expected.chars().count());
    if actual_len > FUZZY_MAX_RUNES || expected_len > FUZZY_MAX_RUNES {
        return Comparison::error(format!(
            "fuzzy_match input too large: inputs exceed {FUZZY_MAX_RUNES} runes"
        ));
    }
    let distance = match levenshtein(&actual, &expected) {
        Ok(distance) => distance,
        Err(reason) => {
            return Comparison::error(format!(
                "fuzzy_match input too large: the edit distance {reason}"
            ))
        }
    };
    let sum_length = actual_len + expected_len;
    let similarity = if sum_length == 0 {
        1.0
    } else {
        (sum_length - distance) as f64 / sum_length as f64
    };
    let reason = || {
        format!(
            "similarity {} is below threshold {}",
            go_f4(similarity),
            go_f4(threshold)
        )
    };
    Comparison::scored(similarity >= threshold, similarity, reason).with_evidence(evidence([
        ("similarity", json!(similarity)),
        ("threshold", json!(threshold)),
        ("distance", json!(distance)),
        ("sum_length", json!(sum_length)),
        ("case_insensitive", json!(case_insensitive)),
        ("normalize", json!(normalize)),
    ]))
}

/// Build an evidence map from pairs.
pub(super) fn evidence<const N: usize>(pairs: [(&'static str, Value); N]) -> RawOutput {
    RawOutput::from(pairs)
}

// ---- normalized_match -----------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NormalizedConfig {
    pipeline: Option<Vec<String>>,
    normalizations: Option<Vec<String>>,
}

impl NormalizedConfig {
    /// The effective pipeline, or the "cannot mix" error.
    fn pipeline(&self) -> Result<Vec<String>, String> {
        let pipeline = self.pipeline.clone().unwrap_or_default();
        let legacy = self.normalizations.clone().unwrap_or_default();
        match (pipeline.is_empty(), legacy.is_empty()) {
            (false, false) => Err("cannot mix pipeline with normalizations".to_string()),
            (false, true) => Ok(pipeline),
            (true, false) => Ok(legacy),
            (true, true) => Ok(["trim", "lowercase", "collapse_whitespace"]
                .map(String::from)
                .to_vec()),
        }
    }
}

pub(super) fn check_normalized(config: RawConfig<'_>) -> Vec<ConfigProblem> {
    check_strict::<NormalizedConfig>(config, |config, problems| match config.pipeline() {
        Err(err) => problems.add("", err),
        Ok(pipeline) => {
            for (index, step) in pipeline.iter().enumerate() {
                if !NORMALIZATION_STEPS.contains(&step.as_str()) {
                    problems.add(
                        &format!(".pipeline[{index}]"),
                        format!("{} is not a supported normalization step", go_quote(step)),
                    );
                }
            }
        }
    })
}

pub(super) fn normalized_match(
    config: &NormalizedConfig,
    actual: &str,
    expected: &str,
) -> Comparison {
    let pipeline = match config.pipeline() {
        Ok(pipeline) => pipeline,
        Err(err) => return Comparison::error(format!("parse normalized_match config: {err}")),
    };
    let normalized_actual = match normalize(&pipeline, actual) {
        Ok(text) => text,
        Err(err) => return Comparison::error(format!("normalize actual value: {err}")),
    };
    let normalized_expected = match normalize(&pipeline, expected) {
        Ok(text) => text,
        Err(err) => return Comparison::error(format!("normalize expected value: {err}")),
    };
    Comparison::binary(
        normalized_actual == normalized_expected,
        "normalized values do not match",
    )
    .with_evidence(evidence([
        ("normalized_actual", json!(normalized_actual)),
        ("normalized_expected", json!(normalized_expected)),
        ("pipeline", json!(pipeline)),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_follow_the_reference() {
        let step = |name: &str, text: &str| apply_step(name, text).unwrap_or_default();
        assert_eq!(step("lowercase", "Straße"), "strasse");
        assert_eq!(step("collapse_whitespace", "a\x0b\x0bb  c"), "a\x0b\x0bb c");
        assert_eq!(step("strip_punctuation", "a+b=c 😀!"), "abc ");
        assert_eq!(
            step("remove_articles", "the theatre an ant a"),
            "  theatre   ant  "
        );
        assert_eq!(step("sort_words", " b  a c"), "a b c");
        assert_eq!(step("sort_lines", "b\r\na"), "a\nb");
        assert_eq!(step("normalize_unicode", "ﬁ"), "fi");
    }

    #[test]
    fn catastrophic_regex_runs_in_linear_time() {
        let cache = RegexCache::default();
        let actual = "a".repeat(100_000) + "!";
        let started = std::time::Instant::now();
        let outcome = regex_match(&cache, &actual, "^(a+)+$");
        assert_eq!(outcome.verdict(), super::super::Verdict::Fail);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn backreferences_are_a_pack_error_not_a_crash() {
        let outcome = regex_match(&RegexCache::default(), "aa", r"(a)\1");
        assert!(outcome.reason().starts_with("invalid regex pattern: "));
    }
}
