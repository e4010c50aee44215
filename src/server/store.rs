//! Where `serve` keeps its EvaluationRunResults: an embedded SQLite database (WAL), so that
//! `GET /evaluations/{id}` answers after a restart.
//!
//! An insert is queued, readable at once (from memory, then from the database), and returns once
//! it is committed, or with the reason it could not be: a request is answered only with a result
//! that is stored. One thread owns the writing connection and commits whatever inserts are
//! waiting in one transaction (group commit: the inserts that arrive during a commit go together
//! in the next, so many small evaluations share one under load). The queue holds at most
//! [`QUEUED_BYTES`] of documents; past that an insert waits for room. Reads go through a second
//! connection. `--retain DAYS` prunes results older than that at startup and hourly. Dropping
//! the store commits everything queued and closes it. The database, and the WAL and shared-memory
//! files SQLite creates beside it with the same permissions, are readable by their owner only.
//!
//! Documents are stored compressed (zstd, level 1) against a built-in dictionary: a typical
//! EvaluationRunResult (`store_dictionary.json`), whose keys and shapes every document repeats.
//! A 1-test-case result of about 940 bytes is stored in about 220 (420 without the dictionary),
//! so the disk, the writes and the syncs behind each answer shrink with it. Documents stored by
//! an older evalctl, uncompressed or compressed without the dictionary, are read as they are.

use std::collections::HashMap;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use rusqlite::{params, Connection, OptionalExtension};
use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};

use crate::error::Fatal;

/// How often results older than `--retain` are pruned while serving.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// The most inserts committed in one transaction.
const MAX_BATCH: usize = 4096;

/// The most document bytes queued and not yet committed (a larger document takes all of it).
const QUEUED_BYTES: u32 = 64 << 20;

/// One result waiting to be written; `done` hears whether it was committed, and `_room` frees
/// its share of the queue once it is.
struct Insert {
    evaluation_id: String,
    document: Bytes,
    done: oneshot::Sender<Result<(), String>>,
    _room: OwnedSemaphorePermit,
}

/// The results queued and not yet committed, by evaluation id.
type Queued = Mutex<HashMap<String, Bytes>>;

/// The open database.
pub struct Store {
    inserts: Option<mpsc::Sender<Insert>>,
    writer: Option<JoinHandle<()>>,
    checkpointer: Option<JoinHandle<()>>,
    reader: Mutex<Connection>,
    queued: Arc<Queued>,
    room: Arc<Semaphore>,
}

impl Store {
    /// Open (creating it and its folder when needed, for their owner only) the database at
    /// `path`; results older than `retain` are pruned now and hourly.
    pub fn open(path: &Path, retain: Option<Duration>) -> anyhow::Result<Store> {
        if let Some(folder) = path
            .parent()
            .filter(|folder| !folder.as_os_str().is_empty())
        {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(folder)
                .map_err(|err| db_error(path, format!("cannot create its folder: {err}")))?;
        }
        // Created here, readable by the owner only: SQLite gives its WAL and shared-memory files
        // the database's permissions.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(_) => {}
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(db_error(path, format!("cannot create it: {err}"))),
        }
        let writing = open_connection(path)?;
        // A commit held back by a checkpoint's restart retries every 200 µs, not after SQLite's
        // backoff of 5, 10, 15 ms sleeps: the answers waiting for it wait no longer than the
        // restart.
        writing
            .busy_handler(Some(retry_soon))
            .map_err(|err| db_error(path, err))?;
        // Answers wait for their commit, so the writer does not checkpoint (a checkpoint syncs
        // the database, about 10 ms on a virtual machine, which every waiting answer would
        // wait for): a checkpointer thread does, mostly beside the commits (see [`checkpoint`]).
        // A 32 MB page cache keeps the indexes' pages.
        writing
            .execute_batch("PRAGMA cache_size = -32768; PRAGMA wal_autocheckpoint = 0;")
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
            .map_err(|err| sqlite_error(path, err))?;
        if let Some(retain) = retain {
            prune(&writing, retain).map_err(|err| db_error(path, err))?;
        }
        let reader = open_connection(path)?;
        let checkpointing = open_connection(path)?;
        // The database file, for the checkpointer to sync it ahead of a restart (see
        // [`checkpoint`]).
        let database = std::fs::File::open(path).map_err(|err| db_error(path, err))?;
        let (committed, commits) = mpsc::sync_channel(1);
        let checkpointer = std::thread::Builder::new()
            .name("evalctl-checkpoint".into())
            .spawn(move || checkpoint(&checkpointing, &database, &commits))
            .map_err(|err| Fatal::Internal(format!("cannot start the database writer: {err}")))?;
        let (inserts, queue) = mpsc::channel();
        let queued = Arc::new(Queued::default());
        let writer = {
            let writer = Writer {
                connection: writing,
                compressor: compressor()
                    .map_err(|err| db_error(path, format!("cannot start compressing: {err}")))?,
                queued: Arc::clone(&queued),
                retain,
                committed,
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
            checkpointer: Some(checkpointer),
            reader: Mutex::new(reader),
            queued,
            room: Arc::new(Semaphore::new(QUEUED_BYTES as usize)),
        })
    }

    /// Store `document` under `evaluation_id`: readable at once; returns once it is committed
    /// (waiting first while the queue is full), or with the reason it could not be.
    pub async fn insert(&self, evaluation_id: String, document: Bytes) -> Result<(), String> {
        let share = u32::try_from(document.len()).map_or(QUEUED_BYTES, |len| len.min(QUEUED_BYTES));
        let room = Arc::clone(&self.room)
            .acquire_many_owned(share)
            .await
            .map_err(|_| WRITER_STOPPED.to_string())?;
        let (done, committed) = oneshot::channel();
        lock(&self.queued).insert(evaluation_id.clone(), document.clone());
        let insert = Insert {
            evaluation_id,
            document,
            done,
            _room: room,
        };
        if let Some(Err(mpsc::SendError(insert))) = self.inserts.as_ref().map(|tx| tx.send(insert))
        {
            lock(&self.queued).remove(&insert.evaluation_id);
            return Err(WRITER_STOPPED.into());
        }
        committed
            .await
            .unwrap_or_else(|_| Err(WRITER_STOPPED.into()))
    }

    /// The stored document of `evaluation_id`, if any, as stored (blocking: call it off the
    /// async workers).
    pub fn get(&self, evaluation_id: &str) -> Result<Option<Stored>, String> {
        // A result leaves the queue only after its commit, so looking here first misses none.
        if let Some(document) = lock(&self.queued).get(evaluation_id) {
            return Ok(Some(Stored::Queued(document.clone())));
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
            .map_err(|err| err.to_string())
            .map(|found| found.map(Stored::Row))
    }
}

