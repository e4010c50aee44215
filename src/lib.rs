//! evalctl: an evaluation harness. Loads and validates JSONL datasets, builds protocol-v2
//! payloads, dispatches them to command, HTTP, LLM-judge or built-in evaluators, validates every
//! score with one shared validator, and reports per-call results and aggregates.
//!
//! The layers, top down: [`main_entry`] hands the command line to `cli` (clap definitions, resolved
//! once, with `config`'s `evalctl.toml`, into typed configs), which hands each command to its file
//! in `commands` (wire input → domain → output, pick the exit code). Below the commands:
//! `generate` (the model `run --generate` and `tasks run` ask, and `tasks run`'s generation);
//! `server` (REST and gRPC over the `fep` engine); `report` (every stdout document, results file
//! and stderr diagnostic); `runner` (plan, preflight, dispatch, journal); the `evaluator` adapters;
//! the vocabularies `evaluation_spec` and `tasks`; `judging` (the rubric, prompt fence and reply
//! reader that the run's judge and the live spec judges share); `record` (the result lines every
//! scoring command writes); the vocabulary `checks`; then `llm`, `scoring` (the primitives all
//! three vocabularies score with) and the foundation (`input`, `protocol`, `store`, `sandbox`,
//! `error`, `secrets`, `digest`). Each imports only layers below it: only `cli` and the entry
//! point import a command, and no imports form a circle. For `run`, data flows one way: `input` →
//! `runner` → `evaluator` adapters → `protocol` (payload, score validation) → `report` (results
//! file, summary).
//!
//! The binary's entry point is [`main_entry`]. Modules are private, so the compiler reports any
//! code nothing uses; `scoring`, `tasks` and `evaluation_spec` are public for the golden-file,
//! fixture and conformance tests. Only `report` prints: the print lints below enforce it.

#![warn(clippy::print_stdout, clippy::print_stderr)]

mod calendar;
mod checks;
mod cli;
mod commands;
mod config;
mod digest;
mod error;
pub mod evaluation_spec;
mod evaluator;
mod exit;
mod fep;
mod generate;
mod in_flight;
mod input;
mod interrupt;
mod interval;
mod judging;
mod llm;
mod mapped;
mod owner_only;
mod patterns;
mod pool;
mod process_group;
mod protocol;
mod record;
mod report;
mod runner;
mod sandbox;
pub mod scoring;
mod secrets;
mod server;
mod store;
pub mod tasks;
mod text;
mod transport;

use cli::Command;

/// The whole program: parse, dispatch, report any error, return the exit code.
pub fn main_entry() -> std::process::ExitCode {
    if let Some(exit) = process_group::run_reaper_if_asked() {
        return exit;
    }
    if let Some(exit) = sandbox::run_launcher_if_asked() {
        return exit;
    }
    interrupt::catch_file_size_limit();
    let (command, reporter, provenance) = match cli::parse() {
        Ok(parsed) => parsed,
        Err(exit) => return exit,
    };
    let reporter = match &command {
        Command::Fep(fep) if fep.writes_ndjson() => reporter.ndjson(),
        _ => reporter,
    };
    let outcome = match command {
        Command::Run(args) => args
            .into_config(false)
            .and_then(|config| commands::run::run(config, reporter)),
        Command::Preflight(args) => args
            .into_config(true)
            .and_then(|config| commands::run::preflight_only(config, reporter)),
        Command::Tasks(command) => command.execute(reporter),
        Command::Fep(command) => command.execute(reporter),
        Command::Spec(command) => command.execute(reporter),
        Command::Cache(command) => command.execute(reporter),
        Command::Summarize(args) | Command::Merge(args) => args
            .into_config()
            .and_then(|config| commands::merge::merge(&config, reporter)),
        Command::Config(command) => command.execute(reporter),
        Command::Init => commands::config::init(reporter),
        Command::Report(args) => args.execute(reporter),
        Command::Serve(args) => args.execute(reporter),
        Command::Compare(args) => args
            .into_config()
            .and_then(|config| commands::compare::compare(&config, reporter)),
    };
    match outcome {
        Ok(exit) => exit.into(),
        Err(error) => {
            // A value the file or the environment gave is named there, not as its flag.
            let error = provenance.attribute(error);
            reporter.error(&error);
            error::Fatal::exit_of(&error).into()
        }
    }
}
