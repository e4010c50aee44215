//! The report's data: each source (a results file, or the run that `run --report` just made),
//! its candidates (series) and every result as a row of the per-example table, in example order.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::matrix::Matrix;
use crate::input::Inputs;
use crate::record::{CallRecord, EvaluatorInfo};
use crate::report::{Summary, VerdictGate};

/// What the data calls each kind of input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// `run --output` result lines.
    Run,
    /// `tasks score --output` lines.
    Tasks,
    /// `spec score` evaluation records.
    Spec,
}

/// One results file (or the run that `run --report` just made).
#[derive(Debug, Serialize)]
pub(super) struct SourceData {
    pub(super) name: String,
    pub(super) kind: SourceKind,
    /// Known for `run --report`; a results file does not record it.
    pub(super) evaluator: Option<EvaluatorInfo>,
    /// Known for `run --report`; a results file does not record it.
    pub(super) elapsed_ms: Option<f64>,
    /// The run summary, exactly as `run --format json` prints it, when one was made.
    pub(super) summary: Option<Value>,
    /// The dataset and valset records, when known (`run --report`), for the per-example details.
    pub(super) examples: Option<Examples>,
    /// `run --generate`: the summary's candidate × task model rows, drawn as plain HTML.
    #[serde(skip)]
    pub(super) matrix: Option<Matrix>,
    /// `spec score` records: how many runs were scored and how many did not pass.
    #[serde(skip)]
    pub(super) verdicts: Option<VerdictGate>,
}

#[derive(Debug, Serialize)]
pub(super) struct Examples {
    pub(super) train: Vec<Value>,
    pub(super) val: Vec<Value>,
}

/// One candidate of one source (under `run --generate`, one candidate × task model pair): what
/// the charts and the table filter call a candidate.
#[derive(Debug, Serialize)]
pub(super) struct Series {
    pub(super) source: usize,
    /// The candidate's id, or `ID × TASK_MODEL` for a pair.
    pub(super) candidate: String,
    /// The candidate's id alone.
    #[serde(skip)]
    pub(super) id: String,
    /// The candidate's text, when known (`run --report`).
    pub(super) text: Option<String>,
}

/// One result (a call, a task or a scored run), as a row of the per-example table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// `single`, `train`, `val`, a task category, ...
    pub split: String,
    /// 0-based index of the example in its split.
    pub example_index: Option<usize>,
    /// 1-based line of the example (or of the result) in its file.
    pub example_line: Option<usize>,
    /// The example's `id` field, when it has one.
    pub example_id: Option<String>,
    /// What pairs this row with another candidate's for the scatter (a task id, a run id);
    /// `None` pairs by split, example and repeat.
    pub label: Option<String>,
    /// The score, or `None` when there is none.
    pub score: Option<f64>,
    /// The error kind and message of a failed result.
    pub error: Option<(String, String)>,
    /// The evaluator's other keys (reasoning, judge dimensions, check results, ...).
    pub side_info: Map<String, Value>,
    /// Attempts made.
    pub attempts: Option<u64>,
    /// Wall time in milliseconds.
    pub latency_ms: Option<f64>,
    /// A pass verdict, when the evaluator gives one.
    pub passed: Option<bool>,
    /// The repeat index (`--repeat`).
    pub repeat: Option<u64>,
    /// Served from the cache.
    pub cached: bool,
    /// `run --generate`: the task model that answered.
    pub task_model: Option<String>,
    /// `run --generate`: the task model's answer.
    pub output: Option<String>,
}

/// A report being assembled: sources, their candidates, and every row.
#[derive(Debug, Default)]
pub struct Report {
    pub(super) sources: Vec<SourceData>,
    pub(super) series: Vec<Series>,
    series_index: HashMap<(usize, String), usize>,
    pub(super) rows: Vec<(usize, Row)>,
}

impl Report {
    /// Start a source named `name` (a path as given) of `kind`; returns its index.
    pub(super) fn add_source(&mut self, name: String, kind: SourceKind) -> usize {
        self.sources.push(SourceData {
            name,
            kind,
            evaluator: None,
            elapsed_ms: None,
            summary: None,
            examples: None,
            matrix: None,
            verdicts: None,
        });
        self.sources.len() - 1
    }

