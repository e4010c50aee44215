//! The project file on the command line: each `evalctl.toml` value becomes its flag's default
//! (checked by the flag's own parser, a problem reported at the file's line), each flag of the
//! binding table reads `EVALCTL_<FLAG>`, and clap's `value_source` says where every value came
//! from. Also the flags of `evalctl config show`, resolved into the settings it shows.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::{ContextKind, ContextValue};
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, Subcommand};

use crate::commands;
use crate::config::bindings::{self, Binding, Kind, ALTERNATIVES};
use crate::config::file::{self, Choice, ConfigFile, Untrusted};
use crate::config::show::{self, Origin, Setting, Shown};
use crate::error::{bad_flag, invalid, Problem};
use crate::exit::Exit;
use crate::report::Reporter;

/// `--config FILE` and `--no-config`, on every command that reads `evalctl.toml`.
#[derive(Debug, Clone, Args)]
pub struct ConfigArgs {
    /// Read settings from this file instead of the evalctl.toml found in the working directory
    /// or its nearest parent.
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    pub config: Option<PathBuf>,

    /// Ignore evalctl.toml.
    #[arg(long)]
    pub no_config: bool,
}

/// `evalctl config ...`
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the resolved settings of a command: each value (secrets masked) and where it came
    /// from (flag, env, file:line, default).
    ///
    /// Name the command and its flags as you would run them: `evalctl config show run -j 4`,
    /// `evalctl config show tasks run tasks.jsonl`. Without one, `run`.
    Show {
        #[command(flatten)]
        config: ConfigArgs,
        /// The command and its flags (default: run).
        #[arg(
            value_name = "COMMAND",
            trailing_var_arg = true,
            allow_hyphen_values = true
        )]
        command: Vec<OsString>,
    },
}

/// The commands that read the file, and the keys that apply to each.
fn bindings_of(path: &[&str]) -> Option<&'static [Binding]> {
    match path {
        ["run"] | ["preflight"] => Some(bindings::RUN),
        ["tasks", "run"] => Some(bindings::TASKS_RUN),
        ["cache", "stats"] | ["cache", "clear"] => Some(bindings::CACHE),
        _ => None,
    }
}

/// The subcommands that take config settings, as paths from the top.
const CONFIGURED: &[&[&str]] = &[
    &["run"],
    &["preflight"],
    &["tasks", "run"],
    &["cache", "stats"],
    &["cache", "clear"],
];

/// Whether the words of a command line begin with the subcommand `path` (`tasks run ...`).
fn names(words: &[OsString], path: &[&str]) -> bool {
    words.len() >= path.len() && words.iter().zip(path).all(|(word, name)| word == name)
}

/// Apply `edit` to the subcommand at `path` of `command`.
fn edit_subcommand(
    command: clap::Command,
    path: &[&str],
    edit: impl FnOnce(clap::Command) -> clap::Command,
) -> clap::Command {
    match path {
        [] => edit(command),
        [first, rest @ ..] => {
            let name = first.to_string();
            command.mut_subcommand(name, |sub| edit_subcommand(sub, rest, edit))
        }
    }
}

/// The command line definition with each bound flag reading its `EVALCTL_*` variable (not shown
/// in `--help`; `config show` and docs/config.md list them).
pub fn command() -> clap::Command {
    let mut command = super::Cli::command();
    for path in CONFIGURED {
        let Some(bindings) = bindings_of(path) else {
            continue;
        };
        // `mut_args` edits in place (`mut_arg` would move each flag to the end of `--help`).
        command = edit_subcommand(command, path, |sub| {
            sub.mut_args(|arg| {
                let binding = bindings.iter().find(|binding| arg.get_id() == binding.arg);
                match binding.filter(|binding| !switched_off(binding)) {
                    Some(binding) => match binding.env_name() {
                        Some(env) => arg.env(env).hide_env(true),
                        None => arg,
                    },
                    None => arg,
                }
            })
        });
    }
    command
}

