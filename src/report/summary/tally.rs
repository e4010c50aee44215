//! The running totals of a run ([`Tally`]), updated as each call finishes, and what they give at
//! the end: the [`Summary`] and the [`Diagnostics`] for stderr.

use std::collections::{BTreeMap, HashMap};

use super::aggregate::Running;
use super::gate_report::{GateReport, PassScoreGate, VerdictGate};
use super::pass_at_k::{ExampleRepeats, PassAtK, Repeats};
use super::rounding::below;
use super::run_summary::{Calls, CandidateSummary, Summary};
use super::spend::{JudgeSpend, Spend, Tokens, Usage};
use crate::exit::Verdict;
use crate::llm::price::Prices;
use crate::protocol::ScoreRange;
use crate::record::{CallRecord, EvaluatorInfo, RunInfo, Split, Splits};
use crate::report::runs::Partial;

/// How many failed calls are described one by one on stderr.
const FAILURES_SHOWN: usize = 5;

/// Running totals of a run, updated as each call finishes: the summary and the diagnostics need
/// nothing else, so memory does not grow with the number of calls.
pub struct Tally {
    /// The rows: each candidate's id, with a task model under `run --generate`.
    rows: Vec<Row>,
    row_index: HashMap<Row, usize>,
    splits: Splits,
    /// Seeds the bootstrap intervals.
    seed: u64,
    /// Per row, per split (indexed by [`split_slot`]).
    sums: Vec<[Running; 3]>,
    calls: Calls,
    /// Tokens the evaluator's calls reported (`side_info.usage`).
    tokens: Tokens,
    /// Per row: tokens the task model's calls reported.
    generation: Vec<Tokens>,
    /// The prices of the task models and the judge.
    prices: Prices,
    /// `--judge-model`, when the LLM judge scores: the evaluator's tokens are its.
    judge: Option<String>,
    /// `--repeat N` with `--pass-score`: N, and per row the repeats of each example by split
    /// slot and example index.
    repeats: Option<(u32, Vec<ExampleRepeats>)>,
    diagnostics: Diagnostics,
    /// The first failed calls in plan order, keyed by (candidate, split, example, repeat).
    first_failures: BTreeMap<(usize, usize, usize, u32), String>,
    /// Per row: calls with a pass verdict, calls with any verdict, and all its calls.
    verdicts: Vec<(usize, usize, usize)>,
    /// `--pass-score`, and the calls that scored below it.
    pass_score: Option<(f64, usize)>,
    /// When the records' own verdicts gate the run (`spec score`'s lines): the runs that did
    /// not pass, and those of them without a verdict (errored).
    verdict_failures: Option<(usize, usize)>,
}

/// A row of the summary: a candidate's id and, under `run --generate`, a task model.
type Row = (String, Option<String>);

/// What stderr is told after a run: the first failed calls, and the built-in checks that errored.
#[derive(Debug, Default)]
pub struct Diagnostics {
    /// `label: kind: message` of the first failed calls in plan order (candidate, split,
    /// example, repeat), whatever order they finished in.
    pub failures: Vec<String>,
    /// Failed calls not in `failures`.
    pub more_failures: usize,
    /// Check name → calls in which it errored (from `side_info.errored_checks`).
    pub errored_checks: BTreeMap<String, usize>,
    /// Priced model → calls its API reported no token usage for: costs leave them out.
    pub usage_missing: BTreeMap<String, usize>,
    /// Task model → scored calls whose answer it cut at its token limit.
    pub cut_short: BTreeMap<String, usize>,
}

fn split_slot(split: Split) -> usize {
    match split {
        Split::Single => 0,
        Split::Train => 1,
        Split::Val => 2,
    }
}

impl Tally {
    /// An empty tally for `candidate_ids` (in order) over `splits`; with `pass_score`, it
    /// counts the calls that scored below it (the `--pass-score` gate).
    pub fn new(
        candidate_ids: Vec<String>,
        splits: Splits,
        seed: u64,
        pass_score: Option<f64>,
    ) -> Tally {
        let rows: Vec<Row> = candidate_ids.into_iter().map(|id| (id, None)).collect();
        let row_index = rows
            .iter()
            .enumerate()
            .map(|(index, row)| (row.clone(), index))
            .collect();
        let sums = vec![<[Running; 3]>::default(); rows.len()];
        let verdicts = vec![(0, 0, 0); rows.len()];
        let generation = vec![Tokens::default(); rows.len()];
        Tally {
            rows,
            row_index,
            splits,
            seed,
            sums,
            calls: Calls {
                total: 0,
                ok: 0,
                errors: 0,
                cached: 0,
            },
            tokens: Tokens::default(),
            generation,
            prices: Prices::new(),
            judge: None,
            repeats: None,
            diagnostics: Diagnostics::default(),
            first_failures: BTreeMap::new(),
            verdicts,
            pass_score: pass_score.map(|threshold| (threshold, 0)),
            verdict_failures: None,
        }
    }

