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
    /// How many results (0 for a damaged database, whose entries cannot be counted).
    removed: u64,
    /// The database was damaged and was removed whole.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    damaged: bool,
}

impl Document for Cleared {
    fn text(&self) -> Styled {
        Styled::from(if self.damaged {
            "removed the damaged cache database (its results could not be counted)\n".to_string()
        } else {
            format!("removed {} cached results\n", self.removed)
        })
    }
}

/// `evalctl cache clear`: remove every result cached in `dir`.
pub fn clear(dir: &Path, reporter: Reporter) -> anyhow::Result<Exit> {
    let cleared = match Cache::clear(dir)? {
        Some(removed) => Cleared {
            removed,
            damaged: false,
        },
        None => Cleared {
            removed: 0,
            damaged: true,
        },
    };
    print(&cleared, reporter)?;
    Ok(Exit::Success)
}
