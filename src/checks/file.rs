//! Checks files (`--checks FILE.json`): `{"checks": [FEP check objects]}`, validated in full before
//! anything runs — every problem of every check, with its JSON location, in one report (exit 2).

use std::path::Path;

use serde_json::Value;

use super::{parse_check, Check, PathCache};
use crate::error::{bad_input, invalid, Problem};
use crate::input::Source;
use crate::text::json_type;

/// Load the checks file at `path` and prepare its checks, compiling paths through `paths`.
/// Any problem — unreadable, empty or blank file, bad JSON, a malformed or invalid check — is bad
/// input naming the file and the JSON location, e.g. `c.json: checks[1].arguments.pattern: ...`.
pub fn load_checks_file(path: &Path, paths: &mut PathCache) -> anyhow::Result<Vec<Check>> {
    let source = Source::File(path.to_path_buf());
    let display = source.display();
    let document = source.read_json("{\"checks\": [...]}").map_err(bad_input)?;
    let mut problems = Vec::new();
    let at_top = |message: String| Problem::new(display.as_str(), message);
    let checks = match &document {
        Value::Object(object) => {
            for key in object.keys().filter(|key| *key != "checks") {
                problems.push(at_top(format!(
                    "unknown key `{key}` (a checks file holds `checks`)"
                )));
            }
            match object.get("checks") {
                Some(Value::Array(checks)) => checks.as_slice(),
                Some(other) => {
                    problems.push(
                        at_top(format!(
                            "expected an array of checks, found {}",
                            json_type(other)
                        ))
                        .at("checks"),
                    );
                    &[]
                }
                None => {
                    problems.push(at_top(
                        "missing required key `checks` (expected {\"checks\": [...]})".into(),
                    ));
                    &[]
                }
            }
        }
        other => {
            problems.push(at_top(format!(
                "expected an object {{\"checks\": [...]}}, found {}",
                json_type(other)
            )));
            &[]
        }
    };
    let mut prepared = Vec::with_capacity(checks.len());
    for (index, raw) in checks.iter().enumerate() {
        let base = format!("checks[{index}]");
        let located = |problem: &super::Problem| problem.locate(&display, None, &base);
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
        Err(invalid(problems))
    }
}
