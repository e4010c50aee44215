//! The run summary: per-candidate aggregates over each split, and the call counts.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::interval;
use super::runs::Partial;
use crate::exit::Verdict;
use crate::llm::price::{Price, Prices};
use crate::protocol::ScoreRange;
use crate::record::{CallRecord, EvaluatorInfo, Split, Splits};

/// Call counts.
#[derive(Debug, Clone, Serialize)]
pub struct Calls {
    /// Calls that finished.
    pub total: usize,
    /// Calls that produced a valid score.
    pub ok: usize,
    /// Calls that failed (they score 0.0 in aggregates).
    pub errors: usize,
    /// Calls the cache answered (`--cache`): no evaluator ran for them.
    pub cached: usize,
}

/// Tokens summed from records' `side_info.usage` (the LLM judge reports it; any evaluator may):
/// spent by the calls made, or saved by the calls the cache answered.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Usage {
    /// Sum of `usage.prompt_tokens`.
    pub prompt_tokens: u64,
    /// Sum of `usage.completion_tokens`.
    pub completion_tokens: u64,
}

impl Usage {
    /// The tokens a record's `side_info.usage` reports, if any.
    fn of(record: &CallRecord) -> Option<Usage> {
        let (prompt_tokens, completion_tokens) = record.evaluator_tokens()?;
        Some(Usage {
            prompt_tokens,
            completion_tokens,
        })
    }

    /// The tokens a task model's call reported, if any (a command reports none).
    fn of_generation(record: &CallRecord) -> Option<(Usage, bool)> {
        let generation = record.generation.as_ref()?;
        (!generation.usage.is_zero()).then_some((
            Usage {
                prompt_tokens: generation.usage.prompt_tokens,
                completion_tokens: generation.usage.completion_tokens,
            },
            generation.cached,
        ))
    }

    fn add(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_add(other.completion_tokens),
        }
    }
}

/// Tokens spent by the calls made, and saved by the calls the cache answered; each absent until
/// a call reports some.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Tokens {
    /// Tokens spent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Tokens the cache saved: what the calls it answered reported when they were made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_saved: Option<Usage>,
}

impl Tokens {
    /// Count `usage` as spent, or as saved when the cache answered (`cached`).
    fn add(&mut self, usage: Usage, cached: bool) {
        let total = if cached {
            &mut self.usage_saved
        } else {
            &mut self.usage
        };
        *total = Some(total.map_or(usage, |total| total.add(usage)));
    }

    fn is_empty(&self) -> bool {
        self.usage.is_none() && self.usage_saved.is_none()
    }

    fn sum(&self, other: &Tokens) -> Tokens {
        let mut sum = *self;
        for (usage, cached) in [(other.usage, false), (other.usage_saved, true)] {
            if let Some(usage) = usage {
                sum.add(usage, cached);
            }
        }
        sum
    }
}

/// What the task models' calls of `run --generate`, or the LLM judge's, spent: tokens, and
/// their cost where the model has a price (`--price`, `[prices]`).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Spend {
    /// Tokens spent, and saved by the cache.
    #[serde(flatten)]
    pub tokens: Tokens,
    /// What the tokens spent cost, in USD; absent without a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// What the tokens the cache saved would have cost, in USD; absent without a price or
    /// without saved tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_saved_usd: Option<f64>,
}

impl Spend {
    /// `tokens` at `price`.
    fn of(tokens: Tokens, price: Option<&Price>) -> Spend {
        let cost = |usage: Option<Usage>| {
            Some(price?.cost(usage?.prompt_tokens, usage?.completion_tokens))
        };
        Spend {
            tokens,
            cost_usd: price.map(|_| cost(tokens.usage).unwrap_or(0.0)),
            cost_saved_usd: cost(tokens.usage_saved),
        }
    }

    /// The sum of `rows`' spending: costs only when every row has one.
    fn total<'a>(rows: impl Iterator<Item = &'a Spend>) -> Option<Spend> {
        rows.fold(None, |total: Option<Spend>, row| {
            let Some(total) = total else {
                return Some(*row);
            };
            let add = |a: Option<f64>, b: Option<f64>, priced: bool| match (a, b) {
                _ if !priced => None,
                (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
            };
            let priced = total.cost_usd.is_some() && row.cost_usd.is_some();
            Some(Spend {
                tokens: total.tokens.sum(&row.tokens),
                cost_usd: add(total.cost_usd, row.cost_usd, priced),
                cost_saved_usd: add(total.cost_saved_usd, row.cost_saved_usd, priced)
                    .filter(|_| total.cost_saved_usd.is_some() || row.cost_saved_usd.is_some()),
            })
        })
    }
}

