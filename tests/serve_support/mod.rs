//! Support for the `serve` tests: the real server on ephemeral loopback ports (its addresses
//! read from its startup lines), and a minimal HTTP/1.1 client over a TCP stream.

#![allow(dead_code)]

pub mod document;
pub mod grpc;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStderr, Stdio};
use std::time::Duration;

/// A running `evalctl serve`, killed when dropped.
pub struct Server {
    pub child: Child,
    pub rest: String,
    pub grpc: String,
    /// The rest of stderr, after the startup lines.
    pub stderr: BufReader<ChildStderr>,
    /// The startup lines.
    pub startup: String,
}

impl Server {
    /// Start `evalctl serve` on port 0 with the database `db` and `extra` flags; `env` is set.
    pub fn start(db: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
        Server::start_with_db(Some(db), extra, env)
    }

    /// [`Server::start`] with the database at its default location (no `--db`).
    pub fn start_with_db(db: Option<&Path>, extra: &[&str], env: &[(&str, &str)]) -> Server {
        Server::start_from(crate::common::evalctl_process(), db, extra, env)
    }

    /// [`Server::start`] with at most `files` open files (hard and soft `RLIMIT_NOFILE`).
    pub fn start_with_open_files(db: &Path, extra: &[&str], files: u64) -> Server {
        use std::os::unix::process::CommandExt;
        let mut command = crate::common::evalctl_process();
        // SAFETY: setrlimit is async-signal-safe and touches only the child about to exec.
        unsafe {
            command.pre_exec(move || {
                let limit = libc::rlimit {
                    rlim_cur: files,
                    rlim_max: files,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        Server::start_from(command, Some(db), extra, &[])
    }

    /// Start `command` (an `evalctl` process) as `serve` on port 0.
    fn start_from(
        mut command: std::process::Command,
        db: Option<&Path>,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        command.args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--grpc-listen",
            "127.0.0.1:0",
        ]);
        if let Some(db) = db {
            command.arg("--db").arg(db);
        }
        command
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("evalctl starts");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr is piped"));
        let (mut rest, mut grpc, mut startup) = (None, None, String::new());
        while rest.is_none() || grpc.is_none() {
            let mut line = String::new();
            if stderr.read_line(&mut line).expect("stderr reads") == 0 {
                panic!("evalctl serve ended before listening: {startup}");
            }
            startup.push_str(&line);
            let address = line.trim().rsplit("http://").next().map(str::to_string);
            if line.starts_with("REST listening on ") {
                rest = address;
            } else if line.starts_with("gRPC listening on ") {
                grpc = address;
            }
        }
        Server {
            child,
            rest: rest.unwrap_or_default(),
            grpc: grpc.unwrap_or_default(),
            stderr,
            startup,
        }
    }

    /// Send SIGTERM; the exit status and everything it printed on stderr after startup.
    pub fn terminate(mut self) -> (std::process::ExitStatus, String) {
        signal(&self.child, "TERM");
        let status = self.child.wait().expect("evalctl ends");
        let mut rest = String::new();
        let _ = self.stderr.read_to_string(&mut rest);
        (status, rest)
    }

    /// One request; see [`request`].
    pub fn request(&self, method: &str, path: &str, headers: &[&str], body: &[u8]) -> Reply {
        request(&self.rest, method, path, headers, body)
    }

    /// A streamed evaluation of `request` whose client reads its head and first line and then
    /// nothing: once the socket buffers are full, the evaluation waits for the client, holding
    /// its place, for as long as the caller needs. The stream and the first line.
    pub fn stream_left_unread(&self, request: &[u8]) -> (BufReader<TcpStream>, String) {
        let stream = send(&self.rest, "POST", "/evaluate?stream=true", &[], request);
        let mut stream = BufReader::new(stream);
        let mut line = String::new();
        while line != "\r\n" {
            line.clear();
            stream.read_line(&mut line).expect("the response's head");
        }
        line.clear();
        stream
            .read_line(&mut line)
            .expect("a first line: the evaluation runs");
        (stream, line)
    }

    /// Send a one-test-case evaluation until it is answered 200 rather than 429 (a place among
    /// `--max-concurrent` has been freed), failing with `what` if none is freed within a minute.
    pub fn until_a_place_is_free(&self, what: &str) {
        let give_up = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let reply = self.request("POST", "/evaluate", &[], &capitals_request(1));
            if reply.status == 200 {
                return;
            }
            assert_eq!(
                reply.status,
                429,
                "{}",
                String::from_utf8_lossy(&reply.body)
            );
            assert!(std::time::Instant::now() < give_up, "{what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Send `kill -SIGNAL` to `child`.
pub fn signal(child: &Child, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// An HTTP response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    /// Header lines, lowercased names (`name: value`).
    pub headers: Vec<String>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&self.body)))
    }

    /// The value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key == name).then(|| value.trim())
        })
    }
}

