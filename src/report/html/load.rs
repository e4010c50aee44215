//! Reading results files into a [`Report`]: result lines — `run --output`'s, and the
//! `tasks score`/`tasks run --output` lines and `spec score` evaluation records that carry the
//! same members — through the journal reader, summarised by the run's own tally; an older
//! evalctl's task lines and evaluation records, without them, by their own members. The kind
//! is told per file by its first line. A line that is not a result of
//! its file's kind is a problem `FILE:LINE: reason`, and every problem in every file is reported
//! together.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::data::{Report, Row, SourceKind};
use crate::error::{invalid, Problem};
use crate::input::strict::{missing_key, wrong_type};
use crate::input::{JsonlStream, Source};
use crate::protocol::ScoreRange;
use crate::record::{CallRecord, EvaluatorInfo, Split, Splits};
use crate::report::runs::{Accounted, Ledger};
use crate::report::{Gates, Selection, Summary, Tally, DEFAULT_SEED};
use crate::runner::journal::{torn_line_problem, JournalReader, OneLineACall, RunLines};

/// The files of one run read as one source: its shards.
struct RunFiles<'a> {
    fingerprint: Option<String>,
    kind: SourceKind,
    files: Vec<&'a Source>,
    /// The shards their lines name.
    shards: BTreeSet<String>,
}

/// The shards the result lines of `file` name (`run.shard`); a line that is no result line
/// names none (reading the file for its results says what is wrong with it).
fn shards_in(file: &Source) -> BTreeSet<String> {
    let Ok(opened) = JsonlStream::open_file(file) else {
        return BTreeSet::new();
    };
    let mut stream = JsonlStream::new(file, opened);
    std::iter::from_fn(|| stream.next_record())
        .filter_map(|record| {
            let (_, line) = record.ok()?;
            let shard = line.get("run")?.get("shard")?.as_str()?;
            Some(shard.to_string())
        })
        .collect()
}

/// Every result in `files`, in order, and the notes for the user (a last line a killed run cut
/// short, left out); or every problem found in them. Result lines are read run by run: the
/// files whose first line names the same run (its shards) together, as `summarize` reads them,
/// as one source named by all of them. A file with a shard of a run that a source already holds
/// is another execution of that run (the same command run again, a judge that answers
/// otherwise): it starts a source of its own, or joins one that holds none of its shards.
pub fn load_results(
    files: &[Source],
    selection: &Selection,
) -> anyhow::Result<(Report, Vec<String>)> {
    let mut report = Report::default();
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    // What each file holds, in order: a run's results (the index of its files among `runs`),
    // or an older evalctl's lines of a kind.
    let mut sources: Vec<Result<usize, (&Source, SourceKind)>> = Vec::new();
    let mut runs: Vec<RunFiles> = Vec::new();
    for file in files {
        match first_record(file) {
            Err(problem) => problems.push(problem),
            Ok(None) => problems.push(Problem::new(
                file.display(),
                "no results (the file is empty)",
            )),
            Ok(Some((line, fields))) => match kind_of(&fields) {
                None => problems.push(Problem::at_line(file.display(), line, NOT_A_RESULT)),
                // Result lines, whichever command wrote them.
                Some(kind) if fields.contains_key("candidate_id") => {
                    let named = |member: &str| {
                        (fields.get("run"))
                            .and_then(|run| run.get(member))
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    };
                    let fingerprint = named("fingerprint");
                    let shards = match fingerprint {
                        Some(_) => shards_in(file),
                        None => BTreeSet::new(),
                    };
                    let same_run = runs.iter().position(|run| {
                        fingerprint.is_some()
                            && run.fingerprint == fingerprint
                            && run.shards.is_disjoint(&shards)
                    });
                    match same_run {
                        Some(index) => {
                            runs[index].files.push(file);
                            runs[index].shards.extend(shards);
                        }
                        None => {
                            sources.push(Ok(runs.len()));
                            runs.push(RunFiles {
                                fingerprint,
                                kind,
                                files: vec![file],
                                shards,
                            });
                        }
                    }
                }
                // An older evalctl's task lines and evaluation records, without them.
                Some(kind) => sources.push(Err((file, kind))),
            },
        }
    }
    for source in sources {
        let (kind, run_files) = match source {
            Ok(index) => (runs[index].kind, &runs[index].files),
            Err((file, kind)) => {
                read_other(file, kind, &mut report, &mut problems);
                continue;
            }
        };
        match read_run(run_files, selection) {
            Ok(results) => {
                notes.extend(results.torn.iter().cloned());
                let name = (run_files.iter().map(|file| file.display()))
                    .collect::<Vec<_>>()
                    .join(" + ");
                let summary = summarize(&name, &results);
                report.add_run_results(name, kind, &summary, &results.records);
            }
            Err(mut found) => problems.append(&mut found),
        }
    }
    if problems.is_empty() {
        Ok((report, notes))
    } else {
        Err(invalid(problems))
    }
}

