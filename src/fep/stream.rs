//! The streaming mode: `--test-cases FILE.jsonl --outputs FILE.jsonl --checks FILE.json`.
//!
//! Record i of the test cases pairs with record i of the outputs (blank lines are skipped and not
//! counted; there is no record limit). A first pass validates both files in full, so problems are
//! reported before anything is evaluated; a second pass evaluates pair by pair and writes each
//! result at once. Memory stays flat in the number of test cases.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use serde_json::Value;

use super::case::{output_problems, prepare_test_case};
use super::writer::RunWriter;
use crate::checks::{Check, Context, PathCache, Problem, Status};
use crate::error::bad_input;
use crate::protocol::json_type;

/// Validate the two JSONL files, then evaluate `shared` (plus each test case's own checks) on
/// every pair, writing the EvaluationRunResult to `out`.
pub fn evaluate_stream<W: Write>(
    test_cases: &Path,
    outputs: &Path,
    shared: &[Check],
    paths: &mut PathCache,
    out: W,
) -> anyhow::Result<Status> {
    validate(test_cases, outputs, paths)?;
    let mut cases = Records::open(test_cases)?;
    let mut answers = Records::open(outputs)?;
    let mut writer = RunWriter::begin(out, None)?;
    loop {
        match (cases.next(), answers.next()) {
            (None, None) => break,
            (Some(Ok((_, test_case))), Some(Ok((_, output)))) => {
                let own = prepare_test_case(&test_case, paths).map_err(|_| changed(test_cases))?;
                let context = Context::new(test_case, output);
                writer.case(context.value(), shared.iter().chain(&own))?;
            }
            _ => return Err(changed(test_cases)),
        }
    }
    Ok(writer.finish()?)
}

/// The first pass: every problem of both files, one `FILE:LINE: reason` each.
fn validate(test_cases: &Path, outputs: &Path, paths: &mut PathCache) -> anyhow::Result<()> {
    let mut cases = Records::open(test_cases)?;
    let mut answers = Records::open(outputs)?;
    let mut problems = Vec::new();
    let (mut case_count, mut output_count) = (0usize, 0usize);
    loop {
        let (case, answer) = (cases.next(), answers.next());
        if case.is_none() && answer.is_none() {
            break;
        }
        if let Some(case) = case {
            case_count += 1;
            match case {
                Ok((line, test_case)) => {
                    if let Err(found) = prepare_test_case(&test_case, paths) {
                        locate(&mut problems, &cases.display, line, found);
                    }
                }
                Err(problem) => problems.push(problem),
            }
        }
        if let Some(answer) = answer {
            output_count += 1;
            match answer {
                Ok((line, output)) => locate(
                    &mut problems,
                    &answers.display,
                    line,
                    output_problems(&output),
                ),
                Err(problem) => problems.push(problem),
            }
        }
    }
    if case_count != output_count {
        problems.push(format!(
            "{}: {output_count} outputs for {case_count} test cases in {} (record i of each belongs together)",
            answers.display, cases.display
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(bad_input(crate::checks::render_problems(
            problems.into_iter(),
        )))
    }
}

fn locate(problems: &mut Vec<String>, display: &str, line: usize, found: Vec<Problem>) {
    problems.extend(found.into_iter().map(|problem| {
        match problem.at.strip_prefix('.').unwrap_or(&problem.at) {
            "" => format!("{display}:{line}: {}", problem.reason),
            at => format!("{display}:{line}: {at}: {}", problem.reason),
        }
    }));
}

fn changed(path: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "{} or its outputs file changed while it was being evaluated",
        path.display()
    )
}

/// The non-blank records of a JSONL file, read one at a time.
struct Records {
    reader: BufReader<File>,
    display: String,
    line: usize,
    buffer: Vec<u8>,
    done: bool,
}

impl Records {
    fn open(path: &Path) -> anyhow::Result<Records> {
        let display = path.display().to_string();
        let file = File::open(path).map_err(|err| {
            bad_input(format!(
                "error: {display}: cannot read: {}",
                crate::input::io_reason(&err)
            ))
        })?;
        Ok(Records {
            reader: BufReader::with_capacity(1 << 16, file),
            display,
            line: 0,
            buffer: Vec::new(),
            done: false,
        })
    }

    /// The next record and its 1-based line, a `FILE:LINE: reason` problem, or `None` at the end.
    fn next(&mut self) -> Option<Result<(usize, Value), String>> {
        while !self.done {
            self.buffer.clear();
            match self.reader.read_until(b'\n', &mut self.buffer) {
                Ok(0) => self.done = true,
                Ok(_) => {
                    self.line += 1;
                    if let Some(record) = self.parse_line() {
                        return Some(record);
                    }
                }
                Err(err) => {
                    self.done = true;
                    return Some(Err(format!("{}: read error: {err}", self.display)));
                }
            }
        }
        None
    }

    /// The current line as a record, or `None` when it is blank.
    fn parse_line(&self) -> Option<Result<(usize, Value), String>> {
        let mut bytes = self.buffer.as_slice();
        if self.line == 1 {
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let problem =
            |reason: String| Some(Err(format!("{}:{}: {reason}", self.display, self.line)));
        match serde_json::from_slice::<Value>(bytes) {
            Ok(value @ Value::Object(_)) => Some(Ok((self.line, value))),
            Ok(other) => problem(format!(
                "expected a JSON object, found {}",
                json_type(&other)
            )),
            Err(err) => problem(format!("invalid JSON: {err}")),
        }
    }
}
