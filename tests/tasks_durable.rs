//! `tasks run`'s journal and cache through the real binary: `--save-outputs` lines carry each
//! completion's key and usage, `--resume` repairs a torn last line and generates only what is
//! missing, a changed configuration is refused rather than mixed into the file, and `--cache`
//! answers a prompt the same model was given before (a changed model script misses).

use crate::common::{code, json_stdout, stderr_text, Sandbox};
use serde_json::{json, Value};

/// Four tasks whose right answer is their own id.
const TASKS: &str = r#"{"task_id": "t1", "category": "classification", "prompt": "say t1", "targets": ["t1"], "metric_name": "exact_match", "post_process": "strip_whitespace"}
{"task_id": "t2", "category": "classification", "prompt": "say t2", "targets": ["t2"], "metric_name": "exact_match", "post_process": "strip_whitespace"}
{"task_id": "t3", "category": "classification", "prompt": "say t3", "targets": ["t3"], "metric_name": "exact_match", "post_process": "strip_whitespace"}
{"task_id": "t4", "category": "classification", "prompt": "say t4", "targets": ["t4"], "metric_name": "exact_match", "post_process": "strip_whitespace"}
"#;

/// A model that records each call in calls.log, answers with the task id, fails the tasks
/// listed in fail.txt, and never answers those listed in hold.txt (it creates `holding` and
/// waits to be stopped).
const MODEL: &str = r#"task=$(sed -n 's/^{"task_id":"\([^"]*\)".*/\1/p')
echo "$task" >> calls.log
if [ -f fail.txt ] && grep -qx "$task" fail.txt; then echo "down" >&2; exit 3; fi
if [ -f hold.txt ] && grep -qx "$task" hold.txt; then touch holding; exec sleep 60; fi
printf '%s' "$task"
"#;

fn suite() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("tasks.jsonl", TASKS);
    sb.write("model.sh", MODEL);
    sb
}

/// `tasks run` of the suite's tasks, its summary in JSON.
const TASKS_RUN: [&str; 6] = [
    "tasks",
    "run",
    "tasks.jsonl",
    "--no-config",
    "--format",
    "json",
];

fn tasks_run(sb: &Sandbox, extra: &[&str]) -> std::process::Output {
    sb.evalctl()
        .args(TASKS_RUN)
        .args(["--model-command", "sh model.sh", "-j", "1"])
        .args(extra)
        .output()
        .unwrap()
}

