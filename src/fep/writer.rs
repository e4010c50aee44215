//! Writing an EvaluationRunResult (FEP 4.2) as a stream: the header, then each test case result
//! (FEP 4.1) as soon as it is evaluated, one per line inside `results`, then `completed_at`,
//! `status` and `summary`. The document is one valid JSON object whatever its size, and memory
//! does not grow with the number of test cases.
//!
//! The [`Layout::Lines`] layout (NDJSON: `fep evaluate --stream`, `serve`'s streaming) writes each
//! test case result as a line of its own, flushed as soon as it is evaluated, and then one line
//! with the rest of the run result (`evaluation_id`, `started_at`, `experiment`, `completed_at`,
//! `status`, `summary`).

use std::io::{self, Write};
use std::sync::Mutex;

use serde::Serialize;
use serde_json::Value;

use crate::checks::{CaseAnswers, CaseClock, Check, CheckResult, Status, Timestamp};

/// Check counts of a test case (FEP 4.1 `summary`) or of a whole run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CheckCounts {
    /// Checks run.
    pub total_checks: usize,
    /// Checks with status `completed`.
    pub completed_checks: usize,
    /// Checks with status `error`.
    pub error_checks: usize,
    /// Checks with status `skip`.
    pub skipped_checks: usize,
}

impl CheckCounts {
    fn add(&mut self, other: CheckCounts) {
        self.total_checks += other.total_checks;
        self.completed_checks += other.completed_checks;
        self.error_checks += other.error_checks;
        self.skipped_checks += other.skipped_checks;
    }

    fn count(&mut self, status: Status) {
        self.total_checks += 1;
        match status {
            Status::Completed => self.completed_checks += 1,
            Status::Error => self.error_checks += 1,
            Status::Skip => self.skipped_checks += 1,
        }
    }
}

/// The run's `summary`: test cases by status, and every check of the run by status.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RunSummary {
    /// Test cases evaluated.
    pub total_test_cases: usize,
    /// Test cases whose status is `completed`.
    pub completed_test_cases: usize,
    /// Test cases whose status is `error`.
    pub error_test_cases: usize,
    /// Test cases whose status is `skip`.
    pub skipped_test_cases: usize,
    /// All checks of the run.
    #[serde(flatten)]
    pub checks: CheckCounts,
}

impl RunSummary {
    /// Count one test case of `status` whose checks counted `counts`.
    fn record(&mut self, status: Status, counts: CheckCounts) {
        self.total_test_cases += 1;
        match status {
            Status::Completed => self.completed_test_cases += 1,
            Status::Error => self.error_test_cases += 1,
            Status::Skip => self.skipped_test_cases += 1,
        }
        self.checks.add(counts);
    }

    /// Add the counts of `other`.
    fn merge(&mut self, other: &RunSummary) {
        self.total_test_cases += other.total_test_cases;
        self.completed_test_cases += other.completed_test_cases;
        self.error_test_cases += other.error_test_cases;
        self.skipped_test_cases += other.skipped_test_cases;
        self.checks.add(other.checks);
    }
}

#[derive(Serialize)]
struct TestCaseResult<'a> {
    status: Status,
    execution_context: &'a Value,
    check_results: &'a [CheckResult<'a>],
    summary: CheckCounts,
}

/// How the run result is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// One EvaluationRunResult JSON document.
    #[default]
    Document,
    /// NDJSON: a line per test case result as it completes, then the run summary line.
    Lines,
}

/// An EvaluationRunResult being written.
pub struct RunWriter<W: Write> {
    out: W,
    layout: Layout,
    evaluation_id: String,
    started_at: String,
    /// The experiment, kept for the summary line of [`Layout::Lines`].
    experiment: Option<Value>,
    summary: RunSummary,
    status: Status,
}

impl<W: Write> RunWriter<W> {
    /// Start the document: `evaluation_id`, `started_at` (now), `experiment` (when given),
    /// `results`. [`Layout::Lines`] writes nothing yet.
    pub fn begin(out: W, experiment: Option<&Value>, layout: Layout) -> io::Result<Self> {
        RunWriter::begin_at(out, experiment, layout, Timestamp::now())
    }

