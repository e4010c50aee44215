//! The overlap-scored validators: token_f1, bleu_score, rouge_score and chrf_score, with the
//! reference's own formulas (BLEU "method1" = 1/(total+1), orders capped by the candidate; chrF
//! orders capped by the shorter text; ROUGE both-empty = 0). These are deliberately not the
//! task metrics of `crate::scoring`, which follow sacrebleu / rouge-score; they share the core's
//! overlap counts (n-grams, clipped overlap, token F1, LCS, F-measure) and normalisers.

use serde::Deserialize;
use serde_json::{json, Value};

use super::config::{check_strict, RawConfig};
use super::gofmt::go_f4;
use super::text::{evidence, normalize, threshold_problem};
use super::{Comparison, ConfigProblem};
use crate::scoring::normalize::prepare;
use crate::scoring::overlap::{
    clipped_overlap, f_score, lcs_length, ngram_counts, token_f1 as overlap_f1, within_pair_limit,
};

/// `score %.4f is below threshold %.4f`.
fn below_threshold(score: f64, threshold: f64) -> String {
    format!(
        "score {} is below threshold {}",
        go_f4(score),
        go_f4(threshold)
    )
}

/// An overlap score's verdict against `threshold`, with `fields` as its evidence followed by the
/// `score` and the `threshold`, as every overlap validator reports them.
fn against_threshold<const N: usize>(
    score: f64,
    threshold: f64,
    fields: [(&'static str, Value); N],
) -> Comparison {
    let mut raw = evidence(fields);
    raw.insert("score", json!(score));
    raw.insert("threshold", json!(threshold));
    Comparison::scored(score >= threshold, score, || {
        below_threshold(score, threshold)
    })
    .with_evidence(raw)
}

// ---- token_f1 -------------------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TokenF1Config {
    threshold: Option<f64>,
    normalize: Option<bool>,
    remove_articles: Option<bool>,
    remove_punctuation: Option<bool>,
}

pub(super) fn check_token_f1(config: RawConfig<'_>) -> Vec<ConfigProblem> {
    check_strict::<TokenF1Config>(config, |config, problems| {
        threshold_problem(config.threshold, problems);
    })
}

impl TokenF1Config {
    fn pipeline(&self) -> Vec<&'static str> {
        let mut pipeline: Vec<&'static str> = Vec::new();
        if self.normalize == Some(true) {
            pipeline.extend(["trim", "lowercase", "collapse_whitespace"]);
        }
        if self.remove_punctuation == Some(true) {
            pipeline.push("strip_punctuation");
        }
        if self.remove_articles == Some(true) {
            pipeline.push("remove_articles");
        }
        if !pipeline.is_empty() {
            pipeline.extend(["collapse_whitespace", "trim"]);
        }
        pipeline
    }
}

pub(super) fn token_f1(config: &TokenF1Config, actual: &str, expected: &str) -> Comparison {
    let threshold = config.threshold.unwrap_or(0.5).clamp(0.0, 1.0);
    let pipeline = config.pipeline();
    let normalized_actual = match normalize(&pipeline, actual) {
        Ok(text) => text,
        Err(err) => return Comparison::error(format!("normalize token_f1 actual value: {err}")),
    };
    let normalized_expected = match normalize(&pipeline, expected) {
        Ok(text) => text,
        Err(err) => return Comparison::error(format!("normalize token_f1 expected value: {err}")),
    };
    let predicted: Vec<&str> = normalized_actual.split_whitespace().collect();
    let reference: Vec<&str> = normalized_expected.split_whitespace().collect();
    let (overlap, precision, recall, score) = match (predicted.is_empty(), reference.is_empty()) {
        (true, true) => (0, 1.0, 1.0, 1.0),
        (true, false) | (false, true) => (0, 0.0, 0.0, 0.0),
        (false, false) => {
            let f1 = overlap_f1(&predicted, &reference);
            (f1.overlap, f1.precision, f1.recall, f1.f1)
        }
    };
    against_threshold(
        score,
        threshold,
        [
            ("normalized_actual", json!(normalized_actual)),
            ("normalized_expected", json!(normalized_expected)),
            ("pipeline", json!(pipeline)),
            ("prediction_tokens", json!(predicted)),
            ("reference_tokens", json!(reference)),
            ("prediction_token_count", json!(predicted.len())),
            ("reference_token_count", json!(reference.len())),
            ("overlap_token_count", json!(overlap)),
            ("precision", json!(precision)),
            ("recall", json!(recall)),
        ],
    )
}

// ---- shared text preparation and references -------------------------------------------------

