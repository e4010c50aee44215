//! The evaluator-result cache: every successful result (score, side information, spec verdict)
//! under its call key, and every `tasks run` completion under its completion key, in one SQLite
//! database (`results.sqlite3` in the cache directory) in WAL
//! mode with a busy timeout, so several evalctl processes can share it. Errors are never stored.
//! Lookups answer on the caller's connection; stores go to a writer thread of their own that
//! commits whatever is queued in one transaction, so a run never waits on a commit. What the
//! cache creates is readable by its owner only (the directory 0700, the database files 0600).

use std::collections::HashSet;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use serde_json::{Map, Value};

use super::CallKey;
use crate::error::{bad_input, Fatal, Problem};
use crate::text::counted;

/// The database file inside the cache directory.
const DATABASE: &str = "results.sqlite3";

/// The cache database of the cache directory `dir`.
pub fn database(dir: &Path) -> std::path::PathBuf {
    dir.join(DATABASE)
}
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

/// How long the writer lets stores gather before it commits them.
const GATHER: Duration = Duration::from_millis(20);
/// The most stores one transaction commits (a long queue is committed in several).
const STORES_PER_COMMIT: usize = 4096;

/// The cache's two tables.
#[derive(Debug, Clone, Copy)]
pub enum Table {
    /// Evaluator results of `run`.
    Results,
    /// Completions of `tasks run`.
    Completions,
}

/// One stored `tasks run` completion.
#[derive(Debug, Clone)]
pub struct CachedCompletion {
    /// The generated text.
    pub text: String,
    /// Its token usage: prompt, completion and total tokens.
    pub tokens: [u64; 3],
    /// The model stopped at its token limit: the text may be cut short.
    pub cut_short: bool,
}

/// What the writer thread stores, or is asked.
enum Store {
    Result(CallKey, CachedResult),
    Completion(CallKey, CachedCompletion),
    /// Remove the results of these keys.
    Forget(Vec<CallKey>),
    /// Answer, once every store queued before has been committed, with the stores that failed.
    Flush(mpsc::SyncSender<Option<StoreFailures>>),
}

/// The stores that failed (a damaged database that reading did not show, a full disk): how
/// many, and the first failure's reason.
#[derive(Debug, Clone)]
struct StoreFailures {
    count: usize,
    first: String,
}

/// An open cache. Dropping it commits every store queued so far.
pub struct Cache {
    /// The cache directory.
    dir: PathBuf,
    connection: Mutex<Connection>,
    /// The keys of this run the cache held when it opened ([`Cache::expect`]); `None`: not
    /// looked up, every lookup asks the database.
    stored: Option<HashSet<CallKey>>,
    stores: Option<Sender<Store>>,
    writer: Option<JoinHandle<()>>,
    /// The keys of the results stored since it opened, for [`Cache::forget_results_stored`].
    results_stored: Mutex<Vec<CallKey>>,
}

/// `evalctl cache stats`.
#[derive(Debug, Clone, Serialize)]
pub struct CacheStats {
    /// The database file.
    pub path: PathBuf,
    /// Stored results and completions.
    pub entries: u64,
    /// Size of the database files on disk.
    pub bytes: u64,
}

fn failed(dir: &Path, err: impl std::fmt::Display) -> anyhow::Error {
    Fatal::Internal(format!("cache {}: {err}", dir.join(DATABASE).display())).into()
}

/// The bad input of a cache directory that cannot be written (a read-only file system, another
/// user's directory) or whose disk refused the database's setup (`refused`, in SQLite's words):
/// nothing was evaluated, and the user chooses another place or no cache.
fn not_writable(dir: &Path, refused: Option<&str>) -> anyhow::Error {
    let (what, way_out) = match refused {
        None => ("the cache directory cannot be written".to_string(), ""),
        Some(reason) => (
            format!(
                "the cache cannot be set up there ({reason}: a full disk, or a file system that \
                 cannot hold SQLite's files)"
            ),
            "free some space, ",
        ),
    };
    bad_input(Problem::new(
        dir.display().to_string(),
        format!(
            "{what}: {way_out}name a writable one with --cache-dir, or run without the cache \
             (leave out --cache, or EVALCTL_CACHE=false)"
        ),
    ))
}