    /// Add `row` of `candidate` to `source`.
    pub(super) fn add_row(&mut self, source: usize, candidate: &str, row: Row) {
        let series = self.series_of(source, candidate, row.task_model.as_deref());
        self.rows.push((series, row));
    }

    /// The series of `candidate` (answered by `task_model`) in `source`, made (after the ones
    /// made so far) if it is new.
    fn series_of(&mut self, source: usize, candidate: &str, task_model: Option<&str>) -> usize {
        let name = match task_model {
            Some(model) => format!("{candidate} × {model}"),
            None => candidate.to_string(),
        };
        let next = self.series.len();
        let series = *self
            .series_index
            .entry((source, name.clone()))
            .or_insert(next);
        if series == next {
            self.series.push(Series {
                source,
                candidate: name,
                id: candidate.to_string(),
                text: None,
            });
        }
        series
    }

    /// How many rows (results) the report holds.
    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    /// How many runs of `spec score` records did not pass, of how many; `None` when no source
    /// holds such records.
    pub fn not_passed(&self) -> Option<(usize, usize)> {
        self.sources
            .iter()
            .filter_map(|source| source.verdicts.as_ref())
            .map(|verdicts| (verdicts.failed, verdicts.runs))
            .reduce(|(failed, runs), (more_failed, more_runs)| {
                (failed + more_failed, runs + more_runs)
            })
    }

    /// How many rows are failed results.
    pub fn errors(&self) -> usize {
        self.rows
            .iter()
            .filter(|(_, row)| row.error.is_some())
            .count()
    }

    /// Add the results `records` of a results file `name` of `kind`, with the summary `run
    /// --format json` prints over them. A task's row is in its category (its split in the
    /// page); tasks and spec runs made no evaluator call, so their rows have no attempts or time.
    pub(super) fn add_run_results(
        &mut self,
        name: String,
        kind: SourceKind,
        summary: &Summary,
        records: &[CallRecord],
    ) {
        let source = self.add_source(name, kind);
        // Candidates in the run's order (and task models in the summary's), not the order
        // their first calls completed in.
        let model_rank = |record: &CallRecord| {
            summary
                .candidates
                .iter()
                .position(|row| row.task_model.is_some() && row.task_model == record.task_model)
        };
        let mut planned: Vec<&CallRecord> = records.iter().collect();
        planned.sort_by_key(|record| (record.candidate_index, model_rank(record)));
        for record in &planned {
            self.series_of(source, &record.candidate_id, record.task_model.as_deref());
        }
        for record in records {
            let mut row = Row::from(record);
            if kind != SourceKind::Run {
                (row.attempts, row.latency_ms) = (None, None);
            }
            if let Some(Value::String(category)) = record.side_info.get("category") {
                if kind == SourceKind::Tasks {
                    row.split.clone_from(category);
                }
            }
            self.add_row(source, &record.candidate_id, row);
        }
        self.sources[source].summary = serde_json::to_value(summary).ok();
        self.sources[source]
            .verdicts
            .clone_from(&summary.gates.verdicts);
        let order: Vec<&str> = planned
            .iter()
            .map(|record| record.candidate_id.as_str())
            .collect();
        self.sources[source].matrix = Matrix::of(&summary.candidates, &order);
        // Lines evalctl wrote name the run's evaluator, and so does the summary over them.
        let named = records.iter().any(|record| record.run.is_some());
        self.sources[source].evaluator = named.then(|| summary.evaluator.clone());
    }

    /// The report of the run that just finished (`run --report`): its summary, its records,
    /// and its inputs (candidate texts and example records).
    pub fn of_run(summary: &Summary, records: &[CallRecord], inputs: &Inputs) -> Report {
        let mut report = Report::default();
        report.add_run_results("this run".to_string(), SourceKind::Run, summary, records);
        let data = &mut report.sources[0];
        data.evaluator = Some(summary.evaluator.clone());
        data.elapsed_ms = summary.elapsed_ms;
        data.examples = Some(Examples {
            train: inputs.dataset.iter().flatten().map(record_value).collect(),
            val: inputs.valset.iter().flatten().map(record_value).collect(),
        });
        for series in &mut report.series {
            series.text = inputs
                .candidates
                .iter()
                .find(|candidate| candidate.id == series.id)
                .map(|candidate| candidate.text.clone());
        }
        report
    }

