//! Strict decoding of an evaluation spec from JSON or YAML (`docs/spec.md`, "What a spec holds"): a
//! challenge-pack manifest (only its `evaluation_spec` member — top level or under `version:` as
//! real packs have it — is decoded strictly, the rest of the envelope is ignored) or a bare spec.
//! Both formats go through the same serde types, so the same keys are rejected with the same paths;
//! the line of the offending key is reported when the parser gives one.

use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

use super::model::SpecDefinition;
use super::yaml_nesting;
use crate::input::{decode_unique, json_error_what, parse_unique, says_repeated_key};
use crate::input::{second_value_starts_line, strict, ObjectsOnly};

/// One problem with a spec: the field path (`evaluation_spec.validators[2].config.threshold`), the
/// message, and the file's line when the format gives one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecProblem {
    /// Dotted field path, `evaluation_spec` first.
    pub path: String,
    /// What is wrong, in the reference's words where it has them.
    pub message: String,
    /// 1-based line in the spec file, when known.
    pub line: Option<usize>,
}

impl SpecProblem {
    /// Each of `problems` as it reads and the line it is on, as unit tests list them.
    #[cfg(test)]
    pub fn located(problems: &[SpecProblem]) -> Vec<(String, Option<usize>)> {
        problems
            .iter()
            .map(|problem| (problem.to_string(), problem.line))
            .collect()
    }

    /// A problem without a line.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        SpecProblem {
            path: path.into(),
            message: message.into(),
            line: None,
        }
    }
}

impl fmt::Display for SpecProblem {
    /// `<field path> <message>`, the reference's wording.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.path, self.message)
    }
}

/// The serialisation a spec file is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Yaml,
}

/// JSON for `.json` files and for content starting with `{`; YAML otherwise (`.yaml`, `.yml`).
fn detect_format(bytes: &[u8], display: &str) -> Format {
    let lower = display.to_ascii_lowercase();
    if lower.ends_with(".json") {
        return Format::Json;
    }
    if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        return Format::Yaml;
    }
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') | Some(b'[') => Format::Json,
        _ => Format::Yaml,
    }
}

/// The bytes after a leading UTF-8 byte-order mark, if any.
fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// Where in a file a spec sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A challenge-pack manifest with an `evaluation_spec` member.
    Manifest,
    /// A bare spec object.
    Definition,
}

/// A spec decoded in spite of unknown keys: the spec without them, and one problem per key.
pub type Decoded = (SpecDefinition, Vec<SpecProblem>);

/// Decode a spec strictly, finding it in a manifest or taking the document as a bare spec (a
/// document whose top level has `evaluation_spec`, `pack` or `version`, or none of a spec's
/// `name`, `validators` and `scorecard`, is a manifest). Unknown keys do not stop decoding: the
/// spec comes back without them, with a problem for each, so that validation can report the
/// rest; any other decoding problem is the only one reported, with those found before it.
pub fn decode(bytes: &[u8], display: &str) -> Result<Decoded, Vec<SpecProblem>> {
    let bytes = without_bom(bytes);
    let format = detect_format(bytes, display);
    let probe: EnvelopeProbe = parse(bytes, format, "").map_err(|mut problems| {
        // A key only a bare spec has, given twice there, is the spec's (`evaluation_spec.name`).
        for problem in &mut problems {
            if ["name", "validators", "scorecard"].contains(&problem.path.as_str()) {
                problem.path = format!("evaluation_spec.{}", problem.path);
            }
        }
        problems
    })?;
    // A document with neither a manifest's keys nor a spec's is taken for a manifest that lacks
    // its spec (`evaluation_spec is required`), not for a spec that lacks everything.
    let manifest_keys =
        probe.evaluation_spec.is_some() || probe.pack.is_some() || probe.version.is_some();
    let spec_keys = probe.name.is_some() || probe.validators.is_some() || probe.scorecard.is_some();
    let shape = if manifest_keys || !spec_keys {
        Shape::Manifest
    } else {
        Shape::Definition
    };
    decode_as(bytes, display, shape)
}

