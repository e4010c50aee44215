//! Command-line definitions (clap) and their conversion into typed configs.
//!
//! No other module sees clap types: each subcommand's arguments are turned into the config type the
//! library module that does the work defines.

mod fep;
mod run;
mod tasks;

use clap::{Parser, Subcommand, ValueEnum};

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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definitions_are_consistent() {
        Cli::command().debug_assert();
    }
}
