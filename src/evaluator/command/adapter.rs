//! The command evaluator: one child process per call, run without a shell, payload on stdin,
//! JSON on stdout, stderr kept (bounded) for the error record.

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use async_trait::async_trait;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use super::output::{
    exit_reason, logs_on_stdout, read_capped, stderr_suffix, with_stderr, Captured, Keep,
    MAX_STDERR_BYTES,
};
use super::program::{
    check_program, check_script_argument, resolve_program, script_interpreter, shebang_for,
    shebang_interpreter,
};
use super::spawn::{prefilled_stdin, start};
use crate::evaluator::{Call, Evaluator};
use crate::process_group::start_reaper;
use crate::protocol::MAX_OUTPUT_BYTES;
use crate::protocol::{parse_evaluator_output, Attempt, CallError, ErrorKind, Retry, ScoreRange};
use crate::secrets::Secrets;
use crate::text::{counted, seconds};

/// How long stderr may stay open after the evaluator answered and exited (a process it left
/// behind may hold it); then the answer is judged with the stderr read so far.
const STDERR_GRACE: Duration = Duration::from_millis(100);
/// How a child's exchange ended within the deadline.
enum Ended {
    /// It closed stdout and exited: its status.
    Exited(std::io::Result<ExitStatus>),
    /// It printed more than [`MAX_OUTPUT_BYTES`] on stdout (it has been killed).
    Overflowed,
}

/// The environment variable that carries `--task-model` to command evaluators.
pub const TASK_MODEL_ENV: &str = "OPTIMIZE_ANYTHING_TASK_MODEL";

/// `--evaluator-command` and `--evaluator-cwd`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// Program and arguments (never run through a shell).
    pub argv: Vec<String>,
    /// Working directory of the child; the current one when absent.
    pub cwd: Option<PathBuf>,
}

impl CommandSpec {
    /// The working directory the child starts in, made absolute.
    pub fn working_directory(&self) -> PathBuf {
        match &self.cwd {
            Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.clone()),
            None => std::env::current_dir().unwrap_or_default(),
        }
    }

    /// The files the command names, each beside the argv word that names it: the program when
    /// it is a path (otherwise it is found on PATH) and every argument naming an existing file
    /// (the script, or any file it reads), resolved against the working directory.
    pub fn named_files(&self) -> impl Iterator<Item = (usize, PathBuf)> + '_ {
        let cwd = self.working_directory();
        self.argv
            .iter()
            .enumerate()
            .filter_map(move |(index, word)| {
                let names_path = index > 0 || word.contains('/');
                Some((index, cwd.join(word))).filter(|(_, path)| names_path && path.is_file())
            })
    }
}

/// The role of a custom check's command.
const CUSTOM_CHECK: &str = "custom check command";

/// Runs a command per call.
pub struct CommandEvaluator {
    spec: CommandSpec,
    program: PathBuf,
    timeout: Duration,
    score_range: ScoreRange,
    /// What messages call the command: `evaluator`, or `model command` for `tasks run`.
    role: &'static str,
    /// The environment's secrets, which the command inherits and may print: what it prints
    /// loses them before it reaches a message, a result or a completion.
    secrets: Secrets,
}

/// What a child printed before it exited.
struct ChildOutput {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    status: ExitStatus,
}

impl CommandEvaluator {
    /// A command evaluator with a per-call `timeout`.
    pub fn new(spec: CommandSpec, timeout: Duration, score_range: ScoreRange) -> Self {
        let program = resolve_program(&spec.argv[0], spec.cwd.as_deref());
        CommandEvaluator {
            spec,
            program,
            timeout,
            score_range,
            role: "evaluator",
            secrets: Secrets::of_environment(),
        }
    }

    /// The model command of `tasks run`: the same child handling, its stdout the completion.
    pub fn model(spec: CommandSpec, timeout: Duration) -> Self {
        CommandEvaluator {
            role: "model command",
            ..CommandEvaluator::new(spec, timeout, ScoreRange::Any)
        }
    }

    /// A custom check's command (`checks::custom`): the same child handling, its stdout the
    /// check's results.
    pub fn check_command(spec: CommandSpec, timeout: Duration) -> Self {
        CommandEvaluator {
            role: CUSTOM_CHECK,
            ..CommandEvaluator::new(spec, timeout, ScoreRange::Any)
        }
    }

    /// One exchange with the model or check command: `input` on stdin, its stdout (UTF-8) the
    /// answer.
    /// A non-zero exit, a timeout or output that is not UTF-8 is the call error.
    pub(crate) async fn complete(&self, input: &[u8]) -> Result<String, CallError> {
        let output = self.exchange(input, None).await?;
        // Its stderr loses the environment's secrets before an excerpt is cut from it (a cut
        // through a secret would leave a piece).
        let stderr = self
            .secrets
            .redact(&String::from_utf8_lossy(&output.stderr));
        if !output.status.success() {
            return Err(CallError::new(
                ErrorKind::ExitStatus,
                format!("{}{}", exit_reason(output.status), stderr_suffix(&stderr)),
            ));
        }
        let answer = String::from_utf8(output.stdout).map_err(|_| {
            CallError::new(
                ErrorKind::InvalidOutput,
                format!("stdout is not UTF-8{}", stderr_suffix(&stderr)),
            )
        })?;
        Ok(self.secrets.redact(&answer))
    }