/// Decode a spec strictly from a document of the given shape (see [`decode`]).
pub fn decode_as(bytes: &[u8], display: &str, shape: Shape) -> Result<Decoded, Vec<SpecProblem>> {
    let bytes = without_bom(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(vec![SpecProblem::new("evaluation_spec", "is required")]);
    }
    let format = detect_format(bytes, display);
    let prefix = match shape {
        Shape::Definition => "evaluation_spec",
        Shape::Manifest => "",
    };
    let decoded = match shape {
        Shape::Definition => parse_past_unknown_keys(bytes, format, prefix),
        Shape::Manifest => {
            let (envelope, unknown): (Envelope, _) = parse_past_unknown_keys(bytes, format, "")?;
            let nested = envelope.version.and_then(|version| version.0);
            match (envelope.evaluation_spec, nested) {
                (Some(_), Some(_)) => Err(vec![SpecProblem::new(
                    "evaluation_spec",
                    "is given twice, at the top level and under `version:`: keep one",
                )]),
                (Some(spec), None) | (None, Some(spec)) => Ok((spec, unknown)),
                (None, None) => Err(vec![SpecProblem::new(
                    "evaluation_spec",
                    format!("is required{}", misspelt_spec_key(bytes, format)),
                )]),
            }
        }
    }?;
    // A key given twice where the decoding kept the last value (a struct's own fields it refuses
    // itself, with their path).
    if let Some(problem) = repeated_key(bytes, format, prefix) {
        return Err(vec![problem]);
    }
    // Only YAML can write such a number; looked for among the spec's numbers as decoded (a
    // `.inf` a text field holds is text).
    if format == Format::Yaml {
        if let Some((path, line)) = non_finite_number(&decoded.0, bytes) {
            return Err(vec![SpecProblem {
                path: join_path("evaluation_spec", &path),
                message: "is not a finite number: a spec's numbers are finite (YAML's .nan and \
                          .inf are not)"
                    .to_string(),
                line,
            }]);
        }
    }
    Ok(decoded)
}

/// The first key an object of the document gives twice, where a struct's field does not catch it
/// (a validator's `config`, a free-form value): which of its values counts is the reader's
/// choice, so the spec says two things. Looked for once the spec has decoded.
fn repeated_key(bytes: &[u8], format: Format, prefix: &str) -> Option<SpecProblem> {
    let (message, line) = match format {
        Format::Json => {
            let err = parse_unique(bytes).err()?;
            (json_error_what(&err), Some(err.line()))
        }
        Format::Yaml => {
            let err = decode_unique(serde_norway::Deserializer::from_slice(bytes)).err()?;
            // The YAML parser places a visitor's error at the start of its mapping: the key's
            // lines are found from there.
            let line = err.location().map(|location| location.line());
            let message = err.to_string();
            let message = match err.location() {
                Some(at) => (message.strip_suffix(&format!(
                    " at line {} column {}",
                    at.line(),
                    at.column()
                )))
                .map_or_else(|| message.clone(), str::to_string),
                None => message,
            };
            (message, line)
        }
    };
    // The YAML parser puts the path of the object in front (`validators[0].config: the key …`).
    let (path, message) = match message.find(": the key `") {
        Some(at) => (&message[..at], &message[at + 2..]),
        None => ("", message.as_str()),
    };
    if !says_repeated_key(message) {
        return None;
    }
    let key = message.split('`').nth(1).unwrap_or_default();
    let lines = key_lines(key, bytes, line).filter(|_| format == Format::Yaml);
    let (message, line) = match lines {
        Some((first, again)) => (
            format!("{message} (first on line {first}): keep one"),
            Some(again),
        ),
        None => (format!("{message}: keep one"), line),
    };
    Some(SpecProblem {
        path: join_path(prefix, path),
        message,
        line,
    })
}

