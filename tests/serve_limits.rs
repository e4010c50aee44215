//! `evalctl serve` against clients that hold it up: idle connections, half-sent request heads
//! and bodies are closed or refused; past `--max-connections` a new connection waits until one
//! closes while those open are answered; a request head over 64 KiB is a 431; an evaluation that waits (on a custom check held by the
//! test) leaves `/health` and other clients answered, and one past `--request-timeout` is a 503
//! (a stream whose client stops reading ends then too);
//! a result the database refuses is a 500, never a 200; the database is its owner's alone.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::serve_support::{capitals_request, read_reply, send, Server};

/// Everything the server sends on `stream` until it closes the connection.
fn until_closed(mut stream: TcpStream) -> Vec<u8> {
    // Only a guard against a hanging test: the server closes the connection well before.
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut received = Vec::new();
    stream
        .read_to_end(&mut received)
        .expect("the server closes the connection");
    received
}

/// Whether `received` is one HTTP/2 SETTINGS frame (what a gRPC server sends first).
fn settings_frame_only(received: &[u8]) -> bool {
    let length = received.get(..3).map_or(0, |bytes| {
        usize::from(bytes[0]) << 16 | usize::from(bytes[1]) << 8 | usize::from(bytes[2])
    });
    received.len() == 9 + length && received[3] == 0x4
}

#[test]
fn idle_connections_and_half_sent_heads_are_closed() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &["--idle-timeout", "1"], &[]);
    // A connection that sends nothing.
    let silent = TcpStream::connect(&server.rest).unwrap();
    assert_eq!(until_closed(silent), b"");
    // Half a request head.
    let mut half = TcpStream::connect(&server.rest).unwrap();
    half.write_all(b"POST /evaluate HTTP/1.1\r\nHost: localhost\r\nContent-Le")
        .unwrap();
    assert_eq!(until_closed(half), b"");
    // A kept-alive connection after its request has been answered.
    let mut kept = TcpStream::connect(&server.rest).unwrap();
    kept.write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let answered = String::from_utf8(until_closed(kept)).unwrap();
    assert!(answered.starts_with("HTTP/1.1 200 OK\r\n"), "{answered}");
    assert!(answered.contains("{\"status\":\"healthy\","), "{answered}");
    // gRPC: nothing sent, or half the HTTP/2 preface; the server's SETTINGS, then the end.
    let silent = TcpStream::connect(&server.grpc).unwrap();
    let received = until_closed(silent);
    assert!(settings_frame_only(&received), "{received:?}");
    let mut half = TcpStream::connect(&server.grpc).unwrap();
    half.write_all(b"PRI * HTTP/2.0\r\n").unwrap();
    let received = until_closed(half);
    assert!(settings_frame_only(&received), "{received:?}");
    assert_eq!(server.request("GET", "/health", &[], b"").status, 200);
}

#[test]
fn a_body_that_does_not_arrive_in_time_is_a_408() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &["--body-timeout", "1"], &[]);
    let mut stream = TcpStream::connect(&server.rest).unwrap();
    stream
        .write_all(
            b"POST /evaluate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
              Content-Length: 100\r\n\r\n{\"test_cases\"",
        )
        .unwrap();
    let reply = read_reply(stream);
    assert_eq!(reply.status, 408);
    assert_eq!(
        reply.json(),
        json!({"error": "request_timeout",
               "message": "the request body did not arrive within 1s (--body-timeout)"})
    );
}

/// Two FIFOs, `started` and `release`, and a custom check `hold` whose command writes to
/// `started` once called, then answers with whatever the test writes to `release`.
struct Hold {
    started: PathBuf,
    release: PathBuf,
    flag: String,
}

impl Hold {
    fn new(dir: &Path) -> Hold {
        let (started, release) = (dir.join("started"), dir.join("release"));
        for fifo in [&started, &release] {
            let made = std::process::Command::new("mkfifo")
                .arg(fifo)
                .status()
                .unwrap();
            assert!(made.success());
        }
        let flag = format!(
            "hold=sh -c 'cat >/dev/null; echo called >\"$0\"; cat \"$1\"' '{}' '{}'",
            started.display(),
            release.display()
        );
        Hold {
            started,
            release,
            flag,
        }
    }

    /// Wait until the command has been called.
    fn wait_until_called(&self) {
        let called = std::fs::read_to_string(&self.started).unwrap();
        assert_eq!(called, "called\n");
    }

    /// Let the command answer `results`.
    fn answer(&self, results: &str) {
        std::fs::write(&self.release, results).unwrap();
    }
}

