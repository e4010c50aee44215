//! Checks files (`--checks FILE.json`): `{"checks": [FEP check objects], "custom_checks": {...}}`
//! (`custom_checks` optional, see [`super::custom`]), validated in full before anything runs —
//! every problem of every check, with its JSON location, in one report (exit 2).

use std::path::Path;

use serde_json::Value;

use super::catalog::Catalog;
use super::definition::parse_check;
use super::prepare::Check;
use crate::error::{bad_input, invalid, Problem};
use crate::input::json_lines::DocumentLines;
use crate::input::strict::{self, JsonProblem};
use crate::input::Source;

/// Load the checks file at `path` and prepare its checks through `catalog` (its `custom_checks`
/// are added to it).
/// Any problem — unreadable, empty or blank file, bad JSON, a malformed or invalid check — is bad
/// input naming the file and the JSON location, e.g. `c.json: checks[1].arguments.pattern: ...`.
pub fn load_checks_file(path: &Path, catalog: &mut Catalog) -> anyhow::Result<Vec<Check>> {
    let source = Source::File(path.to_path_buf());
    let display = source.display();
    let (document, text) = source
        .read_json_and_text("{\"checks\": [...]}")
        .map_err(bad_input)?;
    let text = DocumentLines::new(&text);
    let (checks, shape_problems) = checks_array(&document);
    let mut problems: Vec<Problem> = shape_problems
        .iter()
        .map(|problem| problem.locate_in(&display, &text, ""))
        .collect();
    if let Some(declarations) = document.get("custom_checks") {
        problems.extend(
            catalog
                .declare(declarations)
                .iter()
                .map(|problem| problem.locate_in(&display, &text, "")),
        );
    }
    let mut prepared = Vec::with_capacity(checks.len());
    for (index, raw) in checks.iter().enumerate() {
        let base = format!("checks[{index}]");
        let located = |problem: &JsonProblem| problem.locate_in(&display, &text, &base);
        match parse_check(raw, catalog) {
            Ok(def) => {
                let check = Check::prepare(def, catalog);
                problems.extend(check.problems().iter().map(located));
                prepared.push(check);
            }
            Err(found) => {
                problems.extend(found.iter().map(located));
                // A malformed `version` alone: the arguments are checked all the same, so that
                // every problem of the file shows at once.
                if found.iter().all(|problem| problem.at == ".version") {
                    let mut unversioned = raw.clone();
                    if let Some(members) = unversioned.as_object_mut() {
                        members.remove("version");
                    }
                    if let Ok(def) = parse_check(&unversioned, catalog) {
                        let check = Check::prepare(def, catalog);
                        problems.extend(check.problems().iter().map(located));
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(prepared)
    } else {
        Err(invalid(problems))
    }
}

/// The `checks` array of a checks file document (empty when it has a problem), and the problems
/// of the document's shape: not an object, an unknown key, `checks` missing or not an array.
fn checks_array(document: &Value) -> (&[Value], Vec<JsonProblem>) {
    let Some(object) = document.as_object() else {
        let reason = strict::wrong_type("an object {\"checks\": [...]}", document);
        return (&[], vec![JsonProblem::new("", reason)]);
    };
    let mut problems: Vec<JsonProblem> = strict::unknown_keys(object, &["checks", "custom_checks"])
        .map(|(key, reason)| JsonProblem::at_key(key, reason))
        .collect();
    let checks = match object.get("checks").map(strict::as_array) {
        Some(Ok(checks)) => checks,
        Some(Err(reason)) => {
            problems.push(JsonProblem::at_key("checks", reason));
            &[]
        }
        None => {
            problems.push(JsonProblem::new("", strict::missing_key("checks")));
            &[]
        }
    };
    (checks, problems)
}