/// ` (this file has `version.evalution_spec`: did you mean `evaluation_spec`?)` when a key at
/// the top level or under `version:` is a near miss of `evaluation_spec`; empty otherwise.
fn misspelt_spec_key(bytes: &[u8], format: Format) -> String {
    let parsed = match format {
        Format::Json => serde_json::from_slice::<serde_json::Value>(bytes).ok(),
        Format::Yaml => serde_norway::from_slice::<serde_json::Value>(bytes).ok(),
    };
    let Some(serde_json::Value::Object(top)) = parsed else {
        return String::new();
    };
    let under_version = top.get("version").and_then(serde_json::Value::as_object);
    let keys = (top.keys().map(|key| (String::new(), key))).chain(
        under_version
            .into_iter()
            .flat_map(|version| version.keys().map(|key| ("version.".to_string(), key))),
    );
    for (prefix, key) in keys {
        // (`evaluation_spec` itself is there, and null or blank: no near miss to point at.)
        if key != "evaluation_spec" && strict::nearest("evaluation_spec", [key.as_str()]).is_some()
        {
            return format!(" (this file has `{prefix}{key}`: did you mean `evaluation_spec`?)");
        }
    }
    String::new()
}

/// At most this many unknown keys are reported; decoding stops at the next one.
const MAX_UNKNOWN_KEYS: usize = 100;

/// [`parse`], going on past unknown keys: when strict decoding stops at one, the document is
/// decoded again from its parsed value without that key, as often as it takes. The problems of
/// the later passes, which have no parser position, take their lines from the file's
/// [`LineIndex`](super::locate::LineIndex).
fn parse_past_unknown_keys<T: DeserializeOwned>(
    bytes: &[u8],
    format: Format,
    prefix: &str,
) -> Result<(T, Vec<SpecProblem>), Vec<SpecProblem>> {
    let first = match parse::<T>(bytes, format, prefix) {
        Ok(decoded) => return Ok((decoded, Vec::new())),
        Err(problems) => problems,
    };
    let is_unknown_key = |problem: &SpecProblem| problem.message.starts_with("unknown key `");
    let parsed = match format {
        Format::Json => serde_json::from_slice::<serde_json::Value>(bytes).ok(),
        Format::Yaml => serde_norway::from_slice::<serde_json::Value>(bytes).ok(),
    };
    let (Some(mut value), true) = (parsed, first.iter().all(is_unknown_key)) else {
        return Err(first);
    };
    let index = super::locate::LineIndex::new(&String::from_utf8_lossy(bytes));
    let mut problems: Vec<SpecProblem> = Vec::new();
    loop {
        let failure = match serde_path_to_error::deserialize::<_, T>(ObjectsOnly(&value)) {
            Ok(decoded) => return Ok((decoded, problems)),
            Err(failure) => failure,
        };
        let path = failure.path().clone();
        let mut problem = SpecProblem {
            path: join_path(prefix, &path.to_string()),
            message: without_position(&failure.into_inner().to_string(), None, None),
            line: None,
        };
        problem.line = match first.iter().find(|found| found.path == problem.path) {
            Some(found) => found.line,
            None => index.line_of(
                problem
                    .path
                    .strip_prefix("version.")
                    .unwrap_or(&problem.path),
            ),
        };
        let go_on = is_unknown_key(&problem) && problems.len() + 1 < MAX_UNKNOWN_KEYS;
        problems.push(problem);
        if !go_on || !remove_member(&mut value, &path) {
            return Err(problems);
        }
    }
}

