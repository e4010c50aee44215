//! `evalctl compare BASE.jsonl NEW.jsonl`: read two runs' results, refuse runs that are not
//! comparable, pair their calls (by key, and calls whose key changed by candidate, split,
//! example (its `id`, else its index) and repeat; two scorings of `tasks score`, `tasks run` or `spec score` by example
//! alone, whatever their candidates), gate on `--fail-on-regression`, print the comparison (see
//! [`crate::report::compare`]) and pick the exit code.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::error::{invalid, Problem};
use crate::exit::{Exit, Verdict};
use crate::record::{CallRecord, Split};
use crate::report::compare::{
    compare_split, CandidateComparison, Comparison, ComparisonReport, Failed, PairedExample,
    Unpaired,
};
use crate::report::merge::{read_all, ReadRun, RecordsByKey};
use crate::report::{append_to_step_summary, below, print, Document, Reporter, Selection};

/// What `compare` needs.
#[derive(Debug, Clone)]
pub struct CompareConfig {
    /// The baseline results file.
    pub base: String,
    /// The new results file.
    pub new: String,
    /// Exit 1 when a candidate's score drops by more than this.
    pub fail_on_regression: Option<f64>,
    /// Seeds the paired bootstrap.
    pub seed: u64,
    /// `--base-run ID`: the run of the base file to compare (when it holds several).
    pub base_run: Option<String>,
    /// `--new-run ID`: the run of the new file to compare.
    pub new_run: Option<String>,
    /// `--allow-partial`: compare a run with missing shards.
    pub allow_partial: bool,
    /// `--allow-different-inputs`: compare runs whose evaluator or inputs differ.
    pub allow_different_inputs: bool,
}

/// Where a call sits whatever its key: candidate (with its task model under `run --generate`),
/// split, example, repeat (0 for a run without `--repeat`, whose one call of an example pairs
/// with the first repeat of a run with it).
type Position = (String, Split, Example, u32);

/// Which example a call is of, whatever its key: by its `id`, and how many examples of its
/// candidate and split carry that id before it (so that a record inserted into the dataset
/// still pairs each example with itself), else by its index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Example {
    Id(String, usize),
    Index(Option<usize>),
}

/// The position of every call of `records` (by key); `across` candidates, the candidate is left
/// out.
fn positions(records: &RecordsByKey, across: bool) -> HashMap<&str, Position> {
    let candidate = |record: &CallRecord| candidate_of(record, across);
    let carriers = carriers(records, across);
    records
        .iter()
        .map(|(key, record)| {
            let example = match (&record.example_id, record.example_index) {
                (Some(id), Some(index)) => {
                    let carrying = &carriers[&(candidate(record), record.split, id.as_str())];
                    Example::Id(id.clone(), carrying.range(..index).count())
                }
                (_, index) => Example::Index(index),
            };
            let position = (
                candidate(record),
                record.split,
                example,
                record.repeat.unwrap_or(0),
            );
            (key.as_str(), position)
        })
        .collect()
}

/// The candidate part of a call's position: its label, or nothing `across` candidates.
fn candidate_of(record: &CallRecord, across: bool) -> String {
    if across {
        String::new()
    } else {
        record.candidate_label()
    }
}

/// Of each id, the indices of the examples that carry it, per candidate (unless `across`) and
/// split, in order.
fn carriers(
    records: &RecordsByKey,
    across: bool,
) -> HashMap<(String, Split, &str), BTreeSet<usize>> {
    let mut carriers: HashMap<(String, Split, &str), BTreeSet<usize>> = HashMap::new();
    for record in records.values() {
        if let (Some(id), Some(index)) = (&record.example_id, record.example_index) {
            (carriers.entry((candidate_of(record, across), record.split, id.as_str())))
                .or_default()
                .insert(index);
        }
    }
    carriers
}

/// The ids that stand for several examples of one candidate and split in `records`: calls of
/// them that pair by position pair by the order of those examples, which need not be the same
/// examples.
fn shared_ids(records: &RecordsByKey, across: bool) -> HashSet<&str> {
    (carriers(records, across).into_iter())
        .filter(|(_, indices)| indices.len() > 1)
        .map(|((_, _, id), _)| id)
        .collect()
}

/// A candidate of the comparison: its index in the new run and its label (`old → new` where
/// the paired calls' candidates differ).
type PairedAt = (usize, String);

/// Which example of its own run a call is of: candidate, split and example index (its repeats
/// share it).
type ExampleOf = (Option<usize>, Split, Option<usize>);

fn example_of(record: &CallRecord) -> ExampleOf {
    (record.candidate_index, record.split, record.example_index)
}

