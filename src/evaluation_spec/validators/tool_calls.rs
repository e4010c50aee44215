//! tool_call_assertion: presence, counts, argument fragments and tool order over the
//! successful calls of the tool-call trace (failed calls are counted and otherwise ignored).

use serde::Deserialize;
use serde_json::{json, Value};

use super::config::{check_required, decode, run_time_text, Problems, RawConfig};
use super::gofmt::go_list;
use super::text::evidence;
use super::{Comparison, ConfigProblem, ToolCall, ValidatorOutcome};
use crate::scoring::json::equal_as_f64;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolCallConfig {
    tool_name: Option<String>,
    must_call: Option<bool>,
    count: Option<i64>,
    min_count: Option<i64>,
    max_count: Option<i64>,
    arguments_contain: Option<Value>,
    ordered_tools: Option<Vec<String>>,
    order_mode: Option<String>,
}

impl ToolCallConfig {
    /// Trim names and modes; `ordered_tools` without a mode means `subsequence`.
    fn normalized(mut self) -> ToolCallConfig {
        self.tool_name = self
            .tool_name
            .map(|name| name.trim().to_string())
            .filter(|name| !name.is_empty());
        self.order_mode = self
            .order_mode
            .map(|mode| mode.trim().to_string())
            .filter(|mode| !mode.is_empty());
        if let Some(tools) = &mut self.ordered_tools {
            for tool in tools.iter_mut() {
                *tool = tool.trim().to_string();
            }
            if !tools.is_empty() && self.order_mode.is_none() {
                self.order_mode = Some("subsequence".to_string());
            }
        }
        self
    }

    fn has_count_assertion(&self) -> bool {
        self.count.is_some() || self.min_count.is_some() || self.max_count.is_some()
    }

    fn ordered_tools(&self) -> &[String] {
        self.ordered_tools.as_deref().unwrap_or_default()
    }

    /// The rule checks shared by load time and run time.
    fn problems(&self) -> Problems {
        let mut problems = Problems::default();
        for (at, value) in [
            (".count", self.count),
            (".min_count", self.min_count),
            (".max_count", self.max_count),
        ] {
            if value.is_some_and(|value| value < 0) {
                problems.add(at, "must be greater than or equal to 0");
            }
        }
        if self.count.is_some() && (self.min_count.is_some() || self.max_count.is_some()) {
            problems.add(".count", "cannot be combined with min_count or max_count");
        }
        if let (Some(min), Some(max)) = (self.min_count, self.max_count) {
            if min > max {
                problems.add(".min_count", "must be less than or equal to max_count");
            }
        }
        if let (Some(must_call), true) = (self.must_call, self.has_count_assertion()) {
            if must_call && self.count == Some(0) {
                problems.add(".must_call", "cannot be true when count is 0");
            }
            if must_call && self.max_count == Some(0) {
                problems.add(".must_call", "cannot be true when max_count is 0");
            }
            if !must_call && self.count.is_some_and(|count| count > 0) {
                problems.add(".must_call", "cannot be false when count is greater than 0");
            }
            if !must_call && self.min_count.is_some_and(|min| min > 0) {
                problems.add(
                    ".must_call",
                    "cannot be false when min_count is greater than 0",
                );
            }
        }
        if self
            .arguments_contain
            .as_ref()
            .is_some_and(|fragment| !fragment.is_object())
        {
            problems.add(".arguments_contain", "must be a JSON object");
        }
        for (index, tool) in self.ordered_tools().iter().enumerate() {
            if tool.is_empty() {
                problems.add(&format!(".ordered_tools[{index}]"), "must not be empty");
            }
        }
        if let Some(mode) = &self.order_mode {
            if mode != "subsequence" && mode != "exact" {
                problems.add(".order_mode", "must be \"subsequence\" or \"exact\"");
            }
            if self.ordered_tools().is_empty() {
                problems.add(".ordered_tools", "is required when order_mode is set");
            }
        }
        let declares_something = self.tool_name.is_some()
            || self.must_call.is_some()
            || self.has_count_assertion()
            || self.arguments_contain.is_some()
            || !self.ordered_tools().is_empty();
        if !declares_something {
            problems.add("", "must declare at least one tool call assertion");
        }
        problems
    }
}

pub(super) fn check(config: RawConfig<'_>) -> Vec<ConfigProblem> {
    check_required(
        config,
        "tool_call_assertion config is required",
        |config: ToolCallConfig| config.normalized().problems().0,
    )
}

/// Decode and check the config; errors are run-time reasons.
pub(super) fn prepare(config: RawConfig<'_>) -> Result<ToolCallConfig, String> {
    if config.is_absent() {
        return Err(
            "parse tool_call_assertion config: tool_call_assertion config is required".to_string(),
        );
    }
    let decoded = decode::<ToolCallConfig>(config)
        .map_err(|err| format!("parse tool_call_assertion config: {err}"))?
        .normalized();
    let problems = decoded.problems().0;
    if problems.is_empty() {
        Ok(decoded)
    } else {
        Err(format!(
            "invalid tool_call_assertion config: {}",
            run_time_text(&problems)
        ))
    }
}

/// Whether `actual` contains the `expected` fragment: objects by subset, arrays as multisets
/// (each expected element takes a distinct actual element), scalars by equality (numbers as f64).
fn contains_fragment(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(actual), Value::Object(expected)) => expected.iter().all(|(key, part)| {
            actual
                .get(key)
                .is_some_and(|value| contains_fragment(value, part))
        }),
        (Value::Array(actual), Value::Array(expected)) => {
            let mut used = vec![false; actual.len()];
            expected.iter().all(|part| {
                let found = actual
                    .iter()
                    .enumerate()
                    .position(|(index, value)| !used[index] && contains_fragment(value, part));
                found.map(|index| used[index] = true).is_some()
            })
        }
        _ => equal_as_f64(actual, expected),
    }
}

