//! Shared support for the integration tests that drive the real `evalctl` binary.
//!
//! - [`Sandbox`]: a temporary directory to write `sh` evaluators, datasets and candidates into,
//!   and an `evalctl` command that runs inside it.
//! - [`Server`]: a small HTTP/1.1 server on `127.0.0.1:0` (std `TcpListener` + one thread per
//!   connection, keep-alive) whose answers each test scripts; it records every request (headers,
//!   body, arrival time, connection) and counts connections so keep-alive reuse can be asserted.
//! - Helpers to read `--output` files and JSON summaries, and to check whether a process is gone.
//!
//! Evaluators are `sh` scripts (fast to start, no Python), run as `--evaluator-command sh eval.sh`.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// An evaluator that ignores its input and prints `$EVAL_OUT` (set by the test) verbatim.
pub const PRINT_EVAL_OUT: &str = "cat >/dev/null\nprintf '%s' \"$EVAL_OUT\"\n";

/// An evaluator that appends its payload (one line per call) to `payloads.log` and scores 1.
pub const LOG_PAYLOAD: &str =
    "p=$(cat)\nprintf '%s\\n' \"$p\" >> payloads.log\nprintf '{\"score\": 1}'\n";

/// The `evalctl` binary, with a clean environment for the variables it reads and a safety timeout.
pub fn evalctl() -> assert_cmd::Command {
    let mut command = assert_cmd::Command::new(bin());
    command
        .env_remove("OPTIMIZE_ANYTHING_TASK_MODEL")
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(60));
    command
}

/// Path of the built binary.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_evalctl")
}

/// A temporary working directory for one test.
pub struct Sandbox {
    dir: tempfile::TempDir,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    /// A new empty directory.
    pub fn new() -> Self {
        Sandbox {
            dir: tempfile::tempdir().expect("create a temp dir"),
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `name` inside the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Write `contents` to `name` (parent directories created); returns the full path.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent dirs");
        }
        std::fs::write(&path, contents).expect("write file");
        path
    }

    /// Write an executable file (mode 0755).
    pub fn write_executable(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.write(name, contents);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// The text of `name` ("" when it does not exist).
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.join(name)).unwrap_or_default()
    }

    /// Whether `name` exists.
    pub fn exists(&self, name: &str) -> bool {
        self.join(name).exists()
    }

    /// The non-empty lines of `name`.
    pub fn lines(&self, name: &str) -> Vec<String> {
        self.read(name)
            .lines()
            .filter(|line| !line.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// Every line of a JSONL file (e.g. `--output`), parsed.
    pub fn jsonl(&self, name: &str) -> Vec<Value> {
        self.lines(name)
            .iter()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|err| panic!("{name}: {line}: {err}"))
            })
            .collect()
    }

    /// `evalctl` running in this directory.
    pub fn evalctl(&self) -> assert_cmd::Command {
        let mut command = evalctl();
        command.current_dir(self.path());
        command
    }

    /// `evalctl run --format json` with `sh eval.sh` (written from `script`) as the evaluator.
    pub fn run_with(&self, script: &str) -> assert_cmd::Command {
        self.write("eval.sh", script);
        let mut command = self.evalctl();
        command.args([
            "run",
            "--format",
            "json",
            "--evaluator-command",
            "sh eval.sh",
        ]);
        command
    }
}

/// stdout parsed as one JSON document (the `--format json` summary).
pub fn json_stdout(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "stdout is not JSON ({err}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// Run `command` and require exit 0 (the failure shows stderr); returns its output.
pub fn succeeded(
    mut command: impl std::borrow::BorrowMut<assert_cmd::Command>,
) -> std::process::Output {
    let out = command.borrow_mut().output().expect("evalctl runs");
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    out
}

/// stderr as text.
pub fn stderr_text(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// stdout as text.
pub fn stdout_text(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The exit code (panics when killed by a signal).
pub fn code(output: &std::process::Output) -> i32 {
    output.status.code().unwrap_or_else(|| {
        panic!(
            "killed by a signal: {:?}\nstderr:\n{}",
            output.status,
            stderr_text(output)
        )
    })
}

/// Whether process `pid` still exists and is not a zombie (Linux `/proc`).
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            // "pid (comm) STATE ..." — comm may contain spaces, so look after the last ')'.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .unwrap_or("");
            state != "Z" && state != "X"
        }
    }
}

/// Poll `condition` every 10 ms until it holds or `limit` passes; returns whether it held.
pub fn wait_until(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A URL on 127.0.0.1 where nothing listens (a port bound then released).
pub fn refused_url(path: &str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}{path}")
}

