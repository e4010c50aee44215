//! One candidate's scores over one split: running totals kept as calls finish, and their
//! [`Aggregate`] (mean, range, errors, standard error and bootstrap interval over examples).

use std::collections::BTreeMap;

use serde::Serialize;

use super::rounding::{mean_of_examples, overflow_scale, sum_in_order};
use crate::interval;

/// Aggregate of one candidate over one split. Failed calls count as 0.0.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Aggregate {
    /// Finished calls.
    pub n: usize,
    /// Mean score (null when no call finished): of the examples' means where examples have
    /// different numbers of repeats (a partial run), so that it is the mean the interval is
    /// around; otherwise of the calls, which is the same number.
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
        // Scores near the largest float (`--score-range any`) would overflow their sum and its
        // squares: they are divided by a power of two first (exactly), and the results
        // multiplied back. Any other score is taken as it is.
        let scale = overflow_scale(self.min.abs().max(self.max.abs()));
        let example_means: Vec<f64> = self
            .examples
            .values()
            .map(|scores| {
                let scaled: Vec<f64> = scores.iter().map(|score| score / scale).collect();
                sum_in_order(&scaled) / scores.len() as f64
            })
            .collect();
        let (stderr, ci95) = interval::spread(&example_means, seed);
        let examples: Vec<&[f64]> = self.examples.values().map(Vec::as_slice).collect();
        Aggregate {
            n: self.n,
            mean: finished.then(|| mean_of_examples(&examples)),
            min: finished.then_some(self.min),
            max: finished.then_some(self.max),
            errors: self.errors,
            stderr: stderr.map(|stderr| stderr * scale),
            ci95: ci95.map(|[lo, hi]| [lo * scale, hi * scale]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_unequal_repeats_the_mean_is_of_the_example_means() {
        let mut running = Running::default();
        // Example 0 scored 1.0 twice, example 1 scored 0.0 once (its second repeat is absent).
        for (example, score) in [(0, 1.0), (0, 1.0), (1, 0.0)] {
            running.add(example, score, false);
        }
        let aggregate = running.aggregate(1);
        assert_eq!((aggregate.n, aggregate.mean), (3, Some(0.5)));
        // Equal repeats: the mean of the calls.
        running.add(1, 0.5, false);
        assert_eq!(running.aggregate(1).mean, Some(0.625));
    }

    #[test]
    fn scores_near_the_largest_float_average_without_overflow() {
        let mut running = Running::default();
        for (example, score) in [1.7e308, 1.7e308, 1.5e308, 1.3e308].into_iter().enumerate() {
            running.add(example, score, false);
        }
        let aggregate = running.aggregate(1);
        assert_eq!(aggregate.mean, Some(1.55e308));
        let stderr = aggregate.stderr.expect("a standard error");
        assert!((stderr / 0.0957e308 - 1.0).abs() < 1e-3, "{stderr}");
        assert!(aggregate
            .ci95
            .is_some_and(|[lo, hi]| lo.is_finite() && hi.is_finite()));
        // Scores of every day are summed as they are.
        assert_eq!(overflow_scale(0.9), 1.0);
        assert_eq!(overflow_scale(1e99), 1.0);
    }
}