/// A stored document, before it is decompressed.
pub enum Stored {
    /// Not committed yet: the document itself.
    Queued(Bytes),
    /// As the database holds it.
    Row(Vec<u8>),
}

impl Stored {
    /// How large the document is, in bytes: its frame says (the compressor writes it), or it is
    /// stored as it is.
    pub fn size(&self) -> u64 {
        match self {
            Stored::Queued(document) => document.len() as u64,
            Stored::Row(stored) => {
                let frame = match stored.split_first() {
                    Some((&DICTIONARY_V1, frame)) => frame,
                    _ => stored,
                };
                match zstd::zstd_safe::get_frame_content_size(frame) {
                    Ok(Some(size)) => size,
                    _ => stored.len() as u64,
                }
            }
        }
    }

    /// The document as JSON (blocking: it may decompress megabytes).
    pub fn document(self) -> Result<Bytes, String> {
        match self {
            Stored::Queued(document) => Ok(document),
            Stored::Row(stored) => stored_document(stored),
        }
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
        // The writer ends once the queue is empty, then the checkpointer once the writer has.
        for thread in [self.writer.take(), self.checkpointer.take()]
            .into_iter()
            .flatten()
        {
            let _ = thread.join();
        }
    }
}

fn open_connection(path: &Path) -> anyhow::Result<Connection> {
    let connection = Connection::open(path).map_err(|err| sqlite_error(path, err))?;
    connection
        .execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;",
        )
        .map_err(|err| sqlite_error(path, err))?;
    Ok(connection)
}

/// The thread that owns the writing connection.
struct Writer {
    connection: Connection,
    compressor: zstd::bulk::Compressor<'static>,
    queued: Arc<Queued>,
    retain: Option<Duration>,
    /// Wakes the checkpointer after a commit.
    committed: mpsc::SyncSender<()>,
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
            let mut batch = vec![first];
            batch.extend(queue.try_iter().take(MAX_BATCH - 1));
            self.commit(batch);
            // A wake-up already waiting covers this commit too.
            let _ = self.committed.try_send(());
            if let Some(retain) = self.retain.filter(|_| SystemTime::now() >= next_prune) {
                let _ = prune(&self.connection, retain);
                next_prune = SystemTime::now() + PRUNE_EVERY;
            }
        }
    }

    /// Commit `batch`, then take it off the queue and tell each insert how it went.
    fn commit(&mut self, batch: Vec<Insert>) {
        let outcome = commit(&mut self.connection, &mut self.compressor, &batch);
        {
            let mut queued = lock(&self.queued);
            for insert in &batch {
                queued.remove(&insert.evaluation_id);
            }
        }
        for insert in batch {
            let _ = insert.done.send(outcome.clone());
        }
    }
}

/// The least time between two checkpoints.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(250);

/// The WAL pages (4 KB each) past which a checkpoint starts the WAL over: 64 MB. Under steady
/// load a commit writes a few pages whatever its size, so the WAL grows by about 10 MB/s at
/// 20,000 one-case runs a second; each start-over holds the commits back for a sync (2 to 30 ms
/// on a virtual machine), so it must come seldom (every few seconds at that rate) for the
/// runs it holds to stay well under 1% of the runs answered.
const RESTART_PAGES: i64 = 16_000;

