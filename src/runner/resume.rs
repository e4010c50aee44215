//! `run --resume`: what an earlier run's journal already holds. Each planned call whose key has a
//! successful line of this run is done (and so is an errored one under `--resume-keep-errors`);
//! the rest are made again. Lines of other runs (`--append-run`), even where their keys are this
//! run's, and lines whose keys match no planned call are only counted.
//!
//! Before any call, [`check_output`] makes sure an existing `--output` file is not mixed with
//! this run by accident: lines of this run need `--resume`, lines of another run `--append-run`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use super::journal::{
    mend_tail, replaces, score_refused, tail_of, JournalReader, TornTail, RESULT_LINE_START,
};
use super::key::RunDigests;
use super::PlannedCall;
use crate::error::{invalid, Problem};
use crate::input::{Inputs, Source};
use crate::protocol::ScoreRange;
use crate::record::CallRecord;
use crate::store::CallKey;

/// What the journal held for this run.
#[derive(Debug, Default)]
pub struct Resumed {
    /// Calls of the plan the journal already answers (their records were handed on).
    pub done: usize,
    /// Lines of other runs, or whose keys match no call of this run.
    pub foreign: usize,
    /// `tasks run`: saved outputs of tasks this run does not have (past `--limit`, or no longer
    /// in the task file).
    pub other_tasks: usize,
    /// Lines of this run whose score the run's score range refuses (a line edited by hand):
    /// they answer no call.
    pub refused_scores: usize,
    /// The calls of those lines that no other line answers: made again.
    pub refused_calls_remade: usize,
    /// Lines that answer their call but say another place for it (split, example, candidate
    /// or repeat: edited by hand): counted in the place their call has.
    pub misplaced: usize,
    /// The torn last line that was cut off, if there was one.
    pub torn: Option<TornTail>,
}

/// A line of this run's journal, as [`resume_from`] hands it on.
#[derive(Debug)]
pub enum ResumedLine {
    /// The line that answers its call (its `candidate_id` the current one).
    Answers(CallRecord),
    /// The failed line that answers its call until the run makes the call again (its
    /// `candidate_id` the current one): should the run stop before, it still answers it, as in
    /// the file.
    Remade(CallRecord),
    /// A line another line of its call replaces: what its call spent is the run's all the same.
    Superseded(CallRecord),
}

