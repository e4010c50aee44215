//! The command adapter: one child process per call, run without a shell, payload on stdin, JSON
//! on stdout, stderr kept (bounded) for the error record.
//!
//! Each child leads its own process group: a timeout or an interrupted run kills the evaluator
//! together with everything it started, and whatever it leaves running after it exits is killed
//! too, so no call leaves a process behind. On Linux the child is also killed by the kernel when
//! evalctl dies without a chance to clean up (`kill -9`).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use async_trait::async_trait;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use super::{Call, Evaluator};
use crate::process_group::{start_reaper, GroupKiller};
use crate::protocol::MAX_OUTPUT_BYTES;
use crate::protocol::{parse_evaluator_output, Attempt, CallError, ErrorKind, Retry, ScoreRange};
use crate::text::{clip_tail, one_line, seconds};
use std::sync::atomic::{AtomicUsize, Ordering};

/// How long stderr may stay open after the evaluator answered and exited (a process it left
/// behind may hold it); then the answer is judged with the stderr read so far.
const STDERR_GRACE: Duration = Duration::from_millis(100);
/// How much stderr is kept for error messages: its last bytes (the rest is read and dropped).
const MAX_STDERR_BYTES: usize = 16 * 1024;
/// How much of the kept stderr an error message quotes (its tail).
const STDERR_IN_MESSAGE: usize = 500;
/// How a child's exchange ended within the deadline.
enum Ended {
    /// It closed stdout and exited: stdout and its status.
    Exited(Captured, std::io::Result<ExitStatus>),
    /// It printed more than [`MAX_OUTPUT_BYTES`] on stdout (it has been killed).
    Overflowed,
}

/// Interpreters whose first argument is the script they run: preflight checks that the script
/// exists, and the multi-word `--evaluator-command` form ends after the script.
pub const SCRIPT_INTERPRETERS: &[&str] = &[
    "bash", "sh", "zsh", "python", "python3", "node", "ruby", "perl",
];
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

/// Runs a command per call.
pub struct CommandEvaluator {
    spec: CommandSpec,
    program: PathBuf,
    timeout: Duration,
    score_range: ScoreRange,
    /// What messages call the command: `evaluator`, or `model command` for `tasks run`.
    role: &'static str,
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
            role: "custom check command",
            ..CommandEvaluator::new(spec, timeout, ScoreRange::Any)
        }
    }

    /// One exchange with the model or check command: `input` on stdin, its stdout (UTF-8) the
    /// answer.
    /// A non-zero exit, a timeout or output that is not UTF-8 is the call error.
    pub(crate) async fn complete(&self, input: &[u8]) -> Result<String, CallError> {
        let output = self.exchange(input, None).await?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            return Err(CallError::new(
                ErrorKind::ExitStatus,
                format!("{}{}", exit_reason(output.status), stderr_suffix(&stderr)),
            ));
        }
        String::from_utf8(output.stdout).map_err(|_| {
            CallError::new(
                ErrorKind::InvalidOutput,
                format!("stdout is not UTF-8{}", stderr_suffix(&stderr)),
            )
        })
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
            Ok(output) => self.answer(&output.stdout, &output.stderr, output.status),
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
        let ended = tokio::time::timeout(self.timeout, async {
            let answer = async {
                let write = async {
                    // An evaluator that never reads stdin closes the pipe: that is not an error.
                    if let Some((mut stdin, written)) = unwritten {
                        let _ = stdin.write_all(&input[written..]).await;
                    }
                };
                let read_stdout = async {
                    let mut out = Captured::default();
                    read_capped(&mut stdout, &mut out, MAX_OUTPUT_BYTES, Keep::Head).await;
                    if out.overflowed {
                        // Stop the evaluator now: it holds stderr (and maybe stdin) open, so
                        // waiting for them would wait for the timeout.
                        group.kill();
                    }
                    out
                };
                let (_, out) = tokio::join!(write, read_stdout);
                if out.overflowed {
                    return Ended::Overflowed;
                }
                Ended::Exited(out, child.wait().await)
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
            Ok(Ended::Exited(out, Ok(status))) => {
                return Ok(ChildOutput {
                    stdout: out.bytes,
                    stderr: stderr_bytes.bytes,
                    status,
                })
            }
            Ok(Ended::Exited(_, Err(err))) => CallError::new(
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
        let stderr_text = String::from_utf8_lossy(stderr);
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
            if !dir.is_dir() {
                return Err(format!(
                    "--evaluator-cwd {}: no such directory",
                    dir.display()
                ));
            }
        }
        check_program(&self.spec.argv[0], &self.program)?;
        check_script_argument(&self.spec.argv, self.spec.cwd.as_deref())
    }

    async fn evaluate(&self, call: &Call<'_>) -> Attempt {
        self.run_child(call).await
    }
}

/// What was read from a pipe.
#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    /// More than the cap arrived.
    overflowed: bool,
}

