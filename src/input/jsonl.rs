//! The one line-numbered JSONL reader: UTF-8, one JSON object per non-blank line, blank lines
//! skipped and not counted, at most [`MAX_RECORDS`] records, every bad line reported.

use std::path::Path;

use serde_json::Value;

use super::source::{json_error_what, read_input_file};
use super::unique_json::{parse_unique_str, repeated_key_reason};
use crate::error::Problem;
use crate::text::json_type;

/// The most records one JSONL input may hold.
pub const MAX_RECORDS: usize = 10_000;

/// One record of a JSONL file, with the physical line it came from (1-based).
#[derive(Debug, Clone)]
pub struct Record {
    /// 1-based line number in the file.
    pub line: usize,
    /// The parsed object, key order and number spelling as in the file.
    pub value: Value,
    /// The record's JSON text exactly as in the file (surrounding white space trimmed): what
    /// payloads carry as `example`.
    pub text: Box<str>,
}

impl Record {
    /// The record's `id` field, when it has one that is a string or a number: what names the
    /// example to people (result lines, failures, JUnit, the HTML report).
    pub fn id(&self) -> Option<String> {
        match self.value.get("id")? {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            _ => None,
        }
    }
}

/// Each id that more than one of `records` has, as its first two lines: `(id, first, second)`
/// in file order. A number and a string name an example alike (`4` and `"4"`), so they count
/// as one id.
pub fn repeated_ids<'a>(
    records: impl IntoIterator<Item = &'a Record>,
) -> Vec<(String, usize, usize)> {
    let mut first_line = std::collections::HashMap::new();
    let mut repeated = Vec::new();
    for record in records {
        let Some(id) = record.id() else { continue };
        match first_line.get(&id) {
            Some(&Some(first)) => {
                repeated.push((id.clone(), first, record.line));
                first_line.insert(id, None);
            }
            Some(None) => {}
            None => {
                first_line.insert(id, Some(record.line));
            }
        }
    }
    repeated
}

#[cfg(test)]
impl Record {
    /// A record for `value`, its text being the value's compact JSON (for records made in tests).
    pub fn from_value(line: usize, value: Value) -> Record {
        let text = value.to_string().into_boxed_str();
        Record { line, value, text }
    }
}

/// Read a JSONL file. On failure, returns every problem found anywhere in the file.
pub fn read_jsonl(path: &Path) -> Result<Vec<Record>, Vec<Problem>> {
    into_result(scan_jsonl(path))
}

fn into_result(
    (records, problems): (Vec<Record>, Vec<Problem>),
) -> Result<Vec<Record>, Vec<Problem>> {
    if problems.is_empty() {
        Ok(records)
    } else {
        Err(problems)
    }
}

/// Like [`read_jsonl`], but returns the good records alongside the problems, so a caller that
/// checks the records further (the candidates file) can report those problems in the same pass.
pub fn scan_jsonl(path: &Path) -> (Vec<Record>, Vec<Problem>) {
    let display = path.display().to_string();
    match read_input_file(path) {
        Ok(bytes) => scan_jsonl_bytes(&display, &bytes),
        Err(reason) => (Vec::new(), vec![Problem::new(display, reason)]),
    }
}

/// Parse JSONL from memory (`display` names the source in messages): the good records, and
/// every problem.
pub fn scan_jsonl_bytes(display: &str, bytes: &[u8]) -> (Vec<Record>, Vec<Problem>) {
    scan_jsonl_checked(display, bytes, |_| None)
}

/// [`scan_jsonl_bytes`], with `check` run on each good record as it is read: a problem it returns
/// is reported at that record's line, so every problem comes out in line order. A record that
/// fails its check is not returned.
pub fn scan_jsonl_checked(
    display: &str,
    bytes: &[u8],
    check: impl FnMut(&Record) -> Option<String>,
) -> (Vec<Record>, Vec<Problem>) {
    let (records, mut problems) = scan_jsonl_objects(display, bytes, check);
    // Every non-blank line gave either a record or exactly one problem.
    let non_blank = records.len() + problems.len();
    let first_line = jsonl_lines(bytes)
        .next()
        .and_then(|(_, line)| line.ok())
        .map(str::trim);
    if !problems.is_empty() && matches!(first_line, Some("[" | "{")) {
        problems.push(Problem::new(
            display,
            format!(
                "this looks like a pretty-printed JSON document; JSONL needs one JSON object per \
                 line (e.g. jq -c '.[]' {display})"
            ),
        ));
    }
    if non_blank == 0 {
        problems.push(Problem::new(display, "no records"));
    } else if records.len() > MAX_RECORDS {
        // The limit is on valid records (protocol v2): a bad line is its own problem.
        problems.push(Problem::new(
            display,
            format!(
                "too many records: {} (maximum {MAX_RECORDS})",
                records.len()
            ),
        ));
    }
    (records, problems)
}

/// One JSON object per non-blank line, with one problem per line that is not one — without the record-count rules of [`scan_jsonl_bytes`] (any number, including none).
fn scan_jsonl_objects(
    display: &str,
    bytes: &[u8],
    mut check: impl FnMut(&Record) -> Option<String>,
) -> (Vec<Record>, Vec<Problem>) {
    let mut records = Vec::new();
    let mut problems = Vec::new();
    for (line_number, line) in jsonl_lines(bytes) {
        // (A record that gives one key twice says two things, and is refused: which the
        // evaluator reads is its JSON reader's choice.)
        let parsed = line.and_then(|line| Ok((parse_object_line(line)?, line.trim())));
        let record = parsed.map(|(value, text)| Record {
            line: line_number,
            value,
            text: text.into(),
        });
        match record.and_then(|record| check(&record).map_or(Ok(record), Err)) {
            Ok(record) => records.push(record),
            Err(reason) => problems.push(Problem::at_line(display, line_number, reason)),
        }
    }
    (records, problems)
}

