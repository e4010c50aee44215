//! `evalctl cache stats|clear`: what the evaluator-result cache of `run --cache` holds, and
//! emptying it.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::exit::Exit;
use crate::report::{print_stdout, Format, Reporter};
use crate::store::{default_cache_dir, Cache};

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
        let document = match self {
            CacheCommand::Stats(dir) => {
                let stats = Cache::stats(&dir.resolve()?)?;
                match reporter.format {
                    Format::Json => serde_json::to_string_pretty(&stats)? + "\n",
                    Format::Text => format!(
                        "cache: {}\nentries: {}\nsize: {} bytes\n",
                        stats.path.display(),
                        stats.entries,
                        stats.bytes
                    ),
                }
            }
            CacheCommand::Clear(dir) => {
                let dir = dir.resolve()?;
                let removed = Cache::clear(&dir)?;
                match reporter.format {
                    Format::Json => {
                        serde_json::to_string_pretty(&serde_json::json!({"removed": removed}))?
                            + "\n"
                    }
                    Format::Text => format!("removed {removed} cached results\n"),
                }
            }
        };
        print_stdout(&document)?;
        Ok(Exit::Success)
    }
}
