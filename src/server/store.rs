//! Where `serve` keeps its EvaluationRunResults: an embedded SQLite database (WAL), so that
//! `GET /evaluations/{id}` answers after a restart.
//!
//! Results are written behind the answers: an insert is queued and held in memory until it is
//! committed, so the request that made it is answered without waiting for the disk and a read
//! finds it at once (in memory, then in the database). One thread owns the writing connection
//! and commits whatever inserts are waiting in one transaction (group commit: many small
//! evaluations per commit under load). The queue holds at most [`QUEUED_BYTES`] of documents;
//! past that an insert waits for room. While commits fail, inserts wait for their own commit and
//! report its failure; the results answered before a failure was known are named in a warning.
//! Reads go through a second connection. `--retain DAYS` prunes results older than that at
//! startup and hourly. Dropping the store commits everything queued and closes it.
//!
//! Documents are stored compressed (zstd, level 1) against a built-in dictionary: a typical
//! EvaluationRunResult (`store_dictionary.json`), whose keys and shapes every document repeats.
//! A 1-test-case result of about 940 bytes is stored in about 220 (420 without the dictionary),
//! so the disk, the writes and the syncs behind each answer shrink with it. Documents stored by
//! an older evalctl, uncompressed or compressed without the dictionary, are read as they are.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use rusqlite::{params, Connection, OptionalExtension};
use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};

use crate::error::Fatal;
use crate::report::Reporter;

/// How often results older than `--retain` are pruned while serving.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// The most inserts committed in one transaction.
const MAX_BATCH: usize = 4096;

/// How long the writer lets inserts gather after the first before committing them: one wake-up
/// and one commit for many results under load, in bursts small enough not to hold up the
/// request workers it shares the cores with (25 ms raised serve's p99 latency by a millisecond).
const GATHER: Duration = Duration::from_millis(5);

/// The most document bytes queued and not yet committed (a larger document takes all of it).
const QUEUED_BYTES: u32 = 64 << 20;

/// One result waiting to be written; `done` hears whether it was committed (when the request
/// `waits` for that), and `_room` frees its share of the queue once it is.
struct Insert {
    evaluation_id: String,
    document: Bytes,
    waits: bool,
    done: oneshot::Sender<Result<(), String>>,
    _room: OwnedSemaphorePermit,
}

/// The results queued and not yet committed, by evaluation id.
type Queued = Mutex<HashMap<String, Bytes>>;

/// The open database.
pub struct Store {
    inserts: Option<mpsc::Sender<Insert>>,
    writer: Option<JoinHandle<()>>,
    reader: Mutex<Connection>,
    queued: Arc<Queued>,
    room: Arc<Semaphore>,
    failing: Arc<AtomicBool>,
}