/// The LLM judge's spending (the summary's `judge`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct JudgeSpend {
    /// `--judge-model`, as its price names it.
    pub model: String,
    /// Its tokens and their cost.
    #[serde(flatten)]
    pub spend: Spend,
}

/// Aggregate of one candidate over one split. Failed calls count as 0.0.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Aggregate {
    /// Finished calls.
    pub n: usize,
    /// Mean score (null when no call finished).
    pub mean: Option<f64>,
    /// Lowest score.
    pub min: Option<f64>,
    /// Highest score.
    pub max: Option<f64>,
    /// Failed calls.
    pub errors: usize,
    /// Standard error of the mean over examples (each example's repeats averaged first); null
    /// with fewer than two examples.
    pub stderr: Option<f64>,
    /// 95% bootstrap interval of the mean over examples, `[lo, hi]` (seeded by `--seed`).
    pub ci95: Option<[f64; 2]>,
}

/// One candidate's line of the summary.
#[derive(Debug, Clone, Serialize)]
pub struct CandidateSummary {
    /// The candidate's id.
    pub id: String,
    /// `run --generate`: the task model whose answers were scored (one entry per candidate ×
    /// task model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_model: Option<String>,
    /// The val mean with a valset, else the train mean, else the single score.
    pub score: Option<f64>,
    /// Over dataset examples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub train: Option<Aggregate>,
    /// Over valset examples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub val: Option<Aggregate>,
    /// The single call of single-artifact mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub single: Option<Aggregate>,
    /// The share of calls an evaluation spec passed (`run --spec`); absent for other evaluators.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    /// pass@1 and pass@N over the scored split (`--repeat N` with `--pass-score`), and the
    /// flaky examples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_at_k: Option<PassAtK>,
    /// `run --generate`: the tokens of the task model's calls and their cost; absent when they
    /// reported no tokens (a `--task-model-command`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<Spend>,
}

/// The whole run's summary (`--format json` prints it as is).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Which evaluator ran.
    pub evaluator: EvaluatorInfo,
    /// `unit` or `any`.
    pub score_range: ScoreRange,
    /// Call counts.
    pub calls: Calls,
    /// Tokens spent, when any call made reported `usage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Tokens the cache saved: what the calls it answered reported when they were made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_saved: Option<Usage>,
    /// `run --generate`: the tokens of every task model's calls, when any reported some, and
    /// their cost when every such model has a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<Spend>,
    /// The LLM judge's calls, when it is the evaluator and has a price: its tokens (the
    /// `usage` and `usage_saved` above) and their cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeSpend>,
    /// What the run's model calls cost in all, the task models' and the judge's, in USD; absent
    /// unless every model that spent tokens has a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// What the answers the caches gave would have cost in all, in USD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_saved_usd: Option<f64>,
    /// Wall time of the run (preflight excluded); null for a summary of results files, which
    /// do not record it.
    pub elapsed_ms: Option<f64>,
    /// True when an interruption (SIGINT, SIGTERM, SIGHUP) stopped the run early; the
    /// aggregates cover finished calls only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// `--max-cost` and what the task models' calls spent against it; absent without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetReport>,
    /// Calls of the run's plan with no line in the results files read (`--allow-partial`, or
    /// an interrupted run's file): the aggregates cover the calls present only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
    /// Per candidate, in the order given.
    pub candidates: Vec<CandidateSummary>,
    /// How the gates judged the run (set by [`super::Gates::judge`]).
    pub gates: GateReport,
    /// The exit code the run ends with and why (set by [`super::Gates::judge`]).
    #[serde(flatten)]
    pub closing: Verdict,
}

impl Summary {
    /// Candidates that fail `--fail-under threshold`: scored below it, or not scored at all (no
    /// call finished, e.g. `--limit 0`), since a gate must not pass on nothing.
    pub fn below(&self, threshold: f64) -> Vec<&CandidateSummary> {
        self.candidates
            .iter()
            .filter(|c| c.score.is_none_or(|score| score < threshold))
            .collect()
    }
}

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
    /// The first failed calls in plan order, keyed by (candidate, split, example).
    first_failures: BTreeMap<(usize, usize, usize), String>,
    /// Per row: calls with a pass verdict, and calls with any verdict.
    verdicts: Vec<(usize, usize)>,
    /// `--pass-score`, and the calls that scored below it.
    pass_score: Option<(f64, usize)>,
}

