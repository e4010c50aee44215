//! Stopping early: Ctrl-C (SIGINT), a cancelled CI job (SIGTERM) and a closed terminal (SIGHUP)
//! all end a run the same way — calls in flight are dropped (command evaluators' process groups
//! are killed), what finished is kept and summarised, and the exit code is 130.
//!
//! A signal evalctl was started with ignored (`nohup`, a background job) stays ignored, and once
//! the runtime is gone the default actions are back, so a stuck write of the summary can still be
//! interrupted.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use tokio::signal::unix::{signal, SignalKind};

/// The signals that interrupt a run.
const SIGNALS: [(libc::c_int, fn() -> SignalKind); 3] = [
    (libc::SIGINT, SignalKind::interrupt),
    (libc::SIGTERM, SignalKind::terminate),
    (libc::SIGHUP, SignalKind::hangup),
];

/// Which of [`SIGNALS`] were ignored when evalctl started (read before any handler is set).
fn ignored_at_start() -> &'static [bool; 3] {
    static IGNORED: OnceLock<[bool; 3]> = OnceLock::new();
    IGNORED.get_or_init(|| SIGNALS.map(|(number, _)| is_ignored(number)))
}

fn is_ignored(number: libc::c_int) -> bool {
    // SAFETY: a zeroed sigaction is a valid out-parameter; a null new action only queries.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(number, std::ptr::null(), &mut current) == 0
            && current.sa_sigaction == libc::SIG_IGN
    }
}

/// Completes when SIGINT, SIGTERM or SIGHUP arrives (those not ignored at start).
pub async fn interruption() {
    let ignored = ignored_at_start();
    let listen = |index: usize| async move {
        let (_, kind) = SIGNALS[index];
        match (!ignored[index]).then(|| signal(kind())) {
            Some(Ok(mut stream)) => {
                stream.recv().await;
            }
            // Ignored, or no handler could be set: this signal keeps its effect; wait on others.
            _ => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = listen(0) => {}
        _ = listen(1) => {}
        _ = listen(2) => {}
    }
}

/// Run `future`, or return `None` when an interruption comes first (dropping the future, which
/// kills a command evaluator's process group). The signal handlers are in place before `future`
/// first runs.
pub async fn unless_interrupted<F: Future>(future: F) -> Option<F::Output> {
    tokio::select! {
        biased;
        _ = interruption() => None,
        output = future => Some(output),
    }
}

/// Set by [`note_signal`] when a signal arrives during synchronous work; read by
/// [`interrupt_requested`].
static REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn note_signal(_: libc::c_int) {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// For synchronous work with no runtime (`tasks score` running code): from now on the signals
/// (those not ignored at start) only set a flag that [`interrupt_requested`] reads, so the work can stop
/// its children and clean up.
pub fn catch_in_flag() {
    for ((number, _), ignored) in SIGNALS.iter().zip(ignored_at_start()) {
        if !ignored {
            // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
            unsafe {
                libc::signal(
                    *number,
                    note_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
                );
            }
        }
    }
}

/// Whether a signal arrived since [`catch_in_flag`].
pub fn interrupt_requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// Give the signals back their default actions (those not ignored at start): called when the
/// runtime that listened for them is gone.
pub fn restore_default_actions() {
    for ((number, _), ignored) in SIGNALS.iter().zip(ignored_at_start()) {
        if !ignored {
            // SAFETY: resetting a signal to its default action has no memory-safety preconditions.
            unsafe {
                libc::signal(*number, libc::SIG_DFL);
            }
        }
    }
}
