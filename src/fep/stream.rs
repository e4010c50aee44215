//! The streaming mode: `--test-cases FILE.jsonl --outputs FILE.jsonl --checks FILE.json`.
//!
//! Record i of the test cases pairs with record i of the outputs (blank lines are skipped and not
//! counted; there is no record limit). Both files are read once, line by line, so pipes and
//! `/dev/stdin` work. The lines are read here in batches of pairs; a worker of the pool decodes,
//! validates and, while no problem has been found, evaluates each batch, and the results are
//! written in input order to a spool file (an unnamed temporary file). Every problem of both files
//! is reported at the end, in input order, with nothing on stdout; without problems the spool is
//! copied to stdout. Memory stays flat in the number of test cases.
//!
//! SIGINT, SIGTERM or SIGHUP stops the run, also while a read blocks (a pipe held open, a FIFO
//! with no writer): the results evaluated so far are written as a complete document, and the
//! command ends with exit 130.

use std::io::Write;
use std::ops::Range;

use serde_json::Value;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use super::case::catalog_for_own_batch;
use super::case::{output_problems, prepare_test_case};
use super::spool::{self, copy_spool, spool_error};
use super::writer::{Layout, RunWriter, Spares};
use crate::checks::{Call, CaseAnswers, Catalog, Check, Context, Problem, Status};
use crate::error::{invalid, Fatal};
use crate::evaluator::check_calls::BlockingCaller;
use crate::input::{parse_object_line, JsonlStream, Source};
use crate::interrupt::{
    catch_in_flag, interrupt_requested, interrupted_reading, restore_default_actions,
    unless_interrupted_blocking,
};
use crate::pool;

/// How a streaming evaluation ended, once its result document was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// Every pair was evaluated; the run's status.
    Finished(Status),
    /// A signal stopped the run; the document holds the `written` test cases evaluated so far.
    Interrupted {
        /// How many test cases the document holds.
        written: usize,
    },
}

/// Validate and evaluate the two JSONL files in one pass, `shared` (the checks of the file
/// `checks_file`, given together, plus each test case's own checks) on every pair, and write the EvaluationRunResult to `out` once all is well (or, when a
/// signal stops the run, with the results evaluated so far). A signal before anything could be
/// written (problems were found) is [`Fatal::Interrupted`].
pub fn evaluate_stream<W: Write>(
    test_cases: &Source,
    outputs: &Source,
    (checks_file, shared): (&std::path::Path, &[Check]),
    catalog: &Catalog,
    concurrency: usize,
    out: W,
    layout: Layout,
) -> anyhow::Result<StreamEnd> {
    catch_in_flag();
    let checking = Checking {
        checks_file,
        shared,
        catalog,
        concurrency,
    };
    let evaluated = evaluate_pairs(test_cases, outputs, checking, out, layout);
    restore_default_actions();
    evaluated
}

