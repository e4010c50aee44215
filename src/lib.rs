//! evalctl: an evaluation harness. Loads and validates JSONL datasets, builds protocol-v2
//! payloads, dispatches them to command, HTTP, LLM-judge or built-in evaluators, validates every
//! score with one shared validator, and reports per-call results and aggregates.
//!
//! Data flows one way: `input` → `runner` (plan, dispatch) → `evaluator` adapters →
//! `protocol` (payload, score validation) → `report` (results file, summary).

pub mod checks;
pub mod cli;
pub mod config;
pub mod error;
pub mod evaluator;
pub mod exit;
pub mod fep;
pub mod input;
pub mod metrics;
pub mod process_group;
pub mod protocol;
pub mod report;
pub mod run;
pub mod runner;
pub mod secrets;
pub mod tasks;

use std::io::IsTerminal;

use clap::Parser;

use cli::{Cli, ColorChoice, Command};
use error::Fatal;
use exit::Exit;

/// The whole program: parse, dispatch, print any error, return the exit code.
pub fn main_entry() -> std::process::ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(error),
    };
    let color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let outcome = match cli.command {
        Command::Run(args) => args.into_config(color).and_then(run::run),
        Command::Preflight(args) => args.into_config(color).and_then(run::preflight_only),
        Command::Tasks(command) => command.execute(),
        Command::Fep(command) => command.execute(),
    };
    match outcome {
        Ok(exit) => exit.into(),
        Err(error) => {
            print_error(&error, color);
            error
                .downcast_ref::<Fatal>()
                .map_or(Exit::BadInput, Fatal::exit)
                .into()
        }
    }
}

fn print_error(error: &anyhow::Error, color: bool) {
    let text = match error.downcast_ref::<Fatal>() {
        Some(fatal) => fatal.to_string(),
        None => format!("error: {error:#}"),
    };
    let text = if color {
        text.replacen("error:", "\x1b[1;31merror:\x1b[0m", 1)
    } else {
        text
    };
    eprintln!("{text}");
}

/// Print a clap error and exit with its code (2 for usage errors, 0 for --help/--version). An
/// unknown option right after `--evaluator-command` is almost always an evaluator argument: the
/// hint says how to pass it, instead of clap's `-- --flag` tip, which does not apply.
fn usage_error(error: clap::Error) -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let unknown = error
        .get(clap::error::ContextKind::InvalidArg)
        .map(|value| value.to_string());
    let evaluator_words = args
        .iter()
        .position(|arg| arg == "--evaluator-command")
        .zip(unknown.as_ref())
        .and_then(|(start, unknown)| {
            let end = args.iter().skip(start).position(|arg| arg == unknown)? + start;
            Some(&args[start + 1..=end])
        });
    match (error.kind(), evaluator_words) {
        (clap::error::ErrorKind::UnknownArgument, Some(words)) => {
            let rendered = error.render().to_string();
            let without_tip: Vec<&str> = rendered
                .lines()
                .filter(|line| !line.trim_start().starts_with("tip:"))
                .collect();
            eprintln!(
                "{}",
                without_tip.join("\n").replace("\n\n\n", "\n\n").trim_end()
            );
            eprintln!(
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
