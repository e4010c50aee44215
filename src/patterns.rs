//! Regular expressions compiled from inputs (a `regex` check's pattern, an evaluation spec's
//! pattern evidence): the compiled program and each lazy DFA are capped in size, so one pattern
//! cannot make compiling or matching take unbounded memory and CPU; the distinct patterns one
//! document (a request, a checks file) compiles are capped in size together, and say what memory
//! they may take while it is evaluated, so many patterns cannot either; and each distinct pattern
//! (with its flags) is compiled once per process while the cache has room, so a request that
//! repeats patterns across its test cases pays for each once.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, LazyLock, Mutex};

use regex_automata::meta;
use regex_automata::util::syntax;

/// The largest compiled program one pattern may have, and the most memory its lazy DFA may use.
pub const MAX_COMPILED_BYTES: usize = 1 << 20;

/// The most memory the distinct patterns of one document may compile to together.
pub const MAX_DOCUMENT_COMPILED_BYTES: u64 = 64 << 20;

/// The memory a compiled pattern takes besides what it reports (its pattern, its engines' and
/// their caches' fixed parts): 200 literal patterns took 6 KB each.
const PATTERN_OVERHEAD: u64 = 8 << 10;

/// The most compiled patterns the cache keeps (the first ones seen while it has room).
const MAX_CACHED: usize = 256;

/// The most memory the patterns the cache keeps may have compiled to.
const MAX_CACHED_BYTES: u64 = 32 << 20;

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
    /// A pattern that takes the document's patterns over [`MAX_DOCUMENT_COMPILED_BYTES`].
    TooMuchInAll,
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
            PatternError::TooMuchInAll => write!(
                f,
                "the patterns of this request or file compile to more than {} MiB in all (the \
                 limit for one document's patterns)",
                MAX_DOCUMENT_COMPILED_BYTES >> 20
            ),
        }
    }
}

/// A regular expression compiled from an input, with its text. Clones share the compiled form.
#[derive(Debug, Clone)]
pub struct Pattern {
    regex: meta::Regex,
    text: Arc<str>,
}

impl Pattern {
    /// Whether the pattern matches somewhere in `haystack`.
    pub fn is_match(&self, haystack: &str) -> bool {
        self.regex.is_match(haystack)
    }

    /// The pattern as it was given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The memory its compiled form takes.
    fn compiled_bytes(&self) -> u64 {
        PATTERN_OVERHEAD + self.regex.memory_usage() as u64
    }

    /// The memory it may take once used: its compiled form, and the room its lazy DFA grows
    /// into, which grows with the program it runs (searching 14 KB with a program of 1 MB
    /// added 0.55 MB) up to [`MAX_COMPILED_BYTES`].
    fn used_bytes(&self) -> u64 {
        let program = self.regex.memory_usage() as u64;
        self.compiled_bytes() + program.min(MAX_COMPILED_BYTES as u64)
    }
}

type Compiled = Result<Pattern, PatternError>;

/// The process's compiled patterns, and the memory they take.
#[derive(Default)]
struct Cache {
    patterns: HashMap<(String, RegexFlags), Compiled>,
    bytes: u64,
}

static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(Mutex::default);

/// `pattern` compiled with `flags` within the size limits, from the cache when it was compiled
/// before.
pub fn compile(pattern: &str, flags: RegexFlags) -> Compiled {
    let cacheable = pattern.len() <= MAX_CACHED_PATTERN;
    let key = (pattern.to_string(), flags);
    if cacheable {
        let cache = CACHE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(known) = cache.patterns.get(&key) {
            return known.clone();
        }
    }
    let compiled = build(pattern, flags);
    if cacheable {
        let mut cache = CACHE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let bytes = compiled.as_ref().map_or(0, Pattern::compiled_bytes);
        if cache.patterns.len() < MAX_CACHED && cache.bytes + bytes <= MAX_CACHED_BYTES {
            cache.bytes += bytes;
            cache.patterns.insert(key, compiled.clone());
        }
    }
    compiled
}

