//! The files evalctl writes: a report replaces its file atomically (a failed write leaves the
//! earlier report as it was, and no temporary file), and what keeps evaluators' words (results
//! files, reports, the cache) is created readable by its owner only.

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

    // evalctl may not write more than 4 KiB to any file (ulimit -f counts 512-byte blocks): its
    // SIGXFSZ does not kill it, and writing the report fails with "File too large".
    sandbox.write("report.html", "the earlier report\n");
    let limited = clean_environment(&mut std::process::Command::new("sh"))
        .current_dir(sandbox.path())
        .args([
            "-c",
            "ulimit -f 8; exec \"$0\" report r.jsonl -o report.html",
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
    assert_eq!(names(sandbox.path()), before, "no temporary file is left");
}

#[test]
fn a_report_written_again_keeps_the_mode_its_file_was_given_and_a_link_stays_a_link() {
    // A report shared on purpose (`chmod 644`, a link into a web root) stays shared.
    let sandbox = sandbox_with_results();
    sandbox.write("report.html", "the earlier report\n");
    std::fs::set_permissions(
        sandbox.join("report.html"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");
    std::fs::create_dir(sandbox.join("site")).expect("a directory");
    sandbox.write("site/shared.xml", "the earlier report\n");
    std::fs::set_permissions(
        sandbox.join("site/shared.xml"),
        std::fs::Permissions::from_mode(0o640),
    )
    .expect("chmod");
    std::os::unix::fs::symlink("site/shared.xml", sandbox.join("junit.xml")).expect("linked");
    succeeded(
        sandbox
            .evalctl()
            .args(["report", "r.jsonl", "-o", "report.html"]),
    );
    succeeded(
        sandbox
            .evalctl()
            .args(["summarize", "r.jsonl", "--junit", "junit.xml"]),
    );
    let linked = std::fs::symlink_metadata(sandbox.join("junit.xml"))
        .expect("exists")
        .file_type()
        .is_symlink();
    assert_eq!(
        (
            mode(&sandbox.join("report.html")),
            linked,
            mode(&sandbox.join("site/shared.xml")),
            sandbox.read("site/shared.xml").starts_with("<?xml"),
            names(&sandbox.join("site")),
        ),
        (0o644, true, 0o640, true, vec!["shared.xml".to_string()])
    );
}

#[test]
fn results_reports_and_the_cache_are_readable_by_their_owner_only() {
    let sandbox = Sandbox::new();
    sandbox.write("c.jsonl", "{\"id\":\"a\",\"candidate\":\"x\"}\n");
    sandbox.write("d.jsonl", "{\"q\":1}\n");
    succeeded(
        sandbox
            .run_with("cat >/dev/null\necho '{\"score\": 0.5}'\n")
            .args(["--candidates", "c.jsonl", "--dataset", "d.jsonl"])
            .args(["--cache", "--cache-dir", "cache/evalctl"])
            .args([
                "--output", "r.jsonl", "--report", "r.html", "--junit", "r.xml",
            ]),
    );
    let modes: Vec<(String, u32)> = ["cache", "cache/evalctl", "r.jsonl", "r.html", "r.xml"]
        .iter()
        .map(|name| (name.to_string(), mode(&sandbox.join(name))))
        .chain(
            names(&sandbox.join("cache/evalctl"))
                .into_iter()
                .map(|name| {
                    let path = sandbox.join("cache/evalctl").join(&name);
                    (name, mode(&path))
                }),
        )
        .collect();
    assert_eq!(
        modes,
        [
            ("cache".to_string(), 0o700),
            ("cache/evalctl".to_string(), 0o700),
            ("r.jsonl".to_string(), 0o600),
            ("r.html".to_string(), 0o600),
            ("r.xml".to_string(), 0o600),
            ("results.sqlite3".to_string(), 0o600),
        ]
    );

    // tasks score's results file too.
    let tasks = sandbox.write(
        "tasks.jsonl",
        "{\"task_id\":\"t\",\"category\":\"classification\",\"prompt\":\"Say a.\",\
         \"targets\":[\"a\"],\"metric_name\":\"exact_match\",\"post_process\":\"none\"}\n",
    );
    sandbox.write("outputs.jsonl", "{\"task_id\":\"t\",\"output\":\"a\"}\n");
    succeeded(sandbox.evalctl().args([
        "tasks",
        "score",
        tasks.to_str().expect("a UTF-8 path"),
        "--outputs",
        "outputs.jsonl",
        "--output",
        "t.jsonl",
        "--format",
        "json",
    ]));
    assert_eq!(mode(&sandbox.join("t.jsonl")), 0o600);
}
