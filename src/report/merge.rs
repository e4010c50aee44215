//! `evalctl summarize FILE.jsonl` and `evalctl merge A.jsonl B.jsonl ...`: the summary of one or
//! more results files (a run's `--output`, or the shards of one run), built by the same [`Tally`]
//! as `run`, so the merge of a run's shards prints the unsharded run's summary. Lines are read
//! through the journal reader; of several lines with one key, [`replaces`] says which counts;
//! which run and shards the lines belong to is checked by [`Ledger`].

use std::collections::HashMap;
use std::path::PathBuf;

use super::runs::{Accounted, Ledger, Selection};
use super::{append_step_summary, print_gate_verdict, print_summary, print_written};
use super::{Gates, Junit, Reporter};
use super::{RunInfo, Tally};
use crate::error::{invalid, Problem};
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
    /// `--pass-score X`: a call scored below it is a failed JUnit test case, and fails the
    /// summary.
    pub pass_score: Option<f64>,
    /// `--run ID` and `--allow-partial`.
    pub selection: Selection,
}

/// Print the summary of the union of `config.files` and return the exit code its gates give.
pub fn merge(config: &MergeConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    if let Some(path) = &config.junit {
        Junit::check_writable(path)?;
    }
    let ReadRun { accounted, records } = read_all(&config.files, &config.selection)?;
    for note in &accounted.notes {
        reporter.note(format!("note: {note}"));
    }
    let run = accounted.run;
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
    let mut tally = Tally::new(
        candidate_ids.clone(),
        run.splits,
        config.seed,
        config.pass_score,
    );
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
    let (mut summary, diagnostics) = tally.finish(run.evaluator, score_range, None, false);
    summary.partial = accounted.partial;
    let junit_written = match (&junit, &config.junit) {
        (Some(junit), Some(path)) => junit
            .write(path, summary.partial.as_ref())
            .map(Some)
            .map_err(|error| reporter.diagnose(&error)),
        _ => Ok(None),
    };
    let exit = config.gates.judge(&mut summary, junit_written.is_err());
    super::print_diagnostics(&diagnostics, summary.calls.total, None, reporter);
    print_summary(&summary, reporter)?;
    append_step_summary(&summary, reporter);
    print_written(&[junit_written.ok().flatten()], reporter);
    print_gate_verdict(&summary, reporter);
    Ok(exit)
}

/// The lines of one run read from results files: those that count, by key, and what the run
/// is and lacks.
pub(super) struct ReadRun {
    /// The run, its fingerprint and what of its plan is missing.
    pub accounted: Accounted,
    /// Every line of the run that counts, by key.
    pub records: HashMap<String, CallRecord>,
}

/// Every line of `files` that counts, by key, and the run they belong to (the one `selection`
/// names, else the only one). Every problem in every file is reported in one pass: a line that
/// is not a result line, one without the run it belongs to (written by an older evalctl), lines
/// of several runs, a shard missing or given twice (see [`Ledger`]).
pub(super) fn read_all(files: &[String], selection: &Selection) -> anyhow::Result<ReadRun> {
    let mut problems = Vec::new();
    let mut first_legacy: Option<(RunInfo, String)> = None;
    let mut ledger = Ledger::new(
        files
            .iter()
            .map(|f| Source::from_arg(f).display())
            .collect(),
    );
    let mut lines: Vec<CallRecord> = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let source = Source::from_arg(file);
        let reader = match JournalReader::open(&source) {
            Ok(reader) => reader,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        let mut read_any = false;
        for line in reader {
            let line = match line {
                Ok(line) => line,
                // A file whose first line is no result line is no results file: one problem.
                Err(problem) if !read_any => {
                    problems.push(problem);
                    break;
                }
                Err(problem) => {
                    problems.push(problem);
                    continue;
                }
            };
            read_any = true;
            let at = |message: String| Problem::at_line(source.display(), line.line, message);
            let record = line.record;
            let Some(run) = &record.run else {
                problems.push(at(
                    "no \"run\" member: written by an older evalctl, it does not say which \
                     evaluator and splits it belongs to; rerun with --resume to complete it"
                        .into(),
                ));
                continue;
            };
            if run.identity.is_none() {
                match &first_legacy {
                    None => {
                        first_legacy =
                            Some((run.clone(), format!("{}:{}", source.display(), line.line)))
                    }
                    Some((expected, origin)) if run != expected => problems.push(at(format!(
                        "belongs to another run than {origin} (evaluator {} {}, not {} {})",
                        run.evaluator.kind,
                        run.evaluator.target,
                        expected.evaluator.kind,
                        expected.evaluator.target
                    ))),
                    _ => {}
                }
            }
            ledger.add(index, run, &record);
            lines.push(record);
        }
    }
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    let chosen = ledger.chosen(selection).map_err(invalid)?;
    let mut records: HashMap<String, CallRecord> = HashMap::new();
    for record in lines.into_iter().filter(|record| chosen.keeps(record)) {
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
    let accounted = ledger
        .account(chosen, records.len(), selection.allow_partial)
        .map_err(invalid)?;
    Ok(ReadRun { accounted, records })
}
