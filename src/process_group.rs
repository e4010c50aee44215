//! Killing a child's whole process group: a child spawned with `process_group(0)` leads a group of
//! its own, and [`GroupKiller`] sends that group `SIGKILL` on demand and when dropped, so a
//! timeout, an error or an early return never leaves the child or anything it started running.
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