/// Which part of a pipe's output [`read_capped`] keeps.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// The first `cap` bytes, and stop reading there (stdout: past the cap the answer is invalid
    /// and the caller kills the child).
    Head,
    /// The last `cap` bytes of a stream read to its end (stderr: its final line says what went
    /// wrong).
    Tail,
}

/// The least room [`read_capped`] offers each read.
const READ_AHEAD: usize = 8 * 1024;

/// Read a pipe into `into`, keeping at most `cap` bytes as `keep` says. What was read is in `into`
/// even when the read is abandoned half-way.
async fn read_capped(
    pipe: &mut (impl AsyncRead + Unpin),
    into: &mut Captured,
    cap: usize,
    keep: Keep,
) {
    let Captured { bytes, overflowed } = into;
    loop {
        // Read straight into the spare room of `bytes` (no zeroed buffer to copy from: most
        // answers are a few bytes, and a run makes thousands of calls).
        bytes.reserve(READ_AHEAD);
        match pipe.read_buf(bytes).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if bytes.len() > cap {
            *overflowed = true;
            match keep {
                Keep::Head => {
                    bytes.truncate(cap);
                    break;
                }
                Keep::Tail => {
                    let excess = bytes.len() - cap;
                    bytes.drain(..excess);
                }
            }
        }
    }
}

fn exit_reason(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("command exited with code {code}"),
        (None, Some(signal)) => format!("command was killed by signal {signal}"),
        (None, None) => "command failed".to_string(),
    }
}

fn stderr_suffix(stderr: &str) -> String {
    let trimmed = stderr.trim();
    if trimmed.is_empty() {
        return String::new();
    }
    format!(
        "; stderr: {}",
        one_line(&clip_tail(trimmed, STDERR_IN_MESSAGE))
    )
}

/// An answer that is not JSON but holds a JSON object on a line of its own beside other lines
/// comes from an evaluator that prints its progress or debug lines to stdout: say so (a cause
/// every call shares, whatever the candidate).
fn logs_on_stdout(error: CallError, stdout: &[u8]) -> CallError {
    if error.kind != ErrorKind::InvalidJson {
        return error;
    }
    let text = String::from_utf8_lossy(stdout);
    let mut lines = text.lines().filter(|line| !line.trim().is_empty());
    let has_object = lines.clone().any(|line| {
        matches!(
            serde_json::from_str(line.trim()),
            Ok(serde_json::Value::Object(_))
        )
    });
    if !has_object || lines.nth(1).is_none() {
        return error;
    }
    CallError::setup_fault(
        error.kind,
        format!(
            "{} — stdout must hold only the JSON object; log to stderr",
            error.message
        ),
    )
}

fn with_stderr(mut error: CallError, stderr: &str) -> CallError {
    if matches!(
        error.kind,
        ErrorKind::InvalidJson | ErrorKind::InvalidOutput
    ) {
        error.message.push_str(&stderr_suffix(stderr));
    }
    error
}

/// The program to run: a relative path with a slash is taken relative to the evaluator's cwd (as
/// a shell in that directory would); a bare name is looked up on PATH by the OS.
fn resolve_program(program: &str, cwd: Option<&Path>) -> PathBuf {
    let path = PathBuf::from(program);
    match cwd {
        Some(dir) if program.contains('/') && path.is_relative() => {
            let joined = dir.join(path);
            std::path::absolute(&joined).unwrap_or(joined)
        }
        _ => path,
    }
}

