//! Python `str` semantics the reference metrics and post-process rules depend on: what
//! `str.split()`, `str.strip()` and `str.splitlines()` treat as whitespace and line ends, and
//! what the `re` module's `\w` treats as a word character.

/// Python's `str.isspace()`: Rust's `White_Space` plus the separators U+001C..U+001F.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.split()` with no arguments: runs of whitespace separate, no empty tokens.
pub fn split(text: &str) -> impl Iterator<Item = &str> {
    text.split(is_space).filter(|token| !token.is_empty())
}

/// Python's `str.rstrip()` with no arguments.
pub fn rstrip(text: &str) -> &str {
    text.trim_end_matches(is_space)
}

/// Python's `str.strip()` with no arguments.
pub fn strip(text: &str) -> &str {
    text.trim_matches(is_space)
}

/// The lines of `text` as Python's `str.splitlines()` ends them: at `\n`, `\r`, `\v`, `\f`,
/// U+001C..U+001E, U+0085, U+2028 and U+2029 (`\r\n`, one end there, is two here: the empty line
/// between them is the only difference).
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.split([
        '\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}',
        '\u{2029}',
    ])
}

/// Python `re`'s `\w` on `str` patterns: alphanumeric or underscore. Rust's `is_alphanumeric`
/// also counts the rare combining marks with the `Other_Alphabetic` property; nothing else differs.
pub fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_matches_python() {
        let text = "a\u{1c}b\u{1f}c\u{a0}d\u{3000}e\u{85}f\u{200b}g";
        assert_eq!(
            split(text).collect::<Vec<_>>(),
            ["a", "b", "c", "d", "e", "f\u{200b}g"]
        );
        assert_eq!(split("  ").count(), 0);
        assert_eq!(rstrip("x \t\u{1e}\n"), "x");
        assert_eq!(strip("\u{1c}41\u{1f}"), "41");
        assert_eq!(
            lines("a\u{1d}b\u{2028}c\r\nd").collect::<Vec<_>>(),
            ["a", "b", "c", "", "d"]
        );
    }

    #[test]
    fn word_characters() {
        assert!(is_word('é') && is_word('7') && is_word('_') && is_word('漢'));
        assert!(!is_word('-') && !is_word(' ') && !is_word('\u{301}') && !is_word('—'));
    }
}
