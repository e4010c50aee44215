//! Running untrusted programs (model-written code) isolated from the user, the machine and evalctl.
//!
//! evalctl starts a fresh copy of itself in the internal launcher mode ([`run_launcher_if_asked`],
//! see [`launcher`]) with a [`Policy`]. That single-threaded launcher enters new user, mount, PID,
//! network, IPC and UTS namespaces, and its child (PID 1 of the new PID namespace) builds a root
//! of its own — the policy's read-only paths, a few device files and a private size-capped
//! writable work directory, nothing else (no home, no `/proc`, no results or cache files) — drops
//! every capability, sets resource limits and `no_new_privs`, restricts itself with Landlock where
//! the kernel offers it and a seccomp filter ([`seccomp`]), then executes the program. When that
//! child ends, the kernel kills everything the program started, however it detached itself.
//!
//! [`Sandbox::probe`] tells before any work whether the kernel allows all this; where it does not,
//! commands refuse to run untrusted code unless the user opts out with `--unsafe-code-exec`
//! ([`Isolation::None`]: the program runs as the user, with a scrubbed environment).
//!
//! The program's standard input, output and error are pipes, and two more pipes travel into it:
//! file descriptor 3 (written by the program: its verdict channel) and 4 (read by the program: a
//! one-time token). Neither is a file: nothing in the sandbox's file system carries them.

#[cfg(target_os = "linux")]
mod launcher;
#[cfg(target_os = "linux")]
mod seccomp;

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::process_group::{start_reaper, GroupKiller};
use crate::text::io_reason;

#[cfg(target_os = "linux")]
pub use launcher::run_launcher_if_asked;

/// Namespaces are Linux's: elsewhere evalctl never starts as the launcher.
#[cfg(not(target_os = "linux"))]
pub fn run_launcher_if_asked() -> Option<std::process::ExitCode> {
    None
}

/// The environment variable that starts evalctl as the sandbox launcher (internal; never set by
/// users). Its value is the [`Policy`] as JSON.
const LAUNCHER_MODE: &str = "EVALCTL_INTERNAL_SANDBOX";

/// The launcher's exit code when it could not build the sandbox (its reason is on the status
/// pipe).
const SETUP_FAILED: i32 = 125;

/// The file descriptor the program writes its verdict to.
pub const VERDICT_FD: i32 = 3;
/// The file descriptor the program reads its one-time token from.
pub const TOKEN_FD: i32 = 4;
/// The launcher's status pipe: empty when the program started, else why it did not.
const STATUS_FD: i32 = 5;

/// The directory a sandboxed program starts in, its only writable place (also `HOME` and
/// `TMPDIR`).
pub const WORK_DIR: &str = "/sandbox";

/// How untrusted code runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// In new namespaces with a private root, limits, Landlock and seccomp (the default).
    Namespaces,
    /// As the user, with a scrubbed environment only (`--unsafe-code-exec`).
    None,
}

impl Isolation {
    /// The word result lines record: `namespaces` or `none`.
    pub fn label(self) -> &'static str {
        match self {
            Isolation::Namespaces => "namespaces",
            Isolation::None => "none",
        }
    }
}

/// Resource limits of one sandboxed program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// CPU seconds (`RLIMIT_CPU`).
    pub cpu_seconds: u64,
    /// Address space in bytes (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// Processes and threads the program may add (`RLIMIT_NPROC`, over what its user already
    /// runs).
    pub processes: u64,
    /// The largest file it may write, in bytes (`RLIMIT_FSIZE`).
    pub file_bytes: u64,
    /// Open files (`RLIMIT_NOFILE`).
    pub open_files: u64,
    /// Size of the writable work directory, in bytes.
    pub work_dir_bytes: u64,
    /// Bytes of standard output and error together before the program is stopped.
    pub output_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            cpu_seconds: 30,
            memory_bytes: 1 << 30,
            processes: 32,
            file_bytes: 16 << 20,
            open_files: 64,
            work_dir_bytes: 32 << 20,
            output_bytes: 1 << 20,
        }
    }
}

/// Which limit ended a program, as result lines name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitHit {
    /// Wall-clock or CPU time.
    Timeout,
    /// The address-space limit (a `MemoryError`, or killed on allocation).
    MemoryLimit,
    /// Standard output and error over their cap.
    OutputLimit,
    /// No more processes or threads could start.
    ProcessLimit,
    /// The work directory is full, or a file over the size limit.
    DiskQuota,
}

