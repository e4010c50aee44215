//! `evalctl.toml` discovery on a shared machine, as git treats `safe.directory`: a file found in
//! the working directory or a parent that another user owns, or that group or others may write,
//! is not used (its evaluator command never runs); evalctl warns, naming the file, why, and
//! `--config FILE`, which trusts it. A file of the user's found in a parent directory chooses no
//! command or evaluator either, unless named. The attack: a file in a shared parent directory (a shared
//! `/tmp`) whose evaluator command would create a marker file.

use std::os::unix::fs::PermissionsExt;

use crate::common::{stderr_text, Sandbox};

/// `shared/evalctl.toml` whose evaluator (`sh eval.sh`, run in `shared/`) creates
/// `shared/marker`, with `mode`; the user works in `shared/work`.
fn shared_config(mode: u32) -> Sandbox {
    let dir = Sandbox::new();
    dir.write("shared/eval.sh", "touch marker\nprintf '{\"score\": 1}'\n");
    let config = dir.write(
        "shared/evalctl.toml",
        "[evaluator]\ncommand = [\"sh\", \"eval.sh\"]\n",
    );
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(mode)).unwrap();
    std::fs::create_dir(dir.join("shared/work")).unwrap();
    dir
}

/// `evalctl ARGS --candidate x --format text` in `shared/work`.
fn run(dir: &Sandbox, args: &[&str]) -> std::process::Output {
    dir.evalctl()
        .current_dir(dir.join("shared/work"))
        .args(args)
        .args(["--candidate", "x", "--format", "text"])
        .output()
        .unwrap()
}

const NO_EVALUATOR: &str = "error: run: no evaluator: pass one of --evaluator-command, \
    --evaluator-url, --judge-model, --checks or --spec, or set one in the [evaluator] section of \
    evalctl.toml (evalctl init writes a starter)\n";

#[test]
fn a_config_others_may_write_is_not_used_unless_named() {
    let dir = shared_config(0o666);
    let ignored = run(&dir, &["run"]);
    assert_eq!(ignored.status.code(), Some(2));
    assert_eq!(
        stderr_text(&ignored),
        format!(
            "warning: ../evalctl.toml is not used: group or others may write it (mode 0666), so \
             someone else could choose the commands evalctl runs; if you trust it, pass \
             --config ../evalctl.toml\n{NO_EVALUATOR}"
        )
    );
    assert!(!dir.exists("shared/marker"), "the file's evaluator ran");

    let named = run(&dir, &["run", "--config", "../evalctl.toml"]);
    assert_eq!(named.status.code(), Some(0), "{}", stderr_text(&named));
    assert!(dir.exists("shared/marker"), "--config FILE is trusted");
}

