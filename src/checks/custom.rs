//! Custom checks (FEP 6.1, level 3's extension mechanism): a check type that names a command.
//!
//! Besides the commands people declare, the evaluation-spec validators that compare two texts
//! are custom types of their own, `spec.TYPE` (`spec.fuzzy_match`, ...): arguments `actual`,
//! `expected` and `config`; and `spec.tool_call_assertion` over `calls` (a tool-call trace) and
//! `config`. The evaluator layer registers them (see [`AnsweredBy::Validator`]).
//!
//! A custom check type is declared in a request's or checks file's `custom_checks` —
//! `{"NAME": {"command": ["prog", "arg"] | "prog arg", "timeout": SECONDS}}` — or on the command
//! line with `--custom-check NAME=COMMAND`. A check of that type takes any arguments, literal or
//! JSONPath; for each evaluation its command gets the resolved arguments as one JSON object on
//! stdin and answers with the check's `results`, one JSON object on stdout (a boolean `passed`
//! in it counts as the check's verdict).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::result::CheckError;
use super::standard::{arg, setting, ArgSpec, ArgType, CheckKind};
use crate::input::strict;
use crate::input::strict::JsonProblem as Problem;

/// How long a custom check's command may take unless its declaration says.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The members of a declaration.
const DECLARATION_KEYS: [&str; 2] = ["command", "timeout"];

/// The prefix of the evaluation-spec validators' check types.
pub const VALIDATOR_PREFIX: &str = "spec.";

/// The arguments of a `spec.TYPE` check that compares two texts.
const VALIDATOR_ARGS: [ArgSpec; 3] = [
    arg("actual", ArgType::Text, true),
    arg("expected", ArgType::Text, true),
    setting("config", ArgType::Object, false),
];

/// The arguments of `spec.tool_call_assertion`: the tool calls (`[{"tool_name", "arguments",
/// "failed"}]`, usually a JSONPath into the output) and the validator's config.
const TOOL_CALL_ARGS: [ArgSpec; 2] = [
    arg("calls", ArgType::Text, true),
    setting("config", ArgType::Object, true),
];

/// A custom check type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCheck {
    /// The type name checks use.
    pub name: String,
    /// What answers it.
    pub by: AnsweredBy,
}

/// What answers a custom check.
#[derive(Debug, Clone)]
pub enum AnsweredBy {
    /// A command, declared by the user.
    Command {
        /// Program and arguments (never run through a shell).
        argv: Vec<String>,
        /// How long one evaluation may take.
        timeout: Duration,
    },
    /// The evaluation-spec validator of this type, comparing `actual` with `expected`: answered
    /// by `answer` where the check is evaluated (on the worker pool; no call is made for it);
    /// its literal `config` is checked when the check is prepared.
    Validator(&'static str, ValidatorFn, ConfigCheckFn),
}

/// Two custom checks are answered alike when they run the same command, or the same validator
/// (a validator type has one answering function).
impl PartialEq for AnsweredBy {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (
                AnsweredBy::Command { argv, timeout },
                AnsweredBy::Command {
                    argv: other_argv,
                    timeout: other_timeout,
                },
            ) => argv == other_argv && timeout == other_timeout,
            (AnsweredBy::Validator(kind, ..), AnsweredBy::Validator(other, ..)) => kind == other,
            _ => false,
        }
    }
}

impl Eq for AnsweredBy {}

/// How the evaluator layer answers a `spec.TYPE` check: the validator's type and the check's
/// resolved arguments to its results object.
pub type ValidatorFn = fn(&str, &Value) -> Result<Value, CheckError>;

/// The problems the spec loader would find in a `spec.TYPE` check's `config` (the validator's
/// type, the literal config): each where it is below `config` (empty, or `.threshold`) and what
/// is wrong, so a checks file reports them with the others, at their line.
pub type ConfigCheckFn = fn(&str, Option<&Value>) -> Vec<(String, String)>;

