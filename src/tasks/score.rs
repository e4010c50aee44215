//! Scoring model outputs against tasks: read the outputs JSONL, post-process each output with its
//! task's rule, score it with its task's metric, and aggregate per category and per metric.
//! Tasks without an output and outputs naming no task are reported, never dropped. Each task's
//! `--output` line carries the result-line members beside its own ([`ScoreSummary::lines`]).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::convert::Infallible;

use serde::Serialize;
use serde_json::Value;

use super::code_exec::{CodeOutcome, CodeRunner};
use super::spec::{Category, MetricName, PostProcess, Task};
use super::validate::TaskFile;
use crate::error::{bad_input, invalid, Fatal, Problem};
use crate::input::strict;
use crate::input::Source;
use crate::input::{jsonl_lines, parse_object_line};
use crate::pool;
use crate::protocol::{CallError, ErrorKind};
use crate::record::{EvaluatorInfo, RunInfo, ScoredLine, ScoredRun, SharedMembers, Split};
use crate::sandbox::LimitHit;
use crate::scoring::{bleu_4, exact_match, max_over, rouge_l, squad_f1};

/// One model output, as read from the outputs file.
#[derive(Debug, Clone)]
pub struct ModelOutput {
    /// The 1-based line of the outputs file.
    pub line: usize,
    /// The task it answers.
    pub task_id: String,
    /// The raw model output.
    pub output: String,
}

/// Read `{"task_id", "output"}` lines. Any unreadable line, missing or non-string field, or task
/// id answered twice is a bad-input error listing every problem, in line order. Unlike a
/// dataset, an outputs file may hold any number of lines, none included: then every task is
/// missing.
pub fn read_outputs(source: &Source) -> anyhow::Result<(String, Vec<ModelOutput>)> {
    let bytes = source.read().map_err(bad_input)?;
    let (display, outputs) = outputs_in(source.display(), &bytes, |_| Ok(()))?;
    Ok((
        display,
        outputs.into_iter().map(|(output, ())| output).collect(),
    ))
}

/// [`read_outputs`] of the file `display` whose content is `bytes`, with `more` reading what
/// else each line's object holds (`tasks run`'s journal: the key and usage); its error is the
/// line's problem at a field: `(field, reason)`.
pub fn outputs_in<T>(
    display: String,
    bytes: &[u8],
    mut more: impl FnMut(&Value) -> Result<T, (&'static str, String)>,
) -> anyhow::Result<(String, Vec<(ModelOutput, T)>)> {
    // One pass over the lines in order, so problems come out in line order.
    let mut problems = Vec::new();
    let mut outputs = Vec::new();
    let mut first_line: HashMap<String, usize> = HashMap::new();
    for (line, text) in jsonl_lines(bytes) {
        let problem = |message| Problem::at_line(display.as_str(), line, message);
        // (An output line that gives a member twice says two things at once, and is refused.)
        let record = match text.and_then(parse_object_line) {
            Ok(record) => record,
            Err(reason) => {
                problems.push(problem(reason));
                continue;
            }
        };
        let field = |name: &str| match record.get(name).map(strict::as_str) {
            Some(Ok(text)) => Ok(text.to_string()),
            Some(Err(reason)) => Err(problem(reason).at(name)),
            None => Err(problem(strict::missing_key(name))),
        };
        let more = more(&record).map_err(|(name, reason)| problem(reason).at(name));
        // An id answered twice is named whether or not either answer is well formed.
        let task_id = field("task_id");
        let repeated =
            task_id
                .as_ref()
                .ok()
                .and_then(|task_id| match first_line.entry(task_id.clone()) {
                    Entry::Occupied(first) => Some(problem(format!(
                        "task {task_id:?} already has an output on line {}",
                        first.get()
                    ))),
                    Entry::Vacant(slot) => {
                        slot.insert(line);
                        None
                    }
                });
        match (task_id, field("output"), more, repeated) {
            (Ok(task_id), Ok(output), Ok(more), None) => {
                let output = ModelOutput {
                    line,
                    task_id,
                    output,
                };
                outputs.push((output, more));
            }
            (id, output, more, repeated) => problems.extend(
                [id.err(), repeated, output.err(), more.err()]
                    .into_iter()
                    .flatten(),
            ),
        }
    }
    if problems.is_empty() {
        Ok((display, outputs))
    } else {
        Err(invalid(problems))
    }
}

/// Whether a task was scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The task had an output and was scored.
    Scored,
    /// No output named the task; it scores 0 in aggregates.
    Missing,
}

