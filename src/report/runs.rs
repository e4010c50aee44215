//! Which run and which shard each result line belongs to, when results files are read back
//! (`summarize`, `merge`, `compare`, `report`). Every line `run` writes names its run (the
//! fingerprint over the evaluator, the inputs and the candidates), its shard `K/N` and the calls
//! of the shard and of the whole plan, so the lines read together are refused (exit 2) when they
//! belong to several runs, when a shard is missing or given twice, or when shards of different
//! splits meet; `--allow-partial` summarizes what is there instead, marked partial. Lines of an
//! older evalctl carry none of this: they are read as one unsharded run, and a note says so.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::Serialize;

use crate::error::Problem;
use crate::record::{completed_by, shard_of, CallRecord, RunInfo};

/// Which lines to read, and whether an incomplete run is summarized.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `--run ID`: only the lines of the run whose fingerprint starts with it.
    pub run: Option<String>,
    /// The flag that chose `run` (`--run` when `None`; `compare` has one per file).
    pub run_flag: Option<&'static str>,
    /// `--allow-partial`: missing shards are counted as missing calls, not refused.
    pub allow_partial: bool,
}

impl Selection {
    /// The flag that names the run.
    fn flag(&self) -> &'static str {
        self.run_flag.unwrap_or("--run")
    }
}

/// How much of the run's plan the summary lacks (the summary's `partial`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Partial {
    /// Calls of the plan with no line.
    pub missing_calls: usize,
    /// Calls of the whole plan.
    pub plan_calls: usize,
    /// The shards with no line (`K/N`).
    pub missing_shards: Vec<String>,
    /// The shards of a sharded run that have lines but lack some of their calls (an interrupted
    /// shard), each with its files: `1/3 (shard-1.jsonl)`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub incomplete_shards: Vec<String>,
    /// The same in words: `shard 2/3 missing: 49 of 150 calls absent`, or `28 of 60 calls
    /// absent, from shard 1/3 (shard-1.jsonl)`.
    pub description: String,
    /// What completes the run: `run --resume completes it`.
    #[serde(skip)]
    pub completed_by: &'static str,
}

impl Partial {
    /// `missing_calls` of the `plan_calls` of a run's plan absent, `missing_shards` (`K/N`)
    /// with no line at all, of a run that `completed_by` says how to complete; `None` when no
    /// call is missing (a shard of a tiny plan may have had no call, and so no line).
    pub fn new(
        missing_calls: usize,
        plan_calls: usize,
        missing_shards: Vec<String>,
        completed_by: &'static str,
    ) -> Option<Partial> {
        let description = match missing_shards.as_slice() {
            [] => format!("{missing_calls} of {plan_calls} calls absent"),
            [one] => format!("shard {one} missing: {missing_calls} of {plan_calls} calls absent"),
            several => format!(
                "shards {} missing: {missing_calls} of {plan_calls} calls absent",
                shard_ranges(several)
            ),
        };
        (missing_calls > 0).then_some(Partial {
            missing_calls,
            plan_calls,
            missing_shards,
            incomplete_shards: Vec::new(),
            description,
            completed_by,
        })
    }

    /// `, from shard 1/3 (shard-1.jsonl)`: the shards whose calls are absent, or nothing.
    pub fn absent_from(&self) -> String {
        match self.incomplete_shards.as_slice() {
            [] => String::new(),
            [one] => format!(", from shard {one}"),
            several => format!(", from shards {}", several.join(", ")),
        }
    }

    /// What a `run` shard `index` of `count` lacks of its run's `plan_calls`, `shard_calls`
    /// being its own: the other shards, as a summary of its results file alone says.
    pub fn of_shard(
        index: u64,
        count: u64,
        plan_calls: usize,
        shard_calls: usize,
    ) -> Option<Partial> {
        let others = (0..count)
            .filter(|&k| k != index)
            .map(|k| format!("{k}/{count}"))
            .collect();
        Partial::new(
            plan_calls.saturating_sub(shard_calls),
            plan_calls,
            others,
            completed_by(None),
        )
    }
}

/// `K/N` shards, in order, as a list in which three or more in a row are a range: `0/100–6/100,
/// 8/100–99/100` rather than 99 of them (a shard's summary of a large run names every other).
fn shard_ranges(shards: &[String]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Vec<&String> = Vec::new();
    let flush = |run: &mut Vec<&String>, parts: &mut Vec<String>| {
        match run.as_slice() {
            [first, .., last] if run.len() >= 3 => parts.push(format!("{first}–{last}")),
            items => parts.extend(items.iter().map(|shard| shard.to_string())),
        }
        run.clear();
    };
    for shard in shards {
        let follows = run.last().and_then(|last| {
            let ((k, n), (next, count)) = (shard_of(last)?, shard_of(shard)?);
            Some(n == count && next == k + 1)
        });
        if follows != Some(true) {
            flush(&mut run, &mut parts);
        }
        run.push(shard);
    }
    flush(&mut run, &mut parts);
    parts.join(", ")
}