fn held_request() -> Vec<u8> {
    json!({
        "test_cases": [{"id": "t1", "input": "q"}],
        "outputs": [{"value": "Paris"}],
        "checks": [{"type": "hold", "arguments": {"text": "$.output.value"}}]
    })
    .to_string()
    .into_bytes()
}

#[test]
fn health_and_other_clients_are_answered_while_an_evaluation_waits() {
    let dir = tempfile::tempdir().unwrap();
    let hold = Hold::new(dir.path());
    let server = Server::start(
        &dir.path().join("s.db"),
        &["--custom-check", &hold.flag],
        &[],
    );
    let waiting = send(&server.rest, "POST", "/evaluate", &[], &held_request());
    let waiting = std::thread::spawn(move || read_reply(waiting));
    hold.wait_until_called();
    assert_eq!(server.request("GET", "/health", &[], b"").status, 200);
    let other = server.request("POST", "/evaluate", &[], &capitals_request(3));
    assert_eq!(other.status, 200);
    hold.answer("{\"passed\": true}");
    let reply = waiting.join().unwrap();
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(
        reply.json()["results"][0]["check_results"][0]["results"],
        json!({"passed": true})
    );
    // Its run started before the other request's, which ran while it waited: `started_at` is
    // when the evaluation began, not when its calls had been answered.
    let (waited, other) = (reply.json(), other.json());
    let at = |document: &serde_json::Value, key: &str| document[key].as_str().unwrap().to_string();
    assert!(
        at(&waited, "started_at") <= at(&other, "started_at")
            && at(&other, "completed_at") <= at(&waited, "completed_at"),
        "{waited} {other}"
    );
}

#[test]
fn an_evaluation_past_the_request_timeout_is_a_503_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let hold = Hold::new(dir.path());
    let server = Server::start(
        &dir.path().join("s.db"),
        &[
            "--custom-check",
            &hold.flag,
            "--request-timeout",
            "1",
            "--max-concurrent",
            "1",
        ],
        &[],
    );
    let waiting = send(&server.rest, "POST", "/evaluate", &[], &held_request());
    let waiting = std::thread::spawn(move || read_reply(waiting));
    hold.wait_until_called();
    let reply = waiting.join().unwrap();
    assert_eq!(reply.status, 503);
    assert_eq!(
        reply.json(),
        json!({"error": "deadline_exceeded",
               "message": "the request was not evaluated within 1s (--request-timeout); its evaluation was stopped"})
    );
    // Its place among --max-concurrent is free again, and the check's command was stopped.
    let next = server.request("POST", "/evaluate", &[], &capitals_request(1));
    assert_eq!(next.status, 200, "{}", String::from_utf8_lossy(&next.body));

    // Streamed: the stream ends with the error.
    let streamed = send(
        &server.rest,
        "POST",
        "/evaluate?stream=true",
        &[],
        &held_request(),
    );
    let streamed = std::thread::spawn(move || read_reply(streamed));
    hold.wait_until_called();
    let reply = streamed.join().unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(
        String::from_utf8_lossy(&reply.body),
        "{\"error\":\"deadline_exceeded\",\"message\":\"the request was not evaluated within 1s (--request-timeout); its evaluation was stopped\"}\n"
    );
}

/// `n` test cases, each with `checks` shared checks that each take a while of CPU: a fuzzy
/// match of two unlike 3,000-character texts (9 million pairs).
fn cpu_bound_request(n: usize, checks: usize) -> Vec<u8> {
    let text = |seed: usize| -> String {
        (0..3000)
            .map(|i| char::from(b'a' + ((i * 7 + seed) * (i + 3) % 8) as u8))
            .collect()
    };
    let check =
        json!({"type": "spec.fuzzy_match", "arguments": {"actual": text(1), "expected": text(2)}});
    json!({
        "test_cases": (0..n).map(|i| json!({"id": format!("t{i}"), "input": "q"})).collect::<Vec<_>>(),
        "outputs": vec![json!({"value": "x"}); n],
        "checks": vec![check; checks],
    })
    .to_string()
    .into_bytes()
}

