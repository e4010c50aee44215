//! pass@k under `--repeat N --pass-score X`: each example's repeats, and the unbiased
//! estimator averaged over the examples.

use std::collections::BTreeMap;

use serde::Serialize;

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
pub(super) struct Repeats {
    pub(super) finished: u64,
    pub(super) passed: u64,
    pub(super) name: String,
}

/// One row's repeats of each example, by split slot and example index.
pub(super) type ExampleRepeats = BTreeMap<(usize, usize), Repeats>;

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
    pub(super) fn of<'a>(k: u32, examples: impl Iterator<Item = &'a Repeats> + Clone) -> PassAtK {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_at_k_is_the_unbiased_estimator() {
        // 1 - C(n-c, k) / C(n, k): n = 5, c = 2, k = 2 gives 1 - 3/10.
        assert!((pass_at(5, 2, 2) - 0.7).abs() < 1e-12);
        assert!((pass_at(3, 1, 1) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(pass_at(3, 0, 3), 0.0);
        assert_eq!(pass_at(3, 1, 3), 1.0);
    }
}