    /// The tally `summarize` makes of the lines of `run` read back from results files, with
    /// `records` added and what the `superseded` lines spent: a row per candidate of the run
    /// (named as its lines name it, else `candidate N (no line read)`, N counting from 1 as
    /// `cand-N` does), pass@k over the `--repeat` the lines show, gated by the lines' verdicts
    /// when their command is (`spec score`). Also the candidates' names, in order.
    pub fn of_run<'a>(
        run: &RunInfo,
        records: impl Iterator<Item = &'a CallRecord> + Clone,
        superseded: &'a [CallRecord],
        seed: u64,
        pass_score: Option<f64>,
    ) -> (Tally, Vec<String>) {
        let mut candidate_ids: Vec<String> = (0..run.candidates)
            .map(|index| format!("candidate {} (no line read)", index + 1))
            .collect();
        // Every line names its candidate: one that answers no call (an interrupted call's) too.
        for record in records.clone().chain(superseded) {
            if let Some(slot) = record
                .candidate_index
                .and_then(|index| candidate_ids.get_mut(index))
            {
                slot.clone_from(&record.candidate_id);
            }
        }
        // The run's `--repeat`, as its lines show it: pass@k is reported as `run` reports it.
        let repeat = (records.clone().chain(superseded))
            .filter_map(|record| record.repeat)
            .max()
            .map(|last| last + 1);
        let mut tally = Tally::new(candidate_ids.clone(), run.splits, seed, pass_score)
            .repeated(repeat)
            .gated_by_verdicts(run.gated_by_verdicts());
        records.for_each(|record| tally.add(record));
        superseded
            .iter()
            .for_each(|record| tally.add_superseded(record));
        (tally, candidate_ids)
    }

    /// With `gated`, the records' own verdicts gate the run, as `spec score` gates it: a run
    /// whose record says `passed: false`, or has no verdict, fails the summary.
    pub fn gated_by_verdicts(mut self, gated: bool) -> Tally {
        self.verdict_failures = gated.then_some((0, 0));
        self
    }

    /// The summary of a run's lines read back from results files, as [`Tally::finish`] makes
    /// it of the run `run` (no elapsed time, not interrupted), with what of its plan is missing.
    pub fn finish_read(self, run: RunInfo, partial: Option<Partial>) -> (Summary, Diagnostics) {
        let range = run.range();
        let (mut summary, diagnostics) = self.finish(run.evaluator, range, None, false);
        summary.partial = partial;
        (summary, diagnostics)
    }

    /// One row per candidate × task model (`run --generate`), candidate by candidate, so a
    /// pair with no finished call still shows.
    pub fn per_task_model(mut self, task_models: &[String]) -> Tally {
        let candidates: Vec<String> = self.rows.drain(..).map(|(id, _)| id).collect();
        self.row_index.clear();
        self.sums.clear();
        self.verdicts.clear();
        self.generation.clear();
        if let Some((_, repeats)) = &mut self.repeats {
            repeats.clear();
        }
        for id in candidates {
            for model in task_models {
                self.push_row((id.clone(), Some(model.clone())));
            }
        }
        self
    }

    /// Under `--repeat N` (N > 1) with `--pass-score`, report pass@1 and pass@N.
    pub fn repeated(mut self, repeat: Option<u32>) -> Tally {
        if let (Some(n), Some(_)) = (repeat.filter(|n| *n > 1), self.pass_score) {
            self.repeats = Some((n, vec![BTreeMap::new(); self.rows.len()]));
        }
        self
    }

    /// Cost the task models' tokens at `prices`, and the evaluator's as the judge model
    /// `judge`'s when the LLM judge scores.
    pub fn priced(mut self, prices: Prices, judge: Option<String>) -> Tally {
        self.prices = prices;
        self.judge = judge;
        self
    }

    fn push_row(&mut self, row: Row) -> usize {
        let index = self.rows.len();
        self.row_index.insert(row.clone(), index);
        self.rows.push(row);
        self.sums.push(<[Running; 3]>::default());
        self.verdicts.push((0, 0, 0));
        self.generation.push(Tokens::default());
        if let Some((_, repeats)) = &mut self.repeats {
            repeats.push(BTreeMap::new());
        }
        index
    }

    /// The row of `record`: a record of a task model the tally has no row for (a results file
    /// of `run --generate`) gets one.
    fn row_of(&mut self, record: &CallRecord) -> Option<usize> {
        let row = (record.candidate_id.clone(), record.task_model.clone());
        match self.row_index.get(&row) {
            Some(&index) => Some(index),
            None if row.1.is_some() => Some(self.push_row(row)),
            None => None,
        }
    }

    /// Count what a line of the run that answers no call spent: one another line of its call
    /// replaced (a call `--resume` made again), or one the run stopped before its evaluator
    /// scored it.
    pub fn add_superseded(&mut self, record: &CallRecord) {
        self.note_usage_missing(record);
        if let Some(usage) = Usage::of(record) {
            self.tokens.add(usage, record.cached);
        }
        if let Some((usage, cached)) = Usage::of_generation(record) {
            if let Some(index) = self.row_of(record) {
                self.generation[index].add(usage, cached);
            }
        }
    }

    /// Count a call of a priced model whose API reported no token usage: the costs leave it out.
    fn note_usage_missing(&mut self, record: &CallRecord) {
        for model in record.usage_missing_from(self.judge.as_deref()) {
            if self.prices.contains_key(model) {
                *self
                    .diagnostics
                    .usage_missing
                    .entry(model.to_string())
                    .or_default() += 1;
            }
        }
    }

    /// Count one finished call (a line that answers none only for what it spent).
    pub fn add(&mut self, record: &CallRecord) {
        if record.unscored() {
            self.add_superseded(record);
            return;
        }
        self.calls.total += 1;
        let row = self.row_of(record);
        if let Some(error) = &record.error {
            self.calls.errors += 1;
            let key = (
                row.unwrap_or(usize::MAX),
                split_slot(record.split),
                record.example_index.unwrap_or(0),
                record.repeat.unwrap_or(0),
            );
            self.first_failures.insert(
                key,
                format!(
                    "{}: {}: {}",
                    record.call_label(),
                    error.kind.as_str(),
                    error.message
                ),
            );
            if self.first_failures.len() > FAILURES_SHOWN {
                self.first_failures.pop_last();
                self.diagnostics.more_failures += 1;
            }
        } else {
            self.calls.ok += 1;
        }
        if let Some((threshold, below)) = &mut self.pass_score {
            *below += usize::from(scored_below(record, *threshold));
        }
        if let Some((failed, without_verdict)) = &mut self.verdict_failures {
            *failed += usize::from(verdict_failed(record) || record.passed.is_none());
            *without_verdict += usize::from(record.passed.is_none());
        }
        self.calls.cached += usize::from(record.cached);
        self.note_usage_missing(record);
        if let Some(model) = record.cut_short_by() {
            *self
                .diagnostics
                .cut_short
                .entry(model.to_string())
                .or_default() += 1;
        }
        if let Some(usage) = Usage::of(record) {
            self.tokens.add(usage, record.cached);
        }
        for name in &record.errored_checks {
            *self
                .diagnostics
                .errored_checks
                .entry(name.clone())
                .or_default() += 1;
        }
        if let Some(index) = row {
            self.sums[index][split_slot(record.split)].add(
                record.example_index.unwrap_or(0),
                record.score,
                record.error.is_some(),
            );
            if let (Some((_, repeats)), Some((threshold, _))) = (&mut self.repeats, self.pass_score)
            {
                let slot = (split_slot(record.split), record.example_index.unwrap_or(0));
                let example = repeats[index].entry(slot).or_insert_with(|| Repeats {
                    name: record.example_id.clone().unwrap_or_else(|| {
                        record
                            .example_line
                            .map_or_else(|| "the single call".into(), |line| format!("line {line}"))
                    }),
                    ..Repeats::default()
                });
                example.finished += 1;
                example.passed +=
                    u64::from(!scored_below(record, threshold) && record.error.is_none());
            }
            if let Some((usage, cached)) = Usage::of_generation(record) {
                self.generation[index].add(usage, cached);
            }
            let (pass, judged, calls) = &mut self.verdicts[index];
            *pass += usize::from(record.passed == Some(true));
            *judged += usize::from(record.passed.is_some());
            *calls += 1;
        }
    }

    /// The summary of everything counted, and the diagnostics for stderr.
    pub fn finish(
        self,
        evaluator: EvaluatorInfo,
        score_range: ScoreRange,
        elapsed_ms: Option<f64>,
        interrupted: bool,
    ) -> (Summary, Diagnostics) {
        let (splits, seed, prices) = (self.splits, self.seed, self.prices);
        let rows: Vec<_> = self
            .rows
            .into_iter()
            .zip(self.sums)
            .zip(self.verdicts)
            .zip(self.generation)
            .enumerate()
            .map(|(index, (((row, sums), verdicts), generation))| {
                let pass_at_k = self.repeats.as_ref().map(|(k, repeats)| {
                    let scored = split_slot(Split::scored_in(splits));
                    let examples = repeats[index]
                        .iter()
                        .filter(move |((slot, _), _)| *slot == scored)
                        .map(|(_, example)| example);
                    PassAtK::of(*k, examples)
                });
                ((row, sums), (verdicts, generation, pass_at_k))
            })
            .collect();
        // Rows a results file of `run --generate` added go beside their candidate's, which is
        // left out when only its task models' rows have calls.
        let has_models = |id: &str| {
            rows.iter()
                .any(|((row, _), _)| row.0 == id && row.1.is_some())
        };
        let first_of = |id: &str| rows.iter().position(|((row, _), _)| row.0 == id);
        let mut ordered: Vec<(usize, bool)> = rows
            .iter()
            .map(|((row, sums), _)| {
                let shadowed = row.1.is_none()
                    && sums.iter().all(|running| running.n == 0)
                    && has_models(&row.0);
                (first_of(&row.0).unwrap_or(0), !shadowed)
            })
            .collect();
        let mut rows: Vec<_> = ordered.drain(..).zip(rows).collect();
        rows.retain(|((_, kept), _)| *kept);
        rows.sort_by_key(|((order, _), _)| *order);
        let rows = rows.into_iter().map(|(_, row)| row);
        let candidates = rows
            .into_iter()
            .map(
                |(((id, task_model), sums), ((pass, judged, calls), generation, pass_at_k))| {
                    let aggregate = |split| sums[split_slot(split)].aggregate(seed);
                    let (train, val, single) = if splits.train {
                        (
                            Some(aggregate(Split::Train)),
                            splits.val.then(|| aggregate(Split::Val)),
                            None,
                        )
                    } else {
                        (None, None, Some(aggregate(Split::Single)))
                    };
                    let score = val
                        .as_ref()
                        .or(train.as_ref())
                        .or(single.as_ref())
                        .and_then(|agg| agg.mean);
                    let generation = (!generation.is_empty()).then(|| {
                        let price = task_model.as_ref().and_then(|model| prices.get(model));
                        Spend::of(generation, price)
                    });
                    CandidateSummary {
                        id,
                        task_model,
                        score,
                        train,
                        val,
                        single,
                        // A call with no verdict (errored) did not pass, as `spec score`
                        // counts a run without one.
                        pass_rate: (judged > 0).then(|| pass as f64 / calls as f64),
                        pass_at_k,
                        generation,
                    }
                },
            )
            .collect::<Vec<CandidateSummary>>();
        let generation = Spend::total(
            candidates
                .iter()
                .filter_map(|candidate| candidate.generation.as_ref()),
        );
        // The judge's tokens count in the whole cost, which an unpriced judge leaves unknown.
        let judge_spend = self.judge.map(|model| {
            let spend = Spend::of(self.tokens, prices.get(&model));
            (model, spend)
        });
        let spent = Spend::total(
            generation.iter().chain(
                judge_spend
                    .as_ref()
                    .map(|(_, spend)| spend)
                    .filter(|spend| spend.cost_usd.is_some() || !spend.tokens.is_empty()),
            ),
        );
        let judge = judge_spend
            .filter(|(_, spend)| spend.cost_usd.is_some())
            .map(|(model, spend)| JudgeSpend { model, spend });
        let pass_score = self.pass_score.map(|(threshold, below)| PassScoreGate {
            threshold,
            below,
            calls: self.calls.total,
            passed: below == 0,
        });
        let verdicts = (self.verdict_failures).map(|(failed, without_verdict)| VerdictGate {
            failed,
            without_verdict,
            runs: self.calls.total,
            passed: failed == 0,
        });
        let mut diagnostics = self.diagnostics;
        diagnostics.failures = self.first_failures.into_values().collect();
        let summary = Summary {
            evaluator,
            score_range,
            calls: self.calls,
            usage: self.tokens.usage,
            usage_saved: self.tokens.usage_saved,
            generation,
            judge,
            cost_usd: spent.and_then(|spent| spent.cost_usd),
            cost_saved_usd: spent.and_then(|spent| spent.cost_saved_usd),
            usage_missing: diagnostics.usage_missing.clone(),
            cut_short: diagnostics.cut_short.clone(),
            elapsed_ms,
            interrupted,
            budget: None,
            partial: None,
            candidates,
            numbered_texts: Vec::new(),
            gates: GateReport {
                pass_score,
                verdicts,
                ..GateReport::default()
            },
            closing: Verdict::default(),
        };
        (summary, diagnostics)
    }
}