/// A switch its variable turns off (`EVALCTL_RESUME=false`): off, as if neither the variable
/// nor the file set it. clap is not given the variable, since it takes a flag a variable sets
/// as given, false or not, for what the flag requires or conflicts with.
fn switched_off(binding: &Binding) -> bool {
    binding.kind == Kind::Switch
        && binding
            .env_name()
            .is_some_and(|name| std::env::var(name).as_deref() == Ok("false"))
}

/// Why resolving the command line failed.
pub enum Failure {
    /// clap rejected the command line.
    Usage(clap::Error),
    /// The config file is unusable.
    Config(anyhow::Error),
}

/// The command line resolved with the config file.
pub struct Resolved {
    /// Flags, environment, file and defaults, merged by clap.
    pub matches: ArgMatches,
    /// The subcommand the settings are for (`run`, `tasks run`), when it reads the file.
    pub path: Vec<&'static str>,
    /// The file in use.
    pub file: Option<ConfigFile>,
    /// The flags the file set (clap ids), each with the line that set it.
    pub from_file: Vec<(&'static str, usize)>,
    /// Those of them added to the words as if typed, since a typed flag needs them (clap counts
    /// a default as absent for that): they came from the file all the same.
    pub added_for_the_file: Vec<&'static str>,
    /// A file discovery found and did not use, for the command to warn about.
    pub untrusted: Option<Untrusted>,
}

impl Resolved {
    /// Say on stderr what the user may not know of the file: that discovery found one it did
    /// not use, which of the file's keys do not apply (from a parent directory, or giving up the
    /// sandbox), and what a file found in a parent directory sets.
    pub fn tell_about_the_file(&self, reporter: Reporter) {
        if let Some(untrusted) = &self.untrusted {
            reporter.warning(untrusted);
        }
        for ignored in self.file.iter().flat_map(|file| &file.ignored) {
            reporter.warning(ignored);
        }
        if let Some(note) = self
            .file
            .iter()
            .find_map(|file| file.from_a_parent.as_ref())
        {
            reporter.note(format!("note: {note}"));
        }
    }
}

/// Parse `args`, then, for a command that reads the file, parse them again with the file's
/// values as the defaults of their flags.
pub fn resolve(args: &[OsString]) -> Result<Resolved, Failure> {
    let resolved = resolve_with_file(args)?;
    check_cache_dir(&resolved.matches).map_err(Failure::Config)?;
    Ok(resolved)
}

/// `--cache-dir` typed on the command line of a command with `--cache` (`run`, `tasks run`)
/// that has no cache turned on (by the flag, `EVALCTL_CACHE` or `cache = true`) would be
/// ignored: a usage error. `EVALCTL_CACHE_DIR` and the file's `cache_dir` only say where the
/// cache is, for whichever command uses it.
fn check_cache_dir(matches: &ArgMatches) -> anyhow::Result<()> {
    let Some((_, bindings, sub)) = configured_subcommand(matches) else {
        return Ok(());
    };
    // Whether the command has `--cache` is the command's own fact, not the matches': clap checks
    // an id against the command's flags only in debug builds (in a release build `get_flag` of
    // an id the command lacks panics).
    let has_switch = bindings.iter().any(|binding| binding.arg == "cache");
    if has_switch
        && !sub.get_flag("cache")
        && sub.value_source("cache_dir") == Some(ValueSource::CommandLine)
    {
        return Err(bad_flag(
            "--cache-dir",
            "takes effect only with --cache (or cache = true in evalctl.toml)",
        ));
    }
    Ok(())
}

fn resolve_with_file(args: &[OsString]) -> Result<Resolved, Failure> {
    // The error stands only if the file this parse finds does not give what is missing.
    let (first, missing) = match command().try_get_matches_from(args) {
        Ok(first) => (first, None),
        Err(error) if the_file_may_give(&error) => {
            match command().ignore_errors(true).try_get_matches_from(args) {
                Ok(first) => (first, Some(error)),
                Err(_) => return Err(Failure::Usage(error)),
            }
        }
        Err(error) => return Err(Failure::Usage(error)),
    };
    let without_the_file = |missing: Option<clap::Error>| match missing {
        Some(error) => Err(Failure::Usage(error)),
        None => Ok(()),
    };
    let Some((path, bindings, sub)) = configured_subcommand(&first) else {
        without_the_file(missing)?;
        return Ok(Resolved {
            matches: first,
            path: Vec::new(),
            file: None,
            from_file: Vec::new(),
            added_for_the_file: Vec::new(),
            untrusted: None,
        });
    };
    let choice = if sub.get_flag("no_config") {
        Choice::Ignore
    } else if let Some(path) = sub.get_one::<PathBuf>("config") {
        Choice::File(path.clone())
    } else {
        Choice::Discover
    };
    let (file, untrusted) = file::load(&choice).map_err(Failure::Config)?;
    let Some(config) = file else {
        without_the_file(missing)?;
        return Ok(Resolved {
            matches: first,
            path,
            file: None,
            from_file: Vec::new(),
            added_for_the_file: Vec::new(),
            untrusted,
        });
    };
    let mut defaults = file_defaults(&config, bindings, sub, &path).map_err(Failure::Config)?;
    // The variable comes before the file.
    defaults.retain(|(arg, _, _)| {
        !(bindings.iter()).any(|binding| binding.arg == *arg && switched_off(binding))
    });
    let from_file = defaults
        .iter()
        .map(|(arg, line, _)| (*arg, *line))
        .collect();
    let with_defaults = edit_subcommand(command(), &path, |mut sub| {
        for (arg, _, values) in &defaults {
            sub = sub.mut_arg(*arg, |flag| flag.default_values(values));
        }
        sub
    });
    let (matches, words) =
        parse_with_the_file(&with_defaults, args, &path, &defaults).map_err(Failure::Usage)?;
    let needs = switches_missing_what_they_need(&with_defaults, &words, &path, &defaults, &matches);
    if !needs.is_empty() {
        let problems = (needs.into_iter())
            .map(|(arg, line, reason)| {
                let key = bindings.iter().find(|binding| binding.arg == arg);
                let problem = Problem::at_line(config.display.as_str(), line, reason);
                match key {
                    Some(binding) => problem.at(binding.key),
                    None => problem,
                }
            })
            .collect();
        return Err(Failure::Config(invalid(problems)));
    }
    Ok(Resolved {
        matches,
        path,
        file: Some(config),
        from_file,
        added_for_the_file: words.added,
        untrusted: None,
    })
}

/// Whether `error` names flags missing that a given flag needs (`--resume` needs `--output`),
/// which the file may give: the error is then said once the file is read, without them if it
/// gives them.
pub fn the_file_may_give(error: &clap::Error) -> bool {
    what_is_missing(error)
        .is_some_and(|(missing, _)| (missing.split(", ")).any(|shown| shown.starts_with("--")))
}

/// The words of a command line, with the flags added to them for what the file gives.
struct Words {
    /// The words as parsed.
    words: Vec<OsString>,
    /// The flags (clap ids) added for the file's values.
    added: Vec<&'static str>,
}

/// Parse `args` with `command`, whose flags take the file's values as defaults. clap counts a
/// default as absent for what a flag needs (`--resume` needs `--output`), so a value the file
/// gives that a given flag needs is added to the words, as if typed, and the words are parsed
/// again.
fn parse_with_the_file(
    command: &clap::Command,
    args: &[OsString],
    path: &[&str],
    defaults: &[(&'static str, usize, Vec<String>)],
) -> Result<(ArgMatches, Words), clap::Error> {
    let mut words = Words {
        words: args.to_vec(),
        added: Vec::new(),
    };
    loop {
        let error = match command.clone().try_get_matches_from(&words.words) {
            Ok(matches) => return Ok((matches, words)),
            Err(error) => error,
        };
        let Some(sub) = subcommand_of(command, path) else {
            return Err(error);
        };
        // The words of each missing flag the file gives: a switch the file turns off gives
        // nothing.
        let needed: Vec<(&'static str, Vec<OsString>)> = missing_flags(&error, command, path)
            .into_iter()
            .filter_map(|id| defaults.iter().find(|(arg, _, _)| *arg == id))
            .filter(|(arg, _, _)| !words.added.contains(arg))
            .filter_map(|(arg, _, values)| {
                let flag = sub.get_arguments().find(|flag| flag.get_id() == *arg)?;
                let long = flag.get_long()?;
                let typed: Vec<OsString> = match flag.get_action() {
                    clap::ArgAction::SetTrue => (values.iter().any(|value| value == "true"))
                        .then(|| format!("--{long}").into())
                        .into_iter()
                        .collect(),
                    _ => (values.iter())
                        .map(|value| format!("--{long}={value}").into())
                        .collect(),
                };
                (!typed.is_empty()).then_some((*arg, typed))
            })
            .collect();
        if needed.is_empty() {
            return Err(error);
        }
        for (arg, typed) in needed {
            let at = after_the_subcommand(&words.words, path);
            words.words.splice(at..at, typed);
            words.added.push(arg);
        }
    }
}

/// The switches the file turns on (`resume = true`) that need a flag the command has not got
/// (`--output`), each as `(clap id, line, reason)`: clap checks what a flag needs only when it
/// is given, and the file's values are defaults.
fn switches_missing_what_they_need(
    command: &clap::Command,
    words: &Words,
    path: &[&str],
    defaults: &[(&'static str, usize, Vec<String>)],
    matches: &ArgMatches,
) -> Vec<(&'static str, usize, String)> {
    let Some((_, _, sub)) = configured_subcommand(matches) else {
        return Vec::new();
    };
    let Some(definition) = subcommand_of(command, path) else {
        return Vec::new();
    };
    let switches = defaults.iter().filter_map(|(arg, line, values)| {
        let flag = definition
            .get_arguments()
            .find(|flag| flag.get_id() == *arg)?;
        let on_by_the_file = matches!(flag.get_action(), clap::ArgAction::SetTrue)
            && values.iter().any(|value| value == "true")
            && sub.value_source(arg) == Some(ValueSource::DefaultValue);
        on_by_the_file.then_some((*arg, *line, flag.get_long()?))
    });
    switches
        .filter_map(|(arg, line, long)| {
            let mut trial = words.words.clone();
            let at = after_the_subcommand(&trial, path);
            trial.insert(at, format!("--{long}").into());
            let error = parse_with_the_file(command, &trial, path, defaults).err()?;
            let (missing, them) = what_is_missing(&error)?;
            let reason = format!(
                "turns on --{long}, which needs {missing}: give {them}, or remove this line"
            );
            Some((arg, line, reason))
        })
        .collect()
}

/// The flags a "required arguments were not provided" `error` names, shown as clap shows them
/// (`--output <FILE.jsonl>`), and the pronoun for them.
fn what_is_missing(error: &clap::Error) -> Option<(String, &'static str)> {
    if error.kind() != clap::error::ErrorKind::MissingRequiredArgument {
        return None;
    }
    match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::Strings(missing)) => Some((
            missing.join(", "),
            if missing.len() > 1 { "them" } else { "it" },
        )),
        _ => None,
    }
}

/// The subcommand at `path` of `command`.
fn subcommand_of<'a>(command: &'a clap::Command, path: &[&str]) -> Option<&'a clap::Command> {
    path.iter()
        .try_fold(command, |command, name| command.find_subcommand(name))
}

/// The clap ids of the flags a "required arguments were not provided" `error` names.
fn missing_flags(error: &clap::Error, command: &clap::Command, path: &[&str]) -> Vec<&'static str> {
    if error.kind() != clap::error::ErrorKind::MissingRequiredArgument {
        return Vec::new();
    }
    let (Some(ContextValue::Strings(missing)), Some(sub)) = (
        error.get(ContextKind::InvalidArg),
        subcommand_of(command, path),
    ) else {
        return Vec::new();
    };
    missing
        .iter()
        .filter_map(|shown| {
            let long = shown.split(' ').next()?.strip_prefix("--")?;
            let flag = sub
                .get_arguments()
                .find(|flag| flag.get_long() == Some(long))?;
            bindings_of(path)?
                .iter()
                .find(|binding| binding.arg == flag.get_id().as_str())
                .map(|binding| binding.arg)
        })
        .collect()
}

/// The index of the word after the subcommand's name in `words` (`run` of `evalctl run ...`,
/// `run` of `evalctl tasks run ...`): a flag inserted there is the subcommand's, before any `--`.
fn after_the_subcommand(words: &[OsString], path: &[&str]) -> usize {
    let mut at = 1;
    for name in path {
        match (words.iter().skip(at)).position(|word| word == name) {
            Some(offset) => at += offset + 1,
            None => return words.len(),
        }
    }
    at
}

/// The subcommand of `matches` that reads the file: its path, keys and matches.
fn configured_subcommand(
    matches: &ArgMatches,
) -> Option<(Vec<&'static str>, &'static [Binding], &ArgMatches)> {
    let mut path = Vec::new();
    let mut current = matches;
    while let Some((name, sub)) = current.subcommand() {
        let known = CONFIGURED
            .iter()
            .flat_map(|path| path.iter())
            .find(|known| **known == name)?;
        path.push(*known);
        current = sub;
    }
    bindings_of(&path).map(|bindings| (path, bindings, current))
}

/// The flag defaults the file sets for this command, as `(clap id, line, values)`: every value
/// checked by its flag's parser. A group of alternatives chosen on the command line or in the
/// environment (an evaluator flag) leaves the file's keys of the group out.
fn file_defaults(
    config: &ConfigFile,
    bindings: &'static [Binding],
    sub: &ArgMatches,
    path: &[&str],
) -> anyhow::Result<Vec<(&'static str, usize, Vec<String>)>> {
    let given = |arg: &str| {
        matches!(
            sub.value_source(arg),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        )
    };
    let replaced = |key: &str| {
        ALTERNATIVES.iter().any(|group| {
            group.replaces(key)
                && group.choosers.iter().any(|chooser| {
                    bindings
                        .iter()
                        .find(|binding| binding.key == *chooser)
                        .is_some_and(|binding| given(binding.arg))
                })
        })
    };
    let definition = command();
    let subcommand = subcommand_of(&definition, path);
    let mut problems = Vec::new();
    let mut defaults = Vec::new();
    for value in &config.values {
        if !bindings.contains(value.binding) || replaced(value.binding.key) {
            continue;
        }
        let unset = value.check_references(&config.display);
        if !unset.is_empty() {
            problems.extend(unset);
            continue;
        }
        let values = value.values.clone();
        let at_line = |reason: String| {
            Problem::at_line(config.display.as_str(), value.line, reason).at(value.binding.key)
        };
        if let Some(reason) =
            subcommand.and_then(|sub| first_rejected(sub, value.binding.arg, &values))
        {
            problems.push(at_line(reason));
            continue;
        }
        if let (Kind::Command(cwd_arg), Some(dir)) = (value.binding.kind, &value.command_dir) {
            defaults.push((cwd_arg, value.line, vec![dir.clone()]));
        }
        defaults.push((value.binding.arg, value.line, values));
    }
    if problems.is_empty() {
        Ok(defaults)
    } else {
        Err(invalid(problems))
    }
}

/// Why the flag `arg` of `command` rejects one of `values`, if it does: its own parser's reason
/// (a trial parse of each value alone through that parser).
fn first_rejected(command: &clap::Command, arg: &str, values: &[String]) -> Option<String> {
    let flag = command.get_arguments().find(|flag| flag.get_id() == arg)?;
    if matches!(flag.get_action(), clap::ArgAction::SetTrue) {
        return None; // a TOML boolean, already checked
    }
    values.iter().find_map(|value| rejected_value(flag, value))
}

/// Why `flag`'s own parser rejects `value`, if it does (a trial parse of the value alone).
fn rejected_value(flag: &clap::Arg, value: &str) -> Option<String> {
    let trial = clap::Command::new("trial").arg(
        clap::Arg::new("value")
            .long("value")
            .allow_negative_numbers(true)
            .value_parser(flag.get_value_parser().clone()),
    );
    trial
        .try_get_matches_from(["trial".to_string(), format!("--value={value}")])
        .err()
        .map(|error| parser_reason(&error, value))
}

/// A value error clap found in a variable rather than on the command line, as the problems to
/// fix: the variable (`EVALCTL_CONCURRENCY`) and the parser's reason, when the flag clap names
/// (`--concurrency <N>`) was not typed and a variable bound to it holds the value it rejected;
/// then every other variable of the command whose value its flag's parser rejects (clap stops
/// at the first), so that one run shows them all.
fn rejected_variable(error: &clap::Error, args: &[OsString]) -> Option<anyhow::Error> {
    let (Some(ContextValue::String(flag)), Some(ContextValue::String(value))) = (
        error.get(ContextKind::InvalidArg),
        error.get(ContextKind::InvalidValue),
    ) else {
        return None;
    };
    let long = flag.trim_start_matches("--").split(' ').next()?;
    if typed(args, long) {
        return None;
    }
    let definition = command();
    CONFIGURED.iter().find_map(|path| {
        let sub = subcommand_of(&definition, path)?;
        let bindings = bindings_of(path)?;
        let first = bindings.iter().find_map(|binding| {
            let name = binding.env_name()?;
            let bound = sub
                .get_arguments()
                .any(|arg| arg.get_id() == binding.arg && arg.get_long() == Some(long));
            (bound && std::env::var(&name).as_deref() == Ok(value.as_str()))
                .then(|| Problem::new(name, parser_reason(error, value)))
        })?;
        let others = bindings.iter().filter_map(|binding| {
            let name = binding.env_name()?;
            let value = std::env::var(&name).ok()?;
            let flag = sub
                .get_arguments()
                .find(|flag| flag.get_id() == binding.arg)?;
            if name == first.source || flag.get_long().is_some_and(|long| typed(args, long)) {
                return None;
            }
            Some(Problem::new(name, rejected_value(flag, &value)?))
        });
        let mut problems = vec![first.clone()];
        problems.extend(others);
        Some(invalid(problems))
    })
}

/// The `EVALCTL_*` variable behind a usage error clap words as a flag's, when one is:
/// [`rejected_variable`], else [`required_by_variable`].
pub fn variable_at_fault(error: &clap::Error, args: &[OsString]) -> Option<anyhow::Error> {
    rejected_variable(error, args).or_else(|| required_by_variable(error, args))
}

/// A flag missing that a switch needs (`--output` for `--resume`) when the switch was not typed
/// but turned on by its variable (`EVALCTL_RESUME=true`): the variable is what to look at, not
/// only the flag clap names.
fn required_by_variable(error: &clap::Error, args: &[OsString]) -> Option<anyhow::Error> {
    let (missing, them) = what_is_missing(error)?;
    let missing = missing.as_str();
    // clap's usage line names the flags that are set, those a variable set among them.
    let rendered = error.render().to_string();
    let usage = rendered
        .lines()
        .find_map(|line| line.strip_prefix("Usage: "))?;
    let definition = command();
    let problems: Vec<Problem> = CONFIGURED
        .iter()
        .filter(|path| usage.starts_with(&format!("evalctl {} ", path.join(" "))))
        .filter_map(|path| {
            let sub = subcommand_of(&definition, path)?;
            Some((sub, bindings_of(path)?))
        })
        .flat_map(|(sub, bindings)| {
            bindings.iter().filter_map(move |binding| {
                let name = binding.env_name()?;
                let flag = sub
                    .get_arguments()
                    .find(|flag| flag.get_id() == binding.arg)?;
                let long = flag.get_long()?;
                let set = binding.kind == Kind::Switch
                    && std::env::var_os(&name).is_some()
                    && !switched_off(binding);
                (set && !typed(args, long) && usage.split(' ').any(|word| word == format!("--{long}")))
                    .then(|| {
                        Problem::new(
                            name.clone(),
                            format!("turns on --{long}, which needs {missing}: give {them}, or unset {name}"),
                        )
                    })
            })
        })
        .collect();
    (!problems.is_empty()).then(|| invalid(problems))
}

/// Whether the command line `args` holds the flag `--long` (alone or as `--long=VALUE`).
fn typed(args: &[OsString], long: &str) -> bool {
    args.iter().filter_map(|arg| arg.to_str()).any(|arg| {
        arg.strip_prefix("--")
            .and_then(|arg| arg.strip_prefix(long))
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('='))
    })
}

