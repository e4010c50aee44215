//! Exact and substring matching of texts, with the case rule a vocabulary asks for. Regular
//! expressions are compiled (once per process, size-bounded, linear-time) by
//! `crate::patterns`; matching one is the `regex` crate's `is_match`.

use std::borrow::Cow;

/// How letter case counts when texts are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// Case counts: the texts are compared as they are.
    Sensitive,
    /// Both sides are lowercased with Unicode's full lowercase mapping (`str::to_lowercase`).
    Lowercased,
}

impl Case {
    /// `text` as this rule compares it.
    #[inline]
    fn apply(self, text: &str) -> Cow<'_, str> {
        match self {
            Case::Sensitive => Cow::Borrowed(text),
            Case::Lowercased => Cow::Owned(text.to_lowercase()),
        }
    }
}

/// Whether the two texts are equal under `case`.
#[inline]
pub fn exact(actual: &str, expected: &str, case: Case) -> bool {
    case.apply(actual) == case.apply(expected)
}

/// How many of the phrases a text must contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Every phrase.
    All,
    /// At least one phrase.
    Any,
}

/// Whether `text` contains the phrases `need` asks for, under `case` (the text is lowercased
/// once, each phrase once).
#[inline]
pub fn contains(text: &str, phrases: &[&str], case: Case, need: Need) -> bool {
    let haystack = case.apply(text);
    let present = |phrase: &&str| haystack.contains(case.apply(phrase).as_ref());
    match need {
        Need::All => phrases.iter().all(present),
        Need::Any => phrases.iter().any(present),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_rules() {
        assert!(exact("Straße", "straße", Case::Lowercased));
        assert!(!exact("Straße", "straße", Case::Sensitive));
        assert!(contains(
            "A Cat",
            &["cat", "a"],
            Case::Lowercased,
            Need::All
        ));
        assert!(!contains(
            "A Cat",
            &["cat", "a"],
            Case::Sensitive,
            Need::All
        ));
        assert!(contains(
            "A Cat",
            &["dog", "Cat"],
            Case::Sensitive,
            Need::Any
        ));
    }
}
