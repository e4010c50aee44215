//! The one loopback HTTP/1.1 server of the tests and benchmarks: `127.0.0.1:0`, std
//! `TcpListener`, one thread per connection, keep-alive. Each user scripts its answers with a
//! responder (`Fn(&Request, n) -> Reply`); every request is recorded (headers, body, arrival time,
//! connection) and connections are counted, so keep-alive reuse can be asserted. The HTTP
//! evaluator tests, the fake LLM judge (`tests/judge_support`) and `benches/throughput.rs` all
//! use it. Threads are left running when a server is dropped: the process ends soon after.
//!
//! This file depends on std only, so a bench can include it with `#[path]`.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
        header_value(&self.headers, name)
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

    /// The bytes on the wire: status line, headers (`Content-Type: application/json` unless set),
    /// `Content-Length`, body.
    fn to_bytes(&self) -> Vec<u8> {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Length: {}\r\n",
            self.status,
            reason(self.status),
            self.body.len()
        );
        if header_value(&self.headers, "content-type").is_none() {
            head.push_str("Content-Type: application/json\r\n");
        }
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

type Responder = dyn Fn(&Request, usize) -> Reply + Send + Sync;

struct ServerState {
    requests: Mutex<Vec<Request>>,
    served: AtomicUsize,
    connections: AtomicUsize,
    responder: Box<Responder>,
}

/// A scriptable HTTP/1.1 server on `127.0.0.1:0`.
pub struct Server {
    port: u16,
    state: Arc<ServerState>,
}

impl Server {
    /// Start a server answering each request with `responder(request, n)`, `n` being the 0-based
    /// number of the request in arrival order.
    pub fn start(responder: impl Fn(&Request, usize) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("a bound address").port();
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

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.state.requests.lock().expect("lock").clone()
    }

    /// How many requests arrived.
    pub fn request_count(&self) -> usize {
        self.state.requests.lock().expect("lock").len()
    }

    /// How many TCP connections were accepted.
    pub fn connection_count(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }
}

/// A URL on 127.0.0.1 where nothing listens (a port bound then released).
pub fn refused_url(path: &str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("a bound address").port();
    drop(listener);
    format!("http://127.0.0.1:{port}{path}")
}

/// One HTTP/1.1 message as read off a connection: the start line (request or status line),
/// headers in arrival order, and a `Content-Length` body.
pub struct Message {
    /// `POST /score HTTP/1.1` or `HTTP/1.1 200 OK`.
    pub start_line: String,
    /// Headers in arrival order (names as sent).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// Read one HTTP/1.1 message (request or response); `None` at end of stream or on a malformed one.
pub fn read_message(reader: &mut impl BufRead) -> Option<Message> {
    let mut start_line = String::new();
    if reader.read_line(&mut start_line).ok()? == 0 {
        return None;
    }
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let length = header_value(&headers, "content-length")
        .and_then(|value| value.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Message {
        start_line: start_line.trim_end().to_string(),
        headers,
        body,
    })
}

fn header_value<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_str())
}

fn serve_connection(stream: TcpStream, connection: usize, state: &ServerState) {
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader, connection) {
        let index = state.served.fetch_add(1, Ordering::SeqCst);
        state.requests.lock().expect("lock").push(request.clone());
        let reply = (state.responder)(&request, index);
        if !reply.delay.is_zero() {
            std::thread::sleep(reply.delay);
        }
        if reply.hang_up {
            let _ = writer.shutdown(std::net::Shutdown::Both);
            return;
        }
        // One write per response (no Nagle / delayed-ACK stall between head and body).
        if writer.write_all(&reply.to_bytes()).is_err() || writer.flush().is_err() {
            return;
        }
    }
}

fn read_request(reader: &mut impl BufRead, connection: usize) -> Option<Request> {
    let message = read_message(reader)?;
    let mut parts = message.start_line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    Some(Request {
        method,
        path,
        headers: message.headers,
        body: message.body,
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
