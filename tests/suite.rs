//! The integration tests, one test binary: each `tests/<name>.rs` is a module here, so the
//! crate and its dependencies are linked once rather than once per file (a fresh `cargo test`
//! then fits on a small disk and links in seconds). Shared support lives in `common` and the
//! `*_support` modules. Run one file's tests with `cargo test --test suite <name>::`.
//! `tests/cli_snapshots.rs` stays a binary of its own: it clears environment variables
//! before trycmd runs its cases, which is only sound in a process running no other test.

mod common;
mod extended_support;
mod fep_support;
mod judge_support;
mod serve_support;
mod spec_support;

mod cache_hits;
mod cache_settings;
mod checks_arguments;
mod checks_custom;
mod checks_extended;
mod checks_run;
mod checks_truth_tables;
mod ci_compare;
mod ci_gates;
mod ci_junit_schema;
mod ci_progress;
mod ci_reports;
mod ci_shards;
mod ci_verdicts;
mod cli_global;
mod code_exec_sandbox;
mod command_conventions;
mod config_file;
mod config_trust;
mod evaluator_hints;
mod example_ids;
mod fep_requests;
mod fep_schema;
mod fep_spec_examples;
mod fep_stream;
mod fepmc_parallel;
mod generate;
mod generate_budget;
mod generate_report;
mod header_env;
mod input_bounds;
mod journal_faults;
mod judge_config;
mod judge_replies;
mod judge_run;
mod metrics_golden;
mod name_suggestions;
mod outputs_never_replace_inputs;
mod preflight_checks;
mod proto_codegen;
mod rate_limit_pacing;
mod report_html;
mod report_kinds;
mod results_of_every_command;
mod robustness;
mod run_command;
mod run_http;
mod run_identity;
mod run_inputs;
mod run_payload;
mod run_report;
mod run_signals;
mod serve_checks;
mod serve_durability;
mod serve_grpc;
mod serve_limits;
mod serve_memory;
mod serve_operations;
mod serve_rest;
mod spec_cli;
mod spec_conformance;
mod spec_live_judges;
mod spec_validators_conformance;
mod strict_wording;
mod tasks_code_exec;
mod tasks_durable;
mod tasks_render;
mod tasks_run;
mod tasks_score;
mod tasks_validate;
mod untrusted_checks;
mod untrusted_text;
mod written_files;
