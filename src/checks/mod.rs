//! Built-in checks (FEP 0.0.1, section 2.3): check definitions, argument resolution with JSONPath,
//! the four standard checks and their results.
//!
//! A check object goes through two stages. [`parse_check`] validates its shape (an object with a
//! known `type` and an `arguments` object); a failure there is a problem of the whole request.
//! [`Check::prepare`] then validates the arguments, compiles JSONPaths (once per run, through a
//! [`PathCache`]) and a literal regex; problems found there make that one check a
//! `validation_error` when it runs, and never stop the other checks.

pub mod args;
pub mod file;
pub mod result;
pub mod standard;
pub mod timestamp;

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

pub use args::PathCache;
pub use file::load_checks_file;
pub use result::{CheckError, CheckResult, Resolved, Status};
pub use standard::CheckKind;
pub use timestamp::{CaseClock, Timestamp};

use crate::input::strict;
use args::{classify, ArgSource, Classified};
use standard::{precompile_regex, Args, Slot, CHECK_VERSION, MAX_ARGS, REGEX_FLAGS, REGEX_PATTERN};

/// A problem with a check definition, located relative to the check object (`at` is empty, or
/// starts with `.`, e.g. `.arguments.pattern`).
pub use crate::input::strict::JsonProblem as Problem;

/// The keys of a check object: the two required ones first.
const CHECK_KEYS: [&str; 3] = ["type", "arguments", "version"];

/// A check object whose shape is valid: a known type and an arguments object.
#[derive(Debug, Clone, Copy)]
pub struct CheckDef<'a> {
    /// The check type.
    pub kind: CheckKind,
    /// The raw arguments.
    pub arguments: &'a Map<String, Value>,
    /// The requested `version`, if any (validated by [`Check::prepare`]).
    pub version: Option<&'a Value>,
}

/// Validate the shape of one check object.
pub fn parse_check(value: &Value) -> Result<CheckDef<'_>, Vec<Problem>> {
    let object = strict::as_object(value).map_err(|reason| vec![Problem::new("", reason)])?;
    let mut problems: Vec<Problem> = strict::unknown_keys(object, &CHECK_KEYS)
        .map(|(key, reason)| Problem::at_key(key, reason))
        .collect();
    problems.extend(
        strict::missing_keys(object, &CHECK_KEYS[..2]).map(|(_, reason)| Problem::new("", reason)),
    );
    let kind = object
        .get("type")
        .and_then(|kind| match strict::as_str(kind) {
            Ok(name) => {
                let kind = CheckKind::from_name(name);
                if kind.is_none() {
                    problems.push(Problem::new(
                        ".type",
                        format!(
                            "unknown check type `{name}` (known: {})",
                            CheckKind::ALL.map(CheckKind::name).join(", ")
                        ),
                    ));
                }
                kind
            }
            Err(reason) => {
                problems.push(Problem::new(".type", reason));
                None
            }
        });
    let arguments =
        object
            .get("arguments")
            .and_then(|arguments| match strict::as_object(arguments) {
                Ok(arguments) => Some(arguments),
                Err(reason) => {
                    problems.push(Problem::new(".arguments", reason));
                    None
                }
            });
    match (kind, arguments) {
        (Some(kind), Some(arguments)) if problems.is_empty() => Ok(CheckDef {
            kind,
            arguments,
            version: object.get("version"),
        }),
        _ => Err(problems),
    }
}

/// A check ready to run: arguments classified, paths compiled, a literal regex compiled.
#[derive(Debug)]
pub struct Check {
    kind: CheckKind,
    args: Vec<PreparedArg>,
    regex: Option<Regex>,
    problems: Vec<Problem>,
    /// The problems as one message, for the `validation_error` of every evaluation.
    problem_message: Option<String>,
}

#[derive(Debug)]
struct PreparedArg {
    slot: usize,
    name: &'static str,
    source: ArgSource,
}

