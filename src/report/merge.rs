//! The lines of one run read from results files (a run's `--output`, or the shards of one run),
//! for `summarize`, `merge` and `compare`. Lines are read through the journal reader; of several
//! lines with one key, [`OneLineACall`] keeps the one that counts; which run and shards the lines belong to
//! is checked by [`Ledger`].

use super::runs::{Accounted, Ledger, Selection};
use crate::error::{invalid, Problem};
use crate::input::Source;
use crate::record::{CallRecord, RunInfo};
use crate::runner::journal::{JournalReader, OneLineACall, RunLines};

/// Lines of a run by their call key, in the order of each call's first line in the files: what
/// is read from them (rows, test cases) comes in the same order every time.
pub type RecordsByKey = indexmap::IndexMap<String, CallRecord>;

/// The lines of one run read from results files: those that count, by key, and what the run
/// is and lacks.
pub struct ReadRun {
    /// The run, its fingerprint and what of its plan is missing.
    pub accounted: Accounted,
    /// Every line of the run that counts, by key, in the order of each call's first line.
    pub records: RecordsByKey,
    /// The run's lines that other lines of their calls replaced (calls made again by
    /// `--resume`): what they spent counts in the run's spending.
    pub superseded: Vec<CallRecord>,
}

/// Every line of `files` that counts, by key, and the run they belong to (the one `selection`
/// names, else the only one). Every problem in every file is reported in one pass: a line that
/// is not a result line, one without the run it belongs to (written by an older evalctl), lines
/// of several runs, a shard missing or given twice (see [`Ledger`]); a last line a killed run
/// cut short is left out, with a note.
pub fn read_all(files: &[String], selection: &Selection) -> anyhow::Result<ReadRun> {
    let mut problems = Vec::new();
    let mut first_legacy: Option<(RunInfo, String)> = None;
    let mut ledger = Ledger::new(
        files
            .iter()
            .map(|f| Source::from_arg(f).display())
            .collect(),
    );
    let mut lines: Vec<CallRecord> = Vec::new();
    let mut torn_lines = Vec::new();
    // The files that hold no line at all (an empty shard): said, not silently passed over.
    let mut empty_files = Vec::new();
    super::check_read_once(files)?;
    for (index, file) in files.iter().enumerate() {
        let source = Source::from_arg(file);
        let mut reader = match JournalReader::open(&source) {
            Ok(reader) => reader,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        let mut read_any = false;
        for line in reader.by_ref() {
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
            if let Err(reason) = ledger.add((index, line.line), run, &record) {
                problems.push(at(reason));
                continue;
            }
            lines.push(record);
        }
        let torn = reader.torn_line();
        if !read_any && torn.is_none() && problems.is_empty() {
            empty_files.push(source.display());
        }
        torn_lines.extend(torn);
    }
    if lines.is_empty() {
        // Files that hold nothing but lines cut short: those are the problem.
        problems.append(&mut torn_lines);
    }
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    let chosen = ledger.chosen(selection).map_err(invalid)?;
    let mut one_a_call = OneLineACall::default();
    for record in lines.into_iter().filter(|record| chosen.keeps(record)) {
        one_a_call.add(record);
    }
    let RunLines {
        counted,
        superseded,
        renamed,
    } = one_a_call.finish();
    let records: RecordsByKey = counted
        .into_iter()
        .map(|record| (record.call_key(), record))
        .collect();
    let mut accounted = ledger
        .account(chosen, records.len(), selection.allow_partial)
        .map_err(invalid)?;
    accounted
        .notes
        .extend(torn_lines.iter().map(ToString::to_string));
    accounted.notes.extend(
        (empty_files.iter()).map(|file| format!("{file}: no result lines: it adds nothing")),
    );
    if renamed > 0 {
        let (names, its) = match renamed {
            1 => ("names its", "its"),
            _ => ("name their", "their"),
        };
        accounted.notes.push(format!(
            "{} of this run {names} candidate otherwise than most of its lines do (edited by \
             hand?): counted with {its} candidate, under the name most lines give it",
            crate::text::counted(renamed, "line", "lines"),
        ));
    }
    Ok(ReadRun {
        accounted,
        records,
        superseded,
    })
}
