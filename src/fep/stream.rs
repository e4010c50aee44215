//! The streaming mode: `--test-cases FILE.jsonl --outputs FILE.jsonl --checks FILE.json`.
//!
//! Record i of the test cases pairs with record i of the outputs (blank lines are skipped and not
//! counted; there is no record limit). Both files are read once, line by line, so pipes and
//! `/dev/stdin` work: each pair is validated and, while no problem has been found, evaluated at
//! once, its result written to a spool file (an unnamed temporary file). Every problem of both
//! files is reported at the end, with nothing on stdout; without problems the spool is copied to
//! stdout. Memory stays flat in the number of test cases.
//!
//! SIGINT, SIGTERM or SIGHUP stops the run, also while a read blocks (a pipe held open, a FIFO
//! with no writer): the results evaluated so far are written as a complete document, and the
//! command ends with exit 130.

use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};

use serde_json::Value;

use super::case::{output_problems, prepare_test_case};
use super::writer::{Layout, RunWriter};
use crate::checks::{Catalog, Check, Context, Problem, Status};
use crate::error::{invalid, Fatal};
use crate::evaluator::check_calls::BlockingCaller;
use crate::input::{JsonlStream, Source};
use crate::interrupt::{
    catch_in_flag, interrupt_requested, interrupted_reading, restore_default_actions,
    unless_interrupted_blocking,
};
use crate::text::io_reason;

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

/// Validate and evaluate the two JSONL files in one pass, `shared` (plus each test case's own
/// checks) on every pair, and write the EvaluationRunResult to `out` once all is well (or, when a
/// signal stops the run, with the results evaluated so far). A signal before anything could be
/// written (problems were found) is [`Fatal::Interrupted`].
pub fn evaluate_stream<W: Write>(
    test_cases: &Source,
    outputs: &Source,
    shared: &[Check],
    catalog: &mut Catalog,
    concurrency: usize,
    out: W,
    layout: Layout,
) -> anyhow::Result<StreamEnd> {
    catch_in_flag();
    let evaluated = evaluate_pairs(
        test_cases,
        outputs,
        shared,
        catalog,
        concurrency,
        out,
        layout,
    );
    restore_default_actions();
    evaluated
}

/// [`evaluate_stream`] with the signals caught in the flag.
fn evaluate_pairs<W: Write>(
    test_cases: &Source,
    outputs: &Source,
    shared: &[Check],
    catalog: &mut Catalog,
    concurrency: usize,
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
    let mut spool = BufWriter::with_capacity(1 << 16, tempfile::tempfile().map_err(spool_error)?);
    let mut writer = RunWriter::begin(&mut spool, None, layout).map_err(spool_error)?;
    let mut context = Context::new(Value::Null, Value::Null);
    // Made at the first test case with a check that calls out.
    let mut caller: Option<BlockingCaller> = None;
    let mut problems = Vec::new();
    let (mut case_count, mut output_count) = (0usize, 0usize);
    let mut checks_run = 0usize;
    let mut evaluated = 0usize;
    let stopped = loop {
        let (case, answer) = (cases.next_record(), answers.next_record());
        if interrupt_requested() {
            break true;
        }
        if case.is_none() && answer.is_none() {
            break false;
        }
        case_count += usize::from(case.is_some());
        output_count += usize::from(answer.is_some());
        let case = case.and_then(|record| {
            let (line, test_case) = record.map_err(|problem| problems.push(problem)).ok()?;
            match prepare_test_case(&test_case, catalog) {
                Ok(own) => Some((test_case, own)),
                Err(found) => {
                    locate(&mut problems, &cases.display, line, found);
                    None
                }
            }
        });
        let answer = answer.and_then(|record| {
            let (line, output) = record.map_err(|problem| problems.push(problem)).ok()?;
            let found = output_problems(&output);
            let valid = found.is_empty();
            locate(&mut problems, &answers.display, line, found);
            valid.then_some(output)
        });
        // After the first problem nothing more is evaluated: the rest is only validated.
        if let (Some((mut test_case, own)), Some(mut output), true) =
            (case, answer, problems.is_empty())
        {
            checks_run += shared.len() + own.len();
            evaluated += 1;
            let checks = shared.iter().chain(&own);
            let answers = if checks.clone().any(Check::calls_out) {
                let calls = context.with(&mut test_case, &mut output, |context| {
                    checks.clone().map(|check| check.call(context)).collect()
                });
                let caller = match &mut caller {
                    Some(caller) => caller,
                    empty => empty.insert(BlockingCaller::new(concurrency)?),
                };
                caller.answer_cases(vec![calls]).pop().unwrap_or_default()
            } else {
                Vec::new()
            };
            context
                .with(&mut test_case, &mut output, |context| {
                    writer.case(context, checks, answers)
                })
                .map_err(spool_error)?;
        }
    };
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
            "checks",
            "no checks to run: the checks file is empty and no test case carries its own",
        ));
    }
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    let status = writer.finish().map_err(spool_error)?;
    copy_spool(spool, &mut out)?;
    Ok(StreamEnd::Finished(status))
}

/// Copy the finished spool to `out`.
fn copy_spool(spool: BufWriter<File>, out: &mut impl Write) -> anyhow::Result<()> {
    let mut spool = spool
        .into_inner()
        .map_err(|err| spool_error(err.into_error()))?;
    spool.rewind().map_err(spool_error)?;
    io::copy(&mut spool, out)?;
    out.flush()?;
    Ok(())
}

fn spool_error(err: io::Error) -> anyhow::Error {
    Fatal::Internal(format!(
        "cannot write the results to a temporary file (in $TMPDIR or /tmp): {}",
        io_reason(&err)
    ))
    .into()
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