impl Check {
    /// Prepare `def`, compiling its JSONPaths through `paths`. Never fails: problems are kept
    /// and make every evaluation a `validation_error` (see [`Check::problems`]).
    pub fn prepare(def: CheckDef<'_>, paths: &mut PathCache) -> Check {
        let schema = def.kind.schema();
        let mut problems = Vec::new();
        let mut args = Vec::with_capacity(def.arguments.len());
        let mut given = [false; MAX_ARGS];
        for (name, raw) in def.arguments {
            let at = format!(".arguments.{}", strict::key_name(name));
            let Some(slot) = schema.iter().position(|spec| spec.name == name) else {
                let known: Vec<&str> = schema.iter().map(|spec| spec.name).collect();
                problems.push(Problem::new(at, strict::unknown_key(name, &known)));
                continue;
            };
            given[slot] = true;
            let spec = schema[slot];
            let source = match classify(raw) {
                Classified::Path(text) => match paths.compile(text) {
                    Ok(path) => ArgSource::Path(path),
                    Err(reason) => {
                        problems.push(Problem::new(
                            at,
                            format!("not a valid JSONPath `{text}`: {reason}"),
                        ));
                        continue;
                    }
                },
                Classified::Literal(value) => match spec.ty.check(&value) {
                    Ok(()) => ArgSource::Literal(value),
                    Err(reason) => {
                        problems.push(Problem::new(at, reason));
                        continue;
                    }
                },
            };
            args.push(PreparedArg {
                slot,
                name: spec.name,
                source,
            });
        }
        for (slot, spec) in schema.iter().enumerate() {
            if spec.required && !given[slot] {
                problems.push(Problem::new(".arguments", strict::missing_key(spec.name)));
            }
        }
        if let Some(reason) = def.kind.cross_argument_problem(&given) {
            problems.push(Problem::new(".arguments", reason));
        }
        let regex = if def.kind == CheckKind::Regex {
            prepare_regex(&args, &mut problems)
        } else {
            None
        };
        if let Some(reason) = version_problem(def.version) {
            problems.push(Problem::new(".version", reason));
        }
        let problem_message = (!problems.is_empty()).then(|| {
            let reasons: Vec<String> = problems.iter().map(|p| p.describe("")).collect();
            reasons.join("; ")
        });
        Check {
            kind: def.kind,
            args,
            regex,
            problems,
            problem_message,
        }
    }

    /// The check type.
    pub fn kind(&self) -> CheckKind {
        self.kind
    }

    /// The JSONPaths among this check's arguments that select nothing in `context`.
    pub fn unmatched_paths(&self, context: &Value) -> Vec<&str> {
        self.args
            .iter()
            .filter_map(|arg| match &arg.source {
                ArgSource::Path(path) if path.first(context).is_err() => Some(path.text()),
                _ => None,
            })
            .collect()
    }

    /// What makes this check invalid; empty when it is valid.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// Run the check over an evaluation context `{"test_case": ..., "output": ...}`; `clock` is
    /// the test case's (see [`CaseClock`]).
    pub fn evaluate<'a>(&'a self, context: &'a Value, clock: &mut CaseClock) -> CheckResult<'a> {
        let mut resolved = Vec::with_capacity(self.args.len());
        let outcome = self.run(context, &mut resolved);
        CheckResult {
            check_type: self.kind.name(),
            outcome,
            resolved,
            evaluated_at: clock.at(),
            check_version: CHECK_VERSION,
            execution_time_ms: clock.lap_ms(),
        }
    }

    fn run<'a>(
        &'a self,
        context: &'a Value,
        resolved: &mut Vec<Resolved<'a>>,
    ) -> Result<bool, CheckError> {
        if let Some(message) = &self.problem_message {
            return Err(CheckError::validation(message.clone()));
        }
        let mut args = Args::new(self.kind);
        let mut path_error = None;
        for arg in &self.args {
            let slot = match &arg.source {
                ArgSource::Literal(value) => Slot {
                    value,
                    jsonpath: None,
                },
                ArgSource::Path(path) => match path.first(context) {
                    Ok(value) => Slot {
                        value,
                        jsonpath: Some(path.text()),
                    },
                    Err(reason) => {
                        path_error.get_or_insert_with(|| {
                            CheckError::jsonpath(format!("argument `{}`: {reason}", arg.name))
                        });
                        continue;
                    }
                },
            };
            args.set(arg.slot, slot);
            resolved.push(Resolved {
                name: arg.name,
                jsonpath: slot.jsonpath,
                value: slot.value,
            });
        }
        match path_error {
            Some(error) => Err(error),
            None => self.kind.run(&args, self.regex.as_ref()),
        }
    }
}

