//! The simple text validators (exact_match, contains, regex_match, boolean_assert), the
//! normalisation steps shared by normalized_match and token_f1, fuzzy_match and normalized_match.

use regex::Regex;
use serde::Deserialize;
use serde_json::{json, Value};
use unicode_general_category::{get_general_category, GeneralCategory};
use unicode_normalization::UnicodeNormalization;

use super::cache::LastCompiled;
use super::config::{check_strict, in_unit_range, Problems, RawConfig};
use super::gofmt::go_f4;
use super::{Comparison, ConfigProblem, RawOutput};
use crate::patterns::{self, PatternError, RegexFlags};
use crate::text::thousands;

/// The last regex compiled from an evidence string.
pub(super) type RegexCache = LastCompiled<Regex>;

/// Compile a regex (once per process, within the size limit of [`patterns`]), or give the
/// compiler's error on one line, or name the limit.
pub(super) fn compile_regex(pattern: &str) -> Result<Regex, String> {
    patterns::compile(pattern, RegexFlags::default()).map_err(|err| match err {
        PatternError::Syntax(reason) => one_line_regex_error(&reason),
        too_large @ PatternError::TooLarge => too_large.to_string(),
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
    Comparison::binary(actual == expected, "")
}

pub(super) fn contains(actual: &str, expected: &str) -> Comparison {
    Comparison::binary(actual.contains(expected), "")
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

/// The currency tokens `strip_currency` and `extract_number` remove.
pub(super) const CURRENCY_TOKENS: &[&str] =
    &["$", "€", "£", "¥", "₹", "USD", "EUR", "GBP", "JPY", "INR"];

/// Whether `text` starts with a byte some currency token starts with: most characters need no
/// token compared.
fn may_start_currency(text: &[u8]) -> bool {
    matches!(
        text.first(),
        Some(b'$' | 0xC2 | 0xE2 | b'U' | b'E' | b'G' | b'J' | b'I')
    )
}

/// Remove every currency token in one left-to-right scan (the first token that matches at a
/// position wins).
pub(super) fn strip_currency(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut kept = 0; // text[kept..at] is kept and not yet copied
    let mut at = 0;
    while at < text.len() {
        // A byte a token may start with is ASCII or a lead byte: `at` is on a char boundary.
        let token = may_start_currency(&text.as_bytes()[at..])
            .then(|| {
                CURRENCY_TOKENS
                    .iter()
                    .find(|token| text.as_bytes()[at..].starts_with(token.as_bytes()))
            })
            .flatten();
        match token {
            Some(token) => {
                out.push_str(&text[kept..at]);
                at += token.len();
                kept = at;
            }
            None => at += 1,
        }
    }
    out.push_str(&text[kept..]);
    out
}

/// Replace every run of the ASCII white space TAB, LF, FF, CR, SPACE with one space (not VT).
pub(super) fn collapse_whitespace(text: &str) -> String {
    let is_space = |byte: &u8| matches!(byte, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ');
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    // Runs of white space are cut at ASCII bytes, so on char boundaries.
    while let Some(run) = bytes[at..].iter().position(is_space) {
        out.push_str(&text[at..at + run]);
        out.push(' ');
        at += run;
        at += bytes[at..].iter().take_while(|byte| is_space(byte)).count();
    }
    out.push_str(&text[at..]);
    out
}

/// Full Unicode case folding (`ß` → `ss`).
pub(super) fn case_fold(text: &str) -> String {
    if text.is_ascii() {
        // Folding changes only A-Z among ASCII characters.
        text.to_ascii_lowercase()
    } else {
        caseless::default_case_fold_str(text)
    }
}

/// `normalize` (trim + collapse) then `case_insensitive` (case fold).
pub(super) fn prepare_text(text: &str, normalize: bool, case_insensitive: bool) -> String {
    let text = if normalize {
        collapse_whitespace(text.trim())
    } else {
        text.to_string()
    };
    if case_insensitive {
        case_fold(&text)
    } else {
        text
    }
}

fn is_punctuation_or_symbol(ch: char) -> bool {
    if ch.is_ascii() {
        // The same answer as the category lookup (a unit test checks every ASCII character).
        return ch.is_ascii_punctuation();
    }
    in_punctuation_or_symbol_category(ch)
}

/// Whether `ch`'s Unicode general category is a punctuation (P*) or symbol (S*) one.
fn in_punctuation_or_symbol_category(ch: char) -> bool {
    use GeneralCategory::*;
    matches!(
        get_general_category(ch),
        ConnectorPunctuation
            | DashPunctuation
            | OpenPunctuation
            | ClosePunctuation
            | InitialPunctuation
            | FinalPunctuation
            | OtherPunctuation
            | MathSymbol
            | CurrencySymbol
            | ModifierSymbol
            | OtherSymbol
    )
}

/// Each whole-word `a`, `an`, `the` (lower case, ASCII word boundaries) becomes one space.
fn remove_articles(text: &str) -> String {
    let bytes = text.as_bytes();
    let is_word = |index: usize| {
        bytes
            .get(index)
            .is_some_and(|byte| byte.is_ascii_alphanumeric() || *byte == b'_')
    };
    let mut out = String::with_capacity(text.len());
    let mut kept = 0; // text[kept..index] is kept and not yet copied
    let mut index = 0;
    while index < bytes.len() {
        let at_boundary = index == 0 || !is_word(index - 1);
        // An article is ASCII: it never starts inside a multi-byte char, so `index` is then on
        // a char boundary.
        let article = at_boundary
            .then(|| {
                ["the", "an", "a"].into_iter().find(|article| {
                    bytes[index..].starts_with(article.as_bytes())
                        && !is_word(index + article.len())
                })
            })
            .flatten();
        match article {
            Some(article) => {
                out.push_str(&text[kept..index]);
                out.push(' ');
                index += article.len();
                kept = index;
            }
            None => index += 1,
        }
    }
    out.push_str(&text[kept..]);
    out
}

/// `text` without the chars `drop` picks, copied a run of kept chars at a time.
pub(super) fn without_chars(text: &str, drop: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut kept = 0;
    for (at, ch) in text.char_indices() {
        if drop(ch) {
            out.push_str(&text[kept..at]);
            kept = at + ch.len_utf8();
        }
    }
    out.push_str(&text[kept..]);
    out
}

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
        "sort_words" => {
            let mut words: Vec<&str> = text.split_whitespace().collect();
            words.sort_unstable();
            words.join(" ")
        }
        "sort_lines" => {
            let unified = text.replace("\r\n", "\n");
            let mut lines: Vec<&str> = unified.split('\n').collect();
            lines.sort_unstable();
            lines.join("\n")
        }
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

/// The most pairs of items (runes for `fuzzy_match`, tokens for `rouge_score`'s rouge-l) one
/// quadratic comparison may take: the work of an edit distance or a longest common subsequence
/// grows with the product of the two lengths.
pub(super) const MAX_COMPARED_PAIRS: u64 = 100_000_000;

/// `Err` with the reason when comparing `a` by `b` items (`item` names one) is over
/// [`MAX_COMPARED_PAIRS`].
pub(super) fn within_pair_limit(a: usize, b: usize, item: &str) -> Result<(), String> {
    let pairs = (a as u64).saturating_mul(b as u64);
    if pairs > MAX_COMPARED_PAIRS {
        return Err(format!(
            "would compare {a} × {b} {item}s (limit: {} {item} pairs)",
            thousands(MAX_COMPARED_PAIRS)
        ));
    }
    Ok(())
}

/// The Levenshtein distance in chars, as `strsim::levenshtein`, computed without the common
/// prefix and suffix (they never change it, and near-matches are mostly that); `Err` when what
/// remains is over [`MAX_COMPARED_PAIRS`].
fn levenshtein(a: &str, b: &str) -> Result<usize, String> {
    let common = |a: &mut dyn Iterator<Item = char>, b: &mut dyn Iterator<Item = char>| -> usize {
        a.zip(b)
            .take_while(|(x, y)| x == y)
            .map(|(x, _)| x.len_utf8())
            .sum()
    };
    // Equal chars have equal UTF-8 lengths, so both cuts fall on char boundaries in both texts.
    let prefix = common(&mut a.chars(), &mut b.chars());
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = common(&mut a.chars().rev(), &mut b.chars().rev());
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    within_pair_limit(a.chars().count(), b.chars().count(), "rune")?;
    Ok(strsim::levenshtein(a, b))
}

pub(super) fn fuzzy_match(config: &FuzzyConfig, actual: &str, expected: &str) -> Comparison {
    let threshold = config.threshold.unwrap_or(0.8).clamp(0.0, 1.0);
    let case_insensitive = config.case_insensitive.unwrap_or(false);
    let normalize = config.normalize.unwrap_or(false);
    let (actual, expected) = (
        prepare_text(actual, normalize, case_insensitive),
        prepare_text(expected, normalize, case_insensitive),
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
    fn ascii_punctuation_is_the_punctuation_and_symbol_categories() {
        for ch in (0u8..128).map(char::from) {
            let by_category = in_punctuation_or_symbol_category(ch);
            assert_eq!(is_punctuation_or_symbol(ch), by_category, "{ch:?}");
        }
    }

    #[test]
    fn articles_whitespace_and_punctuation_are_removed_around_multibyte_text() {
        assert_eq!(
            remove_articles("the cat, a dog an_t the"),
            "  cat,   dog an_t  "
        );
        assert_eq!(remove_articles("éthe théa à the"), "é  thé  à  ");
        assert_eq!(collapse_whitespace(" é \t\n ü  "), " é ü ");
        assert_eq!(
            without_chars("¿Qué?—sí, «ok»!", is_punctuation_or_symbol),
            "Quésí ok"
        );
    }

    #[test]
    fn every_currency_token_passes_the_first_byte_check() {
        for token in CURRENCY_TOKENS {
            assert!(may_start_currency(token.as_bytes()), "{token}");
        }
        assert_eq!(
            strip_currency("USD 1,200 € and ¥3 or $4 GBp"),
            " 1,200  and 3 or 4 GBp"
        );
    }

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
        assert_eq!(outcome.verdict, super::super::Verdict::Fail);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn backreferences_are_a_pack_error_not_a_crash() {
        let outcome = regex_match(&RegexCache::default(), "aa", r"(a)\1");
        assert!(outcome.reason.starts_with("invalid regex pattern: "));
    }

    #[test]
    fn trimmed_levenshtein_and_ascii_folding_match_the_full_ones() {
        let texts = [
            "",
            "a",
            "ab",
            "ba",
            "kitten",
            "sitting",
            "The capital of France is Paris.",
            "The capital of France is Lyon.",
            "the capital of france is paris",
            "aaaa",
            "aa",
            "ßtraße",
            "strasse",
            "é",
            "e\u{301}",
            "日本語",
            "日本",
            "x日本語x",
            "Ǆ Ⅻ ﬃ",
        ];
        for a in texts {
            assert_eq!(case_fold(a), caseless::default_case_fold_str(a), "{a}");
            for b in texts {
                assert_eq!(
                    levenshtein(a, b),
                    Ok(strsim::levenshtein(a, b)),
                    "{a:?} {b:?}"
                );
            }
        }
        let (long_a, long_b) = ("a".repeat(10_001), "b".repeat(10_000));
        assert_eq!(
            levenshtein(&format!("x{long_a}y"), &format!("x{long_b}y")),
            Err("would compare 10001 × 10000 runes (limit: 100,000,000 rune pairs)".into())
        );
        let same = format!("{long_a}{long_b}");
        assert_eq!(
            levenshtein(&same, &same),
            Ok(0),
            "common parts cost nothing"
        );
        let ascii: String = (0u8..128).map(char::from).collect();
        assert_eq!(case_fold(&ascii), caseless::default_case_fold_str(&ascii));
    }
}