/// Remove the member at `path` (the unknown key a decoding stopped at) from `value`; false when
/// the path does not lead to an object member.
fn remove_member(value: &mut serde_json::Value, path: &serde_path_to_error::Path) -> bool {
    use serde_path_to_error::Segment;
    let segments: Vec<&Segment> = path.iter().collect();
    let Some((Segment::Map { key }, parents)) = segments.split_last() else {
        return false;
    };
    let mut at = value;
    for segment in parents {
        let next = match segment {
            Segment::Map { key } => at.get_mut(key.as_str()),
            Segment::Seq { index } => at.get_mut(*index),
            _ => None,
        };
        match next {
            Some(next) => at = next,
            None => return false,
        }
    }
    at.as_object_mut()
        .is_some_and(|object| object.remove(key.as_str()).is_some())
}

/// Deserialize `T` from the whole document, tracking the path of a failure; `prefix` is put in
/// front of the path (the bare spec's members are `evaluation_spec.<member>`).
fn parse<T: DeserializeOwned>(
    bytes: &[u8],
    format: Format,
    prefix: &str,
) -> Result<T, Vec<SpecProblem>> {
    let result = match format {
        Format::Json if json_too_deep_at(bytes).is_some() => Err((
            String::new(),
            "could not be decoded: arrays and objects nest deeper than 127 levels (the limit)"
                .to_string(),
            json_too_deep_at(bytes),
        )),
        Format::Json => {
            let json_failure = |path: String, inner: serde_json::Error| {
                let line = (inner.line() > 0).then_some(inner.line());
                let mut message = without_position(&inner.to_string(), line, Some(inner.column()));
                if second_value_starts_line(&inner, bytes) {
                    message.push_str(
                        " (a JSON value on each line, as in a JSONL file: a spec is one JSON or \
                         YAML document)",
                    );
                }
                (path, message, line)
            };
            let mut deserializer = serde_json::Deserializer::from_slice(bytes);
            serde_path_to_error::deserialize(ObjectsOnly(&mut deserializer))
                .map_err(|err| {
                    let path = err.path().to_string();
                    json_failure(path, err.into_inner())
                })
                .and_then(|value| {
                    deserializer
                        .end()
                        .map(|()| value)
                        .map_err(|err| json_failure(String::new(), err))
                })
        }
        Format::Yaml => match yaml_nesting::too_deep_at(bytes) {
            Some((line, nesting)) => Err((
                String::new(),
                format!(
                    "could not be decoded: {} nest deeper than {} levels (the limit)",
                    nesting.describe(),
                    yaml_nesting::MAX_DEPTH
                ),
                Some(line),
            )),
            None => {
                let deserializer = serde_norway::Deserializer::from_slice(bytes);
                serde_path_to_error::deserialize(ObjectsOnly(deserializer)).map_err(|err| {
                    let path = err.path().to_string();
                    let inner = err.into_inner();
                    let location = inner.location();
                    let line = location.as_ref().map(|at| at.line());
                    let column = location.as_ref().map(|at| at.column());
                    let message = inner.to_string();
                    // A key given twice is named where it is given again, its path once.
                    if let Some((key, first, again)) = duplicate_key(&message, bytes, line) {
                        let twice = format!("is given twice (first on line {first}): keep one");
                        return (join_path(&path, &key), twice, Some(again));
                    }
                    let message = without_position(&message, line, column);
                    (path, message, line)
                })
            }
        },
    };
    result.map_err(|(path, message, line)| {
        vec![SpecProblem {
            path: join_path(prefix, &path),
            message,
            line,
        }]
    })
}

/// For serde's ``duplicate field `KEY` `` about the mapping at line `from`: the key, and the
/// lines of its first and second occurrences from that line on.
fn duplicate_key(
    message: &str,
    bytes: &[u8],
    from: Option<usize>,
) -> Option<(String, usize, usize)> {
    let named = &message[message.find("duplicate field `")? + "duplicate field `".len()..];
    let key = named[..named.find('`')?].to_string();
    let (first, again) = key_lines(&key, bytes, from)?;
    Some((key, first, again))
}

