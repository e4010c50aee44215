//! Checks files (`--checks FILE.json`): `{"checks": [FEP check objects]}`, validated in full before
//! anything runs — every problem of every check, with its JSON location, in one report (exit 2).

use std::path::Path;

use serde_json::Value;

use super::{parse_check, Check, PathCache, Problem};
use crate::error::bad_input;
use crate::text::json_type;

/// Load the checks file at `path` and prepare its checks, compiling paths through `paths`.
/// Any problem — unreadable, empty or blank file, bad JSON, a malformed or invalid check — is bad
/// input naming the file and the JSON location, e.g. `error: c.json: checks[1].arguments.pattern:
/// ...`.
pub fn load_checks_file(path: &Path, paths: &mut PathCache) -> anyhow::Result<Vec<Check>> {
    let display = path.display();
    let text = std::fs::read_to_string(path).map_err(|err| {
        bad_input(format!(
            "error: {display}: cannot read checks file: {}",
            crate::text::io_reason(&err)
        ))
    })?;
    if text.trim().is_empty() {
        return Err(bad_input(format!(
            "error: {display}: the checks file is empty (expected {{\"checks\": [...]}})"
        )));
    }
    let document: Value = serde_json::from_str(&text)
        .map_err(|err| bad_input(format!("error: {display}: invalid JSON: {err}")))?;
    let mut problems = Vec::new();
    let checks = match &document {
        Value::Object(object) => {
            for key in object.keys().filter(|key| *key != "checks") {
                problems.push(format!(
                    "{key}: unknown field (a checks file holds `checks`)"
                ));
            }
            match object.get("checks") {
                Some(Value::Array(checks)) => checks.as_slice(),
                Some(other) => {
                    problems.push(format!(
                        "checks: must be an array of checks, got {}",
                        json_type(other)
                    ));
                    &[]
                }
                None => {
                    problems.push(
                        "missing required field `checks` (expected {\"checks\": [...]})".into(),
                    );
                    &[]
                }
            }
        }
        other => {
            problems.push(format!(
                "expected an object {{\"checks\": [...]}}, got {}",
                json_type(other)
            ));
            &[]
        }
    };
    let mut prepared = Vec::with_capacity(checks.len());
    for (index, raw) in checks.iter().enumerate() {
        let base = format!("checks[{index}]");
        let located = |problem: &Problem| problem.describe(&base);
        match parse_check(raw) {
            Ok(def) => {
                let check = Check::prepare(def, paths);
                problems.extend(check.problems().iter().map(located));
                prepared.push(check);
            }
            Err(found) => problems.extend(found.iter().map(located)),
        }
    }
    if problems.is_empty() {
        Ok(prepared)
    } else {
        let source = display.to_string();
        Err(bad_input(render_problems(
            problems
                .iter()
                .map(|problem| format!("{source}: {problem}")),
        )))
    }
}

/// One `error: ...` line per located problem, every one of them (the issue asks for all
/// problems at once, like the run's input loader).
pub fn render_problems(problems: impl Iterator<Item = String>) -> String {
    let lines: Vec<String> = problems
        .map(|problem| format!("error: {problem}"))
        .collect();
    lines.join("\n")
}
