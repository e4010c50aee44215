//! How the gates judged a run, as the summary reports it: the budget, the error limits,
//! `--fail-under`, `--pass-score` and the verdicts of `spec score` records.

use serde::Serialize;

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
    /// The model whose API reported no token usage for a call: the budget cannot count what
    /// its calls spend, and stopped the run there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_missing_from: Option<String>,
}

impl BudgetReport {
    /// What makes the calls the budget held back: `--resume continues`, or, when a model's
    /// API reported no token usage, a run without the budget.
    pub fn way_on(&self) -> String {
        match &self.usage_missing_from {
            Some(model) => format!(
                "{model}'s API reported no token usage, so the budget cannot count its calls: \
                 run without --max-cost to make them"
            ),
            None => "--resume continues".into(),
        }
    }
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
    /// The records' own verdicts, when the lines are `spec score`'s (which exits 1 when a run
    /// did not pass); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdicts: Option<VerdictGate>,
    /// Calls of the shards read with no line, which fail `summarize` and `merge` unless
    /// `--allow-partial`; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub complete: Option<CompleteGate>,
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
    /// Ids of the candidates not judged: with no score in a partial summary (a shard's own,
    /// `--allow-partial`), whose calls of the split that scores may all be absent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_judged: Vec<String>,
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

/// The verdicts of `spec score` records: a run that did not pass fails the summary as it
/// failed `spec score`, a run with no verdict (an errored call) included.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictGate {
    /// Runs that did not pass: their record says `passed: false`, or has no verdict.
    pub failed: usize,
    /// Of those, the runs without a verdict (the scorecard gave no overall score).
    pub without_verdict: usize,
    /// Runs that finished.
    pub runs: usize,
    /// Whether none failed.
    pub passed: bool,
}

/// Calls of the shards read with no line (an interrupted run): `summarize` and `merge` fail
/// unless `--allow-partial`, as they refuse a missing shard.
#[derive(Debug, Clone, Serialize)]
pub struct CompleteGate {
    /// Calls of the plan with no line.
    pub missing_calls: usize,
    /// Calls of the whole plan.
    pub plan_calls: usize,
    /// Always false: the gate is there only when calls are absent.
    pub passed: bool,
}
