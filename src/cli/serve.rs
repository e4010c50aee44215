//! Flags of `evalctl serve`, turned into a [`ServeConfig`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::values::parse_seconds;
use super::values::{allowed_endpoints, parse_at_least, parse_between, parse_custom_check};
use crate::checks::CustomCheck;
use crate::commands;
use crate::error::bad_flag;
use crate::exit::Exit;
use crate::report::Reporter;
use crate::server::{Limits, ServeChecks, ServeConfig};

/// `evalctl serve`
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The REST API's address (port 0: any free port; the bound address is printed).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// The gRPC service's address (port 0: any free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50051")]
    grpc_listen: SocketAddr,
    /// Require `Authorization: Bearer TOKEN` (or `X-API-Key: TOKEN`), TOKEN being this
    /// environment variable's value; /health stays open.
    #[arg(long, value_name = "NAME")]
    token_env: Option<String>,
    /// The results database [default: $XDG_DATA_HOME/evalctl/serve.db].
    #[arg(long, value_name = "FILE")]
    db: Option<PathBuf>,
    /// Delete results older than DAYS (at startup, then hourly).
    #[arg(long, value_name = "DAYS", allow_negative_numbers = true,
          value_parser = parse_at_least::<u32, 1>)]
    retain: Option<u32>,
    /// The largest request body or gRPC message, in bytes (larger: 413 / RESOURCE_EXHAUSTED).
    #[arg(long, value_name = "BYTES", default_value_t = 32 << 20,
          allow_negative_numbers = true, value_parser = parse_at_least::<u64, 1>)]
    max_body: u64,
    /// The most test cases in one request (more: 400).
    #[arg(long, value_name = "N", default_value_t = 1_000_000,
          allow_negative_numbers = true, value_parser = parse_at_least::<u64, 1>)]
    max_test_cases: u64,
    /// The most check results in one request: its test cases times the checks that apply to
    /// each (shared and per-test-case), counted before evaluating (more: 400).
    #[arg(long, value_name = "N", default_value_t = 1_000_000,
          allow_negative_numbers = true, value_parser = parse_at_least::<u64, 1>)]
    max_check_results: u64,
    /// The most evaluations running at once (more: 429 / RESOURCE_EXHAUSTED).
    #[arg(long, value_name = "N", default_value_t = 256,
          allow_negative_numbers = true, value_parser = parse_between::<u64, 1, 65_536>)]
    max_concurrent: u64,
    /// The most memory the requests in flight may hold together, in bytes: each one's body as
    /// it arrives, the document parsed from it and the check results it asks for, estimated
    /// before they are taken (a request alone over it: 413 / RESOURCE_EXHAUSTED; past it with
    /// others: 429 / RESOURCE_EXHAUSTED). At least --max-body.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30,
          allow_negative_numbers = true, value_parser = parse_at_least::<u64, 1>)]
    max_memory: u64,
    /// The most connections open at once, REST and gRPC together; past it, new connections
    /// wait (unanswered, in the system's queue) until one closes.
    #[arg(long, value_name = "N", default_value_t = 1_024,
          allow_negative_numbers = true, value_parser = parse_between::<u64, 1, 1_048_576>)]
    max_connections: u64,
    /// Close a connection that brings no complete request head in SECONDS: idle between
    /// requests, or sending its head slowly (gRPC: one from which nothing is read, not even an
    /// answer to a ping).
    #[arg(long, value_name = "SECONDS", default_value = "30", allow_negative_numbers = true,
          value_parser = parse_seconds)]
    idle_timeout: Duration,
    /// Answer 408 to a request whose body has not arrived SECONDS after its head.
    #[arg(long, value_name = "SECONDS", default_value = "60", allow_negative_numbers = true,
          value_parser = parse_seconds)]
    body_timeout: Duration,
    /// Answer 503 (gRPC: DEADLINE_EXCEEDED) to a request not evaluated within SECONDS of its
    /// body's arrival, and stop its evaluation.
    #[arg(long, value_name = "SECONDS", default_value = "300", allow_negative_numbers = true,
          value_parser = parse_seconds)]
    request_timeout: Duration,
    /// Serve an address other than loopback without --token-env (anyone who can reach it may
    /// run evaluations).
    #[arg(long)]
    allow_unauthenticated_remote: bool,
    /// Declare a custom check type requests may use: NAME=COMMAND (the command gets a check's
    /// resolved arguments as JSON on stdin and prints its results object). Requests cannot
    /// declare commands. Repeatable.
    #[arg(long, value_name = "NAME=COMMAND", value_parser = parse_custom_check)]
    custom_check: Vec<CustomCheck>,
    /// Let extended checks (semantic_similarity, llm_judge) call this OpenAI-compatible
    /// endpoint, with the API key in environment variable KEY_ENV when given
    /// (OPENAI_API_KEY@https://api.openai.com/v1). No other endpoint or key is used. Repeatable.
    #[arg(long, value_name = "[KEY_ENV@]BASE_URL")]
    allow_endpoint: Vec<String>,
}

impl ServeArgs {
    /// Serve until SIGINT or SIGTERM.
    pub fn execute(self, reporter: Reporter) -> anyhow::Result<Exit> {
        // A typo in --db must not make a new, empty database in a new directory: only the
        // default location's directory is created.
        if let Some(db) = &self.db {
            let folder = db.parent().filter(|dir| !dir.as_os_str().is_empty());
            if let Some(dir) = folder.filter(|dir| !dir.is_dir()) {
                return Err(bad_flag(
                    &db.display().to_string(),
                    format!(
                        "cannot open --db: no directory {} (evalctl creates the database file, \
                         never its directory)",
                        dir.display()
                    ),
                ));
            }
        }
        if self.max_memory < self.max_body {
            return Err(bad_flag(
                "--max-memory",
                format!(
                    "{} is less than --max-body ({}): a request's body alone takes that much \
                     as it arrives",
                    self.max_memory, self.max_body
                ),
            ));
        }
        let size = |value: u64| usize::try_from(value).unwrap_or(usize::MAX);
        let config = ServeConfig {
            listen: self.listen,
            grpc_listen: self.grpc_listen,
            token_env: self.token_env,
            db: self.db,
            retain_days: self.retain,
            limits: Limits {
                max_body: size(self.max_body),
                max_test_cases: size(self.max_test_cases),
                max_check_results: size(self.max_check_results),
                max_concurrent: size(self.max_concurrent),
                max_memory: self.max_memory,
                body_timeout: self.body_timeout,
                request_timeout: self.request_timeout,
            },
            idle_timeout: self.idle_timeout,
            max_connections: size(self.max_connections),
            allow_unauthenticated_remote: self.allow_unauthenticated_remote,
            checks: ServeChecks {
                custom: self.custom_check,
                allowed_endpoints: allowed_endpoints(&self.allow_endpoint)?,
            },
        };
        commands::serve::serve(config, reporter)
    }
}