fn build(pattern: &str, flags: RegexFlags) -> Compiled {
    // As the `regex` crate builds a `Regex`, with its size limits set.
    let config = meta::Config::new()
        .match_kind(regex_automata::MatchKind::LeftmostFirst)
        .utf8_empty(true)
        .nfa_size_limit(Some(MAX_COMPILED_BYTES))
        .hybrid_cache_capacity(MAX_COMPILED_BYTES);
    let syntax = syntax::Config::new()
        .utf8(true)
        .case_insensitive(flags.case_insensitive)
        .multi_line(flags.multiline)
        .dot_matches_new_line(flags.dot_all);
    meta::Builder::new()
        .configure(config)
        .syntax(syntax)
        .build(pattern)
        .map(|regex| Pattern {
            regex,
            text: Arc::from(pattern),
        })
        .map_err(|err| {
            if err.size_limit().is_some() {
                PatternError::TooLarge
            } else if let Some(syntax) = err.syntax_error() {
                PatternError::Syntax(syntax.to_string())
            } else {
                PatternError::Syntax(err.to_string())
            }
        })
}

/// What holds the memory a document's patterns take as they are compiled (a `serve` request's
/// share of `--max-memory`), so that it is held before each pattern is compiled, not after.
pub trait PatternMemory: Send + Sync {
    /// Hold `bytes` more; false when they cannot be held (the holder keeps why).
    fn hold(&self, bytes: u64) -> bool;
    /// Give back `bytes` of what was held.
    fn release(&self, bytes: u64);
}

/// The distinct patterns one document (a request, a checks file) compiled before it is
/// evaluated, counted together however many threads prepare its checks (clones share the
/// count): capped in size, and the memory they may take while it is evaluated, held as they
/// are compiled when the document has a [`PatternMemory`].
#[derive(Clone, Default)]
pub struct DocumentPatterns {
    count: Arc<Mutex<PatternCount>>,
    memory: Option<Arc<dyn PatternMemory>>,
}

impl fmt::Debug for DocumentPatterns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DocumentPatterns")
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct PatternCount {
    seen: HashSet<(String, RegexFlags)>,
    compiled: u64,
    used: u64,
    /// A pattern did not fit: no new one is compiled.
    full: bool,
}

/// The most memory one pattern may take once used (see [`Pattern::used_bytes`]): held before
/// it is compiled, the rest given back once its size is known.
const MOST_ONE_PATTERN_USES: u64 = PATTERN_OVERHEAD + 2 * MAX_COMPILED_BYTES as u64;

impl DocumentPatterns {
    /// The patterns of a document whose memory `memory` holds as they are compiled.
    pub fn held_by(memory: Arc<dyn PatternMemory>) -> DocumentPatterns {
        DocumentPatterns {
            count: Arc::default(),
            memory: Some(memory),
        }
    }

    /// `pattern` compiled with `flags` for the document, counted once however often the
    /// document gives it: [`PatternError::TooMuchInAll`] when it takes the document's patterns
    /// over [`MAX_DOCUMENT_COMPILED_BYTES`] or past what its memory holder can hold.
    pub fn compile(&self, pattern: &str, flags: RegexFlags) -> Compiled {
        let key = (pattern.to_string(), flags);
        let known = {
            let count = self.count();
            if count.full && !count.seen.contains(&key) {
                // Once the document's patterns are at the limit, a new one is not compiled at
                // all: a request of many large patterns costs the compiling of 64 MiB, not of
                // each.
                return Err(PatternError::TooMuchInAll);
            }
            count.seen.contains(&key)
        };
        let Some(memory) = self.memory.as_ref().filter(|_| !known) else {
            return self
                .count_in(&key, compile(pattern, flags))
                .map(|(pattern, _)| pattern);
        };
        let refused = || {
            self.count().full = true;
            Err(PatternError::TooMuchInAll)
        };
        if !memory.hold(MOST_ONE_PATTERN_USES) {
            return refused();
        }
        let mut held = MOST_ONE_PATTERN_USES;
        let compiled = compile(pattern, flags);
        // A program with its other engines may take a little more than it was given.
        let used = compiled.as_ref().map_or(0, Pattern::used_bytes);
        if used > held {
            if !memory.hold(used - held) {
                memory.release(held);
                return refused();
            }
            held = used;
        }
        let kept = self.count_in(&key, compiled);
        let kept_bytes = match &kept {
            Ok((_, true)) => used,
            _ => 0,
        };
        memory.release(held - kept_bytes);
        kept.map(|(pattern, _)| pattern)
    }

