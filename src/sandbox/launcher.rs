//! The sandbox launcher: the internal mode of evalctl that [`super::Sandbox::run`] starts with a
//! [`Policy`]. It runs single-threaded in a fresh process, so it may enter namespaces, mount and
//! fork freely (none of which is sound in evalctl's own threaded process).
//!
//! The launcher enters new user, mount, PID, network, IPC and UTS namespaces and forks the
//! program's parent-to-be, PID 1 of the new PID namespace, which builds the root, confines itself
//! and executes the program. The launcher waits and ends as the program ended. Any step that fails
//! writes its reason to the status pipe and ends with [`SETUP_FAILED`]; the status pipe is
//! close-on-exec, so it stays empty once the program runs.

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use nix::mount::{mount, umount2, MntFlags, MsFlags};
use nix::sched::{unshare, CloneFlags};
use nix::sys::resource::{setrlimit, Resource};
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{
    chdir, execve, fork, getgid, getuid, pivot_root, setgroups, sethostname, setresgid, setresuid,
    ForkResult, Gid, Uid,
};

use super::{Policy, LAUNCHER_MODE, SETUP_FAILED, STATUS_FD, TOKEN_FD, VERDICT_FD, WORK_DIR};

/// The user and group a sandbox started by root runs as, seen from outside (`nobody`,
/// `nogroup`): unprivileged, so the process limit applies to it.
const NOBODY: u32 = 65534;

/// Where the new root is built before it becomes `/` (a mount point in the private mount
/// namespace only; the host's directory is not touched).
const BUILD_AT: &str = "/tmp";

/// Device files the program may use.
const DEVICES: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"];

/// In the launcher mode (evalctl started by [`super::Sandbox::run`]), build the sandbox and run
/// the program in it, and return the exit code; `None` in every normal start.
pub fn run_launcher_if_asked() -> Option<ExitCode> {
    let policy = std::env::var(LAUNCHER_MODE).ok()?;
    let failure = match serde_json::from_str::<Policy>(&policy) {
        Ok(policy) => launch(&policy),
        Err(err) => format!("unreadable sandbox policy: {err}"),
    };
    report(&failure);
    Some(ExitCode::from(SETUP_FAILED as u8))
}

/// Write why the sandbox could not be built to the status pipe.
fn report(failure: &str) {
    // SAFETY: STATUS_FD was handed to this process for this write; ManuallyDrop keeps it open
    // for the forked child's copy of this function.
    let mut status = std::mem::ManuallyDrop::new(unsafe { File::from_raw_fd(STATUS_FD) });
    let _ = status.write_all(failure.as_bytes());
}

/// Everything the launcher needs after the namespaces are entered, prepared before: the program
/// and its environment as C strings, the seccomp filter, the user and group to map.
struct Prepared<'a> {
    policy: &'a Policy,
    program: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    filters: [seccompiler::BpfProgram; 2],
    outside_uid: u32,
    outside_gid: u32,
    running: u64,
}