/// Read the journal at `path` against `plan`, the calls of the run `fingerprint` names: hand each
/// line of this run to `take` in file order (as the record that answers its call, else as
/// superseded), remove the calls answered from `plan`, and cut a torn last line off. A line is
/// this run's when its fingerprint is (a line without one, an older evalctl's, when its key is
/// planned): a line of another run answers none of this run's calls, though its key may be the
/// same (the same candidate and example under a run whose other candidates differ). A line whose
/// score `score_range` refuses answers no call, and is counted. A line that is not a result line
/// is bad input naming its line, and the file is left as it was.
pub fn resume_from(
    path: &Path,
    fingerprint: &str,
    inputs: &Inputs,
    plan: &mut Vec<PlannedCall>,
    keep_errors: bool,
    score_range: ScoreRange,
    mut take: impl FnMut(ResumedLine),
) -> anyhow::Result<Resumed> {
    if !path.exists() {
        return Ok(Resumed::default());
    }
    let tail = tail_of(path, RESULT_LINE_START).map_err(|problem| invalid(vec![problem]))?;
    let planned: HashMap<CallKey, usize> = plan
        .iter()
        .enumerate()
        .map(|(index, call)| (call.key, index))
        .collect();
    let key_of = |record: &CallRecord| {
        let identity = record.run.as_ref().and_then(|run| run.identity.as_ref());
        if identity.is_some_and(|identity| identity.fingerprint != fingerprint) {
            return None;
        }
        let key = CallKey::parse(record.key.as_deref()?)?;
        planned.contains_key(&key).then_some(key)
    };

    // First pass: which line counts for each planned key.
    let mut chosen: HashMap<CallKey, (usize, bool)> = HashMap::new();
    let (mut foreign, mut refused_scores) = (0, 0);
    let mut refused_keys = HashSet::new();
    let mut problems = Vec::new();
    for line in read(path)? {
        match line {
            Err(problem) => problems.push(problem),
            Ok(line) => match key_of(&line.record) {
                None => foreign += 1,
                // An interrupted call's answer, not scored: it answers no call.
                Some(_) if line.record.unscored() => {}
                Some(key) if score_refused(&line.record, score_range) => {
                    refused_scores += 1;
                    refused_keys.insert(key);
                }
                Some(key) => {
                    let failed = line.record.error.is_some();
                    let counts = chosen
                        .get(&key)
                        .is_none_or(|&(_, earlier_failed)| replaces(failed, earlier_failed));
                    if counts {
                        chosen.insert(key, (line.line, failed));
                    }
                }
            },
        }
    }
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    let torn = mend_tail(path, tail).map_err(|problem| invalid(vec![problem]))?;

    // Second pass: hand on the lines that count, and drop their calls from the plan.
    let mut answered = vec![false; plan.len()];
    let (mut done, mut misplaced) = (0, 0);
    for line in read(path)? {
        let Ok(mut line) = line else { continue };
        let Some(key) = key_of(&line.record) else {
            continue;
        };
        // A key whose every line has a refused score, or answers no call, has no line chosen.
        let Some(&(_, failed)) = chosen.get(&key).filter(|(at, _)| *at == line.line) else {
            take(ResumedLine::Superseded(line.record));
            continue;
        };
        let index = planned[&key]; // ok: key_of only yields planned keys
                                   // The key says which call the line answers: the call's place is where it counts.
        let call = &plan[index];
        // (A line of an older evalctl names no candidate index.)
        let place = |record: &CallRecord| {
            let candidate = record.candidate_index.unwrap_or(call.candidate);
            (candidate, record.split, record.example_index, record.repeat)
        };
        let planned_place = (call.candidate, call.split, call.example, call.repeat);
        if place(&line.record) != planned_place {
            misplaced += 1;
            (line.record.candidate_index, line.record.split) = (Some(call.candidate), call.split);
            (line.record.example_index, line.record.repeat) = (call.example, call.repeat);
        }
        line.record.candidate_id = inputs.candidates[call.candidate].id.clone();
        if failed && !keep_errors {
            take(ResumedLine::Remade(line.record));
            continue;
        }
        answered[index] = true;
        done += 1;
        take(ResumedLine::Answers(line.record));
    }
    let mut index = 0;
    plan.retain(|_| {
        index += 1;
        !answered[index - 1]
    });
    Ok(Resumed {
        done,
        foreign,
        other_tasks: 0,
        refused_scores,
        refused_calls_remade: refused_keys
            .iter()
            .filter(|key| !chosen.contains_key(key))
            .count(),
        misplaced,
        torn,
    })
}

/// The lines of the journal at `path`, their scores left to [`resume_from`] to judge against
/// the run's score range.
fn read(path: &Path) -> anyhow::Result<JournalReader> {
    JournalReader::open(&Source::File(path.to_path_buf()))
        .map(JournalReader::scores_unchecked)
        .map_err(|problem| invalid(vec![problem]))
}

/// What this run may find in its `--output` file.
#[derive(Debug, Clone, Copy)]
pub struct OutputUse {
    /// `--resume`: lines of this run are continued.
    pub resume: bool,
    /// `--append-run`: lines of other runs may stay beside this run's.
    pub append_run: bool,
}

