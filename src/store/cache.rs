//! The evaluator-result cache: every successful result (score, side information, spec verdict)
//! under its call key, in one SQLite database (`results.sqlite3` in the cache directory) in WAL
//! mode with a busy timeout, so several evalctl processes can share it. Errors are never stored.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::Fatal;
use crate::runner::key::CallKey;

/// The database file inside the cache directory.
const DATABASE: &str = "results.sqlite3";
/// How long a write waits for another process holding the database.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// One stored result.
#[derive(Debug, Clone)]
pub struct CachedResult {
    /// The score.
    pub score: f64,
    /// The evaluator's other keys.
    pub side_info: Map<String, Value>,
    /// An evaluation spec's pass verdict.
    pub passed: Option<bool>,
}

/// An open cache.
pub struct Cache {
    connection: Mutex<Connection>,
}

/// `evalctl cache stats`.
#[derive(Debug, Clone, Serialize)]
pub struct CacheStats {
    /// The database file.
    pub path: PathBuf,
    /// Stored results.
    pub entries: u64,
    /// Size of the database files on disk.
    pub bytes: u64,
}

fn failed(dir: &Path, err: impl std::fmt::Display) -> anyhow::Error {
    Fatal::Internal(format!("cache {}: {err}", dir.join(DATABASE).display())).into()
}

impl Cache {
    /// Open (creating it and its directory if need be) the cache in `dir`.
    pub fn open(dir: &Path) -> anyhow::Result<Cache> {
        std::fs::create_dir_all(dir).map_err(|err| failed(dir, err))?;
        let connection = Connection::open(dir.join(DATABASE)).map_err(|err| failed(dir, err))?;
        connection
            .busy_timeout(BUSY_TIMEOUT)
            .and_then(|()| {
                connection.pragma_update(None, "journal_mode", "WAL")?;
                connection.pragma_update(None, "synchronous", "NORMAL")?;
                connection.execute_batch(
                    "CREATE TABLE IF NOT EXISTS results (
                         key BLOB PRIMARY KEY,
                         score REAL NOT NULL,
                         side_info TEXT NOT NULL,
                         passed INTEGER
                     ) WITHOUT ROWID;",
                )
            })
            .map_err(|err| failed(dir, err))?;
        Ok(Cache {
            connection: Mutex::new(connection),
        })
    }

    /// The stored result of `key`, if any. A read that fails counts as a miss.
    pub fn get(&self, key: &CallKey) -> Option<CachedResult> {
        let connection = self.connection.lock().ok()?;
        let mut statement = connection
            .prepare_cached("SELECT score, side_info, passed FROM results WHERE key = ?1")
            .ok()?;
        let row = statement
            .query_row(params![key.as_bytes()], |row| {
                Ok((
                    row.get::<_, f64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, Option<bool>>(2)?,
                ))
            })
            .optional()
            .ok()??;
        let (score, side_info, passed) = row;
        let Ok(Value::Object(side_info)) = serde_json::from_str(&side_info) else {
            return None;
        };
        Some(CachedResult {
            score,
            side_info,
            passed,
        })
    }

    /// Store the successful result of `key`. A write that fails is dropped: the cache only
    /// saves calls, it never fails a run.
    pub fn put(&self, key: &CallKey, result: &CachedResult) {
        let Ok(connection) = self.connection.lock() else {
            return;
        };
        let side_info = Value::Object(result.side_info.clone()).to_string();
        let insert = connection.prepare_cached(
            "INSERT OR REPLACE INTO results (key, score, side_info, passed) VALUES (?1, ?2, ?3, ?4)",
        );
        if let Ok(mut statement) = insert {
            let row = params![key.as_bytes(), result.score, side_info, result.passed];
            let _ = statement.execute(row);
        }
    }

    /// What the cache in `dir` holds (nothing, when there is none yet: it is not created).
    pub fn stats(dir: &Path) -> anyhow::Result<CacheStats> {
        let path = dir.join(DATABASE);
        let entries = if path.exists() {
            let cache = Cache::open(dir)?;
            let connection = cache.connection.lock().map_err(|err| failed(dir, err))?;
            connection
                .query_row("SELECT count(*) FROM results", [], |row| row.get(0))
                .map_err(|err| failed(dir, err))?
        } else {
            0
        };
        let size = |name: &str| std::fs::metadata(dir.join(name)).map_or(0, |meta| meta.len());
        let bytes = ["", "-wal", "-shm"]
            .iter()
            .map(|suffix| size(&format!("{DATABASE}{suffix}")))
            .sum();
        Ok(CacheStats {
            path,
            entries,
            bytes,
        })
    }

    /// Remove every stored result of the cache in `dir`; returns how many there were.
    pub fn clear(dir: &Path) -> anyhow::Result<u64> {
        if !dir.join(DATABASE).exists() {
            return Ok(0);
        }
        let cache = Cache::open(dir)?;
        let connection = cache.connection.lock().map_err(|err| failed(dir, err))?;
        let removed = connection
            .execute("DELETE FROM results", [])
            .map_err(|err| failed(dir, err))?;
        connection
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE); VACUUM;")
            .map_err(|err| failed(dir, err))?;
        Ok(removed as u64)
    }
}