pub(super) fn tool_call_assertion(
    config: &ToolCallConfig,
    trace: &[ToolCall<'_>],
) -> ValidatorOutcome {
    let successful: Vec<(usize, &ToolCall)> = trace
        .iter()
        .enumerate()
        .filter(|(_, call)| !call.failed)
        .collect();
    let failed_count = trace.len() - successful.len();
    let tool_name = config.tool_name.as_deref();
    let matched: Vec<usize> = successful
        .iter()
        .filter(|(_, call)| tool_name.is_none_or(|name| call.name == name))
        .filter(|(_, call)| {
            config
                .arguments_contain
                .as_ref()
                .is_none_or(|fragment| contains_fragment(call.arguments, fragment))
        })
        .map(|(index, _)| *index)
        .collect();
    let matched_count = matched.len() as i64;
    let observed_names: Vec<&str> = successful.iter().map(|(_, call)| call.name).collect();

    let mut failures: Vec<String> = Vec::new();
    let has_count_key =
        config.count.is_some() || config.min_count.is_some() || config.max_count.is_some();
    let presence_applies = config.must_call.is_some()
        || (!has_count_key && (tool_name.is_some() || config.arguments_contain.is_some()));
    if presence_applies {
        let must_call = config.must_call.unwrap_or(true);
        if must_call && matched.is_empty() {
            failures.push("expected matching tool call was not observed".to_string());
        } else if !must_call && !matched.is_empty() {
            failures.push("forbidden matching tool call was observed".to_string());
        }
    }
    if let Some(count) = config.count {
        if matched_count != count {
            failures.push(format!(
                "matched tool call count {matched_count} != expected {count}"
            ));
        }
    }
    if let Some(min) = config.min_count {
        if matched_count < min {
            failures.push(format!(
                "matched tool call count {matched_count} < min_count {min}"
            ));
        }
    }
    if let Some(max) = config.max_count {
        if matched_count > max {
            failures.push(format!(
                "matched tool call count {matched_count} > max_count {max}"
            ));
        }
    }
    let ordered = config.ordered_tools();
    let order_mode = config.order_mode.as_deref().unwrap_or("subsequence");
    if !ordered.is_empty() {
        if order_mode == "exact" {
            if !observed_names
                .iter()
                .copied()
                .eq(ordered.iter().map(String::as_str))
            {
                failures.push(format!(
                    "observed tool order {} does not exactly match expected order {}",
                    go_list(&observed_names),
                    go_list(ordered)
                ));
            }
        } else {
            let mut wanted = ordered.iter().peekable();
            for name in &observed_names {
                if wanted.peek().is_some_and(|next| next == name) {
                    wanted.next();
                }
            }
            if wanted.peek().is_some() {
                failures.push(format!(
                    "observed tool order {} does not contain expected subsequence {}",
                    go_list(&observed_names),
                    go_list(ordered)
                ));
            }
        }
    }
    let passed = failures.is_empty();
    let comparison = Comparison::binary(passed, &failures.join("; ")).with_evidence(evidence([
        ("tool_name", json!(tool_name)),
        ("observed_count", json!(successful.len())),
        ("failed_count", json!(failed_count)),
        ("matched_count", json!(matched.len())),
        ("matched_indices", json!(matched)),
        ("observed_tool_names", json!(observed_names)),
        ("expected_count", json!(config.count)),
        ("expected_min_count", json!(config.min_count)),
        ("expected_max_count", json!(config.max_count)),
        (
            "expected_order",
            json!(config
                .ordered_tools
                .as_ref()
                .filter(|tools| !tools.is_empty())),
        ),
        ("expected_order_mode", json!(config.order_mode)),
        (
            "arguments_contain_set",
            json!(config.arguments_contain.is_some()),
        ),
    ]));
    ValidatorOutcome {
        source_call: matched.first().copied(),
        ..comparison.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_match_arrays_as_multisets() {
        let actual = json!({"steps": ["a", "b", {"x": 1.0, "y": 2}]});
        assert!(contains_fragment(
            &actual,
            &json!({"steps": [{"x": 1}, "a"]})
        ));
        assert!(!contains_fragment(&actual, &json!({"steps": ["a", "a"]})));
        assert!(!contains_fragment(&json!("{\"a\":1}"), &json!({"a": 1})));
    }

    #[test]
    fn config_rules_are_reported_at_load_and_run_time() {
        let config = json!({"count": 1, "min_count": 0});
        let problems = check(RawConfig::Json(&config));
        assert!(problems.iter().any(|problem| problem.at == ".count"
            && problem.message == "cannot be combined with min_count or max_count"));
        assert!(prepare(RawConfig::Json(&config)).is_err_and(|err| err
            == "invalid tool_call_assertion config: config.count cannot be combined with \
                min_count or max_count"));
        let empty = json!({});
        assert!(check(RawConfig::Json(&empty))
            .iter()
            .any(|problem| problem.at.is_empty()
                && problem.message == "must declare at least one tool call assertion"));
        let mode = json!({"ordered_tools": [" search "], "order_mode": " "});
        assert!(check(RawConfig::Json(&mode)).is_empty());
    }
}
