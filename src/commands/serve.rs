//! `evalctl serve`: bind both listeners, open the store, serve the REST API and the gRPC services
//! over one engine until SIGINT or SIGTERM, then let the work in flight finish.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_stream::wrappers::TcpListenerStream;
use tokio_stream::StreamExt;

use crate::error::{bad_flag, Fatal};
use crate::exit::Exit;
use crate::report::Reporter;
use crate::server::{auth, connections, engine, grpc, operations, rest, store, ServeConfig};

/// Serve until SIGINT or SIGTERM; exit 0 after a graceful shutdown.
pub fn serve(config: ServeConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    let loopback_only = config.token_env.is_none() && !config.allow_unauthenticated_remote;
    if loopback_only {
        refuse_remote(config.listen, "--listen")?;
        refuse_remote(config.grpc_listen, "--grpc-listen")?;
    }
    let token = config
        .token_env
        .as_deref()
        .map(auth::Token::from_env)
        .transpose()?;
    if let (Some(token), Some(name)) = (&token, &config.token_env) {
        crate::secrets::hold_env(name);
        if let Some(warning) = token.weakness(name) {
            reporter.warning(warning);
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("evalctl-serve")
        .build()
        .map_err(|err| Fatal::Internal(format!("cannot start the server runtime: {err}")))?;
    runtime.block_on(async {
        let rest_listener = bind(config.listen, "--listen").await?;
        let grpc_listener = bind(config.grpc_listen, "--grpc-listen").await?;
        let db = config.db.clone().unwrap_or_else(store::default_path);
        let retain = config
            .retain_days
            .map(|days| Duration::from_secs(u64::from(days) * 86_400));
        let store = store::Store::open(&db, retain)?;
        let unset_keys: Vec<String> = (config.checks.allowed_endpoints.iter())
            .inspect(|endpoint| endpoint.hold_key())
            .filter_map(crate::checks::AllowedEndpoint::unset_key)
            .collect();
        let engine = Arc::new(engine::Engine::new(
            store,
            config.limits,
            token,
            loopback_only,
            config.checks,
        )?);
        let signals = StopSignals::catch()?;
        let (stop, stopped) = watch::channel(false);
        let (max_connections, limited) = crate::runner::connections_open(config.max_connections);
        if let Some(warning) = limited {
            reporter.warning(warning);
        }
        for warning in unset_keys {
            reporter.warning(warning);
        }
        reporter.note(format!("database {}", db.display()));
        reporter.note(format!(
            "REST listening on http://{}",
            local_addr(&rest_listener)?
        ));
        reporter.note(format!(
            "gRPC listening on http://{}",
            local_addr(&grpc_listener)?
        ));
        let idle = config.idle_timeout;
        let open = connections::Connections::new(max_connections, reporter);
        let rest = connections::serve_rest(
            rest_listener,
            rest::router(Arc::clone(&engine)),
            idle,
            // A request in flight is answered within --request-timeout; its answer is then
            // written to a client that reads it.
            config.limits.request_timeout + idle,
            open.clone(),
            stopped.clone(),
        );
        // As over REST, nothing more is accepted until a connection has its place.
        let grpc_connections = TcpListenerStream::new(grpc_listener).then(move |accepted| {
            let open = open.clone();
            async move {
                let stream = accepted?;
                Ok::<_, std::io::Error>(connections::Watched::grpc(
                    stream,
                    idle,
                    open.place().await,
                ))
            }
        });
        // A live client answers the pings sent every half idle timeout (a dead one, in a long
        // call, is found out); a connection with no call in flight for the idle timeout is
        // closed; a call is cancelled past the time its message and its evaluation may take.
        let grpc = tonic::transport::Server::builder()
            .http2_keepalive_interval(Some(idle / 2))
            .http2_keepalive_timeout(Some(idle / 2))
            .timeout(config.limits.body_timeout + config.limits.request_timeout)
            .layer(connections::CountCalls)
            .add_service(grpc::service(Arc::clone(&engine)))
            .add_service(operations::service(Arc::clone(&engine)))
            .serve_with_incoming_shutdown(grpc_connections, connections::stopped(stopped));
        let signal = async {
            let signal = signals.next().await;
            let _ = stop.send(true);
            signal
        };
        let ((), grpc, signal) = tokio::join!(rest, grpc, signal);
        grpc.map_err(|err| Fatal::Internal(format!("the gRPC server failed: {err}")))?;
        // The evaluations of operations (StartEvaluation) were acknowledged too: they finish.
        let running = engine.evaluations_running();
        if running > 0 {
            let plural = if running == 1 { "" } else { "s" };
            reporter.note(format!(
                "{signal}: waiting for {running} evaluation{plural} still running"
            ));
            engine.drained().await;
        }
        reporter.note(format!("{signal}: stopped after the requests in flight"));
        Ok::<_, anyhow::Error>(())
    })?;
    drop(runtime);
    Ok(Exit::Success)
}

/// Refuse to serve `addr` (given with `flag`) without a token unless it is a loopback address.
fn refuse_remote(addr: SocketAddr, flag: &str) -> anyhow::Result<()> {
    if addr.ip().to_canonical().is_loopback() {
        return Ok(());
    }
    Err(bad_flag(
        flag,
        format!(
            "{addr} is not a loopback address, and without a token anyone who can reach it \
             could run evaluations: require one with --token-env NAME, or serve it without one \
             with --allow-unauthenticated-remote"
        ),
    ))
}

async fn bind(addr: SocketAddr, flag: &str) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .map_err(|err| bad_flag(flag, format!("cannot listen on {addr}: {err}")))
}

fn local_addr(listener: &TcpListener) -> anyhow::Result<SocketAddr> {
    listener
        .local_addr()
        .map_err(|err| Fatal::Internal(format!("cannot read the bound address: {err}")).into())
}

/// SIGINT and SIGTERM, caught from the moment this is made: made before the listening lines are
/// printed, so that a supervisor that stops the server as soon as it reads them stops it
/// gracefully.
struct StopSignals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn catch() -> anyhow::Result<StopSignals> {
        use tokio::signal::unix::{signal, SignalKind};
        let listen = |kind| {
            signal(kind).map_err(|err| Fatal::Internal(format!("cannot handle signals: {err}")))
        };
        Ok(StopSignals {
            interrupt: listen(SignalKind::interrupt())?,
            terminate: listen(SignalKind::terminate())?,
        })
    }

    /// Wait for SIGINT or SIGTERM; the signal's name.
    async fn next(mut self) -> &'static str {
        tokio::select! {
            _ = self.interrupt.recv() => "SIGINT",
            _ = self.terminate.recv() => "SIGTERM",
        }
    }
}
