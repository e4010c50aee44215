//! How `serve` holds its connections, so that idle and slow clients cannot keep them open:
//! REST connections are served by hyper's HTTP/1 with a header-read timeout (`--idle-timeout`:
//! a connection that brings no complete request head in that time, idle between requests or
//! sending its head slowly, is closed), and gRPC connections are closed once nothing at all has
//! been read from them for `--idle-timeout` ([`Quiet`]; HTTP/2 pings keep a live client's
//! connection busy). SIGINT or SIGTERM stops accepting, and lets each connection finish the
//! request it is answering.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use axum::serve::Listener;
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::{Instant, Sleep};
use tonic::transport::server::{Connected, TcpConnectInfo};

/// Resolves once `stop` turns true.
pub async fn stopped(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|stop| *stop).await;
}

/// Serve `router` on `listener` until `stop` turns true, then wait for the connections to end.
pub async fn serve_rest(
    mut listener: TcpListener,
    router: Router,
    idle_timeout: Duration,
    stop: watch::Receiver<bool>,
) {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(idle_timeout);
    // Every connection holds a receiver: once all are gone, every connection has ended.
    let (open, connections) = watch::channel(());
    let mut stopping = std::pin::pin!(stopped(stop.clone()));
    loop {
        let stream = tokio::select! {
            (stream, _) = Listener::accept(&mut listener) => stream,
            () = &mut stopping => break,
        };
        let connection = http.serve_connection(
            TokioIo::new(stream),
            TowerToHyperService::new(router.clone()),
        );
        let (stop, open) = (stop.clone(), connections.clone());
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stopped(stop) => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            drop(open);
        });
    }
    drop((listener, connections));
    open.closed().await;
}

/// A gRPC connection that fails (and is closed) once nothing has been read from it for its idle
/// timeout.
pub struct Quiet {
    stream: TcpStream,
    idle_timeout: Duration,
    last_read: Instant,
    timer: Pin<Box<Sleep>>,
}

impl Quiet {
    /// `stream`, closed after `idle_timeout` without a byte read.
    pub fn new(stream: TcpStream, idle_timeout: Duration) -> Quiet {
        let last_read = Instant::now();
        Quiet {
            stream,
            idle_timeout,
            last_read,
            timer: Box::pin(tokio::time::sleep_until(last_read + idle_timeout)),
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
