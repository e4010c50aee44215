//! Killing a child's whole process group: a child spawned with `process_group(0)` leads a group of
//! its own, and [`GroupKiller`] sends that group `SIGKILL` on demand and when dropped, so a
//! timeout, an error or an early return never leaves the child or anything it started running.
//!
//! When evalctl itself is killed outright (`kill -9`), no guard runs. For that, every group a
//! [`GroupKiller`] guards is also known to a *reaper*: a copy of evalctl started once (in the
//! internal mode [`run_reaper_if_asked`] serves) that holds the read end of a pipe, learns each
//! group as it starts and ends, and when the pipe closes — evalctl has gone, however it died —
//! kills the groups still running. Children are still started with `posix_spawn` (no hook runs
//! between fork and exec), which keeps spawning cheap at high concurrency.
//! Used by the command evaluator and the `code_exec` task runner.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::process::{ChildStdin, Command, ExitCode, Stdio};
use std::sync::{Mutex, OnceLock};

/// The environment variable that starts evalctl as the reaper (internal; never set by users).
const REAPER_MODE: &str = "EVALCTL_INTERNAL_REAPER";

/// Kills a child's whole process group when dropped.
#[derive(Debug)]
pub struct GroupKiller {
    pgid: Option<u32>,
}

impl GroupKiller {
    /// A guard for the group led by the child `pid` (`None`: a child without a pid, nothing to
    /// kill). The reaper learns of the group.
    pub fn new(pid: Option<u32>) -> Self {
        if let Some(pgid) = pid {
            tell_reaper(b'+', pgid);
        }
        GroupKiller { pgid: pid }
    }

    /// Send `SIGKILL` to every process of the group now. Harmless when the group is gone.
    pub fn kill(&self) {
        if let Some(pgid) = self.pgid {
            // SAFETY: killpg has no memory-safety preconditions; a stale group id yields ESRCH.
            unsafe {
                libc::killpg(pgid as libc::pid_t, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
        if let Some(pgid) = self.pgid {
            tell_reaper(b'-', pgid);
        }
    }
}

/// Start the reaper unless it runs already. Call it before spawning a child that a
/// [`GroupKiller`] will guard: the reaper then learns of the new group one pipe write after the
/// spawn, rather than after starting a process, so a `kill -9` of evalctl in between cannot leave
/// that group behind in practice.
pub fn start_reaper() {
    let _ = reaper();
}

/// The write end of the reaper's pipe, once started (`None`: it could not be started, and a
/// killed evalctl leaves its children running, as any program would).
fn reaper() -> &'static Mutex<Option<ChildStdin>> {
    static REAPER: OnceLock<Mutex<Option<ChildStdin>>> = OnceLock::new();
    REAPER.get_or_init(|| {
        let started = std::env::current_exe().and_then(|exe| {
            Command::new(exe)
                .env(REAPER_MODE, "1")
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
        });
        Mutex::new(started.ok().and_then(|mut child| child.stdin.take()))
    })
}

/// Tell the reaper that group `pgid` started (`+`) or ended (`-`). A reaper that is gone is
/// forgotten.
fn tell_reaper(what: u8, pgid: u32) {
    let Ok(mut pipe) = reaper().lock() else {
        return;
    };
    let mut message = [what, 0, 0, 0, 0];
    message[1..].copy_from_slice(&pgid.to_le_bytes());
    if pipe
        .as_mut()
        .is_some_and(|pipe| pipe.write_all(&message).is_err())
    {
        *pipe = None;
    }
}

/// In the reaper mode (evalctl started by [`GroupKiller`]'s first use), keep the set of running
/// groups from stdin until it closes, then kill the groups left, and return the exit code; `None`
/// in every normal start. Signals that stop evalctl (Ctrl-C reaches the whole foreground group)
/// are ignored here: the reaper ends only when evalctl has.
pub fn run_reaper_if_asked() -> Option<ExitCode> {
    std::env::var_os(REAPER_MODE)?;
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: ignoring a signal has no memory-safety preconditions.
        unsafe {
            libc::signal(signal, libc::SIG_IGN);
        }
    }
    let mut running = HashSet::new();
    let mut stdin = std::io::stdin().lock();
    let mut message = [0u8; 5];
    while stdin.read_exact(&mut message).is_ok() {
        let pgid = u32::from_le_bytes([message[1], message[2], message[3], message[4]]);
        match message[0] {
            b'+' => running.insert(pgid),
            _ => running.remove(&pgid),
        };
    }
    for pgid in running {
        // SAFETY: as in GroupKiller::kill.
        unsafe {
            libc::killpg(pgid as libc::pid_t, libc::SIGKILL);
        }
    }
    Some(ExitCode::SUCCESS)
}