#[test]
fn the_users_own_config_above_the_working_directory_chooses_no_command_unless_named() {
    // A file of the user's, but found above the working directory (a repository cloned into a
    // folder of theirs): its evaluator is not used.
    let dir = shared_config(0o644);
    let output = run(&dir, &["run"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr_text(&output),
        format!(
            "warning: ../evalctl.toml: not used from a parent directory: evaluator.command (line \
             2): a file found above the working directory may not choose what runs, what is \
             called with your keys, which files are read, or where results are read and written; \
             pass --config ../evalctl.toml if you trust it\n\
             error: run: no evaluator: ../evalctl.toml sets one, but it was found in a parent \
             directory and may not choose what runs: pass --config ../evalctl.toml if you trust \
             it, or pass one of --evaluator-command, --evaluator-url, --judge-model, --checks or \
             --spec\n"
        )
    );
    assert!(!dir.exists("shared/marker"), "the file's evaluator ran");
    let named = run(&dir, &["run", "--config", "../evalctl.toml"]);
    assert_eq!(named.status.code(), Some(0), "{}", stderr_text(&named));
    assert_eq!(stderr_text(&named), "");
    assert!(dir.exists("shared/marker"));
}

#[test]
fn what_a_parent_config_may_not_set_cannot_stop_the_command_either() {
    // An [evaluator] section that would be refused for its own sake (a companion key without
    // the evaluator it belongs to, a value of the wrong type) is left out unread, as a valid
    // one is.
    let dir = Sandbox::new();
    let config = dir.write(
        "shared/evalctl.toml",
        "[evaluator]\njudge_base_url = \"http://127.0.0.1:1/v1\"\nrubric = 3\n",
    );
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::create_dir(dir.join("shared/work")).unwrap();
    dir.write("shared/work/eval.sh", "printf '{\"score\": 1}'\n");
    let output = run(&dir, &["run", "--evaluator-command", "sh eval.sh"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_text(&output));
    assert_eq!(
        stderr_text(&output),
        "warning: ../evalctl.toml: not used from a parent directory: evaluator.judge_base_url \
         (line 2), evaluator.rubric (line 3): a file found above the working directory may not \
         choose what runs, what is called with your keys, which files are read, or where results \
         are read and written; pass --config ../evalctl.toml if you trust it\n"
    );
    // Named, it is read, and refused for what it says.
    let named = run(
        &dir,
        &[
            "run",
            "--evaluator-command",
            "sh eval.sh",
            "--config",
            "../evalctl.toml",
        ],
    );
    assert_eq!(
        (named.status.code(), stderr_text(&named)),
        (
            Some(2),
            "error: ../evalctl.toml:2: evaluator.judge_base_url: only applies to `judge_model` or \
             `spec`, which this section does not set\nerror: ../evalctl.toml:3: \
             evaluator.rubric: expected a string, found integer\n"
                .to_string()
        )
    );
}

#[test]
fn the_users_own_config_in_the_working_directory_is_used() {
    let dir = shared_config(0o644);
    let output = dir
        .evalctl()
        .current_dir(dir.join("shared"))
        .args(["run", "--candidate", "x", "--format", "text"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_text(&output));
    assert_eq!(stderr_text(&output), "");
    assert!(dir.exists("shared/marker"));
}

#[test]
fn another_users_config_is_not_used() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        // Only root can give a file away; unprivileged, the mode case above is what is tested.
        eprintln!("another_users_config_is_not_used: skipped, it needs root to chown a file");
        return;
    }
    let dir = shared_config(0o644);
    std::os::unix::fs::chown(dir.join("shared/evalctl.toml"), Some(65534), None).unwrap();
    let warning = "warning: ../evalctl.toml is not used: it is owned by another user (uid 65534; \
        you are uid 0), so someone else could choose the commands evalctl runs; if you trust it, \
        pass --config ../evalctl.toml\n";
    let ignored = run(&dir, &["run"]);
    assert_eq!(stderr_text(&ignored), format!("{warning}{NO_EVALUATOR}"));
    assert!(!dir.exists("shared/marker"), "the file's evaluator ran");
    let shown = dir
        .evalctl()
        .current_dir(dir.join("shared/work"))
        .args(["config", "show", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(shown.status.code(), Some(0));
    assert_eq!(stderr_text(&shown), warning);
    assert_eq!(
        crate::common::json_stdout(&shown)["config_file"],
        serde_json::Value::Null
    );
    let named = run(&dir, &["run", "--config", "../evalctl.toml"]);
    assert_eq!(named.status.code(), Some(0), "{}", stderr_text(&named));
    assert!(dir.exists("shared/marker"), "--config FILE is trusted");
}

#[test]
fn init_writes_a_file_discovery_trusts_whatever_the_umask() {
    let dir = Sandbox::new();
    let mut init = std::process::Command::new("sh");
    crate::common::clean_environment(&mut init)
        .current_dir(dir.path())
        .args(["-c", "umask 002; exec \"$0\" init --format text"])
        .arg(crate::common::bin());
    assert!(init.status().unwrap().success());
    let mode = std::fs::metadata(dir.join("evalctl.toml"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644);
    let shown = dir
        .evalctl()
        .args(["config", "show", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(stderr_text(&shown), "");
    assert_eq!(
        crate::common::json_stdout(&shown)["config_file"],
        "evalctl.toml"
    );
}

#[test]
fn an_unprivileged_user_does_not_use_roots_config() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("an_unprivileged_user_does_not_use_roots_config: skipped, it runs as root");
        return;
    }
    // A directory everyone may write in (a shared /tmp), holding root's file.
    let dir = shared_config(0o644);
    for path in [
        dir.path().to_path_buf(),
        dir.join("shared"),
        dir.join("shared/work"),
    ] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let mut command = std::process::Command::new("setpriv");
    command
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(crate::common::bin())
        .args(["run", "--candidate", "x", "--format", "text"])
        .current_dir(dir.join("shared/work"));
    crate::common::clean_environment(&mut command);
    let ignored = command.output().unwrap();
    assert_eq!(
        stderr_text(&ignored),
        format!(
            "warning: ../evalctl.toml is not used: it is owned by another user (uid 0; you are \
             uid 65534), so someone else could choose the commands evalctl runs; if you trust \
             it, pass --config ../evalctl.toml\n{NO_EVALUATOR}"
        )
    );
    assert!(!dir.exists("shared/marker"), "the file's evaluator ran");
}

#[test]
fn a_config_above_the_working_directory_chooses_no_cache_or_journal_to_read() {
    // A repository could ship a cache or a journal whose lines answer the user's calls.
    let dir = Sandbox::new();
    dir.write(
        "shared/evalctl.toml",
        "[run]\ncache = true\ncache_dir = \"vendor/cache\"\noutput = \"vendor/r.jsonl\"\n\
         resume = true\n[tasks]\nsave_outputs = \"vendor/saved.jsonl\"\nresume = true\n",
    );
    dir.write("shared/work/eval.sh", "printf '{\"score\": 1}'\n");
    let output = dir
        .evalctl()
        .current_dir(dir.join("shared/work"))
        .env("XDG_CACHE_HOME", dir.join("home-cache"))
        .args([
            "run",
            "--evaluator-command",
            "sh eval.sh",
            "--candidate",
            "x",
        ])
        .args(["--format", "text"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_text(&output));
    assert_eq!(
        stderr_text(&output),
        "warning: ../evalctl.toml: not used from a parent directory: run.cache_dir (line 3), \
         run.output (line 4), run.resume (line 5), tasks.save_outputs (line 7), tasks.resume \
         (line 8): a file found above the working directory may not choose what runs, what is \
         called with your keys, which files are read, or where results are read and written; \
         pass --config ../evalctl.toml if you trust it\n\
         note: ../evalctl.toml, found in a parent directory, sets run.cache (line 2)\n"
    );
    assert!(
        !dir.exists("shared/vendor"),
        "the parent's cache or journal was used"
    );
    assert!(
        dir.exists("home-cache/evalctl"),
        "the user's own cache was used"
    );
    // `config show`, where a user looks to learn why a setting does not apply, says it too.
    let shown = dir
        .evalctl()
        .current_dir(dir.join("shared/work"))
        .args(["config", "show", "run", "--format", "text"])
        .output()
        .unwrap();
    assert_eq!(shown.status.code(), Some(0), "{}", stderr_text(&shown));
    assert_eq!(stderr_text(&shown), stderr_text(&output));
}

#[test]
fn a_config_above_the_working_directory_chooses_no_file_to_read_and_says_what_it_sets() {
    // A dataset's lines go to the evaluator (and to the results file); a repository above the
    // working directory could name any file the user can read.
    let dir = Sandbox::new();
    dir.write("secret.json", "{\"token\": \"s3cr3t\"}\n");
    dir.write(
        "shared/evalctl.toml",
        "[run]\ndataset = \"../secret.json\"\nvalset = \"../secret.json\"\n\
         cache_inputs = [\"/usr\"]\nlimit = 1\n",
    );
    dir.write(
        "shared/work/eval.sh",
        "cat > seen.json\nprintf '{\"score\": 1}'\n",
    );
    let output = run(&dir, &["run", "--evaluator-command", "sh eval.sh"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_text(&output));
    assert_eq!(
        stderr_text(&output),
        "warning: ../evalctl.toml: not used from a parent directory: run.dataset (line 2), \
         run.valset (line 3), run.cache_inputs (line 4): a file found above the working \
         directory may not choose what runs, what is called with your keys, which files are \
         read, or where results are read and written; pass --config ../evalctl.toml if you \
         trust it\n\
         note: ../evalctl.toml, found in a parent directory, sets run.limit (line 5)\n"
    );
    let seen = std::fs::read_to_string(dir.join("shared/work/seen.json")).unwrap();
    assert!(!seen.contains("s3cr3t"), "the evaluator was sent {seen}");
}
