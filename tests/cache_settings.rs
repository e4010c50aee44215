//! Where the cache is and what keys it, through the binary: `cache stats|clear` find the
//! directory `run --cache` uses (flag, then `EVALCTL_CACHE_DIR`, then `cache_dir` in
//! evalctl.toml, then the default), `--cache-dir` and `EVALCTL_CACHE_DIR` combine with
//! `cache = true` from the file, and `--cache-dir` alone is a usage error.

use crate::common::{code, json_stdout, stderr_text, stdout_text, Sandbox};

/// Scores 0.5 and records each call in `calls.log`.
const RECORDING: &str = "cat >/dev/null\necho call >> calls.log\nprintf '{\"score\": 0.5}'\n";

/// A sandbox with a two-example dataset, the recording evaluator and an evalctl.toml that turns
/// the cache on in `from-file/`.
fn project() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"q\": 1}\n{\"q\": 2}\n");
    sb.write("eval.sh", RECORDING);
    sb.write(
        "evalctl.toml",
        "[evaluator]\ncommand = \"sh eval.sh\"\n\n[run]\ndataset = \"d.jsonl\"\n\
         skip_preflight = true\ncache = true\ncache_dir = \"from-file\"\n",
    );
    sb
}

fn run(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = sb.evalctl();
    command
        .args(["run", "--format", "json", "--candidate", "c"])
        .args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("evalctl runs");
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    output
}

/// `evalctl cache SUBCOMMAND --format text` with `args` and `env`: its stdout.
fn cache(sb: &Sandbox, subcommand: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut command = sb.evalctl();
    command
        .args(["cache", subcommand, "--format", "text"])
        .args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("evalctl runs");
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    stdout_text(&output)
}

