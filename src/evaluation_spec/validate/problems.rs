//! The problem list every rule adds to, and the small checks several sections share (a blank
//! text, a unit range, a unique key, a pass threshold).

use std::collections::HashSet;

use crate::evaluation_spec::decode::SpecProblem;

/// Collects problems in order.
#[derive(Default)]
pub(super) struct Problems(pub(super) Vec<SpecProblem>);

impl Problems {
    pub(super) fn add(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(SpecProblem::new(path, message));
    }

    /// `must be greater than or equal to 0` at `path` when `value` is below 0.
    pub(super) fn at_least_zero<T: PartialOrd + Default>(&mut self, value: T, path: String) {
        if value < T::default() {
            self.add(path, "must be greater than or equal to 0");
        }
    }
}

pub(super) fn blank(text: &str) -> bool {
    text.trim().is_empty()
}

pub(super) fn in_unit_range(value: f64) -> bool {
    (0.0..=1.0).contains(&value)
}

/// `PATH.key` is given and unique among `keys`, which it joins.
pub(super) fn check_key(
    key: &str,
    path: &str,
    keys: &mut HashSet<String>,
    problems: &mut Problems,
) {
    let key = key.trim();
    if key.is_empty() {
        problems.add(format!("{path}.key"), "is required");
    } else if !keys.insert(key.to_string()) {
        problems.add(format!("{path}.key"), "must be unique");
    }
}

/// `PATH.pass_threshold` lies in [0, 1], and is given when `required` says why it must be.
pub(super) fn check_pass_threshold(
    threshold: Option<f64>,
    required: Option<&str>,
    path: &str,
    problems: &mut Problems,
) {
    match (threshold, required) {
        (None, Some(why)) => problems.add(format!("{path}.pass_threshold"), why),
        (Some(threshold), _) if !in_unit_range(threshold) => {
            problems.add(format!("{path}.pass_threshold"), "must be between 0 and 1")
        }
        _ => {}
    }
}