/// Compile a `regex` check's literal `pattern` before the run. With literal (or absent) valid
/// flags the compiled regex is kept for every evaluation; when `flags` is a JSONPath or invalid,
/// the pattern is still compiled with the default flags, so a syntax error is reported in the
/// same pass as any problem with `flags` (the flags never change whether a pattern parses).
fn prepare_regex(args: &[PreparedArg], problems: &mut Vec<Problem>) -> Option<Regex> {
    let has_problem = |at: &str| problems.iter().any(|p| p.at == at);
    if has_problem(".arguments.pattern") {
        return None;
    }
    let Some(Some(pattern)) = literal(args, REGEX_PATTERN) else {
        return None;
    };
    let flags = match literal(args, REGEX_FLAGS) {
        // Absent, or a valid literal: the regex compiled now serves every evaluation.
        Some(flags) if !has_problem(".arguments.flags") => Some(flags),
        // A JSONPath, or invalid: compiled with the default flags only to check the syntax.
        _ => None,
    };
    match precompile_regex(pattern, flags.flatten()) {
        Ok(compiled) => flags.map(|_| compiled),
        Err(reason) => {
            problems.push(Problem::new(".arguments.pattern", reason));
            None
        }
    }
}

/// For a slot: `None` when it is a JSONPath, `Some(None)` when it was not given, and
/// `Some(Some(value))` for a literal.
fn literal(args: &[PreparedArg], slot: usize) -> Option<Option<&Value>> {
    match args.iter().find(|arg| arg.slot == slot) {
        None => Some(None),
        Some(PreparedArg {
            source: ArgSource::Literal(value),
            ..
        }) => Some(Some(value)),
        Some(_) => None,
    }
}

/// Why a requested check `version` cannot be honoured: not a string, not semver (the pattern of
/// FEP 5.1), or a major version other than the one implemented.
fn version_problem(version: Option<&Value>) -> Option<String> {
    static SEMVER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$",
        )
        .expect("the semver pattern is valid")
    });
    let version = version?;
    let Some(text) = version.as_str() else {
        return Some(strict::wrong_type("a semantic version string", version));
    };
    let Some(parts) = SEMVER.captures(text) else {
        return Some(format!(
            "`{text}` is not a semantic version (MAJOR.MINOR.PATCH)"
        ));
    };
    let implemented = CHECK_VERSION.split('.').next().unwrap_or_default();
    (&parts[1] != implemented).then(|| {
        format!("`{text}` is not available: evalctl implements {CHECK_VERSION} (any {implemented}.x.y is accepted)")
    })
}

/// The evaluation context of FEP 2.3.1: `{"test_case": test_case, "output": output}`. A run
/// builds one and lends each test case and output to it in turn (see [`Context::with`]).
#[derive(Debug)]
pub struct Context(Value);

impl Context {
    /// The context of `test_case` and `output`.
    pub fn new(test_case: Value, output: Value) -> Self {
        let mut object = Map::with_capacity(2);
        object.insert("test_case".to_string(), test_case);
        object.insert("output".to_string(), output);
        Context(Value::Object(object))
    }

    /// The context as JSON, what JSONPaths select from.
    pub fn value(&self) -> &Value {
        &self.0
    }

    /// Run `evaluate` on the context of `test_case` and `output`, which are moved in for the
    /// call and back out after it: no context is built per test case and nothing is cloned.
    pub fn with<T>(
        &mut self,
        test_case: &mut Value,
        output: &mut Value,
        evaluate: impl FnOnce(&Value) -> T,
    ) -> T {
        self.swap(test_case, output);
        let result = evaluate(&self.0);
        self.swap(test_case, output);
        result
    }