impl Store {
    /// Open (creating it and its folder when needed) the database at `path`; results older than
    /// `retain` are pruned now and hourly. Commit failures are warned about through `reporter`.
    pub fn open(
        path: &Path,
        retain: Option<Duration>,
        reporter: Reporter,
    ) -> anyhow::Result<Store> {
        if let Some(folder) = path
            .parent()
            .filter(|folder| !folder.as_os_str().is_empty())
        {
            std::fs::create_dir_all(folder)
                .map_err(|err| db_error(path, format!("cannot create its folder: {err}")))?;
        }
        let writing = open_connection(path)?;
        // Checkpoints stay at SQLite's default of every 1,000 WAL pages (4 MB): each copies
        // the pages to the database and syncs both files, and on a 2-core machine a rarer,
        // larger one (10,000 pages) stalled the request workers long enough to raise p99
        // latency under load from about 5 ms to 20. A 32 MB page cache keeps the indexes' pages.
        writing
            .execute_batch("PRAGMA cache_size = -32768;")
            .map_err(|err| db_error(path, err))?;
        writing
            .execute_batch(
                "CREATE TABLE IF NOT EXISTS evaluations (
                     evaluation_id TEXT PRIMARY KEY,
                     created_at INTEGER NOT NULL,
                     document BLOB NOT NULL
                 );
                 CREATE INDEX IF NOT EXISTS evaluations_created_at ON evaluations (created_at);",
            )
            .map_err(|err| db_error(path, err))?;
        if let Some(retain) = retain {
            prune(&writing, retain).map_err(|err| db_error(path, err))?;
        }
        let reader = open_connection(path)?;
        let (inserts, queue) = mpsc::channel();
        let queued = Arc::new(Queued::default());
        let failing = Arc::new(AtomicBool::new(false));
        let writer = {
            let writer = Writer {
                connection: writing,
                compressor: compressor()
                    .map_err(|err| db_error(path, format!("cannot start compressing: {err}")))?,
                queued: Arc::clone(&queued),
                failing: Arc::clone(&failing),
                retain,
                reporter,
            };
            std::thread::Builder::new()
                .name("evalctl-store".into())
                .spawn(move || writer.run(&queue))
                .map_err(|err| {
                    Fatal::Internal(format!("cannot start the database writer: {err}"))
                })?
        };
        Ok(Store {
            inserts: Some(inserts),
            writer: Some(writer),
            reader: Mutex::new(reader),
            queued,
            room: Arc::new(Semaphore::new(QUEUED_BYTES as usize)),
            failing,
        })
    }

    /// Store `document` under `evaluation_id`: readable at once, committed soon after. Waits
    /// while the queue is full, and for the commit itself while commits are failing (whose
    /// reason it returns).
    pub async fn insert(&self, evaluation_id: String, document: Bytes) -> Result<(), String> {
        let share = u32::try_from(document.len()).map_or(QUEUED_BYTES, |len| len.min(QUEUED_BYTES));
        let room = Arc::clone(&self.room)
            .acquire_many_owned(share)
            .await
            .map_err(|_| WRITER_STOPPED.to_string())?;
        let (done, committed) = oneshot::channel();
        let waits = self.failing.load(Ordering::Acquire);
        lock(&self.queued).insert(evaluation_id.clone(), document.clone());
        let insert = Insert {
            evaluation_id,
            document,
            waits,
            done,
            _room: room,
        };
        if let Some(Err(mpsc::SendError(insert))) = self.inserts.as_ref().map(|tx| tx.send(insert))
        {
            lock(&self.queued).remove(&insert.evaluation_id);
            return Err(WRITER_STOPPED.into());
        }
        if !waits {
            return Ok(());
        }
        committed
            .await
            .unwrap_or_else(|_| Err(WRITER_STOPPED.into()))
    }

    /// The stored document of `evaluation_id`, if any (blocking: call it off the async workers).
    pub fn get(&self, evaluation_id: &str) -> Result<Option<Bytes>, String> {
        // A result leaves the queue only after its commit, so looking here first misses none.
        if let Some(document) = lock(&self.queued).get(evaluation_id) {
            return Ok(Some(document.clone()));
        }
        let reader = self
            .reader
            .lock()
            .map_err(|_| "the database reader failed earlier".to_string())?;
        reader
            .prepare_cached("SELECT document FROM evaluations WHERE evaluation_id = ?1")
            .and_then(|mut select| {
                select
                    .query_row(params![evaluation_id], |row| row.get::<_, Vec<u8>>(0))
                    .optional()
            })
            .map_err(|err| err.to_string())?
            .map(stored_document)
            .transpose()
    }
}

const WRITER_STOPPED: &str = "the database writer has stopped";

