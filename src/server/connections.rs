//! How `serve` holds its connections, so that idle, slow and numerous clients cannot keep them
//! open or exhaust the server. Each connection's stream is [`Watched`], by a watch of its kind:
//! - REST connections are served by hyper's HTTP/1 with a header-read timeout (`--idle-timeout`:
//!   a connection that brings no complete request head in that time, idle between requests or
//!   sending its head slowly, is closed) and a request head of at most [`MAX_HEAD`] bytes (a
//!   larger one is answered 431 and the connection closed). A client that reads nothing of its
//!   answer for `--idle-timeout` is disconnected too ([`StalledWrites`]): the answer holds its
//!   share of `--max-memory` until it is written.
//! - gRPC connections are closed once no call has been in flight on them for `--idle-timeout`
//!   ([`CallWatch`], told of each call by [`CountCalls`]): HTTP/2 pings, which keep a live
//!   client's connection open during a long call, do not keep an idle one open. A call is in
//!   flight until its answer has been written, and an answer holds its share of `--max-memory`
//!   until then ([`HeldAnswer`]): a connection whose answers wait to be written while it writes
//!   less than [`MIN_PROGRESS`] in an `--idle-timeout` (a client that reads nothing, HTTP/2's
//!   flow control holding the answer back) is closed too.
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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
use tonic::transport::server::Connected;

use crate::report::Reporter;

/// The largest REST request head (request line and headers), in bytes: hyper answers a larger
/// one 431 and closes the connection. It is also the most a connection buffers of what it reads
/// (a body is read through that buffer, never held whole in it). gRPC's HTTP/2 header lists are
/// held to hyper's 16 KiB.
pub const MAX_HEAD: usize = 64 << 10;

/// The least a gRPC connection whose answers wait to be written must write in an
/// `--idle-timeout` to be kept open: one HTTP/2 frame of data at the default frame size (its
/// pings, and the answers to a client's, are 17 bytes each).
pub const MIN_PROGRESS: u64 = 16 << 10;

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
            TokioIo::new(Watched::rest(stream, idle_timeout)),
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

/// A connection's stream and what watches it ([`Watch`]): each read and write goes through the
/// watch, which may fail one, and the connection is then closed.
pub struct Watched<W> {
    stream: TcpStream,
    watch: W,
}

/// What watches a connection's reads and writes ([`Watched`]). Each method is given what a read,
/// write or flush came to (`Pending`: nothing to read yet, or the client's window is full), and
/// returns it or an error that closes the connection.
pub trait Watch: Unpin {
    fn read(&mut self, cx: &mut Context<'_>, read: Poll<io::Result<()>>) -> Poll<io::Result<()>>;
    fn wrote(
        &mut self,
        cx: &mut Context<'_>,
        written: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>>;
    fn flushed(
        &mut self,
        cx: &mut Context<'_>,
        flushed: Poll<io::Result<()>>,
    ) -> Poll<io::Result<()>>;
}

impl<W: Watch> AsyncRead for Watched<W> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let read = Pin::new(&mut this.stream).poll_read(cx, buf);
        this.watch.read(cx, read)
    }
}

