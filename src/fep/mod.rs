//! The Flexible Evaluation Protocol's EVALUATE interface (FEP 0.0.1, sections 3–4): the engine of
//! `evalctl fep evaluate REQUEST.json` and its streaming JSONL mode (the command is
//! `crate::commands::fep`).
//!
//! Everything is validated before the first result is written: request-level problems (a
//! malformed request, test case or output, an unknown check type, mismatched lengths) are all
//! reported at once with their JSON locations, exit 2. A check whose arguments are invalid is not
//! a request problem: it yields a `validation_error` result (a `jsonpath_error` for a JSONPath
//! that cannot be parsed) wherever it runs and the other checks still run. The result is written
//! as a stream (see [`writer`]).
//!
//! Test cases are evaluated in batches on one worker per core and written in input order (see
//! [`crate::pool`]); every mode evaluates a test case in [`CaseResults::evaluate`]. A large request is
//! evaluated as it is parsed (see [`large`]).

mod case;
mod document;
mod large;
mod request;
mod spool;
mod stream;
pub mod writer;

use std::path::PathBuf;

use serde_json::Value;

use crate::checks::{load_checks_file, Call, CaseAnswers, Context, Status, Timestamp};
use crate::error::{bad_input, invalid, Fatal, Problem};
use crate::evaluator::check_calls::{trusted_catalog, BlockingCaller};
use crate::input::json_lines::DocumentLines;
use crate::input::{document_json_reason, JsonlStream, Source};
use crate::pool;
pub use document::Split;
pub use request::{parse_request, Request};
pub use stream::StreamEnd;
pub use writer::{CaseResults, Layout, RunWriter, Spares};

/// What `evalctl fep evaluate` reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FepConfig {
    /// An EvaluationRequest JSON document from a file or stdin.
    Request(Source),
    /// Streaming mode: test cases and outputs as JSONL (record i of each belongs together) and
    /// shared checks from a checks file `{"checks": [...]}`.
    Stream {
        /// The test cases JSONL (a file, or stdin).
        test_cases: Source,
        /// The outputs JSONL (a file, or stdin).
        outputs: Source,
        /// The checks file; it is validated in full first, like `run --checks`.
        checks: PathBuf,
    },
}

/// How `fep evaluate` runs its checks: what the command line lends them (`--custom-check`,
/// `--allow-custom-check`, `--allow-endpoint`), and how many calls of checks that call out
/// (extended, custom) are made at once (`-j`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checking {
    /// What the command line lends the request's or checks file's checks.
    pub trust: crate::checks::Trust,
    /// `-j`.
    pub concurrency: usize,
}

/// Evaluate what `config` names, writing the EvaluationRunResult to `out` as `layout` says.
pub fn evaluate_into<W: std::io::Write>(
    config: &FepConfig,
    checking: &Checking,
    layout: Layout,
    mut out: W,
) -> anyhow::Result<StreamEnd> {
    let mut catalog = trusted_catalog(&checking.trust)?;
    match config {
        FepConfig::Request(source) => {
            let name = source.display();
            let bytes = read_request(source)?;
            // NDJSON goes out as it is evaluated, so it never waits in a spool.
            let large = match layout {
                Layout::Document => large::evaluate_large(&bytes, &catalog, &mut out),
                Layout::Lines => Ok(None),
            };
            if let Some(status) = large? {
                return Ok(StreamEnd::Finished(status));
            }
            let document = document::parse_document(&bytes).map_err(|err| {
                bad_input(Problem::new(
                    source.display(),
                    document_json_reason(&err, &bytes),
                ))
            })?;
            let lines = DocumentLines::new(&bytes);
            let mut request = parse_request(document, &mut catalog).map_err(|problems| {
                invalid(
                    problems
                        .iter()
                        .map(|problem| problem.locate_in(&name, &lines, ""))
                        .collect(),
                )
            })?;
            let started = Timestamp::now();
            let answers = if request.calls_out() {
                BlockingCaller::new(checking.concurrency)?.answer_cases(request_calls(&mut request))
            } else {
                Vec::new()
            };
            RunWriter::begin_at(out, request.experiment.as_ref(), layout, started)
                .and_then(|writer| {
                    let mut answers = answers.into_iter();
                    let next_answers = || answers.next().unwrap_or_default();
                    evaluate_request(request, writer, next_answers, &|| false)
                })
                .map(StreamEnd::Finished)
                .map_err(Into::into)
        }
        FepConfig::Stream {
            test_cases,
            outputs,
            checks,
        } => {
            let shared = load_checks_file(checks, &mut catalog).map_err(|error| {
                // The JSONL files' problems too, so one report names every missing input.
                let unreadable = [test_cases, outputs]
                    .into_iter()
                    .filter_map(|source| JsonlStream::check_file(source).err())
                    .map(bad_input);
                Fatal::merge(unreadable.chain([error]))
            })?;
            stream::evaluate_stream(
                test_cases,
                outputs,
                (checks, &shared),
                &catalog,
                checking.concurrency,
                out,
                layout,
            )
        }
    }
}