/// What the lines read belong to: the run, and what of it is missing.
#[derive(Debug, Clone)]
pub struct Accounted {
    /// The run (its first line's `run`).
    pub run: RunInfo,
    /// The run's fingerprint; `None` for lines of an older evalctl.
    pub fingerprint: Option<String>,
    /// Calls missing from the run's plan, when any are.
    pub partial: Option<Partial>,
    /// What the user is told on stderr (lines without a fingerprint).
    pub notes: Vec<String>,
}

/// The run whose lines are read: its fingerprint, and whether lines without one (an older
/// evalctl's, of the same evaluator, splits and candidates: a journal begun by it and resumed
/// by this one) count with it.
#[derive(Debug, Clone)]
pub struct Chosen {
    fingerprint: Option<String>,
    with_older_lines: bool,
    notes: Vec<String>,
}

impl Chosen {
    /// Whether `record` is a line of the chosen run.
    pub fn keeps(&self, record: &CallRecord) -> bool {
        let identity = record.run.as_ref().and_then(|run| run.identity.as_ref());
        match identity {
            Some(identity) => self.fingerprint.as_ref() == Some(&identity.fingerprint),
            None => self.with_older_lines || self.fingerprint.is_none(),
        }
    }
}

/// One run's lines, as read.
#[derive(Debug)]
struct RunSeen {
    fingerprint: Option<String>,
    info: RunInfo,
    /// Where its first line is: the file's index, the line's number.
    first_line: (usize, usize),
    lines: usize,
    /// File index → lines of this run in it.
    files: BTreeMap<usize, usize>,
    /// `K/N` → the shard's lines.
    shards: BTreeMap<String, ShardSeen>,
    /// Candidate id → its text digests.
    candidates: BTreeMap<String, BTreeSet<String>>,
}

/// One shard's lines, as read.
#[derive(Debug)]
struct ShardSeen {
    /// The files it has lines in (indices).
    files: BTreeSet<usize>,
    /// The calls of its plan.
    calls: usize,
    /// The calls it has lines of (their keys).
    keys: HashSet<String>,
}

/// The runs of the lines read so far.
#[derive(Debug)]
pub struct Ledger {
    files: Vec<String>,
    runs: Vec<RunSeen>,
}

impl Ledger {
    /// A ledger over `files` (names as given, in order).
    pub fn new(files: Vec<String>) -> Ledger {
        Ledger {
            files,
            runs: Vec::new(),
        }
    }

    /// Count `record`, line `line` of `files[file]`, that names its run as `run`; a line whose
    /// `run` gives a member every line of its run shares (its score range, say) otherwise than
    /// the run's first line is not counted: why is the error.
    pub fn add(
        &mut self,
        (file, line): (usize, usize),
        run: &RunInfo,
        record: &CallRecord,
    ) -> Result<(), String> {
        let fingerprint = run.identity.as_ref().map(|id| id.fingerprint.clone());
        let index = match self
            .runs
            .iter()
            .position(|seen| seen.fingerprint == fingerprint)
        {
            Some(index) => {
                let first = &self.runs[index];
                if let (Some(member), Some(id)) = (run.differs_from(&first.info), &fingerprint) {
                    let (first_file, first_line) = first.first_line;
                    return Err(format!(
                        "run.{member} differs from {}:{first_line}, a line of the same run \
                         {id}: evalctl never writes such lines; correct or remove the one \
                         edited",
                        self.files[first_file]
                    ));
                }
                index
            }
            None => {
                self.runs.push(RunSeen {
                    fingerprint,
                    info: run.clone(),
                    first_line: (file, line),
                    lines: 0,
                    files: BTreeMap::new(),
                    shards: BTreeMap::new(),
                    candidates: BTreeMap::new(),
                });
                self.runs.len() - 1
            }
        };
        let seen = &mut self.runs[index];
        seen.lines += 1;
        *seen.files.entry(file).or_default() += 1;
        if let Some(identity) = &run.identity {
            let shard = (seen.shards.entry(identity.shard.clone())).or_insert_with(|| ShardSeen {
                files: BTreeSet::new(),
                calls: identity.shard_calls,
                keys: HashSet::new(),
            });
            shard.files.insert(file);
            shard.keys.insert(record.call_key());
        }
        if let Some(digest) = &record.candidate_digest {
            seen.candidates
                .entry(record.candidate_id.clone())
                .or_default()
                .insert(digest.clone());
        }
        Ok(())
    }

