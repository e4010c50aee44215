//! Strict JSON decoding: the one wording for the three ways a JSON value breaks its schema —
//! `unknown key `x` (expected one of a, b, c)`, `expected a string, found number` and
//! `missing required key `x`` — and [`JsonProblem`], such a problem located inside its document
//! (`checks[1].arguments`), which becomes an input [`Problem`] with that location.
//!
//! Tasks, rubrics, checks, checks files, FEP requests and test cases, candidates and task outputs
//! all word their problems through these helpers.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::json_lines::DocumentLines;
use crate::error::Problem;
use crate::text::json_type;

/// `expected WHAT, found TYPE`, `what` written with its article (`a string`, `an object`).
pub fn wrong_type(what: &str, found: &Value) -> String {
    expected(what, json_type(found))
}

/// `expected WHAT, found TYPE` for a value of another format (a TOML `integer`, `table`).
pub fn expected(what: &str, found: &str) -> String {
    format!("expected {what}, found {found}")
}

/// [`unknown_key`], or `unknown key `KEY` (did you mean `NEAR`?)` when an allowed key is
/// [`nearest`] to it.
pub fn unknown_key_near(key: &str, allowed: &[&str]) -> String {
    match nearest(key, allowed.iter().copied()) {
        Some(near) => format!("unknown key `{}` (did you mean `{near}`?)", key_name(key)),
        None => unknown_key(key, allowed),
    }
}

/// The allowed name `word` is most likely a typo of, if one is close: the nearest within an edit
/// distance of a third of the word's letters (at most 3), else the only one that `word` begins
/// as a whole part of (`exact` for `exact_match`). A name's namespace (`spec.` in
/// `spec.fuzzy_match`) may be left out of `word`.
pub fn nearest<'a>(word: &str, allowed: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let allowed: Vec<&str> = allowed.into_iter().collect();
    let bare = |name: &'a str| name.rsplit('.').next().unwrap_or(name);
    let length = word.chars().count();
    let limit = (length / 3).clamp(1, 3);
    // Lengths further apart than the limit cannot be close: a long input is not compared at all.
    let distance = |name: &str| {
        if name.chars().count().abs_diff(length) <= limit {
            strsim::levenshtein(word, name)
        } else {
            usize::MAX
        }
    };
    let close = allowed
        .iter()
        .map(|name| (distance(name).min(distance(bare(name))), *name))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name);
    close.or_else(|| {
        let prefix = format!("{word}_");
        let mut starting = allowed
            .iter()
            .copied()
            .filter(|name| !word.is_empty() && bare(name).starts_with(&prefix));
        let first = starting.next()?;
        starting
            .all(|name| bare(name) == bare(first))
            .then_some(first)
    })
}

/// ` (did you mean `NEAR`?)` when an allowed name is [`nearest`] to `word`, else nothing.
pub fn did_you_mean<'a>(word: &str, allowed: impl IntoIterator<Item = &'a str>) -> String {
    nearest(word, allowed).map_or_else(String::new, |near| format!(" (did you mean `{near}`?)"))
}

/// `(did you mean `NEAR`? VALID)` when an allowed name is [`nearest`] to `word`, else `(VALID)`:
/// a value's suggestion followed by what is valid (`supported: a, b, c`).
pub fn hint<'a>(word: &str, allowed: impl IntoIterator<Item = &'a str>, valid: &str) -> String {
    match nearest(word, allowed) {
        Some(near) => format!("(did you mean `{near}`? {valid})"),
        None => format!("({valid})"),
    }
}