/// The paired example at `at` and `slot`, which a paired call made.
fn paired_example<'a>(
    paired: &'a mut BTreeMap<PairedAt, BTreeMap<(Split, usize), PairedExample>>,
    at: &PairedAt,
    slot: &(Split, usize),
) -> &'a mut PairedExample {
    paired
        .get_mut(at)
        .and_then(|examples| examples.get_mut(slot))
        .expect("a paired call made the example") // ok: `at` and `slot` were recorded with it
}

/// Whether the two runs pair by example whatever their candidates: each run holds one
/// candidate, and it is what is compared. Lines of `tasks score`, `tasks run` or `spec score`
/// always do (the outputs file, the model, the runs file); two `run`s do when each scored one
/// candidate with at most one task model (`prompt_v1.txt`, then `prompt_v2.txt`).
fn across_candidates(base: &ReadRun, new: &ReadRun) -> bool {
    let one_candidate = |read: &ReadRun| {
        let mut labels = read.records.values().map(CallRecord::candidate_label);
        let first = labels.next();
        read.accounted.run.candidates == 1
            && (read.accounted.run.command.is_some() || labels.all(|label| Some(label) == first))
    };
    one_candidate(base) && one_candidate(new)
}

/// Compare the two runs, print the comparison and return the exit code.
pub fn compare(config: &CompareConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    let selection = |run: &Option<String>, flag| Selection {
        run: run.clone(),
        run_flag: Some(flag),
        allow_partial: config.allow_partial,
    };
    let base_run = read_all(
        std::slice::from_ref(&config.base),
        &selection(&config.base_run, "--base-run"),
    )?;
    let new_run = read_all(
        std::slice::from_ref(&config.new),
        &selection(&config.new_run, "--new-run"),
    )?;
    for note in base_run
        .accounted
        .notes
        .iter()
        .chain(&new_run.accounted.notes)
    {
        reporter.note(format!("note: {note}"));
    }
    check_comparable(config, &base_run, &new_run, reporter)?;
    let splits = new_run.accounted.run.splits;
    let score_split = Split::scored_in(splits);
    // The gate judges the score: the same split's mean in both runs, whatever inputs differ.
    let base_split = Split::scored_in(base_run.accounted.run.splits);
    if base_split != score_split {
        return Err(invalid(vec![Problem::new(
            format!("{}, {}", config.base, config.new),
            format!(
                "the runs' scores are the means of different splits ({}: {}; {}: {}): compare \
                 runs that both have a valset, or neither",
                config.base,
                base_split.name(),
                config.new,
                score_split.name()
            ),
        )]));
    }
    let across = across_candidates(&base_run, &new_run);
    let (base, new) = (base_run.records, new_run.records);
    // A call pairs with the base call of its key; the others pair by position with the base
    // calls no key pairs, taken in the order of their keys: each call is in one pair at most,
    // and the same two files always give the same pairs.
    let (base_positions, new_positions) = (positions(&base, across), positions(&new, across));
    let mut free_by_position: HashMap<&Position, (&String, &CallRecord)> = base
        .iter()
        .filter(|(key, _)| !new.contains_key(*key))
        .map(|(key, record)| (&base_positions[key.as_str()], (key, record)))
        .collect();
    let mut new_calls: Vec<(&String, &CallRecord)> = new.iter().collect();
    new_calls.sort_unstable_by_key(|(key, _)| *key);
    // Per candidate, per (split, example): the (base, new) scores of each paired repeat.
    let mut paired: BTreeMap<PairedAt, BTreeMap<(Split, usize), PairedExample>> = BTreeMap::new();
    // Where the calls of each example paired went, in each run, so that the repeats one run
    // has more of join their example (a run of `--repeat 5` against one of `--repeat 3`
    // compares each example's mean of all its repeats).
    let mut new_examples: HashMap<ExampleOf, (PairedAt, (Split, usize))> = HashMap::new();
    let mut base_examples: HashMap<ExampleOf, (PairedAt, (Split, usize))> = HashMap::new();
    let mut unpaired_new_calls = Vec::new();
    // The candidates with a call in a pair, in each run.
    let (mut paired_in_base, mut paired_in_new) = (HashSet::new(), HashSet::new());
    let shared = [shared_ids(&base, across), shared_ids(&new, across)];
    // The ids of several examples whose calls paired by position.
    let mut paired_in_order: BTreeSet<&str> = BTreeSet::new();
    for (key, record) in new_calls {
        let partner = match base.get(key) {
            Some(partner) => partner,
            None => match free_by_position.remove(&new_positions[key.as_str()]) {
                Some((_, partner)) => {
                    if let (_, _, Example::Id(id, _), _) = &new_positions[key.as_str()] {
                        if shared.iter().any(|ids| ids.contains(id.as_str())) {
                            paired_in_order.insert(id);
                        }
                    }
                    partner
                }
                None => {
                    unpaired_new_calls.push(record);
                    continue;
                }
            },
        };
        let slot = (record.split, record.example_index.unwrap_or(0));
        let (was, is) = (partner.candidate_label(), record.candidate_label());
        let label = if was == is {
            is.clone()
        } else {
            format!("{was} → {is}")
        };
        let at = (record.candidate_index.unwrap_or(usize::MAX), label);
        new_examples
            .entry(example_of(record))
            .or_insert_with(|| (at.clone(), slot));
        base_examples
            .entry(example_of(partner))
            .or_insert_with(|| (at.clone(), slot));
        let entry = paired
            .entry(at)
            .or_default()
            .entry(slot)
            .or_insert_with(|| PairedExample {
                base: Vec::new(),
                new: Vec::new(),
                index: record.example_index,
                line: record.example_line,
                id: record.example_id.clone(),
                failed: Failed::default(),
            });
        entry.add_base(partner);
        entry.add_new(record);
        paired_in_base.insert(was);
        paired_in_new.insert(is);
    }
    let mut unpaired_new = 0;
    for record in unpaired_new_calls {
        match new_examples.get(&example_of(record)) {
            Some((at, slot)) => paired_example(&mut paired, at, slot).add_new(record),
            None => unpaired_new += 1,
        }
    }
    let mut free_base: Vec<(&String, &CallRecord)> = free_by_position.into_values().collect();
    free_base.sort_unstable_by_key(|(key, _)| *key);
    let mut unpaired_base = 0;
    for (_, record) in free_base {
        match base_examples.get(&example_of(record)) {
            Some((at, slot)) => paired_example(&mut paired, at, slot).add_base(record),
            None => unpaired_base += 1,
        }
    }
    let mut candidates = Vec::new();
    for ((_, id), examples) in paired {
        let mut splits = BTreeMap::new();
        for split in [Split::Single, Split::Train, Split::Val] {
            let of_split: Vec<&PairedExample> = examples
                .iter()
                .filter(|((slot, _), _)| *slot == split)
                .map(|(_, example)| example)
                .collect();
            if !of_split.is_empty() {
                splits.insert(split, compare_split(split, &of_split, config.seed));
            }
        }
        let score = splits.get(&score_split).cloned();
        candidates.push(CandidateComparison {
            id,
            split: score_split,
            score,
            splits,
        });
    }
    // The candidates of either run with no call in a pair: not compared, nor judged by the gate.
    // One whose label names a compared candidate of the other run (cand-2, now cand-1) is named
    // with its file, so that it is not taken for the one compared.
    let mut unpaired: Vec<(usize, String)> = Vec::new();
    for (records, paired, paired_in_other, file) in [
        (&base, &paired_in_base, &paired_in_new, &config.base),
        (&new, &paired_in_new, &paired_in_base, &config.new),
    ] {
        let labels: BTreeSet<(usize, String)> = records
            .values()
            .map(|record| {
                let index = record.candidate_index.unwrap_or(usize::MAX);
                (index, record.candidate_label())
            })
            .collect();
        for (index, label) in labels.into_iter().filter(|(_, l)| !paired.contains(l)) {
            let named = if paired_in_other.contains(&label) {
                format!("{label} in {file}")
            } else {
                label
            };
            unpaired.push((index, named));
        }
    }
    unpaired.sort_unstable();
    let mut named = HashSet::new();
    let not_compared: Vec<String> = unpaired
        .into_iter()
        .filter_map(|(_, label)| named.insert(label.clone()).then_some(label))
        .collect();
    let regressed: Vec<String> = config
        .fail_on_regression
        .map(|limit| {
            candidates
                .iter()
                .filter(|c| {
                    c.score
                        .as_ref()
                        .is_some_and(|s| below(s.difference, -limit))
                })
                .map(|c| c.id.clone())
                .collect()
        })
        .unwrap_or_default();
    // An interrupted run fails the comparison as it fails `summarize` (a missing shard was
    // refused when the files were read).
    let accounted = [
        (&config.base, &base_run.accounted),
        (&config.new, &new_run.accounted),
    ];
    let completed_by = accounted
        .iter()
        .find_map(|(_, accounted)| accounted.partial.as_ref())
        .map_or("", |partial| partial.completed_by);
    let incomplete: Vec<String> = accounted
        .into_iter()
        .filter(|_| !config.allow_partial)
        .filter_map(|(file, accounted)| {
            let partial = accounted.partial.as_ref()?;
            Some(format!(
                "{file}: {} of {} calls absent",
                partial.missing_calls, partial.plan_calls
            ))
        })
        .collect();
    let nothing_judged = config.fail_on_regression.is_some()
        && candidates.iter().all(|candidate| candidate.score.is_none());
    let exit = if regressed.is_empty() && incomplete.is_empty() && !nothing_judged {
        Exit::Success
    } else {
        Exit::EvaluationFailed
    };
    let unpaired = Unpaired {
        base: unpaired_base,
        new: unpaired_new,
    };
    if unpaired.base + unpaired.new > 0 {
        // Where a run has calls absent, they are why its partners' calls are unpaired.
        let absent = [&base_run.accounted, &new_run.accounted]
            .iter()
            .any(|accounted| accounted.partial.is_some());
        let most = !absent && (2 * unpaired.base > base.len() || 2 * unpaired.new > new.len());
        reporter.warning(format!(
            "{} of {} calls in {} and {} of {} calls in {} are in one run only: they are not \
             compared{}",
            unpaired.base,
            base.len(),
            config.base,
            unpaired.new,
            new.len(),
            config.new,
            if most {
                "; with most calls unpaired, these are probably not two runs of the same \
                 candidates and examples: check the files"
            } else {
                ""
            }
        ));
    }
    if !paired_in_order.is_empty() {
        let ids: Vec<String> = (paired_in_order.iter())
            .map(|id| crate::text::one_line(&format!("{id:?}")))
            .collect();
        let (ids, name) = match ids.as_slice() {
            [id] => (format!("id {id}"), "names"),
            ids => (format!("ids {}", ids.join(", ")), "each name"),
        };
        reporter.warning(format!(
            "example {ids} {name} several examples of a run: their calls were paired in the \
             order of those examples, which may not pair each example with itself (give every \
             example an id of its own)"
        ));
    }
    let mut comparison = Comparison {
        score_split,
        candidates,
        not_compared,
        unpaired,
        fail_on_regression: config.fail_on_regression,
        regressed,
        incomplete,
        completed_by,
        closing: Verdict::new(exit, String::new()),
        verdict: String::new(),
    };
    comparison.conclude();
    let document = ComparisonReport {
        comparison: &comparison,
        base: &config.base,
        new: &config.new,
    };
    print(&document, reporter)?;
    if let Some(markdown) = document.markdown() {
        append_to_step_summary(&markdown, reporter);
    }
    if exit == Exit::EvaluationFailed {
        reporter.repeat_verdict(&comparison.verdict);
    }
    Ok(exit)
}

