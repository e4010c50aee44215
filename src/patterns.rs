//! Regular expressions compiled from inputs (a `regex` check's pattern, an evaluation spec's
//! pattern evidence): the compiled program and each lazy DFA are capped in size, so one pattern
//! cannot make compiling or matching take unbounded memory and CPU, and each distinct pattern
//! (with its flags) is compiled once per process, so a request that repeats patterns across
//! its test cases pays for each once.

use std::collections::HashMap;
use std::fmt;
use std::sync::{LazyLock, Mutex};

use regex::{Regex, RegexBuilder};

/// The largest compiled program one pattern may have, and the most memory its lazy DFA may use.
pub const MAX_COMPILED_BYTES: usize = 1 << 20;

/// The most compiled patterns the cache keeps (the first ones seen).
const MAX_CACHED: usize = 256;

/// The longest pattern text the cache keeps; longer patterns are compiled for each use.
const MAX_CACHED_PATTERN: usize = 1024;

/// How a pattern is compiled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RegexFlags {
    /// Ignore case.
    pub case_insensitive: bool,
    /// `^` and `$` also match at line boundaries.
    pub multiline: bool,
    /// `.` also matches a newline.
    pub dot_all: bool,
}

/// Why a pattern did not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternError {
    /// Not a regular expression: the compiler's reason, as it words it (over several lines).
    Syntax(String),
    /// A regular expression whose compiled form is over [`MAX_COMPILED_BYTES`].
    TooLarge,
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatternError::Syntax(reason) => f.write_str(reason),
            PatternError::TooLarge => write!(
                f,
                "the compiled pattern is larger than {} MiB (the limit for one pattern)",
                MAX_COMPILED_BYTES >> 20
            ),
        }
    }
}

type Compiled = Result<Regex, PatternError>;

static CACHE: LazyLock<Mutex<HashMap<(String, RegexFlags), Compiled>>> =
    LazyLock::new(Mutex::default);

/// `pattern` compiled with `flags` within the size limits, from the cache when it was compiled
/// before.
pub fn compile(pattern: &str, flags: RegexFlags) -> Compiled {
    let cacheable = pattern.len() <= MAX_CACHED_PATTERN;
    let key = (pattern.to_string(), flags);
    if cacheable {
        let cache = CACHE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(known) = cache.get(&key) {
            return known.clone();
        }
    }
    let compiled = build(pattern, flags);
    if cacheable {
        let mut cache = CACHE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if cache.len() < MAX_CACHED {
            cache.insert(key, compiled.clone());
        }
    }
    compiled
}

fn build(pattern: &str, flags: RegexFlags) -> Compiled {
    RegexBuilder::new(pattern)
        .case_insensitive(flags.case_insensitive)
        .multi_line(flags.multiline)
        .dot_matches_new_line(flags.dot_all)
        .size_limit(MAX_COMPILED_BYTES)
        .dfa_size_limit(MAX_COMPILED_BYTES)
        .build()
        .map_err(|err| match err {
            regex::Error::CompiledTooBig(_) => PatternError::TooLarge,
            other => PatternError::Syntax(other.to_string()),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_compile_with_their_flags_and_once() {
        let flags = RegexFlags {
            case_insensitive: true,
            ..RegexFlags::default()
        };
        let first = compile("^ab+c$", flags).unwrap();
        assert!(first.is_match("ABBC"));
        assert!(!compile("^ab+c$", RegexFlags::default())
            .unwrap()
            .is_match("ABBC"));
        let again = compile("^ab+c$", flags).unwrap();
        assert_eq!(first.as_str(), again.as_str());
        assert!(CACHE
            .lock()
            .unwrap()
            .contains_key(&("^ab+c$".to_string(), flags)));
    }

    #[test]
    fn oversized_and_invalid_patterns_say_why() {
        assert!(matches!(
            compile(r"\w{200}\w{200}", RegexFlags::default()),
            Err(PatternError::TooLarge)
        ));
        assert_eq!(
            PatternError::TooLarge.to_string(),
            "the compiled pattern is larger than 1 MiB (the limit for one pattern)"
        );
        let Err(PatternError::Syntax(reason)) = compile("(", RegexFlags::default()) else {
            panic!("a syntax error");
        };
        assert!(reason.contains("unclosed group"), "{reason}");
    }
}
