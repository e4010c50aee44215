//! The task-spec rules, checked per record: every field of one JSON object against the frozen
//! contract (docs/tasks.md), each broken rule becoming one [`TaskError`] naming its line, task
//! id, rule, field and detail. Reading the file is [`super::validate`]'s; reporting is
//! [`super::report`]'s.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::spec::{Category, FewShotExample, MetricName, PostProcess, Task};
use crate::error::Problem;
use crate::input::strict;
use crate::scoring::pytext;
use crate::text::{clip, json_type};

/// The most few-shot examples a task may carry.
pub const MAX_FEW_SHOT: usize = 8;

/// The fields of a task record: the first [`REQUIRED`] are required, the others optional.
const FIELDS: [&str; 8] = [
    "task_id",
    "category",
    "prompt",
    "targets",
    "metric_name",
    "post_process",
    "few_shot_examples",
    "metadata",
];
const REQUIRED: usize = 6;
/// The fields of a few-shot example, both required.
const FEW_SHOT_FIELDS: [&str; 2] = ["prompt", "completion"];
const FEW_SHOT_MARKERS: [&str; 3] = ["question:", "q:", "example:"];

/// The rule a task record broke. The names are documented (docs/tasks.md); users match on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The line is not JSON (or not UTF-8).
    BadJson,
    /// The line is JSON but not an object.
    BadType,
    /// A required field is absent.
    MissingField,
    /// A top-level field outside the spec.
    UnknownField,
    /// `task_id` is not a string matching `[A-Za-z0-9_-]+`.
    BadTaskId,
    /// `task_id` already used on an earlier line.
    DuplicateTaskId,
    /// `category` is not one of the five categories.
    BadCategory,
    /// `prompt` is not a non-empty string.
    BadPrompt,
    /// `prompt` ends with whitespace.
    PromptTrailingWhitespace,
    /// `prompt` already holds a few-shot block while `few_shot_examples` is empty.
    EmbeddedFewShot,
    /// `targets` is not a non-empty list of strings.
    BadTargets,
    /// `metric_name` is not in the metric vocabulary.
    BadMetric,
    /// `post_process` is not in the post-process vocabulary.
    BadPostProcess,
    /// The metric is not legal for the category.
    IllegalMetricForCategory,
    /// An `mcq` task does not have exactly one single-letter A–E target.
    BadMcqTarget,
    /// `few_shot_examples` is not a list of `{prompt, completion}` string pairs.
    BadFewShot,
    /// More than [`MAX_FEW_SHOT`] few-shot examples.
    TooManyFewShot,
    /// `metadata` is not an object.
    BadMetadata,
}

impl Rule {
    /// The rule's name as reported.
    pub fn name(self) -> &'static str {
        match self {
            Rule::BadJson => "bad_json",
            Rule::BadType => "bad_type",
            Rule::MissingField => "missing_field",
            Rule::UnknownField => "unknown_field",
            Rule::BadTaskId => "bad_task_id",
            Rule::DuplicateTaskId => "duplicate_task_id",
            Rule::BadCategory => "bad_category",
            Rule::BadPrompt => "bad_prompt",
            Rule::PromptTrailingWhitespace => "prompt_trailing_whitespace",
            Rule::EmbeddedFewShot => "embedded_few_shot",
            Rule::BadTargets => "bad_targets",
            Rule::BadMetric => "bad_metric",
            Rule::BadPostProcess => "bad_post_process",
            Rule::IllegalMetricForCategory => "illegal_metric_for_category",
            Rule::BadMcqTarget => "bad_mcq_target",
            Rule::BadFewShot => "bad_few_shot",
            Rule::TooManyFewShot => "too_many_few_shot",
            Rule::BadMetadata => "bad_metadata",
        }
    }
}

/// One validation problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskError {
    /// The 1-based line of the tasks file.
    pub line: usize,
    /// The record's task id when it has a valid one (`?` in text reports, `null` in JSON).
    pub task_id: Option<String>,
    /// The rule broken.
    pub rule: Rule,
    /// The field at fault (`targets[2]`, `few_shot_examples[0].prompt`), `None` for the line.
    pub field: Option<String>,
    /// What is wrong, for people.
    pub detail: String,
}

impl TaskError {
    /// The problem as every command reports it: `FILE:LINE: task ID, field F: RULE: detail`
    /// (the task and field only when known). A field name from the record (an unknown key) that
    /// is not plain `[A-Za-z0-9_.\[\]-]+` is JSON-quoted, so it can neither break the line nor
    /// fake its `: ` separators.
    pub fn to_problem(&self, file: &str) -> Problem {
        let task = self
            .task_id
            .as_deref()
            .map(|id| format!("task {}", quoted_field(id)));
        let field = self
            .field
            .as_deref()
            .map(|field| format!("field {}", quoted_field(field)));
        let location: Vec<String> = task.into_iter().chain(field).collect();
        let problem = Problem::at_line(
            file,
            self.line,
            format!("{}: {}", self.rule.name(), self.detail),
        );
        if location.is_empty() {
            problem
        } else {
            problem.at(location.join(", "))
        }
    }
}