impl<W: Watch> AsyncWrite for Watched<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let written = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.watch.wrote(cx, written)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let written = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.watch.wrote(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let flushed = Pin::new(&mut this.stream).poll_flush(cx);
        this.watch.flushed(cx, flushed)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// A REST connection's watch: it fails once what the connection writes has waited `limit` for
/// the client to read, so that a client that stops reading its answer cannot hold it, and its
/// share of `--max-memory`, for longer.
pub struct StalledWrites {
    limit: Duration,
    /// Running since a write first found the client's window full; gone once one goes through.
    waiting: Option<Pin<Box<Sleep>>>,
}

impl Watched<StalledWrites> {
    /// `stream`, closed once a write has waited `limit` for the client to read.
    fn rest(stream: TcpStream, limit: Duration) -> Self {
        let watch = StalledWrites {
            limit,
            waiting: None,
        };
        Watched { stream, watch }
    }
}

impl StalledWrites {
    /// `written`, or the error of a write that has waited `limit`: the timer wakes the
    /// connection's task, whose next write attempt then fails.
    fn within_limit<T>(
        &mut self,
        cx: &mut Context<'_>,
        written: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if written.is_ready() {
            self.waiting = None;
            return written;
        }
        let limit = self.limit;
        let waiting = (self.waiting).get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match waiting.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client read nothing of its answer within --idle-timeout",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Watch for StalledWrites {
    fn read(&mut self, _: &mut Context<'_>, read: Poll<io::Result<()>>) -> Poll<io::Result<()>> {
        read
    }

    fn wrote(
        &mut self,
        cx: &mut Context<'_>,
        written: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        self.within_limit(cx, written)
    }

    fn flushed(
        &mut self,
        cx: &mut Context<'_>,
        flushed: Poll<io::Result<()>>,
    ) -> Poll<io::Result<()>> {
        self.within_limit(cx, flushed)
    }
}

/// The gRPC calls in flight on one connection, and when the last one ended (or the connection
/// was accepted).
#[derive(Debug)]
pub struct Calls {
    in_flight: AtomicUsize,
    last_ended: std::sync::Mutex<Instant>,
    /// The parts of answers handed to HTTP/2 and not yet written.
    waiting: AtomicUsize,
}

impl Calls {
    /// When the connection has been idle for `idle_timeout` (no call in flight since the last
    /// one ended), or `None` while a call is in flight.
    fn idle_until(&self, idle_timeout: Duration) -> Option<Instant> {
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let last_ended = *self
            .last_ended
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        Some(last_ended + idle_timeout)
    }
}

/// A call in flight on a connection, from its request's head until its response's end.
struct CallInFlight(Arc<Calls>);

impl CallInFlight {
    fn start(calls: &Arc<Calls>) -> CallInFlight {
        calls.in_flight.fetch_add(1, Ordering::SeqCst);
        CallInFlight(Arc::clone(calls))
    }
}

impl Drop for CallInFlight {
    fn drop(&mut self) {
        *self
            .0
            .last_ended
            .lock()
            .unwrap_or_else(|poison| poison.into_inner()) = Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What a gRPC request learns of its connection (tonic puts it in the request's extensions):
/// where to count itself in flight.
#[derive(Debug, Clone)]
pub struct ConnectionCalls {
    calls: Arc<Calls>,
}

/// A gRPC connection's watch: it fails once no call has been in flight on the connection for its
/// idle timeout (bytes it reads, such as the answers to the server's pings, do not count), or
/// once answers have waited to be written for an idle timeout while it wrote less than
/// [`MIN_PROGRESS`]; it holds the connection's place among the open connections until it is
/// dropped.
pub struct CallWatch {
    idle_timeout: Duration,
    calls: Arc<Calls>,
    timer: Pin<Box<Sleep>>,
    /// The bytes written so far.
    written: u64,
    /// What had been written at the last look that found answers waiting to be written.
    written_at_look: Option<u64>,
    _place: OwnedSemaphorePermit,
}

impl Watched<CallWatch> {
    /// `stream`, closed after `idle_timeout` without a call in flight, holding `place`.
    pub fn grpc(stream: TcpStream, idle_timeout: Duration, place: OwnedSemaphorePermit) -> Self {
        let accepted = Instant::now();
        let watch = CallWatch {
            idle_timeout,
            calls: Arc::new(Calls {
                in_flight: AtomicUsize::new(0),
                last_ended: std::sync::Mutex::new(accepted),
                waiting: AtomicUsize::new(0),
            }),
            timer: Box::pin(tokio::time::sleep_until(accepted + idle_timeout)),
            written: 0,
            written_at_look: None,
            _place: place,
        };
        Watched { stream, watch }
    }
}

impl Watch for CallWatch {
    /// Nothing to read yet: the connection is looked at when its timer is up.
    fn read(&mut self, cx: &mut Context<'_>, read: Poll<io::Result<()>>) -> Poll<io::Result<()>> {
        if read.is_ready() {
            return read;
        }
        loop {
            ready!(self.timer.as_mut().poll(cx));
            let idle_timeout = self.idle_timeout;
            let next_look = match self.calls.idle_until(idle_timeout) {
                Some(idle_until) if Instant::now() >= idle_until => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no call within --idle-timeout",
                    )));
                }
                Some(idle_until) => idle_until,
                // A call in flight: looked at again an idle timeout from now.
                None => Instant::now() + idle_timeout,
            };
            // Answers that have waited to be written since the last look, while the connection
            // wrote too little: the client reads nothing of them.
            let written = self.written;
            match self.written_at_look {
                _ if self.calls.waiting.load(Ordering::SeqCst) == 0 => self.written_at_look = None,
                Some(before) if written - before < MIN_PROGRESS => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client read nothing of its answer within --idle-timeout",
                    )));
                }
                _ => self.written_at_look = Some(written),
            }
            self.timer.as_mut().reset(next_look);
        }
    }

    /// Counted.
    fn wrote(
        &mut self,
        _: &mut Context<'_>,
        written: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        if let Poll::Ready(Ok(bytes)) = written {
            self.written += bytes as u64;
        }
        written
    }

    fn flushed(
        &mut self,
        _: &mut Context<'_>,
        flushed: Poll<io::Result<()>>,
    ) -> Poll<io::Result<()>> {
        flushed
    }
}