/// `tasks run` of the suite's tasks in `sb` with `model` (a command), one call at a time, its
/// outputs saved in saved.jsonl, started and left running (stdout and stderr piped).
fn saving_in_the_background(sb: &Sandbox, model: &str) -> std::process::Child {
    crate::common::evalctl_process()
        .current_dir(sb.path())
        .args(TASKS_RUN)
        .args(["--model-command", model, "-j", "1"])
        .args(["--save-outputs", "saved.jsonl"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start evalctl")
}

/// `evalctl ARGS` in `sb`, sent SIGTERM once `ready` holds (SIGTERM stops the call in flight
/// at once; a first Ctrl-C would let it finish), run to its end.
fn stopped_once(sb: &Sandbox, args: &[&str], ready: impl FnMut() -> bool) -> std::process::Output {
    let child = crate::common::evalctl_process()
        .current_dir(sb.path())
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start evalctl");
    assert!(
        crate::common::wait_until(std::time::Duration::from_secs(60), ready),
        "evalctl never got where it is to be stopped"
    );
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    child.wait_with_output().expect("evalctl ends")
}

/// `tasks run` of the suite, one call at a time, its scores written to scores.jsonl.
const RUN_TO_SCORES: [&str; 12] = [
    "tasks",
    "run",
    "tasks.jsonl",
    "--no-config",
    "--format",
    "json",
    "--model-command",
    "sh model.sh",
    "-j",
    "1",
    "--output",
    "scores.jsonl",
];

fn calls(sb: &Sandbox) -> Vec<String> {
    std::fs::read_to_string(sb.path().join("calls.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn resume_repairs_a_torn_line_and_generates_only_the_missing_completions() {
    let sb = suite();
    sb.write("fail.txt", "t2\n");
    let first = tasks_run(&sb, &["--save-outputs", "saved.jsonl"]);
    assert_eq!(code(&first), 1, "{}", stderr_text(&first));
    assert_eq!(calls(&sb), ["t1", "t2", "t3", "t4"]);
    let saved = sb.read("saved.jsonl");
    let lines: Vec<Value> = saved
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{saved}");
    for line in &lines {
        assert_eq!(line["key"].as_str().map(str::len), Some(64), "{line}");
        assert_eq!(line["usage"]["total_tokens"], 0, "{line}");
    }
    // A run killed while writing leaves a torn last line.
    sb.write("saved.jsonl", format!("{saved}{{\"task_id\":\"t2\",\"outp"));
    std::fs::remove_file(sb.path().join("fail.txt")).unwrap();

    let resumed = tasks_run(&sb, &["--save-outputs", "saved.jsonl", "--resume"]);
    assert_eq!(code(&resumed), 0, "{}", stderr_text(&resumed));
    assert_eq!(
        stderr_text(&resumed),
        "warning: saved.jsonl:4: the last line was cut short by an interrupted run (21 bytes); \
         removed it\nresuming saved.jsonl: 3 of 4 calls already done, 1 to make\n"
    );
    assert_eq!(calls(&sb), ["t1", "t2", "t3", "t4", "t2"], "only t2 again");
    let summary = json_stdout(&resumed);
    assert_eq!(summary["generation"]["completed"], 4);
    assert_eq!(summary["generation"]["resumed"], 3);
    assert_eq!(summary["overall"]["mean"], 1.0);

    // The journal is what `tasks score --outputs` reads: one line per task, the same scores.
    let rescored = sb
        .evalctl()
        .args(["tasks", "score", "tasks.jsonl", "--outputs", "saved.jsonl"])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&rescored), 0, "{}", stderr_text(&rescored));
    assert_eq!(json_stdout(&rescored)["overall"], summary["overall"]);

    // Nothing left to do: no call at all.
    let again = tasks_run(&sb, &["--save-outputs", "saved.jsonl", "--resume"]);
    assert_eq!(code(&again), 0, "{}", stderr_text(&again));
    assert_eq!(calls(&sb).len(), 5);
    assert_eq!(json_stdout(&again)["generation"]["resumed"], 4);
}

#[test]
fn resuming_with_a_smaller_limit_names_the_saved_outputs_it_leaves_aside() {
    // The saved outputs past --limit are this run's configuration, not another's.
    let sb = suite();
    let saving = ["--save-outputs", "saved.jsonl"];
    assert_eq!(code(&tasks_run(&sb, &saving)), 0);
    let out = tasks_run(&sb, &[&saving[..], &["--resume", "--limit", "1"]].concat());
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            0,
            "warning: saved.jsonl: ignoring 3 saved outputs of tasks this run does not have \
             (past --limit, or no longer in the task file)\n\
             resuming saved.jsonl: 1 of 1 calls already done, 0 to make\n"
                .to_string()
        )
    );
}

#[test]
fn resuming_under_another_configuration_is_refused_and_the_journal_kept() {
    let sb = suite();
    let first = tasks_run(&sb, &["--save-outputs", "saved.jsonl"]);
    assert_eq!(code(&first), 0, "{}", stderr_text(&first));
    let saved = sb.read("saved.jsonl");
    let other = tasks_run(
        &sb,
        &[
            "--save-outputs",
            "saved.jsonl",
            "--resume",
            "--temperature",
            "0.5",
        ],
    );
    assert_eq!(code(&other), 2);
    let expected: String = (1..=4)
        .map(|n| {
            format!(
                "error: saved.jsonl:{n}: task \"t{n}\" was generated by another configuration \
                 (model, sampling or prompt); resume with the same flags, or save to a new \
                 --save-outputs file\n"
            )
        })
        .collect();
    assert_eq!(stderr_text(&other), expected);
    assert_eq!(sb.read("saved.jsonl"), saved, "the journal is untouched");
    assert_eq!(calls(&sb).len(), 4, "no call was made");
}

