//! Flags of the commands over results files (`summarize`, `merge`), and the CI flags `run`
//! shares with them: error limits, the interval seed, the JUnit report.

use std::path::PathBuf;

use clap::Args;

use super::values::{parse_count, parse_seed};
use crate::commands::compare::CompareConfig;
use crate::commands::merge::MergeConfig;
use crate::error::bad_flag;
use crate::report::{Gates, Selection};

/// Error limits, the bootstrap seed and the JUnit report: `run`, `summarize` and `merge`.
#[derive(Debug, Args)]
pub struct CiArgs {
    /// Tolerate up to N errored calls: the run exits 1 only with more (default 0).
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = parse_count::<usize>)]
    pub max_errors: Option<usize>,

    /// Tolerate errored calls up to this share of the calls (0 to 1): the run exits 1 only
    /// above it. With --max-errors too, both must hold.
    #[arg(long, value_name = "R", allow_negative_numbers = true, value_parser = parse_rate)]
    pub max_error_rate: Option<f64>,

    /// Seed of the bootstrap behind each aggregate's 95% interval (ci95): the same seed prints
    /// the same interval.
    #[arg(long, value_name = "N", default_value_t = crate::report::DEFAULT_SEED,
          allow_negative_numbers = true, value_parser = parse_seed)]
    pub seed: u64,

    /// Write a JUnit XML report at the end: one testsuite per candidate (× task model) and split, one
    /// testcase per call (an errored call is an error).
    #[arg(long, value_name = "FILE.xml")]
    pub junit: Option<PathBuf>,

    /// A call scored below X fails the run (exit 1), and is a failed test case in --junit.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    pub pass_score: Option<f64>,
}

/// `evalctl summarize FILE.jsonl` and `evalctl merge A.jsonl B.jsonl ...`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Results files (`run --output`, `tasks score|run --output`, `spec score` records; `-` =
    /// stdin): one run's, or the shards of one run.
    #[arg(value_name = "FILE.jsonl", required = true)]
    pub files: Vec<String>,

    /// Exit 1 when any candidate's score is below X.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    pub fail_under: Option<f64>,

    /// Error limits, intervals and the JUnit report.
    #[command(flatten)]
    pub ci: CiArgs,

    /// Which run and how much of it: --run and --allow-partial.
    #[command(flatten)]
    pub runs: RunSelectionArgs,
}

/// Which run of the results files is read, and whether a run with missing shards is
/// summarized: `summarize`, `merge`, `report`.
#[derive(Debug, Args)]
pub struct RunSelectionArgs {
    /// Read only the lines of this run (its fingerprint, or the start of it): for a file that
    /// holds several runs (`run --append-run`).
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,

    /// Summarize a run with missing shards (else refused) or calls absent from its shards
    /// (else `summarize` and `merge` exit 1): the summary is marked partial and says how many
    /// calls are missing.
    #[arg(long)]
    pub allow_partial: bool,
}

impl RunSelectionArgs {
    /// The [`Selection`] these flags make.
    pub fn selection(&self) -> Selection {
        Selection {
            run: self.run.clone(),
            run_flag: None,
            allow_partial: self.allow_partial,
        }
    }
}

/// A share between 0 and 1 (`--max-error-rate`).
fn parse_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
        _ => Err(format!(
            "'{text}' is not a share between 0 and 1 (0.05 = 5%)"
        )),
    }
}

impl CiArgs {
    /// The gates of a run: its command's `--fail-under` and the error limits.
    pub fn gates(&self, fail_under: Option<f64>) -> Gates {
        Gates {
            fail_under,
            max_errors: self.max_errors,
            max_error_rate: self.max_error_rate,
            absent_calls_fail: false,
        }
    }
}

impl MergeArgs {
    /// Resolve the flags into a [`MergeConfig`].
    pub fn into_config(self) -> anyhow::Result<MergeConfig> {
        if self.fail_under.is_some_and(|x| !x.is_finite()) {
            return Err(bad_flag("--fail-under", "must be a finite number"));
        }
        if self.ci.pass_score.is_some_and(|x| !x.is_finite()) {
            return Err(bad_flag("--pass-score", "must be a finite number"));
        }
        Ok(MergeConfig {
            files: self.files,
            gates: Gates {
                absent_calls_fail: !self.runs.allow_partial,
                ..self.ci.gates(self.fail_under)
            },
            seed: self.ci.seed,
            junit: self.ci.junit,
            pass_score: self.ci.pass_score,
            selection: self.runs.selection(),
        })
    }
}

/// `evalctl compare BASE.jsonl NEW.jsonl`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline run's results file (`run`, `tasks score|run --output` or `spec score`).
    #[arg(value_name = "BASE.jsonl")]
    pub base: String,

    /// The new run's results file.
    #[arg(value_name = "NEW.jsonl")]
    pub new: String,

    /// Exit 1 when a candidate's score drops by more than X: the val mean with a valset, else
    /// the train mean (the score `run` and --fail-under use).
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    pub fail_on_regression: Option<f64>,

    /// Seed of the paired bootstrap behind each difference's 95% interval.
    #[arg(long, value_name = "N", default_value_t = crate::report::DEFAULT_SEED,
          allow_negative_numbers = true, value_parser = parse_seed)]
    pub seed: u64,

    /// The run of BASE.jsonl to compare, by its fingerprint or the start of it, when the file
    /// holds several (`run --append-run`).
    #[arg(long, value_name = "ID")]
    pub base_run: Option<String>,

    /// The run of NEW.jsonl to compare (it may be the same file as BASE.jsonl).
    #[arg(long, value_name = "ID")]
    pub new_run: Option<String>,

    /// Compare a run with missing shards (else refused).
    #[arg(long)]
    pub allow_partial: bool,

    /// Compare two runs whose evaluator (script, rubric, checks, score range, task model) or
    /// inputs (dataset and valset examples; the tasks and their prompts; the runs and their
    /// cases) differ (else refused: their scores do not measure the same thing).
    #[arg(long)]
    pub allow_different_inputs: bool,
}

impl CompareArgs {
    /// Resolve the flags into a [`CompareConfig`].
    pub fn into_config(self) -> anyhow::Result<CompareConfig> {
        if self
            .fail_on_regression
            .is_some_and(|x| !x.is_finite() || x < 0.0)
        {
            return Err(bad_flag(
                "--fail-on-regression",
                "must be a number of 0 or more",
            ));
        }
        Ok(CompareConfig {
            base: self.base,
            new: self.new,
            fail_on_regression: self.fail_on_regression,
            seed: self.seed,
            base_run: self.base_run,
            new_run: self.new_run,
            allow_partial: self.allow_partial,
            allow_different_inputs: self.allow_different_inputs,
        })
    }
}
