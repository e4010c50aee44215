//! The summary of `evalctl spec score`: runs, pass rate and mean overall score, then per
//! dimension and per validator, tallied one evaluation record at a time (memory does not grow
//! with the runs), in JSON or as a text table, ending with the exit code and why.

use serde::Serialize;

use super::evaluate::EvaluationRecord;
use super::validators::ResultState;
use super::EvaluationSpec;
use crate::exit::{Exit, Verdict};

/// A mean over the runs that had a value, with how many had none.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Mean {
    /// Runs with a value.
    pub n: usize,
    /// Their mean; null when no run had a value.
    pub mean: Option<f64>,
    /// Runs without a value (unavailable or errored).
    pub missing: usize,
    #[serde(skip)]
    sum: f64,
}

impl Mean {
    fn add(&mut self, value: Option<f64>) {
        match value {
            Some(value) => {
                self.n += 1;
                self.sum += value;
                self.mean = Some(self.sum / self.n as f64);
            }
            None => self.missing += 1,
        }
    }
}

/// One dimension's tally.
#[derive(Debug, Clone, Serialize)]
pub struct DimensionTally {
    /// The dimension's key.
    pub key: String,
    /// Its score over the runs.
    #[serde(flatten)]
    pub score: Mean,
}

/// One validator's tally.
#[derive(Debug, Clone, Serialize)]
pub struct ValidatorTally {
    /// The validator's key.
    pub key: String,
    /// Its score over the runs.
    #[serde(flatten)]
    pub score: Mean,
    /// Runs it passed.
    pub pass: usize,
    /// Runs it failed.
    pub fail: usize,
    /// Runs where it errored.
    pub errors: usize,
    /// Runs where its evidence was unavailable.
    pub unavailable: usize,
}

/// The summary of scoring a runs file.
#[derive(Debug, Clone, Serialize)]
pub struct ScoreSummary {
    /// The spec file as given.
    pub spec: String,
    /// The runs file as given.
    pub runs_file: String,
    /// Where judge results came from: `recorded` (the run records) or `live`.
    pub judges: &'static str,
    /// Runs scored.
    pub runs: usize,
    /// Runs whose verdict is pass.
    pub passed: usize,
    /// Runs whose verdict is fail.
    pub failed: usize,
    /// Runs with no verdict (the scorecard could not decide).
    pub undecided: usize,
    /// `passed / runs`; null without runs.
    pub pass_rate: Option<f64>,
    /// The mean overall score.
    pub overall_score: Mean,
    /// Per dimension, in declaration order.
    pub dimensions: Vec<DimensionTally>,
    /// Per validator, in declaration order.
    pub validators: Vec<ValidatorTally>,
    /// A signal stopped the scoring; the summary covers the runs before it.
    pub interrupted: bool,
    /// The exit code (0 every run passed, 1 a run failed or had no verdict, 130 interrupted) and
    /// why: `1 of 2 runs did not pass`.
    #[serde(flatten)]
    pub closing: Verdict,
}

impl ScoreSummary {
    /// An empty summary for `spec`.
    pub fn new(spec: &EvaluationSpec, spec_file: String, runs_file: String, live: bool) -> Self {
        let definition = spec.definition();
        ScoreSummary {
            spec: spec_file,
            runs_file,
            judges: if live { "live" } else { "recorded" },
            runs: 0,
            passed: 0,
            failed: 0,
            undecided: 0,
            pass_rate: None,
            overall_score: Mean::default(),
            dimensions: definition
                .scorecard
                .dimensions
                .iter()
                .map(|dimension| DimensionTally {
                    key: dimension.key.clone(),
                    score: Mean::default(),
                })
                .collect(),
            validators: definition
                .validators
                .iter()
                .map(|validator| ValidatorTally {
                    key: validator.key.clone(),
                    score: Mean::default(),
                    pass: 0,
                    fail: 0,
                    errors: 0,
                    unavailable: 0,
                })
                .collect(),
            interrupted: false,
            closing: Verdict::default(),
        }
    }