/// Refuse, before any call, an existing results file at `path` that holds lines of this run
/// (`digests`, calls `plan`, its `shard`: `K/N`, `0/1` unsharded) without `--resume`, lines of
/// another shard of this run, or lines of another run without `--append-run`; the problem names
/// the file, the counts, what tells the other runs from this one and the ways out. A line
/// without a fingerprint (an older evalctl's) is this run's when its key is one of `plan`'s.
pub fn check_output(
    path: &Path,
    digests: &RunDigests,
    shard: &str,
    plan: &[PlannedCall],
    allowed: OutputUse,
) -> anyhow::Result<()> {
    let fingerprint = digests.fingerprint.as_str();
    if !path.is_file() {
        return Ok(());
    }
    // Unfinished JSON at the end that no line of evalctl's starts as: refused, with or without
    // `--resume` (which would cut off a torn line).
    tail_of(path, RESULT_LINE_START).map_err(|problem| invalid(vec![problem]))?;
    let planned: HashSet<String> = plan.iter().map(|call| call.key.to_string()).collect();
    let (mut ours, mut others, mut not_results) = (0usize, 0usize, 0usize);
    let mut other_runs = BTreeSet::new();
    // Lines of this run's other shards, by shard.
    let mut other_shards: BTreeMap<String, usize> = BTreeMap::new();
    let mut reader =
        JournalReader::open(&Source::File(path.to_path_buf())).map_err(|p| invalid(vec![p]))?;
    for line in reader.by_ref() {
        let record = match line {
            Ok(line) => line.record,
            // `--resume` repairs a torn last line and names any other bad line itself.
            Err(_) if allowed.resume => continue,
            Err(_) => {
                not_results += 1;
                continue;
            }
        };
        let identity = record.run.as_ref().and_then(|run| run.identity.as_ref());
        let this_run = match identity {
            Some(identity) => identity.fingerprint == fingerprint,
            None => record.key.as_ref().is_some_and(|key| planned.contains(key)),
        };
        let shard_of_line = identity.map(|identity| identity.shard.as_str());
        if this_run && shard_of_line.is_some_and(|line_shard| line_shard != shard) {
            *other_shards
                .entry(shard_of_line.unwrap_or_default().to_string())
                .or_default() += 1;
        } else if this_run {
            ours += 1;
        } else {
            others += 1;
            other_runs.insert(identity.map_or_else(
                || "no run fingerprint: an older evalctl's".to_string(),
                |identity| {
                    let mut differs = Vec::new();
                    if identity.evaluator_digest != digests.evaluator {
                        differs.push("its evaluator or task models differ");
                    }
                    if identity.inputs_digest != digests.inputs {
                        differs.push("its inputs differ");
                    }
                    if differs.is_empty() {
                        differs.push("its candidates or --repeat differ");
                    }
                    format!("run {}: {}", identity.fingerprint, differs.join(" and "))
                },
            ));
        }
    }
    // A last line a killed run cut short: `--resume` drops it; nothing may be appended to it.
    let torn = reader.torn().filter(|_| !allowed.resume);
    let display = path.display().to_string();
    let mut problems = Vec::new();
    if torn.is_some() && ours + others + not_results == 0 {
        return Err(invalid(vec![Problem::new(
            display,
            "holds only a line cut short (a run stopped while writing its first result?): pass \
             --resume to drop it and continue that run, or name another --output file",
        )]));
    }
    if !other_shards.is_empty() && !allowed.append_run {
        let held: Vec<String> = (other_shards.iter())
            .map(|(other, count)| format!("{} of shard {other}", lines(*count)))
            .collect();
        problems.push(Problem::new(
            display.clone(),
            format!(
                "holds {} of this run (run {fingerprint}), and this is shard {shard}: give each \
                 shard its own --output file (merge reads them together)",
                held.join(", ")
            ),
        ));
    }
    if ours > 0 && !allowed.resume {
        problems.push(Problem::new(
            display.clone(),
            format!(
                "already holds {} of this run (run {fingerprint}): pass --resume to continue \
                 it, or name another --output file",
                lines(ours)
            ),
        ));
    }
    if others + not_results > 0 && !allowed.append_run {
        let problem = if ours + others == 0 {
            // A dataset or notes, say: not a file to add a run beside.
            format!(
                "is not a results file ({} and no result line): name another --output file",
                match not_results {
                    1 => "1 line".to_string(),
                    n => format!("{n} lines"),
                }
            )
        } else {
            let mut what: Vec<String> = other_runs.into_iter().collect();
            if not_results > 0 {
                what.push(match not_results {
                    1 => "1 line that is not a result line".to_string(),
                    n => format!("{n} lines that are not result lines"),
                });
            }
            format!(
                "holds {} not of this run ({}; this one is run {fingerprint}): name another \
                 --output file, or pass --append-run to add this run beside them (summarize, \
                 merge and report then take one run at a time: --run ID)",
                lines(others + not_results),
                what.join("; ")
            )
        };
        problems.push(Problem::new(display.clone(), problem));
    }
    // Lines appended after a last line without its newline would join it into one broken line.
    let reason = match torn {
        Some(torn) => Some(format!(
            "line {} was cut short by an interrupted run ({})",
            torn.line,
            crate::text::counted(torn.bytes as usize, "byte", "bytes")
        )),
        None if !allowed.resume
            && std::fs::metadata(path).is_ok_and(|file| file.len() > 0)
            && !super::journal::ends_with_newline(path) =>
        {
            Some("its last line has no closing newline".to_string())
        }
        None => None,
    };
    if let Some(reason) = reason.filter(|_| problems.is_empty()) {
        let remedy = match torn {
            Some(_) => "pass --resume to drop it and continue that run",
            None => "pass --resume to continue that run (a whole line is kept)",
        };
        problems.push(Problem::new(
            display,
            format!("{reason}: {remedy}, or name another --output file"),
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(invalid(problems))
    }
}

/// `1 line`, `3 lines`.
fn lines(count: usize) -> String {
    format!("{count} line{}", if count == 1 { "" } else { "s" })
}
