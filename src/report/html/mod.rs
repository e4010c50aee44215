//! The self-contained HTML report (`evalctl report`, `run --report`): one file with its CSS,
//! JavaScript and data inline, that opens from disk and makes no network request.
//!
//! The page itself lives in `template.html`, `report.css` and `report.js` beside this file,
//! embedded at build time. This module only builds the data (one JSON document, embedded in a
//! `<script type="application/json">` with every `<` escaped, so no text in it can close the
//! element) and fills the template. The page renders every string with `textContent`, never
//! uses a name from the data as a property of a plain object (`__proto__` is just a name), and
//! its Content-Security-Policy allows only the embedded script and style (by hash) and no fetch.
//! The answers of `run --generate` are plain HTML beside the data (see `generation`).

mod generation;
mod load;

use std::collections::HashMap;
use std::path::Path;

use base64::Engine as _;
use serde::Serialize;
use serde_json::{Map, Value};

use super::text::counted;
use crate::error::{bad_input, Problem};
use crate::input::Inputs;
use crate::record::{CallRecord, EvaluatorInfo};
use crate::report::{print, Document, Reporter, Styled, Summary};
use crate::text::{escape_chars, io_reason, markup_escape};
use generation::Matrix;

pub use load::load_results;

const TEMPLATE: &str = include_str!("template.html");
const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

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
struct SourceData {
    name: String,
    kind: SourceKind,
    /// Known for `run --report`; a results file does not record it.
    evaluator: Option<EvaluatorInfo>,
    /// Known for `run --report`; a results file does not record it.
    elapsed_ms: Option<f64>,
    /// The run summary, exactly as `run --format json` prints it, when one was made.
    summary: Option<Value>,
    /// The dataset and valset records, when known (`run --report`), for the per-example details.
    examples: Option<Examples>,
    /// `run --generate`: the summary's candidate × task model rows, drawn as plain HTML.
    #[serde(skip)]
    matrix: Option<Matrix>,
}

#[derive(Debug, Serialize)]
struct Examples {
    train: Vec<Value>,
    val: Vec<Value>,
}

/// One candidate of one source (under `run --generate`, one candidate × task model pair): what
/// the charts and the table filter call a candidate.
#[derive(Debug, Serialize)]
struct Series {
    source: usize,
    /// The candidate's id, or `ID × TASK_MODEL` for a pair.
    candidate: String,
    /// The candidate's id alone.
    #[serde(skip)]
    id: String,
    /// The candidate's text, when known (`run --report`).
    text: Option<String>,
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

/// The columns of each row in the data, in order (the page reads them by these names).
const COLUMNS: [&str; 15] = [
    "series",
    "split",
    "example_index",
    "example_line",
    "label",
    "score",
    "error_kind",
    "error_message",
    "side_info",
    "attempts",
    "latency_ms",
    "passed",
    "repeat",
    "cached",
    "example_id",
];

struct RowData<'a>(usize, &'a Row);

impl Serialize for RowData<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let RowData(series, row) = self;
        let (kind, message) = row
            .error
            .as_ref()
            .map(|(kind, message)| (kind.as_str(), message.as_str()))
            .unzip();
        (
            series,
            &row.split,
            row.example_index,
            row.example_line,
            &row.label,
            row.score,
            kind,
            message,
            &row.side_info,
            row.attempts,
            row.latency_ms,
            row.passed,
            row.repeat,
            row.cached,
            &row.example_id,
        )
            .serialize(serializer)
    }
}

/// A report being assembled: sources, their candidates, and every row.
#[derive(Debug, Default)]
pub struct Report {
    sources: Vec<SourceData>,
    series: Vec<Series>,
    series_index: HashMap<(usize, String), usize>,
    rows: Vec<(usize, Row)>,
}

impl Report {
    /// Start a source named `name` (a path as given) of `kind`; returns its index.
    fn add_source(&mut self, name: String, kind: SourceKind) -> usize {
        self.sources.push(SourceData {
            name,
            kind,
            evaluator: None,
            elapsed_ms: None,
            summary: None,
            examples: None,
            matrix: None,
        });
        self.sources.len() - 1
    }

