//! Built-in checks (FEP 0.0.1, section 2.3): check definitions, argument resolution with JSONPath,
//! the four standard checks and their results.
//!
//! A check object goes through two stages. [`parse_check`] validates its shape as FEP's Check
//! schema says (an object with a known `type`, an `arguments` object, a semver `version`; other
//! members are ignored); a failure there is a problem of the whole request. [`Check::prepare`]
//! then validates the arguments, compiles JSONPaths (once per run, through a [`PathCache`]) and a
//! literal regex; problems found there make that one check a `validation_error` (a
//! `jsonpath_error` when only JSONPaths fail to parse) when it runs, and never stop the other
//! checks.
//!
//! A check that calls out (`semantic_similarity`, `llm_judge`, a custom type) is evaluated in two
//! steps: [`Check::call`] resolves what to send, someone sends it (`evaluator::check_calls`), and
//! [`Check::evaluate`] turns the [`Answer`] into the result.

pub mod args;
pub mod custom;
pub mod extended;
pub mod file;
mod path_budget;
pub mod result;
pub mod standard;
pub mod timestamp;

use std::collections::BTreeSet;
use std::sync::{Arc, LazyLock};

use regex::Regex;
use serde_json::{Map, Value};

pub use args::PathCache;
pub use custom::{AnsweredBy, CustomCheck, CustomChecks, ValidatorFn};
pub use extended::{AllowedEndpoint, Answer, Call, CaseAnswers, EndpointPolicy};
pub use file::load_checks_file;
pub use result::{CheckError, CheckResult, Resolved, Results, Status};
pub use standard::CheckKind;
pub use timestamp::{CaseClock, Timestamp};

use crate::input::strict;
use crate::scoring::Outcome;
use args::{classify, ArgSource, Classified};
use extended::Spec;
use standard::{
    as_text, precompile_regex, Args, Slot, CHECK_VERSION, MAX_ARGS, REGEX_FLAGS, REGEX_PATTERN,
};

/// A problem with a check definition, located relative to the check object (`at` is empty, or
/// starts with `.`, e.g. `.arguments.pattern`).
pub use crate::input::strict::JsonProblem as Problem;

/// The keys of a check object that FEP's Check schema lists, the two required ones first. Any
/// other member is allowed, and ignored.
const CHECK_KEYS: [&str; 3] = ["type", "arguments", "version"];

/// What one run's checks are prepared with: each JSONPath compiled once, the custom check types
/// declared, where extended checks may send requests, and which commands a request may declare.
#[derive(Debug, Default)]
pub struct Catalog {
    /// The run's compiled JSONPaths.
    pub paths: PathCache,
    /// The custom check types known (the command line's, then the file's or request's).
    pub custom: CustomChecks,
    /// Where extended checks may send requests, with which keys.
    pub endpoints: EndpointPolicy,
    /// What becomes of a request's or checks file's `custom_checks`.
    pub declarations: Declarations,
    /// The custom check types a request or checks file declared that the command line does not
    /// allow: their checks are `validation_error`s, their commands never run.
    pub refused: BTreeSet<String>,
}

/// What becomes of the commands a request or checks file declares in `custom_checks`: a file
/// is not the user, so a command it names runs only with the user's say-so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declarations {
    /// A local command (`fep evaluate`, `run --checks`): declarations are read, and a declared
    /// command runs only when the command line allows it by name (`--allow-custom-check NAME`,
    /// the names here).
    AllowedByName(Vec<String>),
    /// Refused outright, a problem of the request (`evalctl serve`: a client must not make the
    /// server run commands of its choosing).
    Refused,
}

impl Default for Declarations {
    /// A local command that allows no declared command.
    fn default() -> Self {
        Declarations::AllowedByName(Vec::new())
    }
}

/// What the command line of a local command lends to the checks of a request or checks file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trust {
    /// `--custom-check NAME=COMMAND`: custom check types the user declares.
    pub custom: Vec<CustomCheck>,
    /// `--allow-custom-check NAME`: the commands a request or checks file may declare.
    pub commands: Vec<String>,
    /// `--allow-endpoint [KEY_ENV@]BASE_URL`: the endpoints (and keys) a request or checks file
    /// may name in a `provider_config`.
    pub endpoints: Vec<AllowedEndpoint>,
}

impl Catalog {
    /// A catalog for a local command: any key, the given custom checks, declarations allowed.
    pub fn with_custom(custom: impl IntoIterator<Item = CustomCheck>) -> Catalog {
        Catalog {
            custom: custom
                .into_iter()
                .map(|check| (check.name.clone(), Arc::new(check)))
                .collect(),
            ..Catalog::default()
        }
    }

