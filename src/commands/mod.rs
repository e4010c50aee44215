//! The command layer: one file per command, each wiring the shared input, the domain and the
//! output, and picking the exit code. Domain logic stays in its domain folder.
//!
//! - [`compare`]: `compare`.
//! - [`fep`]: `fep evaluate`.
//! - [`merge`]: `summarize` and `merge`.
//! - [`run`]: `run` and `preflight`.
//! - [`serve`]: `serve`.
//! - [`spec`]: `spec validate` and `spec score`.
//! - [`tasks`]: `tasks validate`, `tasks render`, `tasks score` and `tasks run`.

pub mod compare;
pub mod fep;
pub mod merge;
pub mod run;
pub mod serve;
pub mod spec;
pub mod tasks;
