//! Progress off a terminal, through the binary: a one-line heartbeat on stderr every
//! `--heartbeat` seconds while slow calls run (none with `--heartbeat 0`).

use crate::common::*;

fn run(heartbeat: &str) -> std::process::Output {
    let sb = Sandbox::new();
    sb.write(
        "eval.sh",
        "cat >/dev/null\nsleep 0.5\nprintf '{\"score\": 1}'\n",
    );
    sb.write("d.jsonl", "{\"q\":1}\n{\"q\":2}\n{\"q\":3}\n");
    sb.evalctl()
        .args([
            "run",
            "--format",
            "json",
            "--evaluator-command",
            "sh eval.sh",
        ])
        .args([
            "--candidate",
            "c",
            "--dataset",
            "d.jsonl",
            "--skip-preflight",
            "-j",
            "1",
        ])
        .args(["--heartbeat", heartbeat])
        .output()
        .unwrap()
}

#[test]
fn a_heartbeat_line_while_calls_run() {
    let out = run("0.2");
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    let stderr = stderr_text(&out);
    let beats: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("progress: "))
        .collect();
    assert!(beats.len() >= 4, "{stderr}");
    // Before the first call ends there is already a line; later ones count the calls done.
    assert!(
        beats[0].starts_with("progress: 0/3 calls, elapsed 0s, 1 in flight, 0 errors"),
        "{stderr}"
    );
    assert!(
        beats
            .iter()
            .any(|line| line.contains("/3 calls") && line.contains("mean cand-1 1.000")),
        "{stderr}"
    );
}

#[test]
fn no_heartbeat_with_zero() {
    let out = run("0");
    assert_eq!(code(&out), 0);
    assert_eq!(stderr_text(&out), "");
}
