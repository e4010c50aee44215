//! A check ready to run ([`Check`]): [`Check::prepare`] validates the arguments, compiles
//! JSONPaths (once per run, through the catalogue's paths) and a literal regex, and settles how a
//! check that calls out is answered; problems found here make that one check a
//! `validation_error` (a `jsonpath_error` when only JSONPaths fail to parse) when it runs, and
//! never stop the other checks.

use std::sync::Arc;

use serde_json::Value;

use super::args::{classify, ArgSource, Classified};
use super::catalog::Catalog;
use super::custom::{self, AnsweredBy, CustomCheck, ValidatorFn};
use super::definition::{unavailable_version, CheckDef};
use super::extended::{self, Spec};
use super::result::CheckError;
use super::standard::{precompile_regex, CheckKind, MAX_ARGS, REGEX_FLAGS, REGEX_PATTERN};
use crate::input::strict;
use crate::input::strict::JsonProblem as Problem;
use crate::patterns::{DocumentPatterns, Pattern};

/// A check ready to run: arguments classified, paths compiled, a literal regex compiled.
#[derive(Debug)]
pub struct Check {
    pub(super) kind: CheckKind,
    pub(super) args: Vec<PreparedArg>,
    pub(super) regex: Option<Pattern>,
    /// How a check that calls out is answered.
    pub(super) calls_out: Option<CallsOut>,
    pub(super) problems: Vec<Problem>,
    /// What the command line does not allow this check (see [`Check::refusals`]).
    pub(super) refusals: Vec<Problem>,
    /// The problems and refusals as one error for every evaluation: a `jsonpath_error` when
    /// every problem is a JSONPath that cannot be parsed, else a `validation_error`.
    pub(super) problem_error: Option<CheckError>,
    /// The members FEP's schemas allow that evalctl does not know, ignored (`weight`,
    /// `arguments.ignore_case`, `arguments.flags.global`): reported in each result's metadata.
    pub(super) ignored: Vec<String>,
}

#[derive(Debug)]
pub(super) struct PreparedArg {
    /// The schema slot (a custom check's arguments have none).
    pub(super) slot: Option<usize>,
    pub(super) name: Box<str>,
    pub(super) source: ArgSource,
}

/// Argument `name` of `args`, when it was given literally.
fn literal_named<'a>(args: &'a [PreparedArg], name: &str) -> Option<&'a Value> {
    args.iter().find_map(|arg| match &arg.source {
        ArgSource::Literal(value) if &*arg.name == name => Some(value),
        _ => None,
    })
}

/// What answers a check that calls out.
#[derive(Debug)]
pub(super) enum CallsOut {
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
        let args_given: Vec<&str> = def.arguments.keys().map(String::as_str).collect();
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
        // Arguments the schema does not list, for the hint of a missing one they misspell.
        let unlisted: Vec<&str> = args_given
            .iter()
            .copied()
            .filter(|name| schema.iter().all(|spec| spec.name != *name))
            .collect();
        for (slot, spec) in schema.iter().enumerate() {
            if spec.required && !given[slot] {
                let missing = strict::missing_key(spec.name);
                let misspelt = unlisted
                    .iter()
                    .find(|name| strict::nearest(name, [spec.name]).is_some());
                problems.push(Problem::new(
                    ".arguments",
                    match misspelt {
                        Some(name) => format!("{missing} (`{name}` is given: misspelt?)"),
                        None => missing,
                    },
                ));
            }
        }
        if let Some(reason) = def.kind.cross_argument_problem(&given) {
            problems.push(Problem::new(".arguments", reason));
        }
        if let Some(AnsweredBy::Validator(kind, _, check_config)) =
            def.custom.as_ref().map(|custom| &custom.by)
        {
            let config = literal_named(&args, "config").filter(|config| !config.is_null());
            problems.extend(
                check_config(kind, config)
                    .into_iter()
                    .map(|(at, reason)| Problem::new(format!(".arguments.config{at}"), reason)),
            );
        }
        let regex = if def.kind == CheckKind::Regex {
            prepare_regex(&args, &mut problems, &catalog.patterns)
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
                let setting = |name: &str| literal_named(&args, name);
                match extended::prepare(def.kind, &setting, paths) {
                    Ok(mut spec) => match catalog.endpoints.admit(spec.provider_mut()) {
                        Ok(()) => Some(CallsOut::Extended(Arc::new(spec))),
                        Err((at, reason)) => {
                            refusals.push(Problem::new(format!(".arguments.{at}"), reason));
                            None
                        }
                    },
                    Err(found) => {
                        // The prompt's only problem is a placeholder that is no JSONPath.
                        path_problems += found.iter().filter(|(at, _)| at == "prompt").count();
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

    /// How many bytes each of its results repeats of it as given, `json_size` telling a
    /// value's: the values of its literal arguments (`resolved_arguments`) and the names of the
    /// members evalctl ignores, quoted (`metadata.ignored`).
    pub fn repeated_size(&self, json_size: fn(&Value) -> u64) -> u64 {
        let literals = self.args.iter().filter_map(|arg| match &arg.source {
            ArgSource::Literal(value) => Some(json_size(value)),
            ArgSource::Path(_) => None,
        });
        let names = self.ignored.iter().map(|name| name.len() as u64 + 3);
        literals.chain(names).sum()
    }

    /// Whether it is answered outside evalctl (an extended check, or a custom check's
    /// command); a `spec.TYPE` check is answered where it is evaluated.
    pub fn calls_out(&self) -> bool {
        self.kind.calls_out() && self.validator().is_none()
    }

    /// The validator that answers a `spec.TYPE` check, and its type.
    pub(super) fn validator(&self) -> Option<(&'static str, ValidatorFn)> {
        match self.custom()?.by {
            AnsweredBy::Validator(kind, answer, _) => Some((kind, answer)),
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

    /// The extended check's settings, when this is a valid `semantic_similarity` or
    /// `llm_judge`.
    pub fn extended(&self) -> Option<&Spec> {
        match &self.calls_out {
            Some(CallsOut::Extended(spec)) => Some(spec),
            _ => None,
        }
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
}

/// Compile a `regex` check's literal `pattern` before the run. With literal (or absent) valid
/// flags the compiled regex is kept for every evaluation; when `flags` is a JSONPath or invalid,
/// the pattern is still compiled with the default flags, so a syntax error is reported in the
/// same pass as any problem with `flags` (the flags never change whether a pattern parses).
fn prepare_regex(
    args: &[PreparedArg],
    problems: &mut Vec<Problem>,
    document: &DocumentPatterns,
) -> Option<Pattern> {
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
    match precompile_regex(pattern, flags.flatten(), document) {
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