/// `field` as is when it is plain `[A-Za-z0-9_.\[\]-]+`, else as a JSON string.
fn quoted_field(field: &str) -> Cow<'_, str> {
    strict::quoted_unless_plain(field, b".[]")
}

/// Check one record, the JSON object on line `line`, against every rule; `seen_ids` maps the
/// task ids of earlier lines to their line. The task when no rule is broken, else every problem.
pub fn check_record(
    line: usize,
    record: &Map<String, Value>,
    seen_ids: &mut HashMap<String, usize>,
) -> Result<Task, Vec<TaskError>> {
    let mut check = RecordCheck::new(line, record);
    match check.task(record, seen_ids) {
        Some(task) if check.errors.is_empty() => Ok(task),
        _ => Err(check.errors),
    }
}

/// The checks of one JSON object, collecting every problem.
struct RecordCheck {
    line: usize,
    task_id: Option<String>,
    errors: Vec<TaskError>,
}

impl RecordCheck {
    fn new(line: usize, record: &Map<String, Value>) -> Self {
        let task_id = record
            .get("task_id")
            .and_then(Value::as_str)
            .filter(|id| is_valid_task_id(id))
            .map(str::to_string);
        RecordCheck {
            line,
            task_id,
            errors: Vec::new(),
        }
    }

    fn fail(&mut self, rule: Rule, field: impl Into<String>, detail: impl Into<String>) {
        self.errors.push(TaskError {
            line: self.line,
            task_id: self.task_id.clone(),
            rule,
            field: Some(field.into()),
            detail: detail.into(),
        });
    }

    /// Check every field; the task when nothing failed.
    fn task(
        &mut self,
        record: &Map<String, Value>,
        seen_ids: &mut HashMap<String, usize>,
    ) -> Option<Task> {
        for (key, detail) in strict::unknown_keys(record, &FIELDS) {
            self.fail(Rule::UnknownField, key, detail);
        }
        for (field, detail) in strict::missing_keys(record, &FIELDS[..REQUIRED]) {
            self.fail(Rule::MissingField, field, detail);
        }
        self.check_task_id(record.get("task_id"), seen_ids);
        let category = self.check_vocabulary(
            record.get("category"),
            "category",
            Rule::BadCategory,
            Category::parse,
            Category::names,
        );
        let metric = self.check_vocabulary(
            record.get("metric_name"),
            "metric_name",
            Rule::BadMetric,
            MetricName::parse,
            MetricName::names,
        );
        let post_process = self.check_vocabulary(
            record.get("post_process"),
            "post_process",
            Rule::BadPostProcess,
            PostProcess::parse,
            PostProcess::names,
        );
        let few_shot_examples = self.check_few_shot(record.get("few_shot_examples"));
        let prompt = self.check_prompt(record.get("prompt"), few_shot_examples.as_deref());
        let targets = self.check_targets(record.get("targets"));
        if let Some(Err(detail)) = record.get("metadata").map(strict::as_object) {
            self.fail(Rule::BadMetadata, "metadata", detail);
        }
        if let (Some(category), Some(metric)) = (category, metric) {
            if !category.legal_metrics().contains(&metric) {
                let legal: Vec<&str> = category.legal_metrics().iter().map(|m| m.name()).collect();
                self.fail(
                    Rule::IllegalMetricForCategory,
                    "metric_name",
                    format!(
                        "{} is not legal for category {} (legal: {})",
                        metric.name(),
                        category.name(),
                        legal.join(", ")
                    ),
                );
            }
        }
        if let (Some(Category::Mcq), Some(targets)) = (category, &targets) {
            let single_letter = matches!(targets.as_slice(), [only] if is_mcq_letter(only));
            if !single_letter {
                self.fail(
                    Rule::BadMcqTarget,
                    "targets",
                    format!(
                        "an mcq task needs exactly one target that is a single letter A-E, found {}",
                        clip(&serde_json::to_string(targets).unwrap_or_default(), 80)
                    ),
                );
            }
        }
        if !self.errors.is_empty() {
            return None;
        }
        Some(Task {
            task_id: self.task_id.clone()?,
            category: category?,
            prompt: prompt?,
            targets: targets?,
            metric: metric?,
            post_process: post_process?,
            few_shot_examples: few_shot_examples.unwrap_or_default(),
        })
    }

