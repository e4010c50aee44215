//! The files evalctl writes: a report replaces its file atomically (a failed write leaves the
//! earlier report as it was, and no temporary file).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common::{bin, clean_environment, code, stderr_text, succeeded, Sandbox};

/// A run of one candidate over two examples whose results are in `r.jsonl`.
fn sandbox_with_results() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write("c.jsonl", "{\"id\":\"a\",\"candidate\":\"x\"}\n");
    sandbox.write("d.jsonl", "{\"q\":1}\n{\"q\":2}\n");
    succeeded(
        sandbox
            .run_with("cat >/dev/null\necho '{\"score\": 0.5, \"reasoning\": \"secret-ish\"}'\n")
            .args(["--candidates", "c.jsonl", "--dataset", "d.jsonl"])
            .args(["--output", "r.jsonl"]),
    );
    sandbox
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("listed")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn a_report_replaces_its_file_atomically_or_not_at_all() {
    let sandbox = sandbox_with_results();
    let before = ["c.jsonl", "d.jsonl", "eval.sh", "r.jsonl", "report.html"];

    // evalctl may not write more than 4 KiB to any file (ulimit -f counts 512-byte blocks), and
    // ignores SIGXFSZ as the shell does: writing the report fails with "File too large".
    sandbox.write("report.html", "the earlier report\n");
    let limited = clean_environment(&mut std::process::Command::new("sh"))
        .current_dir(sandbox.path())
        .args([
            "-c",
            "trap '' XFSZ; ulimit -f 8; exec \"$0\" report r.jsonl -o report.html",
            bin(),
        ])
        .output()
        .expect("sh runs");
    assert_eq!(code(&limited), 4, "{}", stderr_text(&limited));
    assert_eq!(
        stderr_text(&limited),
        "error: report.html: writing the report failed: File too large\n"
    );
    assert_eq!(sandbox.read("report.html"), "the earlier report\n");
    assert_eq!(names(sandbox.path()), before, "no temporary file is left");

    succeeded(
        sandbox
            .evalctl()
            .args(["report", "r.jsonl", "-o", "report.html"]),
    );
    assert!(sandbox.read("report.html").starts_with("<!DOCTYPE html>"));
    assert_eq!(mode(&sandbox.join("report.html")), 0o600);
    assert_eq!(names(sandbox.path()), before, "no temporary file is left");
}