/// [`evaluate_stream`] with the signals caught in the flag.
fn evaluate_pairs<W: Write>(
    test_cases: &Source,
    outputs: &Source,
    checking: Checking<'_>,
    mut out: W,
    layout: Layout,
) -> anyhow::Result<StreamEnd> {
    // Opening a FIFO blocks until it has a writer, and std retries an interrupted open.
    let sources = (test_cases.clone(), outputs.clone());
    let opened = unless_interrupted_blocking(move || {
        (
            JsonlStream::open_file(&sources.0),
            JsonlStream::open_file(&sources.1),
        )
    })
    .ok_or_else(interrupted_reading)?;
    let (mut cases, mut answers) = match opened {
        (Ok(cases), Ok(answers)) => (
            JsonlStream::new(test_cases, cases),
            JsonlStream::new(outputs, answers),
        ),
        (cases, answers) => {
            return Err(invalid(
                [cases.err(), answers.err()].into_iter().flatten().collect(),
            ));
        }
    };
    let checks_file = checking.checks_file;
    let mut spool = spool::create()?;
    let mut writer = RunWriter::begin(&mut spool, None, layout).map_err(spool_error)?;
    let mut problems = Vec::new();
    let (mut case_count, mut output_count) = (0usize, 0usize);
    let mut checks_run = 0usize;
    let mut evaluated = 0usize;
    let (mut stopped, mut ended) = (false, false);
    let evaluator = BatchEvaluator {
        test_cases: cases.display.clone(),
        outputs: answers.display.clone(),
        checking,
        layout,
        problem_seen: AtomicBool::new(false),
        spares: Spares::default(),
        caller: Mutex::new(None),
    };
    // Pairs are read here, in batches; a worker decodes, validates and evaluates each batch.
    let batches = std::iter::from_fn(|| {
        let mut batch = RawBatch::default();
        while !ended && batch.pairs.len() < pool::BATCH {
            let case = batch.keep(cases.next_text());
            let answer = batch.keep(answers.next_text());
            let interrupted = interrupt_requested();
            // A pair read whole is evaluated even when a signal came meanwhile; one that a
            // signal cut short (a read it interrupted is a problem) is dropped.
            let (whole, none) = (
                matches!(case, Some(Ok(_))) && matches!(answer, Some(Ok(_))),
                case.is_none() && answer.is_none(),
            );
            if whole || (!interrupted && !none) {
                case_count += usize::from(case.is_some());
                output_count += usize::from(answer.is_some());
                batch.pairs.push(RawPair { case, answer });
            }
            if interrupted {
                (stopped, ended) = (true, true);
            } else if none {
                ended = true;
            }
        }
        (!batch.pairs.is_empty()).then_some(batch)
    });
    pool::ordered(
        pool::workers(),
        batches,
        |batch| evaluator.evaluate(batch),
        |done: anyhow::Result<Batch>| {
            let done = done?;
            problems.extend(done.problems);
            checks_run += done.checks_run;
            evaluated += done.results.test_cases();
            writer.write(&done.results).map_err(spool_error)?;
            evaluator.spares.keep(done.results);
            Ok::<(), anyhow::Error>(())
        },
    )?;
    // Stopped by a signal: what was evaluated is written (unless there were problems).
    if stopped {
        if !problems.is_empty() {
            let found: Vec<String> = problems.iter().map(ToString::to_string).collect();
            return Err(Fatal::Interrupted(format!(
                "{}\ninterrupted: nothing was written",
                found.join("\n")
            ))
            .into());
        }
        writer.finish().map_err(spool_error)?;
        copy_spool(spool, &mut out)?;
        return Ok(StreamEnd::Interrupted { written: evaluated });
    }
    // A file that could not be read to its end has no meaningful count.
    if case_count != output_count && !cases.unreadable && !answers.unreadable {
        problems.push(crate::error::Problem::new(
            answers.display.as_str(),
            format!(
                "{output_count} outputs for {case_count} test cases in {} (record i of each \
                 belongs together)",
                cases.display
            ),
        ));
    }
    if problems.is_empty() && case_count > 0 && checks_run == 0 {
        problems.push(crate::error::Problem::new(
            checks_file.display().to_string(),
            "no checks to run: its `checks` list is empty and no test case carries its own",
        ));
    }
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    let status = writer.finish().map_err(spool_error)?;
    copy_spool(spool, &mut out)?;
    Ok(StreamEnd::Finished(status))
}

/// A line's number and where its text is in [`RawBatch::text`], or the problem of the line.
type RawRecord = Result<(usize, Range<usize>), crate::error::Problem>;

/// Record i of the test cases and of the outputs, as read (either may be missing at the end).
struct RawPair {
    case: Option<RawRecord>,
    answer: Option<RawRecord>,
}

/// Pairs of lines as read, their text in one buffer, to go to a worker.
#[derive(Default)]
struct RawBatch {
    text: String,
    pairs: Vec<RawPair>,
}

impl RawBatch {
    /// Keep a [`JsonlStream::next_text`] answer: its text is copied into the batch.
    fn keep(
        &mut self,
        record: Option<Result<(usize, &str), crate::error::Problem>>,
    ) -> Option<RawRecord> {
        record.map(|found| {
            found.map(|(line, text)| {
                let start = self.text.len();
                self.text.push_str(text);
                (line, start..self.text.len())
            })
        })
    }
}

/// What a worker made of a batch of pairs.
struct Batch {
    /// The problems of the batch's records, in input order.
    problems: Vec<crate::error::Problem>,
    /// The results of the pairs evaluated (none once a problem has been seen).
    results: super::writer::CaseResults,
    /// Checks run over the batch.
    checks_run: usize,
}

/// What the workers share: the files' names (for problems), the checks, the layout, whether a
/// problem has been seen anywhere, the spare result buffers and the caller.
struct BatchEvaluator<'a> {
    test_cases: String,
    outputs: String,
    checking: Checking<'a>,
    layout: Layout,
    problem_seen: AtomicBool,
    spares: Spares,
    /// Answers the calls of checks that call out, one test case at a time; made at the first.
    caller: Mutex<Option<BlockingCaller>>,
}

