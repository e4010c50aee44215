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

/// Positions of `a` [`lcs_length`] takes at a time: its match masks hold a word per 64 of them
/// for each distinct token among them, whatever the vocabulary of the whole list.
const LCS_CHUNK: usize = 64 * 64;

/// The length of the longest common subsequence of two token lists, bit-parallel (Allison and
/// Dix; Hyyrö): a bit per position of `a`, 64 positions a machine word, so |a| × |b| / 64 word
/// steps rather than |a| × |b| (a pair of 100,000-token texts in a moment, not minutes). `a` is
/// taken [`LCS_CHUNK`] positions at a time, lowest first, each chunk over the whole of `b`,
/// with the carry of each step's addition handed on to the next chunk.
pub fn lcs_length<T: Eq + Hash>(a: &[T], b: &[T]) -> usize {
    // The carry into the chunk at each step of `b` (from the chunk below it).
    let mut carries = vec![false; b.len()];
    let mut unmatched_bits = 0;
    for chunk in a.chunks(LCS_CHUNK) {
        let words = chunk.len().div_ceil(64);
        let mut masks: HashMap<&T, Vec<u64>> = HashMap::new();
        for (at, token) in chunk.iter().enumerate() {
            masks.entry(token).or_insert_with(|| vec![0; words])[at / 64] |= 1 << (at % 64);
        }
        // A 1 bit is a position of `a` not yet in the common subsequence.
        let mut v = vec![u64::MAX; words];
        for (token, carry_in) in b.iter().zip(carries.iter_mut()) {
            let matches = masks.get(token);
            let mut carry = *carry_in;
            for (word, v) in v.iter_mut().enumerate() {
                let u = matches.map_or(0, |mask| *v & mask[word]);
                let (sum, first) = v.overflowing_add(u);
                let (sum, second) = sum.overflowing_add(u64::from(carry));
                carry = first || second;
                *v = sum | (*v & !u);
            }
            *carry_in = carry;
        }
        let (full, rest) = (chunk.len() / 64, chunk.len() % 64);
        unmatched_bits += v[..full]
            .iter()
            .map(|word| word.count_zeros() as usize)
            .sum::<usize>();
        if rest > 0 {
            unmatched_bits += (!v[full] & ((1u64 << rest) - 1)).count_ones() as usize;
        }
    }
    unmatched_bits
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

    /// The longest common subsequence by dynamic programming, |a| × |b| steps.
    fn lcs_by_table(a: &[u8], b: &[u8]) -> usize {
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

    #[test]
    fn the_bit_parallel_lcs_is_the_tables_across_words_and_chunks() {
        let mut seed = 7u64;
        let mut next = |below: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % below
        };
        // Lengths around a word (64) and a chunk (4,096), alphabets from 2 to 40 tokens.
        for (a_len, b_len, alphabet) in [
            (0, 5, 2),
            (1, 1, 2),
            (63, 65, 2),
            (64, 64, 3),
            (129, 200, 4),
            (4095, 70, 6),
            (4096, 90, 3),
            (4097, 130, 2),
            (9000, 40, 40),
            (300, 300, 26),
        ] {
            let a: Vec<u8> = (0..a_len).map(|_| next(alphabet) as u8).collect();
            let b: Vec<u8> = (0..b_len).map(|_| next(alphabet) as u8).collect();
            assert_eq!(
                lcs_length(&a, &b),
                lcs_by_table(&a, &b),
                "{a_len} × {b_len}"
            );
            assert_eq!(
                lcs_length(&b, &a),
                lcs_by_table(&a, &b),
                "{b_len} × {a_len}"
            );
        }
    }
}