/// The queue's map; a panic elsewhere while it was held leaves it usable (every change to it is
/// one map call).
fn lock(queued: &Queued) -> MutexGuard<'_, HashMap<String, Bytes>> {
    queued
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Drop for Store {
    /// Commit what is queued and close the database.
    fn drop(&mut self) {
        self.inserts = None;
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

fn open_connection(path: &Path) -> anyhow::Result<Connection> {
    let connection = Connection::open(path).map_err(|err| db_error(path, err))?;
    connection
        .execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;",
        )
        .map_err(|err| db_error(path, err))?;
    Ok(connection)
}

/// The thread that owns the writing connection.
struct Writer {
    connection: Connection,
    compressor: zstd::bulk::Compressor<'static>,
    queued: Arc<Queued>,
    failing: Arc<AtomicBool>,
    retain: Option<Duration>,
    reporter: Reporter,
}

impl Writer {
    /// Commit batches of inserts until every sender is gone; prune hourly when retaining.
    fn run(mut self, queue: &mpsc::Receiver<Insert>) {
        let mut next_prune = SystemTime::now() + PRUNE_EVERY;
        loop {
            let first = match queue.recv_timeout(PRUNE_EVERY) {
                Ok(insert) => insert,
                Err(RecvTimeoutError::Timeout) => {
                    // A failed prune is tried again at the next one.
                    if let Some(retain) = self.retain {
                        let _ = prune(&self.connection, retain);
                    }
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => return,
            };
            std::thread::sleep(GATHER);
            let mut batch = vec![first];
            batch.extend(queue.try_iter().take(MAX_BATCH - 1));
            self.commit(batch);
            if let Some(retain) = self.retain.filter(|_| SystemTime::now() >= next_prune) {
                let _ = prune(&self.connection, retain);
                next_prune = SystemTime::now() + PRUNE_EVERY;
            }
        }
    }

    /// Commit `batch`, then take it off the queue and tell each insert how it went.
    fn commit(&mut self, batch: Vec<Insert>) {
        let outcome = commit(&mut self.connection, &mut self.compressor, &batch);
        self.failing.store(outcome.is_err(), Ordering::Release);
        {
            let mut queued = lock(&self.queued);
            for insert in &batch {
                queued.remove(&insert.evaluation_id);
            }
        }
        if let Err(reason) = &outcome {
            let answered: Vec<&str> = batch
                .iter()
                .filter(|insert| !insert.waits)
                .map(|insert| insert.evaluation_id.as_str())
                .collect();
            if !answered.is_empty() {
                self.reporter.warning(format!(
                    "the database could not store {} answered evaluation{} ({}): {reason}",
                    answered.len(),
                    if answered.len() == 1 { "" } else { "s" },
                    answered.join(", ")
                ));
            }
        }
        for insert in batch {
            let _ = insert.done.send(outcome.clone());
        }
    }
}

fn commit(
    connection: &mut Connection,
    compressor: &mut zstd::bulk::Compressor<'static>,
    batch: &[Insert],
) -> Result<(), String> {
    let transaction = connection.transaction().map_err(|err| err.to_string())?;
    {
        let mut statement = transaction
            .prepare_cached(
                "INSERT OR REPLACE INTO evaluations (evaluation_id, created_at, document) \
                 VALUES (?1, ?2, ?3)",
            )
            .map_err(|err| err.to_string())?;
        let now = unix_seconds(SystemTime::now());
        let mut stored = Vec::new();
        for insert in batch {
            let frame = compressor
                .compress(&insert.document)
                .map_err(|err| format!("cannot compress a result: {err}"))?;
            stored.clear();
            stored.push(DICTIONARY_V1);
            stored.extend_from_slice(&frame);
            statement
                .execute(params![insert.evaluation_id, now, stored])
                .map_err(|err| err.to_string())?;
        }
    }
    transaction.commit().map_err(|err| err.to_string())
}

/// The zstd level documents are stored at: the fastest of the standard levels.
const COMPRESSION_LEVEL: i32 = 1;

/// The dictionary documents are compressed against. Stored documents depend on these exact
/// bytes: a better dictionary must come as a new version byte beside [`DICTIONARY_V1`], with
/// this one kept for reading.
const DICTIONARY: &[u8] = include_bytes!("store_dictionary.json");

/// The first byte of a document stored as a zstd frame compressed against [`DICTIONARY`]
/// (a JSON document starts with `{`, a zstd frame with [`ZSTD_MAGIC`]).
const DICTIONARY_V1: u8 = 0x01;

/// The first bytes of every zstd frame: how an older evalctl stored documents, without the
/// dictionary.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// The writer's compressor: [`COMPRESSION_LEVEL`] against [`DICTIONARY`], each frame with a
/// checksum (4 bytes), so that a document that does not decompress to what was stored, whatever
/// the cause, is an error and not wrong JSON.
fn compressor() -> std::io::Result<zstd::bulk::Compressor<'static>> {
    let mut compressor = zstd::bulk::Compressor::with_dictionary(COMPRESSION_LEVEL, DICTIONARY)?;
    compressor.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))?;
    Ok(compressor)
}

/// A stored document as JSON: decompressed (against the dictionary when it names it), or as it
/// is when stored uncompressed.
fn stored_document(stored: Vec<u8>) -> Result<Bytes, String> {
    // The dictionary digested once for every read.
    static PREPARED: std::sync::LazyLock<zstd::dict::DecoderDictionary<'static>> =
        std::sync::LazyLock::new(|| zstd::dict::DecoderDictionary::copy(DICTIONARY));
    let decoded = match stored.split_first() {
        Some((&DICTIONARY_V1, frame)) => zstd::stream::Decoder::with_prepared_dictionary(
            frame, &PREPARED,
        )
        .and_then(|mut decoder| {
            let mut document = Vec::new();
            std::io::Read::read_to_end(&mut decoder, &mut document).map(|_| document)
        }),
        _ if stored.starts_with(&ZSTD_MAGIC) => zstd::stream::decode_all(stored.as_slice()),
        _ => return Ok(Bytes::from(stored)),
    };
    decoded
        .map(Bytes::from)
        .map_err(|err| format!("cannot decompress the stored result: {err}"))
}

fn prune(connection: &Connection, retain: Duration) -> rusqlite::Result<usize> {
    let cutoff =
        unix_seconds(SystemTime::now()) - i64::try_from(retain.as_secs()).unwrap_or(i64::MAX);
    connection.execute(
        "DELETE FROM evaluations WHERE created_at < ?1",
        params![cutoff],
    )
}

fn unix_seconds(at: SystemTime) -> i64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |since| {
        i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
    })
}

fn db_error(path: &Path, reason: impl std::fmt::Display) -> anyhow::Error {
    Fatal::Internal(format!("--db {}: {reason}", path.display())).into()
}