    /// [`RunWriter::begin`] of a run that started at `started` (before the calls of its checks
    /// that call out were answered).
    pub fn begin_at(
        mut out: W,
        experiment: Option<&Value>,
        layout: Layout,
        started: Timestamp,
    ) -> io::Result<Self> {
        let (evaluation_id, started_at) = (evaluation_id(), started.to_string());
        if layout == Layout::Document {
            write_header(&mut out, &evaluation_id, &started_at, experiment)?;
            out.write_all(b"\"results\":[")?;
        }
        Ok(RunWriter {
            out,
            layout,
            evaluation_id,
            started_at,
            experiment: experiment.filter(|_| layout == Layout::Lines).cloned(),
            summary: RunSummary::default(),
            status: Status::Completed,
        })
    }

    /// The run's `evaluation_id`.
    pub fn evaluation_id(&self) -> &str {
        &self.evaluation_id
    }

    /// The layout the results are written in (what [`CaseResults::new`] needs).
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Write the test case results of `results` (evaluated elsewhere, e.g. on a worker thread)
    /// after those written so far. [`Layout::Lines`] flushes after each line.
    pub fn write(&mut self, results: &CaseResults) -> io::Result<()> {
        if results.summary.total_test_cases == 0 {
            return Ok(());
        }
        match self.layout {
            Layout::Document => {
                self.out.write_all(if self.summary.total_test_cases == 0 {
                    b"\n"
                } else {
                    b",\n"
                })?;
                self.out.write_all(&results.bytes)?;
            }
            Layout::Lines => {
                let mut start = 0;
                for &end in &results.ends {
                    self.out.write_all(&results.bytes[start..end])?;
                    self.out.flush()?;
                    start = end;
                }
            }
        }
        self.summary.merge(&results.summary);
        self.status = self.status.max(results.status);
        Ok(())
    }

    /// End the document with `completed_at`, `status` and `summary`; returns the run status.
    /// [`Layout::Lines`] writes the summary line.
    pub fn finish(mut self) -> io::Result<Status> {
        match self.layout {
            Layout::Document => self.out.write_all(b"\n],")?,
            Layout::Lines => write_header(
                &mut self.out,
                &self.evaluation_id,
                &self.started_at,
                self.experiment.as_ref(),
            )?,
        }
        write!(
            self.out,
            "\"completed_at\":\"{}\",\"status\":",
            Timestamp::now()
        )?;
        serde_json::to_writer(&mut self.out, &self.status)?;
        self.out.write_all(b",\"summary\":")?;
        serde_json::to_writer(&mut self.out, &self.summary)?;
        self.out.write_all(b"}\n")?;
        self.out.flush()?;
        Ok(self.status)
    }
}

/// The results of consecutive test cases, evaluated and serialised apart from the document (on a
/// worker thread) in the writer's [`Layout`], to be written with [`RunWriter::write`].
#[derive(Debug)]
pub struct CaseResults {
    layout: Layout,
    /// The serialised results: separated by `,\n` ([`Layout::Document`]), or each ending in
    /// `\n` ([`Layout::Lines`]).
    bytes: Vec<u8>,
    /// Where each result (with its line end) ends in `bytes`.
    ends: Vec<usize>,
    summary: RunSummary,
    status: Status,
}

impl CaseResults {
    /// No results yet, to be laid out as `layout` ([`RunWriter::layout`]).
    pub fn new(layout: Layout) -> Self {
        CaseResults {
            layout,
            bytes: Vec::new(),
            ends: Vec::new(),
            summary: RunSummary::default(),
            status: Status::Completed,
        }
    }

    /// How many test cases these are.
    pub fn test_cases(&self) -> usize {
        self.summary.total_test_cases
    }

    /// Evaluate one test case: run `checks` over `context` (`{"test_case", "output"}`) and add
    /// the test case result (FEP 4.1); `answers` are the answers to the calls of the checks that
    /// call out (empty when none does). Every mode of `fep evaluate` and `serve` evaluates a
    /// test case here.
    pub fn evaluate<'c>(
        &mut self,
        context: &Value,
        checks: impl IntoIterator<Item = &'c Check>,
        mut answers: CaseAnswers,
    ) -> io::Result<()> {
        let mut clock = CaseClock::start();
        let results: Vec<CheckResult<'_>> = checks
            .into_iter()
            .enumerate()
            .map(|(index, check)| {
                let answer = answers.get_mut(index).and_then(Option::take);
                check.evaluate(context, &mut clock, answer)
            })
            .collect();
        let mut counts = CheckCounts::default();
        for result in &results {
            counts.count(result.status());
        }
        let status = Status::combine(results.iter().map(CheckResult::status));
        if self.layout == Layout::Document && self.summary.total_test_cases > 0 {
            self.bytes.extend_from_slice(b",\n");
        }
        serde_json::to_writer(
            &mut self.bytes,
            &TestCaseResult {
                status,
                execution_context: context,
                check_results: &results,
                summary: counts,
            },
        )?;
        if self.layout == Layout::Lines {
            self.bytes.push(b'\n');
        }
        self.ends.push(self.bytes.len());
        self.summary.record(status, counts);
        self.status = self.status.max(status);
        Ok(())
    }
}