/// The checks of a streaming run: the checks file's, the catalog the test cases' own are
/// prepared with, and how many calls of checks that call out are made at once.
#[derive(Clone, Copy)]
struct Checking<'a> {
    /// The checks file, for problems.
    checks_file: &'a std::path::Path,
    shared: &'a [Check],
    catalog: &'a Catalog,
    concurrency: usize,
}

impl BatchEvaluator<'_> {
    /// Decode, validate and, while no problem has been seen anywhere, evaluate the pairs of `batch`.
    fn evaluate(&self, batch: RawBatch) -> anyhow::Result<Batch> {
        let mut catalog = catalog_for_own_batch(self.checking.catalog);
        let mut context = Context::new(Value::Null, Value::Null);
        let mut problems = Vec::new();
        let mut results = self.spares.results(self.layout);
        let mut checks_run = 0;
        let mut valid = Vec::with_capacity(batch.pairs.len());
        for pair in batch.pairs {
            let case = decode(&batch.text, pair.case, &self.test_cases, &mut problems).and_then(
                |(line, test_case)| match prepare_test_case(&test_case, &mut catalog) {
                    Ok(own) => Some((test_case, own)),
                    Err(found) => {
                        locate(&mut problems, &self.test_cases, line, found);
                        None
                    }
                },
            );
            let answer = decode(&batch.text, pair.answer, &self.outputs, &mut problems).and_then(
                |(line, output)| {
                    let found = output_problems(&output);
                    let valid = found.is_empty();
                    locate(&mut problems, &self.outputs, line, found);
                    valid.then_some(output)
                },
            );
            if !problems.is_empty() {
                self.problem_seen.store(true, Ordering::Relaxed);
            }
            // After the first problem nothing more is evaluated: the rest is only validated.
            if let (Some((test_case, own)), Some(output), false) =
                (case, answer, self.problem_seen.load(Ordering::Relaxed))
            {
                checks_run += self.checking.shared.len() + own.len();
                valid.push((test_case, output, own));
            }
        }
        // The calls of the batch's checks that call out are made together (up to -j at once),
        // then every test case is evaluated with its answers.
        let mut calls: Vec<Vec<Option<Call>>> = Vec::new();
        for (test_case, output, own) in &mut valid {
            let checks = self.checking.shared.iter().chain(own.iter());
            if checks.clone().any(Check::calls_out) {
                calls.push(context.with(test_case, output, |context| {
                    checks.map(|check| check.call(context)).collect()
                }));
            } else {
                calls.push(Vec::new());
            }
        }
        let mut answers = if calls.iter().any(|case| !case.is_empty()) {
            self.answer(calls)?.into_iter()
        } else {
            Vec::new().into_iter()
        };
        for (mut test_case, mut output, own) in valid {
            let checks = self.checking.shared.iter().chain(&own);
            let answers = answers.next().unwrap_or_default();
            context.with(&mut test_case, &mut output, |context| {
                results.evaluate(context, checks, answers)
            })?;
        }
        Ok(Batch {
            problems,
            results,
            checks_run,
        })
    }
}

impl BatchEvaluator<'_> {
    /// The answers to the calls of a batch's test cases, in order.
    fn answer(&self, calls: Vec<Vec<Option<Call>>>) -> anyhow::Result<Vec<CaseAnswers>> {
        // A worker that panicked holding the caller poisoned it; its panic is raised anyway.
        let mut caller = self
            .caller
            .lock()
            .map_err(|_| anyhow::anyhow!("a worker failed"))?;
        let caller = match &mut *caller {
            Some(caller) => caller,
            empty => empty.insert(BlockingCaller::new(self.checking.concurrency)?),
        };
        Ok(caller.answer_cases(calls))
    }
}

/// The JSON object of a record (its text in `text`), or `None` after adding its problem to
/// `problems`.
fn decode(
    text: &str,
    record: Option<RawRecord>,
    display: &str,
    problems: &mut Vec<crate::error::Problem>,
) -> Option<(usize, Value)> {
    let (line, span) = record?.map_err(|problem| problems.push(problem)).ok()?;
    parse_object_line(&text[span])
        .map(|value| (line, value))
        .map_err(|reason| problems.push(crate::error::Problem::at_line(display, line, reason)))
        .ok()
}

fn locate(
    problems: &mut Vec<crate::error::Problem>,
    display: &str,
    line: usize,
    found: Vec<Problem>,
) {
    problems.extend(
        found
            .iter()
            .map(|problem| problem.locate(display, Some(line), "")),
    );
}