    fn command_line(&self) -> String {
        shell_words::join(&self.spec.argv)
    }

    fn cwd_display(&self) -> String {
        let cwd = match &self.spec.cwd {
            Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.clone()),
            None => std::env::current_dir().unwrap_or_default(),
        };
        cwd.display().to_string()
    }

    /// One attempt: exchange the payload and answer, and judge the answer.
    async fn run_child(&self, call: &Call<'_>) -> Attempt {
        match self.exchange(&call.payload(), call.task_model).await {
            Ok(output) => {
                self.secrets
                    .scrub(self.answer(&output.stdout, &output.stderr, output.status))
            }
            Err(error) => Attempt::failed(error),
        }
    }

    /// Spawn the child in its own process group, write `input` and read its answer within the
    /// deadline. The group guard kills the child and everything it started on every way out (a
    /// dropped child is reaped by tokio).
    async fn exchange(
        &self,
        input: &[u8],
        task_model: Option<&str>,
    ) -> Result<ChildOutput, CallError> {
        let (stdin, unwritten) = match prefilled_stdin(input) {
            Ok(prefilled) => prefilled,
            Err(err) => return Err(CallError::new(ErrorKind::Spawn, self.spawn_reason(&err))),
        };
        let mut command = Command::new(&self.program);
        command
            .args(&self.spec.argv[1..])
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(dir) = &self.spec.cwd {
            command.current_dir(dir);
        }
        if let Some(model) = task_model {
            command.env(TASK_MODEL_ENV, model);
        }
        // A custom check's command (which a request may declare) does not get the secrets this
        // process keeps for others: the server's token, the keys lent to endpoints.
        if self.role == CUSTOM_CHECK {
            for name in crate::secrets::held_env() {
                command.env_remove(name);
            }
        }
        start_reaper();
        let spawned = start(command).await;
        let (group, mut child) = match spawned {
            Ok(started) => started,
            Err(err) => return Err(CallError::new(ErrorKind::Spawn, self.spawn_reason(&err))),
        };
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");

        // One deadline covers writing the payload, reading the answer and the exit. stderr is
        // drained all along (a full pipe would block the evaluator); once the answer is in and
        // the evaluator has exited, a process it left behind holding stderr gets a moment, not
        // the whole deadline.
        let mut stderr_bytes = Captured::default();
        // Whether stdout has ended: an evaluator past the deadline with its answer written has
        // not exited, rather than not answered.
        let answered = std::sync::atomic::AtomicBool::new(false);
        // What stdout held, also when the deadline passed before it ended.
        let mut out = Captured::default();
        let ended = tokio::time::timeout(self.timeout, async {
            let answer = async {
                let write = async {
                    // An evaluator that never reads stdin closes the pipe: that is not an error.
                    if let Some((mut stdin, written)) = unwritten {
                        let _ = stdin.write_all(&input[written..]).await;
                    }
                };
                let read_stdout = async {
                    read_capped(&mut stdout, &mut out, MAX_OUTPUT_BYTES, Keep::Head).await;
                    answered.store(!out.overflowed, std::sync::atomic::Ordering::Relaxed);
                    if out.overflowed {
                        // Stop the evaluator now: it holds stderr (and maybe stdin) open, so
                        // waiting for them would wait for the timeout.
                        group.kill();
                    }
                    out.overflowed
                };
                let (_, overflowed) = tokio::join!(write, read_stdout);
                if overflowed {
                    return Ended::Overflowed;
                }
                Ended::Exited(child.wait().await)
            };
            let drain = read_capped(&mut stderr, &mut stderr_bytes, MAX_STDERR_BYTES, Keep::Tail);
            tokio::pin!(answer, drain);
            let mut drained = false;
            let ended = loop {
                tokio::select! {
                    ended = &mut answer => break ended,
                    () = &mut drain, if !drained => drained = true,
                }
            };
            if !drained {
                let _ = tokio::time::timeout(STDERR_GRACE, &mut drain).await;
            }
            ended
        })
        .await;
        let failure = match ended {
            // Dropping `group` kills anything the evaluator left running in its group.
            Ok(Ended::Exited(Ok(status))) => {
                return Ok(ChildOutput {
                    stdout: out.bytes,
                    stderr: stderr_bytes.bytes,
                    status,
                })
            }
            Ok(Ended::Exited(Err(err))) => CallError::new(
                ErrorKind::Spawn,
                format!("cannot wait for the {}: {err}", self.role),
            ),
            Ok(Ended::Overflowed) => CallError::new(
                ErrorKind::InvalidOutput,
                format!(
                    "stdout exceeded {} MiB; the {} was killed",
                    MAX_OUTPUT_BYTES / (1024 * 1024),
                    self.role
                ),
            ),
            Err(_) => match child.try_wait() {
                Ok(Some(_)) => CallError::new(
                    ErrorKind::Timeout,
                    format!(
                        "the {} exited, but a process it started kept its stdout open past {}; \
                         it was killed (redirect background processes' output away from stdout)",
                        self.role,
                        seconds(self.timeout)
                    ),
                ),
                _ if answered.load(std::sync::atomic::Ordering::Relaxed) => CallError::new(
                    ErrorKind::Timeout,
                    format!(
                        "the {} closed its stdout but did not exit within {}; it and its \
                         children were killed",
                        self.role,
                        seconds(self.timeout)
                    ),
                ),
                _ if !out.bytes.is_empty() => CallError::new(
                    ErrorKind::Timeout,
                    format!(
                        "no answer within {}: the {} printed {} to stdout but neither closed it \
                         nor exited (it must exit once its answer is printed); it and its \
                         children were killed",
                        seconds(self.timeout),
                        self.role,
                        counted(out.bytes.len(), "byte", "bytes"),
                    ),
                ),
                _ => CallError::new(
                    ErrorKind::Timeout,
                    format!(
                        "no answer within {}; the {} and its children were killed",
                        seconds(self.timeout),
                        self.role
                    ),
                ),
            },
        };
        group.kill();
        let _ = child.wait().await;
        Err(failure)
    }

    /// The attempt for an evaluator that exited with `status` after printing `stdout`.
    fn answer(&self, stdout: &[u8], stderr: &[u8], status: ExitStatus) -> Attempt {
        // What it printed loses the environment's secrets before an excerpt is cut from it (a
        // cut through a secret would leave a piece), as an HTTP evaluator's reply does.
        let stderr_text = self.secrets.redact(&String::from_utf8_lossy(stderr));
        let stdout = &self.secrets.redact_bytes(stdout.to_vec());
        let (score, side_info) = parse_evaluator_output(stdout, self.score_range);
        let score = if status.success() {
            score.map_err(|err| with_stderr(logs_on_stdout(err, stdout), &stderr_text))
        } else {
            Err(CallError::new(
                ErrorKind::ExitStatus,
                format!("{}{}", exit_reason(status), stderr_suffix(&stderr_text)),
            ))
        };
        Attempt {
            score,
            side_info,
            retry: Retry::Never,
            findings: crate::protocol::Findings::default(),
        }
    }

    fn spawn_reason(&self, err: &std::io::Error) -> String {
        let program = &self.spec.argv[0];
        match err.raw_os_error() {
            Some(libc::ENOENT) if !program.contains('/') => format!("cannot start '{program}': not found on PATH"),
            // The file exists, so what is missing is the interpreter its shebang line names.
            Some(libc::ENOENT) if self.program.is_file() => match shebang_interpreter(&self.program) {
                Some(interpreter) => format!(
                    "cannot start '{program}': its interpreter '{interpreter}' (shebang line) was not found"
                ),
                None => format!("cannot start '{program}': no such file or interpreter"),
            },
            Some(libc::ENOENT) => format!("cannot start '{program}': no such file (cwd: {})", self.cwd_display()),
            Some(libc::EACCES) => format!("cannot start '{program}': permission denied (is the run bit set? chmod +x {program})"),
            Some(libc::ENOEXEC) => {
                let interpreter = script_interpreter(&self.program);
                format!(
                    "cannot start '{program}': exec format error (a script needs a shebang line such as {}, or run it as '{interpreter} {program}')",
                    shebang_for(&interpreter)
                )
            }
            _ => format!("cannot start '{program}': {err}"),
        }
    }
}

#[async_trait]
impl Evaluator for CommandEvaluator {
    fn kind(&self) -> &'static str {
        "command"
    }

    fn target(&self) -> String {
        self.command_line()
    }

    fn describe(&self) -> String {
        format!(
            "command '{}' (cwd: {})",
            self.command_line(),
            self.cwd_display()
        )
    }

    fn check_setup(&self) -> Result<(), String> {
        if let Some(dir) = &self.spec.cwd {
            if let Some(reason) = crate::input::not_a_directory(dir) {
                return Err(format!("--evaluator-cwd {}: {reason}", dir.display()));
            }
        }
        check_program(&self.spec.argv[0], &self.program)?;
        check_script_argument(&self.spec.argv, self.spec.cwd.as_deref())
    }

    async fn evaluate(&self, call: &Call<'_>) -> Attempt {
        self.run_child(call).await
    }
}
