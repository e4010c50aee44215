//! ROUGE-L exactly as rouge-score's `RougeScorer(["rougeL"]).score(reference, output)` F-measure
//! with the default tokeniser and no stemmer.

use super::overlap::{f_score, lcs_length};

/// rouge-score's default tokeniser: lowercase, then every maximal run of `[a-z0-9]` is a token;
/// everything else (including non-ASCII letters) separates tokens.
fn rouge_tokenize(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|token| !token.is_empty())
        .map(str::to_string)
        .collect()
}

/// ROUGE-L F-measure of `output` against `reference`, in [0, 1]: LCS over the tokens, precision
/// against the output, recall against the reference. 0.0 when either side has no token.
pub fn rouge_l(output: &str, reference: &str) -> f64 {
    let output = rouge_tokenize(output);
    let reference = rouge_tokenize(reference);
    if output.is_empty() || reference.is_empty() {
        return 0.0;
    }
    let lcs = lcs_length(&reference, &output) as f64;
    f_score(lcs / output.len() as f64, lcs / reference.len() as f64, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::{assert_scores, close};

    #[test]
    fn tokenizer_keeps_ascii_alphanumerics_only() {
        assert_eq!(
            rouge_tokenize("The Café's 2nd-best—crème!"),
            ["the", "caf", "s", "2nd", "best", "cr", "me"]
        );
        assert_eq!(
            rouge_tokenize("İstanbul KELVIN"),
            ["i", "stanbul", "kelvin"]
        );
        assert!(rouge_tokenize("東京 …").is_empty());
    }

    #[test]
    fn empty_and_no_overlap_score_zero() {
        let pairs = [
            ("", ""),
            ("", "a"),
            ("a", ""),
            ("東京", "東京"),
            ("red fox", "blue whale"),
        ];
        assert_scores(rouge_l, &pairs, 0.0);
    }

    #[test]
    fn lcs_is_order_sensitive() {
        assert!(close(rouge_l("A B C D", "a b c d"), 1.0));
        // LCS of "a b c d" and "d c b a" is 1.
        assert!(close(rouge_l("a b c d", "d c b a"), 0.25));
        // LCS("police killed the gunman", "the gunman police killed") = 2.
        assert!(close(
            rouge_l("police killed the gunman", "the gunman police killed"),
            0.5
        ));
    }

    #[test]
    fn repeated_tokens() {
        // output a a a (3) vs reference a b (2): LCS 1, P 1/3, R 1/2.
        let expected = 2.0 * (1.0 / 3.0) * 0.5 / (1.0 / 3.0 + 0.5);
        assert!(close(rouge_l("a a a", "a b"), expected));
    }
}
