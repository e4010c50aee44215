//! The sandbox's seccomp filter, built in pure Rust (seccompiler, no system library): the system
//! calls a program under test never needs and that would reach beyond its namespaces or limits —
//! new processes (threads may be made), tracing other processes, mounting, new namespaces,
//! kernel keyrings, BPF, module loading, io_uring — fail with `EPERM`, as do vsock sockets (a virtual machine's line to its host); `clone3` fails
//! with `ENOSYS` so that the C library falls back to `clone`, whose namespace flags the filter can
//! see and refuse.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// System calls refused outright.
const REFUSED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_acct,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fsconfig,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_quotactl,
    libc::SYS_syslog,
];

/// `clone` flags that would create namespaces.
const NAMESPACE_FLAGS: [libc::c_int; 7] = [
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

/// The filter as two BPF programs, installed one after the other (a program has one action for
/// its matches): refused calls and namespace-creating `clone`s give `EPERM`, `clone3` gives
/// `ENOSYS`; everything else runs.
pub fn filters() -> Result<[BpfProgram; 2], String> {
    let arch: TargetArch = std::env::consts::ARCH
        .try_into()
        .map_err(|err| format!("seccomp: {err:?}"))?;
    let fail = |err: seccompiler::BackendError| format!("seccomp: {err}");
    let mut refused: BTreeMap<i64, Vec<SeccompRule>> =
        REFUSED.iter().map(|&call| (call, Vec::new())).collect();
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|&flag| {
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag as u64),
                flag as u64,
            )
            .and_then(|condition| SeccompRule::new(vec![condition]))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(fail)?;
    // A new process (a `clone` that makes no thread) would run beyond the script's memory and
    // CPU limits, which are each process's, and could try the target's verdict from a copy.
    let new_process = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Qword,
        SeccompCmpOp::MaskedEq(libc::CLONE_THREAD as u64),
        0,
    )
    .and_then(|condition| SeccompRule::new(vec![condition]))
    .map_err(fail)?;
    let clone_rules = clone_rules.into_iter().chain([new_process]).collect();
    refused.insert(libc::SYS_clone, clone_rules);
    #[cfg(target_arch = "x86_64")]
    for call in [libc::SYS_fork, libc::SYS_vfork] {
        refused.insert(call, Vec::new());
    }
    // vsock reaches the virtual machine's host and its other guests: no network namespace
    // holds it, nor does Landlock.
    let vsock = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Eq,
        libc::AF_VSOCK as u64,
    )
    .and_then(|condition| SeccompRule::new(vec![condition]))
    .map_err(fail)?;
    refused.insert(libc::SYS_socket, vec![vsock]);
    let errno = |code: i32| SeccompAction::Errno(code as u32);
    let main: BpfProgram =
        SeccompFilter::new(refused, SeccompAction::Allow, errno(libc::EPERM), arch)
            .map_err(fail)?
            .try_into()
            .map_err(fail)?;
    let clone3: BpfProgram = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        SeccompAction::Allow,
        errno(libc::ENOSYS),
        arch,
    )
    .map_err(fail)?
    .try_into()
    .map_err(fail)?;
    Ok([main, clone3])
}
