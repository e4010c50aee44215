//! Text normalisers every vocabulary draws on: case folding, white-space collapsing, punctuation,
//! currency and article removal, word and line sorting, and SQuAD's `normalize_answer`.
//!
//! Where two references normalise differently, both are here under their own names: the
//! evaluation-spec reference (Go) collapses only ASCII white space and finds articles at ASCII word
//! boundaries ([`collapse_whitespace`], [`remove_articles`]); SQuAD (Python) splits on Python's
//! white space and finds articles in `\w` runs ([`squad_normalize`]).

use unicode_general_category::{get_general_category, GeneralCategory};

use super::pytext;

/// The currency tokens [`strip_currency`] removes.
const CURRENCY_TOKENS: &[&str] = &["$", "€", "£", "¥", "₹", "USD", "EUR", "GBP", "JPY", "INR"];

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
pub fn strip_currency(text: &str) -> String {
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
pub fn collapse_whitespace(text: &str) -> String {
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
pub fn case_fold(text: &str) -> String {
    if text.is_ascii() {
        // Folding changes only A-Z among ASCII characters.
        text.to_ascii_lowercase()
    } else {
        caseless::default_case_fold_str(text)
    }
}

/// `trim_and_collapse` (trim, then [`collapse_whitespace`]) then `fold` ([`case_fold`]).
pub fn prepare(text: &str, trim_and_collapse: bool, fold: bool) -> String {
    let text = if trim_and_collapse {
        collapse_whitespace(text.trim())
    } else {
        text.to_string()
    };
    if fold {
        case_fold(&text)
    } else {
        text
    }
}

/// Whether `ch` is Unicode punctuation (P*) or a symbol (S*).
pub fn is_punctuation_or_symbol(ch: char) -> bool {
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
pub fn remove_articles(text: &str) -> String {
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
pub fn without_chars(text: &str, drop: impl Fn(char) -> bool) -> String {
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

/// The words (split on Unicode white space) sorted and joined with one space.
pub fn sort_words(text: &str) -> String {
    let mut words: Vec<&str> = text.split_whitespace().collect();
    words.sort_unstable();
    words.join(" ")
}

/// The lines (CRLF read as LF) sorted and joined with LF.
pub fn sort_lines(text: &str) -> String {
    let unified = text.replace("\r\n", "\n");
    let mut lines: Vec<&str> = unified.split('\n').collect();
    lines.sort_unstable();
    lines.join("\n")
}

/// SQuAD's `normalize_answer`: lowercase, remove `string.punctuation`, replace each standalone
/// `a`/`an`/`the` (a whole `\w` run) with a space, collapse whitespace.
pub fn squad_normalize(text: &str) -> String {
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
    fn ascii_folding_matches_the_full_one() {
        for text in [
            "ßtraße",
            "strasse",
            "é",
            "e\u{301}",
            "日本語",
            "Ǆ Ⅻ ﬃ",
            "ABC xyz",
        ] {
            assert_eq!(
                case_fold(text),
                caseless::default_case_fold_str(text),
                "{text}"
            );
        }
        let ascii: String = (0u8..128).map(char::from).collect();
        assert_eq!(case_fold(&ascii), caseless::default_case_fold_str(&ascii));
    }

    #[test]
    fn squad_normalisation() {
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
}