    /// Add a document's `custom_checks` declarations (located under `.custom_checks`); those
    /// the command line does not allow are declared but refused.
    pub fn declare(&mut self, declarations: &Value) -> Vec<Problem> {
        let Declarations::AllowedByName(allowed) = &self.declarations else {
            return vec![Problem::new(
                ".custom_checks",
                "this server runs only the custom checks its operator declared \
                 (evalctl serve --custom-check NAME=COMMAND)",
            )];
        };
        let before: BTreeSet<String> = self.custom.keys().cloned().collect();
        let problems = custom::declare(declarations, &mut self.custom);
        let declared: Vec<String> = self
            .custom
            .keys()
            .filter(|name| !before.contains(*name) && !allowed.contains(name))
            .cloned()
            .collect();
        self.refused.extend(declared);
        problems
    }
}

/// A check object whose shape is valid: a known type and an arguments object.
#[derive(Debug, Clone)]
pub struct CheckDef<'a> {
    /// The check type.
    pub kind: CheckKind,
    /// The declaration, for a custom type.
    pub custom: Option<Arc<CustomCheck>>,
    /// The raw arguments.
    pub arguments: &'a Map<String, Value>,
    /// The members the Check schema allows that evalctl does not know (ignored).
    pub ignored: Vec<&'a str>,
    /// The requested `version`, if any: a semantic version (whether evalctl implements it is
    /// for [`Check::prepare`] to say).
    pub version: Option<&'a str>,
}