/// The default database: `$XDG_DATA_HOME/evalctl/serve.db`, else
/// `~/.local/share/evalctl/serve.db`, else `serve.db` in the current folder.
pub fn default_path() -> PathBuf {
    let data_home = std::env::var_os("XDG_DATA_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|home| !home.is_empty())
                .map(|home| PathBuf::from(home).join(".local/share"))
        });
    match data_home {
        Some(dir) => dir.join("evalctl").join("serve.db"),
        None => PathBuf::from("serve.db"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dictionary_is_the_one_documents_were_stored_against() {
        // Every document stored with `DICTIONARY_V1` needs these exact bytes to be read: a
        // changed dictionary must come as a new version (see `DICTIONARY`).
        use sha2::{Digest, Sha256};
        let digest: String = Sha256::digest(DICTIONARY)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        assert_eq!(
            digest,
            "56f5d40dee778c7e3a81bae2136f770a1fdb4fefe43a11d15da0433b044dcdfe"
        );
    }

    #[test]
    fn a_document_that_does_not_match_its_checksum_is_an_error() {
        let mut stored = vec![DICTIONARY_V1];
        stored.extend(compressor().unwrap().compress(b"{\"ok\":true}").unwrap());
        assert_eq!(
            stored_document(stored.clone()).unwrap(),
            &b"{\"ok\":true}"[..]
        );
        let last = stored.len() - 1;
        stored[last] ^= 0xFF;
        let err = stored_document(stored).unwrap_err();
        assert!(
            err.starts_with("cannot decompress the stored result: "),
            "{err}"
        );
    }

    #[test]
    fn a_document_stored_against_the_first_dictionary_is_read_back() {
        // Compressed by the zstd command line against `store_dictionary.json` as first shipped:
        // a changed dictionary would no longer read what databases already hold.
        let frame = "28b52ffd205acd010014027b612d396234612d376264622d613064612d3161353937336531\
                     326162655b5d7d07008465422b35f8b1067d6280c0e01c71104c21c415";
        let mut stored = vec![DICTIONARY_V1];
        stored.extend(
            (0..frame.len())
                .step_by(2)
                .map(|at| u8::from_str_radix(&frame[at..at + 2], 16).unwrap()),
        );
        assert_eq!(
            stored_document(stored).unwrap(),
            &br#"{"evaluation_id":"01a20aea-9b4a-7bdb-a0da-1a5973e12abe","status":"completed","results":[]}"#[..]
        );
    }

    #[test]
    fn a_committed_result_is_read_back_and_pruning_keeps_recent_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/serve.db");
        let reporter = Reporter::new(None, crate::report::ColorWhen::Never);
        let store = Store::open(&path, None, reporter).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let inserted = runtime.block_on(store.insert("a".into(), Bytes::from_static(b"{\"x\":1}")));
        assert_eq!(inserted, Ok(()));
        assert_eq!(store.get("a").unwrap().as_deref(), Some(&b"{\"x\":1}"[..]));
        assert_eq!(store.get("b").unwrap(), None);
        drop(store);
        let reopened = Store::open(&path, Some(Duration::from_secs(86_400)), reporter).unwrap();
        assert_eq!(
            reopened.get("a").unwrap().as_deref(),
            Some(&b"{\"x\":1}"[..]),
            "read back from the database, decompressed"
        );
        let connection = Connection::open(&path).unwrap();
        let stored: Vec<u8> = connection
            .query_row("SELECT document FROM evaluations", [], |row| row.get(0))
            .unwrap();
        assert_eq!(
            stored[0], DICTIONARY_V1,
            "stored compressed against the dictionary"
        );
        // Results an older evalctl stored, uncompressed or compressed without the dictionary,
        // are read as they were.
        let plain_frame = zstd::bulk::compress(b"{\"z\":3}", COMPRESSION_LEVEL).unwrap();
        assert!(plain_frame.starts_with(&ZSTD_MAGIC));
        connection
            .execute(
                "INSERT INTO evaluations VALUES ('old', 0, CAST('{\"y\":2}' AS BLOB)), \
                 ('older', 0, ?1)",
                params![plain_frame],
            )
            .unwrap();
        assert_eq!(
            reopened.get("old").unwrap().as_deref(),
            Some(&b"{\"y\":2}"[..])
        );
        assert_eq!(
            reopened.get("older").unwrap().as_deref(),
            Some(&b"{\"z\":3}"[..])
        );
        connection
            .execute(
                "DELETE FROM evaluations WHERE evaluation_id IN ('old', 'older')",
                [],
            )
            .unwrap();
        assert_eq!(prune(&connection, Duration::ZERO).unwrap(), 0);
        connection
            .execute("UPDATE evaluations SET created_at = 0", [])
            .unwrap();
        assert_eq!(prune(&connection, Duration::from_secs(86_400)).unwrap(), 1);
    }
}
