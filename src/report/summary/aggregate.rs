//! One candidate's scores over one split: running totals kept as calls finish, and their
//! [`Aggregate`] (mean, range, errors, standard error and bootstrap interval over examples).

use std::collections::BTreeMap;

use serde::Serialize;

use super::rounding::sum_in_order;
use crate::interval;

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

#[derive(Debug, Clone, Default)]
pub(super) struct Running {
    pub(super) n: usize,
    errors: usize,
    min: f64,
    max: f64,
    /// Scores by example index (a single call is example 0), repeats together: means and
    /// intervals are computed in this order, so they do not depend on the order calls finished
    /// in (a merge of shards gives the unsharded run's summary to the last bit).
    examples: BTreeMap<usize, Vec<f64>>,
}

impl Running {
    pub(super) fn add(&mut self, example: usize, score: f64, failed: bool) {
        if self.n == 0 {
            (self.min, self.max) = (score, score);
        }
        self.n += 1;
        self.errors += usize::from(failed);
        self.min = self.min.min(score);
        self.max = self.max.max(score);
        self.examples.entry(example).or_default().push(score);
    }

    pub(super) fn aggregate(&self, seed: u64) -> Aggregate {
        let finished = self.n > 0;
        let mut sum = 0.0;
        let example_means: Vec<f64> = self
            .examples
            .values()
            .map(|scores| {
                let example_sum = sum_in_order(scores);
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