/// The buffers of results already written, handed out again to later batches: a fresh buffer of
/// a few hundred KB would cost a page fault per 4 KB of output.
#[derive(Debug, Default)]
pub struct Spares(Mutex<Vec<Vec<u8>>>);

impl Spares {
    /// [`CaseResults::new`], in a spare buffer when there is one.
    pub fn results(&self, layout: Layout) -> CaseResults {
        let spare = self.0.lock().ok().and_then(|mut spares| spares.pop());
        let mut results = CaseResults::new(layout);
        results.bytes = spare.unwrap_or_default();
        results
    }

    /// Keep the buffer of `results` (written) for a later batch.
    pub fn keep(&self, results: CaseResults) {
        let mut bytes = results.bytes;
        bytes.clear();
        if let Ok(mut spares) = self.0.lock() {
            spares.push(bytes);
        }
    }
}

/// `{"evaluation_id":…,"started_at":…,["experiment":…,]`
fn write_header(
    out: &mut impl Write,
    evaluation_id: &str,
    started_at: &str,
    experiment: Option<&Value>,
) -> io::Result<()> {
    write!(
        out,
        "{{\"evaluation_id\":\"{evaluation_id}\",\"started_at\":\"{started_at}\","
    )?;
    if let Some(experiment) = experiment {
        out.write_all(b"\"experiment\":")?;
        serde_json::to_writer(&mut *out, experiment)?;
        out.write_all(b",")?;
    }
    Ok(())
}

/// A time-ordered (version 7) UUID: the Unix time in milliseconds, then 74 random bits. Ids
/// made one after another sort in that order, so serve's store appends to its id index rather
/// than writing a random page of it per result (about 15% more requests per second).
fn evaluation_id() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis());
    let bits = (millis << 80) | (fastrand::u128(..) & ((1 << 80) - 1));
    let bits = (bits & !(0xF << 76)) | (0x7 << 76);
    let bits = (bits & !(0x3 << 62)) | (0x2 << 62);
    let hex = format!("{bits:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{parse_check, Catalog, Context};
    use serde_json::json;

    #[test]
    fn evaluation_ids_are_version_7_uuids_in_time_order() {
        let id = evaluation_id();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "7");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
        std::thread::sleep(std::time::Duration::from_millis(2));
        let later = evaluation_id();
        assert!(later > id, "{later} after {id}");
    }

    #[test]
    fn the_document_is_one_json_object_with_counts() {
        let mut catalog = Catalog::default();
        let ok = json!({"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "a"}});
        let bad = json!({"type": "exact_match", "arguments": {"actual": "$.output.nope", "expected": "a"}});
        let checks: Vec<Check> = [ok, bad]
            .iter()
            .map(|raw| Check::prepare(parse_check(raw, &catalog).unwrap(), &mut catalog))
            .collect();
        let mut buffer = Vec::new();
        let mut writer =
            RunWriter::begin(&mut buffer, Some(&json!({"name": "x"})), Layout::Document).unwrap();
        let ctx = Context::new(json!({"id": "1", "input": "q"}), json!({"value": "a"}));
        let mut results = CaseResults::new(writer.layout());
        results
            .evaluate(ctx.value(), &checks[..1], Vec::new())
            .unwrap();
        writer.write(&results).unwrap();
        let mut results = CaseResults::new(writer.layout());
        results.evaluate(ctx.value(), &checks, Vec::new()).unwrap();
        writer.write(&results).unwrap();
        assert_eq!(writer.finish().unwrap(), Status::Error);
        let document: Value = serde_json::from_slice(&buffer).unwrap();
        assert_eq!(document["experiment"], json!({"name": "x"}));
        assert_eq!(
            document["summary"],
            json!({"total_test_cases": 2, "completed_test_cases": 1, "error_test_cases": 1,
                   "skipped_test_cases": 0, "total_checks": 3, "completed_checks": 2,
                   "error_checks": 1, "skipped_checks": 0})
        );
        assert_eq!(document["results"][1]["status"], "error");
        assert_eq!(document["results"][1]["summary"]["error_checks"], 1);
        assert_eq!(document["status"], "error");
    }
}