impl LimitHit {
    /// The word in summaries and result lines.
    pub fn label(self) -> &'static str {
        match self {
            LimitHit::Timeout => "timeout",
            LimitHit::MemoryLimit => "memory_limit",
            LimitHit::OutputLimit => "output_limit",
            LimitHit::ProcessLimit => "process_limit",
            LimitHit::DiskQuota => "disk_quota",
        }
    }
}

/// What the launcher is told: what to run and how to confine it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Policy {
    /// The program, an absolute path (visible inside through [`Policy::read_only`]).
    program: PathBuf,
    /// Its arguments (after the program itself).
    args: Vec<String>,
    /// Its whole environment.
    env: Vec<(String, String)>,
    /// Host paths visible read-only at the same place inside.
    read_only: Vec<PathBuf>,
    /// Resource limits.
    limits: Limits,
}

/// A sandbox that runs one interpreter with its installation visible: reusable for any number of
/// programs, each in a fresh set of namespaces.
#[derive(Debug, Clone)]
pub struct Sandbox {
    isolation: Isolation,
    program: PathBuf,
    read_only: Vec<PathBuf>,
    env: Vec<(String, String)>,
    limits: Limits,
}

/// How one program ended.
#[derive(Debug)]
pub struct Finished {
    /// Its exit status (killed by a signal when a limit or evalctl stopped it).
    pub status: ExitStatus,
    /// The limit that stopped it, when one did.
    pub limit: Option<LimitHit>,
    /// The last bytes of its standard error (at most 4 KiB).
    pub stderr_tail: String,
    /// What it wrote to the verdict channel (at most 4 KiB).
    pub verdict: Vec<u8>,
}

impl Finished {
    /// The last line of standard error that is not blank.
    pub fn last_stderr_line(&self) -> Option<&str> {
        last_line(&self.stderr_tail)
    }
}

/// The last line of `text` that is not blank.
fn last_line(text: &str) -> Option<&str> {
    text.lines().rev().find(|line| !line.trim().is_empty())
}

/// Why the sandbox cannot be used here.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// The launcher could not build the sandbox (the reason it gave).
#[derive(Debug, thiserror::Error)]
#[error("the sandbox could not be built: {0}")]
pub struct SetupFailed(pub String);

/// The directories every program needs to start: the dynamic linker, libc and friends.
const SYSTEM_PATHS: [&str; 6] = ["/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"];

/// How much of standard error [`Finished::stderr_tail`] keeps.
const STDERR_TAIL: usize = 4096;

impl Sandbox {
    /// A sandbox for `program`, with `install` (its installation prefixes) readable beside the
    /// system's libraries, the environment `env` and `limits`.
    pub fn new(
        isolation: Isolation,
        program: PathBuf,
        install: &[PathBuf],
        env: Vec<(String, String)>,
        limits: Limits,
    ) -> Result<Sandbox, Refused> {
        if cfg!(not(target_os = "linux")) && isolation == Isolation::Namespaces {
            return Err(Refused(
                "it is built from Linux namespaces, and this system is not Linux".into(),
            ));
        }
        let mut read_only: Vec<PathBuf> = SYSTEM_PATHS
            .iter()
            .map(PathBuf::from)
            .filter(|path| path.symlink_metadata().is_ok())
            .collect();
        for path in install {
            if path.starts_with("/tmp") {
                return Err(Refused(format!(
                    "{} is under /tmp, which the sandbox builds its root in; install the \
                     interpreter elsewhere",
                    path.display()
                )));
            }
            if !read_only.iter().any(|known| path.starts_with(known)) {
                read_only.push(path.clone());
            }
        }
        Ok(Sandbox {
            isolation,
            program,
            read_only,
            env,
            limits,
        })
    }

    /// How this sandbox isolates.
    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// Its programs' resource limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Run `args` of the program once, to learn whether the kernel lets evalctl build the
    /// sandbox: `Err` names the cause (unprivileged user namespaces disabled, a container runtime
    /// that forbids mounts, …).
    pub fn probe(&self, args: &[&str]) -> Result<(), Refused> {
        let finished = self
            .run(args, b"", b"", Duration::from_secs(30))
            .map_err(|err| match err.downcast::<SetupFailed>() {
                Ok(SetupFailed(reason)) => Refused(reason),
                Err(err) => Refused(format!("{err:#}")),
            })?;
        if finished.status.success() && finished.limit.is_none() {
            return Ok(());
        }
        Err(Refused(format!(
            "a test program failed in it ({})",
            finished.last_stderr_line().unwrap_or("no output")
        )))
    }