    fn swap(&mut self, test_case: &mut Value, output: &mut Value) {
        if let Value::Object(object) = &mut self.0 {
            for (key, value) in object.iter_mut() {
                std::mem::swap(
                    value,
                    if key == "test_case" {
                        &mut *test_case
                    } else {
                        &mut *output
                    },
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn prepare(check: Value) -> Check {
        Check::prepare(parse_check(&check).unwrap(), &mut PathCache::new())
    }

    #[test]
    fn shape_problems_are_all_reported() {
        let problems = parse_check(&json!({"type": "fuzzy", "args": {}})).unwrap_err();
        let at: Vec<&str> = problems.iter().map(|p| p.at.as_str()).collect();
        assert_eq!(at, [".args", "", ".type"]);
        assert_eq!(
            problems[0].reason,
            "unknown key `args` (expected one of type, arguments, version)"
        );
        assert_eq!(problems[1].reason, "missing required key `arguments`");
        assert!(problems[2].reason.contains("unknown check type `fuzzy`"));
    }

    #[test]
    fn argument_problems_are_located_and_named() {
        let check = prepare(json!({"type": "regex", "version": "1.x",
            "arguments": {"text": 5, "pattern": "(", "negate": "yes", "extra": 1}}));
        let found: Vec<(&str, &str)> = check
            .problems()
            .iter()
            .map(|p| (p.at.as_str(), p.reason.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (".arguments.negate", "expected a boolean, found string"),
                (".arguments.extra", "unknown key `extra` (expected one of text, pattern, negate, flags)"),
                (".arguments.pattern", "not a valid regular expression: regex parse error: ⏎     ( ⏎     ^ ⏎ error: unclosed group"),
                (".version", "`1.x` is not a semantic version (MAJOR.MINOR.PATCH)"),
            ]
        );
    }

    #[test]
    fn a_bad_literal_regex_is_found_before_the_run() {
        let check = prepare(json!({"type": "regex", "arguments": {"text": "a", "pattern": "("}}));
        assert_eq!(check.problems()[0].at, ".arguments.pattern");
        assert!(check.problems()[0]
            .reason
            .starts_with("not a valid regular expression"));
    }

    #[test]
    fn a_bad_literal_regex_is_found_whatever_the_flags() {
        for flags in [json!("$.test_case.flags"), json!({"i": true}), json!(3)] {
            let check = prepare(json!({"type": "regex",
                "arguments": {"text": "a", "pattern": "(", "flags": flags}}));
            let at: Vec<&str> = check.problems().iter().map(|p| p.at.as_str()).collect();
            let expected: &[&str] = if flags.is_string() {
                &[".arguments.pattern"]
            } else {
                &[".arguments.flags", ".arguments.pattern"]
            };
            assert_eq!(at, expected, "flags {flags}");
        }
        let by_path = prepare(json!({"type": "regex",
            "arguments": {"text": "a", "pattern": "a", "flags": "$.test_case.flags"}}));
        assert!(by_path.problems().is_empty() && by_path.regex.is_none());
    }

    #[test]
    fn versions_must_be_semver_of_the_implemented_major() {
        assert_eq!(version_problem(None), None);
        assert_eq!(version_problem(Some(&json!("1.2.3-rc.1+b5"))), None);
        assert!(version_problem(Some(&json!("2.0.0")))
            .unwrap()
            .contains("not available"));
        assert!(version_problem(Some(&json!("01.0.0")))
            .unwrap()
            .contains("not a semantic"));
        assert!(version_problem(Some(&json!(1)))
            .unwrap()
            .contains("expected a semantic version string, found number"));
    }

    #[test]
    fn evaluation_resolves_literals_and_paths_in_order() {
        let check = prepare(json!({"type": "exact_match", "arguments": {
            "expected": "$.test_case.expected", "actual": "Paris", "case_sensitive": false}}));
        let ctx = Context::new(
            json!({"id": "t", "expected": "paris"}),
            json!({"value": "x"}),
        );
        let result = check.evaluate(ctx.value(), &mut CaseClock::start());
        assert_eq!(result.outcome, Ok(true));
        let json = serde_json::to_value(&result).unwrap();
        assert_eq!(
            json["resolved_arguments"],
            json!({"expected": {"jsonpath": "$.test_case.expected", "value": "paris"},
                   "actual": {"value": "Paris"}, "case_sensitive": {"value": false}})
        );
        assert_eq!(json["metadata"]["check_version"], "1.0.0");
        assert!(json.get("error").is_none());
    }
}
