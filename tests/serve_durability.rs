//! No acknowledged evaluation is lost: `serve` under load from several clients is killed with
//! `SIGKILL` once it has answered a few hundred evaluations, restarted on the same database, and
//! every evaluation it had answered 200 is found there.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::common::wait_until;
use crate::serve_support::{capitals_request, Server};

/// Clients sending requests at once.
const CLIENTS: usize = 8;
/// Answers to wait for before the kill.
const ANSWERED_BEFORE_KILL: usize = 300;
/// The most requests one client sends (the loop ends at the kill long before).
const MOST_REQUESTS: usize = 5_000;

/// One `POST /evaluate` on a connection of its own; the evaluation id when the whole answer
/// arrived with status 200, `None` for anything else (the server died mid-answer).
fn evaluate(address: &str, body: &[u8]) -> Option<String> {
    let mut stream = TcpStream::connect(address).ok()?;
    let head = format!(
        "POST /evaluate HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).ok()?;
    stream.write_all(body).ok()?;
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).ok()?;
    let text = String::from_utf8(reply).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    if !head.starts_with("HTTP/1.1 200") {
        return None;
    }
    let length: usize = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().ok())
            .flatten()
    })?;
    if body.len() != length {
        return None;
    }
    let run: serde_json::Value = serde_json::from_str(body).ok()?;
    run["evaluation_id"].as_str().map(str::to_string)
}

#[test]
fn sigkill_under_load_loses_no_answered_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("serve.db");
    let mut server = Server::start(&db, &[], &[]);
    let answered: Arc<Mutex<Vec<String>>> = Arc::default();
    let killed = Arc::new(AtomicBool::new(false));
    let body = Arc::new(capitals_request(1));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (address, answered, killed, body) = (
                server.rest.clone(),
                Arc::clone(&answered),
                Arc::clone(&killed),
                Arc::clone(&body),
            );
            std::thread::spawn(move || {
                for _ in 0..MOST_REQUESTS {
                    match evaluate(&address, &body) {
                        Some(id) => answered.lock().unwrap().push(id),
                        None if killed.load(Ordering::SeqCst) => return,
                        None => {}
                    }
                }
            })
        })
        .collect();
    assert!(
        wait_until(std::time::Duration::from_secs(120), || {
            answered.lock().unwrap().len() >= ANSWERED_BEFORE_KILL
        }),
        "the server answered too few evaluations"
    );
    // Mid-load: requests are in flight, some answered a moment ago.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    killed.store(true, Ordering::SeqCst);
    for client in clients {
        client.join().unwrap();
    }
    drop(server);

    let restarted = Server::start(&db, &[], &[]);
    let answered = answered.lock().unwrap();
    let lost: Vec<&String> = answered
        .iter()
        .filter(|id| {
            restarted
                .request("GET", &format!("/evaluations/{id}"), &[], b"")
                .status
                != 200
        })
        .collect();
    assert_eq!(
        lost.len(),
        0,
        "{} of {} answered evaluations were lost: {lost:?}",
        lost.len(),
        answered.len()
    );
}