/// A clap value error as a reason: the parser's own message, else the values it accepts.
fn parser_reason(error: &clap::Error, value: &str) -> String {
    if let Some(source) = std::error::Error::source(error) {
        return source.to_string();
    }
    match error.get(ContextKind::ValidValue) {
        Some(ContextValue::Strings(valid)) => {
            format!("{value:?} is not one of {}", valid.join(", "))
        }
        _ => format!("{value:?} is not a valid value"),
    }
}

/// Where each setting of the command that was not typed came from, so that a problem found
/// with its value later (`--fail-under 1.5` outside the score range) names the place the user
/// can fix: `evalctl.toml:4: run.fail_under: ...` or `EVALCTL_FAIL_UNDER: ...`, not a flag
/// they never typed.
pub struct Provenance(Vec<Setting>);

impl Provenance {
    /// The settings of `resolved` that the file or the environment gave.
    pub fn of(resolved: &Resolved) -> Provenance {
        Provenance(
            settings(resolved)
                .into_iter()
                .filter(|setting| matches!(setting.origin, Origin::Env(_) | Origin::File { .. }))
                .collect(),
        )
    }

    /// `error` with each problem that names a flag as a whole moved to where its value came
    /// from.
    pub fn attribute(&self, error: anyhow::Error) -> anyhow::Error {
        match error.downcast::<crate::error::Fatal>() {
            Ok(crate::error::Fatal::Invalid(problems)) => {
                invalid(problems.into_iter().map(|p| self.place(p)).collect())
            }
            Ok(other) => other.into(),
            Err(other) => other,
        }
    }