/// A row of the summary: a candidate's id and, under `run --generate`, a task model.
type Row = (String, Option<String>);

/// What stderr is told after a run: the first failed calls, and the built-in checks that errored.
#[derive(Debug, Default)]
pub struct Diagnostics {
    /// `label: kind: message` of the first failed calls in plan order (candidate, split,
    /// example), whatever order they finished in.
    pub failures: Vec<String>,
    /// Failed calls not in `failures`.
    pub more_failures: usize,
    /// Check name → calls in which it errored (from `side_info.errored_checks`).
    pub errored_checks: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, Default)]
struct Running {
    n: usize,
    errors: usize,
    min: f64,
    max: f64,
    /// Scores by example index (a single call is example 0), repeats together: means and
    /// intervals are computed in this order, so they do not depend on the order calls finished
    /// in (a merge of shards gives the unsharded run's summary to the last bit).
    examples: BTreeMap<usize, Vec<f64>>,
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
        let verdicts = vec![(0, 0); rows.len()];
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
        }
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
        self.verdicts.push((0, 0));
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

    /// Count one finished call.
    pub fn add(&mut self, record: &CallRecord) {
        self.calls.total += 1;
        let row = self.row_of(record);
        if let Some(error) = &record.error {
            self.calls.errors += 1;
            let key = (
                row.unwrap_or(usize::MAX),
                split_slot(record.split),
                record.example_index.unwrap_or(0),
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
        self.calls.cached += usize::from(record.cached);
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
                example.passed += u64::from(record.error.is_none() && record.score >= threshold);
            }
            if let Some((usage, cached)) = Usage::of_generation(record) {
                self.generation[index].add(usage, cached);
            }
            if let Some(passed) = record.passed {
                let (pass, judged) = &mut self.verdicts[index];
                *pass += usize::from(passed);
                *judged += 1;
            }
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
                    let scored = if splits.val {
                        split_slot(Split::Val)
                    } else if splits.train {
                        split_slot(Split::Train)
                    } else {
                        split_slot(Split::Single)
                    };
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
                |(((id, task_model), sums), ((pass, judged), generation, pass_at_k))| {
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
                        pass_rate: (judged > 0).then(|| pass as f64 / judged as f64),
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
            elapsed_ms,
            interrupted,
            budget: None,
            partial: None,
            candidates,
            gates: GateReport {
                pass_score,
                ..GateReport::default()
            },
            closing: Verdict::default(),
        };
        (summary, diagnostics)
    }
}

/// Whether `record` is a call that scored below `--pass-score threshold`: a failed test case
/// (an errored call is an error, not a failure).
pub(super) fn scored_below(record: &CallRecord, threshold: f64) -> bool {
    record.error.is_none() && record.score < threshold
}

impl Running {
    fn add(&mut self, example: usize, score: f64, failed: bool) {
        if self.n == 0 {
            (self.min, self.max) = (score, score);
        }
        self.n += 1;
        self.errors += usize::from(failed);
        self.min = self.min.min(score);
        self.max = self.max.max(score);
        self.examples.entry(example).or_default().push(score);
    }

    fn aggregate(&self, seed: u64) -> Aggregate {
        let finished = self.n > 0;
        let mut sum = 0.0;
        let example_means: Vec<f64> = self
            .examples
            .values()
            .map(|scores| {
                let mut scores = scores.clone();
                scores.sort_by(f64::total_cmp);
                let example_sum: f64 = scores.iter().sum();
                sum += example_sum;
                example_sum / scores.len() as f64
            })
            .collect();
        let (stderr, ci95) = interval::spread(&example_means, seed);
        Aggregate {
            n: self.n,
            mean: finished.then(|| sum / self.n as f64),
            min: finished.then_some(self.min),
            max: finished.then_some(self.max),
            errors: self.errors,
            stderr,
            ci95,
        }
    }
}

