//! The scoring core under the three vocabularies (FEP checks in `checks`, evaluation-spec
//! validators in `evaluation_spec::validators`, task metrics in `tasks`): pure functions, free of
//! I/O, that each vocabulary names, configures and words as its reference does.
//!
//! - [`normalize`]: case folding, white space, punctuation, currency, articles, sorting, SQuAD's
//!   answer normalisation; `pytext`: Python's `str` semantics the Python references rely on.
//! - [`matching`]: exact and substring matching under a case rule.
//! - [`overlap`]: n-gram counts, clipped overlap, token F1, LCS, edit distance, F-measure.
//! - [`json`]: deep JSON equality under a number rule, JSON Schema validators.
//! - [`Outcome`]: what scoring one output found (a score, the verdict where the rule gives one,
//!   the vocabulary's detail), the one result every vocabulary maps to its reference's shape.
//! - The task metrics below: exact match, SQuAD v1.1 token F1, sentence BLEU (sacrebleu's
//!   `sentence_bleu` defaults) and ROUGE-L (rouge-score's `rougeL`). Each takes the model output
//!   first and one reference second, returns a score in [0, 1], and is pinned to its reference
//!   implementation (a committed golden file checks agreement to 1e-9).
//!
//! Where two references define a concept differently, the core offers both under their own names
//! (two white-space rules, two article rules, two BLEUs); it imports no vocabulary.

mod bleu;
mod f1;
pub mod json;
pub mod matching;
pub mod normalize;
mod outcome;
pub mod overlap;
pub(crate) mod pytext;
mod rouge;

pub use bleu::bleu_4;
pub use f1::squad_f1;
pub use outcome::Outcome;
pub use rouge::rouge_l;

/// 1.0 when `output` and `reference` are the same string, else 0.0. No normalisation.
pub fn exact_match(output: &str, reference: &str) -> f64 {
    if matching::exact(output, reference, matching::Case::Sensitive) {
        1.0
    } else {
        0.0
    }
}

/// The best score of `metric` over `references` (0.0 when there are none).
pub fn max_over<S: AsRef<str>>(
    metric: impl Fn(&str, &str) -> f64,
    output: &str,
    references: &[S],
) -> f64 {
    references
        .iter()
        .map(|reference| metric(output, reference.as_ref()))
        .fold(0.0, f64::max)
}

/// Scores within 1e-12 of each other, as the metrics' unit tests compare them.
#[cfg(test)]
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// Asserts that `metric` scores each `(output, reference)` pair exactly `expected`.
#[cfg(test)]
fn assert_scores(metric: impl Fn(&str, &str) -> f64, pairs: &[(&str, &str)], expected: f64) {
    for (output, reference) in pairs {
        assert_eq!(
            metric(output, reference),
            expected,
            "{output:?} vs {reference:?}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_match_is_plain_equality() {
        assert_scores(exact_match, &[("41", "41"), ("", "")], 1.0);
        assert_scores(exact_match, &[("41 ", "41"), ("Ä", "ä")], 0.0);
    }

    #[test]
    fn max_over_takes_the_best_reference() {
        assert_eq!(max_over(exact_match, "b", &["a", "b"]), 1.0);
        assert_eq!(max_over(exact_match, "c", &["a", "b"]), 0.0);
        assert_eq!(max_over(exact_match, "c", &[] as &[&str]), 0.0);
        let best = max_over(squad_f1, "the cat sat", &["a dog", "cat sat down"]);
        assert!((best - 0.8).abs() < 1e-12, "{best}");
    }
}