fn entries(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> String {
    cache(sb, "stats", args, env)
        .lines()
        .find(|line| line.starts_with("entries: "))
        .expect("an entries line")
        .to_string()
}

#[test]
fn cache_commands_use_the_directory_the_run_used() {
    let sb = project();
    run(&sb, &[], &[]);
    assert!(sb.exists("from-file/results.sqlite3"));
    let stats = cache(&sb, "stats", &[], &[]);
    // The file's directory is relative to the file (here the working directory).
    assert!(
        stats.starts_with("cache: from-file/results.sqlite3\nentries: 2\nsize: "),
        "{stats}"
    );
    assert_eq!(cache(&sb, "clear", &[], &[]), "removed 2 cached results\n");
    assert_eq!(entries(&sb, &[], &[]), "entries: 0");
}

#[test]
fn flag_beats_env_beats_file_for_run_and_cache_commands() {
    let sb = project();
    // `cache = true` from the file with the directory from the environment, then from the flag.
    run(&sb, &[], &[("EVALCTL_CACHE_DIR", "from-env")]);
    run(
        &sb,
        &["--cache-dir", "from-flag"],
        &[("EVALCTL_CACHE_DIR", "from-env")],
    );
    assert!(!sb.exists("from-file/results.sqlite3"));
    assert_eq!(sb.lines("calls.log").len(), 4);
    // A second run in each answers from its cache.
    run(&sb, &["--cache-dir", "from-flag"], &[]);
    run(&sb, &[], &[("EVALCTL_CACHE_DIR", "from-env")]);
    assert_eq!(sb.lines("calls.log").len(), 4);

    let env = [("EVALCTL_CACHE_DIR", "from-env")];
    assert_eq!(
        cache(&sb, "clear", &["--cache-dir", "from-flag"], &env),
        "removed 2 cached results\n"
    );
    assert_eq!(entries(&sb, &[], &env), "entries: 2");
    assert_eq!(cache(&sb, "clear", &[], &env), "removed 2 cached results\n");
    // `--no-config` leaves the file's directory out: the default one (under XDG_CACHE_HOME).
    let xdg = sb.join("xdg");
    let xdg = xdg.to_str().unwrap();
    let default = cache(&sb, "stats", &["--no-config"], &[("XDG_CACHE_HOME", xdg)]);
    assert!(
        default.starts_with(&format!(
            "cache: {}\nentries: 0\n",
            sb.join("xdg/evalctl/results.sqlite3").display()
        )),
        "{default}"
    );
    // A relative XDG_CACHE_HOME is ignored, as the XDG specification says: the cache would
    // move with the working directory.
    let home = sb.join("home");
    let env = [("XDG_CACHE_HOME", "xdg"), ("HOME", home.to_str().unwrap())];
    let default = cache(&sb, "stats", &["--no-config"], &env);
    assert!(
        default.starts_with(&format!(
            "cache: {}\nentries: 0\n",
            sb.join("home/.cache/evalctl/results.sqlite3").display()
        )),
        "{default}"
    );
}

#[test]
fn cache_dir_on_the_command_line_without_cache_is_a_usage_error() {
    let sb = Sandbox::new();
    sb.write("eval.sh", RECORDING);
    let output = sb
        .evalctl()
        .args([
            "run",
            "--format",
            "text",
            "--evaluator-command",
            "sh eval.sh",
        ])
        .args(["--candidate", "c", "--cache-dir", "x"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert_eq!(
        stderr_text(&output),
        "error: --cache-dir: takes effect only with --cache (or cache = true in evalctl.toml)\n"
    );
    assert!(!sb.exists("calls.log"));

    // The environment's directory only says where the cache is: without --cache, no cache.
    let quiet = sb
        .evalctl()
        .args(["run", "--format", "json", "--skip-preflight"])
        .args(["--evaluator-command", "sh eval.sh", "--candidate", "c"])
        .env("EVALCTL_CACHE_DIR", "from-env")
        .output()
        .unwrap();
    assert_eq!(code(&quiet), 0, "{}", stderr_text(&quiet));
    assert_eq!(json_stdout(&quiet)["calls"]["total"], 1);
    assert!(!sb.exists("from-env"));
}

/// `eval.sh` reads its score from `lib/score.sh`, a file its command line does not name.
fn indirect() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"q\": 1}\n{\"q\": 2}\n");
    sb.write(
        "eval.sh",
        "cat >/dev/null\necho call >> calls.log\n. lib/score.sh\nprintf '{\"score\": %s}' \"$SCORE\"\n",
    );
    sb.write("lib/score.sh", "SCORE=0.5\n");
    sb
}

fn cached_run(sb: &Sandbox, args: &[&str]) -> serde_json::Value {
    let output = sb
        .evalctl()
        .args([
            "run",
            "--format",
            "json",
            "--skip-preflight",
            "--candidate",
            "c",
        ])
        .args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"])
        .args(["--cache", "--cache-dir", "cache"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    json_stdout(&output)
}

fn score(summary: &serde_json::Value) -> &serde_json::Value {
    &summary["candidates"][0]["score"]
}

#[test]
fn a_declared_input_or_salt_keys_the_cache() {
    let sb = indirect();
    // Undeclared, an edited helper is not seen: the old score comes back (the documented limit).
    assert_eq!(score(&cached_run(&sb, &[])), 0.5);
    sb.write("lib/score.sh", "SCORE=1.0\n");
    assert_eq!(score(&cached_run(&sb, &[])), 0.5);
    assert_eq!(sb.lines("calls.log").len(), 2);

    // Declared (a file, or its directory), the edit misses; the same content hits again.
    for input in ["lib/score.sh", "lib"] {
        assert_eq!(score(&cached_run(&sb, &["--cache-input", input])), 1.0);
        assert_eq!(score(&cached_run(&sb, &["--cache-input", input])), 1.0);
    }
    assert_eq!(sb.lines("calls.log").len(), 6);
    // A file added under a declared directory misses too.
    sb.write("lib/notes/readme.txt", "v2\n");
    assert_eq!(score(&cached_run(&sb, &["--cache-input", "lib"])), 1.0);
    assert_eq!(sb.lines("calls.log").len(), 8);

    // A new salt misses; the same salt hits.
    sb.write("lib/score.sh", "SCORE=0.25\n");
    assert_eq!(score(&cached_run(&sb, &["--cache-salt", "model-v2"])), 0.25);
    assert_eq!(score(&cached_run(&sb, &["--cache-salt", "model-v2"])), 0.25);
    assert_eq!(sb.lines("calls.log").len(), 10);
}

#[test]
fn cache_inputs_and_salt_come_from_evalctl_toml_too() {
    let sb = indirect();
    sb.write(
        "evalctl.toml",
        "[run]\ncache_inputs = [\"lib\"]\ncache_salt = \"v1\"\n",
    );
    assert_eq!(score(&cached_run(&sb, &[])), 0.5);
    sb.write("lib/score.sh", "SCORE=1.0\n");
    assert_eq!(score(&cached_run(&sb, &[])), 1.0);
    assert_eq!(sb.lines("calls.log").len(), 4);
    // EVALCTL_CACHE_SALT beats the file's salt.
    let output = sb
        .evalctl()
        .args(["config", "show", "--format", "text", "run"])
        .env("EVALCTL_CACHE_SALT", "v2")
        .output()
        .unwrap();
    let shown = stdout_text(&output);
    let lines: Vec<&str> = shown
        .lines()
        .filter(|line| line.contains("cache_inputs") || line.contains("cache_salt"))
        .collect();
    assert_eq!(
        lines,
        [
            "run.cache_inputs             lib       evalctl.toml:2",
            "run.cache_salt               v2        env EVALCTL_CACHE_SALT",
        ],
        "{shown}"
    );
}

#[test]
fn a_declared_input_that_is_missing_is_named() {
    let sb = indirect();
    let output = sb
        .evalctl()
        .args([
            "run",
            "--format",
            "text",
            "--skip-preflight",
            "--candidate",
            "c",
        ])
        .args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"])
        .args([
            "--cache",
            "--cache-dir",
            "cache",
            "--cache-input",
            "lib/gone.sh",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert_eq!(
        stderr_text(&output),
        "error: lib/gone.sh: cannot read this --cache-input (cache_inputs) to key the run's \
         calls: No such file or directory\n"
    );
    assert!(!sb.exists("calls.log"));
    sb.write("evalctl.toml", "[run]\ncache_inputs = [\"\"]\n");
    let empty = sb
        .evalctl()
        .args(["config", "show", "--format", "text", "run"])
        .output()
        .unwrap();
    assert_eq!(code(&empty), 2);
    assert_eq!(
        stderr_text(&empty),
        "error: evalctl.toml:2: run.cache_inputs: [0]: must not be empty\n"
    );
}

#[test]
fn a_cache_dir_that_cannot_hold_a_cache_is_bad_input() {
    let sb = project();
    sb.write("notadir", "x\n");
    std::fs::create_dir(sb.join("foreign")).unwrap();
    sb.write("foreign/results.sqlite3", "{\"q\": 1}\n");
    let refused = |args: &[&str]| {
        let out = sb
            .evalctl()
            .args(args)
            .args(["--format", "text"])
            .output()
            .unwrap();
        (code(&out), stderr_text(&out))
    };
    let not_a_directory = "error: notadir: is not a directory, so it cannot hold the cache: \
                           remove it, or name another --cache-dir\n"
        .to_string();
    for args in [
        &["run", "--candidate", "c", "--cache-dir", "notadir"][..],
        &["cache", "stats", "--cache-dir", "notadir"],
        &["cache", "clear", "--cache-dir", "notadir"],
    ] {
        assert_eq!(refused(args), (2, not_a_directory.clone()), "{args:?}");
    }
    // A file there that is no database is left as it was.
    let foreign = "error: foreign/results.sqlite3: is not an evalctl cache (not a SQLite \
                   database): remove it, or name another --cache-dir\n"
        .to_string();
    for args in [
        &["run", "--candidate", "c", "--cache-dir", "foreign"][..],
        &["cache", "stats", "--cache-dir", "foreign"],
        &["cache", "clear", "--cache-dir", "foreign"],
    ] {
        assert_eq!(refused(args), (2, foreign.clone()), "{args:?}");
    }
    assert_eq!(sb.read("foreign/results.sqlite3"), "{\"q\": 1}\n");
    // Nor can a directory where the database belongs.
    std::fs::create_dir_all(sb.join("holed/results.sqlite3")).unwrap();
    let holed = "error: holed/results.sqlite3: is a directory, not the cache: remove it, or name \
                 another --cache-dir\n"
        .to_string();
    for args in [
        &["run", "--candidate", "c", "--cache-dir", "holed"][..],
        &["cache", "stats", "--cache-dir", "holed"],
        &["cache", "clear", "--cache-dir", "holed"],
    ] {
        assert_eq!(refused(args), (2, holed.clone()), "{args:?}");
    }
    assert!(!sb.join("calls.log").exists(), "nothing was evaluated");
}

/// `evalctl ARGS` in `sb` with its directory `dir` read-only: by its mode, or for root, whom
/// modes do not stop, by a read-only bind mount in a mount namespace of its own; `None` (with
/// [`crate::common::tool_missing`]) where root may make no mount namespace.
fn with_read_only_dir(sb: &Sandbox, dir: &str, args: &[&str]) -> Option<std::process::Output> {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        // The database too, as another user's is (SQLite says "read only" then, not "cannot
        // open").
        let mode = |path: &str, mode| {
            let path = sb.join(path);
            path.exists()
                .then(|| std::fs::set_permissions(path, PermissionsExt::from_mode(mode)).unwrap());
        };
        let database = format!("{dir}/results.sqlite3");
        mode(&database, 0o400);
        mode(dir, 0o500);
        let out = sb.evalctl().args(args).output().expect("evalctl runs");
        mode(dir, 0o700);
        mode(&database, 0o600);
        return Some(out);
    }
    let namespaces = std::process::Command::new("unshare")
        .args(["-m", "true"])
        .status()
        .is_ok_and(|status| status.success());
    if !namespaces {
        crate::common::tool_missing(
            "root may make no mount namespace (`unshare -m`) to make a directory read-only",
        );
        return None;
    }
    let mut command = std::process::Command::new("unshare");
    crate::common::clean_environment(&mut command)
        .current_dir(sb.path())
        .args(["-m", "sh", "-c"])
        .arg(
            "mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" && shift && exec \"$@\"",
        )
        .args(["sh", dir, crate::common::bin()])
        .args(args)
        .output()
        .ok()
}

#[test]
fn a_read_only_cache_is_bad_input_for_run_and_stats_reads_it() {
    let sb = project();
    run(&sb, &[], &[]);
    assert_eq!(sb.lines("calls.log").len(), 2);
    let Some(refused) = with_read_only_dir(&sb, "from-file", &["run", "--candidate", "other"])
    else {
        return;
    };
    assert_eq!(
        (code(&refused), stderr_text(&refused)),
        (
            2,
            "error: evalctl.toml:8: run.cache_dir: from-file: the cache directory cannot be \
             written: name a writable one with --cache-dir, or run without the cache (leave out \
             --cache, or EVALCTL_CACHE=false)\n"
                .to_string()
        )
    );
    assert_eq!(sb.lines("calls.log").len(), 2, "nothing was evaluated");
    let stats = with_read_only_dir(&sb, "from-file", &["cache", "stats", "--format", "text"])
        .expect("evalctl runs");
    assert_eq!(code(&stats), 0, "{}", stderr_text(&stats));
    let size = std::fs::metadata(sb.join("from-file/results.sqlite3"))
        .unwrap()
        .len();
    assert!(
        !sb.exists("from-file/results.sqlite3-wal"),
        "nothing was written"
    );
    assert_eq!(
        stdout_text(&stats),
        format!("cache: from-file/results.sqlite3\nentries: 2\nsize: {size} bytes\n")
    );
}