/// pass@k of one row under `--repeat N --pass-score X`: the unbiased estimator of Chen et al.
/// (2021), `1 - C(n-c, k) / C(n, k)` for an example with `n` repeats of which `c` scored at least
/// X, averaged over the examples.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PassAtK {
    /// N, the repeats of each call.
    pub k: u32,
    /// pass@1 (null when no call finished).
    pub pass_at_1: Option<f64>,
    /// pass@N, over the examples with all N repeats finished (null when none has).
    pub pass_at_k: Option<f64>,
    /// Ids (or `line N`) of the examples that passed in some repeats and failed in others.
    pub flaky: Vec<String>,
}

/// An example's repeats under `--pass-score`: finished, passed, and how it is named.
#[derive(Debug, Clone, Default)]
struct Repeats {
    finished: u64,
    passed: u64,
    name: String,
}

/// One row's repeats of each example, by split slot and example index.
type ExampleRepeats = BTreeMap<(usize, usize), Repeats>;

/// pass@k of an example with `n` repeats, `c` of them passed: `1 - C(n-c, k) / C(n, k)`,
/// computed as a product so that large `n` does not overflow.
fn pass_at(n: u64, c: u64, k: u64) -> f64 {
    if n - c < k {
        return 1.0;
    }
    1.0 - ((n - c + 1)..=n)
        .map(|i| 1.0 - k as f64 / i as f64)
        .product::<f64>()
}

impl PassAtK {
    /// pass@1 and pass@`k` over `examples`.
    fn of<'a>(k: u32, examples: impl Iterator<Item = &'a Repeats> + Clone) -> PassAtK {
        let mean = |k: u64| {
            let values: Vec<f64> = examples
                .clone()
                .filter(|example| example.finished >= k)
                .map(|example| pass_at(example.finished, example.passed, k))
                .collect();
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        };
        PassAtK {
            k,
            pass_at_1: mean(1),
            pass_at_k: mean(u64::from(k)),
            flaky: examples
                .filter(|example| example.passed > 0 && example.passed < example.finished)
                .map(|example| example.name.clone())
                .collect(),
        }
    }
}

/// `--max-cost` against what the run spent (the summary's `budget`).
#[derive(Debug, Clone, Serialize)]
pub struct BudgetReport {
    /// `--max-cost`, in USD.
    pub max_cost_usd: f64,
    /// What the task models' and the judge's calls cost, in USD (a resumed run's earlier calls
    /// included).
    pub spent_usd: f64,
    /// Whether the budget stopped the run before every call was made (exit 5).
    pub stopped: bool,
    /// Calls of the plan not made because of it; `--resume` makes them.
    pub calls_not_made: usize,
}

/// How the gates judged a run (the summary's `gates`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct GateReport {
    /// Errored calls against the error limits.
    pub errors: ErrorGate,
    /// `--fail-under` and the candidates below it; absent without `--fail-under`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fail_under: Option<FailUnderGate>,
    /// `--pass-score` and the calls below it; absent without `--pass-score`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_score: Option<PassScoreGate>,
}

/// Errored calls against `--max-errors` / `--max-error-rate`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ErrorGate {
    /// Calls that errored.
    pub count: usize,
    /// Calls that finished.
    pub calls: usize,
    /// `--max-errors`, when given.
    pub max_errors: Option<usize>,
    /// `--max-error-rate`, when given.
    pub max_error_rate: Option<f64>,
    /// Whether the errors are within the limits (with no limit given: no error at all).
    pub passed: bool,
}

/// `--fail-under` and the candidates below it.
#[derive(Debug, Clone, Serialize)]
pub struct FailUnderGate {
    /// The threshold.
    pub threshold: f64,
    /// Ids of the candidates scored below it, or not scored at all.
    pub below: Vec<String>,
    /// Whether no candidate is below it.
    pub passed: bool,
}

/// `--pass-score` and the calls that scored below it (each a failed JUnit test case).
#[derive(Debug, Clone, Serialize)]
pub struct PassScoreGate {
    /// The threshold.
    pub threshold: f64,
    /// Calls that scored below it (errored calls are counted by `errors`, not here).
    pub below: usize,
    /// Calls that finished.
    pub calls: usize,
    /// Whether no call scored below it.
    pub passed: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pass_at_k_is_the_unbiased_estimator() {
        // 1 - C(n-c, k) / C(n, k): n = 5, c = 2, k = 2 gives 1 - 3/10.
        assert!((pass_at(5, 2, 2) - 0.7).abs() < 1e-12);
        assert!((pass_at(3, 1, 1) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(pass_at(3, 0, 3), 0.0);
        assert_eq!(pass_at(3, 1, 3), 1.0);
    }

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