/// The non-blank lines of JSONL bytes with their 1-based physical line numbers (blank lines are
/// skipped but still counted), each as [`jsonl_line`] reads it.
pub fn jsonl_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, Result<&str, String>)> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(index, raw)| Some((index + 1, jsonl_line(index + 1, raw)?)))
}

/// Physical line `number` (1-based) of a JSONL input, without its `\n`: `None` when it is blank,
/// else its text, or `invalid UTF-8 (bad byte at column N)`. A `\r` before the `\n` and, on line
/// 1, a UTF-8 BOM are ignored. This is the one line reader of every JSONL input, whether it is
/// read whole or streamed line by line.
pub fn jsonl_line(number: usize, raw: &[u8]) -> Option<Result<&str, String>> {
    let raw = match number {
        1 => raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw),
        _ => raw,
    };
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    match std::str::from_utf8(raw) {
        Ok(text) if text.trim().is_empty() => None,
        Ok(text) => Some(Ok(text)),
        Err(err) => Some(Err(format!(
            "invalid UTF-8 (bad byte at column {})",
            err.valid_up_to() + 1
        ))),
    }
}

/// The JSON object on a non-blank JSONL line, or why it is not one: `invalid JSON: <what> at
/// column N`, `expected a JSON object, found <type>`, or an object that repeats a key (see
/// [`super::parse_unique`]).
pub fn parse_object_line(line: &str) -> Result<Value, String> {
    if line.trim_start().starts_with('\u{feff}') {
        // Only the file's first line may carry one: files joined end to end leave theirs.
        return Err(
            "invalid JSON: the line starts with a byte order mark (U+FEFF), as a file joined \
             to another leaves it: remove it"
                .to_string(),
        );
    }
    match parse_unique_str(line) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!(
            "expected a JSON object, found {}",
            json_type(&other)
        )),
        Err(err) => Err(repeated_key_reason(&err).unwrap_or_else(|| json_reason(&err))),
    }
}

/// A serde_json error as a reason for a single line: "invalid JSON: <what> at column N".
pub fn json_reason(err: &serde_json::Error) -> String {
    format!(
        "invalid JSON: {} at column {}",
        json_error_what(err),
        err.column()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_jsonl_bytes(display: &str, bytes: &[u8]) -> Result<Vec<Record>, Vec<String>> {
        into_result(scan_jsonl_bytes(display, bytes))
            .map_err(|problems| problems.iter().map(Problem::to_string).collect())
    }

    #[test]
    fn a_byte_order_mark_past_the_first_line_is_named() {
        let problems =
            read_jsonl_bytes("d.jsonl", b"{\"a\":1}\n\xEF\xBB\xBF{\"b\":2}\n").unwrap_err();
        assert_eq!(
            problems,
            ["d.jsonl:2: invalid JSON: the line starts with a byte order mark (U+FEFF), as a file \
              joined to another leaves it: remove it"]
        );
    }

    #[test]
    fn reports_every_bad_line_and_keeps_line_numbers() {
        let text = b"\xEF\xBB\xBF{\"a\":1}\n\n[1]\n{bad\n\xff\n  \n{\"b\":2}\r\n";
        let problems = read_jsonl_bytes("d.jsonl", text).unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert_eq!(
            problems[0],
            "d.jsonl:3: expected a JSON object, found array"
        );
        assert!(
            problems[1].starts_with("d.jsonl:4: invalid JSON: key must be a string at column 2"),
            "{}",
            problems[1]
        );
        assert!(
            problems[2].starts_with("d.jsonl:5: invalid UTF-8"),
            "{}",
            problems[2]
        );
    }

    #[test]
    fn blank_lines_are_skipped_and_numbers_preserved() {
        let records = read_jsonl_bytes("d", b"\n{\"x\": 1.50, \"a\": 2}\n\n{}\n").unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].line, 2);
        assert_eq!(records[0].value.to_string(), r#"{"x":1.50,"a":2}"#);
        assert_eq!(records[1].line, 4);
    }

    #[test]
    fn empty_and_oversized_inputs() {
        assert_eq!(
            read_jsonl_bytes("e", b"\n \n").unwrap_err(),
            vec!["e: no records"]
        );
        let big = "{}\n".repeat(MAX_RECORDS + 1);
        assert_eq!(
            read_jsonl_bytes("b", big.as_bytes()).unwrap_err(),
            vec![format!(
                "b: too many records: {} (maximum 10000)",
                MAX_RECORDS + 1
            )]
        );
        assert!(read_jsonl_bytes("ok", "{}\n".repeat(MAX_RECORDS).as_bytes()).is_ok());
        // Bad lines are not records: the limit counts the valid ones.
        let with_bad = "{}\n".repeat(MAX_RECORDS) + "[1]\n{bad\n";
        assert_eq!(
            read_jsonl_bytes("w", with_bad.as_bytes()).unwrap_err(),
            vec![
                "w:10001: expected a JSON object, found array".to_string(),
                "w:10002: invalid JSON: key must be a string at column 2".to_string(),
            ]
        );
    }
}