    /// Run the program with `args`, `stdin` on its standard input and `token` on
    /// [`TOKEN_FD`], for at most `timeout`. `Err` is a failure of evalctl's side (the sandbox
    /// could not be built, a pipe failed); whatever the program did is in [`Finished`].
    pub fn run(
        &self,
        args: &[&str],
        stdin: &[u8],
        token: &[u8],
        timeout: Duration,
    ) -> anyhow::Result<Finished> {
        let (verdict_read, verdict_write) = std::io::pipe()?;
        let (token_read, mut token_write) = std::io::pipe()?;
        let (status_read, status_write) = std::io::pipe()?;
        // Without namespaces the program's work directory is a temporary directory of the
        // host's, removed when it ends.
        let mut work_dir = None;
        let mut command = match self.isolation {
            Isolation::Namespaces => {
                let policy = Policy {
                    program: self.program.clone(),
                    args: args.iter().map(|arg| arg.to_string()).collect(),
                    env: self.env.clone(),
                    read_only: self.read_only.clone(),
                    limits: self.limits,
                };
                let exe = std::env::current_exe().map_err(|err| {
                    anyhow::anyhow!(
                        "cannot find evalctl's own executable to start the sandbox: {}",
                        io_reason(&err)
                    )
                })?;
                let mut command = Command::new(exe);
                command
                    .env_clear()
                    .env(LAUNCHER_MODE, serde_json::to_string(&policy)?);
                command
            }
            Isolation::None => {
                let dir = work_dir.insert(scratch_dir()?);
                let mut command = Command::new(&self.program);
                command
                    .args(args)
                    .env_clear()
                    .envs(self.env.iter().map(|(name, value)| (name, value)))
                    .envs([("HOME", dir.path()), ("TMPDIR", dir.path())])
                    .current_dir(dir.path());
                command
            }
        };
        // The status pipe is the launcher's alone: an unsandboxed program does not get it.
        let mut passed = vec![
            (verdict_write.as_raw_fd(), VERDICT_FD),
            (token_read.as_raw_fd(), TOKEN_FD),
        ];
        if self.isolation == Isolation::Namespaces {
            passed.push((status_write.as_raw_fd(), STATUS_FD));
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // SAFETY: only fcntl and dup2 run between fork and exec, both async-signal-safe.
        unsafe {
            command.pre_exec(move || {
                // Each source is first copied above the targets, so placing one never
                // overwrites another not yet placed; dup2 clears close-on-exec on its copy.
                let mut high = [-1; 3];
                for (slot, &(from, _)) in high.iter_mut().zip(&passed) {
                    *slot = libc::fcntl(from, libc::F_DUPFD_CLOEXEC, 16);
                    if *slot < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                for (&copy, &(_, to)) in high.iter().zip(&passed) {
                    if libc::dup2(copy, to) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        start_reaper();
        let mut child = command.spawn().map_err(|err| {
            anyhow::anyhow!(
                "cannot start {}: {}",
                self.program.display(),
                io_reason(&err)
            )
        })?;
        let group = GroupKiller::new(Some(child.id()));
        drop((verdict_write, token_read, status_write));
        // The token is small: it fits the pipe, so this never waits for the program.
        let _ = token_write.write_all(token);
        drop(token_write);

        let input = child.stdin.take().map(|mut pipe| {
            let stdin = stdin.to_vec();
            std::thread::spawn(move || {
                let _ = pipe.write_all(&stdin);
            })
        });
        let output = Arc::new(Output {
            budget: AtomicU64::new(self.limits.output_bytes),
            over: AtomicBool::new(false),
            pgid: child.id(),
        });
        let (drained_tx, drained) = mpsc::channel();
        let pipes: [Option<Box<dyn Read + Send>>; 2] = [
            child.stderr.take().map(|pipe| Box::new(pipe) as _),
            child.stdout.take().map(|pipe| Box::new(pipe) as _),
        ];
        for (index, pipe) in pipes.into_iter().enumerate() {
            let (output, drained_tx) = (Arc::clone(&output), drained_tx.clone());
            if let Some(pipe) = pipe {
                std::thread::spawn(move || {
                    let _ = drained_tx.send((index, output.drain(pipe, index == 0)));
                });
            }
        }
        drop(drained_tx);

        let (done_tx, done_rx) = mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let status = child.wait();
            let _ = done_tx.send(());
            status
        });
        let started = Instant::now();
        let mut interrupted = false;
        let mut limit = None;
        loop {
            let left = timeout.saturating_sub(started.elapsed());
            match done_rx.recv_timeout(left.min(Duration::from_millis(50))) {
                Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if crate::interrupt::interrupt_requested() {
                interrupted = true;
                group.kill();
            } else if started.elapsed() >= timeout {
                limit = Some(LimitHit::Timeout);
                group.kill();
            }
        }
        let status = waiter
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        drop(group);
        if let Some(input) = input {
            let _ = input.join();
        }
        // In the sandbox the pipes close with the program. Without it, something the program
        // left running may hold them: what came within a second of its end is what counts.
        let mut stderr_tail = Vec::new();
        while let Ok((index, tail)) = drained.recv_timeout(Duration::from_secs(1)) {
            if index == 0 {
                stderr_tail = tail;
            }
        }
        if interrupted {
            return Err(crate::error::Fatal::Interrupted(
                "interrupted: the running sandboxed program was killed".into(),
            )
            .into());
        }
        let setup = String::from_utf8_lossy(&read_available(status_read)).into_owned();
        if !setup.is_empty() {
            return Err(SetupFailed(setup.trim_end().to_string()).into());
        }
        let verdict = read_available(verdict_read);
        let stderr_tail = String::from_utf8_lossy(&stderr_tail).into_owned();
        if limit.is_none() && output.over.load(Ordering::Relaxed) {
            limit = Some(LimitHit::OutputLimit);
        }
        let limit = limit.or_else(|| classify(status, &stderr_tail));
        Ok(Finished {
            status,
            limit,
            stderr_tail,
            verdict,
        })
    }
}

/// What a pipe holds once its writer has ended (at most 4 KiB), without waiting for a writer
/// that something the program left running may still hold open.
fn read_available(pipe: std::io::PipeReader) -> Vec<u8> {
    // SAFETY: fcntl on a descriptor this function owns.
    unsafe {
        let flags = libc::fcntl(pipe.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(pipe.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    let mut bytes = Vec::new();
    let _ = pipe.take(4096).read_to_end(&mut bytes);
    bytes
}

/// The program's standard output and error together, against the output limit.
struct Output {
    /// Bytes still allowed.
    budget: AtomicU64,
    /// Set once the program printed past the limit (its group is then killed).
    over: AtomicBool,
    /// The program's process group.
    pgid: u32,
}

impl Output {
    /// Read `pipe` to its end, counting its bytes against the budget (past it, the program's
    /// group is killed); the last [`STDERR_TAIL`] bytes when `keep`.
    fn drain(&self, mut pipe: Box<dyn Read + Send>, keep: bool) -> Vec<u8> {
        let mut tail = Vec::new();
        let mut buffer = [0u8; 8192];
        loop {
            let read = match pipe.read(&mut buffer) {
                Ok(0) => break,
                Ok(read) => read,
                Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let read_bytes = read as u64;
            let before = self
                .budget
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                    Some(left.saturating_sub(read_bytes))
                })
                .unwrap_or(0);
            if read_bytes > before && !self.over.swap(true, Ordering::Relaxed) {
                // SAFETY: killpg has no memory-safety preconditions.
                unsafe {
                    libc::killpg(self.pgid as libc::pid_t, libc::SIGKILL);
                }
            }
            if keep {
                tail.extend_from_slice(&buffer[..read]);
                if tail.len() > 2 * STDERR_TAIL {
                    tail.drain(..tail.len() - STDERR_TAIL);
                }
            }
        }
        if tail.len() > STDERR_TAIL {
            tail.drain(..tail.len() - STDERR_TAIL);
        }
        tail
    }
}

/// The limit a program's end points to: its signal (`SIGXCPU`: CPU time) or the error Python
/// printed last. The text is the program's own, so at worst it mislabels its own failure.
fn classify(status: ExitStatus, stderr: &str) -> Option<LimitHit> {
    if status.signal() == Some(libc::SIGXCPU) {
        return Some(LimitHit::Timeout);
    }
    let last = last_line(stderr)?;
    if last.starts_with("MemoryError") {
        Some(LimitHit::MemoryLimit)
    } else if last.contains("[Errno 11]") && last.contains("Resource temporarily unavailable")
        || last.contains("can't start new thread")
    {
        Some(LimitHit::ProcessLimit)
    } else if last.contains("[Errno 28]")
        || last.contains("[Errno 27]")
        || last.contains("[Errno 122]")
    {
        Some(LimitHit::DiskQuota)
    } else {
        None
    }
}

/// A fresh temporary directory for an unsandboxed program; a full or unwritable `$TMPDIR` is
/// evalctl's failure (exit 4), never the program's.
fn scratch_dir() -> anyhow::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("evalctl-code-")
        .tempdir()
        .map_err(|err| {
            crate::error::Fatal::Internal(format!(
                "cannot create a temporary directory in {} for code_exec: {}",
                std::env::temp_dir().display(),
                io_reason(&err)
            ))
            .into()
        })
}