/// The per-task result line (`--output FILE.jsonl`).
#[derive(Debug, Clone, Serialize)]
pub struct TaskScore {
    /// The task.
    pub task_id: String,
    /// Its category.
    pub category: Category,
    /// Its metric.
    pub metric_name: MetricName,
    /// Its post-process rule.
    pub post_process: PostProcess,
    /// Scored or missing.
    pub status: Status,
    /// The score in [0, 1]; `null` when missing.
    pub score: Option<f64>,
    /// The output after post-processing; `null` when missing.
    pub processed_output: Option<String>,
    /// For `code_exec`: assertions passed and run, and the first failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assertions: Option<Assertions>,
    /// For `code_exec`: how the code ran (`namespaces`, or `none` with `--unsafe-code-exec`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<&'static str>,
}

/// The assertion counts of a `code_exec` task.
#[derive(Debug, Clone, Serialize)]
pub struct Assertions {
    /// Assertions that passed.
    pub passed: usize,
    /// Assertions run.
    pub total: usize,
    /// Why the first failing assertion failed.
    pub first_failure: Option<String>,
    /// How many assertions each limit stopped (`timeout`, `memory_limit`, …).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<LimitHit, usize>,
}

impl From<CodeOutcome> for Assertions {
    fn from(outcome: CodeOutcome) -> Self {
        Assertions {
            passed: outcome.passed,
            total: outcome.total,
            first_failure: outcome.first_failure,
            limits: outcome.limits,
        }
    }
}

/// Score one raw output against its task: post-process, then the metric (best target, or the
/// fraction of passing assertions for `code_exec`, run by `code`, which the caller prepared for
/// any suite with a `code_exec` task).
pub fn score_task(
    task: &Task,
    output: &str,
    code: Option<&CodeRunner>,
) -> anyhow::Result<TaskScore> {
    let processed = task.post_process.apply(output);
    let text = |metric: fn(&str, &str) -> f64| {
        crate::scoring::Outcome::scored(max_over(metric, &processed, &task.targets))
            .with_detail(None)
    };
    let outcome = match task.metric {
        MetricName::ExactMatch | MetricName::Accuracy => text(exact_match),
        MetricName::F1 => text(squad_f1),
        MetricName::Bleu4 => text(bleu_4),
        MetricName::RougeL => text(rouge_l),
        MetricName::CodeExec => {
            let code = code
                .ok_or_else(|| Fatal::Internal("code_exec: no code runner was prepared".into()))?;
            code.run_assertions(&processed, &task.targets)?
                .map_detail(|ran| Some((Assertions::from(ran), code.isolation().label())))
        }
    };
    // The one mapping of a metric's outcome to the result line.
    let (assertions, sandbox) = outcome.detail.unzip();
    Ok(TaskScore {
        status: Status::Scored,
        score: Some(outcome.score),
        processed_output: Some(processed),
        assertions,
        sandbox,
        ..missing(task)
    })
}

/// The result line of a task no output answered.
fn missing(task: &Task) -> TaskScore {
    TaskScore {
        task_id: task.task_id.clone(),
        category: task.category,
        metric_name: task.metric,
        post_process: task.post_process,
        status: Status::Missing,
        score: None,
        processed_output: None,
        assertions: None,
        sandbox: None,
    }
}

/// Counts, mean and standard error of a group of tasks; in JSON
/// `{"tasks", "scored", "missing", "mean", "stderr"}`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Aggregate {
    /// Tasks in the group.
    pub tasks: usize,
    /// Tasks scored.
    pub scored: usize,
    /// Tasks without an output.
    pub missing: usize,
    /// Mean score over all tasks of the group, a missing task counting as 0 (reported as null
    /// for a group of no task: see [`Aggregate::mean`]).
    mean: f64,
    /// Sum of the scores, missing tasks adding nothing.
    sum: f64,
    /// Each task's score in file order, a missing task's as 0: what the standard error is of.
    scores: Vec<f64>,
}

