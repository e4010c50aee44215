//! Command-line definitions (clap) and their conversion into typed configs.
//!
//! No other module sees clap types: each subcommand's arguments are turned into the config type the
//! library module that does the work defines.

mod fep;
mod run;
mod tasks;

use std::io::IsTerminal;

use clap::{Parser, Subcommand, ValueEnum};

use crate::exit::Exit;

pub use fep::FepCommand;
pub use run::RunArgs;
pub use tasks::TasksCommand;

/// evalctl — score candidates (prompts, answers, any text) with command, HTTP, LLM-judge or
/// built-in evaluators over JSONL datasets.
#[derive(Debug, Parser)]
#[command(
    name = "evalctl",
    version,
    about,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// When to use colour on stderr and in the text summary (NO_COLOR is honoured by `auto`).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Score one or more candidates with one evaluator, optionally once per dataset / valset example.
    Run(RunArgs),
    /// Validate every input and probe the evaluator once; scores nothing. Same flags as `run`.
    Preflight(RunArgs),
    /// Task specs: strict validation, few-shot rendering, scoring model outputs.
    #[command(subcommand)]
    Tasks(TasksCommand),
    /// The Flexible Evaluation Protocol (FEP) EVALUATE interface.
    #[command(subcommand)]
    Fep(FepCommand),
}

/// `--color` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when stderr is a terminal and NO_COLOR is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// `--format` values shared by every command that prints a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// A human-readable table.
    Text,
    /// One JSON document.
    Json,
}

impl From<FormatArg> for crate::report::Format {
    fn from(format: FormatArg) -> Self {
        match format {
            FormatArg::Text => crate::report::Format::Text,
            FormatArg::Json => crate::report::Format::Json,
        }
    }
}

/// Parse the command line into the command to run and whether to use colour (`--color`, with
/// `auto` meaning stderr is a terminal and NO_COLOR is unset). A usage error, `--help` or
/// `--version` has been printed when this returns the exit code instead.
pub fn parse() -> Result<(Command, bool), std::process::ExitCode> {
    let cli = Cli::try_parse().map_err(usage_error)?;
    let color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
        }
    };
    Ok((cli.command, color))
}

/// Print a clap error and return its exit code (2 for usage errors, 0 for --help/--version). An
/// unknown option right after `--evaluator-command` is almost always an evaluator argument: the
/// hint says how to pass it, instead of clap's `-- --flag` tip, which does not apply.
fn usage_error(error: clap::Error) -> std::process::ExitCode {
    let args: Vec<String> = std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let unknown = error
        .get(clap::error::ContextKind::InvalidArg)
        .map(|value| value.to_string());
    let evaluator_words = args
        .iter()
        .position(|arg| arg == "--evaluator-command")
        .zip(unknown.as_ref())
        .and_then(|(start, unknown)| {
            let end = args.iter().skip(start).position(|arg| arg == unknown)? + start;
            let words = &args[start + 1..=end];
            // Only when the unknown option is the first option after the command's words.
            let first_option = words.iter().position(|word| word.starts_with('-'));
            if first_option != Some(words.len() - 1) {
                return None;
            }
            // `python3 -u eval.py`: an interpreter's option comes before its script; keep it.
            let interpreter_option = words.len() == 2
                && crate::evaluator::command::SCRIPT_INTERPRETERS.contains(&words[0].as_str());
            let script = args
                .get(end + 1)
                .filter(|next| interpreter_option && !next.starts_with('-'));
            Some(&args[start + 1..=end + usize::from(script.is_some())])
        });
    // `preflight --format json` promises CI a JSON outcome on stdout, usage errors included.
    let preflight = args.iter().any(|arg| arg == "preflight");
    let json = args.iter().any(|arg| arg == "--format=json")
        || args
            .windows(2)
            .any(|pair| pair[0] == "--format" && pair[1] == "json");
    let json_preflight = preflight && json;
    if json_preflight && error.exit_code() == Exit::BadInput as i32 {
        let rendered = error.render().to_string();
        let first = rendered.lines().next().unwrap_or_default();
        let _ = crate::report::print_preflight_failure(first, Exit::BadInput as u8);
    }
    match (error.kind(), evaluator_words) {
        (clap::error::ErrorKind::UnknownArgument, Some(words)) => {
            let rendered = error.render().to_string();
            let without_tip: Vec<&str> = rendered
                .lines()
                .filter(|line| !line.trim_start().starts_with("tip:"))
                .collect();
            diag!(
                "{}",
                without_tip.join("\n").replace("\n\n\n", "\n\n").trim_end()
            );
            diag!(
                "hint: evaluator arguments that start with '-' go inside one quoted string: \
                 --evaluator-command {:?}",
                words.join(" ")
            );
            Exit::BadInput.into()
        }
        _ => {
            let _ = error.print();
            std::process::ExitCode::from(error.exit_code() as u8)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definitions_are_consistent() {
        Cli::command().debug_assert();
    }
}
