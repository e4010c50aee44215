//! evalctl under hostile conditions, through the real binary: killed outright while evaluators
//! run, started with few open-file descriptors, and signalled while its inputs load.

use crate::common;

use std::process::{Child, Stdio};
use std::time::Duration;

use crate::common::{bin, process_alive, wait_until, Sandbox};

/// `evalctl ARGS` started in `sandbox`, its output discarded.
fn start(sandbox: &Sandbox, args: &[&str]) -> Child {
    common::evalctl_process()
        .args(args)
        .current_dir(sandbox.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start evalctl")
}

/// The pid a script wrote to `name` in `sandbox`, once it is there.
fn pid_written(sandbox: &Sandbox, name: &str) -> u32 {
    let mut pid = None;
    assert!(
        wait_until(Duration::from_secs(30), || {
            pid = sandbox.read(name).trim().parse().ok();
            pid.is_some()
        }),
        "{name} was never written"
    );
    pid.expect("checked above") // ok: wait_until held
}

#[test]
fn evaluators_die_when_evalctl_is_killed_outright() {
    let sandbox = Sandbox::new();
    // The evaluator also starts a process of its own, in the background. It reads its payload
    // first: evalctl has told the reaper of the group before it writes the payload, so the kill
    // below cannot fall between the spawn and that message (a window of a pipe write).
    sandbox.write(
        "eval.sh",
        "cat > /dev/null\necho $$ > evaluator.pid\nsleep 300 &\necho $! > background.pid\nwhile :; do sleep 0.05; done\n",
    );
    let mut evalctl = start(
        &sandbox,
        &[
            "run",
            "--skip-preflight",
            "--timeout",
            "300",
            "--evaluator-command",
            "sh eval.sh",
            "--candidate",
            "x",
        ],
    );
    let evaluator = pid_written(&sandbox, "evaluator.pid");
    let background = pid_written(&sandbox, "background.pid");
    assert!(process_alive(evaluator) && process_alive(background));
    evalctl.kill().expect("SIGKILL evalctl");
    evalctl.wait().expect("reap evalctl");
    assert!(
        wait_until(Duration::from_secs(5), || !process_alive(evaluator)),
        "the evaluator (pid {evaluator}) outlived a killed evalctl"
    );
    assert!(
        wait_until(Duration::from_secs(5), || !process_alive(background)),
        "the evaluator's own background process (pid {background}) outlived a killed evalctl"
    );
}

#[test]
fn a_low_open_file_limit_bounds_calls_in_flight_with_one_warning() {
    const CALLS: usize = 200;
    let sandbox = Sandbox::new();
    sandbox.write(
        "eval.sh",
        "cat >/dev/null\nsleep 0.01\nprintf '{\"score\": 1}'\n",
    );
    let dataset: String = (0..CALLS).map(|i| format!("{{\"n\": {i}}}\n")).collect();
    sandbox.write("data.jsonl", dataset);
    // The hard limit is lowered too, so raising the soft one cannot help.
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            "ulimit -S -n 64 && ulimit -H -n 64 && exec \"$0\" \"$@\"",
            bin(),
            "run",
            "--format",
            "json",
            "-j",
            "256",
            "--evaluator-command",
            "sh eval.sh",
            "--dataset",
            "data.jsonl",
            "--candidate",
            "x",
            "--output",
            "out.jsonl",
        ])
        .current_dir(sandbox.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("run sh");
    let stderr = common::stderr_text(&out);
    assert_eq!(common::code(&out), 0, "{stderr}");
    let records = sandbox.jsonl("out.jsonl");
    assert_eq!(records.len(), CALLS);
    assert!(records.iter().all(|record| record["error"].is_null()));
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].starts_with("warning: -j 256 needs about ")
            && warnings[0].contains("the open-file limit is 64")
            && warnings[0].contains("running at most"),
        "{stderr}"
    );
}

/// Send `signal` to `child`.
fn signal(child: &Child, signal: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions.
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    assert_eq!(sent, 0, "kill {}", child.id());
}

/// Wait for `child` for at most `limit`, killing it when it does not end in time; its exit code
/// (`None` when a signal ended it) and stderr.
fn finish_within(mut child: Child, limit: Duration) -> (Option<i32>, String) {
    let ended = wait_until(limit, || child.try_wait().expect("try_wait").is_some());
    if !ended {
        let _ = child.kill();
    }
    let out = child.wait_with_output().expect("collect output");
    assert!(ended, "evalctl did not end within {limit:?}");
    (out.status.code(), common::stderr_text(&out))
}

/// Whether `pid` has a file named `name` open (Linux `/proc`).
fn has_open(pid: u32, name: &str) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|entries| {
        entries.flatten().any(|entry| {
            std::fs::read_link(entry.path()).is_ok_and(|target| target.ends_with(name))
        })
    })
}