impl Aggregate {
    fn add(&mut self, score: &TaskScore) {
        self.tasks += 1;
        match score.score {
            Some(value) => {
                self.scored += 1;
                self.sum += value;
            }
            None => self.missing += 1,
        }
        self.scores.push(score.score.unwrap_or(0.0));
        self.mean = self.sum / self.tasks as f64;
    }

    /// The mean score, a missing task counting as 0; `None` for a group of no task (every task
    /// invalid, or an interrupted `tasks run` that generated none), which has no mean.
    pub fn mean(&self) -> Option<f64> {
        (self.tasks > 0).then_some(self.mean)
    }

    /// The standard error of `mean` over the group's tasks; `None` with fewer than two.
    pub fn stderr(&self) -> Option<f64> {
        crate::interval::standard_error(&self.scores)
    }
}

impl Serialize for Aggregate {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("Aggregate", 5)?;
        out.serialize_field("tasks", &self.tasks)?;
        out.serialize_field("scored", &self.scored)?;
        out.serialize_field("missing", &self.missing)?;
        out.serialize_field("mean", &self.mean())?;
        out.serialize_field("stderr", &self.stderr())?;
        out.end()
    }
}

/// An output that scored no task: its id names no task at all, or a task skipped as invalid.
#[derive(Debug, Clone, Serialize)]
pub struct UnmatchedOutput {
    /// Its line in the outputs file.
    pub line: usize,
    /// The task id it names.
    pub task_id: String,
}

/// Everything `tasks score` reports.
#[derive(Debug, Clone, Serialize)]
pub struct ScoreSummary {
    /// The tasks file as given.
    pub tasks_file: String,
    /// The outputs file as given (`<stdin>` for `-`).
    pub outputs_file: String,
    /// All tasks.
    pub overall: Aggregate,
    /// Per category, in vocabulary order (categories without tasks are left out).
    pub by_category: BTreeMap<Category, Aggregate>,
    /// Per metric, in vocabulary order.
    pub by_metric: BTreeMap<MetricName, Aggregate>,
    /// Ids of the tasks without an output, in file order.
    pub missing: Vec<String>,
    /// Outputs naming no task in the tasks file.
    pub unknown_outputs: Vec<UnmatchedOutput>,
    /// Outputs naming a task skipped as invalid (`--allow-bad-tasks`); ignored, not an error.
    pub ignored_outputs: Vec<UnmatchedOutput>,
    /// The per-task results (not part of the JSON summary; see `--output`).
    #[serde(skip)]
    pub tasks: Vec<TaskScore>,
    /// `code_exec` assertions stopped by each limit, over all tasks (left out when none was).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub code_exec_limits: BTreeMap<LimitHit, usize>,
    /// A signal stopped scoring (or, under `tasks run`, the generation): the aggregates cover
    /// the tasks scored before it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl ScoreSummary {
    /// The `run` of this summary's `--output` lines, written by `command` (`tasks score`,
    /// `tasks run`) of a plan of `tasks` (in order), every one of which an uninterrupted run
    /// scores: the evaluator is the tasks file, whose ids, categories, metrics, rules and targets
    /// decide the scores, and the plan has one call per task, so that the lines of an
    /// interrupted run are read back as partial.
    pub fn run_info(&self, command: &'static str, tasks: &[Task]) -> anyhow::Result<RunInfo> {
        let definition: Vec<_> = tasks
            .iter()
            .map(|task| {
                let (id, targets) = (&task.task_id, &task.targets);
                (id, task.category, task.metric, task.post_process, targets)
            })
            .collect();
        let evaluator = EvaluatorInfo {
            kind: "tasks".to_string(),
            target: self.tasks_file.clone(),
        };
        let mut run = ScoredRun::new(command, evaluator, &serde_json::to_vec(&definition)?);
        let by_id: HashMap<&str, &Task> = (tasks.iter())
            .map(|task| (task.task_id.as_str(), task))
            .collect();
        for score in &self.tasks {
            // A task's example is what its model is asked: the few-shot pairs and the prompt.
            let task = by_id.get(score.task_id.as_str());
            let shots = (task.iter().flat_map(|task| &task.few_shot_examples))
                .flat_map(|shot| [shot.prompt.as_str(), shot.completion.as_str()]);
            let asked = shots.chain(task.map(|task| task.prompt.as_str()));
            run.add(&score.task_id, asked, &serde_json::to_vec(score)?);
        }
        Ok(run.finish(&self.outputs_file, tasks.len()))
    }

