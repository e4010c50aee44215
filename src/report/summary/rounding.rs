//! Float rounding in means and gates. Scores are summed in one order whatever order they came
//! in (calls finish, and a results file is read, in any order), so the same scores always give
//! the same mean to the last bit; and a value within [`ROUNDING`] of a threshold counts as at
//! it, so a mean the summary shows as `0.1000` (0.3 / 3 is 0.09999999999999999) meets
//! `--fail-under 0.1`, and a drop of 0.8 to 0.7 (0.10000000000000009) is not more than
//! `--fail-on-regression 0.1`.

/// How far a value may sit on the wrong side of a threshold and still count as at it: the
/// rounding of float arithmetic, far below any difference a score can mean.
pub const ROUNDING: f64 = 1e-9;

/// The same for large values (`--score-range any`), relative to their size: rounding grows with
/// the size of what is added (a mean of scores around 1e8 can be off by 1e-8).
const RELATIVE_ROUNDING: f64 = 1e-12;

/// Whether `value` is below `threshold` by more than [`ROUNDING`], or by more than
/// [`RELATIVE_ROUNDING`] of the larger one's size when that is more.
pub fn below(value: f64, threshold: f64) -> bool {
    // An infinite value or threshold (a mean that overflowed) has no size to be relative to.
    let size = value.abs().max(threshold.abs());
    let margin = if size.is_finite() {
        ROUNDING.max(RELATIVE_ROUNDING * size)
    } else {
        ROUNDING
    };
    value < threshold - margin
}

/// Scores up to this size are summed, and their squares too, without overflow.
const LARGEST_EXACT: f64 = 1e100;

/// The power of two scores as large as `largest` are divided by so that none is above
/// [`LARGEST_EXACT`] (scores near the largest float, under `--score-range any`, would overflow
/// their sum): 1 for any smaller.
pub fn overflow_scale(largest: f64) -> f64 {
    if largest.is_finite() && largest > LARGEST_EXACT {
        let excess = (largest / LARGEST_EXACT).log2().ceil();
        2f64.powi(excess as i32)
    } else {
        1.0
    }
}

/// The mean of `scores`, added in order ([`sum_in_order`]) and scaled against overflow
/// ([`overflow_scale`]); NaN for none.
pub fn mean_in_order(scores: &[f64]) -> f64 {
    let largest = scores
        .iter()
        .fold(0.0f64, |largest, score| largest.max(score.abs()));
    let scale = overflow_scale(largest);
    let scaled: Vec<f64> = scores.iter().map(|score| score / scale).collect();
    sum_in_order(&scaled) / scores.len() as f64 * scale
}

/// The mean score of `examples` (each example's scores, its repeats, in example order): of the
/// calls when every example has as many, else of the examples' means (a partial run), so that
/// it is the mean the interval is around. Each example's scores are added in one order
/// ([`sum_in_order`]), scaled against overflow ([`overflow_scale`]), and the mean is kept within
/// the lowest and highest score, which rounding could take it past (three scores of 0.7 add
/// up to a mean of 0.6999999999999998). NaN for none. `run`, `summarize`, `merge` and `compare`
/// all take their means here, so the same scores give the same mean to the last bit.
pub fn mean_of_examples(examples: &[&[f64]]) -> f64 {
    let scores = || examples.iter().flat_map(|scores| scores.iter().copied());
    let (lowest, highest) = scores().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), score| {
        (lo.min(score), hi.max(score))
    });
    let scale = overflow_scale(lowest.abs().max(highest.abs()));
    let (mut sum, mut calls) = (0.0, 0usize);
    let means: Vec<f64> = examples
        .iter()
        .map(|scores| {
            let scaled: Vec<f64> = scores.iter().map(|score| score / scale).collect();
            let example_sum = sum_in_order(&scaled);
            (sum, calls) = (sum + example_sum, calls + scores.len());
            example_sum / scores.len() as f64
        })
        .collect();
    let equal_repeats = examples
        .windows(2)
        .all(|pair| pair[0].len() == pair[1].len());
    let mean = if equal_repeats {
        sum / calls as f64
    } else {
        sum_in_order(&means) / means.len() as f64
    };
    let mean = mean * scale;
    if mean.is_nan() {
        mean
    } else {
        mean.clamp(lowest, highest)
    }
}

/// The sum of `scores` added in ascending order, whatever order they are given in.
pub fn sum_in_order(scores: &[f64]) -> f64 {
    let mut sorted = scores.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_of_examples_is_of_the_calls_or_of_the_example_means_and_within_the_scores() {
        // Plain addition: 0.7 + 0.7 + 0.7 = 2.0999999999999996, a third of it below 0.7.
        assert_eq!(mean_of_examples(&[&[0.7], &[0.7], &[0.7]]), 0.7);
        // Two repeats each: the mean of the four calls.
        assert_eq!(mean_of_examples(&[&[1.0, 0.0], &[0.5, 0.5]]), 0.5);
        // Unequal repeats: of the examples' means (1 and 0.25), not of the calls (0.5).
        assert_eq!(mean_of_examples(&[&[1.0], &[0.5, 0.0, 0.0, 0.5]]), 0.625);
        // Near the largest float, without overflowing.
        assert_eq!(mean_of_examples(&[&[1.5e308], &[1.5e308]]), 1.5e308);
        assert!(mean_of_examples(&[]).is_nan());
    }

    #[test]
    fn the_order_of_the_scores_does_not_change_their_sum() {
        assert_ne!(0.1 + 0.2 + 0.3, 0.3 + 0.2 + 0.1);
        assert_eq!(
            sum_in_order(&[0.1, 0.2, 0.3]),
            sum_in_order(&[0.3, 0.2, 0.1])
        );
    }

    #[test]
    fn a_value_equal_to_its_threshold_up_to_rounding_is_not_below_it() {
        let mean = [0.3, 0.0, 0.0].iter().sum::<f64>() / 3.0;
        assert!(mean < 0.1);
        assert!(!below(mean, 0.1));
        let drop = [0.7, -0.8].iter().sum::<f64>();
        assert!(drop < -0.1);
        assert!(!below(drop, -0.1));
        assert!(below(0.0999, 0.1));
        assert!(below(-0.1001, -0.1));
    }

    #[test]
    fn rounding_beyond_the_unit_range_is_judged_relative_to_the_values_size() {
        // Scores of a hundred million: the mean shown as 100000000.2 is off by far more than
        // 1e-9, and far less than any difference such scores can mean.
        let mean = sum_in_order(&[100000000.1, 100000000.3]) / 2.0;
        assert!(mean < 100000000.2 - 1e-9);
        assert!(!below(mean, 100000000.2));
        assert!(below(mean, 100000000.2001));
        assert!(below(-2e6 - 0.001, -2e6));
        assert!(below(f64::NEG_INFINITY, -0.1));
        assert!(!below(f64::INFINITY, 0.0));
    }
}