/// Open a connection and send one request (`Connection: close`) without reading the answer.
pub fn send(address: &str, method: &str, path: &str, headers: &[&str], body: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(address).expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for header in headers {
        head.push_str(header);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    // A server that answers before reading the whole body (413) may close early.
    let _ = stream.write_all(body);
    stream
}

/// Read a whole response from `stream`.
pub fn read_reply(mut stream: TcpStream) -> Reply {
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_reply(raw)
}

/// Read a whole response from `stream`, calling `body_started` once, as soon as the first
/// bytes of the body have arrived (a streamed answer is then under way).
pub fn read_reply_telling_when_the_body_starts(
    mut stream: TcpStream,
    body_started: impl FnOnce(),
) -> Reply {
    let mut raw = Vec::new();
    let mut buffer = [0u8; 16 * 1024];
    let mut body_started = Some(body_started);
    while let Ok(read @ 1..) = stream.read(&mut buffer) {
        raw.extend_from_slice(&buffer[..read]);
        let head_end = raw.windows(4).position(|window| window == b"\r\n\r\n");
        if head_end.is_some_and(|end| raw.len() > end + 4) {
            if let Some(tell) = body_started.take() {
                tell();
            }
        }
    }
    parse_reply(raw)
}

/// A response's status, headers and (de-chunked) body.
pub fn parse_reply(raw: Vec<u8>) -> Reply {
    let split = raw
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end in {}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    let headers: Vec<String> = lines
        .map(|line| match line.split_once(':') {
            Some((name, value)) => format!("{}:{value}", name.to_ascii_lowercase()),
            None => line.to_string(),
        })
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers.iter().any(|h| h == "transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body,
    }
}

/// One request and its whole response, checked against the FEP document's schemas
/// ([`document::assert_conforms`]).
pub fn request(address: &str, method: &str, path: &str, headers: &[&str], body: &[u8]) -> Reply {
    let reply = read_reply(send(address, method, path, headers, body));
    document::assert_conforms(method, path, &reply);
    reply
}

fn dechunk(mut chunked: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let end = chunked
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("chunk size line");
        let size = usize::from_str_radix(std::str::from_utf8(&chunked[..end]).unwrap().trim(), 16)
            .expect("hex chunk size");
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&chunked[end + 2..end + 2 + size]);
        chunked = &chunked[end + 2 + size + 2..];
    }
}

/// A request of `n` test cases, each answered `Paris`, with the exact_match check of FEP's
/// capital-city example.
pub fn capitals_request(n: usize) -> Vec<u8> {
    let test_cases: Vec<serde_json::Value> = (0..n)
        .map(|i| serde_json::json!({"id": format!("t{i}"), "input": "What is the capital of France?", "expected": "Paris"}))
        .collect();
    let outputs: Vec<serde_json::Value> = (0..n)
        .map(|i| serde_json::json!({"value": if i % 2 == 0 { "Paris" } else { "Lyon" }}))
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "test_cases": test_cases,
        "outputs": outputs,
        "checks": [{"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "$.test_case.expected"}}]
    }))
    .unwrap()
}