#[test]
fn a_signal_while_a_fifo_dataset_waits_for_its_writer_exits_130() {
    let sandbox = Sandbox::new();
    sandbox.write("eval.sh", common::PRINT_EVAL_OUT);
    let made = std::process::Command::new("mkfifo")
        .arg(sandbox.join("data.jsonl"))
        .status()
        .expect("run mkfifo");
    assert!(made.success());
    let evalctl = common::evalctl_process()
        .args([
            "run",
            "--evaluator-command",
            "sh eval.sh",
            "--dataset",
            "data.jsonl",
            "--candidate",
            "x",
        ])
        .current_dir(sandbox.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start evalctl");
    // A thread of evalctl blocks opening the FIFO: nothing writes to it.
    let blocked_on_fifo = || {
        std::fs::read_dir(format!("/proc/{}/task", evalctl.id())).is_ok_and(|tasks| {
            tasks.flatten().any(|task| {
                std::fs::read_to_string(task.path().join("wchan"))
                    .is_ok_and(|wchan| wchan == "wait_for_partner")
            })
        })
    };
    assert!(wait_until(Duration::from_secs(20), blocked_on_fifo));
    signal(&evalctl, libc::SIGTERM);
    let (code, stderr) = finish_within(evalctl, Duration::from_secs(5));
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(
        stderr,
        "interrupted while reading inputs: nothing was evaluated\n"
    );
}

#[test]
fn streaming_fep_stops_on_sigterm_and_keeps_what_it_evaluated() {
    use std::io::Write;
    let sandbox = Sandbox::new();
    sandbox.write(
        "cases.jsonl",
        "{\"id\": \"a\", \"input\": \"q\", \"expected\": \"Paris\"}\n\
         {\"id\": \"b\", \"input\": \"q\", \"expected\": \"Rome\"}\n",
    );
    sandbox.write(
        "checks.json",
        r#"{"checks": [{"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "$.test_case.expected"}}]}"#,
    );
    let mut fep = common::evalctl_process()
        .args([
            "fep",
            "evaluate",
            "--test-cases",
            "cases.jsonl",
            "--outputs",
            "-",
            "--checks",
            "checks.json",
        ])
        .current_dir(sandbox.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start evalctl");
    let mut stdin = fep.stdin.take().expect("piped stdin");
    assert!(wait_until(Duration::from_secs(20), || has_open(
        fep.id(),
        "cases.jsonl"
    )));
    // One output, then stdin stays open: the second pair never completes.
    stdin
        .write_all(b"{\"value\": \"Paris\"}\n")
        .and_then(|()| stdin.flush())
        .expect("write the first output");
    // SIGTERM once evalctl has taken the line out of the pipe.
    assert!(wait_until(Duration::from_secs(20), || unread_bytes(&stdin) == 0));
    signal(&fep, libc::SIGTERM);
    let ended = wait_until(Duration::from_secs(5), || {
        fep.try_wait().expect("try_wait").is_some()
    });
    drop(stdin);
    let out = fep.wait_with_output().expect("collect output");
    assert!(ended, "fep evaluate ignored SIGTERM");
    let stderr = common::stderr_text(&out);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert_eq!(
        stderr,
        "interrupted: the results so far (1 test case) were written\n"
    );
    let document = common::json_stdout(&out);
    assert_eq!(document["summary"]["total_test_cases"], 1, "{document}");
    assert_eq!(document["results"][0]["status"], "completed", "{document}");
}

#[test]
fn many_calls_in_flight_all_answer_when_starts_move_off_the_runtime_thread() {
    // Past 16 children running at once, evaluators start on the blocking pool: every call still
    // gets its payload and its line, none is lost or doubled.
    let sandbox = Sandbox::new();
    sandbox.write(
        "eval.sh",
        "read -r payload\nsleep 0.2\nprintf '{\"score\": 1, \"seen\": %s}' \"$payload\"\n",
    );
    let dataset: String = (0..48).map(|i| format!("{{\"n\": {i}}}\n")).collect();
    sandbox.write("data.jsonl", dataset);
    let out = sandbox
        .evalctl()
        .args(["run", "--format", "json", "-j", "48", "--skip-preflight"])
        .args([
            "--evaluator-command",
            "sh eval.sh",
            "--dataset",
            "data.jsonl",
        ])
        .args(["--candidate", "x", "--output", "out.jsonl"])
        .output()
        .expect("run evalctl");
    assert_eq!(common::code(&out), 0, "{}", common::stderr_text(&out));
    let mut seen: Vec<u64> = sandbox
        .jsonl("out.jsonl")
        .iter()
        .map(|line| {
            line["side_info"]["seen"]["example"]["n"]
                .as_u64()
                .expect("the payload came back")
        })
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..48).collect::<Vec<u64>>());
}

/// How many bytes written to `pipe` its reader has not taken yet (`FIONREAD`, which Linux
/// answers on either end of a pipe).
fn unread_bytes(pipe: &impl std::os::fd::AsRawFd) -> libc::c_int {
    let mut unread: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which points at `unread`.
    let answered = unsafe { libc::ioctl(pipe.as_raw_fd(), libc::FIONREAD, &mut unread) };
    assert_eq!(answered, 0, "FIONREAD: {}", std::io::Error::last_os_error());
    unread
}
