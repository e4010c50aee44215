//! The summary document of a run (`--format json` prints it as is): call counts, each
//! candidate's line, the spending, and the gates' verdict.

use std::collections::BTreeMap;

use serde::Serialize;

use super::aggregate::Aggregate;
use super::gate_report::{BudgetReport, GateReport};
use super::pass_at_k::PassAtK;
use super::rounding::below;
use super::spend::{JudgeSpend, Spend, Usage};
use crate::exit::Verdict;
use crate::protocol::ScoreRange;
use crate::record::EvaluatorInfo;
use crate::report::runs::Partial;

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

impl CandidateSummary {
    /// The row's name: the candidate's id, with its task model under `run --generate` (`a.txt
    /// × acme/small`).
    pub fn row_name(&self) -> String {
        match &self.task_model {
            Some(model) => format!("{} × {model}", self.id),
            None => self.id.clone(),
        }
    }
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
    /// Tokens spent, when any call reported `usage` (zeros when only cached calls did).
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
    /// Priced model → its calls whose API reported no token usage: the costs above leave them
    /// out (each such line says `"usage_missing": true`); absent when there are none.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub usage_missing: BTreeMap<String, usize>,
    /// Task model → its scored answers cut at its token limit (each such line's `generation`
    /// says `"cut_short": true`); absent when there are none.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub cut_short: BTreeMap<String, usize>,
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
    /// The id and text of each candidate evalctl numbered (`--candidate TEXT` as `cand-N`, a
    /// `--candidates` line without an `id` as `line-N`), which the text and Markdown summaries
    /// quote under the table; empty for named candidates and for a summary of results files
    /// (they do not hold the texts).
    #[serde(skip)]
    pub numbered_texts: Vec<(String, String)>,
    /// How the gates judged the run (set by [`crate::report::Gates::judge`]).
    pub gates: GateReport,
    /// The exit code the run ends with and why (set by [`crate::report::Gates::judge`]).
    #[serde(flatten)]
    pub closing: Verdict,
}

impl Summary {
    /// Whether `--fail-under threshold` fails `candidate`: scored below it (by more than float
    /// rounding), or not scored at all (no call finished, e.g. `--limit 0`), since a gate must
    /// not pass on nothing; but in a partial summary (a shard's own, `--allow-partial`) a
    /// candidate with no score is not judged ([`Summary::not_judged`]): its calls of the split
    /// that scores may all be among the calls absent.
    pub fn fails_under(&self, candidate: &CandidateSummary, threshold: f64) -> bool {
        match candidate.score {
            Some(score) => below(score, threshold),
            None => self.partial.is_none(),
        }
    }

    /// Candidates that fail `--fail-under threshold` ([`Summary::fails_under`]).
    pub fn below(&self, threshold: f64) -> Vec<&CandidateSummary> {
        self.candidates
            .iter()
            .filter(|c| self.fails_under(c, threshold))
            .collect()
    }

    /// Candidates `--fail-under` does not judge: those with no score in a partial summary.
    pub fn not_judged(&self) -> Vec<&CandidateSummary> {
        self.candidates
            .iter()
            .filter(|c| c.score.is_none() && self.partial.is_some())
            .collect()
    }
}
