//! The typed configuration of `run` and `preflight`, resolved once from the command line, and
//! the project file `evalctl.toml` that supplies flags the command line leaves out.
//!
//! The core never sees clap: `cli` builds a [`RunConfig`] and everything downstream reads it.
//! [`bindings`] says which file key sets which flag, [`file`] finds and decodes the file.

pub mod bindings;
pub mod expand;
pub mod file;
pub mod show;

use std::path::PathBuf;
use std::time::Duration;

use crate::evaluator::EvaluatorSpec;
use crate::input::CandidateSource;
use crate::protocol::ScoreRange;
use crate::report::Gates;

/// How calls are executed.
#[derive(Debug, Clone)]
pub struct ExecConfig {
    /// Evaluator calls in flight at once (1 = strictly sequential, in order).
    pub concurrency: usize,
    /// Per-call time limit; a command evaluator past it is killed with its children.
    pub timeout: Duration,
    /// Extra attempts for transport failures, HTTP 429 and 5xx.
    pub retries: u32,
    /// Which examples of each split: `--example` ids, the first `--limit` N.
    pub examples: crate::input::ExampleSelection,
    /// Skip the preflight probe call (inputs are still validated).
    pub skip_preflight: bool,
}

/// Everything `run` and `preflight` need.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The candidates to score.
    pub candidates: CandidateSource,
    /// The evaluator that scores them.
    pub evaluator: EvaluatorSpec,
    /// `--dataset FILE.jsonl`: one call per candidate × example.
    pub dataset: Option<PathBuf>,
    /// `--valset FILE.jsonl`: validation calls (requires a dataset).
    pub valset: Option<PathBuf>,
    /// `--task-model`: payload metadata and the `OPTIMIZE_ANYTHING_TASK_MODEL` env var.
    pub task_model: Option<String>,
    /// `--generate`: the task models that answer each candidate rendered per example.
    pub generate: Option<crate::generate::GenerateSpec>,
    /// `--price`, `--max-cost`: what the task models' and the judge's calls cost, and the budget.
    pub pricing: crate::llm::price::Pricing,
    /// `--score-range`: which scores the shared validator accepts.
    pub score_range: ScoreRange,
    /// Concurrency, timeouts, retries, limits.
    pub exec: ExecConfig,
    /// `--output FILE.jsonl`: one result line per call, appended as each call finishes.
    pub output: Option<PathBuf>,
    /// `--report FILE.html`: the HTML report of the run, written at the end.
    pub report: Option<PathBuf>,
    /// `--fail-under X`, `--max-errors N`, `--max-error-rate R`: when the run exits 1.
    pub gates: Gates,
    /// `--seed`: seeds the bootstrap intervals of the summary.
    pub seed: u64,
    /// `--resume`: read `output` first and make only the calls it does not answer yet.
    pub resume: bool,
    /// `--resume-keep-errors`: an errored line answers its call too (it is not re-run).
    pub resume_keep_errors: bool,
    /// `--append-run`: `output` may hold lines of other runs; this run's lines go beside them.
    pub append_run: bool,
    /// `--repeat N`: make each call N times (each repeat has its own key).
    pub repeat: Option<u32>,
    /// `--cache` (with `--cache-dir`): the directory of the evaluator-result cache.
    pub cache_dir: Option<PathBuf>,
    /// The `evalctl.toml` in use.
    pub config_file: Option<PathBuf>,
    /// `--cache-input`, `--cache-salt`: what else joins every call's key.
    pub declared: crate::runner::key::DeclaredInputs,
    /// `--junit FILE.xml`: the calls as a JUnit XML report, written when the run ends.
    pub junit: Option<PathBuf>,
    /// `--pass-score X`: in the JUnit report, a call scored below X is a failure.
    pub pass_score: Option<f64>,
    /// `--shard K/N`: make only shard K (0-based) of N of the plan.
    pub shard: Option<crate::runner::Shard>,
    /// `--heartbeat SECONDS`: off a terminal (or on a dumb one), a progress line this often
    /// (`None`: off).
    pub heartbeat: Option<Duration>,
}