    fn check_task_id(&mut self, value: Option<&Value>, seen_ids: &mut HashMap<String, usize>) {
        let Some(value) = value else { return };
        match (value.as_str(), &self.task_id) {
            (_, Some(id)) => {
                if let Some(first) = seen_ids.get(id) {
                    let detail = format!("{id:?} was already used on line {first}");
                    self.fail(Rule::DuplicateTaskId, "task_id", detail);
                } else {
                    seen_ids.insert(id.clone(), self.line);
                }
            }
            (Some(id), None) => self.fail(
                Rule::BadTaskId,
                "task_id",
                format!(
                    "{} does not match [A-Za-z0-9_-]+",
                    clip(&Value::from(id).to_string(), 80)
                ),
            ),
            (None, None) => self.fail(
                Rule::BadTaskId,
                "task_id",
                strict::wrong_type("a string", value),
            ),
        }
    }

    /// A string field that must name one value of a closed vocabulary.
    fn check_vocabulary<T>(
        &mut self,
        value: Option<&Value>,
        field: &str,
        rule: Rule,
        parse: fn(&str) -> Option<T>,
        names: fn() -> String,
    ) -> Option<T> {
        let value = value?;
        let parsed = value.as_str().and_then(parse);
        if parsed.is_none() {
            let found = match value.as_str() {
                Some(text) => clip(&Value::from(text).to_string(), 80),
                None => json_type(value).to_string(),
            };
            let names = names();
            let near = value
                .as_str()
                .map(|text| strict::did_you_mean(text, names.split(", ")))
                .unwrap_or_default();
            self.fail(
                rule,
                field,
                format!("expected one of {names}, found {found}{near}"),
            );
        }
        parsed
    }

    fn check_prompt(
        &mut self,
        value: Option<&Value>,
        few_shot: Option<&[FewShotExample]>,
    ) -> Option<String> {
        let value = value?;
        let Some(prompt) = value.as_str() else {
            let detail = strict::wrong_type("a non-empty string", value);
            self.fail(Rule::BadPrompt, "prompt", detail);
            return None;
        };
        if prompt.is_empty() {
            self.fail(Rule::BadPrompt, "prompt", "the prompt is empty");
            return None;
        }
        if prompt.ends_with(pytext::is_space) {
            self.fail(
                Rule::PromptTrailingWhitespace,
                "prompt",
                "the prompt ends with whitespace",
            );
            return None;
        }
        let markers = count_few_shot_markers(prompt);
        if markers > 1 && few_shot.is_some_and(<[_]>::is_empty) {
            self.fail(
                Rule::EmbeddedFewShot,
                "prompt",
                format!(
                    "the prompt holds {markers} question:/q:/example: markers, a few-shot block; \
                     move the examples to few_shot_examples"
                ),
            );
            return None;
        }
        Some(prompt.to_string())
    }

    fn check_targets(&mut self, value: Option<&Value>) -> Option<Vec<String>> {
        let value = value?;
        let Some(items) = value.as_array() else {
            let detail = strict::wrong_type("a non-empty array of strings", value);
            self.fail(Rule::BadTargets, "targets", detail);
            return None;
        };
        if items.is_empty() {
            self.fail(Rule::BadTargets, "targets", "the array is empty");
            return None;
        }
        let mut targets = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            match item.as_str() {
                Some(target) => targets.push(target.to_string()),
                None => self.fail(
                    Rule::BadTargets,
                    format!("targets[{index}]"),
                    strict::wrong_type("a string", item),
                ),
            }
        }
        (targets.len() == items.len()).then_some(targets)
    }

    /// The examples (empty when absent); `None` when the field is malformed.
    fn check_few_shot(&mut self, value: Option<&Value>) -> Option<Vec<FewShotExample>> {
        let Some(value) = value else {
            return Some(Vec::new());
        };
        let field = "few_shot_examples";
        let Some(items) = value.as_array() else {
            let detail = strict::wrong_type("an array of {prompt, completion} objects", value);
            self.fail(Rule::BadFewShot, field, detail);
            return None;
        };
        if items.len() > MAX_FEW_SHOT {
            let detail = format!("{} examples, at most {MAX_FEW_SHOT} allowed", items.len());
            self.fail(Rule::TooManyFewShot, field, detail);
        }
        let before = self.errors.len();
        let mut examples = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let at = format!("{field}[{index}]");
            let Some(object) = item.as_object() else {
                let detail = strict::wrong_type("an object {prompt, completion}", item);
                self.fail(Rule::BadFewShot, at, detail);
                continue;
            };
            for (key, detail) in strict::unknown_keys(object, &FEW_SHOT_FIELDS) {
                self.fail(Rule::BadFewShot, format!("{at}.{key}"), detail);
            }
            let mut text = |key: &str| {
                let text = match object.get(key) {
                    Some(value) => strict::as_str(value).map(str::to_string),
                    None => Err(strict::missing_key(key)),
                };
                text.map_err(|detail| self.fail(Rule::BadFewShot, format!("{at}.{key}"), detail))
                    .ok()
            };
            if let (Some(prompt), Some(completion)) = (text("prompt"), text("completion")) {
                examples.push(FewShotExample { prompt, completion });
            }
        }
        (self.errors.len() == before).then_some(examples)
    }
}

