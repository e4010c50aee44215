//! Reading a tasks file: every non-blank line is decoded on its own into a record and checked
//! against the rules of [`super::rules`]; a bad line drops that record only, and every problem
//! is kept, in line order.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::Value;

use super::rules::{check_record, Rule, TaskError};
use super::spec::Task;
use crate::error::{bad_input, Problem};
use crate::input::strict;
use crate::input::{
    json_reason, jsonl_lines, parse_unique_str, read_input_file, repeated_key_reason,
};

/// A validated tasks file: the records that passed and every problem found.
#[derive(Debug)]
pub struct TaskFile {
    /// The path as given, for messages.
    pub display: String,
    /// The valid tasks, in file order.
    pub tasks: Vec<Task>,
    /// Every problem, in line order.
    pub errors: Vec<TaskError>,
    /// The `task_id` strings of the records that failed validation (whatever their spelling), so
    /// an output naming one is recognised as an output for a skipped task.
    pub skipped_ids: HashSet<String>,
}

/// Read and validate a tasks file. A missing or unreadable file, a directory or a file without a
/// single record is a bad-input error (exit 2); problems in records are returned in the file.
pub fn load_tasks(path: &Path) -> anyhow::Result<TaskFile> {
    let display = path.display().to_string();
    let bytes = read_input_file(path)
        .map_err(|reason| bad_input(Problem::new(display.as_str(), reason)))?;
    let file = validate_bytes(display, &bytes);
    if file.tasks.is_empty() && file.errors.is_empty() {
        let holds = match bytes.is_empty() {
            true => "no tasks (the file is empty)",
            false => "no tasks (the file holds only blank lines)",
        };
        return Err(bad_input(Problem::new(file.display, holds)));
    }
    Ok(file)
}

/// Validate JSONL task records from memory, line by line as [`jsonl_lines`] yields them: a UTF-8
/// BOM is ignored, blank lines are skipped (and still counted for line numbers), `\r\n` endings
/// are accepted. `display` names the source in the result.
pub fn validate_bytes(display: String, bytes: &[u8]) -> TaskFile {
    let mut tasks = Vec::new();
    let mut errors = Vec::new();
    let mut skipped_ids = HashSet::new();
    let mut seen_ids = HashMap::new();
    for (line, text) in jsonl_lines(bytes) {
        let line_error = |rule, detail| TaskError {
            line,
            task_id: None,
            rule,
            field: None,
            detail,
        };
        let text = match text {
            Ok(text) => text,
            Err(reason) => {
                errors.push(line_error(Rule::BadJson, reason));
                continue;
            }
        };
        // A record that gives a field twice says two things at once: parse_unique_str refuses it.
        match parse_unique_str(text) {
            Ok(Value::Object(record)) => match check_record(line, &record, &mut seen_ids) {
                Ok(task) => tasks.push(task),
                Err(mut found) => {
                    if let Some(Value::String(id)) = record.get("task_id") {
                        skipped_ids.insert(id.clone());
                    }
                    errors.append(&mut found);
                }
            },
            Ok(other) => errors.push(line_error(
                Rule::BadType,
                strict::wrong_type("a JSON object", &other),
            )),
            Err(err) => errors.push(line_error(
                Rule::BadJson,
                repeated_key_reason(&err).unwrap_or_else(|| json_reason(&err)),
            )),
        }
    }
    TaskFile {
        display,
        tasks,
        errors,
        skipped_ids,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::spec::MetricName;

    fn errors_of(line: &str) -> Vec<(Rule, Option<String>)> {
        let errors = validate_bytes("t".into(), line.as_bytes()).errors;
        errors.into_iter().map(|e| (e.rule, e.field)).collect()
    }

    const GOOD: &str = r#"{"task_id":"t1","category":"arithmetic","prompt":"Q: 1+1\nA:","targets":["2"],"metric_name":"exact_match","post_process":"strip_whitespace"}"#;

    #[test]
    fn a_good_record_becomes_a_task() {
        let TaskFile { tasks, errors, .. } = validate_bytes("t".into(), GOOD.as_bytes());
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(tasks[0].task_id, "t1");
        assert_eq!(tasks[0].metric, MetricName::ExactMatch);
        assert!(tasks[0].few_shot_examples.is_empty());
    }

    #[test]
    fn every_problem_of_a_record_is_reported() {
        let line = r#"{"task_id":"a b","category":"poetry","prompt":"","targets":[1],"metric_name":"bleu","post_process":"upper","extra":1}"#;
        let rules: Vec<Rule> = errors_of(line).into_iter().map(|(rule, _)| rule).collect();
        assert_eq!(
            rules,
            [
                Rule::UnknownField,
                Rule::BadTaskId,
                Rule::BadCategory,
                Rule::BadMetric,
                Rule::BadPostProcess,
                Rule::BadPrompt,
                Rule::BadTargets
            ]
        );
    }

    #[test]
    fn duplicates_are_found_across_lines() {
        let text = format!("{GOOD}\n\n{GOOD}\n");
        let TaskFile { tasks, errors, .. } = validate_bytes("t".into(), text.as_bytes());
        assert_eq!(tasks.len(), 1);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].line, 3);
        assert_eq!(errors[0].rule, Rule::DuplicateTaskId);
        assert_eq!(errors[0].detail, "\"t1\" was already used on line 1");
    }

    #[test]
    fn ids_of_failed_records_are_remembered() {
        let bad_category = GOOD.replace("arithmetic", "poetry").replace("t1", "t2");
        let bad_id = GOOD.replace(r#""t1""#, r#""a b""#);
        let text = format!("{GOOD}\n{bad_category}\n{bad_id}\n{GOOD}\n[1]\n");
        let file = validate_bytes("t".into(), text.as_bytes());
        assert_eq!(file.tasks.len(), 1);
        let mut skipped: Vec<&str> = file.skipped_ids.iter().map(String::as_str).collect();
        skipped.sort_unstable();
        assert_eq!(skipped, ["a b", "t1", "t2"]);
    }

    #[test]
    fn embedded_few_shot_only_without_examples() {
        let prompt = r#""Q: 1+1\nA: 2\n\nQ: 2+2\nA:""#;
        let base = GOOD.replace(r#""Q: 1+1\nA:""#, prompt);
        assert_eq!(
            errors_of(&base),
            [(Rule::EmbeddedFewShot, Some("prompt".into()))]
        );
        let with_examples = base.replace(
            r#""post_process""#,
            r#""few_shot_examples":[{"prompt":"Q: 3+3\nA:","completion":"6"}],"post_process""#,
        );
        assert!(errors_of(&with_examples).is_empty());
    }

    #[test]
    fn line_level_errors() {
        assert_eq!(errors_of("[1]"), [(Rule::BadType, None)]);
        assert_eq!(errors_of("{oops"), [(Rule::BadJson, None)]);
        let errors = validate_bytes("t".into(), b"\xff{}").errors;
        assert_eq!(errors[0].detail, "invalid UTF-8 (bad byte at column 1)");
    }
}