#[test]
fn a_cpu_bound_evaluation_past_the_request_timeout_stops_at_its_next_check() {
    // Minutes of CPU if it ran to the end: once answered 503 (or its stream ended), it stops
    // within the test cases being evaluated, and its place is free again.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("s.db"),
        &["--request-timeout", "1", "--max-concurrent", "1"],
        &[],
    );
    let reply = server.request("POST", "/evaluate", &[], &cpu_bound_request(512, 1));
    assert_eq!(
        reply.status,
        503,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    server.until_a_place_is_free("answered: the evaluation went on past its answer");
    let reply = server.request(
        "POST",
        "/evaluate?stream=true",
        &[],
        &cpu_bound_request(512, 1),
    );
    assert!(
        String::from_utf8_lossy(&reply.body).ends_with("\"error\":\"deadline_exceeded\",\"message\":\"the request was not evaluated within 1s (--request-timeout); its evaluation was stopped\"}\n"),
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    server.until_a_place_is_free("streamed: the evaluation went on past its end");
    // One test case of many such checks stops within it.
    let reply = server.request("POST", "/evaluate", &[], &cpu_bound_request(1, 512));
    assert_eq!(reply.status, 503);
    server.until_a_place_is_free("one test case: the evaluation went on past its answer");
}

#[test]
fn a_result_the_database_refuses_is_a_500_and_never_a_200() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("serve.db");
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
    // The default location ($XDG_DATA_HOME/evalctl/serve.db), whose folder serve creates.
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data_home = dir.path().to_str().unwrap();
    let server = Server::start_with_db(None, &[], &[("XDG_DATA_HOME", data_home)]);
    assert_eq!(
        server
            .request("POST", "/evaluate", &[], &capitals_request(1))
            .status,
        200
    );
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir.path().join("evalctl")), 0o700);
    for file in ["serve.db", "serve.db-wal", "serve.db-shm"] {
        assert_eq!(
            mode(&dir.path().join("evalctl").join(file)),
            0o600,
            "{file}"
        );
    }
}

/// A server with `--max-concurrent 1 --request-timeout 1`, and a streamed evaluation whose
/// results this client stopped reading after its head and first line, once the deadline has
/// stopped it (its place is free again) while the client still holds the connection.
fn a_stream_left_unread() -> (Server, tempfile::TempDir, BufReader<TcpStream>, String) {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("s.db"),
        &["--max-concurrent", "1", "--request-timeout", "1"],
        &[],
    );
    let (stream, line) = server.stream_left_unread(&capitals_request(60_000));
    server.until_a_place_is_free("the deadline did not stop the stream");
    (server, dir, stream, line)
}

#[test]
fn a_stream_its_client_stops_reading_ends_at_the_request_timeout_with_the_error_line() {
    let (_server, _dir, mut stream, line) = a_stream_left_unread();
    // A client that reads again gets every line sent, then the error that ended the stream (its
    // last line: chunked, or alone when the stream had ended before the answer began).
    let mut rest = String::new();
    loop {
        match stream.read_line(&mut rest) {
            Ok(0) => break,
            Ok(_) => {}
            Err(err) => panic!("{err} after {} bytes", rest.len()),
        }
    }
    let all = format!("{line}{rest}");
    let error = "{\"error\":\"deadline_exceeded\",\"message\":\"the request was not evaluated \
                 within 1s (--request-timeout); its evaluation was stopped\"}\n";
    let at = all
        .rfind(error)
        .unwrap_or_else(|| panic!("no error line: {:?}", &all[all.len().saturating_sub(300)..]));
    assert!(
        matches!(&all[at + error.len()..], "" | "\r\n0\r\n\r\n"),
        "{:?}",
        &all[at..]
    );
}

#[test]
fn sigterm_does_not_wait_for_a_client_that_does_not_read() {
    // The server waits for an answer's writing no longer than the request timeout and idle
    // timeout allow.
    let (server, _dir, stream, _) = a_stream_left_unread();
    let (done, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(server.terminate()));
    let (status, said) = ended
        .recv_timeout(Duration::from_secs(60))
        .expect("serve exits while a client does not read");
    assert!(status.success(), "{said}");
    drop(stream);
}

#[test]
fn a_db_that_is_no_database_is_bad_input_and_left_as_it_was() {
    let sb = crate::common::Sandbox::new();
    sb.write("notes.jsonl", "{\"a\": 1}\n");
    let out = sb
        .evalctl()
        .args(["serve", "--format", "text", "--db", "notes.jsonl"])
        .args(["--listen", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(
        (crate::common::code(&out), crate::common::stderr_text(&out)),
        (
            2,
            "error: notes.jsonl: cannot open --db: it is no SQLite database (evalctl's own or \
             any): name another file, or a new one\n"
                .to_string()
        )
    );
    assert_eq!(sb.read("notes.jsonl"), "{\"a\": 1}\n");
}

/// Ask for `/health` on the kept-alive connection `stream`; the whole response.
fn health_on(stream: &mut TcpStream) -> String {
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    one_response(stream)
}

/// One response (its head and `Content-Length` body) read from `stream`, which stays open.
fn one_response(stream: &mut TcpStream) -> String {
    // Only a guard against a hanging test: the answer is awaited as an event.
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut received = Vec::new();
    let mut byte = [0u8; 1];
    while !received.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).expect("a response head");
        received.push(byte[0]);
    }
    let head = String::from_utf8(received).unwrap();
    let length: usize = head
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("content-length: ")?
                .parse()
                .ok()
        })
        .expect("a content-length");
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).unwrap();
    head + &String::from_utf8(body).unwrap()
}