#[test]
fn the_cache_answers_a_prompt_given_before_and_an_edited_model_misses() {
    let sb = suite();
    let cached = ["--cache", "--cache-dir", "cache"];
    let first = tasks_run(&sb, &cached);
    assert_eq!(code(&first), 0, "{}", stderr_text(&first));
    assert_eq!(json_stdout(&first)["generation"].get("cached"), None);
    assert_eq!(calls(&sb).len(), 4);

    let second = tasks_run(
        &sb,
        &[&cached[..], &["--save-outputs", "saved.jsonl"]].concat(),
    );
    assert_eq!(code(&second), 0, "{}", stderr_text(&second));
    assert_eq!(calls(&sb).len(), 4, "every completion came from the cache");
    let summary = json_stdout(&second);
    assert_eq!(summary["generation"]["cached"], 4);
    assert_eq!(summary["overall"], json_stdout(&first)["overall"]);
    assert_eq!(
        sb.read("saved.jsonl").lines().count(),
        4,
        "cached completions are saved"
    );

    // Another sampling is another key.
    let hotter = tasks_run(&sb, &[&cached[..], &["--temperature", "1"]].concat());
    assert_eq!(code(&hotter), 0, "{}", stderr_text(&hotter));
    assert_eq!(calls(&sb).len(), 8);

    // An edited model script misses too.
    sb.write("model.sh", format!("# edited\n{MODEL}"));
    let edited = tasks_run(&sb, &cached);
    assert_eq!(code(&edited), 0, "{}", stderr_text(&edited));
    assert_eq!(calls(&sb).len(), 12);

    let stats = sb
        .evalctl()
        .args(["cache", "stats", "--cache-dir", "cache", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&stats), 0, "{}", stderr_text(&stats));
    assert_eq!(json_stdout(&stats)["entries"], 12);
}

/// Records each call, creates `started.TASK`, waits for `go.TASK`, then answers with the task id.
const GATED_MODEL: &str = r#"task=$(sed -n 's/^{"task_id":"\([^"]*\)".*/\1/p')
echo "$task" >> calls.log
touch "started.$task"
while [ ! -e "go.$task" ]; do sleep 0.01; done
printf '%s' "$task"
"#;

#[test]
fn a_model_script_edited_during_the_run_has_nothing_cached_after_the_change() {
    let sb = suite();
    sb.write("model.sh", GATED_MODEL);
    sb.write("go.t1", "");
    // The suite's run, one call at a time, with the cache instead of --output.
    let args = [&RUN_TO_SCORES[..10], &["--cache", "--cache-dir", "cache"]].concat();
    let running = crate::common::evalctl_process()
        .current_dir(sb.path())
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start evalctl");
    // t1 is answered (and cached); t2 has begun: the model script is edited, answering wrong.
    assert!(crate::common::wait_until(
        std::time::Duration::from_secs(30),
        || sb.exists("started.t2")
    ));
    sb.write("model.sh", GATED_MODEL.replace("'%s'", "'x%s'"));
    for task in ["t2", "t3", "t4"] {
        sb.write(&format!("go.{task}"), "");
    }
    let first = running.wait_with_output().expect("evalctl ends");
    assert_eq!(code(&first), 0, "{}", stderr_text(&first));
    assert_eq!(
        stderr_text(&first),
        "warning: model.sh changed during the run: its results may mix what both versions \
         answered (the cache keys hash the file as it was when the run began, and no answer \
         after the change was cached under them); run again to score one version\n"
    );

    // Back to the first version: only t1's completion is served from the cache.
    sb.write("model.sh", GATED_MODEL);
    let second = tasks_run(&sb, &["--cache", "--cache-dir", "cache"]);
    assert_eq!(code(&second), 0, "{}", stderr_text(&second));
    let summary = json_stdout(&second);
    assert_eq!(
        (
            &summary["generation"]["cached"],
            &summary["overall"]["mean"]
        ),
        (&json!(1), &json!(1.0))
    );
    assert_eq!(calls(&sb), ["t1", "t2", "t3", "t4", "t2", "t3", "t4"]);
}