    /// Each task's `--output` line: its score, then the result-line members of `run` (see
    /// [`ScoreSummary::run_info`]). The candidate is the outputs file (`tasks score`) or the
    /// model (`tasks run`); a task without an output is an error, `failed` (the model's, under
    /// `tasks run`) or `missing_output`.
    pub fn lines<'a>(
        &'a self,
        run: &'a RunInfo,
        failed: &'a HashMap<&str, &CallError>,
    ) -> impl Iterator<Item = ScoredLine<'a, TaskScore>> {
        self.tasks
            .iter()
            .enumerate()
            .map(move |(index, score)| ScoredLine {
                own: score,
                shared: SharedMembers {
                    candidate_id: &self.outputs_file,
                    candidate_index: 0,
                    split: Split::Single,
                    example_index: index,
                    example_line: None,
                    example_id: Some(score.task_id.clone()),
                    score: None,
                    error: (score.status == Status::Missing).then(|| {
                        failed.get(score.task_id.as_str()).map_or_else(
                            || {
                                CallError::new(
                                    ErrorKind::MissingOutput,
                                    format!("no output for task {}", score.task_id),
                                )
                            },
                            |error| (*error).clone(),
                        )
                    }),
                    run: Some(run),
                },
            })
    }
}

/// Each task's score against its output (or as missing), in task order, on the worker pool
/// (one task a job when code runs: a `code_exec` task runs interpreter processes that mostly
/// wait). `None` for a task not reached because an interruption was requested.
fn score_in_parallel(
    tasks: &[Task],
    by_id: &HashMap<&str, &ModelOutput>,
    code: Option<&CodeRunner>,
) -> Vec<Option<anyhow::Result<TaskScore>>> {
    let per_job = if code.is_some() { 1 } else { pool::BATCH };
    let score = |task: &Task| {
        if crate::interrupt::interrupt_requested() {
            return None;
        }
        Some(match by_id.get(task.task_id.as_str()) {
            Some(output) => score_task(task, &output.output, code),
            None => Ok(missing(task)),
        })
    };
    let mut scores = Vec::with_capacity(tasks.len());
    let done: Result<(), Infallible> = pool::ordered(
        pool::workers(),
        tasks.chunks(per_job),
        |job| job.iter().map(score).collect::<Vec<_>>(),
        |scored| {
            scores.extend(scored);
            Ok(())
        },
    );
    match done {
        Ok(()) => scores,
    }
}

/// Whether scoring `outputs` against `file` runs code: a `code_exec` task has an output. The
/// caller then prepares a [`CodeRunner`] before anything else happens.
pub fn runs_code(file: &TaskFile, outputs: &[ModelOutput]) -> bool {
    let answered: HashSet<&str> = outputs
        .iter()
        .map(|output| output.task_id.as_str())
        .collect();
    file.tasks
        .iter()
        .any(|task| task.metric == MetricName::CodeExec && answered.contains(task.task_id.as_str()))
}

