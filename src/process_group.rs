//! Killing a child's whole process group: a child spawned with `process_group(0)` leads a group of
//! its own, and [`GroupKiller`] sends that group `SIGKILL` on demand and when dropped, so a
//! timeout, an error or an early return never leaves the child or anything it started running.
//! When evalctl itself is killed outright (`kill -9`), no guard runs: [`die_with_parent`], run in
//! the child before it starts, has the kernel kill the child then (Linux).
//! Used by the command evaluator and the `code_exec` task runner.

/// Kills a child's whole process group when dropped.
#[derive(Debug)]
pub struct GroupKiller {
    pgid: Option<u32>,
}

impl GroupKiller {
    /// A guard for the group led by the child `pid` (`None`: a child without a pid, nothing to
    /// kill).
    pub fn new(pid: Option<u32>) -> Self {
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
    }
}

/// A `pre_exec` hook for a child of this process: on Linux, the kernel sends the child `SIGKILL`
/// when the thread that spawned it ends (the whole of evalctl, when it is killed), so an
/// evaluator does not outlive a killed evalctl; what the child starts itself is not covered.
/// Elsewhere it does nothing. It runs between `fork` and `exec`, so it makes only
/// async-signal-safe calls.
pub fn die_with_parent() -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
    let parent = std::process::id();
    move || {
        #[cfg(target_os = "linux")]
        // SAFETY: prctl and getppid are async-signal-safe and touch no memory of ours.
        unsafe {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // evalctl died before the request was in place: the signal would never come.
            if libc::getppid() as u32 != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = parent;
        Ok(())
    }
}
