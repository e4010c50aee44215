//! `evalctl summarize FILE.jsonl` and `evalctl merge A.jsonl B.jsonl ...`: the summary of one or
//! more results files (a run's `--output`, or the shards of one run), built by the same [`Tally`]
//! as `run`, so the merge of a run's shards prints the unsharded run's summary. Lines are read
//! through the journal reader; of several lines with one key, [`replaces`] says which counts.

use std::collections::HashMap;
use std::path::PathBuf;

use super::{append_step_summary, print_gate_verdict, print_summary, Gates, Junit, Reporter};
use super::{RunInfo, Tally};
use crate::error::{bad_input, invalid, Problem};
use crate::exit::Exit;
use crate::input::Source;
use crate::protocol::ScoreRange;
use crate::runner::journal::{replaces, JournalReader};
use crate::runner::CallRecord;

/// What `summarize` and `merge` need.
#[derive(Debug, Clone)]
pub struct MergeConfig {
    /// The results files, in order (`-` = stdin).
    pub files: Vec<String>,
    /// The gates the merged summary is judged by.
    pub gates: Gates,
    /// Seeds the bootstrap intervals.
    pub seed: u64,
    /// `--junit FILE.xml`.
    pub junit: Option<PathBuf>,
    /// `--pass-score X` for the JUnit report.
    pub pass_score: Option<f64>,
}

/// Print the summary of the union of `config.files` and return the exit code its gates give.
pub fn merge(config: &MergeConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    if let Some(path) = &config.junit {
        Junit::check_writable(path)?;
    }
    let (run, records) = read_all(&config.files)?;
    let mut candidate_ids: Vec<String> = (0..run.candidates)
        .map(|index| format!("candidate #{index}"))
        .collect();
    for record in records.values() {
        if let Some(slot) = record
            .candidate_index
            .and_then(|i| candidate_ids.get_mut(i))
        {
            slot.clone_from(&record.candidate_id);
        }
    }
    let mut tally = Tally::new(candidate_ids.clone(), run.splits, config.seed);
    let mut junit = config
        .junit
        .as_ref()
        .map(|_| Junit::new(candidate_ids, config.pass_score));
    for record in records.values() {
        tally.add(record);
        if let Some(junit) = junit.as_mut() {
            junit.add(record);
        }
    }
    let score_range = if run.score_range == ScoreRange::Any.as_str() {
        ScoreRange::Any
    } else {
        ScoreRange::Unit
    };
    let (mut summary, diagnostics) = tally.finish(run.evaluator, score_range, 0.0, false);
    let junit_written = match (&junit, &config.junit) {
        (Some(junit), Some(path)) => junit.write(path).map_err(|error| reporter.diagnose(&error)),
        _ => Ok(()),
    };
    let exit = config.gates.judge(&mut summary, junit_written.is_err());
    super::print_diagnostics(&diagnostics, summary.calls.total, None, reporter);
    print_summary(&summary, reporter)?;
    append_step_summary(&summary, reporter);
    print_gate_verdict(&summary, reporter);
    Ok(exit)
}

/// Every line of `files` that counts, by key, and the run they all belong to. Every problem in
/// every file is reported in one pass: a line that is not a result line, one without the run
/// it belongs to (written by an older evalctl), one of another run than the first line's.
pub(super) fn read_all(files: &[String]) -> anyhow::Result<(RunInfo, HashMap<String, CallRecord>)> {
    let mut problems = Vec::new();
    let mut first: Option<(RunInfo, String)> = None;
    let mut records: HashMap<String, CallRecord> = HashMap::new();
    for file in files {
        let source = Source::from_arg(file);
        let reader = match JournalReader::open(&source) {
            Ok(reader) => reader,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        for line in reader {
            let line = match line {
                Ok(line) => line,
                Err(problem) => {
                    problems.push(problem);
                    continue;
                }
            };
            let at = |message: String| Problem::at_line(source.display(), line.line, message);
            let record = line.record;
            match (&record.run, &first) {
                (None, _) => problems.push(at(
                    "no \"run\" member: written by an older evalctl, it does not say which \
                     evaluator and splits it belongs to; rerun with --resume to complete it"
                        .into(),
                )),
                (Some(run), None) => {
                    first = Some((run.clone(), format!("{}:{}", source.display(), line.line)))
                }
                (Some(run), Some((expected, origin))) if run != expected => {
                    problems.push(at(format!(
                        "belongs to another run than {origin} (evaluator {} {}, not {} {})",
                        run.evaluator.kind,
                        run.evaluator.target,
                        expected.evaluator.kind,
                        expected.evaluator.target
                    )))
                }
                _ => {}
            }
            let key = record.key.clone().unwrap_or_else(|| {
                format!(
                    "{}/{:?}/{:?}/{:?}",
                    record.candidate_id, record.split, record.example_index, record.repeat
                )
            });
            match records.get(&key) {
                Some(earlier) if !replaces(record.error.is_some(), earlier.error.is_some()) => {}
                _ => {
                    records.insert(key, record);
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    match first {
        Some((run, _)) => Ok((run, records)),
        None => Err(bad_input(Problem::new(
            files.join(", "),
            "no result lines: nothing to summarize",
        ))),
    }
}
