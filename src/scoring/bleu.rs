//! Sentence BLEU exactly as sacrebleu's `sentence_bleu(hypothesis, [reference])` with its defaults:
//! the `13a` tokeniser, no lowercasing, `exp` smoothing, effective order, n-grams up to 4 — divided
//! by 100 so the score lies in [0, 1].

use super::overlap::{clipped_overlap, ngram_counts};
use super::pytext;

const MAX_ORDER: usize = 4;

/// sacrebleu's `13a` tokeniser (mteval-v13a), applied as `sentence_bleu` applies it: to the text
/// with trailing whitespace removed. Returns the tokens.
fn tokenize_13a(text: &str) -> Vec<String> {
    let mut line = pytext::rstrip(text)
        .replace("<skipped>", "")
        .replace("-\n", "")
        .replace('\n', " ");
    if line.contains('&') {
        line = line
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">");
    }
    let mut chars: Vec<char> = Vec::with_capacity(line.len() + 2);
    chars.push(' ');
    chars.extend(line.chars());
    chars.push(' ');

    // ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> " \1 ": ASCII symbols other than ' , - .
    let mut spaced = Vec::with_capacity(chars.len() * 2);
    for c in chars {
        if is_13a_symbol(c) {
            spaced.extend([' ', c, ' ']);
        } else {
            spaced.push(c);
        }
    }
    // ([^0-9])([\.,]) -> "\1 \2 ": period and comma unless preceded by a digit.
    let spaced = substitute_pairs(
        &spaced,
        |a, b| !is_digit(a) && is_period_or_comma(b),
        |a, b| vec![a, ' ', b, ' '],
    );
    // ([\.,])([^0-9]) -> " \1 \2": period and comma unless followed by a digit.
    let spaced = substitute_pairs(
        &spaced,
        |a, b| is_period_or_comma(a) && !is_digit(b),
        |a, b| vec![' ', a, ' ', b],
    );
    // ([0-9])(-) -> "\1 \2 ": a dash preceded by a digit.
    let spaced = substitute_pairs(
        &spaced,
        |a, b| is_digit(a) && b == '-',
        |a, b| vec![a, ' ', b, ' '],
    );
    let spaced: String = spaced.into_iter().collect();
    pytext::split(&spaced).map(str::to_string).collect()
}

fn is_13a_symbol(c: char) -> bool {
    matches!(c, '{'..='~' | '['..='`' | ' '..='&' | '('..='+' | ':'..='@' | '/')
}

fn is_digit(c: char) -> bool {
    c.is_ascii_digit()
}

fn is_period_or_comma(c: char) -> bool {
    c == '.' || c == ','
}

/// Python's `re.sub` for a two-character pattern: scan left to right, replace each
/// non-overlapping matching pair, resume after it.
fn substitute_pairs(
    chars: &[char],
    matches: impl Fn(char, char) -> bool,
    replace: impl Fn(char, char) -> Vec<char>,
) -> Vec<char> {
    let mut out = Vec::with_capacity(chars.len() + chars.len() / 2);
    let mut i = 0;
    while i < chars.len() {
        match chars.get(i + 1) {
            Some(&next) if matches(chars[i], next) => {
                out.extend(replace(chars[i], next));
                i += 2;
            }
            _ => {
                out.push(chars[i]);
                i += 1;
            }
        }
    }
    out
}

