//! Stopping early: Ctrl-C (SIGINT), a cancelled CI job (SIGTERM) and a closed terminal (SIGHUP)
//! all end a run the same way — calls in flight are dropped (command evaluators' process groups
//! are killed), what finished is kept and summarised, and the exit code is 130.

use std::future::Future;

use tokio::signal::unix::{signal, SignalKind};

/// Completes when SIGINT, SIGTERM or SIGHUP arrives.
pub async fn interruption() {
    let listen = |kind: SignalKind| async move {
        match signal(kind) {
            Ok(mut stream) => {
                stream.recv().await;
            }
            // Without a handler this signal keeps its default effect; wait on the others.
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = listen(SignalKind::interrupt()) => {}
        _ = listen(SignalKind::terminate()) => {}
        _ = listen(SignalKind::hangup()) => {}
    }
}

/// Run `future`, or return `None` when an interruption comes first (dropping the future, which
/// kills a command evaluator's process group).
pub async fn unless_interrupted<F: Future>(future: F) -> Option<F::Output> {
    tokio::select! {
        output = future => Some(output),
        _ = interruption() => None,
    }
}