#[test]
fn completions_the_cache_cannot_store_are_said_at_the_end() {
    // A cache whose reads work and whose writes fail: `completions` is a view.
    let sb = suite();
    std::fs::create_dir(sb.join("cache")).unwrap();
    rusqlite::Connection::open(sb.join("cache/results.sqlite3"))
        .unwrap()
        .execute_batch(
            "CREATE TABLE results (key BLOB PRIMARY KEY, score REAL NOT NULL, \
             side_info TEXT NOT NULL, passed INTEGER) WITHOUT ROWID;
             CREATE VIEW completions (key, text, prompt_tokens, completion_tokens, \
             total_tokens) AS SELECT key, side_info, 0, 0, 0 FROM results WHERE 0;",
        )
        .unwrap();
    let out = tasks_run(&sb, &["--cache", "--cache-dir", "cache"]);
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out),
        "warning: cache/results.sqlite3: 4 answers could not be stored (cannot modify \
         completions because it is a view): the run's answers are right, but the cache did not \
         keep them; if the cache is damaged, `evalctl cache clear --cache-dir cache` removes it\n"
    );
    assert_eq!(json_stdout(&out)["overall"]["mean"], json!(1.0));
}

#[test]
fn the_config_file_turns_the_cache_on_for_tasks_run() {
    let sb = suite();
    sb.write(
        "evalctl.toml",
        "[run]\ncache = true\ncache_dir = \"kept\"\n\n[tasks]\nmodel_command = \"sh model.sh\"\n",
    );
    let run = || {
        sb.evalctl()
            .args(["tasks", "run", "tasks.jsonl", "--format", "json"])
            .output()
            .unwrap()
    };
    let first = run();
    assert_eq!(code(&first), 0, "{}", stderr_text(&first));
    let second = run();
    assert_eq!(code(&second), 0, "{}", stderr_text(&second));
    assert_eq!(json_stdout(&second)["generation"]["cached"], 4);
    assert_eq!(calls(&sb).len(), 4);
    assert!(
        sb.path().join("kept").is_dir(),
        "cache_dir is relative to the file"
    );
}

#[test]
fn a_journal_is_not_appended_to_without_resume() {
    let sb = suite();
    let first = tasks_run(&sb, &["--save-outputs", "saved.jsonl"]);
    assert_eq!(code(&first), 0, "{}", stderr_text(&first));
    let saved = sb.read("saved.jsonl");
    // The same command again (or another model's) would give every task a second output.
    let again = tasks_run(&sb, &["--save-outputs", "saved.jsonl"]);
    assert_eq!(code(&again), 2);
    assert_eq!(
        stderr_text(&again),
        "error: saved.jsonl: already holds 4 saved outputs: pass --resume to take up the run \
         that saved them, or name another --save-outputs file\n"
    );
    assert_eq!(sb.read("saved.jsonl"), saved, "the journal is untouched");
    assert_eq!(calls(&sb).len(), 4, "no call was made");
    // With --resume it is taken up, and the text summary says so.
    let resumed = sb
        .evalctl()
        .args([
            "tasks",
            "run",
            "tasks.jsonl",
            "--no-config",
            "--format",
            "text",
        ])
        .args([
            "--model-command",
            "sh model.sh",
            "--save-outputs",
            "saved.jsonl",
            "--resume",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&resumed), 0, "{}", stderr_text(&resumed));
    assert_eq!(
        crate::common::stdout_text(&resumed).lines().last(),
        Some("tokens: 0 prompt, 0 completion; 4 completions resumed from --save-outputs")
    );
    assert_eq!(calls(&sb).len(), 4, "no call was made");
    // A path it cannot write is named by its own flag.
    let out = tasks_run(&sb, &["--save-outputs", "nodir/saved.jsonl"]);
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            2,
            "error: nodir/saved.jsonl: cannot open --save-outputs for writing: no directory \
             nodir\n"
                .to_string()
        )
    );
}