/// serde's `FOUND, expected EXPECTED` said the house way round: `expected a number, found
/// string "0.5"`. A number is shown without serde's quotes (`integer `-1``), and one beyond what
/// its reader holds (`integer `99999999999999999999999` as u128`, or `2147483648` for an `i32`)
/// is said to be out of range.
pub fn expected_found(found: &str, expected: &str) -> String {
    let (found, a_value) = match found.strip_prefix("invalid value: ") {
        Some(found) => (found, true),
        None => (found.strip_prefix("invalid type: ").unwrap_or(found), false),
    };
    let found = match found.split_once(" `") {
        Some(("integer" | "floating point", number)) => match number.split_once("` as ") {
            Some((number, _)) => format!("{number}, out of range"),
            None => {
                let number = number.trim_end_matches('`');
                // A whole number its integer type cannot hold (a negative one for an unsigned
                // type is no whole number of 0 or more, as said).
                let signed = expected.starts_with('i');
                let too_large = a_value && (signed || !number.starts_with('-'));
                match too_large && expected_in_words(expected) != expected {
                    true => format!("{number}, out of range"),
                    false => number.to_string(),
                }
            }
        },
        Some((kind, value)) => format!("{kind} {}", value.trim_end_matches('`')),
        // serde's names of YAML's and JSON's values, in JSON's (`found array`).
        None if found == "unit value" => "null".to_string(),
        None if found == "sequence" => "array".to_string(),
        None if found == "map" => "object".to_string(),
        None => found.to_string(),
    };
    format!("expected {}, found {found}", expected_in_words(expected))
}

/// What serde says it expected, in people's words: Rust's number types (`f64`, `u32`, ...)
/// are `a number`, `an integer` and `a whole number of 0 or more`; anything else is kept.
pub fn expected_in_words(expected: &str) -> &str {
    match expected {
        "i8" | "i16" | "i32" | "i64" => "an integer",
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number of 0 or more",
        "f32" | "f64" => "a number",
        // A Rust type's name says nothing to a user: `struct SpecDefinition` is an object.
        other if other.starts_with("struct ") => "an object",
        other => other,
    }
}

/// `unknown key `KEY` (expected one of A, B, C)`.
pub fn unknown_key(key: &str, allowed: &[&str]) -> String {
    format!(
        "unknown key `{}` (expected one of {})",
        key_name(key),
        allowed.join(", ")
    )
}

/// `missing required key `KEY``.
pub fn missing_key(key: &str) -> String {
    format!("missing required key `{}`", key_name(key))
}

/// The keys of `object` outside `allowed`, in document order, each with its [`unknown_key`]
/// message.
pub fn unknown_keys<'a>(
    object: &'a Map<String, Value>,
    allowed: &'a [&'a str],
) -> impl Iterator<Item = (&'a str, String)> + 'a {
    flagged(
        object.keys().map(String::as_str),
        |key| !allowed.contains(&key),
        |key| unknown_key(key, allowed),
    )
}

/// The keys of `required` absent from `object`, in `required` order, each with its
/// [`missing_key`] message.
pub fn missing_keys<'a>(
    object: &'a Map<String, Value>,
    required: &'a [&'a str],
) -> impl Iterator<Item = (&'a str, String)> + 'a {
    flagged(
        required.iter().copied(),
        |key| !object.contains_key(key),
        missing_key,
    )
}

/// The `keys` that `flag` picks, in order, each with its `message`.
fn flagged<'a>(
    keys: impl Iterator<Item = &'a str> + 'a,
    flag: impl Fn(&str) -> bool + 'a,
    message: impl Fn(&str) -> String + 'a,
) -> impl Iterator<Item = (&'a str, String)> + 'a {
    keys.filter(move |key| flag(key))
        .map(move |key| (key, message(key)))
}

/// `value` as an object, or the [`wrong_type`] message.
pub fn as_object(value: &Value) -> Result<&Map<String, Value>, String> {
    value
        .as_object()
        .ok_or_else(|| wrong_type("an object", value))
}

/// `value` as an array, or the [`wrong_type`] message.
pub fn as_array(value: &Value) -> Result<&[Value], String> {
    value
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| wrong_type("an array", value))
}

