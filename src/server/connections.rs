//! How `serve` holds its connections, so that idle, slow and numerous clients cannot keep them
//! open or exhaust the server:
//! - REST connections are served by hyper's HTTP/1 with a header-read timeout (`--idle-timeout`:
//!   a connection that brings no complete request head in that time, idle between requests or
//!   sending its head slowly, is closed) and a request head of at most [`MAX_HEAD`] bytes (a
//!   larger one is answered 431 and the connection closed).
//! - gRPC connections are closed once nothing at all has been read from them for
//!   `--idle-timeout` ([`Quiet`]; HTTP/2 pings keep a live client's connection busy).
//! - Both listeners together hold at most `--max-connections` connections open
//!   ([`Connections`]): each connection holds a place for its life, and a listener that has
//!   accepted one more waits for a place to free before it serves it or accepts another (so
//!   further clients wait in the kernel's queue; those already connected are answered).
//!
//! SIGINT or SIGTERM stops accepting, and lets each connection finish the request it is
//! answering.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use axum::serve::Listener;
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};
use tonic::transport::server::{Connected, TcpConnectInfo};

use crate::report::Reporter;

/// The largest REST request head (request line and headers), in bytes: hyper answers a larger
/// one 431 and closes the connection. It is also the most a connection buffers of what it reads
/// (a body is read through that buffer, never held whole in it). gRPC's HTTP/2 header lists are
/// held to hyper's 16 KiB.
pub const MAX_HEAD: usize = 64 << 10;

/// The places for open connections that both listeners share (`--max-connections`).
#[derive(Clone)]
pub struct Connections {
    places: Arc<Semaphore>,
    max: usize,
    /// Whether the operator has been told that the limit was reached (once: a client that keeps
    /// the server at its limit must not fill its log).
    told: Arc<AtomicBool>,
    reporter: Reporter,
}

impl Connections {
    /// At most `max` connections open at once; the first time a connection has to wait for a
    /// place, `reporter` says so.
    pub fn new(max: usize, reporter: Reporter) -> Connections {
        Connections {
            places: Arc::new(Semaphore::new(max)),
            max,
            told: Arc::new(AtomicBool::new(false)),
            reporter,
        }
    }

    /// A place for a connection just accepted, held for the connection's life: at once when
    /// fewer than `--max-connections` are open, else once one of them closes.
    pub async fn place(&self) -> OwnedSemaphorePermit {
        if let Ok(place) = Arc::clone(&self.places).try_acquire_owned() {
            return place;
        }
        if !self.told.swap(true, Ordering::Relaxed) {
            self.reporter.note(format!(
                "{} connections are open (--max-connections): new connections wait until one \
                 closes",
                self.max
            ));
        }
        loop {
            // The semaphore is never closed.
            if let Ok(place) = Arc::clone(&self.places).acquire_owned().await {
                return place;
            }
        }
    }
}

/// Resolves once `stop` turns true.
pub async fn stopped(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|stop| *stop).await;
}

/// Serve `router` on `listener` until `stop` turns true, then wait for the connections to end,
/// each for `drain_limit` at most (a client that stops reading its response would otherwise
/// hold the server up for as long as it likes). Each connection takes a place among
/// `connections` first.
pub async fn serve_rest(
    mut listener: TcpListener,
    router: Router,
    idle_timeout: Duration,
    drain_limit: Duration,
    connections: Connections,
    stop: watch::Receiver<bool>,
) {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(idle_timeout)
        .max_header_size(MAX_HEAD)
        .max_buf_size(MAX_HEAD);
    // Every connection holds a receiver: once all are gone, every connection has ended.
    let (open, opened) = watch::channel(());
    let mut stopping = std::pin::pin!(stopped(stop.clone()));
    loop {
        let stream = tokio::select! {
            (stream, _) = Listener::accept(&mut listener) => stream,
            () = &mut stopping => break,
        };
        // Nothing more is accepted until this connection has its place.
        let place = tokio::select! {
            place = connections.place() => place,
            () = &mut stopping => break,
        };
        let connection = http.serve_connection(
            TokioIo::new(stream),
            TowerToHyperService::new(router.clone()),
        );
        let (stop, open) = (stop.clone(), opened.clone());
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stopped(stop) => {
                    connection.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(drain_limit, connection).await;
                }
            }
            drop((open, place));
        });
    }
    drop((listener, opened));
    open.closed().await;
}

/// A gRPC connection that fails (and is closed) once nothing has been read from it for its idle
/// timeout; it holds its place among the open connections until it is dropped.
pub struct Quiet {
    stream: TcpStream,
    idle_timeout: Duration,
    last_read: Instant,
    timer: Pin<Box<Sleep>>,
    _place: OwnedSemaphorePermit,
}

impl Quiet {
    /// `stream`, closed after `idle_timeout` without a byte read, holding `place`.
    pub fn new(stream: TcpStream, idle_timeout: Duration, place: OwnedSemaphorePermit) -> Quiet {
        let last_read = Instant::now();
        Quiet {
            stream,
            idle_timeout,
            last_read,
            timer: Box::pin(tokio::time::sleep_until(last_read + idle_timeout)),
            _place: place,
        }
    }
}

impl AsyncRead for Quiet {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        if let Poll::Ready(read) = Pin::new(&mut self.stream).poll_read(cx, buf) {
            if buf.filled().len() > before {
                self.last_read = Instant::now();
            }
            return Poll::Ready(read);
        }
        loop {
            ready!(self.timer.as_mut().poll(cx));
            let quiet_until = self.last_read + self.idle_timeout;
            if Instant::now() >= quiet_until {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "nothing read within --idle-timeout",
                )));
            }
            self.timer.as_mut().reset(quiet_until);
        }
    }
}

impl AsyncWrite for Quiet {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

impl Connected for Quiet {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.stream.connect_info()
    }
}