/// `[A-Za-z0-9_-]+`.
fn is_valid_task_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A single capital letter A–E.
fn is_mcq_letter(target: &str) -> bool {
    matches!(target, "A" | "B" | "C" | "D" | "E")
}

/// How many `question:` / `q:` / `example:` markers (case-insensitive, each starting a word, as
/// a regular expression's `\b` reads it: after neither a letter, a digit nor `_`) the prompt
/// holds.
fn count_few_shot_markers(prompt: &str) -> usize {
    let lower = prompt.to_ascii_lowercase();
    FEW_SHOT_MARKERS
        .iter()
        .map(|marker| {
            lower
                .match_indices(marker)
                .filter(|(at, _)| {
                    !lower[..*at]
                        .chars()
                        .next_back()
                        .is_some_and(|before| before.is_alphanumeric() || before == '_')
                })
                .count()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_of(record: serde_json::Value) -> Vec<(Rule, Option<String>, String)> {
        let record = record.as_object().cloned().unwrap_or_default();
        match check_record(1, &record, &mut HashMap::new()) {
            Ok(_) => Vec::new(),
            Err(errors) => errors
                .into_iter()
                .map(|e| (e.rule, e.field, e.detail))
                .collect(),
        }
    }

    #[test]
    fn keys_and_types_use_the_strict_wording() {
        let found = errors_of(serde_json::json!({
            "task_id": 7, "category": "arithmetic", "prompt": ["Q"], "targets": "2",
            "metric_name": "exact_match", "extra": 1,
            "few_shot_examples": [{"prompt": "Q", "answer": "A"}, 3], "metadata": []
        }));
        let field = |name: &str| Some(name.to_string());
        assert_eq!(
            found,
            [
                (Rule::UnknownField, field("extra"), "unknown key `extra` (expected one of task_id, category, prompt, targets, metric_name, post_process, few_shot_examples, metadata)".into()),
                (Rule::MissingField, field("post_process"), "missing required key `post_process`".into()),
                (Rule::BadTaskId, field("task_id"), "expected a string, found number".into()),
                (Rule::BadFewShot, field("few_shot_examples[0].answer"), "unknown key `answer` (expected one of prompt, completion)".into()),
                (Rule::BadFewShot, field("few_shot_examples[0].completion"), "missing required key `completion`".into()),
                (Rule::BadFewShot, field("few_shot_examples[1]"), "expected an object {prompt, completion}, found number".into()),
                (Rule::BadPrompt, field("prompt"), "expected a non-empty string, found array".into()),
                (Rule::BadTargets, field("targets"), "expected a non-empty array of strings, found string".into()),
                (Rule::BadMetadata, field("metadata"), "expected an object, found array".into()),
            ]
        );
    }

    #[test]
    fn few_shot_markers_need_word_starts() {
        assert_eq!(count_few_shot_markers("Question: a\nQ: b\nexample: c"), 3);
        assert_eq!(count_few_shot_markers("FAQ: what? Question: x"), 1);
        assert_eq!(count_few_shot_markers("(q: 1) (Q: 2)"), 2);
        assert_eq!(count_few_shot_markers("see var_q: 1 and my_example: 2"), 0);
    }

    #[test]
    fn text_line_format() {
        let error = TaskError {
            line: 4,
            task_id: None,
            rule: Rule::BadJson,
            field: None,
            detail: "x".into(),
        };
        let line = |error: &TaskError, file: &str| error.to_problem(file).to_string();
        assert_eq!(line(&error, "f.jsonl"), "f.jsonl:4: bad_json: x");
        let field = |name: &str| TaskError {
            field: Some(name.into()),
            ..error.clone()
        };
        assert_eq!(
            line(&field("few_shot_examples[0].prompt"), "f"),
            "f:4: field few_shot_examples[0].prompt: bad_json: x"
        );
        assert_eq!(
            line(&field("a\nb: c"), "f"),
            "f:4: field \"a\\nb: c\": bad_json: x"
        );
        assert_eq!(line(&field(""), "f"), "f:4: field \"\": bad_json: x");
        let with_id = TaskError {
            task_id: Some("t-1".into()),
            ..field("targets")
        };
        assert_eq!(
            line(&with_id, "f"),
            "f:4: task t-1, field targets: bad_json: x"
        );
    }
}