/// The lines of the first two YAML lines from line `from` on that write the key `key` (`key:`,
/// `- key:`).
fn key_lines(key: &str, bytes: &[u8], from: Option<usize>) -> Option<(usize, usize)> {
    let text = String::from_utf8_lossy(bytes);
    let writes_key = |line: &str| {
        let line = line.trim_start().trim_start_matches("- ");
        line.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    };
    let mut lines = (text.lines().enumerate())
        .skip(from.unwrap_or(1).saturating_sub(1))
        .filter(|(_, line)| writes_key(line))
        .map(|(index, _)| index + 1);
    Some((lines.next()?, lines.next()?))
}

/// The line at which the JSON document `bytes` nests deeper than serde_json's 127 levels, found
/// in one pass over its text before it is parsed: a member a spec ignores (a manifest's `pack`)
/// is skipped by a parse whose work grows with the square of its depth.
fn json_too_deep_at(bytes: &[u8]) -> Option<usize> {
    let (mut depth, mut line) = (0usize, 1);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in bytes {
        match byte {
            b'\n' => line += 1,
            _ if in_string => match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            },
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > 127 {
                    return Some(line);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Where `spec`, decoded from the YAML document `bytes`, holds a number that is not finite
/// (`.nan`, `.inf`, `-.inf`), which no JSON spec can hold and no rule of a spec compares as a
/// number (a weight of `.nan` made every run pass): its path (`scorecard.dimensions[0].weight`)
/// and the first line that gives its key such a number.
fn non_finite_number(spec: &SpecDefinition, bytes: &[u8]) -> Option<(String, Option<usize>)> {
    fn find(value: &serde_norway::Value, path: String) -> Option<(String, String)> {
        match value {
            serde_norway::Value::Number(number) if number.is_nan() || number.is_infinite() => {
                let key = path.rsplit('.').next().unwrap_or_default();
                let key = key.split('[').next().unwrap_or_default().to_string();
                Some((path, key))
            }
            serde_norway::Value::Sequence(items) => items
                .iter()
                .enumerate()
                .find_map(|(index, item)| find(item, format!("{path}[{index}]"))),
            serde_norway::Value::Mapping(members) => members.iter().find_map(|(key, member)| {
                let key = match key {
                    serde_norway::Value::String(key) => key.clone(),
                    other => serde_norway::to_string(other).unwrap_or_default(),
                };
                let path = match path.as_str() {
                    "" => key.trim().to_string(),
                    _ => format!("{path}.{}", key.trim()),
                };
                find(member, path)
            }),
            serde_norway::Value::Tagged(tagged) => find(&tagged.value, path),
            _ => None,
        }
    }
    let value = serde_norway::to_value(spec).ok()?;
    let (path, key) = find(&value, String::new())?;
    let text = String::from_utf8_lossy(bytes);
    // A word `.nan` or `.inf` (any case, signed) after a separator or at the line's start.
    let writes_non_finite = |line: &str| {
        let line = line.to_ascii_lowercase();
        [".nan", ".inf"].iter().any(|word| {
            line.match_indices(word).any(|(at, _)| {
                let before = line[..at].trim_end_matches(['+', '-']);
                (before.is_empty()
                    || before.ends_with(|c: char| c.is_whitespace() || ":[,{".contains(c)))
                    && !line[at + word.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
            })
        })
    };
    let line = (text
        .lines()
        .position(|line| line.contains(&format!("{key}:")) && writes_non_finite(line)))
    .or_else(|| text.lines().position(writes_non_finite));
    Some((path, line.map(|index| index + 1)))
}

/// `prefix.path`, with serde_path_to_error's `.` (the root) and `?` (no place yet: a syntax
/// error before the first key) meaning no path; the root of a manifest is `manifest`.
fn join_path(prefix: &str, path: &str) -> String {
    // `.` and `?` are serde_path_to_error's names for the root.
    let at_root = |path: &str| matches!(path, "." | "?");
    let prefix = if at_root(prefix) { "" } else { prefix };
    let path = if at_root(path) { "" } else { path };
    match (prefix.is_empty(), path.is_empty()) {
        (true, true) => "manifest".to_string(),
        (true, false) => path.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}.{path}"),
    }
}

/// A parser message in the one wording evalctl uses for strict JSON everywhere (`unknown key
/// `x` (expected one of a, b)`, `expected X, found Y`, `missing required key `x``), without its
/// trailing " at line L column C" (the line is reported apart) or a path the parser put in front
/// (the problem's own path says where).
fn without_position(message: &str, line: Option<usize>, column: Option<usize>) -> String {
    let trimmed = match (line, column) {
        (Some(line), Some(column)) => message
            .strip_suffix(&format!(" at line {line} column {column}"))
            .unwrap_or(message),
        _ => message,
    };
    let reworded = [
        "unknown field `",
        "invalid type: ",
        "invalid value: ",
        "missing field `",
    ]
    .iter()
    .find_map(|marker| trimmed.find(marker).map(|at| &trimmed[at..]))
    .and_then(house_wording);
    reworded.unwrap_or_else(|| format!("could not be decoded: {trimmed}"))
}

/// serde's strict-decoding messages in the house wording, or `None` for any other message.
pub fn house_wording(message: &str) -> Option<String> {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (key, expected) = rest.split_once('`')?;
        let expected = expected
            .trim_start_matches(", expected one of ")
            .trim_start_matches(", expected ")
            .replace('`', "");
        return Some(
            if expected.is_empty() || expected.starts_with("there are no") {
                format!("unknown key `{key}`")
            } else {
                let hint = strict::hint(
                    key,
                    expected.split(", "),
                    &format!("expected one of {expected}"),
                );
                format!("unknown key `{key}` {hint}")
            },
        );
    }
    if message.starts_with("invalid type: ") || message.starts_with("invalid value: ") {
        let (found, expected) = message.split_once(", expected ")?;
        return Some(strict::expected_found(found, expected));
    }
    let key = message.strip_prefix("missing field `")?.split('`').next()?;
    Some(format!("missing required key `{key}`"))
}

/// The top-level keys that tell a manifest from a bare spec.
#[derive(Deserialize)]
struct EnvelopeProbe {
    #[serde(default)]
    evaluation_spec: Option<IgnoredAny>,
    #[serde(default)]
    pack: Option<IgnoredAny>,
    #[serde(default)]
    version: Option<IgnoredAny>,
    #[serde(default)]
    name: Option<IgnoredAny>,
    #[serde(default)]
    validators: Option<IgnoredAny>,
    #[serde(default)]
    scorecard: Option<IgnoredAny>,
}

/// A manifest: everything but the spec is ignored.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    evaluation_spec: Option<SpecDefinition>,
    #[serde(default)]
    version: Option<VersionMember>,
}

/// A manifest's `version:` member: a map whose `evaluation_spec` is the spec (other members and
/// non-map values are ignored).
struct VersionMember(Option<SpecDefinition>);

impl<'de> Deserialize<'de> for VersionMember {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct VersionVisitor;

        impl<'de> Visitor<'de> for VersionVisitor {
            type Value = VersionMember;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a version block")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<VersionMember, A::Error> {
                let mut spec = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == "evaluation_spec" {
                        spec = map.next_value::<Option<SpecDefinition>>()?;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(VersionMember(spec))
            }

            fn visit_seq<A: de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<VersionMember, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(VersionMember(None))
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<VersionMember, E> {
                Ok(VersionMember(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<VersionMember, E> {
                Ok(VersionMember(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<VersionMember, E> {
                Ok(VersionMember(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<VersionMember, E> {
                Ok(VersionMember(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<VersionMember, E> {
                Ok(VersionMember(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<VersionMember, E> {
                Ok(VersionMember(None))
            }
        }

        deserializer.deserialize_any(VersionVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC_YAML: &str = "\
name: s
version_number: 1
judge_mode: deterministic
validators:
  - key: v
    type: exact_match
    target: final_output
    expected_from: literal:x
scorecard:
  dimensions: [correctness]
";

    fn problem(result: Result<Decoded, Vec<SpecProblem>>) -> SpecProblem {
        result.expect_err("decoding fails").remove(0)
    }

    #[test]
    fn yaml_and_json_decode_to_the_same_spec() {
        let (from_yaml, _) = decode(SPEC_YAML.as_bytes(), "pack.yaml").expect("valid YAML");
        let json = r#"{"name":"s","version_number":1,"judge_mode":"deterministic",
            "validators":[{"key":"v","type":"exact_match","target":"final_output",
            "expected_from":"literal:x"}],"scorecard":{"dimensions":["correctness"]}}"#;
        let (from_json, _) = decode(json.as_bytes(), "spec.json").expect("valid JSON");
        assert_eq!(from_yaml, from_json);
    }

    #[test]
    fn a_manifest_spec_may_sit_under_version() {
        let indented: String = SPEC_YAML
            .lines()
            .map(|line| format!("    {line}\n"))
            .collect();
        let manifest =
            format!("pack:\n  slug: p\nversion:\n  number: 1\n  evaluation_spec:\n{indented}");
        let (spec, _) = decode(manifest.as_bytes(), "pack.yaml").expect("valid manifest");
        assert_eq!(spec.name, "s");
    }

    #[test]
    fn unknown_yaml_keys_are_reported_with_their_path_and_line() {
        let text = SPEC_YAML.replace("    target:", "    wieght: 1\n    target:");
        let (_, mut unknown) = decode(text.as_bytes(), "pack.yaml").expect("decoded without it");
        let problem = unknown.remove(0);
        assert_eq!(problem.path, "evaluation_spec.validators[0].wieght");
        assert!(
            problem.message.contains("unknown key `wieght`"),
            "{problem}"
        );
        assert_eq!(problem.line, Some(7));
    }

    #[test]
    fn unknown_json_keys_in_a_manifest_name_the_member() {
        let text = r#"{"pack": {"x": 1}, "evaluation_spec": {"name": "s",
            "scorecard": {"dimensions": [{"key": "k", "gait": true}]}}}"#;
        let (_, unknown) = decode(text.as_bytes(), "pack.json").expect("decoded without it");
        assert_eq!(
            unknown[0].path,
            "evaluation_spec.scorecard.dimensions[0].gait"
        );
        assert_eq!(unknown[0].line, Some(2));
    }

    #[test]
    fn decoding_goes_on_past_unknown_keys_and_stops_at_a_wrong_type() {
        let text = SPEC_YAML
            .replace("judge_mode:", "judge_mdoe: x\njudge_mode:")
            .replace("  dimensions:", "  pass_treshold: 1\n  dimensions:");
        let (spec, unknown) = decode(text.as_bytes(), "pack.yaml").expect("decoded without them");
        assert_eq!(spec.judge_mode, "deterministic");
        assert_eq!(
            SpecProblem::located(&unknown),
            [
                (
                    "evaluation_spec.judge_mdoe unknown key `judge_mdoe` (did you mean \
                     `judge_mode`? expected one of name, version_number, judge_mode, validators, \
                     metrics, behavioral, llm_judges, post_execution_checks, runtime_limits, \
                     pricing, scorecard)"
                        .to_string(),
                    Some(3)
                ),
                (
                    "evaluation_spec.scorecard.pass_treshold unknown key `pass_treshold` (did you \
                     mean `pass_threshold`? expected one of dimensions, strategy, pass_threshold, \
                     normalization, judge_limits)"
                        .to_string(),
                    Some(11)
                ),
            ]
        );
        let wrong_type = text.replace("version_number: 1", "version_number: x");
        let problems = decode(wrong_type.as_bytes(), "pack.yaml").expect_err("a wrong type");
        let paths: Vec<&str> = problems
            .iter()
            .map(|problem| problem.path.as_str())
            .collect();
        assert_eq!(
            paths,
            ["evaluation_spec.version_number"],
            "the unknown key after it is not reached"
        );
    }

    #[test]
    fn integers_reject_fractions_and_null_means_absent() {
        let fraction = r#"{"name": "s", "version_number": 1.0}"#;
        let problem = problem(decode(fraction.as_bytes(), "spec.json"));
        assert_eq!(problem.path, "evaluation_spec.version_number");
        let nulls = r#"{"name": null, "metrics": null, "runtime_limits": null,
            "scorecard": {"dimensions": [null], "strategy": null}}"#;
        let (spec, _) = decode(nulls.as_bytes(), "spec.json").expect("nulls are absent");
        assert_eq!(spec.name, "");
        assert_eq!(spec.scorecard.dimensions.len(), 1);
    }

    #[test]
    fn trailing_data_and_missing_specs_are_rejected() {
        let with_bom = decode(b"\xEF\xBB\xBF{\"name\": \"s\"}", "spec.json");
        assert_eq!(with_bom.map(|(spec, _)| spec.name), Ok("s".to_string()));
        let trailing = problem(decode(br#"{"name": "s"} {}"#, "spec.json"));
        assert!(trailing.message.contains("trailing"), "{trailing}");
        let missing = problem(decode_as(b"{\"pack\": {}}", "pack.json", Shape::Manifest));
        assert_eq!(missing.to_string(), "evaluation_spec is required");
        let blank = problem(decode(b"  \n", "spec.yaml"));
        assert_eq!(blank.to_string(), "evaluation_spec is required");
    }

    #[test]
    fn a_wrong_type_is_worded_for_people_not_as_a_rust_type() {
        let quoted = problem(decode(
            br#"{"name": "s", "version_number": "1"}"#,
            "spec.json",
        ));
        assert_eq!(
            quoted.to_string(),
            "evaluation_spec.version_number expected an integer, found string \"1\""
        );
        let huge = problem(decode(
            b"name: s\nversion_number: 99999999999999999999999\n",
            "spec.yaml",
        ));
        assert_eq!(
            huge.to_string(),
            "evaluation_spec.version_number expected an integer, found \
             99999999999999999999999, out of range"
        );
        // Beyond the 32 bits the field holds.
        let wide = problem(decode(
            b"name: s\nversion_number: 2147483648\n",
            "spec.yaml",
        ));
        assert_eq!(
            wide.to_string(),
            "evaluation_spec.version_number expected an integer, found 2147483648, out of range"
        );
    }

    #[test]
    fn a_manifest_with_two_specs_or_a_misspelt_one_is_named() {
        let twice = "evaluation_spec: {name: a}\nversion:\n  evaluation_spec: {name: b}\n";
        assert_eq!(
            problem(decode(twice.as_bytes(), "pack.yaml")).to_string(),
            "evaluation_spec is given twice, at the top level and under `version:`: keep one"
        );
        let misspelt = "version:\n  number: 1\n  evalution_spec: {name: a}\n";
        assert_eq!(
            problem(decode(misspelt.as_bytes(), "pack.yaml")).to_string(),
            "evaluation_spec is required (this file has `version.evalution_spec`: did you mean \
             `evaluation_spec`?)"
        );
        let top = r#"{"pack": {}, "evaluation-spec": {"name": "a"}}"#;
        assert_eq!(
            problem(decode(top.as_bytes(), "pack.json")).to_string(),
            "evaluation_spec is required (this file has `evaluation-spec`: did you mean \
             `evaluation_spec`?)"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let depth = 10_000;
        let json = format!(
            "{{\"name\": \"s\", \"validators\": [{{\"config\": {}{}}}]}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert!(decode(json.as_bytes(), "spec.json").is_err());
        let yaml = format!(
            "name: s\nvalidators:\n  - config: {}{}\n",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert!(decode(yaml.as_bytes(), "spec.yaml").is_err());
    }
}