#[test]
fn a_ctrl_c_lets_the_completion_in_flight_finish_and_saves_it() {
    // t3's model call holds until `release` exists; Ctrl-C comes while it holds. As in `run`,
    // the completion in flight gets its grace: it is answered, saved and scored, and no other
    // task is started.
    let sb = suite();
    sb.write(
        "model.sh",
        "task=$(sed -n 's/^{\"task_id\":\"\\([^\"]*\\)\".*/\\1/p')\n\
         echo \"$task\" >> calls.log\n\
         if [ \"$task\" = t3 ]; then touch holding; i=0; \
         until [ -e release ] || [ $i -ge 600 ]; do sleep 0.05; i=$((i+1)); done; fi\n\
         printf '%s' \"$task\"\n",
    );
    let mut child = saving_in_the_background(&sb, "sh model.sh");
    assert!(
        crate::common::wait_until(std::time::Duration::from_secs(60), || sb.exists("holding")),
        "t3 was never called"
    );
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    // Released once evalctl says it waits for the call in flight.
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let waiting = lines.next().expect("a line on stderr").unwrap();
    assert_eq!(
        waiting,
        "interrupted: no new calls; waiting up to 5s for the 1 in flight (Ctrl-C again stops \
         them now)"
    );
    sb.write("release", "");
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 130, "{rest:?}");
    let saved: Vec<Value> = (sb.jsonl("saved.jsonl").iter())
        .map(|line| line["task_id"].clone())
        .collect();
    assert_eq!(saved, [json!("t1"), json!("t2"), json!("t3")]);
    assert_eq!(sb.read("calls.log"), "t1\nt2\nt3\n", "t4 was not started");
    assert_eq!(json_stdout(&out)["overall"]["scored"], 3);
}

