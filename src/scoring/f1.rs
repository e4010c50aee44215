//! SQuAD v1.1 token F1 (the official `evaluate-v1.1.py`): lowercase, drop ASCII punctuation, drop
//! the articles a/an/the, split on whitespace, and compare the token multisets.

use super::normalize::squad_normalize;
use super::overlap::token_f1;
use super::pytext;

/// SQuAD v1.1 token F1 of `output` against `reference`, in [0, 1]. As in v1.1 (unlike v2.0), no
/// shared token means 0.0 — even when both sides normalise to nothing.
pub fn squad_f1(output: &str, reference: &str) -> f64 {
    let output = squad_normalize(output);
    let reference = squad_normalize(reference);
    let output_tokens: Vec<&str> = pytext::split(&output).collect();
    let reference_tokens: Vec<&str> = pytext::split(&reference).collect();
    token_f1(&output_tokens, &reference_tokens).f1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::{assert_scores, close};

    #[test]
    fn empty_strings_score_zero() {
        assert_scores(
            squad_f1,
            &[("", ""), ("the", "a"), ("", "cat"), ("cat", "")],
            0.0,
        );
    }

    #[test]
    fn no_overlap_and_identity() {
        assert_eq!(squad_f1("red fox", "blue whale"), 0.0);
        assert_eq!(squad_f1("Red fox.", "red FOX"), 1.0);
    }

    #[test]
    fn repeated_tokens_count_as_a_multiset() {
        // output: cat cat cat (3), reference: cat dog (2); overlap 1.
        let f1 = squad_f1("cat cat cat", "cat dog");
        assert!(
            close(f1, 2.0 * (1.0 / 3.0) * 0.5 / (1.0 / 3.0 + 0.5)),
            "{f1}"
        );
        assert!(close(squad_f1("cat cat", "cat cat dog"), 0.8));
    }

    #[test]
    fn unicode_tokens() {
        assert!(close(squad_f1("café crème", "Café noir"), 0.5));
        assert_eq!(squad_f1("東京", "東京"), 1.0);
    }
}
