//! A signal while a run writes its summary and reports, through the binary and driven by events:
//! after a first Ctrl-C, a second Ctrl-C, SIGTERM or SIGHUP once the calls have ended lets
//! evalctl write the summary, the JUnit report and the HTML report whole, and it exits 130.
//!
//! The evaluator waits on a FIFO the test opens once evalctl has said it is stopping; the HTML
//! report is a FIFO too, which the test opens only after sending the second signal, so the
//! signal certainly arrives while the report is still to be written.

use std::ffi::CString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use crate::common::{self, mask_elapsed, wait_until, Sandbox};

/// How long any one event may take before the test fails instead of hanging.
const EVENT: Duration = Duration::from_secs(60);

fn mkfifo(sb: &Sandbox, name: &str) {
    let path = CString::new(sb.join(name).into_os_string().into_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(path.as_ptr(), 0o600) },
        0,
        "mkfifo {name}"
    );
}

/// Send `signal` to `child`.
fn signal(child: &Child, signal: libc::c_int) {
    // SAFETY: kill with a live child's pid has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
}

/// Every line `stream` gives, as it comes, and all of them once it ends.
fn lines(stream: impl Read + Send + 'static) -> Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

/// Wait for a line of `receiver` that starts with `prefix`; the lines seen on the way, it
/// included, are added to `seen`.
fn wait_for_line(receiver: &Receiver<String>, prefix: &str, seen: &mut Vec<String>) {
    loop {
        let line = receiver
            .recv_timeout(EVENT)
            .unwrap_or_else(|_| panic!("no line starting {prefix:?}; seen {seen:?}"));
        let found = line.starts_with(prefix);
        seen.push(line);
        if found {
            return;
        }
    }
}

/// A child killed when the test ends early (a failed assertion), so none is left behind.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A one-call run with `--report` and `--junit`: with `first_ctrl_c`, a Ctrl-C while its call is
/// in flight; then `second` once the summary is out and the HTML report still to be written.
/// Asserts exit 130 and both reports whole; returns the stdout and stderr lines.
fn signal_while_writing(first_ctrl_c: bool, second: libc::c_int) -> (Vec<String>, Vec<String>) {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"q\": 1}\n");
    sb.write(
        "eval.sh",
        "cat >/dev/null\necho started >> started.log\nread line < gate.fifo\nprintf '{\"score\": 1}'\n",
    );
    mkfifo(&sb, "gate.fifo");
    mkfifo(&sb, "report.html");
    let mut command = common::evalctl_process();
    command
        .current_dir(sb.path())
        .args([
            "run",
            "--format",
            "text",
            "--skip-preflight",
            "--candidate",
            "c",
        ])
        .args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"])
        .args(["--report", "report.html", "--junit", "junit.xml"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = Running(command.spawn().expect("start evalctl"));
    let stdout = lines(child.0.stdout.take().unwrap());
    let stderr = lines(child.0.stderr.take().unwrap());
    assert!(wait_until(EVENT, || sb.exists("started.log")));

    // The first Ctrl-C: evalctl waits for the call in flight, which the gate then lets finish.
    let mut errors = Vec::new();
    if first_ctrl_c {
        signal(&child.0, libc::SIGINT);
        wait_for_line(&stderr, "interrupted: no new calls", &mut errors);
    }
    // Not blocking: the open succeeds once the evaluator has opened the gate to read (until
    // then it says ENXIO); should the evaluator be gone, this fails instead of waiting forever.
    let mut gate = None;
    let opened = wait_until(EVENT, || {
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(sb.join("gate.fifo"))
        {
            Ok(file) => gate = Some(file),
            Err(err) if err.raw_os_error() == Some(libc::ENXIO) => {}
            Err(err) => panic!("open the gate: {err}"),
        }
        gate.is_some()
    });
    assert!(opened, "the evaluator never opened the gate to read");
    gate.expect("the gate is open")
        .write_all(b"go\n")
        .expect("open the gate");

    // The calls have ended once the summary is out; the report is still to be written.
    let mut summary = Vec::new();
    wait_for_line(&stdout, "exit ", &mut summary);
    signal(&child.0, second);
    let report_path = sb.join("report.html");
    let reader = {
        let path = report_path.clone();
        std::thread::spawn(move || {
            let mut report = String::new();
            std::fs::File::open(path)
                .and_then(|mut fifo| fifo.read_to_string(&mut report))
                .map(|_| report)
        })
    };
    let status = child.0.wait().expect("evalctl ends");
    // Should evalctl have ended without opening the report, a writer that comes and goes gives
    // the reader its end of file (when the report was written, no reader is left: this fails).
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&report_path);
    let report = reader.join().unwrap().expect("read the report");
    assert_eq!(status.code(), Some(130), "{status:?}; stderr {errors:?}");
    summary.extend(stdout.iter());
    errors.extend(stderr.iter());
    let summary: Vec<String> = mask_elapsed(&summary.join("\n"))
        .lines()
        .map(String::from)
        .collect();
    let page_kb = format!("{:.1} kB", report.len() as f64 / 1e3);
    let errors: Vec<String> = errors
        .iter()
        .map(|line| line.replace(&page_kb, "[size]"))
        .collect();
    assert!(report.starts_with("<!DOCTYPE html>"), "{report:.40}");
    assert!(report.trim_end().ends_with("</html>"));
    let junit = sb.read("junit.xml");
    assert!(junit.contains("tests=\"1\""), "{junit}");
    (summary, errors)
}

/// What a run interrupted by a first Ctrl-C prints, whatever the second signal.
fn assert_interrupted_run(second: libc::c_int) {
    let (summary, errors) = signal_while_writing(true, second);
    assert_eq!(
        summary,
        [
            "evaluator: command sh eval.sh   score range: unit",
            "calls: 1 (1 ok, 0 errors)   elapsed: [..]s   (interrupted: partial results)",
            "",
            "candidate  score   train mean  n / errors",
            "cand-1     1.0000  1.0000      1 / 0",
            "",
            "score = the candidate's train mean; failed calls count as 0",
            "",
            "exit 130: interrupted; the summary covers the calls that finished; the call succeeded",
        ]
    );
    assert_eq!(
        errors,
        [
            "interrupted: no new calls; waiting up to 5s for the 1 in flight (Ctrl-C again stops \
             them now)",
            "wrote junit.xml: 1 test case (0 failures, 0 errors)",
            "wrote report.html: 1 result (0 failed), [size]",
            "interrupted: 1 of 1 calls finished; the summary covers them",
        ]
    );
}

#[test]
fn a_second_ctrl_c_while_reports_are_written_lets_them_finish() {
    assert_interrupted_run(libc::SIGINT);
}

#[test]
fn sigterm_while_reports_are_written_lets_them_finish() {
    assert_interrupted_run(libc::SIGTERM);
}

#[test]
fn sighup_while_reports_are_written_lets_them_finish() {
    assert_interrupted_run(libc::SIGHUP);
}

#[test]
fn a_signal_while_a_finished_runs_reports_are_written_makes_it_exit_130() {
    let (summary, errors) = signal_while_writing(false, libc::SIGTERM);
    assert_eq!(
        summary,
        [
            "evaluator: command sh eval.sh   score range: unit",
            "calls: 1 (1 ok, 0 errors)   elapsed: [..]s",
            "",
            "candidate  score   train mean  n / errors",
            "cand-1     1.0000  1.0000      1 / 0",
            "",
            "score = the candidate's train mean; failed calls count as 0",
            "",
            "exit 0: the call succeeded",
        ]
    );
    assert_eq!(
        errors,
        [
            "wrote junit.xml: 1 test case (0 failures, 0 errors)",
            "wrote report.html: 1 result (0 failed), [size]",
            "interrupted while the summary and reports were written: they are complete"
        ]
    );
}