/// Validate the shape of one check object; `custom` are the custom types known.
pub fn parse_check<'a>(
    value: &'a Value,
    custom: &CustomChecks,
) -> Result<CheckDef<'a>, Vec<Problem>> {
    let object = strict::as_object(value).map_err(|reason| vec![Problem::new("", reason)])?;
    let mut problems: Vec<Problem> = strict::missing_keys(object, &CHECK_KEYS[..2])
        .map(|(_, reason)| Problem::new("", reason))
        .collect();
    let kind = object
        .get("type")
        .and_then(|kind| match strict::as_str(kind) {
            Ok(name) => {
                let kind = CheckKind::from_name(name)
                    .map(|kind| (kind, None))
                    .or_else(|| {
                        custom
                            .get(name)
                            .map(|check| (CheckKind::Custom, Some(Arc::clone(check))))
                    });
                if kind.is_none() {
                    let known: Vec<&str> = CheckKind::ALL
                        .iter()
                        .map(|kind| kind.name())
                        .chain(
                            custom
                                .values()
                                .filter(|check| check.is_declared())
                                .map(|check| check.name.as_str()),
                        )
                        .collect();
                    let every = CheckKind::ALL
                        .iter()
                        .map(|kind| kind.name())
                        .chain(custom.keys().map(String::as_str));
                    let hint = strict::hint(
                        name,
                        every,
                        &format!(
                            "known: {}; spec.TYPE runs an evaluation-spec validator; a custom \
                             type is declared in `custom_checks` or with --custom-check",
                            known.join(", ")
                        ),
                    );
                    problems.push(Problem::new(
                        ".type",
                        format!("unknown check type `{name}` {hint}"),
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
    let version = object
        .get("version")
        .and_then(|version| match semantic_version(version) {
            Ok(version) => Some(version),
            Err(reason) => {
                problems.push(Problem::new(".version", reason));
                None
            }
        });
    match (kind, arguments) {
        (Some((kind, custom)), Some(arguments)) if problems.is_empty() => Ok(CheckDef {
            kind,
            custom,
            arguments,
            ignored: object
                .keys()
                .map(String::as_str)
                .filter(|key| !CHECK_KEYS.contains(key))
                .collect(),
            version,
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
    /// How a check that calls out is answered.
    calls_out: Option<CallsOut>,
    problems: Vec<Problem>,
    /// What the command line does not allow this check (see [`Check::refusals`]).
    refusals: Vec<Problem>,
    /// The problems and refusals as one error for every evaluation: a `jsonpath_error` when
    /// every problem is a JSONPath that cannot be parsed, else a `validation_error`.
    problem_error: Option<CheckError>,
    /// The members FEP's schemas allow that evalctl does not know, ignored (`weight`,
    /// `arguments.ignore_case`, `arguments.flags.global`): reported in each result's metadata.
    ignored: Vec<String>,
}

#[derive(Debug)]
struct PreparedArg {
    /// The schema slot (a custom check's arguments have none).
    slot: Option<usize>,
    name: Box<str>,
    source: ArgSource,
}

/// What answers a check that calls out.
#[derive(Debug)]
enum CallsOut {
    /// An extended check's API.
    Extended(Arc<Spec>),
    /// A custom check's command.
    Custom(Arc<CustomCheck>),
}

impl Check {
    /// Prepare `def`, compiling its JSONPaths through the catalog's paths. Never fails:
    /// problems are kept and make every evaluation a `validation_error` (see
    /// [`Check::problems`]).
    pub fn prepare(def: CheckDef<'_>, catalog: &mut Catalog) -> Check {
        let paths = &mut catalog.paths;
        let schema = def
            .custom
            .as_ref()
            .map_or(def.kind.schema(), |custom| custom.schema());
        // A command's custom check takes any arguments.
        let free_form = def
            .custom
            .as_ref()
            .is_some_and(|custom| custom.schema().is_empty());
        let mut problems = Vec::new();
        let mut path_problems = 0;
        let mut ignored: Vec<String> = def
            .ignored
            .iter()
            .map(|key| strict::key_name(key).into_owned())
            .collect();
        let mut args = Vec::with_capacity(def.arguments.len());
        let mut given = [false; MAX_ARGS];
        for (name, raw) in def.arguments {
            let at = format!(".arguments.{}", strict::key_name(name));
            let slot = schema.iter().position(|spec| spec.name == name);
            if slot.is_none() && def.custom.is_none() && def.kind.open_arguments() {
                ignored.push(at[1..].to_string());
                continue;
            }
            if slot.is_none() && !free_form {
                let known: Vec<&str> = schema.iter().map(|spec| spec.name).collect();
                problems.push(Problem::new(at, strict::unknown_key(name, &known)));
                continue;
            }
            let spec = slot.map(|slot| {
                given[slot] = true;
                schema[slot]
            });
            let source = match classify(raw) {
                Classified::Path(text) if spec.is_some_and(|spec| spec.literal) => {
                    problems.push(Problem::new(
                        at,
                        format!("a setting, given literally: `{text}` cannot be a JSONPath"),
                    ));
                    continue;
                }
                Classified::Path(text) => match paths.compile(text) {
                    Ok(path) => ArgSource::Path(path),
                    Err(reason) => {
                        path_problems += 1;
                        problems.push(Problem::new(
                            at,
                            format!("not a valid JSONPath `{text}`: {reason}"),
                        ));
                        continue;
                    }
                },
                Classified::Literal(value) => {
                    match spec.map_or(Ok(()), |spec| spec.ty.check(&value)) {
                        Ok(()) => {
                            let unknown = spec.map_or(Vec::new(), |spec| spec.ty.ignored(&value));
                            ignored.extend(
                                unknown
                                    .into_iter()
                                    .map(|key| format!("{}.{}", &at[1..], strict::key_name(key))),
                            );
                            ArgSource::Literal(value)
                        }
                        Err(reason) => {
                            problems.push(Problem::new(at, reason));
                            continue;
                        }
                    }
                }
            };
            args.push(PreparedArg {
                slot,
                name: name.as_str().into(),
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
        if let Some(reason) = def.version.and_then(unavailable_version) {
            problems.push(Problem::new(".version", reason));
        }
        // What the command line does not allow makes the check a `validation_error` when it
        // runs, never a problem of the file: the rest of the request or run goes on.
        let mut refusals = Vec::new();
        let calls_out = match (def.kind, def.custom) {
            (_, Some(custom)) => {
                if catalog.refused.contains(&custom.name) {
                    refusals.push(Problem::new(".type", custom::refusal(&custom.name)));
                }
                Some(CallsOut::Custom(custom))
            }
            (CheckKind::SemanticSimilarity | CheckKind::LlmJudge, None) if problems.is_empty() => {
                let setting = |name: &str| {
                    args.iter().find_map(|arg| match &arg.source {
                        ArgSource::Literal(value) if &*arg.name == name => Some(value),
                        _ => None,
                    })
                };
                match extended::prepare(def.kind, &setting, paths) {
                    Ok(mut spec) => match catalog.endpoints.admit(spec.provider_mut()) {
                        Ok(()) => Some(CallsOut::Extended(Arc::new(spec))),
                        Err((at, reason)) => {
                            refusals.push(Problem::new(format!(".arguments.{at}"), reason));
                            None
                        }
                    },
                    Err(found) => {
                        problems.extend(
                            found.into_iter().map(|(at, reason)| {
                                Problem::new(format!(".arguments.{at}"), reason)
                            }),
                        );
                        None
                    }
                }
            }
            _ => None,
        };
        let problem_error = (!problems.is_empty() || !refusals.is_empty()).then(|| {
            let reasons: Vec<String> = problems
                .iter()
                .chain(&refusals)
                .map(|p| p.describe(""))
                .collect();
            let message = reasons.join("; ");
            if path_problems == reasons.len() {
                CheckError::jsonpath(message)
            } else {
                CheckError::validation(message)
            }
        });
        Check {
            kind: def.kind,
            args,
            regex,
            calls_out,
            problems,
            refusals,
            problem_error,
            ignored,
        }
    }

    /// Whether it is answered outside evalctl (an extended check, or a custom check's
    /// command); a `spec.TYPE` check is answered where it is evaluated.
    pub fn calls_out(&self) -> bool {
        self.kind.calls_out() && self.validator().is_none()
    }

    /// The validator that answers a `spec.TYPE` check, and its type.
    fn validator(&self) -> Option<(&'static str, ValidatorFn)> {
        match self.custom()?.by {
            AnsweredBy::Validator(kind, answer) => Some((kind, answer)),
            AnsweredBy::Command { .. } => None,
        }
    }

    /// The check type's name: a built-in type's, or the custom type's.
    pub fn type_name(&self) -> &str {
        match &self.calls_out {
            Some(CallsOut::Custom(custom)) => &custom.name,
            _ => self.kind.name(),
        }
    }

    /// The custom check type, for a check of one.
    pub fn custom(&self) -> Option<&CustomCheck> {
        match &self.calls_out {
            Some(CallsOut::Custom(custom)) => Some(custom),
            _ => None,
        }
    }

    /// Argument `name`, when it was given literally.
    pub fn literal(&self, name: &str) -> Option<&Value> {
        self.args.iter().find_map(|arg| match &arg.source {
            ArgSource::Literal(value) if &*arg.name == name => Some(value),
            _ => None,
        })
    }

    /// The extended check's settings, when this is a valid `semantic_similarity` or
    /// `llm_judge`.
    pub fn extended(&self) -> Option<&Spec> {
        match &self.calls_out {
            Some(CallsOut::Extended(spec)) => Some(spec),
            _ => None,
        }
    }

    /// What to send for this check on `context`, when it calls out and can be called (an
    /// invalid check, or a JSONPath that selects nothing, is reported by [`Check::evaluate`]).
    pub fn call(&self, context: &Value) -> Option<Call> {
        self.call_for(context).ok().flatten()
    }

    /// Resolve a check that calls out on `context` (the arguments that resolved go into
    /// `resolved`): the `llm_judge` prompt, or why it cannot be called — its own problems, a
    /// JSONPath or prompt placeholder that selects nothing.
    fn resolve_call<'a>(
        &'a self,
        context: &'a Value,
        resolved: &mut Vec<Resolved<'a>>,
    ) -> Result<Option<String>, CheckError> {
        if let Some(error) = &self.problem_error {
            return Err(error.clone());
        }
        self.resolve(context, resolved)?;
        match self.extended() {
            Some(Spec::Judge { template, .. }) => template.render(context).map(Some),
            _ => Ok(None),
        }
    }

    fn call_for(&self, context: &Value) -> Result<Option<Call>, CheckError> {
        let Some(calls_out) = self.calls_out.as_ref().filter(|_| self.calls_out()) else {
            return Ok(None);
        };
        let mut resolved = Vec::with_capacity(self.args.len());
        let prompt = self.resolve_call(context, &mut resolved)?;
        let value = |name: &str| {
            resolved
                .iter()
                .find(|arg| arg.name == name)
                .map_or(String::new(), |arg| as_text(arg.value).into_owned())
        };
        Ok(Some(match calls_out {
            CallsOut::Custom(check) => Call::Command {
                check: Arc::clone(check),
                arguments: arguments(&resolved),
            },
            CallsOut::Extended(spec) => match &**spec {
                Spec::Similarity { .. } => Call::Embed {
                    spec: Arc::clone(spec),
                    text: value("text"),
                    reference: value("reference"),
                },
                Spec::Judge { .. } => Call::Judge {
                    spec: Arc::clone(spec),
                    prompt: prompt.unwrap_or_default(),
                },
            },
        }))
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

    /// What makes this check invalid; empty when it is valid. A check refused because the
    /// command line does not allow it is valid: it is a `validation_error` when it runs.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// Why this check, valid, does not run: a command or endpoint that its request or checks
    /// file names and the command line does not allow (`--allow-custom-check`,
    /// `--allow-endpoint`). Every evaluation is a `validation_error` saying so.
    pub fn refusals(&self) -> &[Problem] {
        &self.refusals
    }

    /// Run the check over an evaluation context `{"test_case": ..., "output": ...}`; `clock` is
    /// the test case's (see [`CaseClock`]). A check that calls out reads its `answer` (the
    /// answer to [`Check::call`] on this context).
    pub fn evaluate<'a>(
        &'a self,
        context: &'a Value,
        clock: &mut CaseClock,
        answer: Option<Answer>,
    ) -> CheckResult<'a> {
        let mut resolved = Vec::with_capacity(self.args.len());
        let (outcome, execution_time_ms) = if let Some((kind, answer)) = self.validator() {
            let outcome = self
                .resolve_call(context, &mut resolved)
                .and_then(|_| answer(kind, &arguments(&resolved)))
                .map(Results::Answered);
            (outcome, clock.lap_ms())
        } else if self.calls_out.is_some() {
            let outcome = self
                .resolve_call(context, &mut resolved)
                .and_then(|_| {
                    answer.ok_or_else(|| {
                        CheckError::unknown(format!("{} was not answered", self.type_name()), true)
                    })
                })
                .map(|answer| (answer.outcome.map(Results::Answered), answer.elapsed_ms));
            clock.lap_ms();
            match outcome {
                Ok(answered) => answered,
                Err(error) => (Err(error), 0.0),
            }
        } else {
            let outcome = self.run(context, &mut resolved).map(Results::from);
            (outcome, clock.lap_ms())
        };
        CheckResult {
            check_type: self.type_name(),
            outcome,
            resolved,
            evaluated_at: clock.at(),
            check_version: CHECK_VERSION,
            execution_time_ms,
            ignored: &self.ignored,
        }
    }

    fn run<'a>(
        &'a self,
        context: &'a Value,
        resolved: &mut Vec<Resolved<'a>>,
    ) -> Result<Outcome, CheckError> {
        if let Some(error) = &self.problem_error {
            return Err(error.clone());
        }
        let args = self.resolve(context, resolved)?;
        self.kind.run(&args, self.regex.as_ref())
    }

    /// Resolve the arguments into `resolved` (in the order given) and, for a standard check,
    /// into schema slots; the first JSONPath that selects nothing is the error.
    fn resolve<'a>(
        &'a self,
        context: &'a Value,
        resolved: &mut Vec<Resolved<'a>>,
    ) -> Result<Args<'a>, CheckError> {
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
            if let Some(index) = arg.slot {
                args.set(index, slot);
            }
            resolved.push(Resolved {
                name: &arg.name,
                jsonpath: slot.jsonpath,
                value: slot.value,
            });
        }
        match path_error {
            Some(error) => Err(error),
            None => Ok(args),
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
    match args.iter().find(|arg| arg.slot == Some(slot)) {
        None => Some(None),
        Some(PreparedArg {
            source: ArgSource::Literal(value),
            ..
        }) => Some(Some(value)),
        Some(_) => None,
    }
}

/// `version` as a semantic version (the pattern of FEP 5.1's Check schema), or why it is not one.
fn semantic_version(version: &Value) -> Result<&str, String> {
    static SEMVER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$",
        )
        .expect("the semver pattern is valid")
    });
    let Some(text) = version.as_str() else {
        return Err(strict::wrong_type("a semantic version string", version));
    };
    if !SEMVER.is_match(text) {
        return Err(format!(
            "`{text}` is not a semantic version (MAJOR.MINOR.PATCH)"
        ));
    }
    Ok(text)
}

/// Why a requested semantic `version` cannot be honoured: a major version other than the one
/// implemented.
fn unavailable_version(version: &str) -> Option<String> {
    let implemented = CHECK_VERSION.split('.').next().unwrap_or_default();
    (version.split('.').next() != Some(implemented)).then(|| {
        format!("`{version}` is not available: evalctl implements {CHECK_VERSION} (any {implemented}.x.y is accepted)")
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

/// A custom check's resolved arguments as the object its command or validator receives.
fn arguments(resolved: &[Resolved<'_>]) -> Value {
    Value::Object(
        resolved
            .iter()
            .map(|arg| (arg.name.to_string(), arg.value.clone()))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn prepare(check: Value) -> Check {
        Check::prepare(
            parse_check(&check, &CustomChecks::new()).unwrap(),
            &mut Catalog::default(),
        )
    }

    #[test]
    fn shape_problems_are_all_reported() {
        let problems = parse_check(
            &json!({"type": "fuzzy", "args": {}, "version": "1.x"}),
            &CustomChecks::new(),
        )
        .unwrap_err();
        let at: Vec<&str> = problems.iter().map(|p| p.at.as_str()).collect();
        assert_eq!(at, ["", ".type", ".version"]);
        assert_eq!(problems[0].reason, "missing required key `arguments`");
        assert!(problems[1].reason.contains("unknown check type `fuzzy`"));
        assert_eq!(
            problems[2].reason,
            "`1.x` is not a semantic version (MAJOR.MINOR.PATCH)"
        );
    }

    #[test]
    fn argument_problems_are_located_and_named() {
        let check = prepare(json!({"type": "regex", "version": "2.0.0",
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
                (".arguments.pattern", "not a valid regular expression: regex parse error: ⏎     ( ⏎     ^ ⏎ error: unclosed group"),
                (".version", "`2.0.0` is not available: evalctl implements 1.0.0 (any 1.x.y is accepted)"),
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
        for flags in [
            json!("$.test_case.flags"),
            json!({"multiline": 1}),
            json!(3),
        ] {
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
        assert_eq!(
            semantic_version(&json!("1.2.3-rc.1+b5")),
            Ok("1.2.3-rc.1+b5")
        );
        assert_eq!(unavailable_version("1.2.3-rc.1+b5"), None);
        assert!(unavailable_version("2.0.0")
            .unwrap()
            .contains("not available"));
        assert!(semantic_version(&json!("01.0.0"))
            .unwrap_err()
            .contains("not a semantic"));
        assert!(semantic_version(&json!(1))
            .unwrap_err()
            .contains("expected a semantic version string, found number"));
    }

    #[test]
    fn unknown_members_are_ignored_where_the_schemas_allow_them() {
        let check = prepare(json!({"type": "regex", "weight": 2, "arguments": {
            "text": "abc", "pattern": "B", "flags": {"case_insensitive": true, "global": true},
            "ignore_case": true}}));
        assert!(check.problems().is_empty(), "{:?}", check.problems());
        assert_eq!(
            check.ignored,
            ["weight", "arguments.flags.global", "arguments.ignore_case"]
        );
        let ctx = Context::new(json!({"id": "t"}), json!({"value": "x"}));
        let result = check.evaluate(ctx.value(), &mut CaseClock::start(), None);
        assert_eq!(result.outcome, Ok(Results::Passed(true)));
        let closed = prepare(json!({"type": "threshold",
            "arguments": {"value": 1, "min_value": 0, "unit": "ms"}}));
        assert_eq!(
            closed.problems()[0].describe(""),
            "arguments.unit: unknown key `unit` (expected one of value, min_value, max_value, \
             min_inclusive, max_inclusive, negate)"
        );
    }

    #[test]
    fn a_jsonpath_that_cannot_be_parsed_is_a_jsonpath_error() {
        let ctx = Context::new(json!({"id": "t"}), json!({"value": "x"}));
        let broken = prepare(json!({"type": "exact_match",
            "arguments": {"actual": "$.output.value[", "expected": "x"}}));
        let result = broken.evaluate(ctx.value(), &mut CaseClock::start(), None);
        assert_eq!(
            result.outcome.unwrap_err().kind,
            result::ErrorType::Jsonpath
        );
        // With another problem too, the check is malformed: a validation_error.
        let also_invalid = prepare(json!({"type": "exact_match",
            "arguments": {"actual": "$.output.value[", "expected": "x", "negate": 1}}));
        let result = also_invalid.evaluate(ctx.value(), &mut CaseClock::start(), None);
        assert_eq!(
            result.outcome.unwrap_err().kind,
            result::ErrorType::Validation
        );
    }

    #[test]
    fn evaluation_resolves_literals_and_paths_in_order() {
        let check = prepare(json!({"type": "exact_match", "arguments": {
            "expected": "$.test_case.expected", "actual": "Paris", "case_sensitive": false}}));
        let ctx = Context::new(
            json!({"id": "t", "expected": "paris"}),
            json!({"value": "x"}),
        );
        let result = check.evaluate(ctx.value(), &mut CaseClock::start(), None);
        assert_eq!(result.outcome, Ok(Results::Passed(true)));
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