/// Whether the server has sent nothing on `stream` yet (a read would block).
fn nothing_sent_on(stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let unanswered =
        matches!(stream.peek(&mut [0u8; 1]), Err(err) if err.kind() == ErrorKind::WouldBlock);
    stream.set_nonblocking(false).unwrap();
    unanswered
}

#[test]
fn past_max_connections_a_new_connection_waits_until_one_closes() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(&dir.path().join("s.db"), &["--max-connections", "2"], &[]);
    let healthy = |response: &str| {
        response.starts_with("HTTP/1.1 200 OK\r\n") && response.contains("{\"status\":\"healthy\",")
    };
    let mut first = TcpStream::connect(&server.rest).unwrap();
    let mut second = TcpStream::connect(&server.rest).unwrap();
    for stream in [&mut first, &mut second] {
        let response = health_on(stream);
        assert!(healthy(&response), "{response}");
    }
    // A third connection is accepted, then waits for a place: the server says so (once).
    let mut third = TcpStream::connect(&server.rest).unwrap();
    third
        .write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut told = String::new();
    server.stderr.read_line(&mut told).unwrap();
    assert_eq!(
        told,
        "2 connections are open (--max-connections): new connections wait until one closes\n"
    );
    assert!(nothing_sent_on(&third));
    // The connections open are still answered, and the third still waits.
    let response = health_on(&mut second);
    assert!(healthy(&response), "{response}");
    assert!(nothing_sent_on(&third));
    // One closes: the third is served.
    drop(first);
    let response = one_response(&mut third);
    assert!(healthy(&response), "{response}");
    // gRPC connections share the places: one waits (no SETTINGS frame) until one closes.
    let mut grpc = TcpStream::connect(&server.grpc).unwrap();
    assert!(nothing_sent_on(&grpc));
    drop(second);
    grpc.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut frame_head = [0u8; 9];
    grpc.read_exact(&mut frame_head)
        .expect("the server's SETTINGS");
    assert_eq!(frame_head[3], 0x4, "{frame_head:?}");
}

#[test]
fn a_request_head_over_64_kib_is_a_431_and_its_connection_closed() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    // A head of `size` bytes, request line and headers.
    let head = |size: usize| {
        let start = "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Padding: ";
        let head = format!("{start}{}\r\n\r\n", "a".repeat(size - start.len() - 4));
        assert_eq!(head.len(), size);
        head
    };
    // At the limit: answered.
    let mut under = TcpStream::connect(&server.rest).unwrap();
    under.write_all(head(64 << 10).as_bytes()).unwrap();
    let answered = String::from_utf8(until_closed(under)).unwrap();
    assert!(answered.starts_with("HTTP/1.1 200 OK\r\n"), "{answered}");
    // One byte over it: 431, no body, and the connection is closed (or reset, when the rest of
    // the head was never read).
    let mut over = TcpStream::connect(&server.rest).unwrap();
    let _ = over.write_all(head((64 << 10) + 1).as_bytes());
    over.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    while let Ok(read @ 1..) = over.read(&mut buffer) {
        received.extend_from_slice(&buffer[..read]);
    }
    let reply = crate::serve_support::parse_reply(received);
    assert_eq!(reply.status, 431);
    assert_eq!(reply.header("content-length"), Some("0"));
    assert_eq!(reply.body, b"");
    // A body is not a head: one well over 64 KiB is evaluated.
    let body = capitals_request(2_000);
    assert!(body.len() > 128 << 10, "{}", body.len());
    let reply = read_reply(send(&server.rest, "POST", "/evaluate", &[], &body));
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["summary"]["total_test_cases"], 2_000);
}

#[test]
fn connections_are_held_to_what_the_open_file_limit_allows_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with_open_files(&dir.path().join("serve.db"), &[], 400);
    let warning = server
        .startup
        .lines()
        .next()
        .expect("a first line")
        .to_string();
    assert!(
        warning.starts_with(
            "warning: --max-connections 1024 needs about 1280 open files, but the open-file \
             limit is 400 even raised to its hard limit: holding at most "
        ) && warning.ends_with(" connections open"),
        "{warning}"
    );
    assert_eq!(server.request("GET", "/health", &[], b"").status, 200);
}

