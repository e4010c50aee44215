//! `run --resume`: what an earlier run's journal already holds. Each planned call whose key has a
//! successful line is done (and so is an errored one under `--resume-keep-errors`); the rest are
//! made again. Lines whose keys match no planned call belong to another configuration and are
//! only counted.

use std::collections::HashMap;
use std::path::Path;

use super::journal::{replaces, JournalReader, TornTail};
use super::key::CallKey;
use super::{CallRecord, PlannedCall};
use crate::error::invalid;
use crate::input::{Inputs, Source};

/// What the journal held for this run.
#[derive(Debug, Default)]
pub struct Resumed {
    /// Calls of the plan the journal already answers (their records were handed on).
    pub done: usize,
    /// Lines whose keys match no call of this run (another configuration, or no key).
    pub foreign: usize,
    /// The torn last line that was cut off, if there was one.
    pub torn: Option<TornTail>,
}

/// Read the journal at `path` against `plan`: repair a torn last line, hand each call's record
/// that counts to `counted` (in file order, its `candidate_id` the current one), and remove the
/// calls it answers from `plan`. A line that is not a result line is bad input naming its line.
pub fn resume_from(
    path: &Path,
    inputs: &Inputs,
    plan: &mut Vec<PlannedCall>,
    keep_errors: bool,
    mut counted: impl FnMut(CallRecord),
) -> anyhow::Result<Resumed> {
    let torn = super::journal::repair_torn_tail(path).map_err(|problem| invalid(vec![problem]))?;
    if !path.exists() {
        return Ok(Resumed {
            torn,
            ..Resumed::default()
        });
    }
    let planned: HashMap<CallKey, usize> = plan
        .iter()
        .enumerate()
        .map(|(index, call)| (call.key, index))
        .collect();
    let key_of = |record: &CallRecord| {
        let key = CallKey::parse(record.key.as_deref()?)?;
        planned.contains_key(&key).then_some(key)
    };

    // First pass: which line counts for each planned key.
    let mut chosen: HashMap<CallKey, (usize, bool)> = HashMap::new();
    let mut foreign = 0;
    let mut problems = Vec::new();
    for line in JournalReader::open(&Source::File(path.to_path_buf()))
        .map_err(|problem| invalid(vec![problem]))?
    {
        match line {
            Err(problem) => problems.push(problem),
            Ok(line) => match key_of(&line.record) {
                None => foreign += 1,
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

    // Second pass: hand on the lines that count, and drop their calls from the plan.
    let mut answered = vec![false; plan.len()];
    let mut done = 0;
    for line in JournalReader::open(&Source::File(path.to_path_buf()))
        .map_err(|problem| invalid(vec![problem]))?
    {
        let Ok(mut line) = line else { continue };
        let Some(key) = key_of(&line.record) else {
            continue;
        };
        let (chosen_line, failed) = chosen[&key]; // ok: every planned key was chosen above
        if chosen_line != line.line || (failed && !keep_errors) {
            continue;
        }
        let index = planned[&key]; // ok: key_of only yields planned keys
        answered[index] = true;
        done += 1;
        line.record.candidate_id = inputs.candidates[plan[index].candidate].id.clone();
        counted(line.record);
    }
    let mut index = 0;
    plan.retain(|_| {
        index += 1;
        !answered[index - 1]
    });
    Ok(Resumed {
        done,
        foreign,
        torn,
    })
}