/// The first record of `file` and its line, to tell the file's kind. Standard input cannot be
/// read twice, so results come from files.
fn first_record(file: &Source) -> Result<Option<(usize, Fields)>, Problem> {
    if *file == Source::Stdin {
        return Err(Problem::new(
            file.display(),
            "the report reads results files, not stdin: name the file",
        ));
    }
    let mut stream = JsonlStream::new(file, JsonlStream::open_file(file)?);
    match stream.next_record() {
        None => Ok(None),
        // A file holding nothing but a line a killed run cut short, as the results readers say.
        Some(Err(problem)) => match (stream.unterminated_len(), problem.line) {
            (Some(bytes), Some(line)) if stream.next_record().is_none() => {
                Err(torn_line_problem(&file.display(), line, bytes as u64))
            }
            _ => Err(problem),
        },
        Some(Ok((line, Value::Object(fields)))) => Ok(Some((line, fields))),
        Some(Ok((line, _))) => Err(Problem::at_line(file.display(), line, NOT_A_RESULT)),
    }
}

/// What a run's results file holds of the run.
struct RunResults {
    /// The lines that count, one a call.
    records: Vec<CallRecord>,
    /// The lines other lines of their calls replaced, whose spending is the run's too.
    superseded: Vec<CallRecord>,
    /// The run they belong to and what of its plan is missing (unless an older evalctl wrote
    /// them).
    accounted: Option<Accounted>,
    /// The notes of torn last lines.
    torn: Vec<String>,
}