/// `value` as a string, or the [`wrong_type`] message.
pub fn as_str(value: &Value) -> Result<&str, String> {
    value.as_str().ok_or_else(|| wrong_type("a string", value))
}

/// A key as messages and locations show it: as is when it is plain `[A-Za-z0-9_-]+`, else as a
/// JSON string, so a key from the input can neither break a line nor fake a separator.
pub fn key_name(key: &str) -> Cow<'_, str> {
    // A long key (a client's, a model's) is named by its first characters.
    if key.chars().nth(crate::text::ECHOED).is_some() {
        let clipped = crate::text::clip(key, crate::text::ECHOED);
        return Cow::Owned(quoted_unless_plain(&clipped, b"").into_owned());
    }
    quoted_unless_plain(key, b"")
}

/// `text` as is when it is made only of ASCII letters, digits, `_`, `-` and the bytes of `also`,
/// else as a JSON string.
pub fn quoted_unless_plain<'a>(text: &'a str, also: &[u8]) -> Cow<'a, str> {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || also.contains(&b));
    if plain {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(Value::from(text).to_string())
    }
}

/// One problem inside a JSON document, located relative to the value being checked: `at` is
/// empty (the value itself) or a path starting with `.` or `[` (`.arguments.pattern`,
/// `[2].name`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonProblem {
    /// Where, relative to the value checked.
    pub at: String,
    /// What is wrong.
    pub reason: String,
}

impl JsonProblem {
    /// A problem at `at` (see [`JsonProblem::at`]).
    pub fn new(at: impl Into<String>, reason: impl Into<String>) -> JsonProblem {
        JsonProblem {
            at: at.into(),
            reason: reason.into(),
        }
    }

    /// A problem with member `key` of the value checked (`.key`).
    pub fn at_key(key: &str, reason: impl Into<String>) -> JsonProblem {
        JsonProblem::new(format!(".{}", key_name(key)), reason)
    }

    /// The same problem, seen from a value `prefix` above (`prefix` followed by `at`).
    pub fn under(self, prefix: &str) -> JsonProblem {
        JsonProblem {
            at: format!("{prefix}{}", self.at),
            ..self
        }
    }

    /// `AT|REASON` for each of `problems`, as unit tests list them.
    #[cfg(test)]
    pub fn listed(problems: &[JsonProblem]) -> Vec<String> {
        problems
            .iter()
            .map(|p| format!("{}|{}", p.at, p.reason))
            .collect()
    }

    /// `LOCATION: reason`, the location being `base` (e.g. `checks[2]`) followed by `at`; with no
    /// base, `at` loses its leading `.`, and with no location at all only the reason remains.
    pub fn describe(&self, base: &str) -> String {
        match self.location(base) {
            location if location.is_empty() => self.reason.clone(),
            location => format!("{location}: {}", self.reason),
        }
    }

    /// This problem as a located input problem in the one JSON document `source` holds
    /// (`lines`, its text), at the line its location points at.
    pub fn locate_in(&self, source: &str, lines: &DocumentLines<'_>, base: &str) -> Problem {
        self.locate(source, lines.line(&self.location(base)), base)
    }

    /// This problem as a located input problem in `source` (at `line`, when it has lines), the
    /// JSON location being `base` followed by `at` (see [`JsonProblem::describe`]).
    pub fn locate(&self, source: &str, line: Option<usize>, base: &str) -> Problem {
        let problem = Problem {
            source: source.to_string(),
            line,
            location: None,
            message: self.reason.clone(),
        };
        match self.location(base) {
            location if location.is_empty() => problem,
            location => problem.at(location),
        }
    }

