//! What `evalctl serve` serves (its command is `crate::commands::serve`): the FEP REST API
//! (section 5.1, [`rest`]) and gRPC services (section 5.2, [`grpc`], and the long-running
//! [`operations`]) in one process, over the engine of `fep evaluate` ([`engine`]), with results
//! kept in SQLite ([`store`]).
//!
//! Both listeners bind before anything is reported; their addresses are then printed on stderr
//! (`REST listening on http://ADDR`, `gRPC listening on http://ADDR`), so a caller that asked
//! for port 0 learns the port. SIGINT or SIGTERM stops accepting connections, lets the requests
//! in flight and the operations' evaluations finish, then closes the database. Idle and slow connections are closed,
//! and at most `--max-connections` are open at once ([`connections`]); a gRPC call is admitted
//! on its headers, its token checked and, when it evaluates, its place taken ([`admission`]). Without `--token-env`, only loopback addresses are served unless
//! `--allow-unauthenticated-remote` says otherwise.

mod admission;
pub(crate) mod auth;
pub(crate) mod connections;
mod convert;
pub(crate) mod engine;
pub(crate) mod grpc;
mod message_cost;
pub(crate) mod operations;
pub(crate) mod rest;
pub(crate) mod store;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub use engine::Limits;

/// The generated gRPC messages and service (`scripts/gen-proto.sh`).
#[allow(clippy::all, clippy::pedantic, missing_docs, dead_code)]
#[path = "proto/fep.v1.rs"]
mod pb;

/// What `evalctl serve` was asked for.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The REST address.
    pub listen: SocketAddr,
    /// The gRPC address.
    pub grpc_listen: SocketAddr,
    /// The environment variable holding the bearer token (`--token-env`).
    pub token_env: Option<String>,
    /// The database file; `None` for the default under the user's data directory.
    pub db: Option<PathBuf>,
    /// Prune results older than this many days.
    pub retain_days: Option<u32>,
    /// The request limits.
    pub limits: Limits,
    /// How long a connection may wait for a request head (REST) or send nothing (gRPC).
    pub idle_timeout: Duration,
    /// The most connections open at once, REST and gRPC together.
    pub max_connections: usize,
    /// Serve a non-loopback address without `--token-env`.
    pub allow_unauthenticated_remote: bool,
    /// What requests' checks may use beyond the built-in ones.
    pub checks: ServeChecks,
}

/// The custom checks, endpoints and API keys the operator lends to requests.
#[derive(Debug, Clone, Default)]
pub struct ServeChecks {
    /// `--custom-check NAME=COMMAND`.
    pub custom: Vec<crate::checks::CustomCheck>,
    /// `--allow-endpoint [KEY_ENV@]BASE_URL`.
    pub allowed_endpoints: Vec<crate::checks::AllowedEndpoint>,
}