#[test]
fn an_interrupted_run_scores_what_was_generated_and_its_resume_writes_one_whole_scoring() {
    let sb = Sandbox::new();
    let code_task = r#"{"task_id": "c1", "category": "code_exec", "prompt": "Write add(a, b).", "targets": ["assert add(1, 2) == 3"], "metric_name": "code_exec", "post_process": "none"}"#;
    let three: String = TASKS
        .lines()
        .take(3)
        .map(|line| format!("{line}\n"))
        .collect();
    sb.write("tasks.jsonl", format!("{three}{code_task}\n"));
    // t1 and t2 are answered; while `hold` exists t3 never is, so the run is stopped while it
    // waits.
    sb.write(
        "model.sh",
        "task=$(sed -n 's/^{\"task_id\":\"\\([^\"]*\\)\".*/\\1/p')\n\
         case \"$task\" in t1|t2) printf '%s' \"$task\"; exit ;; esac\n\
         [ -e hold ] && exec sleep 60\n\
         case \"$task\" in c1) printf 'def add(a, b):\\n    return a + b' ;; *) printf '%s' \"$task\" ;; esac\n",
    );
    sb.write("hold", "");
    let run = [
        "tasks",
        "run",
        "tasks.jsonl",
        "--no-config",
        "--format",
        "json",
        "--model-command",
        "sh model.sh",
        "-j",
        "1",
        "--save-outputs",
        "saved.jsonl",
        "--output",
        "scores.jsonl",
    ];
    let out = stopped_once(&sb, &run, || {
        std::fs::read_to_string(sb.join("saved.jsonl"))
            .is_ok_and(|saved| saved.lines().count() == 2)
    });
    assert_eq!(code(&out), 130, "{}", stderr_text(&out));
    // What was generated is scored and summarised; --output waits for the whole run, which
    // --resume completes from the saved completions.
    let summary = json_stdout(&out);
    assert_eq!(
        (&summary["interrupted"], &summary["overall"]["scored"]),
        (&Value::from(true), &Value::from(2))
    );
    let stderr = stderr_text(&out);
    assert_eq!(
        stderr.lines().rev().take(2).collect::<Vec<_>>(),
        [
            "interrupted: 2 of 4 tasks scored; the summary covers them",
            "scores.jsonl: not written: the run was interrupted and its completions are saved in \
             saved.jsonl; the same command with --resume completes it and writes a line for every \
             task",
        ]
    );
    assert!(!sb.join("scores.jsonl").exists());
    std::fs::remove_file(sb.join("hold")).unwrap();
    let resumed = sb.evalctl().args(run).arg("--resume").output().unwrap();
    assert_eq!(code(&resumed), 0, "{}", stderr_text(&resumed));
    let scores: Vec<(Value, Value)> = sb
        .jsonl("scores.jsonl")
        .iter()
        .map(|line| (line["task_id"].clone(), line["score"].clone()))
        .collect();
    assert_eq!(
        scores,
        [
            (Value::from("t1"), Value::from(1.0)),
            (Value::from("t2"), Value::from(1.0)),
            (Value::from("t3"), Value::from(1.0)),
            (Value::from("c1"), Value::from(1.0))
        ]
    );
    // One scoring, which summarize reads.
    let summarized = sb
        .evalctl()
        .args(["summarize", "scores.jsonl", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&summarized), 0, "{}", stderr_text(&summarized));
}

