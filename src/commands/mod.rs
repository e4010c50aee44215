//! The command layer: one file per command, each wiring the shared input, the domain and the
//! output, and picking the exit code. Domain logic stays in its domain folder.
//!
//! - [`cache`] — `cache stats` and `cache clear`.
//! - [`compare`] — `compare`.
//! - [`config`] — `config show` and `init`.
//! - [`fep`] — `fep evaluate`.
//! - [`merge`] — `summarize` and `merge`.
//! - [`report`] — `report` (the HTML report).
//! - [`run`] — `run` and `preflight`.
//! - [`serve`] — `serve`.
//! - [`spec`] — `spec validate` and `spec score`.
//! - [`tasks`] — `tasks validate`, `tasks render`, `tasks score` and `tasks run`.

pub mod cache;
pub mod compare;
pub mod config;
pub mod fep;
pub mod merge;
pub mod report;
pub mod run;
pub mod serve;
pub mod spec;
pub mod tasks;