/// Build the sandbox and run the program; returns only on failure, with the reason.
fn launch(policy: &Policy) -> String {
    let prepared = match prepare(policy) {
        Ok(prepared) => prepared,
        Err(reason) => return reason,
    };
    let as_root = getuid().is_root();
    if as_root {
        // Root's supplementary groups would follow it in, where they cannot be dropped. Root of
        // a user namespace of its own may not drop them either; nothing maps them then.
        let _ = setgroups(&[]);
    }
    // Root maps itself to `nobody`, which only a process left outside may write.
    let mapper = match as_root.then(start_mapper).transpose() {
        Ok(mapper) => mapper,
        Err(reason) => return reason,
    };
    let namespaces = CloneFlags::CLONE_NEWUSER
        | CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWPID
        | CloneFlags::CLONE_NEWNET
        | CloneFlags::CLONE_NEWIPC
        | CloneFlags::CLONE_NEWUTS;
    if let Err(err) = unshare(namespaces) {
        return format!(
            "the kernel refused new namespaces (unshare: {err}); unprivileged user namespaces \
             may be disabled (sysctl kernel.unprivileged_userns_clone, \
             user.max_user_namespaces) or forbidden by a container runtime or AppArmor"
        );
    }
    let mapped = match mapper {
        Some(mapper) => mapper.finish(),
        None => map_ids("self", prepared.outside_uid, prepared.outside_gid),
    };
    if let Err(reason) = mapped {
        return reason;
    }
    // SAFETY: this process is single-threaded (a fresh evalctl that started no thread).
    match unsafe { fork() } {
        Err(err) => format!("cannot start the sandbox's first process: {err}"),
        Ok(ForkResult::Child) => {
            let reason = enter(&prepared);
            report(&reason);
            // SAFETY: _exit ends the child without running the parent's exit handlers twice.
            unsafe { libc::_exit(SETUP_FAILED) }
        }
        Ok(ForkResult::Parent { child }) => {
            for fd in [VERDICT_FD, TOKEN_FD, STATUS_FD] {
                // SAFETY: the launcher's own copies; the child holds its own.
                unsafe {
                    libc::close(fd);
                }
            }
            loop {
                match waitpid(child, None) {
                    Ok(WaitStatus::Exited(_, code)) => std::process::exit(code),
                    Ok(WaitStatus::Signaled(_, signal, _)) => end_as(signal),
                    Ok(_) => continue,
                    Err(nix::errno::Errno::EINTR) => continue,
                    Err(err) => {
                        return format!("cannot wait for the sandbox's first process: {err}")
                    }
                }
            }
        }
    }
}

/// End the launcher by the signal that ended the program, so the caller sees it as it was.
fn end_as(signal: Signal) -> ! {
    // SAFETY: restoring a default disposition and signalling oneself have no memory-safety
    // preconditions.
    unsafe {
        libc::signal(signal as libc::c_int, libc::SIG_DFL);
        libc::kill(libc::getpid(), signal as libc::c_int);
    }
    std::process::exit(128 + signal as i32)
}

/// Turn the policy into what the steps after `unshare` use without allocating much.
fn prepare(policy: &Policy) -> Result<Prepared<'_>, String> {
    let c_string =
        |text: &str| CString::new(text).map_err(|_| format!("{text:?} contains a NUL byte"));
    let program_text = policy.program.to_string_lossy();
    let program = c_string(&program_text)?;
    let mut argv = vec![program.clone()];
    for arg in &policy.args {
        argv.push(c_string(arg)?);
    }
    let envp = policy
        .env
        .iter()
        .map(|(name, value)| c_string(&format!("{name}={value}")))
        .collect::<Result<Vec<_>, _>>()?;
    let filters = super::seccomp::filters()?;
    let (uid, gid) = (getuid().as_raw(), getgid().as_raw());
    let outside_uid = if uid == 0 { NOBODY } else { uid };
    let outside_gid = if gid == 0 { NOBODY } else { gid };
    Ok(Prepared {
        policy,
        program,
        argv,
        envp,
        filters,
        outside_uid,
        outside_gid,
        running: processes_of(outside_uid),
    })
}

/// How many processes the user `uid` runs now (the process limit counts them too).
fn processes_of(uid: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|entry| entry.metadata().is_ok_and(|meta| meta.uid() == uid))
        .count() as u64
}

/// Map root inside the user namespace of process `pid` (`self`, or a number) to `uid` and `gid`
/// outside.
fn map_ids(pid: &str, uid: u32, gid: u32) -> Result<(), String> {
    let write = |file: &str, text: String| {
        std::fs::write(format!("/proc/{pid}/{file}"), text)
            .map_err(|err| format!("cannot write /proc/{pid}/{file}: {err}"))
    };
    write("setgroups", "deny".into())?;
    write("uid_map", format!("0 {uid} 1\n"))?;
    write("gid_map", format!("0 {gid} 1\n"))
}

/// A process left outside the new user namespace, holding root's rights there, that writes the
/// launcher's id maps once it has entered it.
struct Mapper {
    pid: nix::unistd::Pid,
    go: std::io::PipeWriter,
    done: std::io::PipeReader,
}