/// sacrebleu `sentence_bleu(output, [reference]).score / 100`: 13a tokens, clipped n-gram
/// precisions for n = 1..=4 with `exp` smoothing for orders without a match, the geometric mean
/// over the orders the output is long enough for, times the brevity penalty. 0.0 when no unigram
/// matches (including an empty output). Clamped to [0, 1]: the floating-point geometric mean of
/// perfect precisions can come out a few ulps above 1 (sacrebleu itself reports
/// 100.00000000000004 for identical sentences).
pub fn bleu_4(output: &str, reference: &str) -> f64 {
    let hypothesis = tokenize_13a(output);
    let reference = tokenize_13a(reference);
    let mut correct = [0usize; MAX_ORDER];
    let mut total = [0usize; MAX_ORDER];
    for order in 0..MAX_ORDER {
        let n = order + 1;
        total[order] = (hypothesis.len() + 1).saturating_sub(n);
        correct[order] =
            clipped_overlap(&ngram_counts(&hypothesis, n), &ngram_counts(&reference, n));
    }
    if correct.iter().all(|&c| c == 0) {
        return 0.0;
    }
    let (sys_len, ref_len) = (hypothesis.len(), reference.len());
    let brevity_penalty = if sys_len < ref_len {
        (1.0 - ref_len as f64 / sys_len as f64).exp()
    } else {
        1.0
    };
    let mut smooth = 1.0;
    let mut log_sum = 0.0;
    let mut effective_order = 0;
    for order in 0..MAX_ORDER {
        if total[order] == 0 {
            break;
        }
        effective_order = order + 1;
        let precision = if correct[order] == 0 {
            smooth *= 2.0;
            100.0 / (smooth * total[order] as f64)
        } else {
            100.0 * correct[order] as f64 / total[order] as f64
        };
        log_sum += f64::ln(precision);
    }
    (brevity_penalty * (log_sum / effective_order as f64).exp() / 100.0).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::{assert_scores, close};

    #[test]
    fn tokenizer_matches_13a() {
        assert_eq!(
            tokenize_13a("Hello, world! It's 3.14 -- (ok)."),
            ["Hello", ",", "world", "!", "It's", "3.14", "--", "(", "ok", ")", "."]
        );
        assert_eq!(
            tokenize_13a("1,000 5-3 a-b x.. &amp; &lt;b&gt;"),
            ["1,000", "5", "-", "3", "a-b", "x", ".", ".", "&", "<", "b", ">"]
        );
        assert_eq!(
            tokenize_13a("line-\nbreak <skipped>\nnext  "),
            ["linebreak", "next"]
        );
        assert_eq!(tokenize_13a("Café «ok» 東京。"), ["Café", "«ok»", "東京。"]);
        assert!(tokenize_13a(" \t").is_empty());
    }

    #[test]
    fn identical_sentences_score_one_never_more() {
        for text in [
            "the cat sat on the mat",
            "x",
            "The cat sat on the mat.",
            "abc",
            "東京は日本の首都です。",
            "Tom &amp; Jerry &lt;3 &quot;cartoon&quot;",
        ] {
            let score = bleu_4(text, text);
            assert!(close(score, 1.0), "{text:?}: {score}");
            assert!(score <= 1.0, "{text:?}: {score}");
        }
    }

    #[test]
    fn empty_and_no_overlap_score_zero() {
        let pairs = [
            ("", ""),
            ("", "a b"),
            ("a b", ""),
            ("red fox", "blue whale"),
        ];
        assert_scores(bleu_4, &pairs, 0.0);
    }

    #[test]
    fn smoothing_and_effective_order() {
        // Two tokens, one unigram match, no bigram match: p1 = 50, p2 = 100 / (2 * 1).
        let expected = ((50f64.ln() + 50f64.ln()) / 2.0).exp() / 100.0;
        assert!(close(bleu_4("cat dog", "cat fish"), expected));
        // Brevity penalty: 1 token against 3.
        let expected = (1.0 - 3.0f64).exp() * 1.0;
        assert!(close(bleu_4("cat", "cat sat down"), expected));
    }

    #[test]
    fn repeated_tokens_are_clipped() {
        // "the the the the" vs "the cat": unigram 1/4 correct, bigrams 0/3, trigrams 0/2, 4-grams 0/1.
        let logs = [25f64, 100.0 / 6.0, 100.0 / 8.0, 100.0 / 8.0];
        let expected = (logs.iter().map(|p| p.ln()).sum::<f64>() / 4.0).exp() / 100.0;
        assert!(close(bleu_4("the the the the", "the cat"), expected));
    }

    #[test]
    fn unicode_tokens() {
        assert!(close(bleu_4("Grüße aus Köln", "Grüße aus Köln"), 1.0));
        assert!(bleu_4("Grüße aus Köln", "Grüße aus Bonn") < 1.0);
    }
}
