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
pub mod text;

use cli::Command;
use error::Fatal;
use exit::Exit;

/// The whole program: parse, dispatch, print any error, return the exit code.
pub fn main_entry() -> std::process::ExitCode {
    let (command, color) = match cli::parse() {
        Ok(parsed) => parsed,
        Err(exit) => return exit,
    };
    let outcome = match command {
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
    let text = match text.strip_prefix("error:") {
        Some(rest) => format!(
            "{}{rest}",
            report::paint(report::Paint::Error, "error:", color)
        ),
        None => text,
    };
    eprintln!("{text}");
}