    /// A problem of a flag as a whole goes to where its value was set; a problem of a file as
    /// a whole that a setting names (`nope.jsonl: cannot read`) keeps the file's name, placed
    /// there too.
    fn place(&self, problem: Problem) -> Problem {
        if problem.line.is_some() || problem.location.is_some() {
            return problem;
        }
        let of_the_flag = self.0.iter().find(|setting| setting.flag == problem.source);
        let of_a_file_it_names =
            || (self.0.iter()).find(|setting| setting.value.contains(&problem.source));
        let (setting, names_a_file) = match of_the_flag {
            Some(setting) => (setting, false),
            None => match of_a_file_it_names() {
                Some(setting) => (setting, true),
                None => return problem,
            },
        };
        let message = || match names_a_file {
            true => format!("{}: {}", problem.source, problem.message),
            false => problem.message.clone(),
        };
        match &setting.origin {
            Origin::File { file, line } => {
                Problem::at_line(file.as_str(), *line, message()).at(setting.key)
            }
            Origin::Env(name) => Problem::new(name.as_str(), message()),
            Origin::Flag(_) | Origin::Default => problem,
        }
    }
}

/// The settings of the resolved command, each with where it came from.
fn settings(resolved: &Resolved) -> Vec<Setting> {
    let Some((_, bindings, sub)) = configured_subcommand(&resolved.matches) else {
        return Vec::new();
    };
    let definition = command();
    let subcommand = subcommand_of(&definition, &resolved.path);
    let long = |arg: &str| {
        subcommand
            .and_then(|sub| sub.get_arguments().find(|flag| flag.get_id() == arg))
            .and_then(clap::Arg::get_long)
            .map_or_else(|| arg.to_string(), |long| format!("--{long}"))
    };
    bindings
        .iter()
        .map(|binding| {
            let flag = long(binding.arg);
            let value: Vec<String> = sub
                .get_raw(binding.arg)
                .map(|raw| {
                    raw.map(|value| value.to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            let value = value
                .iter()
                .map(|value| match binding.kind {
                    Kind::Headers => show::mask_header(value),
                    _ => show::mask_value(binding.key, value),
                })
                .collect();
            let origin = match sub.value_source(binding.arg) {
                Some(ValueSource::CommandLine)
                    if !resolved.added_for_the_file.contains(&binding.arg) =>
                {
                    Origin::Flag(flag.clone())
                }
                Some(ValueSource::EnvVariable) => {
                    Origin::Env(binding.env_name().unwrap_or_default())
                }
                _ if switched_off(binding) => Origin::Env(binding.env_name().unwrap_or_default()),
                _ => match (
                    &resolved.file,
                    resolved
                        .from_file
                        .iter()
                        .find(|(arg, _)| *arg == binding.arg),
                ) {
                    (Some(file), Some((_, line))) => Origin::File {
                        file: file.display.clone(),
                        line: *line,
                    },
                    _ => Origin::Default,
                },
            };
            Setting {
                key: binding.key,
                flag,
                value,
                origin,
            }
        })
        .collect()
}

impl ConfigCommand {
    /// Run the subcommand.
    pub fn execute(self, reporter: Reporter) -> anyhow::Result<Exit> {
        let ConfigCommand::Show { config, command } = self;
        let mut args: Vec<OsString> = vec!["evalctl".into()];
        if command.is_empty() {
            args.push("run".into());
        }
        args.extend(command);
        if !CONFIGURED.iter().any(|path| names(&args[1..], path)) {
            let named: Vec<String> = args[1..]
                .iter()
                .map(|word| word.to_string_lossy().into_owned())
                .take_while(|word| !word.starts_with('-'))
                .take(2)
                .collect();
            let supported = "run, preflight, tasks run, cache stats or cache clear";
            return Err(bad_flag(
                "config show",
                if named.is_empty() {
                    format!("name the command first ({supported}), then its flags: evalctl config show run -j 4")
                } else {
                    format!(
                        "`{}` does not read evalctl.toml; config show takes {supported}",
                        named.join(" ")
                    )
                },
            ));
        }
        if let Some(path) = config.config {
            args.extend(["--config".into(), path.into_os_string()]);
        }
        if config.no_config {
            args.push("--no-config".into());
        }
        let resolved = match resolve(&args) {
            Ok(resolved) => resolved,
            Err(Failure::Config(error)) => return Err(error),
            // `EVALCTL_CACHE=maybe`: the variable is what to fix, as the command shown says.
            Err(Failure::Usage(error)) => match variable_at_fault(&error, &args) {
                Some(rejected) => return Err(rejected),
                None => return Err(bad_flag("config show", super::clap_reason(&error))),
            },
        };
        let shown = Shown {
            config_file: resolved.file.as_ref().map(|file| file.display.clone()),
            command: resolved.path.join(" "),
            settings: settings(&resolved),
        };
        // As the command shown would say it.
        resolved.tell_about_the_file(reporter);
        commands::config::show(&shown, reporter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_binding_names_a_flag_of_its_command_with_a_fitting_action() {
        let definition = command();
        for path in CONFIGURED {
            let sub = subcommand_of(&definition, path).expect("a configured command exists");
            for binding in bindings_of(path).expect("configured") {
                let flag = sub
                    .get_arguments()
                    .find(|flag| flag.get_id() == binding.arg)
                    .unwrap_or_else(|| panic!("{path:?}: no flag {}", binding.arg));
                let switch = matches!(flag.get_action(), clap::ArgAction::SetTrue);
                assert_eq!(switch, binding.kind == Kind::Switch, "{}", binding.key);
                if let Kind::Command(cwd) = binding.kind {
                    assert!(sub.get_arguments().any(|flag| flag.get_id() == cwd));
                }
            }
        }
    }
}
