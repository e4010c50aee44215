//! The `code_exec` metric's runner: the extracted code plus one target per script, each script a
//! fresh `python3 -I` in a fresh [`Sandbox`] under a timeout and resource limits; the score is the
//! fraction of targets that pass.
//!
//! Each script is the [harness](HARNESS) with the code and one target: the code runs, then the
//! target is asserted when it parses as an expression (as `assert (TARGET)` would) or run as
//! statements. A target passes only when the harness then writes the one-time token evalctl gave
//! it, on a pipe of its own (file descriptor 3): code that exits early (`os._exit(0)`), patches
//! builtins or reads its own script never sees the token, and whatever it prints plays no part.
//! A script stopped by a limit (time, memory, output, processes, disk) fails with that limit's
//! name ([`LimitHit`]).
//!
//! [`CodeRunner::prepare`] finds the interpreter and proves the sandbox works before any task is
//! generated or scored; where the kernel refuses it, the command stops unless the user chose
//! `--unsafe-code-exec` ([`Isolation::None`]).

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::error::{bad_input, Fatal, Problem};
use crate::sandbox::{Isolation, LimitHit, Limits, Refused, Sandbox, SetupFailed, WORK_DIR};
use crate::scoring::Outcome;
use crate::text::{clip, io_reason, one_line, seconds};

/// The interpreter `code_exec` runs, looked up on `PATH`.
pub const PYTHON: &str = "python3";

/// The harness program each script runs (the code and target are assigned before it).
const HARNESS: &str = include_str!("code_exec_harness.py");

/// The variables an unsandboxed script inherits from evalctl's environment (its own `HOME` and
/// `TMPDIR` are a fresh temporary directory); nothing else, so it never sees API keys.
const INHERITED_ENV: [&str; 3] = ["PATH", "LANG", "LC_ALL"];

/// The most characters of a failing assertion that [`CodeOutcome::first_failure`] quotes.
const TARGET_CLIP: usize = 200;

/// What running one task's assertions gave: the detail of its [`Outcome`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeOutcome {
    /// Assertions whose script completed its target.
    pub passed: usize,
    /// Assertions run.
    pub total: usize,
    /// The first failing assertion, on one line and clipped, and why it failed (last stderr
    /// line, or the limit), e.g. `assert f() == 2: AssertionError`; `None` when all passed.
    pub first_failure: Option<String>,
    /// How many assertions each limit stopped.
    pub limits: BTreeMap<LimitHit, usize>,
}

impl CodeOutcome {
    /// The fraction of assertions that passed (0.0 when there were none).
    fn score(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.passed as f64 / self.total as f64
        }
    }
}

/// Runs `code_exec` scripts: the interpreter found and the sandbox proven once per command.
#[derive(Debug, Clone)]
pub struct CodeRunner {
    sandbox: Sandbox,
    timeout: Duration,
}

impl CodeRunner {
    /// Find `python3` and make ready to run scripts in the sandbox (or, with
    /// [`Isolation::None`], without one). With `probe_first` (`tasks run`, before its first
    /// model call), a test program proves the sandbox now; otherwise (`tasks score`) the first
    /// scripts prove it, and a sandbox that cannot be built stops scoring before any score.
    /// Either way, no code runs outside a sandbox the kernel refused.
    pub fn prepare(
        isolation: Isolation,
        timeout: Duration,
        probe_first: bool,
    ) -> anyhow::Result<CodeRunner> {
        // Ctrl-C, SIGTERM or SIGHUP now stop the running scripts and clean up (exit 130).
        crate::interrupt::catch_in_flag();
        let (program, install) = find_python()?;
        let limits = Limits {
            cpu_seconds: timeout.as_secs() + 1,
            ..Limits::default()
        };
        let env = match isolation {
            Isolation::Namespaces => vec![
                (
                    "PATH".to_string(),
                    "/usr/local/bin:/usr/bin:/bin".to_string(),
                ),
                ("HOME".to_string(), WORK_DIR.to_string()),
                ("TMPDIR".to_string(), WORK_DIR.to_string()),
                ("LANG".to_string(), "C.UTF-8".to_string()),
            ],
            Isolation::None => {
                // Nothing the script starts can read evalctl's environment through /proc
                // (for a user other than root; root reads every process's).
                #[cfg(target_os = "linux")]
                // SAFETY: prctl with integer arguments has no memory-safety preconditions.
                unsafe {
                    libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
                }
                INHERITED_ENV
                    .iter()
                    .filter_map(|name| {
                        std::env::var(name)
                            .ok()
                            .map(|value| (name.to_string(), value))
                    })
                    .collect()
            }
        };
        let sandbox = Sandbox::new(isolation, program, &install, env, limits).map_err(refused)?;
        if probe_first && isolation == Isolation::Namespaces {
            let probed = sandbox.probe(&["-I", "-S", "-c", "pass"]);
            if crate::interrupt::interrupt_requested() {
                return Err(Fatal::Interrupted(
                    "interrupted: code_exec stopped before any task was scored".into(),
                )
                .into());
            }
            probed.map_err(refused)?;
        }
        Ok(CodeRunner { sandbox, timeout })
    }

