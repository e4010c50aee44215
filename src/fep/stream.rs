//! The streaming mode: `--test-cases FILE.jsonl --outputs FILE.jsonl --checks FILE.json`.
//!
//! Record i of the test cases pairs with record i of the outputs (blank lines are skipped and not
//! counted; there is no record limit). Both files are read once, line by line, so pipes and
//! `/dev/stdin` work: each pair is validated and, while no problem has been found, evaluated at
//! once, its result written to a spool file (an unnamed temporary file). Every problem of both
//! files is reported at the end, with nothing on stdout; without problems the spool is copied to
//! stdout. Memory stays flat in the number of test cases.

use std::io::{self, BufWriter, Seek, Write};

use serde_json::Value;

use super::case::{output_problems, prepare_test_case};
use super::writer::RunWriter;
use crate::checks::{Check, Context, PathCache, Problem, Status};
use crate::error::{invalid, Fatal};
use crate::input::{JsonlStream, Source};
use crate::text::io_reason;

/// Validate and evaluate the two JSONL files in one pass, `shared` (plus each test case's own
/// checks) on every pair, and write the EvaluationRunResult to `out` once all is well.
pub fn evaluate_stream<W: Write>(
    test_cases: &Source,
    outputs: &Source,
    shared: &[Check],
    paths: &mut PathCache,
    mut out: W,
) -> anyhow::Result<Status> {
    let (mut cases, mut answers) = match (JsonlStream::open(test_cases), JsonlStream::open(outputs))
    {
        (Ok(cases), Ok(answers)) => (cases, answers),
        (cases, answers) => {
            return Err(invalid(
                [cases.err(), answers.err()].into_iter().flatten().collect(),
            ));
        }
    };
    let mut spool = BufWriter::with_capacity(1 << 16, tempfile::tempfile().map_err(spool_error)?);
    let mut writer = RunWriter::begin(&mut spool, None).map_err(spool_error)?;
    let mut context = Context::new(Value::Null, Value::Null);
    let mut problems = Vec::new();
    let (mut case_count, mut output_count) = (0usize, 0usize);
    let mut checks_run = 0usize;
    loop {
        let (case, answer) = (cases.next_record(), answers.next_record());
        if case.is_none() && answer.is_none() {
            break;
        }
        case_count += usize::from(case.is_some());
        output_count += usize::from(answer.is_some());
        let case = case.and_then(|record| {
            let (line, test_case) = record.map_err(|problem| problems.push(problem)).ok()?;
            match prepare_test_case(&test_case, paths) {
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
            let checks = shared.iter().chain(&own);
            context
                .with(&mut test_case, &mut output, |context| {
                    writer.case(context, checks)
                })
                .map_err(spool_error)?;
        }
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
    let mut spool = spool
        .into_inner()
        .map_err(|err| spool_error(err.into_error()))?;
    spool.rewind().map_err(spool_error)?;
    io::copy(&mut spool, &mut out)?;
    out.flush()?;
    Ok(status)
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
