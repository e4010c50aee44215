//! The `evalctl` binary under test: the one command builder every test uses (an environment
//! cleaned of every variable evalctl reads, and a safety timeout), and helpers to read what a
//! finished run printed.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long any one `evalctl` run may take before the test fails instead of hanging.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// Path of the binary under test: the one cargo built for the tests, or `TESTED_EVALCTL_BIN` when
/// set (`.ci/run` runs the tests a second time against a build without debug assertions, as a
/// release build is: some libraries check things only under them and behave otherwise without).
pub fn bin() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        std::env::var("TESTED_EVALCTL_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_evalctl").to_string())
    })
}

/// Whether evalctl (or clap's help and colour output) reads the environment variable `name`:
/// the task model, judge base URLs and keys (`<PROVIDER>_API_KEY`), anything `EVALCTL_*`, colour
/// switches and the terminal width help text wraps to.
pub fn is_read_by_evalctl(name: &str) -> bool {
    const NAMES: [&str; 10] = [
        "GITHUB_STEP_SUMMARY",
        "OPTIMIZE_ANYTHING_TASK_MODEL",
        "OPENAI_BASE_URL",
        "NO_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "FORCE_COLOR",
        "TERM",
        "COLUMNS",
        "LINES",
    ];
    NAMES.contains(&name) || name.starts_with("EVALCTL_") || name.ends_with("_API_KEY")
}

/// The variables of this process's environment that evalctl reads (see [`is_read_by_evalctl`]).
pub fn inherited_variables_evalctl_reads() -> Vec<OsString> {
    std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|name| name.to_str().is_some_and(is_read_by_evalctl))
        .collect()
}

/// Remove from `command`'s environment every variable evalctl reads and set `NO_COLOR=1`: for
/// [`evalctl_process`], and for a wrapper (`sh -c`, `script`) that runs evalctl itself.
pub fn clean_environment(command: &mut std::process::Command) -> &mut std::process::Command {
    for name in inherited_variables_evalctl_reads() {
        command.env_remove(name);
    }
    command.env("NO_COLOR", "1")
}

/// `script` (util-linux) running `command_line` in `dir` on a pseudo-terminal (its stdout and
/// stderr), with a clean environment (see [`clean_environment`]); what the terminal shows is
/// script's stdout, and is also flushed to `dir/screen` as it comes.
pub fn on_a_terminal(dir: &std::path::Path, command_line: &str) -> std::process::Command {
    let mut command = std::process::Command::new("script");
    clean_environment(&mut command)
        .args(["-qfec", command_line, "screen"])
        .current_dir(dir);
    command
}

/// `evalctl` as a plain process (for tests that spawn, signal or pipe it), with a clean
/// environment (see [`clean_environment`]) and a known signal disposition (see
/// [`default_signal_disposition`]); a test that needs a variable sets it after this.
pub fn evalctl_process() -> std::process::Command {
    let mut command = std::process::Command::new(bin());
    clean_environment(&mut command);
    default_signal_disposition(&mut command);
    command
}

/// Start `command` with SIGINT, SIGTERM, SIGHUP and SIGQUIT at their default action and no
/// signal blocked, whatever the test process inherited: a shell that starts `cargo test` in the
/// background starts it with SIGINT ignored, and evalctl (rightly) keeps an ignored signal
/// ignored, so a test that interrupts evalctl must not depend on how the suite was started.
pub fn default_signal_disposition(
    command: &mut std::process::Command,
) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the closure calls only `signal` and `sigprocmask`, both
    // async-signal-safe, and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                if libc::signal(signal, libc::SIG_DFL) == libc::SIG_ERR {
                    return Err(std::io::Error::last_os_error());
                }
            }
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            if libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// `evalctl` with a clean environment (see [`evalctl_process`]) and the [`TIMEOUT`].
pub fn evalctl() -> assert_cmd::Command {
    let mut command = assert_cmd::Command::from_std(evalctl_process());
    command.timeout(TIMEOUT);
    command
}

/// stdout parsed as one JSON document (the `--format json` summary).
pub fn json_stdout(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "stdout is not JSON ({err}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// Run `command` and require exit 0 (the failure shows stderr); returns its output.
pub fn succeeded(
    mut command: impl std::borrow::BorrowMut<assert_cmd::Command>,
) -> std::process::Output {
    let out = command.borrow_mut().output().expect("evalctl runs");
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    out
}

/// stderr as text.
pub fn stderr_text(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// stdout as text.
pub fn stdout_text(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `text` with the number after each `elapsed: ` (text and Markdown summaries) masked as `[..]`,
/// for exact comparisons of a whole summary.
pub fn mask_elapsed(text: &str) -> String {
    text.lines()
        .map(|line| match line.split_once("elapsed: ") {
            Some((head, tail)) => {
                let rest = tail.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
                format!("{head}elapsed: [..]{rest}\n")
            }
            None => format!("{line}\n"),
        })
        .collect()
}

/// The exit code (panics when killed by a signal).
pub fn code(output: &std::process::Output) -> i32 {
    output.status.code().unwrap_or_else(|| {
        panic!(
            "killed by a signal: {:?}\nstderr:\n{}",
            output.status,
            stderr_text(output)
        )
    })
}

/// Whether process `pid` still exists and is not a zombie (Linux `/proc`).
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            // "pid (comm) STATE ..." — comm may contain spaces, so look after the last ')'.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .unwrap_or("");
            state != "Z" && state != "X"
        }
    }
}

/// Poll `condition` every 10 ms until it holds or `limit` passes; returns whether it held.
pub fn wait_until(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What a test does when a tool it needs (`xmllint`, Chromium, user namespaces) is missing: under
/// `CI`, where `.ci/run` installs every such tool, fail; elsewhere say SKIPPED on stderr (the test
/// then passes without checking, and `cargo test -- --nocapture` shows why).
pub fn tool_missing(what: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must run this test, but {what}"
    );
    eprintln!("SKIPPED: {what}");
}