    /// Add `row` of `candidate` to `source`.
    fn add_row(&mut self, source: usize, candidate: &str, row: Row) {
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
    fn add_run_results(
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
    fn example_order(&self) -> Vec<&(usize, Row)> {
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

    /// The whole page: the template filled with the style, the script, the data and the
    /// Content-Security-Policy that allows only them.
    pub fn render(&self, title: &str) -> anyhow::Result<String> {
        let rows: Vec<RowData> = self
            .example_order()
            .into_iter()
            .map(|(series, row)| RowData(*series, row))
            .collect();
        let data = serde_json::json!({
            "title": title,
            "generator": concat!("evalctl ", env!("CARGO_PKG_VERSION")),
            "sources": self.sources,
            "series": self.series,
            "columns": COLUMNS,
            "rows": rows,
        });
        // The answers of `run --generate`, and their style, only when there are some.
        let generation = generation::sections(self);
        let style = if generation.is_empty() {
            STYLE.to_string()
        } else {
            format!("{STYLE}{}", generation::STYLE)
        };
        let policy = format!(
            "default-src 'none'; script-src '{}'; style-src '{}'; img-src data:; \
             base-uri 'none'; form-action 'none'",
            sha256_source(SCRIPT),
            sha256_source(&style)
        );
        Ok(fill(
            TEMPLATE,
            &[
                ("{{CSP}}", &escape_text(&policy)),
                ("{{TITLE}}", &escape_text(title)),
                ("{{STYLE}}", &style),
                ("{{GENERATION}}", &generation),
                (
                    "{{DATA}}",
                    &script_safe_json(&serde_json::to_string(&data)?),
                ),
                ("{{SCRIPT}}", SCRIPT),
            ],
        ))
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

/// `template` with every placeholder replaced, in one pass from the start (a value is never
/// searched for placeholders, so data cannot inject one).
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut page =
        String::with_capacity(template.len() + values.iter().map(|v| v.1.len()).sum::<usize>());
    let mut rest = template;
    while let Some((at, (placeholder, value))) = values
        .iter()
        .filter_map(|pair| rest.find(pair.0).map(|at| (at, pair)))
        .min_by_key(|(at, _)| *at)
    {
        page.push_str(&rest[..at]);
        page.push_str(value);
        rest = &rest[at + placeholder.len()..];
    }
    page.push_str(rest);
    page
}

/// JSON text that is safe inside a `<script>` element: `<` (which could start `</script>` or
/// `<!--`), `>` and `&` as `\u` escapes, and the two line separators JavaScript once treated as
/// newlines. Outside strings JSON has none of these characters, so the value is unchanged.
fn script_safe_json(json: &str) -> String {
    escape_chars(json, |c| match c {
        '<' => Some("\\u003c"),
        '>' => Some("\\u003e"),
        '&' => Some("\\u0026"),
        '\u{2028}' => Some("\\u2028"),
        '\u{2029}' => Some("\\u2029"),
        _ => None,
    })
}

/// Text for an HTML element or a quoted attribute.
fn escape_text(text: &str) -> String {
    escape_chars(text, |c| match c {
        '\'' => Some("&#39;"),
        c => markup_escape(c),
    })
}

/// A CSP source allowing exactly the inline element whose content is `content`.
fn sha256_source(content: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, content.as_bytes());
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
    )
}

/// Check, before any work, that the report can be written to `path` (`flag` names the option
/// in the message): not a directory, and its directory exists.
pub fn check_writable(path: &Path, flag: &str) -> anyhow::Result<()> {
    let fail = |reason: String| bad_input(Problem::new(path.display().to_string(), reason));
    if path.as_os_str() == "-" {
        return Err(bad_input(Problem::new(
            flag,
            "'-' is not a file: the report is one HTML file; name it, e.g. report.html",
        )));
    }
    if path.is_dir() {
        return Err(fail(format!("cannot write {flag}: it is a directory")));
    }
    match path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(fail(format!(
            "cannot write {flag}: no directory {}",
            dir.display()
        ))),
        _ => Ok(()),
    }
}

/// What `evalctl report` prints once the report is written.
#[derive(Debug, Serialize)]
struct Written<'a> {
    ok: bool,
    report: &'a Path,
    files: usize,
    results: usize,
    errors: usize,
    bytes: usize,
}

