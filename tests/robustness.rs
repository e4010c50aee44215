//! evalctl under hostile conditions, through the real binary: killed outright while evaluators
//! run, started with few open-file descriptors, and signalled while its inputs load.

mod common;

use std::process::{Child, Stdio};
use std::time::Duration;

use common::{bin, process_alive, wait_until, Sandbox};

/// `evalctl ARGS` started in `sandbox`, its output discarded.
fn start(sandbox: &Sandbox, args: &[&str]) -> Child {
    std::process::Command::new(bin())
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
    sandbox.write(
        "eval.sh",
        "echo $$ > evaluator.pid\nwhile :; do sleep 0.05; done\n",
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
    assert!(process_alive(evaluator));
    evalctl.kill().expect("SIGKILL evalctl");
    evalctl.wait().expect("reap evalctl");
    assert!(
        wait_until(Duration::from_secs(5), || !process_alive(evaluator)),
        "the evaluator (pid {evaluator}) outlived a killed evalctl"
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