impl Connected for Watched<CallWatch> {
    type ConnectInfo = ConnectionCalls;

    fn connect_info(&self) -> ConnectionCalls {
        ConnectionCalls {
            calls: Arc::clone(&self.watch.calls),
        }
    }
}

/// What a gRPC answer is made of (the stored document, with its share of `--max-memory`): a
/// handler puts it in its response's extensions, and the answer holds it until it has been
/// written.
#[derive(Clone)]
pub struct HeldAnswer(pub tonic::codegen::Bytes);

/// The layer over serve's gRPC routes that counts each call in flight on its connection (see
/// [`CallWatch`]), from its request's head until its answer has been written, or its connection
/// closed.
#[derive(Debug, Clone, Copy)]
pub struct CountCalls;

impl<S> tower_layer::Layer<S> for CountCalls {
    type Service = Counted<S>;

    fn layer(&self, inner: S) -> Counted<S> {
        Counted(inner)
    }
}

/// A service whose calls [`CountCalls`] counts.
#[derive(Debug, Clone)]
pub struct Counted<S>(S);

impl<S, B> tonic::codegen::Service<tonic::codegen::http::Request<B>> for Counted<S>
where
    S: tonic::codegen::Service<
        tonic::codegen::http::Request<B>,
        Response = tonic::codegen::http::Response<tonic::body::Body>,
    >,
    S::Future: Send + 'static,
{
    type Response = tonic::codegen::http::Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: tonic::codegen::http::Request<B>) -> Self::Future {
        let call = (request.extensions().get::<ConnectionCalls>())
            .map(|info| CallInFlight::start(&info.calls));
        let answered = self.0.call(request);
        Box::pin(async move {
            let mut response = answered.await?;
            let document = (response.extensions_mut().remove::<HeldAnswer>())
                .map(|HeldAnswer(document)| document);
            Ok(match call {
                Some(call) => response.map(|body| {
                    let held = Arc::new(Held {
                        call,
                        _document: document,
                    });
                    tonic::body::Body::new(Counting { body, held })
                }),
                None => response,
            })
        })
    }
}

/// What an answer holds until it has been written or its connection closed: its call in flight
/// and what it was made of.
struct Held {
    call: CallInFlight,
    _document: Option<tonic::codegen::Bytes>,
}

/// A response body whose parts each hold its [`Held`] until they have been written (HTTP/2 drops
/// a part once it has written it), and count among their connection's answers waiting.
struct Counting {
    body: tonic::body::Body,
    held: Arc<Held>,
}

/// A part of an answer handed to HTTP/2.
struct Waiting {
    part: tonic::codegen::Bytes,
    held: Arc<Held>,
}

impl Waiting {
    fn start(part: tonic::codegen::Bytes, held: &Arc<Held>) -> tonic::codegen::Bytes {
        held.call.0.waiting.fetch_add(1, Ordering::SeqCst);
        tonic::codegen::Bytes::from_owner(Waiting {
            part,
            held: Arc::clone(held),
        })
    }
}

impl AsRef<[u8]> for Waiting {
    fn as_ref(&self) -> &[u8] {
        &self.part
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.held.call.0.waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

impl http_body::Body for Counting {
    type Data = tonic::codegen::Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let frame = ready!(Pin::new(&mut self.body).poll_frame(cx));
        let held = &self.held;
        Poll::Ready(
            frame.map(|frame| frame.map(|frame| frame.map_data(|part| Waiting::start(part, held)))),
        )
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
