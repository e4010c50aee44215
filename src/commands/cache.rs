//! `evalctl cache stats|clear`: what the evaluator-result cache of `run --cache` holds, and
//! emptying it.

use std::path::Path;

use crate::exit::Exit;
use serde::Serialize;

use crate::report::{print, Document, Reporter, Styled};
use crate::store::{Cache, CacheStats};

/// `evalctl cache stats`: how many results the cache in `dir` holds and its size on disk.
pub fn stats(dir: &Path, reporter: Reporter) -> anyhow::Result<Exit> {
    print(&Cache::stats(dir)?, reporter)?;
    Ok(Exit::Success)
}

/// The cache's folder, entries and size.
impl Document for CacheStats {
    fn text(&self) -> Styled {
        Styled::from(format!(
            "cache: {}\nentries: {}\nsize: {} bytes\n",
            self.path.display(),
            self.entries,
            self.bytes
        ))
    }
}

/// What `cache clear` removed.
#[derive(Serialize)]
struct Cleared {
    removed: u64,
}

impl Document for Cleared {
    fn text(&self) -> Styled {
        Styled::from(format!("removed {} cached results\n", self.removed))
    }
}

/// `evalctl cache clear`: remove every result cached in `dir`.
pub fn clear(dir: &Path, reporter: Reporter) -> anyhow::Result<Exit> {
    let removed = Cache::clear(dir)?;
    print(&Cleared { removed }, reporter)?;
    Ok(Exit::Success)
}