    /// How the scripts run.
    pub fn isolation(&self) -> Isolation {
        self.sandbox.isolation()
    }

    /// Run `code` followed by each assertion, one script per assertion: the fraction that passed
    /// (a metric: no verdict), with the counts and the first failure.
    pub fn run_assertions(
        &self,
        code: &str,
        assertions: &[String],
    ) -> anyhow::Result<Outcome<CodeOutcome>> {
        let mut outcome = CodeOutcome {
            passed: 0,
            total: assertions.len(),
            first_failure: None,
            limits: BTreeMap::new(),
        };
        for assertion in assertions {
            match self.run_script(code, assertion)? {
                None => outcome.passed += 1,
                Some((failure, limit)) => {
                    if let Some(limit) = limit {
                        *outcome.limits.entry(limit).or_default() += 1;
                    }
                    outcome.first_failure.get_or_insert_with(|| {
                        format!(
                            "{}: {failure}",
                            clip(&one_line(assertion.trim()), TARGET_CLIP)
                        )
                    });
                }
            }
        }
        Ok(Outcome::scored(outcome.score()).with_detail(outcome))
    }

    /// Run one script; `None` when it completed its target, else why it failed and the limit
    /// that stopped it, if one did.
    fn run_script(
        &self,
        code: &str,
        target: &str,
    ) -> anyhow::Result<Option<(String, Option<LimitHit>)>> {
        // A JSON string literal is a valid Python string literal.
        let program = format!(
            "__evalctl_code = {}\n__evalctl_target = {}\n{HARNESS}",
            Value::from(code),
            Value::from(target)
        );
        let token = format!("{:032x}", fastrand::u128(..));
        let finished = self
            .sandbox
            .run(
                &["-I", "-S", "-"],
                program.as_bytes(),
                token.as_bytes(),
                self.timeout,
            )
            .map_err(|err| -> anyhow::Error {
                match err.downcast::<SetupFailed>() {
                    Ok(SetupFailed(cause)) => refused(Refused(cause)).into(),
                    Err(err) => match err.downcast::<Fatal>() {
                        Ok(fatal) => fatal.into(),
                        Err(err) => Fatal::Internal(format!("code_exec: {err:#}")).into(),
                    },
                }
            })?;
        let completed = finished.verdict == token.as_bytes();
        if completed && finished.limit.is_none() && finished.status.success() {
            return Ok(None);
        }
        let why = match finished.limit {
            Some(LimitHit::Timeout) => format!("timed out after {}", seconds(self.timeout)),
            Some(LimitHit::OutputLimit) => format!(
                "output_limit: printed more than {} bytes",
                self.sandbox.limits().output_bytes
            ),
            limit => {
                let said = if finished.status.success() {
                    "the script exited 0 without completing its assertion (did the code exit \
                     early?)"
                        .to_string()
                } else {
                    finished.last_stderr_line().map_or_else(
                        || format!("{PYTHON} exited with {}", finished.status),
                        str::to_string,
                    )
                };
                // A limit names itself before what Python said of it.
                match limit {
                    Some(limit) => format!("{}: {said}", limit.label()),
                    None => said,
                }
            }
        };
        Ok(Some((why, finished.limit)))
    }
}

/// The sandbox cannot be built here: stop, naming the cause and the opt-in.
fn refused(cause: Refused) -> Fatal {
    Fatal::Preflight(format!(
        "code_exec: model-written code runs in a sandbox, which cannot be built here: {cause}. \
         To run it without isolation, with your rights (only code you trust): \
         --unsafe-code-exec, or unsafe_code_exec = true under [tasks] in a file given with \
         --config, or \
         EVALCTL_UNSAFE_CODE_EXEC=true"
    ))
}

