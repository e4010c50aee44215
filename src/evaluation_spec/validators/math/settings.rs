//! The `math_equivalence` config: its members, and the check of their values at load time.

use serde::Deserialize;

use crate::evaluation_spec::validators::config::{check_strict, RawConfig};
use crate::evaluation_spec::validators::ConfigProblem;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::evaluation_spec::validators) struct MathConfig {
    pub(super) extract_answer: Option<bool>,
    pub(super) answer_delimiter: Option<String>,
    pub(super) comparison_mode: Option<String>,
    pub(super) numeric_fallback: Option<bool>,
    pub(super) tolerance: Option<f64>,
}

pub(in crate::evaluation_spec::validators) fn check(config: RawConfig<'_>) -> Vec<ConfigProblem> {
    check_strict::<MathConfig>(config, |config, problems| {
        if !matches!(
            config.comparison_mode.as_deref(),
            None | Some("symbolic" | "numeric")
        ) {
            problems.add(".comparison_mode", "must be \"symbolic\" or \"numeric\"");
        }
        if config.tolerance.is_some_and(|tolerance| tolerance < 0.0) {
            problems.add(".tolerance", "must be greater than or equal to 0");
        }
    })
}
