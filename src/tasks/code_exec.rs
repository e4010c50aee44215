//! The `code_exec` metric's runner: the extracted code plus one target per script, run with
//! `python3` in a fresh temporary directory under a timeout; the score is the fraction of targets
//! that pass.
//!
//! After the code, the script hands the target to [`CHECK_TARGET`], which decides in Python itself
//! whether it is an expression (`compile(target, "<target>", "eval")` succeeds: it is asserted, as
//! `assert (TARGET)` would) or statements (run as they are). A target passes when its script exits
//! 0 **and** wrote the random nonce to its completion file after the target ran, so code that ends
//! the interpreter early (`os._exit(0)`, `sys.exit(0)`) fails, and whatever the code printed
//! (with or without a trailing newline) plays no part. The script sees only an allowlisted
//! environment ([`INHERITED_ENV`]), never evalctl's own (API keys). This guards against accidents
//! and casual cheating, not against code that reads its own script to find the nonce: it is not a
//! sandbox.

use std::io::ErrorKind;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::{bad_input, Fatal, Problem};
use crate::process_group::{start_reaper, GroupKiller};
use crate::text::{clip, io_reason, one_line, seconds};

/// The interpreter `code_exec` runs, looked up on `PATH`.
pub const PYTHON: &str = "python3";

/// The only environment variables a script inherits.
pub const INHERITED_ENV: [&str; 6] = ["PATH", "HOME", "LANG", "LC_ALL", "PYTHONPATH", "TMPDIR"];

/// How often a running script is polled for exit.
const POLL: Duration = Duration::from_millis(5);

/// Appended after the code: runs the target (its own script's `sys.argv[1]` names the completion
/// file) in the code's globals, asserting it when it parses as an expression, then writes the
/// nonce to the completion file. Builtins are reached through `builtins`, so code that defines
/// its own `compile`, `eval` or `open` does not get in the way.
const CHECK_TARGET: &str = r#"
def __evalctl_check(target, nonce, scope):
    import builtins, sys
    done = sys.argv[1]
    try:
        expression = builtins.compile(target, "<target>", "eval")
    except SyntaxError:
        builtins.exec(builtins.compile(target, "<target>", "exec"), scope)
    else:
        if not builtins.eval(expression, scope):
            raise AssertionError
    with builtins.open(done, "w") as file:
        file.write(nonce)
"#;

/// The most characters of a failing assertion that [`CodeOutcome::first_failure`] quotes.
const TARGET_CLIP: usize = 200;

/// What running one task's assertions gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeOutcome {
    /// Assertions whose script exited 0 after printing its nonce.
    pub passed: usize,
    /// Assertions run.
    pub total: usize,
    /// The first failing assertion, on one line and clipped, and why it failed (last stderr
    /// line, or the timeout), e.g. `assert f() == 2: AssertionError`; `None` when all passed.
    pub first_failure: Option<String>,
}

impl CodeOutcome {
    /// The fraction of assertions that passed (0.0 when there were none).
    pub fn score(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.passed as f64 / self.total as f64
        }
    }
}

/// Fail with a clear message when `python3` is missing or unusable: `python3 --version` must start
/// and exit 0 (a shim that exits 127 is as good as no python3).
pub fn ensure_python() -> anyhow::Result<()> {
    let status = python()
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let why = match status {
        Ok(status) if status.success() => return Ok(()),
        Ok(status) => format!("it is unusable (`{PYTHON} --version` failed with {status})"),
        Err(err) if err.kind() == ErrorKind::NotFound => "it was not found on PATH".to_string(),
        Err(err) => format!("it cannot be started: {}", io_reason(&err)),
    };
    Err(bad_input(Problem::new(
        PYTHON,
        format!("code_exec tasks run their assertions with it, but {why}"),
    )))
}

/// `python3` with the allowlisted environment and no stdin.
fn python() -> Command {
    let mut command = Command::new(PYTHON);
    command
        .env_clear()
        .envs(
            INHERITED_ENV
                .iter()
                .filter_map(|name| std::env::var_os(name).map(|value| (name, value))),
        )
        .stdin(Stdio::null());
    command
}

