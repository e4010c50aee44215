//! Reading results files into a [`Report`]: `run --output` result lines, `tasks score --output`
//! lines and `spec score` evaluation records, the kind told per file by its first line. Unknown
//! fields are kept as they are (fields added later show up in the side info); a line that is
//! not a result of its file's kind is a problem `FILE:LINE: reason`, and every problem in every
//! file is reported together.

use serde_json::{Map, Value};

use super::{Report, Row, SourceKind};
use crate::error::{invalid, Problem};
use crate::input::strict::{missing_key, wrong_type};
use crate::input::{JsonlStream, Source};

/// Every result in `files`, in order, or every problem found in them.
pub fn load_results(files: &[Source]) -> anyhow::Result<Report> {
    let mut report = Report::default();
    let mut problems = Vec::new();
    for file in files {
        let mut stream = match JsonlStream::open_file(file) {
            Ok(opened) => JsonlStream::new(file, opened),
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        let mut source = None;
        while let Some(next) = stream.next_record() {
            let (line, value) = match next {
                Ok(found) => found,
                Err(problem) => {
                    problems.push(problem);
                    continue;
                }
            };
            let Value::Object(fields) = value else {
                continue; // ok: parse_object_line yields objects only
            };
            let (index, kind) = *source.get_or_insert_with(|| {
                let kind = kind_of(&fields);
                (
                    report.add_source(file.display(), kind.unwrap_or(SourceKind::Run)),
                    kind,
                )
            });
            let decoded = match kind {
                Some(kind) => decode(kind, line, fields),
                None => Err(NOT_A_RESULT.to_string()),
            };
            match decoded {
                Ok((candidate, row)) => report.add_row(index, &candidate, row),
                Err(reason) => problems.push(Problem::at_line(file.display(), line, reason)),
            }
        }
        if source.is_none() && !stream.unreadable {
            problems.push(Problem::new(
                file.display(),
                "no results (the file is empty)",
            ));
        }
    }
    if problems.is_empty() {
        Ok(report)
    } else {
        Err(invalid(problems))
    }
}

const NOT_A_RESULT: &str = "not a result line: expected a `run --output` result (candidate_id, \
     split, score), a `tasks score --output` line (task_id, score) or a `spec score` record \
     (overall_score)";

/// The kind of results a file holds, told by its first line.
fn kind_of(fields: &Map<String, Value>) -> Option<SourceKind> {
    if fields.contains_key("candidate_id") {
        Some(SourceKind::Run)
    } else if fields.contains_key("task_id") {
        Some(SourceKind::Tasks)
    } else if fields.contains_key("overall_score") || fields.contains_key("validator_results") {
        Some(SourceKind::Spec)
    } else {
        None
    }
}

/// One line of a file of `kind`: its candidate and row, or why it is not one.
fn decode(
    kind: SourceKind,
    line: usize,
    mut fields: Map<String, Value>,
) -> Result<(String, Row), String> {
    match kind {
        SourceKind::Run => {
            let candidate = take_string(take(&mut fields, "candidate_id"), "candidate_id")?;
            let split = take_string(take(&mut fields, "split"), "split")?;
            let score = take_number(take(&mut fields, "score"), "score")?;
            let error = take(&mut fields, "error").map(|error| {
                let text = |key: &str| {
                    error
                        .get(key)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                };
                (text("kind"), text("message"))
            });
            let row = Row {
                split,
                example_index: take(&mut fields, "example_index")
                    .and_then(|v| v.as_u64())
                    .map(to_usize),
                example_line: take(&mut fields, "example_line")
                    .and_then(|v| v.as_u64())
                    .map(to_usize),
                label: None,
                score,
                error,
                attempts: take(&mut fields, "attempts").and_then(|v| v.as_u64()),
                latency_ms: take(&mut fields, "latency_ms").and_then(|v| v.as_f64()),
                passed: take(&mut fields, "passed").and_then(|v| v.as_bool()),
                repeat: take(&mut fields, "repeat").and_then(|v| v.as_u64()),
                cached: take(&mut fields, "cached")
                    .and_then(|v| v.as_bool())
                    .unwrap_or(false),
                side_info: side_info(take(&mut fields, "side_info"), fields),
            };
            Ok((candidate, row))
        }
        SourceKind::Tasks => {
            let task = take_string(take(&mut fields, "task_id"), "task_id")?;
            let score = take_number(take(&mut fields, "score"), "score")?;
            let missing = take(&mut fields, "status").and_then(|v| v.as_str().map(str::to_string));
            let error = (missing.as_deref() == Some("missing")).then(|| {
                (
                    "missing".to_string(),
                    format!("no model output for task {task}"),
                )
            });
            let split = take(&mut fields, "category")
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_else(|| "tasks".to_string());
            Ok((
                "tasks".to_string(),
                Row {
                    split,
                    example_index: None,
                    example_line: Some(line),
                    label: Some(task),
                    score,
                    error,
                    side_info: fields,
                    attempts: None,
                    latency_ms: None,
                    passed: None,
                    repeat: None,
                    cached: false,
                },
            ))
        }
        SourceKind::Spec => {
            let score = take_number(take(&mut fields, "overall_score"), "overall_score")?;
            let label = take(&mut fields, "id").map(|id| match id {
                Value::String(text) => text,
                other => other.to_string(),
            });
            let error = take(&mut fields, "validity")
                .and_then(|v| v.as_str().map(str::to_string))
                .filter(|validity| validity == "invalid")
                .map(|validity| {
                    let reason = fields
                        .get("validity_reason")
                        .and_then(Value::as_str)
                        .unwrap_or("the run is invalid");
                    (validity, reason.to_string())
                });
            Ok((
                "spec".to_string(),
                Row {
                    split: "runs".to_string(),
                    example_index: None,
                    example_line: Some(line),
                    label: Some(label.unwrap_or_else(|| format!("line {line}"))),
                    score,
                    error,
                    passed: take(&mut fields, "passed").and_then(|v| v.as_bool()),
                    side_info: fields,
                    attempts: None,
                    latency_ms: None,
                    repeat: None,
                    cached: false,
                },
            ))
        }
    }
}

/// The value of `key`, removed from `fields`; `None` when absent or null.
fn take(fields: &mut Map<String, Value>, key: &str) -> Option<Value> {
    fields.remove(key).filter(|value| !value.is_null())
}

fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

fn take_string(value: Option<Value>, key: &str) -> Result<String, String> {
    match value {
        Some(Value::String(text)) => Ok(text),
        Some(other) => Err(format!("{key}: {}", wrong_type("a string", &other))),
        None => Err(missing_key(key)),
    }
}

/// A score: a finite number, or null or absent (no score).
fn take_number(value: Option<Value>, key: &str) -> Result<Option<f64>, String> {
    match value {
        None => Ok(None),
        Some(value) => value
            .as_f64()
            .filter(|number| number.is_finite())
            .map(Some)
            .ok_or_else(|| format!("{key}: {}", wrong_type("a finite number", &value))),
    }
}

/// A run line's side info, with any field this reader does not know added to it (so a field a
/// later evalctl writes still shows).
fn side_info(side_info: Option<Value>, unknown: Map<String, Value>) -> Map<String, Value> {
    let mut merged = match side_info {
        Some(Value::Object(map)) => map,
        Some(other) => Map::from_iter([("side_info".to_string(), other)]),
        None => Map::new(),
    };
    merged.extend(unknown);
    merged
}