/// Fork the [`Mapper`]: it waits for a byte on its pipe, maps the launcher's root to
/// [`NOBODY`], and reports on its other pipe (nothing when it succeeded).
fn start_mapper() -> Result<Mapper, String> {
    let pipes = std::io::pipe().and_then(|go| std::io::pipe().map(|done| (go, done)));
    let ((go_read, go), (done, done_write)) =
        pipes.map_err(|err| format!("cannot create a pipe: {err}"))?;
    let launcher = std::process::id().to_string();
    // SAFETY: the launcher is single-threaded.
    match unsafe { fork() } {
        Err(err) => Err(format!("cannot start the id mapper: {err}")),
        Ok(ForkResult::Child) => {
            drop((go, done));
            let mut byte = [0u8; 1];
            let result = match std::io::Read::read(&mut &go_read, &mut byte) {
                Ok(1) => map_ids(&launcher, NOBODY, NOBODY),
                _ => Err("the launcher ended before its namespaces were ready".to_string()),
            };
            if let Err(reason) = result {
                let _ = (&done_write).write_all(reason.as_bytes());
            }
            // SAFETY: _exit ends the forked copy without running exit handlers.
            unsafe { libc::_exit(0) }
        }
        Ok(ForkResult::Parent { child }) => Ok(Mapper {
            pid: child,
            go,
            done,
        }),
    }
}

impl Mapper {
    /// Tell the mapper the namespaces are ready, and wait for its report.
    fn finish(self) -> Result<(), String> {
        let Mapper { pid, mut go, done } = self;
        go.write_all(b"+")
            .map_err(|err| format!("cannot reach the id mapper: {err}"))?;
        drop(go);
        let mut report = String::new();
        let _ = std::io::Read::read_to_string(&mut &done, &mut report);
        let _ = waitpid(pid, None);
        if report.is_empty() {
            Ok(())
        } else {
            Err(report)
        }
    }
}

/// In PID 1 of the new namespaces: build the root, confine this process and execute the program.
/// Returns only on failure, with the reason.
fn enter(prepared: &Prepared<'_>) -> String {
    match build_and_confine(prepared) {
        Ok(()) => {}
        Err(reason) => return reason,
    }
    match execve(&prepared.program, &prepared.argv, &prepared.envp) {
        Err(err) => format!("cannot run {}: {err}", prepared.program.to_string_lossy()),
        Ok(never) => match never {},
    }
}

fn build_and_confine(prepared: &Prepared<'_>) -> Result<(), String> {
    let policy = prepared.policy;
    // Opened while still the launcher's user outside (root may read a home the sandbox's user
    // cannot), bound once the sandbox's user may create files in the new root.
    let sources = open_sources(policy)?;
    setresgid(Gid::from_raw(0), Gid::from_raw(0), Gid::from_raw(0))
        .map_err(|err| format!("setresgid: {err}"))?;
    setresuid(Uid::from_raw(0), Uid::from_raw(0), Uid::from_raw(0))
        .map_err(|err| format!("setresuid: {err}"))?;
    // The script dies with the launcher, which evalctl kills at a timeout, and with it every
    // process of its namespace, a script that left the launcher's process group (`setsid`)
    // included. Set after the user and group change, which clears it.
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(|err| format!("prctl: {err}"))?;
    build_root(policy, &sources)?;
    drop(sources);
    sethostname("sandbox").map_err(|err| format!("sethostname: {err}"))?;
    set_limits(policy, prepared.running)?;
    drop_capabilities()?;
    nix::sys::prctl::set_no_new_privs().map_err(|err| format!("no_new_privs: {err}"))?;
    restrict_with_landlock()?;
    close_other_files();
    for filter in &prepared.filters {
        seccompiler::apply_filter(filter).map_err(|err| format!("seccomp: {err}"))?;
    }
    Ok(())
}

/// What a path of the new root shows of the host: a symbolic link made anew, or a directory or
/// device file bound from a descriptor opened outside.
enum Source {
    Link(PathBuf),
    Bound(std::os::fd::OwnedFd),
}