/// Whether the I/O error `err` says a file cannot be written there: `Some(None)` for want of
/// rights, `Some(Some(reason))` for want of room.
fn is_not_writable(err: &std::io::Error) -> Option<Option<String>> {
    use std::io::ErrorKind;
    match err.kind() {
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => Some(None),
        ErrorKind::StorageFull | ErrorKind::FileTooLarge | ErrorKind::QuotaExceeded => {
            Some(Some(crate::text::io_reason(err)))
        }
        _ => None,
    }
}

/// A SQLite error of the cache in `dir`: bad input when its database file is no database, a
/// damaged one (`cache clear` removes that), or one that cannot be written (nor its write-ahead
/// log made beside it).
fn failed_sqlite(dir: &Path, err: rusqlite::Error) -> anyhow::Error {
    let path = dir.join(DATABASE).display().to_string();
    if let rusqlite::Error::SqliteFailure(failure, _) = &err {
        use rusqlite::ErrorCode;
        match failure.code {
            ErrorCode::ReadOnly | ErrorCode::CannotOpen => return not_writable(dir, None),
            ErrorCode::DiskFull => return not_writable(dir, Some(&err.to_string())),
            _ => {}
        }
    }
    if super::is_not_a_database(&err) {
        return bad_input(Problem::new(
            path,
            "is not an evalctl cache (not a SQLite database): remove it, or name another \
             --cache-dir",
        ));
    }
    if is_damaged(&err) {
        return bad_input(Problem::new(
            &path,
            format!(
                "the cache database is damaged ({err}): `evalctl cache clear --cache-dir {}` \
                 removes it, or name another --cache-dir",
                dir.display()
            ),
        ));
    }
    failed(dir, err)
}