/// How long a commit held back by a checkpoint waits before it tries again, and how many times
/// (5 s in all, as `busy_timeout` would).
const RETRY_AFTER: Duration = Duration::from_micros(200);
const RETRIES: i32 = 25_000;

/// The writer's busy handler: wait [`RETRY_AFTER`] and try again, up to [`RETRIES`] times.
fn retry_soon(attempts: i32) -> bool {
    if attempts >= RETRIES {
        return false;
    }
    std::thread::sleep(RETRY_AFTER);
    true
}

/// Copy the committed WAL pages into the database after commits, at most every
/// [`CHECKPOINT_EVERY`], until the writer has gone. A passive checkpoint runs beside the
/// writer's commits, never holding one up; but under steady commits the WAL never ends up all
/// copied between two of them, so it would only grow: past [`RESTART_PAGES`], a checkpoint holds
/// the commits back while it copies the last pages (the passive ones copied the others) and
/// syncs, and the next commit starts the WAL over. The pages the passive checkpoints copied are
/// synced first, beside the commits (`database`), so that the sync that holds them back has
/// little left to write. A failed checkpoint is taken up by the next.
fn checkpoint(connection: &Connection, database: &std::fs::File, commits: &mpsc::Receiver<()>) {
    let run = |mode: &str| {
        connection.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |row| {
            row.get::<_, i64>(1)
        })
    };
    let mut next = Instant::now();
    while commits.recv().is_ok() {
        // Until the next checkpoint is due, unless the writer goes (closing the database
        // checkpoints it).
        while let Some(wait) = next.checked_duration_since(Instant::now()) {
            match commits.recv_timeout(wait) {
                Ok(()) => {}
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        if run("PASSIVE").is_ok_and(|pages| pages > RESTART_PAGES)
            && database.sync_data().is_ok()
            && run("PASSIVE").is_ok()
        {
            let _ = run("RESTART");
        }
        next = Instant::now() + CHECKPOINT_EVERY;
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
            // Made as large as its frame says at once: grown as it is read, it would take up to
            // twice its size while it is copied.
            let mut document = Vec::new();
            if let Ok(Some(size)) = zstd::zstd_safe::get_frame_content_size(frame) {
                let _ = document.try_reserve_exact(usize::try_from(size).unwrap_or(usize::MAX));
            }
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

/// A SQLite error of the database at `path`: bad input when the file is no database.
fn sqlite_error(path: &Path, err: rusqlite::Error) -> anyhow::Error {
    if crate::store::is_not_a_database(&err) {
        return crate::error::bad_input(crate::error::Problem::new(
            path.display().to_string(),
            "cannot open --db: it is no SQLite database (evalctl's own or any): name another \
             file, or a new one",
        ));
    }
    db_error(path, err)
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

    /// The document `store` holds for `id`, decompressed.
    fn read(store: &Store, id: &str) -> Option<Bytes> {
        store
            .get(id)
            .unwrap()
            .map(|stored| stored.document().unwrap())
    }

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
    fn a_stored_document_knows_its_size_before_it_is_decompressed() {
        let document = br#"{"results":[]}"#.repeat(100);
        let mut stored = vec![DICTIONARY_V1];
        stored.extend(compressor().unwrap().compress(&document).unwrap());
        assert!(stored.len() < document.len());
        assert_eq!(Stored::Row(stored).size(), document.len() as u64);
        assert_eq!(Stored::Row(b"{}".to_vec()).size(), 2);
        assert_eq!(Stored::Queued(Bytes::from_static(b"{ }")).size(), 3);
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
        let store = Store::open(&path, None).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let inserted = runtime.block_on(store.insert("a".into(), Bytes::from_static(b"{\"x\":1}")));
        assert_eq!(inserted, Ok(()));
        assert_eq!(read(&store, "a").as_deref(), Some(&b"{\"x\":1}"[..]));
        assert_eq!(read(&store, "b"), None);
        drop(store);
        let reopened = Store::open(&path, Some(Duration::from_secs(86_400))).unwrap();
        assert_eq!(
            read(&reopened, "a").as_deref(),
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
        assert_eq!(read(&reopened, "old").as_deref(), Some(&b"{\"y\":2}"[..]));
        assert_eq!(read(&reopened, "older").as_deref(), Some(&b"{\"z\":3}"[..]));
        connection
            .execute(
                "DELETE FROM evaluations WHERE evaluation_id IN ('old', 'older')",
                [],
            )
            .unwrap();
        // Dated ahead, so that the second turning meanwhile does not make it older than now.
        connection
            .execute("UPDATE evaluations SET created_at = created_at + 60", [])
            .unwrap();
        assert_eq!(prune(&connection, Duration::ZERO).unwrap(), 0);
        connection
            .execute("UPDATE evaluations SET created_at = 0", [])
            .unwrap();
        assert_eq!(prune(&connection, Duration::from_secs(86_400)).unwrap(), 1);
    }
}