/// Score every valid task of `file` against its output; `code` runs the `code_exec` tasks.
pub fn score_all(
    file: &TaskFile,
    outputs_file: String,
    outputs: Vec<ModelOutput>,
    code: Option<&CodeRunner>,
) -> anyhow::Result<ScoreSummary> {
    let tasks = &file.tasks;
    let by_id: HashMap<&str, &ModelOutput> = outputs
        .iter()
        .map(|output| (output.task_id.as_str(), output))
        .collect();
    let scores = score_in_parallel(tasks, &by_id, code);
    let mut summary = ScoreSummary {
        tasks_file: file.display.clone(),
        outputs_file,
        overall: Aggregate::default(),
        by_category: BTreeMap::new(),
        by_metric: BTreeMap::new(),
        missing: Vec::new(),
        unknown_outputs: Vec::new(),
        ignored_outputs: Vec::new(),
        tasks: Vec::with_capacity(tasks.len()),
        code_exec_limits: BTreeMap::new(),
        interrupted: false,
    };
    for (task, scored) in tasks.iter().zip(scores) {
        let Some(scored) = scored else {
            // Not reached: an interruption stopped the scoring.
            summary.interrupted = true;
            return Ok(summary);
        };
        let result = match scored {
            Err(error) if matches!(error.downcast_ref(), Some(Fatal::Interrupted(_))) => {
                summary.interrupted = true;
                return Ok(summary);
            }
            Err(error) => return Err(error),
            Ok(result) if result.status == Status::Missing => {
                summary.missing.push(task.task_id.clone());
                result
            }
            Ok(result) => result,
        };
        summary.overall.add(&result);
        for (limit, count) in result.assertions.iter().flat_map(|a| &a.limits) {
            *summary.code_exec_limits.entry(*limit).or_default() += count;
        }
        summary
            .by_category
            .entry(task.category)
            .or_default()
            .add(&result);
        summary
            .by_metric
            .entry(task.metric)
            .or_default()
            .add(&result);
        summary.tasks.push(result);
    }
    let known: HashSet<&str> = tasks.iter().map(|task| task.task_id.as_str()).collect();
    for output in outputs
        .iter()
        .filter(|output| !known.contains(output.task_id.as_str()))
    {
        let unmatched = UnmatchedOutput {
            line: output.line,
            task_id: output.task_id.clone(),
        };
        if file.skipped_ids.contains(&output.task_id) {
            summary.ignored_outputs.push(unmatched);
        } else {
            summary.unknown_outputs.push(unmatched);
        }
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::validate::validate_bytes;

    fn task(line: &str) -> Task {
        let mut file = validate_bytes("t".into(), line.as_bytes());
        assert!(file.errors.is_empty(), "{:?}", file.errors);
        file.tasks.remove(0)
    }

    #[test]
    fn post_process_then_best_target() {
        let mcq = task(
            r#"{"task_id":"m","category":"mcq","prompt":"Pick","targets":["C"],"metric_name":"accuracy","post_process":"extract_letter"}"#,
        );
        let result = score_task(&mcq, "The answer is (C).", None).unwrap();
        assert_eq!(result.score, Some(1.0));
        assert_eq!(result.processed_output.as_deref(), Some("C"));
        let summary = task(
            r#"{"task_id":"s","category":"summary","prompt":"Sum","targets":["cats sleep a lot","dogs bark"],"metric_name":"f1","post_process":"lower"}"#,
        );
        let result = score_task(&summary, "Dogs BARK", None).unwrap();
        assert_eq!(result.score, Some(1.0));
    }

    #[test]
    fn aggregates_count_missing_as_zero() {
        let good = r#"{"task_id":"a","category":"arithmetic","prompt":"1+1","targets":["2"],"metric_name":"exact_match","post_process":"none"}"#;
        let text = format!(
            "{good}\n{}\n{}\n",
            good.replace(r#""a""#, r#""b""#),
            good.replace(r#""a""#, r#""c""#)
                .replace("arithmetic", "poetry")
        );
        let file = validate_bytes("t".into(), text.as_bytes());
        assert_eq!(file.tasks.len(), 2);
        let output = |line, task_id: &str| ModelOutput {
            line,
            task_id: task_id.into(),
            output: "2".into(),
        };
        let outputs = vec![output(1, "a"), output(2, "zz"), output(3, "c")];
        let summary = score_all(&file, "o".into(), outputs, None).unwrap();
        assert_eq!(summary.overall.tasks, 2);
        assert_eq!(summary.overall.scored, 1);
        assert_eq!(summary.overall.missing, 1);
        assert_eq!(summary.overall.mean(), Some(0.5));
        // Scores 1 and 0 (missing): sample deviation √0.5 over √2.
        assert_eq!(summary.overall.stderr(), Some(0.5));
        assert_eq!(summary.missing, ["b"]);
        assert_eq!(summary.unknown_outputs.len(), 1);
        assert_eq!(summary.unknown_outputs[0].task_id, "zz");
        assert_eq!(summary.ignored_outputs.len(), 1);
        assert_eq!(summary.ignored_outputs[0].task_id, "c");
        assert_eq!(summary.by_category[&Category::Arithmetic].mean(), Some(0.5));
    }
}