/// Whether the SQLite database in `dir` is damaged: its own check says so (a file that is no
/// database at all is not: it may be something else the user keeps there).
fn damaged(dir: &Path) -> bool {
    let checked = Connection::open_with_flags(
        dir.join(DATABASE),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .and_then(|connection| {
        connection.query_row("PRAGMA quick_check", [], |row| row.get::<_, String>(0))
    });
    match checked {
        Ok(verdict) => verdict != "ok",
        Err(err) => is_damaged(&err),
    }
}

/// Whether `err` says the cache's database is damaged (cut short, overwritten in part).
fn is_damaged(err: &rusqlite::Error) -> bool {
    matches!(
        err,
        rusqlite::Error::SqliteFailure(failure, _)
            if failure.code == rusqlite::ErrorCode::DatabaseCorrupt
    )
}

/// How many results and completions the database in `dir` holds, read without writing: a cache
/// that cannot be written is counted too. A database in write-ahead-log mode needs its shared
/// memory file beside it; where that cannot be made (a read-only directory), no other process
/// can write the database either, and it is read as the file it is (`immutable`).
fn count_entries(dir: &Path) -> anyhow::Result<u64> {
    let read_only =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI;
    let count = |uri: String| {
        let connection = Connection::open_with_flags(uri, read_only)?;
        connection.busy_timeout(BUSY_TIMEOUT)?;
        connection.query_row(
            "SELECT (SELECT count(*) FROM results) + (SELECT count(*) FROM completions)",
            [],
            |row| row.get(0),
        )
    };
    // A URI names the file: every byte of its path but letters, digits and `/-._~` is escaped
    // (a path need not be UTF-8).
    let file: String = dir
        .join(DATABASE)
        .as_os_str()
        .as_bytes()
        .iter()
        .map(|&byte| match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'/' | b'-' | b'.' | b'_' | b'~' => {
                char::from(byte).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect();
    match count(format!("file:{file}")) {
        // Which of the two SQLite says depends on what it could not create: the shared memory
        // file (cannot open), or the write-ahead log it would recover (read only).
        Err(rusqlite::Error::SqliteFailure(failure, _))
            if matches!(
                failure.code,
                rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly
            ) =>
        {
            count(format!("file:{file}?immutable=1"))
        }
        counted => counted,
    }
    .map_err(|err| failed_sqlite(dir, err))
}

/// Refuse a `dir` that exists and is not a directory, or whose database path is a directory
/// (bad input): the cache cannot be there, and an empty cache must not be reported at a path
/// that cannot hold one.
fn check_dir(dir: &Path) -> anyhow::Result<()> {
    let database = dir.join(DATABASE);
    let refused = match std::fs::metadata(dir) {
        Ok(metadata) if !metadata.is_dir() => Some((dir, "is not a directory, so it cannot hold")),
        Ok(_) if database.is_dir() => Some((database.as_path(), "is a directory, not")),
        _ => None,
    };
    match refused {
        Some((path, what)) => Err(bad_input(Problem::new(
            path.display().to_string(),
            format!("{what} the cache: remove it, or name another --cache-dir"),
        ))),
        None => Ok(()),
    }
}

/// Open (creating it and its directory if need be, readable by their owner only: SQLite gives
/// its `-wal` and `-shm` files the database's mode) the database in `dir`, in WAL mode, with
/// its table. Several processes may do this at once: a setup that finds the database locked
/// is tried again until [`BUSY_TIMEOUT`] has passed.
fn connect(dir: &Path) -> anyhow::Result<Connection> {
    check_dir(dir)?;
    let path = dir.join(DATABASE);
    crate::owner_only::create_dir_all(dir)
        .and_then(|()| {
            crate::owner_only::file_options()
                .create(true)
                .append(true)
                .open(&path)
        })
        .map_err(|err| match is_not_writable(&err) {
            Some(refused) => not_writable(dir, refused.as_deref()),
            None => failed(dir, crate::text::io_reason(&err)),
        })?;
    // Setting up writes the database, its write-ahead log and its shared-memory file: an I/O
    // error there is the disk's or the file system's refusal (full, past a file size limit, no
    // shared memory), before any call.
    let set_up_failed = |err: rusqlite::Error| match &err {
        rusqlite::Error::SqliteFailure(failure, _)
            if failure.code == rusqlite::ErrorCode::SystemIoFailure =>
        {
            not_writable(dir, Some(&err.to_string()))
        }
        _ => failed_sqlite(dir, err),
    };
    let connection = Connection::open(&path).map_err(set_up_failed)?;
    let set_up = || -> rusqlite::Result<()> {
        connection.busy_timeout(BUSY_TIMEOUT)?;
        connection.pragma_update(None, "journal_mode", "WAL")?;
        connection.pragma_update(None, "synchronous", "NORMAL")?;
        connection.execute_batch(
            "CREATE TABLE IF NOT EXISTS results (
                 key BLOB PRIMARY KEY,
                 score REAL NOT NULL,
                 side_info TEXT NOT NULL,
                 passed INTEGER
             ) WITHOUT ROWID;
             CREATE TABLE IF NOT EXISTS completions (
                 key BLOB PRIMARY KEY,
                 text TEXT NOT NULL,
                 prompt_tokens INTEGER NOT NULL,
                 completion_tokens INTEGER NOT NULL,
                 total_tokens INTEGER NOT NULL
             ) WITHOUT ROWID;
             -- The completions the model stopped at its token limit (a table of its own, so
             -- that a cache an earlier evalctl made keeps its shape).
             CREATE TABLE IF NOT EXISTS cut_short_completions (
                 key BLOB PRIMARY KEY
             ) WITHOUT ROWID;",
        )
    };
    let started = Instant::now();
    loop {
        match set_up() {
            Ok(()) => return Ok(connection),
            // Switching to WAL takes the database whole, without waiting for a busy one.
            Err(rusqlite::Error::SqliteFailure(err, _))
                if matches!(
                    err.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && started.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(err) => return Err(set_up_failed(err)),
        }
    }
}

/// The writer thread: commit each batch of queued stores in one transaction until the cache
/// is dropped. A store that fails is dropped (the cache only saves calls, it never fails a run)
/// and counted, for [`Cache::flush`] to tell.
fn write_stores(connection: Connection, stores: &Receiver<Store>) {
    let mut failures: Option<StoreFailures> = None;
    while let Ok(first) = stores.recv() {
        // Let the stores of the calls finishing now gather: one transaction then writes many
        // (each commit appends pages to the write-ahead log, and a long log is checkpointed).
        std::thread::sleep(GATHER);
        let mut queued: Vec<Store> = std::iter::once(first)
            .chain(stores.try_iter().take(STORES_PER_COMMIT - 1))
            .collect();
        let flushes: Vec<_> = queued
            .extract_if(.., |store| matches!(store, Store::Flush(_)))
            .collect();
        if !queued.is_empty() {
            let batch = queued.len();
            let (mut refused, mut first) = (0, None);
            let committed = connection.unchecked_transaction().and_then(|transaction| {
                for store in queued {
                    if let Err(err) = write_store(&transaction, store) {
                        refused += 1;
                        first.get_or_insert(err.to_string());
                    }
                }
                transaction.commit()
            });
            // A batch that was not committed lost every store it held.
            let lost = match committed {
                Err(err) => Some((batch, first.unwrap_or(err.to_string()))),
                Ok(()) => first.map(|reason| (refused, reason)),
            };
            if let Some((count, reason)) = lost {
                failures
                    .get_or_insert(StoreFailures {
                        count: 0,
                        first: reason,
                    })
                    .count += count;
            }
        }
        for flush in flushes {
            if let Store::Flush(answer) = flush {
                let _ = answer.send(failures.clone());
            }
        }
    }
}

/// Write one store in `transaction` (a flush writes nothing).
fn write_store(transaction: &rusqlite::Transaction<'_>, store: Store) -> rusqlite::Result<()> {
    match store {
        Store::Result(key, result) => transaction
            .prepare_cached(
                "INSERT OR REPLACE INTO results (key, score, side_info, passed) \
                 VALUES (?1, ?2, ?3, ?4)",
            )
            .and_then(|mut insert| {
                let side_info = Value::Object(result.side_info).to_string();
                let row = params![key.as_bytes(), result.score, side_info, result.passed];
                insert.execute(row)
            }),
        Store::Completion(key, completion) => transaction
            .prepare_cached(
                "INSERT OR REPLACE INTO completions (key, text, prompt_tokens, \
                 completion_tokens, total_tokens) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut insert| {
                let [prompt, generated, total] = completion.tokens;
                let row = params![key.as_bytes(), completion.text, prompt, generated, total];
                insert.execute(row)
            })
            .and_then(|_| {
                let mark = match completion.cut_short {
                    true => "INSERT OR REPLACE INTO cut_short_completions (key) VALUES (?1)",
                    false => "DELETE FROM cut_short_completions WHERE key = ?1",
                };
                transaction
                    .prepare_cached(mark)?
                    .execute(params![key.as_bytes()])
            }),
        Store::Forget(keys) => transaction
            .prepare_cached("DELETE FROM results WHERE key = ?1")
            .and_then(|mut delete| {
                (keys.iter()).try_fold(0, |deleted, key| {
                    Ok(deleted + delete.execute(params![key.as_bytes()])?)
                })
            }),
        Store::Flush(_) => Ok(0),
    }
    .map(|_| ())
}

impl Cache {
    /// Open (creating it and its directory if need be) the cache in `dir`.
    pub fn open(dir: &Path) -> anyhow::Result<Cache> {
        let connection = connect(dir)?;
        let writer_connection = connect(dir)?;
        let (stores, queued) = mpsc::channel();
        let writer = std::thread::Builder::new()
            .name("cache writer".into())
            .spawn(move || write_stores(writer_connection, &queued))
            .map_err(|err| failed(dir, err))?;
        Ok(Cache {
            dir: dir.to_path_buf(),
            connection: Mutex::new(connection),
            stored: None,
            stores: Some(stores),
            writer: Some(writer),
            results_stored: Mutex::new(Vec::new()),
        })
    }

    /// Look up, in one read transaction, which of `keys` (a run's calls, or its completions:
    /// `table` names which) the cache holds, so that a lookup of any other key costs no query
    /// (a cold cache then costs a run almost nothing). The lookups read every page a store of
    /// `keys` would write, so a damaged database is found here, before any call: it is bad input
    /// naming the file and `cache clear`. Any other failed lookup leaves every key to its own
    /// query.
    pub fn expect<'a>(
        mut self,
        table: Table,
        keys: impl IntoIterator<Item = &'a CallKey>,
    ) -> anyhow::Result<Cache> {
        let Ok(connection) = self.connection.get_mut() else {
            return Ok(self);
        };
        let looked_up = || -> rusqlite::Result<HashSet<CallKey>> {
            let transaction = connection.transaction()?;
            let query = match table {
                Table::Results => "SELECT 1 FROM results WHERE key = ?1",
                Table::Completions => "SELECT 1 FROM completions WHERE key = ?1",
            };
            let mut exists = transaction.prepare(query)?;
            let mut stored = HashSet::new();
            for key in keys {
                if exists.exists(params![key.as_bytes()])? {
                    stored.insert(*key);
                }
            }
            Ok(stored)
        };
        match looked_up() {
            Ok(stored) => self.stored = Some(stored),
            Err(err) if is_damaged(&err) => return Err(failed_sqlite(&self.dir, err)),
            Err(_) => {}
        }
        Ok(self)
    }

    /// Whether [`Cache::expect`] found `key` stored (so a call for it need not be made).
    pub fn holds(&self, key: &CallKey) -> bool {
        self.stored
            .as_ref()
            .is_some_and(|stored| stored.contains(key))
    }

    /// Whether `key` may be stored: not when [`Cache::expect`] found it missing.
    fn may_hold(&self, key: &CallKey) -> bool {
        self.stored
            .as_ref()
            .is_none_or(|stored| stored.contains(key))
    }

    /// The stored result of `key`, if any. A read that fails counts as a miss.
    pub fn get(&self, key: &CallKey) -> Option<CachedResult> {
        if !self.may_hold(key) {
            return None;
        }
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

    /// Queue the successful result of `key` for the writer thread.
    pub fn put(&self, key: &CallKey, result: CachedResult) {
        if let Ok(mut stored) = self.results_stored.lock() {
            stored.push(*key);
        }
        self.queue(Store::Result(*key, result));
    }

    /// Queue the removal of every result stored since the cache opened (they may answer for
    /// inputs other than those their keys hash); how many.
    pub fn forget_results_stored(&self) -> usize {
        let keys = match self.results_stored.lock() {
            Ok(mut stored) => std::mem::take(&mut *stored),
            Err(_) => Vec::new(),
        };
        let count = keys.len();
        self.queue(Store::Forget(keys));
        count
    }

    /// The stored completion of `key`, if any. A read that fails counts as a miss.
    pub fn get_completion(&self, key: &CallKey) -> Option<CachedCompletion> {
        if !self.may_hold(key) {
            return None;
        }
        let connection = self.connection.lock().ok()?;
        let mut statement = connection
            .prepare_cached(
                "SELECT text, prompt_tokens, completion_tokens, total_tokens, \
                 EXISTS (SELECT 1 FROM cut_short_completions WHERE key = ?1) FROM completions \
                 WHERE key = ?1",
            )
            .ok()?;
        statement
            .query_row(params![key.as_bytes()], |row| {
                Ok(CachedCompletion {
                    text: row.get(0)?,
                    tokens: [row.get(1)?, row.get(2)?, row.get(3)?],
                    cut_short: row.get(4)?,
                })
            })
            .optional()
            .ok()?
    }

    /// Queue the completion of `key` for the writer thread.
    pub fn put_completion(&self, key: &CallKey, completion: CachedCompletion) {
        self.queue(Store::Completion(*key, completion));
    }

    /// Wait until every store queued so far is committed; the warning of those that failed,
    /// if any did (the cache is damaged in a way its reads did not show, or the disk is full):
    /// the run's answers are right, but they were not kept.
    pub fn flush(&self) -> Option<String> {
        let (answer, answered) = mpsc::sync_channel(1);
        self.queue(Store::Flush(answer));
        let failures = answered.recv().ok()??;
        let path = self.dir.join(DATABASE);
        Some(format!(
            "{}: {} could not be stored ({}): the run's answers are right, but the cache did not \
             keep them; if the cache is damaged, `evalctl cache clear --cache-dir {}` removes it",
            path.display(),
            counted(failures.count, "answer", "answers"),
            failures.first,
            self.dir.display()
        ))
    }

    fn queue(&self, store: Store) {
        if let Some(stores) = &self.stores {
            let _ = stores.send(store);
        }
    }

    /// What the cache in `dir` holds (nothing, when there is none yet: it is not created).
    pub fn stats(dir: &Path) -> anyhow::Result<CacheStats> {
        check_dir(dir)?;
        let path = dir.join(DATABASE);
        // An empty file is a cache not set up yet.
        let entries = if std::fs::metadata(&path).is_ok_and(|file| file.len() > 0) {
            count_entries(dir)?
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

    /// Remove every stored result of the cache in `dir`; returns how many there were, or `None`
    /// when its database was damaged and has been removed whole (its entries cannot be counted).
    pub fn clear(dir: &Path) -> anyhow::Result<Option<u64>> {
        check_dir(dir)?;
        if !dir.join(DATABASE).exists() {
            return Ok(Some(0));
        }
        if damaged(dir) {
            for suffix in ["", "-wal", "-shm"] {
                match std::fs::remove_file(dir.join(format!("{DATABASE}{suffix}"))) {
                    Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                        return Err(failed(dir, crate::text::io_reason(&err)))
                    }
                    _ => {}
                }
            }
            return Ok(None);
        }
        let connection = connect(dir)?;
        let removed = ["DELETE FROM results", "DELETE FROM completions"]
            .iter()
            .map(|delete| connection.execute(delete, []))
            .sum::<rusqlite::Result<usize>>()
            .map_err(|err| failed_sqlite(dir, err))?;
        connection
            .execute_batch(
                "DELETE FROM cut_short_completions; PRAGMA wal_checkpoint(TRUNCATE); VACUUM;",
            )
            .map_err(|err| failed_sqlite(dir, err))?;
        Ok(Some(removed as u64))
    }
}

impl Drop for Cache {
    fn drop(&mut self) {
        self.stores.take();
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> CallKey {
        CallKey::parse(&format!("{byte:02x}").repeat(32)).expect("64 hex digits")
    }

    fn result(score: f64) -> CachedResult {
        CachedResult {
            score,
            side_info: Map::new(),
            passed: None,
        }
    }

    #[test]
    fn expected_keys_answer_as_the_database_does_and_stores_land_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path()).unwrap();
        cache.put(&key(1), result(0.5));
        let text = "the answer".to_string();
        cache.put_completion(
            &key(3),
            CachedCompletion {
                text,
                tokens: [1, 2, 3],
                cut_short: true,
            },
        );
        drop(cache); // commits what is queued

        let cache = Cache::open(dir.path())
            .unwrap()
            .expect(Table::Results, &[key(1), key(2)])
            .unwrap();
        assert_eq!(cache.get(&key(1)).map(|hit| hit.score), Some(0.5));
        assert!(cache.get(&key(2)).is_none());
        // A key the run did not expect is not looked up.
        assert!(cache.get_completion(&key(3)).is_none());
        let cache = Cache::open(dir.path()).unwrap();
        let hit = cache.get_completion(&key(3)).unwrap();
        assert_eq!(
            (hit.text.as_str(), hit.tokens, hit.cut_short),
            ("the answer", [1, 2, 3], true)
        );
        // Stored again, not cut short: the mark goes.
        let text = "the whole answer".to_string();
        let whole = CachedCompletion {
            text,
            tokens: [1, 2, 3],
            cut_short: false,
        };
        cache.put_completion(&key(3), whole);
        drop(cache);
        let cache = Cache::open(dir.path()).unwrap();
        assert!(!cache.get_completion(&key(3)).unwrap().cut_short);
        drop(cache);
        assert_eq!(Cache::stats(dir.path()).unwrap().entries, 2);
        assert_eq!(Cache::clear(dir.path()).unwrap(), Some(2));
    }

    #[test]
    fn the_entries_are_counted_in_a_directory_whose_name_is_not_utf8_or_has_uri_characters() {
        use std::ffi::OsStr;
        let dir = tempfile::tempdir().unwrap();
        for name in [&b"cache-\xff"[..], b"50% ?a#b c"] {
            let cache_dir = dir.path().join(OsStr::from_bytes(name));
            let cache = Cache::open(&cache_dir).unwrap();
            cache.put(&key(1), result(0.5));
            drop(cache);
            assert_eq!(count_entries(&cache_dir).unwrap(), 1, "{cache_dir:?}");
        }
    }
}