    /// Count `compiled`, the pattern of `key`, once: with whether it is new to the document.
    fn count_in(
        &self,
        key: &(String, RegexFlags),
        compiled: Compiled,
    ) -> Result<(Pattern, bool), PatternError> {
        let compiled = compiled?;
        let mut count = self.count();
        if count.seen.contains(key) {
            return Ok((compiled, false));
        }
        // One the document may not hold is not held: it counts nothing.
        if count.compiled + compiled.compiled_bytes() > MAX_DOCUMENT_COMPILED_BYTES {
            count.full = true;
            return Err(PatternError::TooMuchInAll);
        }
        count.compiled += compiled.compiled_bytes();
        count.used += compiled.used_bytes();
        count.seen.insert(key.clone());
        Ok((compiled, true))
    }

    fn count(&self) -> std::sync::MutexGuard<'_, PatternCount> {
        self.count
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
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
            .patterns
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

    /// A memory holder of `limit` bytes that counts what it holds.
    #[derive(Default)]
    struct Counted {
        limit: u64,
        held: Mutex<u64>,
    }

    impl PatternMemory for Counted {
        fn hold(&self, bytes: u64) -> bool {
            let mut held = self.held.lock().unwrap();
            let fits = *held + bytes <= self.limit;
            if fits {
                *held += bytes;
            }
            fits
        }

        fn release(&self, bytes: u64) {
            *self.held.lock().unwrap() -= bytes;
        }
    }

    fn held(memory: &Counted) -> u64 {
        *memory.held.lock().unwrap()
    }

    /// A pattern that compiles to most of the limit for one pattern.
    fn heavy(n: usize) -> String {
        format!(r"\w{{19}}q{n}")
    }

    #[test]
    fn a_documents_patterns_are_capped_together_and_hold_what_they_may_take() {
        let memory = Arc::new(Counted {
            limit: u64::MAX,
            ..Counted::default()
        });
        let document = DocumentPatterns::held_by(memory.clone());
        let light = document
            .compile("a literal", RegexFlags::default())
            .unwrap();
        assert!(light.is_match("just a literal"));
        let shared = document.clone();
        shared.compile("a literal", RegexFlags::default()).unwrap();
        assert!((PATTERN_OVERHEAD..2 * PATTERN_OVERHEAD).contains(&held(&memory)));
        // A document may hold about 64 MiB of these, not more.
        let kept = (0..200)
            .map(|n| shared.compile(&heavy(n), RegexFlags::default()))
            .take_while(Result::is_ok)
            .count();
        assert!((40..80).contains(&kept), "{kept}");
        assert_eq!(
            document
                .compile(&heavy(1000), RegexFlags::default())
                .unwrap_err(),
            PatternError::TooMuchInAll
        );
        // Given again, a pattern it holds costs nothing more; one it refused holds nothing.
        let used = held(&memory);
        assert!(document.compile(&heavy(0), RegexFlags::default()).is_ok());
        assert_eq!(held(&memory), used);
        assert_eq!(used, document.count().used);
        assert!((MAX_DOCUMENT_COMPILED_BYTES..2 * MAX_DOCUMENT_COMPILED_BYTES).contains(&used));
    }

    #[test]
    fn a_pattern_its_memory_cannot_hold_is_not_compiled() {
        // Room for one pattern at its largest: the second is refused before it is compiled,
        // and so is every new one after it.
        let memory = Arc::new(Counted {
            limit: MOST_ONE_PATTERN_USES + MOST_ONE_PATTERN_USES / 2,
            ..Counted::default()
        });
        let document = DocumentPatterns::held_by(memory.clone());
        assert!(document.compile(&heavy(1), RegexFlags::default()).is_ok());
        let first = held(&memory);
        assert_eq!(
            document.compile(&heavy(2), RegexFlags::default()).err(),
            Some(PatternError::TooMuchInAll)
        );
        assert_eq!(
            document.compile("small", RegexFlags::default()).err(),
            Some(PatternError::TooMuchInAll)
        );
        assert!(document.compile(&heavy(1), RegexFlags::default()).is_ok());
        assert_eq!(held(&memory), first);
    }
}