/// The references in `expected`: a JSON array of strings when it is one, else the text itself.
fn references(kind: &str, expected: &str) -> Result<Vec<String>, String> {
    let trimmed = expected.trim();
    if trimmed.is_empty() {
        return Ok(vec![String::new()]);
    }
    if !trimmed.starts_with('[') {
        return Ok(vec![expected.to_string()]);
    }
    let Ok(value) = serde_json::from_str::<Value>(trimmed) else {
        return Ok(vec![expected.to_string()]);
    };
    let strings: Option<Vec<String>> = value.as_array().and_then(|items| {
        items
            .iter()
            .map(|item| match item {
                // A null element decodes to "" in the reference.
                Value::Null => Some(String::new()),
                other => other.as_str().map(String::from),
            })
            .collect()
    });
    match strings {
        None => Err(format!(
            "parse {kind} references: expected a JSON array of reference strings"
        )),
        Some(strings) if strings.is_empty() => Err(format!(
            "parse {kind} references: at least one reference is required"
        )),
        Some(strings) => Ok(strings),
    }
}

/// Shared text-preparation flags.
#[derive(Debug, Clone, Copy)]
struct Prep {
    normalize: bool,
    case_insensitive: bool,
}

/// The prepared candidate and references, or the reference error.
fn prepared_sides(
    kind: &str,
    prep: Prep,
    actual: &str,
    expected: &str,
) -> Result<(String, Vec<String>), String> {
    let references = references(kind, expected)?;
    let candidate = prepare(actual, prep.normalize, prep.case_insensitive);
    let references = references
        .iter()
        .map(|reference| prepare(reference, prep.normalize, prep.case_insensitive))
        .collect();
    Ok((candidate, references))
}

// ---- bleu_score -----------------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BleuConfig {
    threshold: Option<f64>,
    max_ngram: Option<i64>,
    smoothing: Option<String>,
    case_insensitive: Option<bool>,
    normalize: Option<bool>,
}

pub(super) fn check_bleu(config: RawConfig<'_>) -> Vec<ConfigProblem> {
    check_strict::<BleuConfig>(config, |config, problems| {
        threshold_problem(config.threshold, problems);
        if config.max_ngram.is_some_and(|max| max <= 0) {
            problems.add(".max_ngram", "must be greater than 0");
        }
        if !matches!(config.smoothing.as_deref(), None | Some("none" | "method1")) {
            problems.add(".smoothing", "must be \"none\" or \"method1\"");
        }
    })
}

pub(super) fn bleu_score(config: &BleuConfig, actual: &str, expected: &str) -> Comparison {
    let threshold = config.threshold.unwrap_or(0.3).clamp(0.0, 1.0);
    let max_ngram = config.max_ngram.filter(|max| *max > 0).unwrap_or(4) as usize;
    let smoothing = config.smoothing.as_deref().unwrap_or("none");
    let prep = Prep {
        normalize: config.normalize.unwrap_or(false),
        case_insensitive: config.case_insensitive.unwrap_or(false),
    };
    let (candidate, references) = match prepared_sides("bleu_score", prep, actual, expected) {
        Ok(sides) => sides,
        Err(err) => return Comparison::error(err),
    };
    let candidate: Vec<&str> = candidate.split_whitespace().collect();
    let references: Vec<Vec<&str>> = references
        .iter()
        .map(|reference| reference.split_whitespace().collect())
        .collect();
    let reference_lengths: Vec<usize> = references.iter().map(Vec::len).collect();
    let c = candidate.len();
    // The reference length closest to c; ties go to the shorter one.
    let r = reference_lengths
        .iter()
        .copied()
        .min_by_key(|length| (length.abs_diff(c), *length))
        .unwrap_or(0);
    let orders = max_ngram.min(c);
    let mut precisions = Vec::with_capacity(orders);
    for n in 1..=orders {
        let total = c - n + 1;
        let candidate_counts = ngram_counts(&candidate, n);
        let reference_counts: Vec<_> = references
            .iter()
            .map(|reference| ngram_counts(reference, n))
            .collect();
        let matches: usize = candidate_counts
            .iter()
            .map(|(gram, count)| {
                let best = reference_counts
                    .iter()
                    .map(|counts| counts.get(gram).copied().unwrap_or(0))
                    .max()
                    .unwrap_or(0);
                (*count).min(best)
            })
            .sum();
        let precision = if matches > 0 {
            matches as f64 / total as f64
        } else if smoothing == "method1" && n > 1 {
            1.0 / (total as f64 + 1.0)
        } else {
            0.0
        };
        precisions.push(precision);
    }
    let (score, brevity_penalty) = if c == 0 {
        // The reference records the score as the brevity penalty here.
        let score = if reference_lengths == [0] { 1.0 } else { 0.0 };
        (score, score)
    } else {
        let geometric = if precisions.contains(&0.0) {
            0.0
        } else {
            (precisions.iter().map(|p| p.ln()).sum::<f64>() / orders as f64).exp()
        };
        let brevity_penalty = if c >= r {
            1.0
        } else {
            (1.0 - r as f64 / c as f64).exp()
        };
        (brevity_penalty * geometric, brevity_penalty)
    };
    against_threshold(
        score,
        threshold,
        [
            ("candidate_length", json!(c)),
            ("reference_length", json!(r)),
            ("reference_lengths", json!(reference_lengths)),
            ("max_ngram", json!(max_ngram)),
            ("computed_orders", json!(orders)),
            ("smoothing", json!(smoothing)),
            ("brevity_penalty", json!(brevity_penalty)),
            ("precisions", json!(precisions)),
        ],
    )
}