impl CustomCheck {
    /// The check type `spec.KIND` of an evaluation-spec validator, answered by `answer`, its
    /// `config` checked by `check_config`.
    pub fn validator(
        kind: &'static str,
        answer: ValidatorFn,
        check_config: ConfigCheckFn,
    ) -> CustomCheck {
        CustomCheck {
            name: format!("{VALIDATOR_PREFIX}{kind}"),
            by: AnsweredBy::Validator(kind, answer, check_config),
        }
    }

    /// Its arguments' schema; empty for a command, which takes any arguments.
    pub fn schema(&self) -> &'static [ArgSpec] {
        match self.by {
            AnsweredBy::Command { .. } => &[],
            AnsweredBy::Validator("tool_call_assertion", ..) => &TOOL_CALL_ARGS,
            AnsweredBy::Validator(..) => &VALIDATOR_ARGS,
        }
    }

    /// Whether people declared it (a command), rather than evalctl (a validator).
    pub fn is_declared(&self) -> bool {
        matches!(self.by, AnsweredBy::Command { .. })
    }
}

/// The flag that lets a request or checks file declare a command.
const ALLOW_FLAG: &str = "--allow-custom-check";

/// Why a check of custom type `name`, whose command a request or checks file declares and the
/// command line does not allow, does not run.
pub fn refusal(name: &str) -> String {
    format!(
        "custom check `{name}` runs a command declared in the request or checks file, not on \
         the command line; evalctl runs it only when allowed with {ALLOW_FLAG} {name}"
    )
}

/// `--allow-custom-check NAME`: a check type name.
pub fn parse_allowed(name: &str) -> Result<String, String> {
    match name_problem(name) {
        Some(problem) => Err(problem),
        None => Ok(name.to_string()),
    }
}

/// The custom check types known to a run, by name.
pub type CustomChecks = BTreeMap<String, Arc<CustomCheck>>;

/// Why `name` cannot name a custom check type.
fn name_problem(name: &str) -> Option<String> {
    if CheckKind::ALL.iter().any(|kind| kind.name() == name) {
        return Some(format!("`{name}` is a built-in check type"));
    }
    if name.starts_with(VALIDATOR_PREFIX) {
        return Some(format!(
            "`{name}`: names starting with `{VALIDATOR_PREFIX}` are the evaluation-spec validators'"
        ));
    }
    let valid = name.starts_with(|ch: char| ch.is_ascii_alphabetic() || ch == '_')
        && name
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '-' | '.'));
    (!valid).then(|| {
        format!(
            "{name:?} is not a check type name (letters, digits, `_`, `-` and `.`, starting \
             with a letter or `_`)"
        )
    })
}

/// `--custom-check NAME=COMMAND` (the command split like a shell would, never run by one).
pub fn parse_flag(value: &str) -> Result<CustomCheck, String> {
    let (name, command) = value
        .split_once('=')
        .ok_or_else(|| format!("{value:?}: expected NAME=COMMAND"))?;
    if let Some(problem) = name_problem(name) {
        return Err(problem);
    }
    let argv = shell_words::split(command).map_err(|err| format!("{command:?}: {err}"))?;
    if argv.is_empty() {
        return Err(format!("{name}: the command is empty"));
    }
    Ok(CustomCheck {
        name: name.to_string(),
        by: AnsweredBy::Command {
            argv,
            timeout: DEFAULT_TIMEOUT,
        },
    })
}

/// Read a `custom_checks` object into `known` (a name declared twice, or already known from the
/// command line, is a problem). Problems are located under `.custom_checks`.
pub fn declare(declarations: &Value, known: &mut CustomChecks) -> Vec<Problem> {
    let Some(object) = declarations.as_object() else {
        return vec![Problem::new(
            ".custom_checks",
            strict::wrong_type("an object of check types", declarations),
        )];
    };
    let mut problems = Vec::new();
    for (name, declaration) in object {
        let at = format!(".custom_checks.{}", strict::key_name(name));
        if let Some(problem) = name_problem(name) {
            problems.push(Problem::new(at, problem));
            continue;
        }
        if known.contains_key(name) {
            problems.push(Problem::new(at, format!("`{name}` is declared twice")));
            continue;
        }
        match declaration_of(name, declaration) {
            Ok(check) => {
                known.insert(name.clone(), Arc::new(check));
            }
            Err(found) => problems.extend(found.into_iter().map(|problem| problem.under(&at))),
        }
    }
    problems
}