fn check_program(program: &str, resolved: &Path) -> Result<(), String> {
    if !program.contains('/') {
        return match find_on_path(program) {
            Some(_) => Ok(()),
            None => Err(format!("executable '{program}' not found on PATH")),
        };
    }
    let metadata = std::fs::metadata(resolved).map_err(|_| format!("'{program}': no such file"))?;
    if metadata.is_dir() {
        return Err(format!("'{program}' is a directory, not an executable"));
    }
    if metadata.permissions().mode() & 0o111 == 0 {
        return Err(format!(
            "'{program}' is not executable (the run bit is not set): chmod +x {program}, or run it as '{} {program}'",
            script_interpreter(resolved)
        ));
    }
    let mut head = [0u8; 4];
    let read = std::fs::File::open(resolved)
        .and_then(|mut file| std::io::Read::read(&mut file, &mut head))
        .map_err(|err| format!("'{program}': cannot read: {err}"))?;
    let head = &head[..read];
    if shebang_line(resolved).is_some_and(|line| line.ends_with('\r')) {
        return Err(format!(
            "'{program}': the script has Windows line endings (CRLF): its shebang line ends in a \
             carriage return, which the system takes as part of the interpreter's name; convert \
             the file (dos2unix {program}, or sed -i 's/\\r$//' {program})"
        ));
    }
    if !head.starts_with(b"#!") && !head.starts_with(b"\x7fELF") {
        let interpreter = script_interpreter(resolved);
        return Err(format!(
            "'{program}' has no shebang line: start it with a line such as {}, or run it as '{interpreter} {program}'",
            shebang_for(&interpreter)
        ));
    }
    Ok(())
}

/// The interpreter to suggest for running the script at `path` by hand: the one its `#!` line
/// names (through `env`, its first operand), else the usual one for its extension (`python3`
/// for `.py`, `node` `.js`, `ruby` `.rb`, `perl` `.pl`, `bash` `.bash`), else `sh`.
fn script_interpreter(path: &Path) -> String {
    if let Some(named) = shebang_command(path) {
        return named;
    }
    let by_extension = match path.extension().and_then(|extension| extension.to_str()) {
        Some("py") => "python3",
        Some("js" | "mjs" | "cjs") => "node",
        Some("rb") => "ruby",
        Some("pl") => "perl",
        Some("bash") => "bash",
        _ => "sh",
    };
    by_extension.to_string()
}

/// The shebang line to suggest for `interpreter`.
fn shebang_for(interpreter: &str) -> String {
    match interpreter {
        "sh" => "#!/bin/sh".to_string(),
        other => format!("#!/usr/bin/env {other}"),
    }
}

/// The command a script's `#!` line runs, by name: `python3` for `#!/usr/bin/python3` and for
/// `#!/usr/bin/env -S python3 -u`.
fn shebang_command(path: &Path) -> Option<String> {
    let line = shebang_line(path)?;
    let mut words = line.split_whitespace();
    let interpreter = words.next()?;
    let name = |word: &str| word.rsplit('/').next().unwrap_or(word).to_string();
    if name(interpreter) != "env" {
        return Some(name(interpreter));
    }
    words
        .find(|word| !word.starts_with('-') && !word.contains('='))
        .map(name)
}

/// The interpreter a script's `#!` line names, if it has one.
fn shebang_interpreter(path: &Path) -> Option<String> {
    Some(shebang_line(path)?.split_whitespace().next()?.to_string())
}

/// A script's `#!` line, without the `#!`.
fn shebang_line(path: &Path) -> Option<String> {
    let mut head = [0u8; 256];
    let read = std::io::Read::read(&mut std::fs::File::open(path).ok()?, &mut head).ok()?;
    let line = head[..read].strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next().unwrap_or_default();
    Some(String::from_utf8_lossy(line).into_owned())
}

fn check_script_argument(argv: &[String], cwd: Option<&Path>) -> Result<(), String> {
    let interpreter = Path::new(&argv[0])
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or_default();
    let Some(script) = argv.get(1) else {
        return Ok(());
    };
    if !SCRIPT_INTERPRETERS.contains(&interpreter) || script.starts_with('-') {
        return Ok(());
    }
    let path = resolve_program(&format!("./{script}"), cwd);
    let path = if Path::new(script).is_absolute() {
        PathBuf::from(script)
    } else {
        path
    };
    if path.is_file() {
        Ok(())
    } else {
        Err(format!("script '{script}' not found"))
    }
}

