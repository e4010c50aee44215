//! The Flexible Evaluation Protocol's EVALUATE interface (FEP 0.0.1, sections 3–4):
//! `evalctl fep evaluate REQUEST.json` and its streaming JSONL mode.
//!
//! Everything is validated before the first result is written: request-level problems (a
//! malformed request, test case or output, an unknown check type, mismatched lengths) are all
//! reported at once with their JSON locations, exit 2. A check whose arguments are invalid is not
//! a request problem: it yields a `validation_error` result wherever it runs and the other checks
//! still run. The result is written as a stream (see [`writer`]).

mod case;
mod document;
mod large;
mod pool;
mod request;
mod spool;
mod stream;
pub mod writer;

use std::io::BufWriter;
use std::path::PathBuf;

use serde_json::Value;

use crate::checks::{load_checks_file, Context, PathCache, Status};
use crate::error::{bad_input, invalid, Problem};
use crate::exit::Exit;
use crate::input::{document_json_reason, Source};
use crate::report::Reporter;
pub use request::{parse_request, Request};
use stream::StreamEnd;
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

/// Run `evalctl fep evaluate`: the EvaluationRunResult goes to stdout, laid out as `layout`. Exit 0 when the run's
/// status is `completed` or `skip`, 1 when it is `error` (a check errored), 2 on bad input; the
/// same when stdout's reader has gone before the end.
pub fn evaluate(config: &FepConfig, layout: Layout, reporter: Reporter) -> anyhow::Result<Exit> {
    let mut paths = PathCache::new();
    let mut out = BufWriter::with_capacity(1 << 16, crate::report::stdout_until_closed());
    let outcome = match config {
        FepConfig::Request(source) => {
            let name = source.display();
            let bytes = read_request(source)?;
            // NDJSON goes out as it is evaluated, so it never waits in a spool.
            let large = match layout {
                Layout::Document => large::evaluate_large(&bytes, &mut out),
                Layout::Lines => Ok(None),
            };
            match large {
                Ok(None) => {}
                Ok(Some(status)) => return exit(Ok(StreamEnd::Finished(status)), reporter),
                Err(error) => return exit(Err(error), reporter),
            }
            let document = document::parse_document(&bytes).map_err(|err| {
                bad_input(Problem::new(source.display(), document_json_reason(&err)))
            })?;
            let request = parse_request(document, &mut paths).map_err(|problems| {
                invalid(
                    problems
                        .iter()
                        .map(|problem| problem.locate(&name, None, ""))
                        .collect(),
                )
            })?;
            RunWriter::begin(out, request.experiment.as_ref(), layout)
                .and_then(|writer| evaluate_request(request, writer))
                .map(StreamEnd::Finished)
                .map_err(Into::into)
        }
        FepConfig::Stream {
            test_cases,
            outputs,
            checks,
        } => {
            let shared = load_checks_file(checks, &mut paths)?;
            stream::evaluate_stream(test_cases, outputs, &shared, out, layout)
        }
    };
    exit(outcome, reporter)
}

/// The exit of a run that ended with `outcome`.
fn exit(outcome: anyhow::Result<StreamEnd>, reporter: Reporter) -> anyhow::Result<Exit> {
    // Every write of the result goes to stdout (a spool reports its own).
    let outcome = outcome.map_err(|error| match error.downcast::<std::io::Error>() {
        Ok(err) => crate::report::stdout_error(&err),
        Err(other) => other,
    });
    Ok(match outcome? {
        StreamEnd::Finished(Status::Error) => Exit::EvaluationFailed,
        StreamEnd::Finished(Status::Completed | Status::Skip) => Exit::Success,
        StreamEnd::Interrupted { written } => {
            reporter.note(format!(
                "interrupted: the results so far ({written} test case{}) were written",
                if written == 1 { "" } else { "s" }
            ));
            Exit::Interrupted
        }
    })
}

/// Evaluate a validated request, writing each test case result through `writer` (begun with the
/// request's `experiment`); the run's status. Batches of test cases are evaluated on the worker
/// pool (see [`pool`]) and written in order.
pub fn evaluate_request<W: std::io::Write>(
    request: Request,
    mut writer: RunWriter<W>,
) -> std::io::Result<Status> {
    let Request {
        mut test_cases,
        mut outputs,
        checks,
        own_checks,
        ..
    } = request;
    let layout = writer.layout();
    let spares = Spares::default();
    let jobs = test_cases
        .chunks_mut(pool::BATCH)
        .zip(outputs.chunks_mut(pool::BATCH))
        .zip(own_checks.chunks(pool::BATCH))
        .enumerate();
    pool::ordered(
        jobs,
        |(job, ((test_cases, outputs), own_checks))| {
            let mut results = spares.results(layout);
            let mut context = Context::new(Value::Null, Value::Null);
            let cases = test_cases.iter_mut().zip(outputs).zip(own_checks);
            for (index, ((test_case, output), own)) in (job * pool::BATCH..).zip(cases) {
                let checks = checks.for_case(index).iter().chain(own);
                context.with(test_case, output, |context| {
                    results.evaluate(context, checks)
                })?;
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

/// Read the request from `source`, as [`Source::read_json`] does, for a parse that may use the
/// worker pool (see [`document`] and [`large`]).
fn read_request(source: &Source) -> anyhow::Result<Vec<u8>> {
    let mut bytes = source.read().map_err(bad_input)?;
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(bad_input(Problem::new(
            source.display(),
            "the file is empty (expected an EvaluationRequest object)",
        )));
    }
    Ok(bytes)
}