// ---------------------------------------------------------------------------------------------
// HTTP test server
// ---------------------------------------------------------------------------------------------

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Request {
    /// `POST`, `GET`, ...
    pub method: String,
    /// The request target, e.g. `/score`.
    pub path: String,
    /// Headers in arrival order (names as sent).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// When the request was fully read.
    pub at: Instant,
    /// 0-based number of the connection it came on.
    pub connection: usize,
}

impl Request {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// Every header named `name` (case-insensitive).
    pub fn headers_named(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
            .collect()
    }

    /// The body as text.
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// What the server answers to one request.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// Extra response headers.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// Wait this long before answering.
    pub delay: Duration,
    /// Close the connection without answering (a transport failure for the client).
    pub hang_up: bool,
}

impl Reply {
    /// `200` with a JSON body.
    pub fn json(body: impl Into<Vec<u8>>) -> Reply {
        Reply::status(200, body)
    }

    /// `status` with `body`.
    pub fn status(status: u16, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: body.into(),
            delay: Duration::ZERO,
            hang_up: false,
        }
    }

    /// Close the connection without answering.
    pub fn hang_up() -> Reply {
        Reply {
            hang_up: true,
            ..Reply::status(200, "")
        }
    }

    /// Add a response header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Answer after `delay`.
    pub fn after(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

type Responder = dyn Fn(&Request, usize) -> Reply + Send + Sync;

struct ServerState {
    requests: Mutex<Vec<Request>>,
    served: AtomicUsize,
    connections: AtomicUsize,
    responder: Box<Responder>,
}

/// A scriptable HTTP/1.1 server on `127.0.0.1:0`. Threads are left running when it is dropped;
/// the test process ends soon after.
pub struct Server {
    port: u16,
    state: Arc<ServerState>,
}

impl Server {
    /// Start a server answering each request with `responder(request, n)`, `n` being the 0-based
    /// number of the request in arrival order.
    pub fn start(responder: impl Fn(&Request, usize) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(ServerState {
            requests: Mutex::new(Vec::new()),
            served: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
            responder: Box::new(responder),
        });
        let accept_state = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let connection = accept_state.connections.fetch_add(1, Ordering::SeqCst);
                let state = Arc::clone(&accept_state);
                std::thread::spawn(move || serve_connection(stream, connection, &state));
            }
        });
        Server { port, state }
    }

    /// Always answer `reply`.
    pub fn fixed(reply: Reply) -> Server {
        Server::start(move |_, _| reply.clone())
    }

    /// Answer `failure` to the first `n` requests, then `success`.
    pub fn fail_then(n: usize, failure: Reply, success: Reply) -> Server {
        Server::start(move |_, index| {
            if index < n {
                failure.clone()
            } else {
                success.clone()
            }
        })
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.state.requests.lock().unwrap().clone()
    }

    /// How many requests arrived.
    pub fn request_count(&self) -> usize {
        self.state.requests.lock().unwrap().len()
    }

    /// How many TCP connections were accepted.
    pub fn connection_count(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }
}

fn serve_connection(stream: TcpStream, connection: usize, state: &ServerState) {
    let _ = stream.set_nodelay(true);
    let mut writer = match stream.try_clone() {
        Ok(writer) => writer,
        Err(_) => return,
    };
    let mut reader = BufReader::new(stream);
    loop {
        let Some(request) = read_request(&mut reader, connection) else {
            return;
        };
        let index = state.served.fetch_add(1, Ordering::SeqCst);
        state.requests.lock().unwrap().push(request.clone());
        let reply = (state.responder)(&request, index);
        if !reply.delay.is_zero() {
            std::thread::sleep(reply.delay);
        }
        if reply.hang_up {
            let _ = writer.shutdown(std::net::Shutdown::Both);
            return;
        }
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Length: {}\r\n",
            reply.status,
            reason(reply.status),
            reply.body.len()
        );
        if !reply
            .headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("content-type"))
        {
            head.push_str("Content-Type: application/json\r\n");
        }
        for (name, value) in &reply.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        // One write per response (no Nagle / delayed-ACK stall between head and body).
        let mut response = head.into_bytes();
        response.extend_from_slice(&reply.body);
        if writer.write_all(&response).is_err() || writer.flush().is_err() {
            return;
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>, connection: usize) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let length = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        headers,
        body,
        at: Instant::now(),
        connection,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

// ---------------------------------------------------------------------------------------------
// The score-range matrix of the protocol seed
// ---------------------------------------------------------------------------------------------

/// What a call with a given evaluator output must produce.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Expect {
    /// A valid score.
    Score(f64),
    /// An error of this kind (`error.kind` in the result line).
    Error(&'static str),
}