/// Whether `program` names something to run: a path (checked when the command starts), or a bare
/// name found on PATH.
pub fn on_path(program: &str) -> bool {
    program.contains('/') || find_on_path(program).is_some()
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// The child's stdin: a fresh pipe holding as much of `payload` as it takes now (all of a
/// payload up to the pipe's capacity, 64 KiB by default on Linux), written before the child
/// starts so that it reads its payload, and the end of it, as soon as it runs, without waiting
/// for evalctl to be scheduled. The rest of a larger payload comes back with how much was
/// written, for writing once the child reads; the write end is closed at once when nothing is
/// left.
fn prefilled_stdin(
    payload: &[u8],
) -> std::io::Result<(Stdio, Option<(tokio::net::unix::pipe::Sender, usize)>)> {
    let (reader, mut writer) = std::io::pipe()?;
    // Only the write end is non-blocking: the child reads its end as an ordinary stdin.
    let fd = std::os::fd::AsRawFd::as_raw_fd(&writer);
    // SAFETY: `fd` is the pipe's open write end, owned by `writer` for the whole call.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    let written = match std::io::Write::write(&mut writer, payload) {
        Ok(written) => written,
        Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => 0,
        Err(err) => return Err(err),
    };
    let unwritten = if written == payload.len() {
        None
    } else {
        let sender = tokio::net::unix::pipe::Sender::from_owned_fd_unchecked(writer.into())?;
        Some((sender, written))
    };
    Ok((Stdio::from(reader), unwritten))
}

/// Children of command evaluators running now, in the whole process.
static RUNNING: AtomicUsize = AtomicUsize::new(0);
/// From how many children running at once the next one is started off the runtime thread.
/// Starting a process holds its thread until the child has exec'd; with many calls in flight,
/// their answers wait meanwhile (at `-j 64` with a 50 ms evaluator that costs a fifth of the
/// run), while with few the hand-off to another thread costs more than it frees (about 5–9% of
/// a run of trivial `sh` evaluators at `-j 2` or `-j 8`).
const START_ELSEWHERE_FROM: usize = 16;

/// How many children the blocking pool starts at once: two, so that on a 2-core machine a wave of
/// calls ending together is started again on both cores. `runner::fd_limit` keeps descriptors
/// aside for their pipes.
const STARTS_AT_ONCE: usize = 2;

/// A started child, counted in [`RUNNING`] until dropped.
struct Running;

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Start `command` with its group guard (made as soon as the child exists, so a child whose call
/// was abandoned meanwhile is still killed): on this thread while few children run, else on a
/// thread of the blocking pool, [`STARTS_AT_ONCE`] at a time there.
async fn start(mut command: Command) -> std::io::Result<(Started, tokio::process::Child)> {
    fn spawn(command: &mut Command) -> std::io::Result<(Started, tokio::process::Child)> {
        let child = command.spawn()?;
        RUNNING.fetch_add(1, Ordering::Relaxed);
        let started = Started {
            group: GroupKiller::new(child.id()),
            _running: Running,
        };
        Ok((started, child))
    }
    if RUNNING.load(Ordering::Relaxed) < START_ELSEWHERE_FROM {
        return spawn(&mut command);
    }
    static STARTING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(STARTS_AT_ONCE);
    let Ok(start_slot) = STARTING.acquire().await else {
        return Err(std::io::Error::other("evalctl is stopping"));
    };
    let spawned = tokio::task::spawn_blocking(move || {
        let _start_slot = start_slot;
        spawn(&mut command)
    })
    .await;
    match spawned {
        Ok(started) => started,
        Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
        Err(_) => Err(std::io::Error::other("evalctl is stopping")),
    }
}

/// A started child's guards: its process group, and its place in [`RUNNING`].
struct Started {
    group: GroupKiller,
    _running: Running,
}

impl Started {
    /// Kill the child's whole process group now.
    fn kill(&self) {
        self.group.kill();
    }
}
