//! Python `str` semantics the reference metrics depend on: what `str.split()` and `str.rstrip()`
//! treat as whitespace, and what the `re` module's `\w` treats as a word character.

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
    }

    #[test]
    fn word_characters() {
        assert!(is_word('é') && is_word('7') && is_word('_') && is_word('漢'));
        assert!(!is_word('-') && !is_word(' ') && !is_word('\u{301}') && !is_word('—'));
    }
}