/// Render `report` under `title`, write it to `path`, and print what was written (text: one
/// line; JSON: `{"ok", "report", "files", "results", "errors", "bytes"}`).
pub fn write_report(
    report: &Report,
    title: &str,
    path: &Path,
    files: usize,
    reporter: Reporter,
) -> anyhow::Result<()> {
    let written = write_page(report, title, path, files)?;
    print(&written, reporter)
}

/// What `evalctl report` wrote: one line, or the JSON document.
impl Document for Written<'_> {
    fn text(&self) -> Styled {
        Styled::from(format!(
            "{} from {} {}, {}\n",
            self.line(),
            self.files,
            if self.files == 1 { "file" } else { "files" },
            size(self.bytes)
        ))
    }
}

/// Render the report of the run that just finished (`run --report`) and write it to `path`:
/// the line that tells the user so, `wrote report.html: 60 results (4 failed), 12.3 kB`.
pub fn write_run_report(report: &Report, path: &Path) -> anyhow::Result<String> {
    let written = write_page(report, "evalctl run", path, 1)?;
    Ok(format!("{}, {}", written.line(), size(written.bytes)))
}

/// Render `report` under `title` and write it to `path`: what was written.
fn write_page<'a>(
    report: &Report,
    title: &str,
    path: &'a Path,
    files: usize,
) -> anyhow::Result<Written<'a>> {
    let page = report.render(title)?;
    write(path, &page)?;
    Ok(Written {
        ok: true,
        report: path,
        files,
        results: report.rows(),
        errors: report.errors(),
        bytes: page.len(),
    })
}

impl Written<'_> {
    /// `wrote PATH: N results (M failed)`.
    fn line(&self) -> String {
        format!(
            "wrote {}: {} ({} failed)",
            self.report.display(),
            counted(self.results, "result", "results"),
            self.errors
        )
    }
}

/// A byte count as people read it: `840 B`, `12.3 kB`, `4.1 MB`.
fn size(bytes: usize) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.1} kB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

/// Write the page to `path`, replacing it atomically (a failure leaves an earlier report as it
/// was) and readable by its owner only: a failure is evalctl's own (exit 4), since the path was
/// checked before the work.
fn write(path: &Path, page: &str) -> anyhow::Result<()> {
    crate::owner_only::replace(path, page.as_bytes()).map_err(|err| {
        crate::error::Fatal::Internal(format!(
            "{}: writing the report failed: {}",
            path.display(),
            io_reason(&err)
        ))
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_and_values_are_not_searched() {
        let filled = fill("a{{X}}b{{Y}}c", &[("{{X}}", "{{Y}}"), ("{{Y}}", "y")]);
        assert_eq!(filled, "a{{Y}}byc");
    }

    #[test]
    fn json_cannot_close_its_script_element() {
        let json = serde_json::to_string(&serde_json::json!({"t": "</script><!--&\u{2028}"}))
            .expect("serialises");
        let safe = script_safe_json(&json);
        assert!(!safe.contains('<') && !safe.contains('>') && !safe.contains('&'));
        let back: Value = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back["t"], "</script><!--&\u{2028}");
    }

    #[test]
    fn the_embedded_script_and_style_cannot_end_their_elements_early() {
        assert!(!SCRIPT.to_ascii_lowercase().contains("</script"));
        assert!(!STYLE.to_ascii_lowercase().contains("</style"));
        assert!(!generation::STYLE.to_ascii_lowercase().contains("</style"));
        for placeholder in [
            "{{CSP}}",
            "{{TITLE}}",
            "{{STYLE}}",
            "{{DATA}}",
            "{{SCRIPT}}",
            "{{GENERATION}}",
        ] {
            assert!(TEMPLATE.contains(placeholder), "{placeholder}");
        }
    }

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

    #[test]
    fn titles_are_text() {
        assert_eq!(
            escape_text("<b>\"x\" & 'y'"),
            "&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;"
        );
    }
}
