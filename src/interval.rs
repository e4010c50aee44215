//! Error bars: the standard error of a mean and its 95% bootstrap interval, seeded so a rerun
//! prints the same interval (`--seed`). Shared by the run summary, `evalctl compare` (whose
//! paired differences are just another list of per-example values) and the task-spec summary.

/// Bootstrap resamples per interval: enough for stable 2.5% / 97.5% percentiles.
const RESAMPLES: usize = 2000;

/// The seed used when `--seed` is not given, so reruns print the same interval.
pub const DEFAULT_SEED: u64 = 20_240_901;

/// The standard error of the mean of `values` (the sample standard deviation over the square
/// root of their count); `None` with fewer than two values. Equal values have none, whatever
/// the rounding of their mean (three values of 0.7 have a mean of 0.6999999999999998).
pub fn standard_error(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    if all_equal(values) {
        return Some(0.0);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some((variance / n as f64).sqrt())
}

/// The standard error of the mean of `values` and its 95% bootstrap interval (resampling
/// `values` with replacement); `None` for both with fewer than two values.
pub fn spread(values: &[f64], seed: u64) -> (Option<f64>, Option<[f64; 2]>) {
    let Some(stderr) = standard_error(values) else {
        return (None, None);
    };
    let n = values.len();
    if all_equal(values) {
        // Every resample is these same values: its mean is the value.
        return (Some(stderr), Some([values[0], values[0]]));
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    // A resample's mean is kept within its lowest and highest value, as every mean is (three
    // values of 0.7 add up to a mean of 0.6999999999999998).
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let (mut sum, mut lowest, mut highest) = (0.0, f64::INFINITY, f64::NEG_INFINITY);
            for _ in 0..n {
                let value = values[rng.usize(..n)];
                sum += value;
                lowest = lowest.min(value);
                highest = highest.max(value);
            }
            (sum / n as f64).clamp(lowest, highest)
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let lo = means[RESAMPLES * 25 / 1000];
    let hi = means[RESAMPLES * 975 / 1000 - 1];
    (Some(stderr), Some([lo, hi]))
}

/// Whether every value of `values` is the first.
fn all_equal(values: &[f64]) -> bool {
    values
        .iter()
        .all(|value| value.total_cmp(&values[0]).is_eq())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_values_have_no_spread_and_one_value_no_interval() {
        assert_eq!(spread(&[0.5; 10], 1), (Some(0.0), Some([0.5, 0.5])));
        assert_eq!(spread(&[0.7; 3], 1), (Some(0.0), Some([0.7, 0.7])));
        // A resample of three 0.7s is the interval's top: 0.7, not its rounded mean.
        assert_eq!(spread(&[0.7, 0.25, 0.6], 1).1.map(|[_, hi]| hi), Some(0.7));
        assert_eq!(spread(&[0.5], 1), (None, None));
    }

    #[test]
    fn the_standard_error_is_the_sample_deviation_over_the_root_of_the_count() {
        // Mean 0.75; squared deviations 3 × 0.0625 + 0.5625 = 0.75; variance 0.75 / 3 = 0.25;
        // standard error √(0.25 / 4) = 0.25.
        assert_eq!(standard_error(&[1.0, 0.0, 1.0, 1.0]), Some(0.25));
        assert_eq!(standard_error(&[1.0]), None);
        assert_eq!(standard_error(&[]), None);
    }

    #[test]
    fn the_interval_is_seeded_and_brackets_the_mean() {
        let values: Vec<f64> = (0..50).map(|i| (f64::from(i) * 0.618).fract()).collect();
        let mean = values.iter().sum::<f64>() / 50.0;
        let (stderr, ci) = spread(&values, 7);
        let [lo, hi] = ci.unwrap();
        assert!(lo < mean && mean < hi && hi - lo < 0.4, "{lo} {mean} {hi}");
        // Normal approximation: the half-width is close to 1.96 standard errors.
        let half = (hi - lo) / 2.0;
        assert!((half - 1.96 * stderr.unwrap()).abs() < 0.03, "{half}");
        assert_eq!(spread(&values, 7).1, ci);
        assert_ne!(spread(&values, 8).1, ci);
    }
}