/// Refuse (exit 2) two runs whose evaluator or inputs differ, unless
/// `--allow-different-inputs`; warn when lines without a fingerprint leave it unknown.
fn check_comparable(
    config: &CompareConfig,
    base: &ReadRun,
    new: &ReadRun,
    reporter: Reporter,
) -> anyhow::Result<()> {
    let (Some(b), Some(n)) = (
        base.accounted.run.identity.as_ref(),
        new.accounted.run.identity.as_ref(),
    ) else {
        reporter.warning(format!(
            "{}, {}: lines without a run fingerprint (an older evalctl's): cannot tell whether \
             the two runs share their evaluator and inputs",
            config.base, config.new
        ));
        return Ok(());
    };
    if config.allow_different_inputs {
        return Ok(());
    }
    let files = format!("{}, {}", config.base, config.new);
    let side = |file: &str, run: &ReadRun, digest: &str| {
        let evaluator = &run.accounted.run.evaluator;
        format!(
            "{file}: run {}, {} calls, {} `{}`, evaluator {digest}",
            run.accounted.fingerprint.as_deref().unwrap_or("-"),
            run.records.len(),
            evaluator.kind,
            evaluator.target
        )
    };
    let mut problems = Vec::new();
    if b.evaluator_digest != n.evaluator_digest {
        problems.push(Problem::new(
            files.clone(),
            format!(
                "the runs' evaluators differ ({}; {}): their scores are not comparable; pass \
                 --allow-different-inputs if this is intended",
                side(&config.base, base, &b.evaluator_digest),
                side(&config.new, new, &n.evaluator_digest),
            ),
        ));
    }
    if b.inputs_digest != n.inputs_digest {
        problems.push(Problem::new(
            files,
            format!(
                "the runs' inputs differ ({}: {}: {} calls, inputs {}; {}: {} calls, inputs \
                 {}): pass --allow-different-inputs if this is intended",
                base.accounted.run.inputs_are(),
                config.base,
                base.records.len(),
                b.inputs_digest,
                config.new,
                new.records.len(),
                n.inputs_digest
            ),
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(invalid(problems))
    }
}