/// A server whose idle timeout is a second and whose requests may hold `max_memory` bytes, with
/// a stored result of about 30 MB (five checks each repeat a 5 MB output): the server, its
/// folder, the request that made the result (about 85 MB to evaluate) and the result's id.
fn server_with_a_large_result(max_memory: &str) -> (Server, tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let flags = [
        "--idle-timeout",
        "1",
        "--max-body",
        "10000000",
        "--max-memory",
        max_memory,
    ];
    let server = Server::start(&dir.path().join("s.db"), &flags, &[]);
    let check = json!({"type": "exact_match",
        "arguments": {"actual": "$.output.value", "expected": "x"}});
    let large = json!({
        "test_cases": [{"id": "t", "input": "q"}],
        "outputs": [{"value": "x".repeat(5_000_000)}],
        "checks": vec![check; 5],
    })
    .to_string();
    let stored = server.request("POST", "/evaluate", &[], large.as_bytes());
    assert_eq!(stored.status, 200);
    let id = stored.json()["evaluation_id"].as_str().unwrap().to_string();
    (server, dir, large, id)
}

#[test]
fn a_client_that_reads_nothing_of_its_answer_is_disconnected_and_frees_its_memory() {
    let (server, _dir, large, id) = server_with_a_large_result("120000000");
    // Three clients ask for it and read nothing: their answers hold 90 MB of the budget while
    // they wait to be written, and an evaluation that takes about 85 MB must wait.
    let head = format!("GET /evaluations/{id} HTTP/1.1\r\nHost: localhost\r\n\r\n");
    let unread: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut stream = TcpStream::connect(&server.rest).unwrap();
            stream.write_all(head.as_bytes()).unwrap();
            stream
        })
        .collect();
    let status = || {
        server
            .request("POST", "/evaluate", &[], large.as_bytes())
            .status
    };
    let answered =
        |code: u16| crate::common::wait_until(Duration::from_secs(60), || status() == code);
    assert!(answered(429));
    // Once they have read nothing for --idle-timeout, they are disconnected: the memory is free.
    assert!(answered(200));
    for mut stream in unread {
        // What the server had written before it gave up, then the end (or a reset: the server
        // closed a connection with unwritten bytes).
        let mut received = Vec::new();
        let mut buffer = vec![0; 1 << 20];
        while let Ok(read @ 1..) = stream.read(&mut buffer) {
            received.extend_from_slice(&buffer[..read]);
        }
        assert!(received.starts_with(b"HTTP/1.1 200 OK\r\n"));
        assert!(received.len() < 30_000_000, "the answer was written whole");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_client_that_reads_nothing_of_its_answer_holds_its_memory_until_disconnected() {
    use crate::serve_support::grpc::{authorized, pb};
    let (server, _dir, large, id) = server_with_a_large_result("300000000");
    // A client asks for the result over gRPC and reads nothing of it: HTTP/2's flow control
    // holds the answer back, and it holds its 240 MB share of the budget meanwhile.
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", server.grpc))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = tonic::client::Grpc::new(channel);
    client.ready().await.unwrap();
    let unread = client
        .server_streaming(
            authorized(pb::GetEvaluationRequest { evaluation_id: id }),
            tonic::codegen::http::uri::PathAndQuery::from_static(
                "/fep.v1.EvaluationService/GetEvaluation",
            ),
            tonic_prost::ProstCodec::<_, pb::EvaluationRunResult>::default(),
        )
        .await
        .expect("the answer's head");
    let status = || {
        let (rest, body) = (server.rest.clone(), large.clone());
        async move {
            tokio::task::spawn_blocking(move || {
                read_reply(send(&rest, "POST", "/evaluate", &[], body.as_bytes())).status
            })
            .await
            .unwrap()
        }
    };
    // An evaluation of about 85 MB must wait while the answer is held...
    assert_eq!(status().await, 429);
    // ... until the client, having read nothing for --idle-timeout, is disconnected.
    let give_up = std::time::Instant::now() + Duration::from_secs(60);
    while status().await != 200 {
        assert!(
            std::time::Instant::now() < give_up,
            "the answer's memory was never freed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The client finds its connection closed before the end of the answer.
    let message = unread.into_inner().message().await;
    assert!(message.is_err(), "the answer was written whole");
}
