//! `evalctl serve` and its database: a result the database refuses is a 500, never a 200; the
//! database is its owner's alone.

use std::path::Path;

use serde_json::json;

use crate::serve_support::{capitals_request, Server};

#[test]
fn a_result_the_database_refuses_is_a_500_and_never_a_200() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data/serve.db");
    let server = Server::start(&db, &[], &[]);
    assert_eq!(
        server
            .request("POST", "/evaluate", &[], &capitals_request(1))
            .status,
        200
    );
    // Another connection holds the database's write lock: commits fail once SQLite stops
    // waiting for it.
    let locker = rusqlite::Connection::open(&db).unwrap();
    locker.execute_batch("BEGIN IMMEDIATE").unwrap();
    let refused = server.request("POST", "/evaluate", &[], &capitals_request(1));
    assert_eq!(refused.status, 500);
    assert_eq!(
        refused.json(),
        json!({"error": "internal_error",
               "message": "the result could not be stored: database is locked"})
    );
    locker.execute_batch("ROLLBACK").unwrap();
    let stored = server.request("POST", "/evaluate", &[], &capitals_request(1));
    assert_eq!(stored.status, 200);
    let id = stored.json()["evaluation_id"].as_str().unwrap().to_string();
    let (status, _) = server.terminate();
    assert!(status.success());
    let restarted = Server::start(&db, &[], &[]);
    let found = restarted.request("GET", &format!("/evaluations/{id}"), &[], b"");
    assert_eq!(found.status, 200);
}

#[test]
fn the_database_and_its_folder_are_readable_by_their_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data/serve.db");
    let server = Server::start(&db, &[], &[]);
    assert_eq!(
        server
            .request("POST", "/evaluate", &[], &capitals_request(1))
            .status,
        200
    );
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir.path().join("data")), 0o700);
    for file in ["serve.db", "serve.db-wal", "serve.db-shm"] {
        assert_eq!(mode(&dir.path().join("data").join(file)), 0o600, "{file}");
    }
}
