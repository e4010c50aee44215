//! `evalctl cache stats|clear`: what the evaluator-result cache of `run --cache` holds, and
//! emptying it.

use std::path::Path;

use crate::exit::Exit;
use crate::report::{print_stdout, Format, Reporter};
use crate::store::Cache;

/// `evalctl cache stats`: how many results the cache in `dir` holds and its size on disk.
pub fn stats(dir: &Path, reporter: Reporter) -> anyhow::Result<Exit> {
    let stats = Cache::stats(dir)?;
    let document = match reporter.format {
        Format::Json => serde_json::to_string_pretty(&stats)? + "\n",
        Format::Text => format!(
            "cache: {}\nentries: {}\nsize: {} bytes\n",
            stats.path.display(),
            stats.entries,
            stats.bytes
        ),
    };
    print_stdout(&document)?;
    Ok(Exit::Success)
}

/// `evalctl cache clear`: remove every result cached in `dir`.
pub fn clear(dir: &Path, reporter: Reporter) -> anyhow::Result<Exit> {
    let removed = Cache::clear(dir)?;
    let document = match reporter.format {
        Format::Json => {
            serde_json::to_string_pretty(&serde_json::json!({"removed": removed}))? + "\n"
        }
        Format::Text => format!("removed {removed} cached results\n"),
    };
    print_stdout(&document)?;
    Ok(Exit::Success)
}