/// The lines of a run's results files (its `--output`, or its shards) that count, through the
/// journal reader: for a key with several lines (a resumed run re-ran an errored call), the one
/// [`OneLineACall`] keeps; of files with several runs, the run `selection` names; and what of
/// the run is missing (a missing shard, or one given twice, is refused unless `selection`
/// allows it, see [`Ledger`]); and the notes of last lines a killed run cut short, left out.
fn read_run(files: &[&Source], selection: &Selection) -> Result<RunResults, Vec<Problem>> {
    let mut lines: Vec<(usize, CallRecord)> = Vec::new();
    let mut problems = Vec::new();
    let mut torn = Vec::new();
    let mut ledger = Ledger::new(files.iter().map(|file| file.display()).collect());
    for (index, file) in files.iter().enumerate() {
        let mut reader = match JournalReader::open(file) {
            Ok(reader) => reader,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        for line in reader.by_ref() {
            let counted = line.and_then(|line| {
                let run = line.record.run.as_ref();
                match run.map(|run| ledger.add((index, line.line), run, &line.record)) {
                    Some(Err(reason)) => Err(Problem::at_line(file.display(), line.line, reason)),
                    _ => Ok(line.record),
                }
            });
            match counted {
                Ok(record) => lines.push((index, record)),
                Err(problem) => problems.push(problem),
            }
        }
        torn.extend(reader.torn_line().map(|line| line.to_string()));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let chosen = ledger.chosen(selection)?;
    // The chosen run's lines, one a call, in the order of each call's first line.
    let mut one_a_call = OneLineACall::default();
    for (_, record) in lines.into_iter().filter(|(_, record)| chosen.keeps(record)) {
        one_a_call.add(record);
    }
    let RunLines {
        counted: records,
        superseded,
        ..
    } = one_a_call.finish();
    let older_evalctl = (records.iter())
        .chain(&superseded)
        .all(|record| record.run.is_none());
    let accounted = if older_evalctl {
        None
    } else {
        Some(ledger.account(chosen, records.len(), selection.allow_partial)?)
    };
    Ok(RunResults {
        records,
        superseded,
        accounted,
        torn,
    })
}

/// The summary `summarize` prints over `records` of the `accounted` run, judged by the default
/// gates (the elapsed time is not in a results file). Lines of an older evalctl, which do not
/// say their run, are summarised as one run of the candidates they name, whose score range is
/// `any` only when a score is outside [0, 1].
fn summarize(name: &str, results: &RunResults) -> Summary {
    let (records, superseded) = (&results.records, &results.superseded);
    let mut summary = match results.accounted.clone() {
        Some(accounted) => {
            let run = accounted.run;
            let (tally, _) = Tally::of_run(&run, records.iter(), superseded, DEFAULT_SEED, None);
            tally.finish_read(run, accounted.partial).0
        }
        None => {
            let mut candidates: Vec<String> = Vec::new();
            for record in records {
                if !candidates.contains(&record.candidate_id) {
                    candidates.push(record.candidate_id.clone());
                }
            }
            let splits = Splits {
                train: records.iter().any(|r| r.split == Split::Train),
                val: records.iter().any(|r| r.split == Split::Val),
            };
            let mut tally = Tally::new(candidates, splits, DEFAULT_SEED, None);
            records.iter().for_each(|record| tally.add(record));
            superseded
                .iter()
                .for_each(|record| tally.add_superseded(record));
            let unit = records.iter().all(|r| (0.0..=1.0).contains(&r.score));
            let evaluator = EvaluatorInfo {
                kind: "results file".to_string(),
                target: name.to_string(),
            };
            let range = if unit {
                ScoreRange::Unit
            } else {
                ScoreRange::Any
            };
            tally.finish(evaluator, range, None, false).0
        }
    };
    Gates::default().judge(&mut summary, false);
    summary
}

/// The lines of a `tasks score` or `spec score` file an older evalctl wrote (no result-line
/// members).
fn read_other(file: &Source, kind: SourceKind, report: &mut Report, problems: &mut Vec<Problem>) {
    let source = report.add_source(file.display(), kind);
    let mut stream = match JsonlStream::open_file(file) {
        Ok(opened) => JsonlStream::new(file, opened),
        Err(problem) => return problems.push(problem),
    };
    while let Some(next) = stream.next_record() {
        let decoded = next.and_then(|(line, value)| {
            let Value::Object(fields) = value else {
                return Err(Problem::at_line(file.display(), line, NOT_A_RESULT));
            };
            decode(kind, line, fields)
                .map_err(|reason| Problem::at_line(file.display(), line, reason))
        });
        match decoded {
            Ok((candidate, row)) => report.add_row(source, &candidate, row),
            Err(problem) => problems.push(problem),
        }
    }
}

/// A JSON object's members.
type Fields = Map<String, Value>;

const NOT_A_RESULT: &str = "not a result line: expected a `run --output` result (candidate_id, \
     split, score), a `tasks score --output` line (task_id, score) or a `spec score` record \
     (overall_score)";

/// The kind of results a file holds, told by its first line: the command that wrote it.
fn kind_of(fields: &Map<String, Value>) -> Option<SourceKind> {
    if fields.contains_key("task_id") {
        Some(SourceKind::Tasks)
    } else if fields.contains_key("overall_score") || fields.contains_key("validator_results") {
        Some(SourceKind::Spec)
    } else if fields.contains_key("candidate_id") {
        Some(SourceKind::Run)
    } else {
        None
    }
}

/// One line of a file of `kind`: its candidate and row, or why it is not one.
fn decode(
    kind: SourceKind,
    line: usize,
    mut fields: Map<String, Value>,
) -> Result<(String, Row), String> {
    match kind {
        // Run files are read by the journal reader.
        SourceKind::Run => Err(NOT_A_RESULT.to_string()),
        SourceKind::Tasks => {
            let task = take_string(take(&mut fields, "task_id"), "task_id")?;
            let score = take_number(take(&mut fields, "score"), "score")?;
            let missing = take(&mut fields, "status").and_then(|v| v.as_str().map(str::to_string));
            let error = (missing.as_deref() == Some("missing")).then(|| {
                (
                    "missing".to_string(),
                    format!("no model output for task {task}"),
                )
            });
            let split = take(&mut fields, "category")
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_else(|| "tasks".to_string());
            Ok((
                "tasks".to_string(),
                Row {
                    split,
                    example_index: None,
                    example_line: Some(line),
                    example_id: None,
                    label: Some(task),
                    score,
                    error,
                    side_info: fields,
                    attempts: None,
                    latency_ms: None,
                    passed: None,
                    repeat: None,
                    cached: false,
                    task_model: None,
                    output: None,
                },
            ))
        }
        SourceKind::Spec => {
            let score = take_number(take(&mut fields, "overall_score"), "overall_score")?;
            let label = take(&mut fields, "id").map(|id| match id {
                Value::String(text) => text,
                other => other.to_string(),
            });
            let error = take(&mut fields, "validity")
                .and_then(|v| v.as_str().map(str::to_string))
                .filter(|validity| validity == "invalid")
                .map(|validity| {
                    let reason = fields
                        .get("validity_reason")
                        .and_then(Value::as_str)
                        .unwrap_or("the run is invalid");
                    (validity, reason.to_string())
                });
            Ok((
                "spec".to_string(),
                Row {
                    split: "runs".to_string(),
                    example_index: None,
                    example_line: Some(line),
                    example_id: None,
                    label: Some(label.unwrap_or_else(|| format!("line {line}"))),
                    score,
                    error,
                    passed: take(&mut fields, "passed").and_then(|v| v.as_bool()),
                    side_info: fields,
                    attempts: None,
                    latency_ms: None,
                    repeat: None,
                    cached: false,
                    task_model: None,
                    output: None,
                },
            ))
        }
    }
}

/// The value of `key`, removed from `fields`; `None` when absent or null.
fn take(fields: &mut Map<String, Value>, key: &str) -> Option<Value> {
    fields.remove(key).filter(|value| !value.is_null())
}

fn take_string(value: Option<Value>, key: &str) -> Result<String, String> {
    match value {
        Some(Value::String(text)) => Ok(text),
        Some(other) => Err(format!("{key}: {}", wrong_type("a string", &other))),
        None => Err(missing_key(key)),
    }
}

/// A score: a finite number, or null or absent (no score).
fn take_number(value: Option<Value>, key: &str) -> Result<Option<f64>, String> {
    match value {
        None => Ok(None),
        Some(value) => value
            .as_f64()
            .filter(|number| number.is_finite())
            .map(Some)
            .ok_or_else(|| format!("{key}: {}", wrong_type("a finite number", &value))),
    }
}
