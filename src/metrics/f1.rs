//! SQuAD v1.1 token F1 (the official `evaluate-v1.1.py`): lowercase, drop ASCII punctuation, drop
//! the articles a/an/the, split on whitespace, and compare the token multisets.

use std::collections::HashMap;

use super::pytext;

/// SQuAD's `normalize_answer`: lowercase, remove `string.punctuation`, replace each standalone
/// `a`/`an`/`the` (a whole `\w` run) with a space, collapse whitespace.
fn squad_normalize(text: &str) -> String {
    let lowered: String = text
        .to_lowercase()
        .chars()
        .filter(|c| !c.is_ascii_punctuation())
        .collect();
    let mut without_articles = String::with_capacity(lowered.len());
    let mut rest = lowered.as_str();
    while let Some(first) = rest.chars().next() {
        let word = pytext::is_word(first);
        let end = rest
            .find(|c: char| pytext::is_word(c) != word)
            .unwrap_or(rest.len());
        let run = &rest[..end];
        if word && matches!(run, "a" | "an" | "the") {
            without_articles.push(' ');
        } else {
            without_articles.push_str(run);
        }
        rest = &rest[end..];
    }
    pytext::split(&without_articles)
        .collect::<Vec<_>>()
        .join(" ")
}

/// SQuAD v1.1 token F1 of `output` against `reference`, in [0, 1]. As in v1.1 (unlike v2.0), no
/// shared token means 0.0 — even when both sides normalise to nothing.
pub fn squad_f1(output: &str, reference: &str) -> f64 {
    let output = squad_normalize(output);
    let reference = squad_normalize(reference);
    let output_tokens: Vec<&str> = pytext::split(&output).collect();
    let reference_tokens: Vec<&str> = pytext::split(&reference).collect();
    let mut reference_counts: HashMap<&str, usize> = HashMap::new();
    for token in &reference_tokens {
        *reference_counts.entry(token).or_default() += 1;
    }
    let mut same = 0usize;
    for token in &output_tokens {
        if let Some(count) = reference_counts.get_mut(token) {
            if *count > 0 {
                *count -= 1;
                same += 1;
            }
        }
    }
    if same == 0 {
        return 0.0;
    }
    let precision = same as f64 / output_tokens.len() as f64;
    let recall = same as f64 / reference_tokens.len() as f64;
    (2.0 * precision * recall) / (precision + recall)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{assert_scores, close};

    #[test]
    fn normalisation_follows_squad() {
        assert_eq!(
            squad_normalize("The Cat, an apple & A dog!"),
            "cat apple dog"
        );
        assert_eq!(
            squad_normalize("theater another a1 _a_"),
            "theater another a1"
        );
        assert_eq!(squad_normalize("Ελληνικά ΟΔΟΣ"), "ελληνικά οδος");
        assert_eq!(squad_normalize("the—cat"), "—cat");
        assert_eq!(squad_normalize("   "), "");
    }

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
