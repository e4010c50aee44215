//! Flags of `evalctl cache stats|clear`: which cache, found as `run --cache` finds it.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::commands;
use crate::exit::Exit;
use crate::report::Reporter;
use crate::store::default_cache_dir;

/// `evalctl cache ...`
#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// How many results the cache holds and its size on disk.
    Stats(CacheDir),
    /// Remove every cached result.
    Clear(CacheDir),
}

/// Which cache: the one `run --cache` uses, found the same way.
#[derive(Debug, Args)]
pub struct CacheDir {
    /// The cache directory (else EVALCTL_CACHE_DIR, else cache_dir in evalctl.toml, else
    /// $XDG_CACHE_HOME/evalctl, else ~/.cache/evalctl).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    #[command(flatten)]
    pub config: super::config::ConfigArgs,
}

impl CacheDir {
    fn resolve(self) -> anyhow::Result<PathBuf> {
        self.cache_dir.map_or_else(default_cache_dir, Ok)
    }
}

impl CacheCommand {
    /// Run the subcommand.
    pub fn execute(self, reporter: Reporter) -> anyhow::Result<Exit> {
        match self {
            CacheCommand::Stats(dir) => commands::cache::stats(&dir.resolve()?, reporter),
            CacheCommand::Clear(dir) => commands::cache::clear(&dir.resolve()?, reporter),
        }
    }
}
