//! Where `serve` keeps its EvaluationRunResults: an embedded SQLite database (WAL), so that
//! `GET /evaluations/{id}` answers after a restart.
//!
//! One thread owns the writing connection and commits whatever inserts are waiting in one
//! transaction (group commit: many small evaluations per commit under load); an insert is
//! answered once its transaction is committed, so a result is readable as soon as its request
//! has been answered. Reads go through a second connection. `--retain DAYS` prunes results older
//! than that at startup and hourly. Dropping the store commits what is queued and closes it.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use rusqlite::{params, Connection, OptionalExtension};
use tokio::sync::oneshot;

use crate::error::Fatal;

/// How often results older than `--retain` are pruned while serving.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// The most inserts committed in one transaction.
const MAX_BATCH: usize = 512;

/// One result waiting to be written; `done` hears whether it was committed.
struct Insert {
    evaluation_id: String,
    document: Bytes,
    done: oneshot::Sender<Result<(), String>>,
}

/// The open database.
pub struct Store {
    inserts: Option<mpsc::Sender<Insert>>,
    writer: Option<JoinHandle<()>>,
    reader: Mutex<Connection>,
}

impl Store {
    /// Open (creating it and its folder when needed) the database at `path`; results older than
    /// `retain` are pruned now and hourly.
    pub fn open(path: &Path, retain: Option<Duration>) -> anyhow::Result<Store> {
        if let Some(folder) = path
            .parent()
            .filter(|folder| !folder.as_os_str().is_empty())
        {
            std::fs::create_dir_all(folder)
                .map_err(|err| db_error(path, format!("cannot create its folder: {err}")))?;
        }
        let writing = open_connection(path)?;
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
        let writer = std::thread::Builder::new()
            .name("evalctl-store".into())
            .spawn(move || write_loop(writing, &queue, retain))
            .map_err(|err| Fatal::Internal(format!("cannot start the database writer: {err}")))?;
        Ok(Store {
            inserts: Some(inserts),
            writer: Some(writer),
            reader: Mutex::new(reader),
        })
    }

    /// Queue `document` under `evaluation_id`; the receiver hears once it is committed.
    pub fn insert(
        &self,
        evaluation_id: String,
        document: Bytes,
    ) -> oneshot::Receiver<Result<(), String>> {
        let (done, committed) = oneshot::channel();
        let insert = Insert {
            evaluation_id,
            document,
            done,
        };
        if let Some(Err(mpsc::SendError(insert))) = self.inserts.as_ref().map(|tx| tx.send(insert))
        {
            let _ = insert
                .done
                .send(Err("the database writer has stopped".into()));
        }
        committed
    }

    /// The stored document of `evaluation_id`, if any (blocking: call it off the async workers).
    pub fn get(&self, evaluation_id: &str) -> Result<Option<Vec<u8>>, String> {
        let reader = self
            .reader
            .lock()
            .map_err(|_| "the database reader failed earlier".to_string())?;
        reader
            .prepare_cached("SELECT document FROM evaluations WHERE evaluation_id = ?1")
            .and_then(|mut select| {
                select
                    .query_row(params![evaluation_id], |row| row.get(0))
                    .optional()
            })
            .map_err(|err| err.to_string())
    }
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

/// Commit batches of inserts until every sender is gone; prune hourly when retaining.
fn write_loop(
    mut connection: Connection,
    queue: &mpsc::Receiver<Insert>,
    retain: Option<Duration>,
) {
    let mut next_prune = SystemTime::now() + PRUNE_EVERY;
    loop {
        let first = match queue.recv_timeout(PRUNE_EVERY) {
            Ok(insert) => insert,
            Err(RecvTimeoutError::Timeout) => {
                // A failed prune is tried again at the next one.
                if let Some(retain) = retain {
                    let _ = prune(&connection, retain);
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => return,
        };
        let mut batch = vec![first];
        batch.extend(queue.try_iter().take(MAX_BATCH - 1));
        let outcome = commit(&mut connection, &batch).map_err(|err| err.to_string());
        for insert in batch {
            let _ = insert.done.send(outcome.clone());
        }
        if let Some(retain) = retain.filter(|_| SystemTime::now() >= next_prune) {
            let _ = prune(&connection, retain);
            next_prune = SystemTime::now() + PRUNE_EVERY;
        }
    }
}

fn commit(connection: &mut Connection, batch: &[Insert]) -> rusqlite::Result<()> {
    let transaction = connection.transaction()?;
    {
        let mut statement = transaction.prepare_cached(
            "INSERT OR REPLACE INTO evaluations (evaluation_id, created_at, document) \
             VALUES (?1, ?2, ?3)",
        )?;
        let now = unix_seconds(SystemTime::now());
        for insert in batch {
            statement.execute(params![insert.evaluation_id, now, insert.document.as_ref()])?;
        }
    }
    transaction.commit()
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
    fn a_committed_result_is_read_back_and_pruning_keeps_recent_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/serve.db");
        let store = Store::open(&path, None).unwrap();
        let committed = store.insert("a".into(), Bytes::from_static(b"{\"x\":1}"));
        assert_eq!(committed.blocking_recv().unwrap(), Ok(()));
        assert_eq!(store.get("a").unwrap().as_deref(), Some(&b"{\"x\":1}"[..]));
        assert_eq!(store.get("b").unwrap(), None);
        drop(store);
        let reopened = Store::open(&path, Some(Duration::from_secs(86_400))).unwrap();
        assert!(reopened.get("a").unwrap().is_some());
        let connection = Connection::open(&path).unwrap();
        assert_eq!(prune(&connection, Duration::ZERO).unwrap(), 0);
        connection
            .execute("UPDATE evaluations SET created_at = 0", [])
            .unwrap();
        assert_eq!(prune(&connection, Duration::from_secs(86_400)).unwrap(), 1);
    }
}