/// Whether `record` is a call that scored below `--pass-score threshold` (by more than float
/// rounding): a failed test case (an errored call is an error, not a failure).
pub(in crate::report) fn scored_below(record: &CallRecord, threshold: f64) -> bool {
    record.error.is_none() && below(record.score, threshold)
}

/// Whether `record` was scored without error and its own verdict is `passed: false`: a failed
/// test case where the records' verdicts gate the run (an errored call is an error, not a
/// failure).
pub(in crate::report) fn verdict_failed(record: &CallRecord) -> bool {
    record.error.is_none() && record.passed == Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interval;
    use crate::report::summary::Aggregate;
    use serde_json::json;

    fn record(side_info: serde_json::Value) -> CallRecord {
        let serde_json::Value::Object(side_info) = side_info else {
            panic!("side info is an object")
        };
        let errored_checks = CallRecord::errored_checks_of(&side_info);
        CallRecord {
            key: None,
            repeat: None,
            candidate_id: "c".into(),
            candidate_index: None,
            split: Split::Single,
            example_index: None,
            example_line: None,
            example_id: None,
            score: 0.5,
            side_info,
            error: None,
            attempts: 1,
            latency_ms: 1.0,
            passed: None,
            candidate_digest: None,
            cached: false,
            task_model: None,
            output: None,
            generation: None,
            run: None,
            errored_checks,
        }
    }

    fn tally(records: &[CallRecord]) -> (Summary, Diagnostics) {
        let mut tally = Tally::new(
            vec!["c".into()],
            Splits {
                train: false,
                val: false,
            },
            interval::DEFAULT_SEED,
            None,
        );
        records.iter().for_each(|record| tally.add(record));
        let evaluator = EvaluatorInfo {
            kind: "command".into(),
            target: "t".into(),
        };
        tally.finish(evaluator, ScoreRange::Unit, Some(1.0), false)
    }

    #[test]
    fn usage_is_summed_only_when_reported() {
        assert_eq!(tally(&[record(json!({"why": "x"}))]).0.usage, None);
        let records = [
            record(json!({"usage": {"prompt_tokens": 10, "completion_tokens": 3}})),
            record(json!({"usage": {"prompt_tokens": 7}})),
            record(json!({"usage": "n/a"})),
            record(json!({})),
        ];
        assert_eq!(
            tally(&records).0.usage,
            Some(Usage {
                prompt_tokens: 17,
                completion_tokens: 3
            })
        );
    }

    #[test]
    fn aggregates_count_failures_as_zero_and_errored_checks_are_tallied() {
        let mut failed = record(json!({"errored_checks": ["regex#1"]}));
        failed.score = 0.0;
        failed.error = Some(crate::protocol::CallError::new(
            crate::protocol::ErrorKind::Timeout,
            "slow",
        ));
        let (summary, diagnostics) = tally(&[
            record(json!({"errored_checks": ["regex#1", "contains"]})),
            failed,
        ]);
        let single = summary.candidates[0].single.clone().unwrap();
        assert_eq!(
            single,
            Aggregate {
                n: 2,
                mean: Some(0.25),
                min: Some(0.0),
                max: Some(0.5),
                errors: 1,
                stderr: None,
                ci95: None,
            }
        );
        assert_eq!(summary.candidates[0].score, Some(0.25));
        assert_eq!(
            (summary.calls.total, summary.calls.ok, summary.calls.errors),
            (2, 1, 1)
        );
        assert_eq!(diagnostics.failures, ["c: timeout: slow"]);
        assert_eq!(diagnostics.errored_checks.get("regex#1"), Some(&2));
        assert_eq!(diagnostics.errored_checks.get("contains"), Some(&1));
    }
}