    /// Count one run's evaluation record.
    pub fn add(&mut self, record: &EvaluationRecord) {
        self.runs += 1;
        match record.passed {
            Some(true) => self.passed += 1,
            Some(false) => self.failed += 1,
            None => self.undecided += 1,
        }
        self.pass_rate = Some(self.passed as f64 / self.runs as f64);
        self.overall_score.add(record.overall_score);
        for (tally, result) in self.dimensions.iter_mut().zip(&record.dimension_results) {
            tally.score.add(result.score);
        }
        for (tally, result) in self.validators.iter_mut().zip(&record.validator_results) {
            tally.score.add(result.normalized_score);
            match (result.state, result.verdict) {
                (ResultState::Error, _) | (_, Some("error")) => tally.errors += 1,
                (ResultState::Unavailable, _) => tally.unavailable += 1,
                (_, Some("pass")) => tally.pass += 1,
                _ => tally.fail += 1,
            }
        }
    }

    /// Decide the exit code once every run is counted, and say why (`exit`, `exit_reason`).
    pub fn conclude(&mut self) -> Exit {
        let not_passed = self.runs - self.passed;
        let (exit, reason) = if self.interrupted {
            (
                Exit::Interrupted,
                format!(
                    "interrupted: {} runs scored; their records are written and summarised",
                    self.runs
                ),
            )
        } else if not_passed == 0 {
            let reason = match self.runs {
                1 => "the run passed".to_string(),
                runs => format!("all {runs} runs passed"),
            };
            (Exit::Success, reason)
        } else {
            (
                Exit::EvaluationFailed,
                did_not_pass(not_passed, self.runs, self.undecided),
            )
        };
        self.closing = Verdict::new(exit, reason);
        exit
    }

    /// The summary as a text table.
    pub fn to_text(&self) -> String {
        let number =
            |value: Option<f64>| value.map_or_else(|| "-".to_string(), |v| format!("{v:.4}"));
        let mut out = format!(
            "spec {} scored runs {} (judges: {}){}\n",
            self.spec,
            self.runs_file,
            self.judges,
            if self.interrupted {
                "   (interrupted: partial results)"
            } else {
                ""
            }
        );
        out.push_str(&format!(
            "runs: {}   passed: {}   failed: {}   undecided: {}   pass rate: {}   mean overall score: {}\n",
            self.runs,
            self.passed,
            self.failed,
            self.undecided,
            self.pass_rate
                .map_or_else(|| "-".to_string(), |rate| format!("{:.1}%", rate * 100.0)),
            number(self.overall_score.mean)
        ));
        let key_width = self
            .dimensions
            .iter()
            .map(|d| d.key.len())
            .chain(self.validators.iter().map(|v| v.key.len()))
            .chain(["dimension".len(), "validator".len()])
            .max()
            .unwrap_or(9);
        out.push_str(&format!(
            "\n{:<key_width$}  {:>6}  {:>4}  {:>7}\n",
            "dimension", "mean", "n", "missing"
        ));
        for tally in &self.dimensions {
            out.push_str(&format!(
                "{:<key_width$}  {:>6}  {:>4}  {:>7}\n",
                tally.key,
                number(tally.score.mean),
                tally.score.n,
                tally.score.missing
            ));
        }
        out.push_str(&format!(
            "\n{:<key_width$}  {:>6}  {:>4}  {:>4}  {:>6}  {:>11}\n",
            "validator", "mean", "pass", "fail", "errors", "unavailable"
        ));
        for tally in &self.validators {
            out.push_str(&format!(
                "{:<key_width$}  {:>6}  {:>4}  {:>4}  {:>6}  {:>11}\n",
                tally.key,
                number(tally.score.mean),
                tally.pass,
                tally.fail,
                tally.errors,
                tally.unavailable
            ));
        }
        out.push_str(&format!("\n{}\n", self.closing.line()));
        out
    }
}

/// Why runs fail a summary, as `spec score` says it and every reader of its records repeats
/// it: `2 of 4 runs did not pass (1 without a verdict)`.
pub fn did_not_pass(not_passed: usize, runs: usize, without_verdict: usize) -> String {
    let undecided = match without_verdict {
        0 => String::new(),
        1 => " (1 without a verdict)".to_string(),
        n => format!(" ({n} without a verdict)"),
    };
    format!("{not_passed} of {runs} runs did not pass{undecided}")
}
