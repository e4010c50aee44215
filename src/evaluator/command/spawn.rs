//! Starting a child: its payload written to a fresh stdin pipe before it runs, and the child
//! started with its process group guard, off the runtime thread when many run at once.

use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::process::Command;

use crate::process_group::GroupKiller;

/// The child's stdin: a fresh pipe holding as much of `payload` as it takes now (all of a
/// payload up to the pipe's capacity, 64 KiB by default on Linux), written before the child
/// starts so that it reads its payload, and the end of it, as soon as it runs, without waiting
/// for evalctl to be scheduled. The rest of a larger payload comes back with how much was
/// written, for writing once the child reads; the write end is closed at once when nothing is
/// left.
pub(super) fn prefilled_stdin(
    payload: &[u8],
) -> std::io::Result<(Stdio, Option<(tokio::net::unix::pipe::Sender, usize)>)> {
    let (reader, mut writer) = std::io::pipe()?;
    // Only the write end is non-blocking: the child reads its end as an ordinary stdin.
    let fd = std::os::fd::AsRawFd::as_raw_fd(&writer);
    // SAFETY: `fd` is the pipe's open write end, owned by `writer` for the whole call.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    let written = match std::io::Write::write(&mut writer, payload) {
        Ok(written) => written,
        Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => 0,
        Err(err) => return Err(err),
    };
    let unwritten = if written == payload.len() {
        None
    } else {
        let sender = tokio::net::unix::pipe::Sender::from_owned_fd_unchecked(writer.into())?;
        Some((sender, written))
    };
    Ok((Stdio::from(reader), unwritten))
}

/// Children of command evaluators running now, in the whole process.
static RUNNING: AtomicUsize = AtomicUsize::new(0);
/// From how many children running at once the next one is started off the runtime thread.
/// Starting a process holds its thread until the child has exec'd; with many calls in flight,
/// their answers wait meanwhile (at `-j 64` with a 50 ms evaluator that costs a fifth of the
/// run), while with few the hand-off to another thread costs more than it frees (about 5–9% of
/// a run of trivial `sh` evaluators at `-j 2` or `-j 8`).
const START_ELSEWHERE_FROM: usize = 16;

/// How many children the blocking pool starts at once: two, so that on a 2-core machine a wave of
/// calls ending together is started again on both cores. `runner::fd_limit` keeps descriptors
/// aside for their pipes.
const STARTS_AT_ONCE: usize = 2;

/// A started child, counted in [`RUNNING`] until dropped.
struct Running;

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Start `command` with its group guard (made as soon as the child exists, so a child whose call
/// was abandoned meanwhile is still killed): on this thread while few children run, else on a
/// thread of the blocking pool, [`STARTS_AT_ONCE`] at a time there.
pub(super) async fn start(
    mut command: Command,
) -> std::io::Result<(Started, tokio::process::Child)> {
    fn spawn(command: &mut Command) -> std::io::Result<(Started, tokio::process::Child)> {
        let child = command.spawn()?;
        RUNNING.fetch_add(1, Ordering::Relaxed);
        let started = Started {
            group: GroupKiller::new(child.id()),
            _running: Running,
        };
        Ok((started, child))
    }
    if RUNNING.load(Ordering::Relaxed) < START_ELSEWHERE_FROM {
        return spawn(&mut command);
    }
    static STARTING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(STARTS_AT_ONCE);
    let Ok(start_slot) = STARTING.acquire().await else {
        return Err(std::io::Error::other("evalctl is stopping"));
    };
    let spawned = tokio::task::spawn_blocking(move || {
        let _start_slot = start_slot;
        spawn(&mut command)
    })
    .await;
    match spawned {
        Ok(started) => started,
        Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
        Err(_) => Err(std::io::Error::other("evalctl is stopping")),
    }
}

/// A started child's guards: its process group, and its place in [`RUNNING`].
pub(super) struct Started {
    group: GroupKiller,
    _running: Running,
}

impl Started {
    /// Kill the child's whole process group now.
    pub(super) fn kill(&self) {
        self.group.kill();
    }
}