// ---- rouge_score ----------------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RougeConfig {
    threshold: Option<f64>,
    variant: Option<String>,
    beta: Option<f64>,
    case_insensitive: Option<bool>,
    normalize: Option<bool>,
}

pub(super) fn check_rouge(config: RawConfig<'_>) -> Vec<ConfigProblem> {
    check_strict::<RougeConfig>(config, |config, problems| {
        threshold_problem(config.threshold, problems);
        if !matches!(
            config.variant.as_deref(),
            None | Some("rouge-1" | "rouge-2" | "rouge-l")
        ) {
            problems.add(
                ".variant",
                "must be \"rouge-1\", \"rouge-2\", or \"rouge-l\"",
            );
        }
        if config.beta.is_some_and(|beta| beta <= 0.0) {
            problems.add(".beta", "must be greater than 0");
        }
    })
}

/// `part / whole`, 0 when `whole` is 0.
fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

pub(super) fn rouge_score(config: &RougeConfig, actual: &str, expected: &str) -> Comparison {
    let threshold = config.threshold.unwrap_or(0.3).clamp(0.0, 1.0);
    let variant = config.variant.as_deref().unwrap_or("rouge-l");
    let beta = config.beta.unwrap_or(1.0);
    let prep = Prep {
        normalize: config.normalize.unwrap_or(false),
        case_insensitive: config.case_insensitive.unwrap_or(false),
    };
    let (candidate, references) = match prepared_sides("rouge_score", prep, actual, expected) {
        Ok(sides) => sides,
        Err(err) => return Comparison::error(err),
    };
    let candidate: Vec<&str> = candidate.split_whitespace().collect();
    let mut best: Option<(f64, f64, f64, usize)> = None;
    for reference in &references {
        let reference: Vec<&str> = reference.split_whitespace().collect();
        let (precision, recall) = match variant {
            "rouge-1" | "rouge-2" => {
                let n = if variant == "rouge-1" { 1 } else { 2 };
                let matches =
                    clipped_overlap(&ngram_counts(&candidate, n), &ngram_counts(&reference, n));
                (
                    ratio(matches, (candidate.len() + 1).saturating_sub(n)),
                    ratio(matches, (reference.len() + 1).saturating_sub(n)),
                )
            }
            _ => {
                if let Err(reason) = within_pair_limit(candidate.len(), reference.len(), "token") {
                    return Comparison::error(format!(
                        "rouge_score input too large: rouge-l {reason}"
                    ));
                }
                let common = lcs_length(&candidate, &reference);
                (
                    ratio(common, candidate.len()),
                    ratio(common, reference.len()),
                )
            }
        };
        let f = f_score(precision, recall, beta);
        if best.is_none_or(|(best_f, ..)| f > best_f) {
            best = Some((f, precision, recall, reference.len()));
        }
    }
    let (score, precision, recall, reference_length) = best.unwrap_or((0.0, 0.0, 0.0, 0));
    against_threshold(
        score,
        threshold,
        [
            ("variant", json!(variant)),
            ("precision", json!(precision)),
            ("recall", json!(recall)),
            ("f_score", json!(score)),
            ("candidate_length", json!(candidate.len())),
            ("reference_length", json!(reference_length)),
            ("beta", json!(beta)),
        ],
    )
}

// ---- chrf_score -----------------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ChrfConfig {
    threshold: Option<f64>,
    char_order: Option<i64>,
    beta: Option<f64>,
    case_insensitive: Option<bool>,
    normalize: Option<bool>,
}

pub(super) fn check_chrf(config: RawConfig<'_>) -> Vec<ConfigProblem> {
    check_strict::<ChrfConfig>(config, |config, problems| {
        threshold_problem(config.threshold, problems);
        if config.char_order.is_some_and(|order| order <= 0) {
            problems.add(".char_order", "must be greater than 0");
        }
        if config.beta.is_some_and(|beta| beta <= 0.0) {
            problems.add(".beta", "must be greater than 0");
        }
    })
}

/// One reference's chrF: (score, P̄, R̄, orders, per-order precisions, per-order recalls).
struct ChrfParts {
    score: f64,
    precision: f64,
    recall: f64,
    orders: usize,
    precisions: Vec<f64>,
    recalls: Vec<f64>,
    reference_length: usize,
}