/// Open the policy's read-only paths and the device files, sorted so that a parent comes before
/// the paths under it.
fn open_sources(policy: &Policy) -> Result<Vec<(PathBuf, Source)>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut paths: Vec<PathBuf> = policy.read_only.clone();
    paths.sort_by_key(|path| path.components().count());
    paths.extend(DEVICES.map(PathBuf::from));
    paths
        .into_iter()
        .map(|path| {
            let meta = path
                .symlink_metadata()
                .map_err(|err| format!("cannot see {}: {err}", path.display()))?;
            let source = if meta.file_type().is_symlink() {
                Source::Link(
                    std::fs::read_link(&path)
                        .map_err(|err| format!("cannot read the link {}: {err}", path.display()))?,
                )
            } else {
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
                    .open(&path)
                    .map_err(|err| format!("cannot open {}: {err}", path.display()))?;
                Source::Bound(file.into())
            };
            Ok((path, source))
        })
        .collect()
}

/// Mount the new root (read-only system paths and interpreter, four devices, the size-capped work
/// directory, `/tmp` pointing to it) and make it `/`.
fn build_root(policy: &Policy, sources: &[(PathBuf, Source)]) -> Result<(), String> {
    let fail =
        |what: &str, path: &Path, err: nix::Error| format!("{what} {}: {err}", path.display());
    let none: Option<&str> = None;
    mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none)
        .map_err(|err| format!("cannot make the mounts private: {err}"))?;
    let root = Path::new(BUILD_AT);
    mount(
        Some("evalctl-sandbox"),
        root,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("size=1m,nr_inodes=4096,mode=0755"),
    )
    .map_err(|err| fail("cannot mount a tmpfs on", root, err))?;
    let inside = |path: &Path| root.join(path.strip_prefix("/").unwrap_or(path));
    for (path, source) in sources {
        let target = inside(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|err| format!("cannot create {}: {err}", parent.display()))?;
        }
        let fd = match source {
            Source::Link(link) => {
                symlink(link, &target)
                    .map_err(|err| format!("cannot link {}: {err}", target.display()))?;
                continue;
            }
            Source::Bound(fd) => fd,
        };
        let bound = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
        if path.starts_with("/dev") {
            File::create(&target)
                .map_err(|err| format!("cannot create {}: {err}", target.display()))?;
            mount(Some(&bound), &target, none, MsFlags::MS_BIND, none)
                .map_err(|err| fail("cannot bind", path, err))?;
        } else {
            std::fs::create_dir_all(&target)
                .map_err(|err| format!("cannot create {}: {err}", target.display()))?;
            bind_read_only(path, &bound, &target)?;
        }
    }
    let work = inside(Path::new(WORK_DIR));
    std::fs::create_dir(&work).map_err(|err| format!("cannot create {WORK_DIR}: {err}"))?;
    let options = format!(
        "size={},nr_inodes=4096,mode=0777",
        policy.limits.work_dir_bytes.max(4096)
    );
    mount(
        Some("evalctl-work"),
        &work,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        Some(options.as_str()),
    )
    .map_err(|err| fail("cannot mount the work directory on", &work, err))?;
    symlink(WORK_DIR.trim_start_matches('/'), root.join("tmp"))
        .map_err(|err| format!("cannot link /tmp: {err}"))?;
    chdir(root).map_err(|err| fail("cannot enter", root, err))?;
    pivot_root(".", ".").map_err(|err| format!("pivot_root: {err}"))?;
    umount2(".", MntFlags::MNT_DETACH)
        .map_err(|err| format!("cannot detach the old root: {err}"))?;
    mount(
        none,
        "/",
        none,
        MsFlags::MS_REMOUNT
            | MsFlags::MS_BIND
            | MsFlags::MS_RDONLY
            | MsFlags::MS_NOSUID
            | MsFlags::MS_NODEV,
        none,
    )
    .map_err(|err| format!("cannot make the root read-only: {err}"))?;
    chdir(WORK_DIR).map_err(|err| format!("cannot enter {WORK_DIR}: {err}"))
}