/// Run `code` followed by each assertion, one script per assertion, each under `timeout`.
pub fn run_assertions(
    code: &str,
    assertions: &[String],
    timeout: Duration,
) -> anyhow::Result<CodeOutcome> {
    let dir = tempfile::Builder::new()
        .prefix("evalctl-code-")
        .tempdir()
        .map_err(|err| {
            anyhow::anyhow!(
                "code_exec: cannot create a temporary directory in {}: {}",
                std::env::temp_dir().display(),
                io_reason(&err)
            )
        })?;
    let mut outcome = CodeOutcome {
        passed: 0,
        total: assertions.len(),
        first_failure: None,
    };
    for (index, assertion) in assertions.iter().enumerate() {
        let script = dir.path().join(format!("assertion_{index}.py"));
        let nonce = format!("evalctl-assertion-passed-{:032x}", fastrand::u128(..));
        // A JSON string literal is a valid Python string literal.
        let text = format!(
            "{code}\n\n{CHECK_TARGET}\n__evalctl_check({}, \"{nonce}\", globals())\n",
            Value::from(assertion.as_str())
        );
        std::fs::write(&script, text).map_err(|err| file_error("write", &script, &err))?;
        match run_script(dir.path(), &script, &nonce, timeout)? {
            None => outcome.passed += 1,
            Some(failure) => {
                outcome.first_failure.get_or_insert_with(|| {
                    format!(
                        "{}: {failure}",
                        clip(&one_line(assertion.trim()), TARGET_CLIP)
                    )
                });
            }
        }
    }
    Ok(outcome)
}

/// Run one script; `None` when it exits 0 having written `nonce` to its completion file, else why
/// it failed.
fn run_script(
    dir: &Path,
    script: &Path,
    nonce: &str,
    timeout: Duration,
) -> anyhow::Result<Option<String>> {
    let stderr_path = script.with_extension("stderr");
    let stderr = std::fs::File::create(&stderr_path)
        .map_err(|err| file_error("create", &stderr_path, &err))?;
    let done_path = script.with_extension("done");
    let mut command = python();
    command
        .arg(script)
        .arg(&done_path)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(stderr)
        .process_group(0);
    start_reaper();
    let mut child = command.spawn().map_err(|err| {
        anyhow::anyhow!(
            "code_exec: cannot start {PYTHON} on {}: {}",
            script.display(),
            io_reason(&err)
        )
    })?;
    let group = GroupKiller::new(Some(child.id()));
    let waited = wait_for(&mut child, &group, timeout);
    // Whatever happened, nothing the script started outlives it: the group is killed even after a
    // normal exit (the group id is not reused while any member lives) or a failed wait.
    drop(group);
    let status = match waited {
        Ok(Some(status)) => status,
        Ok(None) => return Ok(Some(format!("timed out after {}", seconds(timeout)))),
        Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {
            return Err(Fatal::Interrupted(
                "interrupted: code_exec stopped; the running script was killed".into(),
            )
            .into())
        }
        Err(err) => {
            let _ = child.wait();
            return Err(anyhow::anyhow!(
                "code_exec: cannot wait for {PYTHON} running {}: {}",
                script.display(),
                io_reason(&err)
            ));
        }
    };
    if status.success() {
        // The script's files are the code's to tamper with: an unreadable one is a failure.
        let completed = std::fs::read(&done_path).unwrap_or_default() == nonce.as_bytes();
        return Ok((!completed).then(|| {
            "the script exited 0 without completing its assertion (did the code exit early?)"
                .to_string()
        }));
    }
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    Ok(Some(
        stderr
            .lines()
            .rev()
            .find(|line| !line.trim().is_empty())
            .map_or_else(|| format!("python3 exited with {status}"), str::to_string),
    ))
}

/// A failed file operation of the runner, naming the file.
fn file_error(action: &str, path: &Path, err: &std::io::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "code_exec: cannot {action} {}: {}",
        path.display(),
        io_reason(err)
    )
}

/// Wait for `child` for at most `timeout`: its exit status, or `None` when it ran out of time (its
/// group is then killed and the child reaped).
fn wait_for(
    child: &mut Child,
    group: &GroupKiller,
    timeout: Duration,
) -> std::io::Result<Option<ExitStatus>> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if crate::interrupt::interrupt_requested() {
            group.kill();
            child.wait()?;
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "interrupted",
            ));
        }
        if started.elapsed() >= timeout {
            group.kill();
            child.wait()?;
            return Ok(None);
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_is_the_passing_fraction() {
        let outcome = CodeOutcome {
            passed: 2,
            total: 3,
            first_failure: None,
        };
        assert!((outcome.score() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            CodeOutcome {
                passed: 0,
                total: 0,
                first_failure: None
            }
            .score(),
            0.0
        );
    }
}