/// Evaluator output → expected outcome under `--score-range unit` and `--score-range any`.
pub const SCORE_MATRIX: &[(&str, Expect, Expect)] = &[
    (r#"{"score": 0}"#, Expect::Score(0.0), Expect::Score(0.0)),
    (r#"{"score": 1}"#, Expect::Score(1.0), Expect::Score(1.0)),
    (r#"{"score": 0.5}"#, Expect::Score(0.5), Expect::Score(0.5)),
    (r#"{"score": -0.0}"#, Expect::Score(0.0), Expect::Score(0.0)),
    (
        r#"{"score": 1e-400}"#,
        Expect::Score(0.0),
        Expect::Score(0.0),
    ),
    (
        r#"{"score": 1.5}"#,
        Expect::Error("out_of_range"),
        Expect::Score(1.5),
    ),
    (
        r#"{"score": -0.1}"#,
        Expect::Error("out_of_range"),
        Expect::Score(-0.1),
    ),
    (
        r#"{"score": 1e300}"#,
        Expect::Error("out_of_range"),
        Expect::Score(1e300),
    ),
    (
        r#"{"score": "0.5"}"#,
        Expect::Error("non_numeric_score"),
        Expect::Error("non_numeric_score"),
    ),
    (
        r#"{"score": true}"#,
        Expect::Error("non_numeric_score"),
        Expect::Error("non_numeric_score"),
    ),
    (
        r#"{"score": null}"#,
        Expect::Error("non_numeric_score"),
        Expect::Error("non_numeric_score"),
    ),
    (
        r#"{"score": [0.5]}"#,
        Expect::Error("non_numeric_score"),
        Expect::Error("non_numeric_score"),
    ),
    (
        r#"{"score": {"v": 1}}"#,
        Expect::Error("non_numeric_score"),
        Expect::Error("non_numeric_score"),
    ),
    (
        r#"{"reason": "no score"}"#,
        Expect::Error("missing_score"),
        Expect::Error("missing_score"),
    ),
    (
        r#"{"Score": 0.5}"#,
        Expect::Error("missing_score"),
        Expect::Error("missing_score"),
    ),
    (
        r#"{"score": NaN}"#,
        Expect::Error("non_finite_score"),
        Expect::Error("non_finite_score"),
    ),
    (
        r#"{"score": Infinity}"#,
        Expect::Error("non_finite_score"),
        Expect::Error("non_finite_score"),
    ),
    (
        r#"{"score": -Infinity}"#,
        Expect::Error("non_finite_score"),
        Expect::Error("non_finite_score"),
    ),
    (
        r#"{"score": 1e400}"#,
        Expect::Error("non_finite_score"),
        Expect::Error("non_finite_score"),
    ),
    (
        r#"{"score": -1e400}"#,
        Expect::Error("non_finite_score"),
        Expect::Error("non_finite_score"),
    ),
    (
        "[0.5]",
        Expect::Error("invalid_output"),
        Expect::Error("invalid_output"),
    ),
    (
        "0.5",
        Expect::Error("invalid_output"),
        Expect::Error("invalid_output"),
    ),
    (
        r#""score""#,
        Expect::Error("invalid_output"),
        Expect::Error("invalid_output"),
    ),
    (
        "null",
        Expect::Error("invalid_output"),
        Expect::Error("invalid_output"),
    ),
    (
        r#"{"score": 0.5"#,
        Expect::Error("invalid_json"),
        Expect::Error("invalid_json"),
    ),
    (
        r#"{"score": 0.5} trailing"#,
        Expect::Error("invalid_json"),
        Expect::Error("invalid_json"),
    ),
    (
        "score=0.5",
        Expect::Error("invalid_json"),
        Expect::Error("invalid_json"),
    ),
    (
        "",
        Expect::Error("invalid_json"),
        Expect::Error("invalid_json"),
    ),
    (
        "  \n",
        Expect::Error("invalid_json"),
        Expect::Error("invalid_json"),
    ),
];

/// Check one `--output` record against `expected`; returns a description of the mismatch.
pub fn check_record(record: &Value, expected: Expect) -> Result<(), String> {
    match expected {
        Expect::Score(score) => {
            if !record["error"].is_null() {
                return Err(format!(
                    "expected score {score}, got error {}",
                    record["error"]
                ));
            }
            match record["score"].as_f64() {
                Some(got) if (got - score).abs() <= score.abs() * 1e-12 => Ok(()),
                _ => Err(format!("expected score {score}, got {}", record["score"])),
            }
        }
        Expect::Error(kind) => {
            if record["error"]["kind"] != kind {
                return Err(format!("expected error {kind}, got {}", record["error"]));
            }
            if record["score"].as_f64() != Some(0.0) {
                return Err(format!("a failed call scores 0.0, got {}", record["score"]));
            }
            if record["error"]["message"]
                .as_str()
                .is_none_or(str::is_empty)
            {
                return Err("the error has no message".into());
            }
            Ok(())
        }
    }
}