    /// The rows in example order, whatever order they were written in (a run's results file
    /// lists calls as they completed): file by file; within a file by split (a run's `single`,
    /// `train`, `val`; other splits, such as task categories, in the order they first appear),
    /// then example index, then repeat, then candidate. Rows with no example index (tasks, spec
    /// runs) keep their order in the file.
    pub(super) fn example_order(&self) -> Vec<&(usize, Row)> {
        let mut first_seen: HashMap<(usize, &str), usize> = HashMap::new();
        for (series, row) in &self.rows {
            let source = self.series[*series].source;
            let next = first_seen.len();
            first_seen.entry((source, &row.split)).or_insert(next);
        }
        let split_rank = |source: usize, split: &str| {
            let known = ["single", "train", "val"]
                .iter()
                .position(|name| *name == split);
            match known {
                Some(rank) if self.sources[source].kind == SourceKind::Run => rank,
                _ => 3 + first_seen[&(source, split)],
            }
        };
        let mut ordered: Vec<&(usize, Row)> = self.rows.iter().collect();
        ordered.sort_by_key(|(series, row)| {
            let source = self.series[*series].source;
            (
                source,
                split_rank(source, &row.split),
                row.example_index,
                row.repeat,
                *series,
            )
        });
        ordered
    }
}

fn record_value(record: &crate::input::Record) -> Value {
    record.value.clone()
}

impl From<&CallRecord> for Row {
    fn from(record: &CallRecord) -> Row {
        Row {
            split: serde_json::to_value(record.split)
                .ok()
                .and_then(|split| split.as_str().map(str::to_string))
                .unwrap_or_default(),
            example_index: record.example_index,
            example_line: record.example_line,
            example_id: record.example_id.clone(),
            label: None,
            score: Some(record.score),
            error: record
                .error
                .as_ref()
                .map(|error| (error.kind.as_str().to_string(), error.message.clone())),
            side_info: record.side_info.clone(),
            attempts: Some(u64::from(record.attempts)),
            latency_ms: Some(record.latency_ms),
            passed: record.passed,
            repeat: record.repeat.map(u64::from),
            cached: record.cached,
            task_model: record.task_model.clone(),
            output: record.output.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(split: &str, example_index: Option<usize>, repeat: Option<u64>) -> Row {
        Row {
            split: split.to_string(),
            example_index,
            example_line: None,
            example_id: None,
            label: None,
            score: Some(1.0),
            error: None,
            side_info: Map::new(),
            attempts: None,
            latency_ms: None,
            passed: None,
            repeat,
            cached: false,
            task_model: None,
            output: None,
        }
    }

    #[test]
    fn rows_are_rendered_in_example_order_not_completion_order() {
        let mut report = Report::default();
        let run = report.add_source("run.jsonl".to_string(), SourceKind::Run);
        for (candidate, split, index, repeat) in [
            ("b", "val", 0, 0),
            ("a", "train", 2, 0),
            ("b", "train", 0, 1),
            ("a", "train", 0, 1),
            ("a", "val", 0, 0),
            ("b", "train", 0, 0),
            ("a", "train", 0, 0),
        ] {
            report.add_row(run, candidate, row(split, Some(index), Some(repeat)));
        }
        let tasks = report.add_source("tasks.jsonl".to_string(), SourceKind::Tasks);
        for category in ["math", "val", "math", "code"] {
            report.add_row(tasks, "tasks", row(category, None, None));
        }
        let order: Vec<(String, &str, Option<usize>, Option<u64>)> = report
            .example_order()
            .into_iter()
            .map(|(series, row)| {
                let series = &report.series[*series];
                let name = format!("{}:{}", series.source, series.candidate);
                (name, row.split.as_str(), row.example_index, row.repeat)
            })
            .collect();
        let expected = [
            ("0:b", "train", Some(0), Some(0)),
            ("0:a", "train", Some(0), Some(0)),
            ("0:b", "train", Some(0), Some(1)),
            ("0:a", "train", Some(0), Some(1)),
            ("0:a", "train", Some(2), Some(0)),
            ("0:b", "val", Some(0), Some(0)),
            ("0:a", "val", Some(0), Some(0)),
            ("1:tasks", "math", None, None),
            ("1:tasks", "math", None, None),
            ("1:tasks", "val", None, None),
            ("1:tasks", "code", None, None),
        ]
        .map(|(name, split, index, repeat)| (name.to_string(), split, index, repeat));
        assert_eq!(order, expected);
    }
}
