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