/// Find `python3` on `PATH`: the program to run and its installation prefixes (a virtual
/// environment's and its base's). A compiled program is run as its link target, its prefix the
/// folder above the target's `bin` (a virtual environment's `python3` is run as found, and its
/// environment is a prefix too); anything else (a shim script, as pyenv's) is asked where it
/// lives. A prefix that is `/`, your home directory or a folder above it is refused: the sandbox
/// would show all of it to model-written code. Fails with a clear message when `python3` is
/// missing, unusable or installed so.
fn find_python() -> anyhow::Result<(PathBuf, Vec<PathBuf>)> {
    let (program, install) = match python_binary_on_path() {
        Some(found) => found,
        None => ask_python()?,
    };
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .map(|home| home.canonicalize().unwrap_or(home));
    let broad = install.iter().find(|prefix| {
        prefix.parent().is_none() || home.as_ref().is_some_and(|home| home.starts_with(prefix))
    });
    match broad {
        Some(prefix) => Err(bad_input(Problem::new(
            PYTHON,
            format!(
                "code_exec tasks run their assertions with it, but it is installed in {}, \
                 which the sandbox would show whole to model-written code (/, or your home \
                 directory or a folder above it): put a python3 installed elsewhere first on \
                 PATH (such as /usr/bin/python3)",
                prefix.display()
            ),
        ))),
        None => Ok((program, install)),
    }
}

/// `python3` on `PATH` when it is a compiled program (or a link to one): the program to run
/// and its prefixes; `None` for anything else, left to [`ask_python`]. A link is run as its
/// target, and only the installation the target belongs to is a prefix: the folder above a
/// link (`~/bin`, `~/.local`) holds no more of Python than the link. A virtual environment's
/// link (`pyvenv.cfg` above it) is run as found, so that Python finds its environment.
fn python_binary_on_path() -> Option<(PathBuf, Vec<PathBuf>)> {
    let path = std::env::var_os("PATH")?;
    let program = std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(PYTHON))
        .find(|candidate| candidate.is_file())?;
    let target = program.canonicalize().ok()?;
    let mut magic = [0u8; 4];
    std::io::Read::read_exact(&mut std::fs::File::open(&target).ok()?, &mut magic).ok()?;
    if &magic != b"\x7fELF" {
        return None;
    }
    let prefix = |path: &std::path::Path| path.parent()?.parent().map(std::path::Path::to_path_buf);
    let environment = prefix(&program).filter(|dir| dir.join("pyvenv.cfg").is_file());
    let run = if environment.is_some() {
        program
    } else {
        target.clone()
    };
    let mut install: Vec<PathBuf> = [environment, prefix(&target)]
        .into_iter()
        .flatten()
        .collect();
    install.dedup();
    Some((run, install))
}

/// Ask `python3` (a script, as a pyenv shim) where it lives.
fn ask_python() -> anyhow::Result<(PathBuf, Vec<PathBuf>)> {
    const WHERE: &str = "import sys\nfor p in (sys.executable, sys.prefix, sys.base_prefix, \
                         sys.exec_prefix, sys.base_exec_prefix): print(p)";
    let output = Command::new(PYTHON)
        .args(["-I", "-c", WHERE])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let why = match output {
        Ok(output) if output.status.success() => {
            let text = String::from_utf8_lossy(&output.stdout);
            let mut paths = text
                .lines()
                .filter(|line| !line.is_empty())
                .map(PathBuf::from);
            if let Some(executable) = paths.next() {
                let executable = executable.canonicalize().unwrap_or(executable);
                let mut install: Vec<PathBuf> = paths
                    .map(|path| path.canonicalize().unwrap_or(path))
                    .collect();
                if let Some(dir) = executable.parent() {
                    install.push(dir.to_path_buf());
                }
                install.sort();
                install.dedup();
                return Ok((executable, install));
            }
            "it did not say where it is installed".to_string()
        }
        Ok(output) => format!(
            "it is unusable (asked where it is installed, it failed with {})",
            output.status
        ),
        Err(err) if err.kind() == ErrorKind::NotFound => "it was not found on PATH".to_string(),
        Err(err) => format!("it cannot be started: {}", io_reason(&err)),
    };
    Err(bad_input(Problem::new(
        PYTHON,
        format!("code_exec tasks run their assertions with it, but {why}"),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_is_the_passing_fraction() {
        let outcome = |passed, total| CodeOutcome {
            passed,
            total,
            first_failure: None,
            limits: BTreeMap::new(),
        };
        assert!((outcome(2, 3).score() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(outcome(0, 0).score(), 0.0);
    }
}
