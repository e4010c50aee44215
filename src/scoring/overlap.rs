//! Overlap counts over token or character sequences: n-gram counts and their clipped overlap,
//! the shared-token count and token F1, the longest common subsequence, the edit distance, and
//! the F-measure. The metrics (BLEU, ROUGE, chrF, token F1) of every vocabulary are built from
//! these; each vocabulary's tokeniser decides what an item is.

use std::collections::HashMap;
use std::hash::Hash;

use crate::text::thousands;

/// Counts of every n-gram of `items` (none when `n` is 0 or longer than `items`).
pub fn ngram_counts<T: Eq + Hash>(items: &[T], n: usize) -> HashMap<&[T], usize> {
    let mut counts = HashMap::new();
    if n > 0 && items.len() >= n {
        for window in items.windows(n) {
            *counts.entry(window).or_insert(0) += 1;
        }
    }
    counts
}

/// Σ over the candidate's n-grams of min(candidate count, reference count).
pub fn clipped_overlap<T: Eq + Hash>(
    candidate: &HashMap<&[T], usize>,
    reference: &HashMap<&[T], usize>,
) -> usize {
    candidate
        .iter()
        .map(|(gram, count)| (*count).min(reference.get(gram).copied().unwrap_or(0)))
        .sum()
}

/// How many tokens the two lists share, counting repeats (the clipped unigram overlap), by
/// merging the sorted lists.
fn common_tokens(candidate: &[&str], reference: &[&str]) -> usize {
    let (mut candidate, mut reference) = (candidate.to_vec(), reference.to_vec());
    candidate.sort_unstable();
    reference.sort_unstable();
    let (mut left, mut right, mut common) = (0, 0, 0);
    while let (Some(a), Some(b)) = (candidate.get(left), reference.get(right)) {
        match a.cmp(b) {
            std::cmp::Ordering::Less => left += 1,
            std::cmp::Ordering::Greater => right += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                left += 1;
                right += 1;
            }
        }
    }
    common
}

/// Token F1 of a prediction against a reference, with its parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenF1 {
    /// The shared tokens, repeats counted.
    pub overlap: usize,
    /// Shared tokens over the prediction's tokens.
    pub precision: f64,
    /// Shared tokens over the reference's tokens.
    pub recall: f64,
    /// Their harmonic mean: 0.0 when nothing is shared, including when either side is empty
    /// (each vocabulary states its own rule for two empty sides).
    pub f1: f64,
}

/// Token F1 of `predicted` against `reference`.
pub fn token_f1(predicted: &[&str], reference: &[&str]) -> TokenF1 {
    let overlap = common_tokens(predicted, reference);
    if overlap == 0 {
        return TokenF1 {
            overlap,
            precision: 0.0,
            recall: 0.0,
            f1: 0.0,
        };
    }
    let precision = overlap as f64 / predicted.len() as f64;
    let recall = overlap as f64 / reference.len() as f64;
    TokenF1 {
        overlap,
        precision,
        recall,
        f1: f_score(precision, recall, 1.0),
    }
}

/// F-beta of a precision and a recall (0 when both are 0).
pub fn f_score(precision: f64, recall: f64, beta: f64) -> f64 {
    if precision == 0.0 && recall == 0.0 {
        return 0.0;
    }
    let beta2 = beta * beta;
    let denominator = beta2 * precision + recall;
    if denominator == 0.0 {
        0.0
    } else {
        (1.0 + beta2) * precision * recall / denominator
    }
}

/// The length of the longest common subsequence of two token lists.
pub fn lcs_length<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let mut previous = vec![0usize; b.len() + 1];
    let mut current = vec![0usize; b.len() + 1];
    for x in a {
        for (j, y) in b.iter().enumerate() {
            current[j + 1] = if x == y {
                previous[j] + 1
            } else {
                previous[j + 1].max(current[j])
            };
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The most pairs of items (chars for an edit distance, tokens for a longest common
/// subsequence) one quadratic comparison may take: the work grows with the product of the two
/// lengths.
const MAX_COMPARED_PAIRS: u64 = 100_000_000;

/// `Err` with the reason when comparing `a` by `b` items (`item` names one) is over
/// `MAX_COMPARED_PAIRS`.
pub fn within_pair_limit(a: usize, b: usize, item: &str) -> Result<(), String> {
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
/// remains is over `MAX_COMPARED_PAIRS` (`rune` names the item, as the evaluation-spec
/// reference does).
pub fn levenshtein(a: &str, b: &str) -> Result<usize, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimmed_levenshtein_matches_the_full_one() {
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
    }

    #[test]
    fn shared_tokens_count_repeats_once_per_pair() {
        assert_eq!(common_tokens(&["cat", "cat", "cat"], &["cat", "dog"]), 1);
        assert_eq!(common_tokens(&["a", "b", "b"], &["b", "b", "a"]), 3);
        assert_eq!(common_tokens(&[], &["a"]), 0);
        let f1 = token_f1(&["cat", "cat"], &["cat", "cat", "dog"]);
        assert_eq!((f1.overlap, f1.precision), (2, 1.0));
        assert!((f1.f1 - 0.8).abs() < 1e-12);
        assert_eq!(token_f1(&[], &[]).f1, 0.0);
    }

    #[test]
    fn ngrams_and_clipping() {
        let tokens = ["a", "b", "a", "b"];
        assert_eq!(ngram_counts(&tokens, 2).get(&["a", "b"][..]), Some(&2));
        assert!(ngram_counts(&tokens, 0).is_empty() && ngram_counts(&tokens, 5).is_empty());
        let reference = ["a", "b"];
        let overlap = clipped_overlap(&ngram_counts(&tokens, 1), &ngram_counts(&reference, 1));
        assert_eq!(overlap, 2);
        assert_eq!(lcs_length(&tokens, &["b", "b"]), 2);
        assert_eq!(f_score(0.0, 0.0, 1.0), 0.0);
    }
}
