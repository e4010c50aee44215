//! The open-file limit against `-j` and `serve --max-connections`: at the start of a run (or of
//! the server) the soft `RLIMIT_NOFILE` is raised toward the hard limit, and when that still
//! leaves too few descriptors for the calls wanted at once (or the connections), they are bounded
//! by the descriptors available, with one warning, instead of failing with `Too many open
//! files`.

/// Descriptors kept aside for evalctl itself: the runtime's event queue and wake-ups, the signal
/// pipe, the results file, and the transient pipes of the two spawns that may be in progress at
/// once (`evaluator::command`'s `STARTS_AT_ONCE`).
const RESERVED: u64 = 24;

/// The soft limit macOS accepts at most (`OPEN_MAX`), whatever the hard limit says.
const MACOS_OPEN_MAX: libc::rlim_t = 10_240;

/// How many calls may run at once: `requested` (`-j`), or fewer when even the raised open-file
/// limit cannot serve that many `evaluator_kind` calls of the `planned` ones at once — then with
/// the warning that says so.
pub fn calls_in_flight(
    requested: usize,
    planned: usize,
    evaluator_kind: &str,
) -> (usize, Option<String>) {
    let wanted = requested.min(planned).max(1);
    let per_call = descriptors_per_call(evaluator_kind);
    if per_call == 0 {
        return (requested, None);
    }
    let Some(limit) = raise_soft_limit() else {
        return (requested, None);
    };
    let available = limit.saturating_sub(descriptors_in_use() + RESERVED);
    let affordable = usize::try_from(available / per_call)
        .unwrap_or(usize::MAX)
        .max(1);
    if affordable >= wanted {
        return (requested, None);
    }
    let warning = format!(
        "-j {requested} needs about {} open files, but the open-file limit is {limit} even \
         raised to its hard limit: running at most {affordable} calls at once",
        wanted as u64 * per_call + RESERVED
    );
    (affordable, Some(warning))
}

/// Descriptors `serve` keeps aside beside its connections: the database and its journal, the
/// listeners, and the calls its evaluations make (a custom check's pipes, a model API's
/// connections).
const SERVE_RESERVED: u64 = 256;

/// How many connections `serve` may hold open: `requested` (`--max-connections`), or fewer when
/// even the raised open-file limit cannot hold that many — then with the warning that says so.
pub fn connections_open(requested: usize) -> (usize, Option<String>) {
    let Some(limit) = raise_soft_limit() else {
        return (requested, None);
    };
    let available = limit.saturating_sub(descriptors_in_use() + SERVE_RESERVED);
    let affordable = usize::try_from(available).unwrap_or(usize::MAX).max(1);
    if affordable >= requested {
        return (requested, None);
    }
    let warning = format!(
        "--max-connections {requested} needs about {} open files, but the open-file limit is \
         {limit} even raised to its hard limit: holding at most {affordable} connections open",
        requested as u64 + SERVE_RESERVED
    );
    (affordable, Some(warning))
}

/// About how many descriptors one call in flight holds: a command's three pipes (and a spare for
/// the spawn), an HTTP call's connection (and a spare for its pool), none for built-in checks.
fn descriptors_per_call(evaluator_kind: &str) -> u64 {
    match evaluator_kind {
        "checks" => 0,
        "command" => 4,
        _ => 2,
    }
}

/// Raise the soft open-file limit as far as the system allows; the soft limit in force after, or
/// `None` when it cannot be read (or is unlimited).
fn raise_soft_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only into the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return None;
    }
    for target in [limit.rlim_max, limit.rlim_max.min(MACOS_OPEN_MAX)] {
        if target <= limit.rlim_cur {
            break;
        }
        let raised = libc::rlimit {
            rlim_cur: target,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit reads only the struct it is given.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit.rlim_cur = target;
            break;
        }
    }
    (limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// How many descriptors this process has open now (`/proc/self/fd` or `/dev/fd`, less the one
/// listing them); a small guess when neither can be listed.
fn descriptors_in_use() -> u64 {
    ["/proc/self/fd", "/dev/fd"]
        .iter()
        .find_map(|dir| std::fs::read_dir(dir).ok())
        .map_or(8, |entries| entries.count().saturating_sub(1) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_checks_need_no_descriptors() {
        assert_eq!(calls_in_flight(100_000, 100_000, "checks"), (100_000, None));
    }
}