fn declaration_of(name: &str, declaration: &Value) -> Result<CustomCheck, Vec<Problem>> {
    let object: &Map<String, Value> =
        strict::as_object(declaration).map_err(|reason| vec![Problem::new("", reason)])?;
    let mut problems: Vec<Problem> = strict::unknown_keys(object, &DECLARATION_KEYS)
        .map(|(key, reason)| Problem::at_key(key, reason))
        .collect();
    let argv = match object.get("command") {
        None => {
            problems.push(Problem::new("", strict::missing_key("command")));
            Vec::new()
        }
        Some(Value::String(line)) => shell_words::split(line).unwrap_or_else(|err| {
            problems.push(Problem::new(".command", format!("{line:?}: {err}")));
            Vec::new()
        }),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| {
                item.as_str().map(str::to_string).or_else(|| {
                    problems.push(Problem::new(
                        ".command",
                        strict::wrong_type("an array of strings", item),
                    ));
                    None
                })
            })
            .collect(),
        Some(other) => {
            problems.push(Problem::new(
                ".command",
                strict::wrong_type("a command line or an array of strings", other),
            ));
            Vec::new()
        }
    };
    let command_problem = problems.iter().any(|problem| problem.at == ".command");
    if argv.is_empty() && object.contains_key("command") && !command_problem {
        problems.push(Problem::new(".command", "the command is empty"));
    }
    let timeout = match object.get("timeout") {
        None => DEFAULT_TIMEOUT,
        Some(value) => match value.as_f64().filter(|secs| *secs > 0.0 && *secs <= 3600.0) {
            Some(secs) => Duration::from_secs_f64(secs),
            None => {
                problems.push(Problem::new(
                    ".timeout",
                    format!("expected a number of seconds above 0 and at most 3600, found {value}"),
                ));
                DEFAULT_TIMEOUT
            }
        },
    };
    if problems.is_empty() {
        Ok(CustomCheck {
            name: name.to_string(),
            by: AnsweredBy::Command { argv, timeout },
        })
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn declarations_are_read_and_checked() {
        let mut known = CustomChecks::new();
        let problems = declare(
            &json!({"words": {"command": "sh wc.sh", "timeout": 2},
                    "exact_match": {"command": "x"},
                    "bad": {"command": [], "extra": 1}}),
            &mut known,
        );
        assert_eq!(
            known["words"].by,
            AnsweredBy::Command {
                argv: vec!["sh".into(), "wc.sh".into()],
                timeout: Duration::from_secs(2)
            }
        );
        assert_eq!(
            Problem::listed(&problems),
            [
                ".custom_checks.exact_match|`exact_match` is a built-in check type",
                ".custom_checks.bad.extra|unknown key `extra` (expected one of command, timeout)",
                ".custom_checks.bad.command|the command is empty",
            ]
        );
    }

    #[test]
    fn the_flag_is_name_equals_command() {
        let check = parse_flag("tone=python3 tone.py --strict").unwrap();
        assert!(
            matches!(check.by, AnsweredBy::Command { ref argv, .. } if argv == &["python3", "tone.py", "--strict"])
        );
        assert!(parse_flag("spec.x=cmd")
            .unwrap_err()
            .contains("evaluation-spec validators"));
        assert!(parse_flag("tone").unwrap_err().contains("NAME=COMMAND"));
        assert!(parse_flag("1x=cmd")
            .unwrap_err()
            .contains("not a check type name"));
    }
}