    fn location(&self, base: &str) -> String {
        let at = if base.is_empty() {
            self.at.strip_prefix('.').unwrap_or(&self.at)
        } else {
            &self.at
        };
        format!("{base}{at}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_three_wordings() {
        assert_eq!(
            unknown_key("wieght", &["name", "weight"]),
            "unknown key `wieght` (expected one of name, weight)"
        );
        assert_eq!(missing_key("id"), "missing required key `id`");
        assert_eq!(
            wrong_type("a string", &json!([1])),
            "expected a string, found array"
        );
        assert_eq!(
            as_array(&json!({})),
            Err("expected an array, found object".into())
        );
        assert_eq!(as_str(&json!("x")), Ok("x"));
    }

    #[test]
    fn a_near_key_is_suggested() {
        let allowed = ["concurrency", "timeout", "retries"];
        assert_eq!(
            unknown_key_near("concurency", &allowed),
            "unknown key `concurency` (did you mean `concurrency`?)"
        );
        assert_eq!(
            unknown_key_near("colour", &allowed),
            "unknown key `colour` (expected one of concurrency, timeout, retries)"
        );
    }

    #[test]
    fn a_name_is_near_when_a_few_letters_differ_or_it_begins_as_a_whole_part() {
        let types = ["exact_match", "fuzzy_match", "spec.fuzzy_match", "contains"];
        assert_eq!(nearest("fuzzy", types), Some("fuzzy_match"));
        assert_eq!(nearest("contans", types), Some("contains"));
        assert_eq!(
            nearest("fuzy_match", ["exact", "spec.fuzzy_match"]),
            Some("spec.fuzzy_match")
        );
        assert_eq!(
            nearest("exact", ["spec.exact_match", "exact_match"]),
            Some("spec.exact_match")
        );
        assert_eq!(
            nearest("extract", ["extract_letter", "extract_code_block"]),
            None
        );
        assert_eq!(nearest("exa", types), None);
        assert_eq!(nearest("", types), None);
        assert_eq!(nearest(&"fuzzy".repeat(200_000), types), None);
        assert_eq!(
            did_you_mean("strip", ["none", "strip_whitespace"]),
            " (did you mean `strip_whitespace`?)"
        );
        assert_eq!(did_you_mean("blue", ["none", "strip_whitespace"]), "");
        assert_eq!(
            hint("fuzzy", types, "supported: X"),
            "(did you mean `fuzzy_match`? supported: X)"
        );
        assert_eq!(hint("blue", types, "supported: X"), "(supported: X)");
    }

    #[test]
    fn keys_from_the_input_cannot_break_a_line() {
        assert_eq!(key_name("task_id"), "task_id");
        assert_eq!(key_name("a\nb: c"), "\"a\\nb: c\"");
        assert_eq!(key_name(""), "\"\"");
        assert_eq!(missing_key("a`b"), "missing required key `\"a`b\"`");
    }

    #[test]
    fn unknown_and_missing_keys_are_all_found() {
        let object = json!({"b": 1, "x": 2, "y": 3});
        let object = object.as_object().unwrap();
        let unknown: Vec<&str> = unknown_keys(object, &["a", "b"]).map(|(k, _)| k).collect();
        assert_eq!(unknown, ["x", "y"]);
        let missing: Vec<String> = missing_keys(object, &["a", "b"]).map(|(_, m)| m).collect();
        assert_eq!(missing, ["missing required key `a`"]);
    }

    #[test]
    fn locations_join_and_become_problem_locations() {
        let problem = JsonProblem::at_key("arguments", "expected an object, found string");
        assert_eq!(
            problem.describe(""),
            "arguments: expected an object, found string"
        );
        let nested = problem.clone().under("[1]");
        assert_eq!(
            nested.describe("checks"),
            "checks[1].arguments: expected an object, found string"
        );
        let located = nested.locate("c.json", Some(3), "checks");
        assert_eq!(located.location.as_deref(), Some("checks[1].arguments"));
        assert_eq!(
            located.to_string(),
            "c.json:3: checks[1].arguments: expected an object, found string"
        );
        let whole = JsonProblem::new("", "missing required key `id`");
        assert_eq!(whole.locate("t.jsonl", Some(2), "").location, None);
    }
}
