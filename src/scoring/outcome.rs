//! The one result of scoring an output, whatever the vocabulary: a score in [0, 1], the pass
//! verdict where the vocabulary's rule gives one, and the detail the vocabulary words its result
//! with. Each vocabulary maps an [`Outcome`] to its reference's wire shape in one place: FEP
//! checks to `{"passed": bool}`, evaluation-spec validators to their result's verdict, score,
//! reason and evidence, task metrics to a result line's score and assertion counts.

/// What scoring one output found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome<D = ()> {
    /// The score in [0, 1].
    pub score: f64,
    /// Whether the output passed, where the rule gives a verdict (a check, a validator);
    /// `None` for a metric, which only scores.
    pub passed: Option<bool>,
    /// What the vocabulary words the result with (a validator's reason and evidence, a code
    /// task's assertion counts); `()` when it needs nothing.
    pub detail: D,
}

impl Outcome {
    /// A pass or a failure: score 1 or 0.
    #[inline]
    pub const fn verdict(passed: bool) -> Outcome {
        Outcome {
            score: if passed { 1.0 } else { 0.0 },
            passed: Some(passed),
            detail: (),
        }
    }

    /// A score and its verdict.
    pub const fn judged(passed: bool, score: f64) -> Outcome {
        Outcome {
            score,
            passed: Some(passed),
            detail: (),
        }
    }

    /// A score with no verdict.
    pub const fn scored(score: f64) -> Outcome {
        Outcome {
            score,
            passed: None,
            detail: (),
        }
    }
}

impl<D> Outcome<D> {
    /// The same score and verdict, with `detail`.
    pub fn with_detail<E>(self, detail: E) -> Outcome<E> {
        Outcome {
            score: self.score,
            passed: self.passed,
            detail,
        }
    }

    /// The same score and verdict, with the detail `map` makes of this one.
    pub fn map_detail<E>(self, map: impl FnOnce(D) -> E) -> Outcome<E> {
        Outcome {
            score: self.score,
            passed: self.passed,
            detail: map(self.detail),
        }
    }

    /// Whether the rule gave a verdict and it was a pass.
    #[inline]
    pub fn is_pass(&self) -> bool {
        self.passed == Some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_scores_one_or_zero_and_a_metric_has_no_verdict() {
        assert_eq!(Outcome::verdict(true), Outcome::judged(true, 1.0));
        assert_eq!(Outcome::verdict(false), Outcome::judged(false, 0.0));
        assert!(Outcome::verdict(true).is_pass());
        assert!(!Outcome::verdict(false).is_pass());
        let metric = Outcome::scored(0.25);
        assert_eq!(metric.passed, None);
        assert!(!metric.is_pass());
        let detailed = metric.with_detail("why");
        assert_eq!(
            (detailed.score, detailed.passed, detailed.detail),
            (0.25, None, "why")
        );
        assert_eq!(detailed.map_detail(str::len).detail, 3);
    }
}