fn chrf_against(candidate: &[char], reference: &[char], char_order: usize, beta: f64) -> ChrfParts {
    let orders = char_order.min(candidate.len()).min(reference.len());
    let mut parts = ChrfParts {
        score: 0.0,
        precision: 0.0,
        recall: 0.0,
        orders,
        precisions: Vec::with_capacity(orders),
        recalls: Vec::with_capacity(orders),
        reference_length: reference.len(),
    };
    if orders == 0 {
        parts.score = if candidate.is_empty() && reference.is_empty() {
            1.0
        } else {
            0.0
        };
        parts.precision = parts.score;
        parts.recall = parts.score;
        return parts;
    }
    for n in 1..=orders {
        let matches =
            clipped_overlap(&ngram_counts(candidate, n), &ngram_counts(reference, n)) as f64;
        parts
            .precisions
            .push(matches / (candidate.len() - n + 1) as f64);
        parts
            .recalls
            .push(matches / (reference.len() - n + 1) as f64);
    }
    parts.precision = parts.precisions.iter().sum::<f64>() / orders as f64;
    parts.recall = parts.recalls.iter().sum::<f64>() / orders as f64;
    parts.score = f_score(parts.precision, parts.recall, beta);
    parts
}

pub(super) fn chrf_score(config: &ChrfConfig, actual: &str, expected: &str) -> Comparison {
    let threshold = config.threshold.unwrap_or(0.3).clamp(0.0, 1.0);
    let char_order = config.char_order.filter(|order| *order > 0).unwrap_or(6) as usize;
    let beta = config.beta.unwrap_or(2.0);
    let prep = Prep {
        normalize: config.normalize.unwrap_or(false),
        case_insensitive: config.case_insensitive.unwrap_or(false),
    };
    let (candidate, references) = match prepared_sides("chrf_score", prep, actual, expected) {
        Ok(sides) => sides,
        Err(err) => return Comparison::error(err),
    };
    let chars =
        |text: &str| -> Vec<char> { text.chars().filter(|ch| !ch.is_whitespace()).collect() };
    let candidate = chars(&candidate);
    let mut best: Option<ChrfParts> = None;
    for reference in &references {
        let parts = chrf_against(&candidate, &chars(reference), char_order, beta);
        if best.as_ref().is_none_or(|best| parts.score > best.score) {
            best = Some(parts);
        }
    }
    let Some(best) = best else {
        return Comparison::error(
            "parse chrf_score references: at least one reference is required".into(),
        );
    };
    against_threshold(
        best.score,
        threshold,
        [
            ("char_order", json!(char_order)),
            ("computed_orders", json!(best.orders)),
            ("beta", json!(beta)),
            ("precision", json!(best.precision)),
            ("recall", json!(best.recall)),
            ("f_score", json!(best.score)),
            ("candidate_length", json!(candidate.len())),
            ("reference_length", json!(best.reference_length)),
            ("precisions", json!(best.precisions)),
            ("recalls", json!(best.recalls)),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluation_spec::validators::Verdict;

    #[test]
    fn rouge_l_of_one_shared_four_token_subsequence_is_two_thirds() {
        let config = RougeConfig::default();
        let outcome = rouge_score(
            &config,
            "the cat sat on the mat",
            "the cat slept on the rug",
        );
        assert!((outcome.score().unwrap_or(0.0) - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn rouge_l_over_too_many_token_pairs_is_an_error() {
        let long = "w ".repeat(10_001);
        let outcome = rouge_score(&RougeConfig::default(), &long, &"v ".repeat(10_000));
        assert_eq!(outcome.verdict(), Verdict::Error);
        assert_eq!(
            outcome.reason(),
            "rouge_score input too large: rouge-l would compare 10001 × 10000 tokens \
             (limit: 100,000,000 token pairs)"
        );
    }

    #[test]
    fn references_decode_json_arrays_only_when_they_are_string_arrays() {
        assert_eq!(
            references("bleu_score", "[oops").ok(),
            Some(vec!["[oops".into()])
        );
        assert!(references("bleu_score", "[1, 2]").is_err_and(|err| err.contains("JSON array")));
        assert!(references("bleu_score", "[]").is_err_and(|err| err.contains("at least one")));
        assert_eq!(
            references("bleu_score", "  ").ok(),
            Some(vec![String::new()])
        );
    }

    #[test]
    fn both_empty_rouge_is_zero_and_chrf_is_one() {
        assert_eq!(
            rouge_score(&RougeConfig::default(), "", "").score(),
            Some(0.0)
        );
        assert_eq!(
            chrf_score(&ChrfConfig::default(), "", "").score(),
            Some(1.0)
        );
    }
}