/// Evaluate a validated request, writing each test case result through `writer` (begun with the
/// request's `experiment`); `next_answers` gives each test case's answers to [`request_calls`],
/// in order (empty when no check calls out). Once `stopped` says so (checked before each check),
/// the evaluation ends with a `TimedOut` error, whatever its batches still held. The
/// run's status. Batches of test cases are
/// evaluated on the worker pool (see [`crate::pool`]) and written in order; when a check calls out, one
/// test case at a time on this thread, each written as soon as it is answered.
pub fn evaluate_request<W: std::io::Write>(
    request: Request,
    mut writer: RunWriter<W>,
    mut next_answers: impl FnMut() -> CaseAnswers,
    stopped: &(dyn Fn() -> bool + Sync),
) -> std::io::Result<Status> {
    let (batch, workers) = match request.calls_out() {
        true => (1, 1),
        false => (pool::BATCH, pool::workers()),
    };
    let Request {
        mut test_cases,
        mut outputs,
        checks,
        own_checks,
        ..
    } = request;
    let layout = writer.layout();
    let spares = Spares::default();
    // Each job takes its test cases' answers along, drawn here in order.
    let jobs = test_cases
        .chunks_mut(batch)
        .zip(outputs.chunks_mut(batch))
        .zip(own_checks.chunks(batch))
        .enumerate()
        .map(|job| {
            let answers: Vec<CaseAnswers> = (0..job.1 .1.len()).map(|_| next_answers()).collect();
            (job, answers)
        });
    pool::ordered(
        workers,
        jobs,
        |((job, ((test_cases, outputs), own_checks)), answers)| {
            let mut results = spares.results(layout);
            let mut context = Context::new(Value::Null, Value::Null);
            let cases = test_cases.iter_mut().zip(outputs).zip(own_checks);
            for ((index, ((test_case, output), own)), answers) in
                (job * batch..).zip(cases).zip(answers)
            {
                let was_stopped = || {
                    std::io::Error::new(std::io::ErrorKind::TimedOut, "the evaluation was stopped")
                };
                if stopped() {
                    return Err(was_stopped());
                }
                // Looked at before each check too: one test case may hold many, each bounded on
                // its own.
                let checks = (checks.for_case(index).iter().chain(own)).take_while(|_| !stopped());
                context.with(test_case, output, |context| {
                    results.evaluate(context, checks, answers)
                })?;
                // A test case cut short is not written.
                if stopped() {
                    return Err(was_stopped());
                }
                // Freed here, on a worker, rather than all at the end on one thread.
                drop((std::mem::take(test_case), std::mem::take(output)));
            }
            Ok(results)
        },
        |results: std::io::Result<CaseResults>| {
            let results = results?;
            writer.write(&results)?;
            spares.keep(results);
            Ok::<(), std::io::Error>(())
        },
    )?;
    writer.finish()
}

/// The calls of every test case's checks that call out, in the order of its checks.
pub fn request_calls(request: &mut Request) -> Vec<Vec<Option<Call>>> {
    let mut context = Context::new(Value::Null, Value::Null);
    let pairs = request.test_cases.iter_mut().zip(&mut request.outputs);
    pairs
        .zip(&request.own_checks)
        .enumerate()
        .map(|(index, ((test_case, output), own))| {
            let checks = request.checks.for_case(index).iter().chain(own);
            context.with(test_case, output, |context| {
                checks.map(|check| check.call(context)).collect()
            })
        })
        .collect()
}

/// Read the request from `source`, as [`Source::read_json`] does, for a parse that may use the
/// worker pool (see [`document`] and [`large`]).
fn read_request(source: &Source) -> anyhow::Result<Vec<u8>> {
    source
        .read_document("an EvaluationRequest object")
        .map_err(bad_input)
}