#[test]
fn an_interrupted_run_scores_a_failed_task_as_zero_and_writes_its_line() {
    let sb = suite();
    sb.write("fail.txt", "t1\n");
    sb.write("hold.txt", "t3\n");
    // With one call at a time, t3 is called once t1 has failed and t2 is answered.
    let out = stopped_once(&sb, &RUN_TO_SCORES, || sb.exists("holding"));
    assert_eq!(code(&out), 130, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out),
        "failed: task t1: exit_status: command exited with code 3; stderr: down (scored 0)\n\
         interrupted: 2 of 4 tasks scored, 1 of them a failed generation (scored 0); the summary \
         covers them\n"
    );
    let mut summary = json_stdout(&out);
    summary["generation"]["elapsed_ms"] = Value::Null;
    let half = json!({"tasks": 2, "scored": 1, "missing": 1, "mean": 0.5, "stderr": 0.5});
    assert_eq!(
        summary,
        json!({
            "tasks_file": "tasks.jsonl",
            "outputs_file": "command 'sh model.sh'",
            "overall": half,
            "by_category": {"classification": half},
            "by_metric": {"exact_match": half},
            "missing": ["t1"],
            "unknown_outputs": [],
            "ignored_outputs": [],
            "interrupted": true,
            "generation": {
                "model": "command 'sh model.sh'",
                "tasks": 4,
                "completed": 1,
                "failed": [{"task_id": "t1", "attempts": 1, "error": {"kind": "exit_status",
                    "message": "command exited with code 3; stderr: down"}}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                "elapsed_ms": null
            }
        })
    );
    let lines: Vec<(Value, Value, Value)> = sb
        .jsonl("scores.jsonl")
        .iter()
        .map(|line| {
            (
                line["task_id"].clone(),
                line["score"].clone(),
                line["error"].clone(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            (
                json!("t1"),
                Value::Null,
                json!({"kind": "exit_status", "message": "command exited with code 3; stderr: down"})
            ),
            (json!("t2"), json!(1.0), Value::Null),
        ]
    );
}

#[test]
fn the_scores_of_an_interrupted_run_are_read_back_as_a_partial_run() {
    let sb = suite();
    sb.write("hold.txt", "t3\n");
    let out = stopped_once(&sb, &RUN_TO_SCORES, || sb.exists("holding"));
    assert_eq!(code(&out), 130, "{}", stderr_text(&out));
    // The plan is every task: two of its four calls have a line.
    let run = sb.jsonl("scores.jsonl")[0]["run"].clone();
    assert_eq!(
        (&run["shard"], &run["shard_calls"], &run["plan_calls"]),
        (&json!("0/1"), &json!(2), &json!(4))
    );
    let summarized = sb
        .evalctl()
        .args(["summarize", "scores.jsonl", "--format", "text"])
        .output()
        .unwrap();
    assert_eq!(code(&summarized), 1, "{}", stderr_text(&summarized));
    let exit_line = "exit 1: 2 of 4 calls absent: the run did not finish (tasks run again \
                     completes it, with --resume from its --save-outputs if it had one; \
                     --allow-partial summarizes what is there); all 2 calls succeeded";
    assert_eq!(
        crate::common::stdout_text(&summarized),
        format!(
            "evaluator: tasks tasks.jsonl   score range: unit\n\
             calls: 2 (2 ok, 0 errors)   elapsed: — (not recorded in results files)\n\
             partial: 2 of 4 calls absent\n\
             \n\
             candidate              score            n / errors\n\
             command 'sh model.sh'  1.0000 ± 0.0000  2 / 0\n\
             \n\
             ± = half-width of the 95% bootstrap interval over examples (--seed)\n\
             \n\
             {exit_line}\n"
        )
    );
    assert_eq!(stderr_text(&summarized), format!("{exit_line}\n"));
}

#[test]
fn resume_keeps_a_whole_last_line_without_its_newline() {
    // A saved completion is paid for: only a line whose JSON ends too soon is cut off.
    let sb = suite();
    sb.write("fail.txt", "t4\n");
    let first = tasks_run(&sb, &["--save-outputs", "saved.jsonl"]);
    assert_eq!(code(&first), 1, "{}", stderr_text(&first));
    let saved = sb.read("saved.jsonl");
    sb.write("saved.jsonl", saved.trim_end());
    std::fs::remove_file(sb.path().join("fail.txt")).unwrap();
    let resumed = tasks_run(&sb, &["--save-outputs", "saved.jsonl", "--resume"]);
    assert_eq!(code(&resumed), 0, "{}", stderr_text(&resumed));
    assert_eq!(
        stderr_text(&resumed),
        "resuming saved.jsonl: 3 of 4 calls already done, 1 to make\n"
    );
    assert_eq!(calls(&sb), ["t1", "t2", "t3", "t4", "t4"], "only t4 again");
    assert!(sb.read("saved.jsonl").starts_with(&saved));
    assert_eq!(sb.lines("saved.jsonl").len(), 4);

    // A file that is no journal is refused, with --resume or without, and left as it was.
    sb.write("notes.txt", "my notes, no newline");
    let refused = tasks_run(&sb, &["--save-outputs", "notes.txt", "--resume"]);
    assert_eq!(code(&refused), 2, "{}", stderr_text(&refused));
    let refused = tasks_run(&sb, &["--save-outputs", "notes.txt"]);
    assert_eq!(
        (code(&refused), stderr_text(&refused)),
        (
            2,
            "error: notes.txt: is not a --save-outputs journal (no line is a saved output): \
             name another --save-outputs file\n"
                .to_string()
        )
    );
    assert_eq!(sb.read("notes.txt"), "my notes, no newline");
    // Unfinished JSON that is no saved output's start is not taken for a torn line and cut off.
    let draft = format!("{saved}{{\"my\":\"draft");
    sb.write("draft.jsonl", &draft);
    let refused = tasks_run(&sb, &["--save-outputs", "draft.jsonl", "--resume"]);
    assert_eq!(
        (code(&refused), stderr_text(&refused)),
        (
            2,
            "error: draft.jsonl:4: the last line is unfinished JSON that does not start as \
             evalctl's lines do ({\"task_id\":\"): it is no line an interrupted run cut short, \
             and the file is left as it was: name another file\n"
                .to_string()
        )
    );
    assert_eq!(sb.read("draft.jsonl"), draft);
}

#[test]
fn a_second_run_writing_the_same_journal_is_refused_before_any_call() {
    // Two runs appending to one journal would give a task two outputs: the second is refused.
    let sb = suite();
    sb.write(
        "slow.sh",
        format!("touch started\nwhile [ ! -e go ]; do sleep 0.01; done\n{MODEL}"),
    );
    let first = saving_in_the_background(&sb, "sh slow.sh");
    assert!(
        crate::common::wait_until(std::time::Duration::from_secs(60), || sb.exists("started")),
        "the first run never called its model"
    );
    let second = tasks_run(&sb, &["--save-outputs", "saved.jsonl", "--resume"]);
    assert_eq!(code(&second), 2, "{}", stderr_text(&second));
    assert_eq!(
        stderr_text(&second),
        "error: saved.jsonl: another evalctl is writing this file now: wait until it has \
         finished, or name another file\n"
    );
    assert!(calls(&sb).is_empty(), "the second run called the model");
    sb.write("go", "");
    let status = { first }.wait_with_output().unwrap().status;
    assert!(status.success());
    assert_eq!(sb.lines("saved.jsonl").len(), 4);
}

#[test]
fn no_task_starts_once_its_completion_cannot_be_saved() {
    // One call at a time; every call after the first waits until evalctl has closed
    // /dev/full, which its writer does once a write there has failed.
    let sb = suite();
    sb.write(
        "gated.sh",
        format!(
            "if [ -e first ]; then\n\
               while ls -l /proc/$PPID/fd | grep -q /dev/full; do sleep 0.01; done\n\
             fi\n\
             touch first\n{MODEL}"
        ),
    );
    let output = sb
        .evalctl()
        .args(TASKS_RUN)
        .args(["--model-command", "sh gated.sh", "-j", "1"])
        .args(["--save-outputs", "/dev/full", "--output", "scores.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 4, "{}", stderr_text(&output));
    // The second task starts only if the first one's line had not failed yet when it was
    // queued, and never a third (the second ends after the failure).
    let made = calls(&sb).len();
    assert!(made == 1 || made == 2, "{made} calls made");
    assert_eq!(
        stderr_text(&output),
        format!(
            "error: /dev/full: writing results failed: No space left on device; the results \
             after this one are not written\n\
             stopped: no task is started once its completion cannot be saved: {} tasks not run \
             (tasks run --resume runs them once /dev/full can be written)\n\
             scores.jsonl: not written: not every task was run, for want of /dev/full; the same \
             command with --resume, once it can be written, completes the run and writes a line \
             for every task\n",
            4 - made
        )
    );
    // Lines of part of the tasks would be a scoring of their own beside the whole one that
    // `--resume` appends.
    assert!(sb.lines("scores.jsonl").is_empty());
    // The tasks not run are not the model's fault: only those it answered are scored, and the
    // summary says the others were not run.
    let run = json_stdout(&output);
    assert_eq!(run["generation"]["completed"], made);
    assert_eq!(run["generation"]["not_run"], 4 - made);
    assert_eq!(run["generation"]["tasks"], 4);
    assert_eq!(run["overall"]["tasks"], made);
    assert_eq!(run["missing"], json!([]));
}
