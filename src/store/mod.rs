//! What evalctl keeps between runs: the evaluator-result cache (`run --cache`, `evalctl cache`),
//! and the key of a call its results are kept under.

mod cache;
mod key;

pub use cache::{database, Cache, CacheStats, CachedCompletion, CachedResult, Table};
pub use key::CallKey;

use std::path::{Path, PathBuf};

use crate::error::bad_flag;

/// Whether `err` says the file SQLite opened is no database (a dataset named by mistake): the
/// user's to fix (exit 2), not evalctl failing.
pub fn is_not_a_database(err: &rusqlite::Error) -> bool {
    matches!(
        err,
        rusqlite::Error::SqliteFailure(failure, _)
            if failure.code == rusqlite::ErrorCode::NotADatabase
    )
}

/// The cache directory `--cache` (with `--cache-dir`) names; `None` without `--cache`.
pub fn cache_dir(cache: bool, dir: Option<PathBuf>) -> anyhow::Result<Option<PathBuf>> {
    if !cache {
        return Ok(None);
    }
    dir.map_or_else(default_cache_dir, Ok).map(Some)
}

/// The cache directory when `--cache-dir` is not given: `$XDG_CACHE_HOME/evalctl`, else
/// `~/.cache/evalctl`. A relative `XDG_CACHE_HOME` is ignored, as the XDG Base Directory
/// specification says, so the cache does not move with the working directory.
pub fn default_cache_dir() -> anyhow::Result<PathBuf> {
    let from = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    let absolute = |dir: &std::ffi::OsString| Path::new(dir).is_absolute();
    if let Some(dir) = from("XDG_CACHE_HOME").filter(absolute) {
        return Ok(PathBuf::from(dir).join("evalctl"));
    }
    match from("HOME") {
        Some(home) => Ok(PathBuf::from(home).join(".cache").join("evalctl")),
        None => Err(bad_flag(
            "--cache",
            "neither XDG_CACHE_HOME nor HOME is set: pass --cache-dir DIR",
        )),
    }
}