/// Bind `path` at `target`, read-only, keeping the flags the kernel locks on it (a mount seen
/// through a user namespace keeps its `nosuid`, `nodev` and `noexec`).
fn bind_read_only(path: &Path, bound: &Path, target: &Path) -> Result<(), String> {
    let none: Option<&str> = None;
    mount(
        Some(bound),
        target,
        none,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        none,
    )
    .map_err(|err| format!("cannot bind {}: {err}", path.display()))?;
    let locked = nix::sys::statvfs::statvfs(target)
        .map(|stat| stat.flags())
        .map_err(|err| format!("cannot stat {}: {err}", path.display()))?;
    use nix::sys::statvfs::FsFlags;
    let mut flags = MsFlags::MS_REMOUNT
        | MsFlags::MS_BIND
        | MsFlags::MS_RDONLY
        | MsFlags::MS_NOSUID
        | MsFlags::MS_NODEV;
    for (has, flag) in [
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if locked.contains(has) {
            flags |= flag;
        }
    }
    mount(none, target, none, flags, none)
        .map_err(|err| format!("cannot make {} read-only: {err}", path.display()))
}

/// The policy's resource limits; the process limit counts over what the user already runs.
fn set_limits(policy: &Policy, running: u64) -> Result<(), String> {
    let limits = &policy.limits;
    for (resource, soft, hard) in [
        (
            Resource::RLIMIT_CPU,
            limits.cpu_seconds,
            limits.cpu_seconds + 1,
        ),
        (
            Resource::RLIMIT_AS,
            limits.memory_bytes,
            limits.memory_bytes,
        ),
        (
            Resource::RLIMIT_NPROC,
            running + limits.processes,
            running + limits.processes,
        ),
        (Resource::RLIMIT_FSIZE, limits.file_bytes, limits.file_bytes),
        (
            Resource::RLIMIT_NOFILE,
            limits.open_files,
            limits.open_files,
        ),
        (Resource::RLIMIT_CORE, 0, 0),
    ] {
        setrlimit(resource, soft, hard).map_err(|err| format!("setrlimit {resource:?}: {err}"))?;
    }
    Ok(())
}

/// Empty the capability bounding and ambient sets: the program, root inside its namespace,
/// starts with no capability at all.
fn drop_capabilities() -> Result<(), String> {
    for capability in 0..64 {
        // SAFETY: prctl with integer arguments has no memory-safety preconditions.
        let dropped = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0) };
        if dropped != 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
                break; // past the last capability this kernel knows
            }
            return Err(format!(
                "cannot drop capability {capability}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    // SAFETY: as above.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
    }
    Ok(())
}

/// Where the kernel offers Landlock: reading anywhere in the new root, writing only in the work
/// directory and to the device files, and no TCP at all. Older kernels skip what they lack.
fn restrict_with_landlock() -> Result<(), String> {
    use landlock::{
        path_beneath_rules, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr,
        ABI,
    };
    let abi = ABI::V5;
    let result = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|ruleset| ruleset.handle_access(AccessNet::from_all(abi)))
        .and_then(|ruleset| ruleset.create())
        .and_then(|ruleset| ruleset.add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi))))
        .and_then(|ruleset| {
            ruleset.add_rules(path_beneath_rules([WORK_DIR], AccessFs::from_all(abi)))
        })
        .and_then(|ruleset| {
            ruleset.add_rules(path_beneath_rules(
                DEVICES,
                AccessFs::WriteFile | AccessFs::ReadFile,
            ))
        })
        .and_then(|ruleset| ruleset.restrict_self());
    result.map(|_| ()).map_err(|err| format!("landlock: {err}"))
}

/// Close every file descriptor but standard input, output and error, the verdict and token pipes
/// and the status pipe (made close-on-exec).
fn close_other_files() {
    // SAFETY: fcntl and close_range on descriptors this process owns.
    unsafe {
        libc::fcntl(STATUS_FD, libc::F_SETFD, libc::FD_CLOEXEC);
        let first = (STATUS_FD + 1) as libc::c_uint;
        if libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, 0) != 0 {
            for fd in STATUS_FD + 1..1024 {
                libc::close(fd as RawFd);
            }
        }
    }
}