    /// The run the lines are read for: the one `--run` names, else the only one; several runs
    /// without `--run`, or a `--run` that names none or several, are the problems. Lines without
    /// a fingerprint count with the one run that has one when its evaluator, score range, splits
    /// and candidates are theirs (a note says so).
    pub fn chosen(&self, selection: &Selection) -> Result<Chosen, Vec<Problem>> {
        let all = self.files.join(", ");
        let ids = || {
            self.runs
                .iter()
                .map(|run| self.describe(run))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let older = self.runs.iter().find(|run| run.fingerprint.is_none());
        let choose = |run: &RunSeen| {
            let absorbs = older.filter(|older| {
                run.fingerprint.is_some() && {
                    let mut info = run.info.clone();
                    info.identity = None;
                    info == older.info
                }
            });
            Chosen {
                fingerprint: run.fingerprint.clone(),
                with_older_lines: absorbs.is_some(),
                notes: absorbs
                    .map(|older| {
                        format!(
                            "{}: {} without a run fingerprint (an older evalctl's) counted with \
                             run {}: same evaluator, splits and candidates",
                            self.file_names(older),
                            lines(older.lines),
                            run.fingerprint.as_deref().unwrap_or_default()
                        )
                    })
                    .into_iter()
                    .collect(),
            }
        };
        let fingerprinted: Vec<&RunSeen> = self
            .runs
            .iter()
            .filter(|run| run.fingerprint.is_some())
            .collect();
        if let Some(wanted) = &selection.run {
            let matching: Vec<&&RunSeen> = fingerprinted
                .iter()
                .filter(|run| {
                    run.fingerprint
                        .as_deref()
                        .is_some_and(|id| id.starts_with(wanted.as_str()))
                })
                .collect();
            return match matching.as_slice() {
                [run] => Ok(choose(run)),
                [] => Err(vec![Problem::new(
                    all,
                    format!(
                        "{} {wanted}: no line of such a run; the lines are of {}",
                        selection.flag(),
                        ids()
                    ),
                )]),
                _ => Err(vec![Problem::new(
                    all,
                    format!(
                        "{} {wanted}: names several runs ({}); give more of the id",
                        selection.flag(),
                        ids()
                    ),
                )]),
            };
        }
        match (fingerprinted.as_slice(), older) {
            ([], None) => {
                return Ok(Chosen {
                    fingerprint: None,
                    with_older_lines: false,
                    notes: Vec::new(),
                })
            }
            ([], Some(older)) => return Ok(choose(older)),
            ([run], _) => {
                let chosen = choose(run);
                if chosen.with_older_lines || older.is_none() {
                    return Ok(chosen);
                }
            }
            _ => {}
        }
        // ok: every case of fewer than two runs returned above.
        let (first, others) = self.runs.split_first().expect("several runs");
        let names: Vec<String> = fingerprinted
            .iter()
            .filter_map(|run| run.fingerprint.clone())
            .collect();
        Err(others
            .iter()
            .map(|run| {
                Problem::new(
                    self.file_names(run),
                    format!(
                        "lines of different runs: {}, beside {}: {}; pass the files of one run, \
                         or choose one with {} ({})",
                        self.describe(run),
                        self.describe(first),
                        difference(first, run),
                        selection.flag(),
                        names.join(" or ")
                    ),
                )
            })
            .collect())
    }

    /// Check the shards of the `chosen` run (given `present` distinct calls of it): a shard in
    /// two files, shards of different splits, and missing shards (unless `allow_partial`) are
    /// the problems; missing calls otherwise make the result partial.
    pub fn account(
        &self,
        chosen: Chosen,
        present: usize,
        allow_partial: bool,
    ) -> Result<Accounted, Vec<Problem>> {
        let Some(run) = self
            .runs
            .iter()
            .find(|run| run.fingerprint == chosen.fingerprint)
        else {
            return Err(vec![Problem::new(
                self.files.join(", "),
                "no result lines: nothing to summarize",
            )]);
        };
        let files = self.file_names(run);
        let Some(identity) = &run.info.identity else {
            return Ok(Accounted {
                run: run.info.clone(),
                fingerprint: None,
                partial: None,
                notes: vec![format!(
                    "{files}: the lines carry no run fingerprint (written by an older evalctl): \
                     read as one unsharded run; runs and shards are not checked"
                )],
            });
        };
        let mut problems = Vec::new();
        for (shard, seen) in &run.shards {
            if seen.files.len() > 1 {
                problems.push(Problem::new(
                    self.names_of(&seen.files),
                    format!(
                        "shard {shard} of run {} is in {} files: pass each shard's file once",
                        identity.fingerprint,
                        seen.files.len()
                    ),
                ));
            }
        }
        let counts: BTreeSet<u64> = run
            .shards
            .keys()
            .filter_map(|s| shard_of(s).map(|(_, n)| n))
            .collect();
        if counts.len() > 1 {
            let found: Vec<String> = run
                .shards
                .iter()
                .map(|(shard, seen)| format!("{shard} in {}", self.names_of(&seen.files)))
                .collect();
            problems.push(Problem::new(
                files.clone(),
                format!(
                    "run {} is split into different numbers of shards: {}",
                    identity.fingerprint,
                    found.join("; ")
                ),
            ));
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let count = counts.first().copied().unwrap_or(1);
        let missing_shards: Vec<String> = (0..count)
            .map(|k| format!("{k}/{count}"))
            .filter(|shard| !run.shards.contains_key(shard))
            .collect();
        let plan_calls = identity.plan_calls;
        let missing_calls = plan_calls.saturating_sub(present);
        let mut partial = Partial::new(
            missing_calls,
            plan_calls,
            missing_shards,
            run.info.completed_by(),
        );
        // The shards of a sharded run whose calls are absent: the ones to resume.
        if let Some(partial) = partial.as_mut().filter(|_| count > 1) {
            partial.incomplete_shards = (run.shards.iter())
                .filter(|(_, seen)| seen.keys.len() < seen.calls)
                .map(|(shard, seen)| format!("{shard} ({})", self.names_of(&seen.files)))
                .collect();
            let absent_from = partial.absent_from();
            partial.description.push_str(&absent_from);
        }
        if let Some(partial) = partial
            .as_ref()
            .filter(|partial| !partial.missing_shards.is_empty() && !allow_partial)
        {
            return Err(vec![Problem::new(
                files,
                format!(
                    "{} (run {}): pass every shard's file, or --allow-partial to summarize what \
                     is there",
                    partial.description, identity.fingerprint
                ),
            )]);
        }
        Ok(Accounted {
            run: run.info.clone(),
            fingerprint: Some(identity.fingerprint.clone()),
            partial,
            notes: chosen.notes,
        })
    }

    /// The files `run` has lines in, joined.
    fn file_names(&self, run: &RunSeen) -> String {
        self.names_of(run.files.keys())
    }

    /// The names of the files of `indices`, joined.
    fn names_of<'a>(&self, indices: impl IntoIterator<Item = &'a usize>) -> String {
        (indices.into_iter())
            .map(|&index| crate::text::fold_lines(&self.files[index]))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `run 1a2b… (60 lines in a.jsonl; shards 0/3, 1/3)`.
    fn describe(&self, run: &RunSeen) -> String {
        let name = run.fingerprint.as_ref().map_or_else(
            || "lines without a run fingerprint".to_string(),
            |id| format!("run {id}"),
        );
        let shards = match run.shards.len() {
            0 => String::new(),
            1 => format!(
                "; shard {}",
                run.shards.keys().next().map_or("", String::as_str)
            ),
            _ => format!(
                "; shards {}",
                run.shards.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        };
        format!(
            "{name} ({} in {}{shards})",
            lines(run.lines),
            self.file_names(run)
        )
    }
}

/// `1 line`, `3 lines`.
fn lines(count: usize) -> String {
    format!("{count} line{}", if count == 1 { "" } else { "s" })
}

/// What tells run `b` from run `a`, in words.
fn difference(a: &RunSeen, b: &RunSeen) -> String {
    let mut found = Vec::new();
    for (id, texts) in &b.candidates {
        if let Some(other) = a.candidates.get(id) {
            if other != texts {
                found.push(format!("candidate {id} has two different texts"));
            }
        }
    }
    match (&a.info.identity, &b.info.identity) {
        (Some(x), Some(y)) => {
            if x.evaluator_digest != y.evaluator_digest {
                found.push("the evaluator or task models differ".to_string());
            }
            if x.inputs_digest != y.inputs_digest {
                found.push("the inputs differ".to_string());
            }
        }
        _ => found.push("one has no run fingerprint (an older evalctl's lines)".to_string()),
    }
    if found.is_empty() {
        found.push("the candidates or --repeat differ".to_string());
    }
    found.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_shards_or_more_in_a_row_are_a_range() {
        let shards =
            |list: &[&str]| shard_ranges(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(shards(&["0/3", "2/3"]), "0/3, 2/3");
        assert_eq!(shards(&["0/5", "1/5"]), "0/5, 1/5");
        let others: Vec<String> = (0..100)
            .filter(|&k| k != 7)
            .map(|k| format!("{k}/100"))
            .collect();
        assert_eq!(shard_ranges(&others), "0/100–6/100, 8/100–99/100");
    }
}
