//! Stopping early: Ctrl-C (SIGINT), a cancelled CI job (SIGTERM) and a closed terminal (SIGHUP)
//! all end a run the same way — calls in flight are dropped (command evaluators' process groups
//! are killed), what finished is kept and summarised, and the exit code is 130.
//!
//! A signal evalctl was started with ignored (`nohup`, a background job) stays ignored. Once a
//! run's runtime is gone, the signals only set a flag ([`catch_in_flag`]) until the process ends:
//! a signal while the summary and reports are written lets them be written whole, and the run
//! then exits 130.
//!
//! Reading that may block (a large dataset, a FIFO with no writer yet, a pipe held open) must not
//! outlast a signal: [`read_interruptibly`] and [`unless_interrupted_blocking`] run it on a thread
//! of its own while the calling thread waits for its result or a signal, whichever comes first; a
//! reader that streams on the calling thread wraps its source in [`InterruptibleRead`], whose
//! blocked `read` gives up when a signal caught by [`catch_in_flag`] interrupts it.
//!
//! A write past the file size limit (`ulimit -f`) does not stop evalctl either
//! ([`catch_file_size_limit`]): it fails like a full disk, and is reported as such.

use std::future::Future;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::signal::unix::{signal, SignalKind};

use crate::error::Fatal;

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

/// Catch SIGXFSZ with a handler that does nothing, so that a write past the file size limit
/// (`ulimit -f`) fails with `EFBIG` (a results write that fails: exit 4, what finished kept)
/// instead of killing evalctl mid-line. A caught signal is reset to its default in the programs
/// evalctl starts; one ignored at start stays ignored.
pub fn catch_file_size_limit() {
    extern "C" fn write_fails(_: libc::c_int) {}
    if is_ignored(libc::SIGXFSZ) {
        return;
    }
    // SAFETY: the handler does nothing, so it is async-signal-safe; a zeroed sigaction with
    // its handler set and an empty mask is a valid action.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = write_fails as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGXFSZ, &action, std::ptr::null_mut());
    }
}

/// Which signal interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    /// SIGINT (Ctrl-C): a run lets its calls in flight finish, unless it comes again.
    CtrlC,
    /// SIGTERM or SIGHUP: stop now.
    Stop,
}

/// Completes when SIGINT, SIGTERM or SIGHUP arrives (those not ignored at start).
pub async fn interruption() {
    interruption_of_kind().await;
}

/// Like [`interruption`], saying which kind arrived. Only signals that arrive after the first
/// poll count.
pub async fn interruption_of_kind() -> Interruption {
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
        _ = listen(0) => Interruption::CtrlC,
        _ = listen(1) => Interruption::Stop,
        _ = listen(2) => Interruption::Stop,
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

/// For synchronous work with no runtime (`tasks score` running code, the inputs being read): from
/// now on the signals (those not ignored at start) only set a flag that [`interrupt_requested`]
/// reads, so the work can stop its children and clean up. A system call they interrupt is not
/// restarted: it fails with `EINTR` (std retries its own, [`InterruptibleRead`] gives up).
pub fn catch_in_flag() {
    for ((number, _), ignored) in SIGNALS.iter().zip(ignored_at_start()) {
        if !ignored {
            // SAFETY: a zeroed sigaction with an empty mask is valid; the handler only stores to
            // an atomic, which is async-signal-safe.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction =
                    note_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(*number, &action, std::ptr::null_mut());
            }
        }
    }
}

/// A reader whose `read` fails with [`io::ErrorKind::Other`] "interrupted" once a signal caught
/// by [`catch_in_flag`] has arrived, also when the signal comes while it is blocked (`BufRead`
/// retries the plain `Interrupted` kind, so the wait would go on).
pub struct InterruptibleRead<R>(pub R);

impl<R: Read> Read for InterruptibleRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if interrupt_requested() {
                return Err(io::Error::other("interrupted"));
            }
            match self.0.read(buf) {
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                read => return read,
            }
        }
    }
}

/// Whether a signal arrived since [`catch_in_flag`].
pub fn interrupt_requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// Forget a signal already acted on (it stopped `tasks run`'s generation), so that the work that
/// follows (scoring what was generated, which may run code) stops only for a signal of its own.
pub fn forget_request() {
    REQUESTED.store(false, Ordering::SeqCst);
}

/// How often a thread waiting for a reader looks at the signal flag.
const SIGNAL_POLL: Duration = Duration::from_millis(10);

/// Run `work` on a thread of its own and return what it gives, or `None` when a signal caught by
/// [`catch_in_flag`] comes first (the thread is left blocked wherever it is until the process
/// ends; a result that arrives with a signal counts as interrupted).
pub fn unless_interrupted_blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (sender, receiver) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    while !interrupt_requested() {
        match receiver.recv_timeout(SIGNAL_POLL) {
            Ok(_) if interrupt_requested() => break,
            Ok(output) => return Some(output),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => match worker.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!("the worker sends its result before it ends"),
            },
        }
    }
    None
}

/// Run `read` on a thread of its own and return what it gives, unless SIGINT, SIGTERM or SIGHUP
/// comes first: then [`interrupted_reading`]. The signals get their default actions back
/// afterwards.
pub fn read_interruptibly<T: Send + 'static>(
    read: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    catch_in_flag();
    let read = unless_interrupted_blocking(read);
    restore_default_actions();
    read.unwrap_or_else(|| Err(interrupted_reading()))
}

/// The error of a command stopped while it read its inputs (exit 130).
pub fn interrupted_reading() -> anyhow::Error {
    Fatal::Interrupted("interrupted while reading inputs: nothing was evaluated".to_string()).into()
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
