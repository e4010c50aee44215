//! `evalctl tasks run` through the real binary: against a `--model-command` script (the fixture
//! suite, code_exec tasks included, scored exactly as `tasks score` scores the same outputs),
//! against a loopback OpenAI-compatible server (chat and completions, sampling flags, usage,
//! retries, the key never shown), the `--allow-bad-tasks` gate and failed generations.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::common::{code, evalctl, json_stdout, stderr_text, Reply, Sandbox, Server};
use serde_json::{json, Value};

const TASKS: &str = "fixtures/tasks/tasks.jsonl";
const MODEL: &str = "sh fixtures/tasks/model.sh";
const KEY: &str = "sk-Hv3pQ8zL1wX6nB4tR7cY";

fn tasks_run(args: &[&str]) -> std::process::Output {
    evalctl()
        .args(["tasks", "run", "--no-config", "--format", "json"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_fixture_suite_runs_end_to_end_and_scores_as_tasks_score_does() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("outputs.jsonl");
    let saved = saved.to_str().unwrap();
    let output = tasks_run(&[TASKS, "--model-command", MODEL, "--save-outputs", saved]);
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    let run = json_stdout(&output);
    assert_eq!(run["generation"]["tasks"], 10);
    assert_eq!(run["generation"]["completed"], 10);
    assert_eq!(run["generation"]["failed"], json!([]));
    assert_eq!(run["by_metric"]["code_exec"]["scored"], 2);
    // Rescoring the saved completions gives the same scores, and so does scoring the fixture
    // outputs the model script answers with.
    for outputs in [saved, "fixtures/tasks/outputs.jsonl"] {
        let scored = evalctl()
            .args([
                "tasks",
                "score",
                TASKS,
                "--outputs",
                outputs,
                "--format",
                "json",
            ])
            .output()
            .unwrap();
        assert_eq!(code(&scored), 0, "stderr: {}", stderr_text(&scored));
        let scored = json_stdout(&scored);
        for part in ["overall", "by_category", "by_metric"] {
            assert_eq!(run[part], scored[part], "{part} ({outputs})");
        }
    }
}

#[test]
fn the_model_command_gets_the_rendered_prompt_and_sampling_as_json() {
    let sb = Sandbox::new();
    sb.write(
        "tasks.jsonl",
        r#"{"task_id":"t1","category":"arithmetic","prompt":"Q: 1+1\nA:","targets":["2"],"metric_name":"exact_match","post_process":"strip_whitespace","few_shot_examples":[{"prompt":"Q: 2+2\nA:","completion":"4"}]}"#,
    );
    sb.write("model.sh", "cat > seen.json; printf ' 2 '");
    let output = sb
        .evalctl()
        .args([
            "tasks",
            "run",
            "tasks.jsonl",
            "--format",
            "json",
            "--model-command",
            "sh model.sh",
        ])
        .args([
            "--temperature",
            "0.5",
            "--max-tokens",
            "8",
            "--stop",
            "\n\n",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    assert_eq!(json_stdout(&output)["overall"]["mean"], 1.0);
    let seen: Value = serde_json::from_str(&sb.read("seen.json")).unwrap();
    assert_eq!(
        seen,
        json!({"task_id": "t1", "prompt": "Q: 2+2\nA: 4\n\nQ: 1+1\nA:",
               "sampling": {"temperature": 0.5, "max_tokens": 8, "stop": ["\n\n"]}})
    );
}

#[test]
fn invalid_tasks_stop_the_run_unless_allowed() {
    let sb = Sandbox::new();
    let valid = std::fs::read_to_string(TASKS).unwrap();
    let first = valid.lines().next().unwrap();
    let bad = r#"{"task_id": "half", "category": "mcq", "prompt": "p", "targets": ["A"], "metric_name": "accuracy"}"#;
    sb.write("tasks.jsonl", format!("{first}\n{bad}\n"));
    sb.write("model.sh", "cat > /dev/null; printf 41");
    let run = |extra: &[&str]| {
        sb.evalctl()
            .args(["tasks", "run", "tasks.jsonl", "--format", "json"])
            .args(["--model-command", "sh model.sh"])
            .args(extra)
            .output()
            .unwrap()
    };
    let output = run(&[]);
    assert_eq!(code(&output), 2);
    assert_eq!(stderr_text(&output), "error: tasks.jsonl:2: task half, field post_process: missing_field: missing required key `post_process`
error: tasks.jsonl: 1 task-spec error; fix it (see `evalctl tasks validate`) or pass --allow-bad-tasks to skip it
");
    let output = run(&["--allow-bad-tasks"]);
    let stderr = stderr_text(&output);
    assert_eq!(code(&output), 0, "stderr: {stderr}");
    assert_eq!(stderr, "warning: skipped: tasks.jsonl:2: task half, field post_process: missing_field: missing required key `post_process`\n");
    let summary = json_stdout(&output);
    assert_eq!(summary["generation"]["completed"], 1);
    assert_eq!(summary["overall"]["mean"], 1.0);
}

/// A sandbox with the fixture's first task and `model.sh` printing `completion` (a `printf`
/// format), and `tasks run` of them saving to saved.jsonl, `extra` flags added.
fn one_task_run(sb: &Sandbox, completion: &str, extra: &[&str]) -> assert_cmd::Command {
    let valid = std::fs::read_to_string(TASKS).unwrap();
    sb.write(
        "tasks.jsonl",
        format!("{}\n", valid.lines().next().unwrap()),
    );
    sb.write("model.sh", format!("cat > /dev/null; printf {completion}"));
    let mut command = sb.evalctl();
    command
        .args(["tasks", "run", "tasks.jsonl", "--format", "json"])
        .args(["--model-command", "sh model.sh"])
        .args(["--save-outputs", "saved.jsonl"])
        .args(extra);
    command
}

#[test]
fn a_secret_of_the_environment_in_a_model_commands_completion_is_redacted() {
    let sb = Sandbox::new();
    let output = one_task_run(&sb, "'41 (key %s)' \"$EVAL_TOKEN\"", &[])
        .env("EVAL_TOKEN", "tok-0123456789abcdef")
        .output()
        .unwrap();
    assert_eq!(
        (code(&output), &sb.jsonl("saved.jsonl")[0]["output"]),
        (0, &json!("41 (key [redacted])"))
    );
}

#[test]
fn a_model_commands_completion_is_cut_at_the_stop_sequence_as_an_apis_is() {
    // The command goes on past the answer; --stop ends the completion there, as an API would.
    let sb = Sandbox::new();
    let output = one_task_run(
        &sb,
        "'41\\n\\nQuestion: 2 + 2?\\nAnswer: 4'",
        &["--stop", "\n\n"],
    )
    .output()
    .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(json_stdout(&output)["overall"]["mean"], 1.0);
    assert_eq!(sb.jsonl("saved.jsonl")[0]["output"], "41");
}

#[test]
fn a_failed_generation_scores_zero_and_exits_1() {
    let sb = Sandbox::new();
    let output = sb
        .evalctl()
        .args(["tasks", "run", "--format", "json", "--limit", "2"])
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(TASKS))
        .args(["--model-command", "sh -c 'echo broken >&2; exit 3'"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 1);
    let run = json_stdout(&output);
    assert_eq!(run["generation"]["failed"][0]["task_id"], "arith_001");
    assert_eq!(
        run["generation"]["failed"][0]["error"]["kind"],
        "exit_status"
    );
    assert_eq!(run["overall"]["mean"], 0.0);
    assert_eq!(
        stderr_text(&output),
        "failed: task arith_001: exit_status: command exited with code 3; stderr: broken (scored 0)
failed: task arith_002: exit_status: command exited with code 3; stderr: broken (scored 0)
"
    );
}

/// A fake OpenAI-compatible server: answers each completion with the task's right answer for
/// arithmetic (`41` when the prompt ends in `17 + 24\nAnswer:`), reports usage, and fails the
/// first request with a 503 to show the retry.
fn fake_model(key: &'static str) -> Server {
    let calls = Arc::new(AtomicUsize::new(0));
    Server::start(move |request, _| {
        if request.header("Authorization") != Some(&format!("Bearer {key}")) {
            return Reply::status(
                401,
                format!("bad key {:?}", request.header("Authorization")),
            );
        }
        if request.path == "/v1/models" {
            return Reply::json(r#"{"object": "list", "data": []}"#);
        }
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            return Reply::status(503, "busy");
        }
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let (prompt, chat) = match request.path.as_str() {
            "/v1/chat/completions" => (body["messages"][0]["content"].clone(), true),
            "/v1/completions" => (body["prompt"].clone(), false),
            other => return Reply::status(404, format!("no {other}")),
        };
        let answer = if prompt
            .as_str()
            .is_some_and(|p| p.ends_with("17 + 24\nAnswer:"))
        {
            "41"
        } else {
            "no idea"
        };
        let choice = if chat {
            json!({"message": {"role": "assistant", "content": answer}})
        } else {
            json!({"text": answer})
        };
        Reply::json(
            json!({"choices": [choice], "model": body["model"],
                   "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})
            .to_string(),
        )
    })
}

#[test]
fn an_openai_compatible_model_over_chat_and_completions() {
    for api in ["chat", "completions"] {
        let server = fake_model(KEY);
        let base = server.url("/v1");
        let output = evalctl()
            .env("ACME_API_KEY", KEY)
            .args([
                "tasks",
                "run",
                "--no-config",
                "--format",
                "json",
                TASKS,
                "-j",
                "1",
            ])
            .args([
                "--model",
                "acme/base-7b",
                "--base-url",
                &base,
                "--api",
                api,
                "--limit",
                "3",
            ])
            .args(["--max-tokens", "16", "--stop", "###"])
            .output()
            .unwrap();
        assert_eq!(code(&output), 0, "{api}: {}", stderr_text(&output));
        let run = json_stdout(&output);
        assert_eq!(run["generation"]["model"], "acme/base-7b");
        assert_eq!(
            run["generation"]["usage"],
            json!({"prompt_tokens": 30, "completion_tokens": 6, "total_tokens": 36}),
            "{api}"
        );
        assert_eq!(run["by_category"]["arithmetic"]["tasks"], 2);
        let requests = server.requests();
        let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
        let completions = format!(
            "/v1/{}",
            if api == "chat" {
                "chat/completions"
            } else {
                "completions"
            }
        );
        assert_eq!(
            paths,
            [
                "/v1/models",
                &completions,
                &completions,
                &completions,
                &completions
            ],
            "{api}: the key checked, one 503, then three completions"
        );
        let body: Value = serde_json::from_slice(&requests[2].body).unwrap();
        assert_eq!(body["model"], "base-7b");
        assert_eq!(body["temperature"], 0.0);
        assert_eq!(body["max_tokens"], 16);
        assert_eq!(body["stop"], json!(["###"]));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(!stdout.contains(KEY) && !stderr_text(&output).contains(KEY));
    }
}

#[test]
fn a_rejected_key_stops_the_run_before_any_task_without_showing_it() {
    let server = fake_model("sk-the-right-one-123");
    let base = server.url("/v1");
    let output = evalctl()
        .env("ACME_API_KEY", KEY)
        .args(["tasks", "run", "--no-config", "--format", "json", TASKS])
        .args(["--model", "acme/m", "--base-url", &base])
        .output()
        .unwrap();
    assert_eq!(code(&output), 3);
    assert_eq!(
        stderr_text(&output),
        format!(
            "error: model acme/m at {base} cannot run: the API rejected the key in ACME_API_KEY \
             (HTTP 401 from the models endpoint)\n"
        )
    );
    assert_eq!(server.request_count(), 1, "one check, no task");
}

#[test]
fn no_model_and_a_missing_key_are_refused_before_any_call() {
    let output = tasks_run(&[TASKS]);
    assert_eq!(code(&output), 2);
    assert_eq!(
        stderr_text(&output),
        "error: tasks run: no model: pass --model PROVIDER/MODEL or --model-command CMD, or set tasks.model or tasks.model_command in evalctl.toml\n"
    );
    let output = tasks_run(&[TASKS, "--model", "openai/gpt-4o-mini"]);
    assert_eq!(code(&output), 3, "stderr: {}", stderr_text(&output));
    assert_eq!(stderr_text(&output), "error: model openai/gpt-4o-mini at https://api.openai.com/v1 cannot run: no API key: OPENAI_API_KEY is not set (export it, or name another variable with --api-key-env; only a local --base-url works without a key)\n");
}

#[test]
fn the_repository_config_names_the_model_command() {
    let output = evalctl()
        .args(["tasks", "run", TASKS, "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "stderr: {}", stderr_text(&output));
    assert_eq!(
        json_stdout(&output)["generation"]["model"],
        "command 'sh fixtures/tasks/model.sh'"
    );
}

#[test]
fn a_command_models_cached_completion_is_keyed_by_the_task_id_it_sees() {
    // Two tasks of one prompt; the command answers by task id, as fixtures/tasks/model.sh does.
    let sb = Sandbox::new();
    sb.write(
        "model.sh",
        "case \"$(cat)\" in *'\"task_id\":\"a1\"'*) printf 41;; *) printf 99;; esac\n",
    );
    for (file, id) in [("a.jsonl", "a1"), ("b.jsonl", "b1")] {
        sb.write(
            file,
            format!(
                "{{\"task_id\": \"{id}\", \"category\": \"arithmetic\", \"prompt\": \
                 \"What is 17 + 24?\", \"targets\": [\"41\"], \"metric_name\": \
                 \"exact_match\", \"post_process\": \"strip_whitespace\"}}\n"
            ),
        );
    }
    let mean = |file: &str| {
        let output = sb
            .evalctl()
            .args(["tasks", "run", file, "--no-config", "--format", "json"])
            .args([
                "--model-command",
                "sh model.sh",
                "--cache",
                "--cache-dir",
                "cache",
            ])
            .output()
            .unwrap();
        assert_eq!(code(&output), 0, "{}", stderr_text(&output));
        let summary = json_stdout(&output);
        (
            summary["overall"]["mean"].clone(),
            summary["generation"]["cached"].clone(),
        )
    };
    assert_eq!(mean("a.jsonl"), (json!(1.0), json!(null)));
    // b1's answer is 99, not a1's 41 from the cache.
    assert_eq!(mean("b.jsonl"), (json!(0.0), json!(null)));
    assert_eq!(mean("b.jsonl"), (json!(0.0), json!(1)));
}

#[test]
fn tokens_of_cached_completions_are_shown_as_saved_not_spent() {
    let server = fake_model(KEY);
    let base = server.url("/v1");
    let cache = tempfile::tempdir().unwrap();
    let run = |format: &str| {
        let output = evalctl()
            .env("ACME_API_KEY", KEY)
            .args(["tasks", "run", "--no-config", "--format", format, TASKS])
            .args([
                "--model",
                "acme/m",
                "--base-url",
                &base,
                "--limit",
                "3",
                "-j",
                "1",
            ])
            .arg("--cache")
            .arg("--cache-dir")
            .arg(cache.path())
            .output()
            .unwrap();
        assert_eq!(code(&output), 0, "{}", stderr_text(&output));
        output
    };
    let first = json_stdout(&run("json"));
    assert_eq!(
        first["generation"]["usage"],
        json!({"prompt_tokens": 30, "completion_tokens": 6, "total_tokens": 36})
    );
    assert_eq!(first["generation"].get("usage_saved"), None);
    let again = json_stdout(&run("json"));
    assert_eq!(again["generation"]["cached"], 3);
    assert_eq!(
        again["generation"]["usage"],
        json!({"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0})
    );
    assert_eq!(
        again["generation"]["usage_saved"],
        json!({"prompt_tokens": 30, "completion_tokens": 6, "total_tokens": 36})
    );
    let text = String::from_utf8(run("text").stdout).unwrap();
    assert_eq!(
        text.lines().last(),
        Some(
            "tokens: 0 prompt, 0 completion (saved by the cache: 30 prompt, 6 completion); 3 \
             completions from the cache"
        ),
        "{text}"
    );
}

#[test]
fn a_usage_without_total_tokens_totals_prompt_and_completion() {
    let server = Server::start(|request, _| {
        if request.path == "/v1/models" {
            return Reply::json(r#"{"object": "list", "data": []}"#);
        }
        Reply::json(
            json!({"choices": [{"message": {"role": "assistant", "content": "41"}}],
                   "usage": {"prompt_tokens": 13, "completion_tokens": 6}})
            .to_string(),
        )
    });
    let output = evalctl()
        .env("ACME_API_KEY", KEY)
        .args(["tasks", "run", "--no-config", "--format", "json", TASKS])
        .args(["--model", "acme/m", "--base-url", &server.url("/v1")])
        .args(["--limit", "2"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(
        json_stdout(&output)["generation"]["usage"],
        json!({"prompt_tokens": 26, "completion_tokens": 12, "total_tokens": 38})
    );
}

#[test]
fn replies_without_usage_are_counted_as_unknown_not_as_zero_tokens() {
    // Some servers and proxies leave `usage` out: the tokens are unknown, and said to be.
    let server = Server::start(|request, _| {
        if request.path == "/v1/models" {
            return Reply::json(r#"{"object": "list", "data": []}"#);
        }
        Reply::json(
            json!({"choices": [{"message": {"role": "assistant", "content": "41"}}]}).to_string(),
        )
    });
    let sb = Sandbox::new();
    let run = |format: &str, more: &[&str]| {
        sb.evalctl()
            .env("ACME_API_KEY", KEY)
            .args(["tasks", "run", "--no-config", "--format", format])
            .arg(std::fs::canonicalize(TASKS).unwrap())
            .args(["--model", "acme/m", "--base-url", &server.url("/v1")])
            .args(["--limit", "2", "--save-outputs", "saved.jsonl"])
            .args(more)
            .output()
            .unwrap()
    };
    let output = run("json", &[]);
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(
        json_stdout(&output)["generation"]["usage_missing"],
        json!(2)
    );
    let marked: Vec<Value> = (sb.jsonl("saved.jsonl").iter())
        .map(|line| line["usage_missing"].clone())
        .collect();
    assert_eq!(marked, [json!(true), json!(true)]);
    // Resumed, the completions keep the mark.
    let stdout = String::from_utf8_lossy(&run("text", &["--resume"]).stdout).to_string();
    let tokens = stdout.lines().find(|line| line.starts_with("tokens:"));
    assert_eq!(
        tokens,
        Some(
            "tokens: 0 prompt, 0 completion; 2 completions reported no token usage (their tokens \
             are unknown, counted as 0); 2 completions resumed from --save-outputs"
        ),
        "{stdout}"
    );
}

#[test]
fn a_reply_that_is_not_json_is_shown_in_the_failure() {
    // A web server where the API should be: its page says what is wrong.
    let server = Server::start(|_, _| {
        Reply::json("<html><body><h1>Welcome to nginx!</h1></body></html>\n")
            .header("Content-Type", "text/html")
    });
    assert_eq!(
        first_failure(&server),
        json!({"kind": "invalid_json", "message": "the API's reply is not JSON (expected value at \
            line 1 column 1): <html><body><h1>Welcome to nginx!</h1></body></html>"})
    );
}

/// The error of the first task of a `tasks run` against `server` that generated nothing.
fn first_failure(server: &Server) -> Value {
    let output = evalctl()
        .env("ACME_API_KEY", KEY)
        .args(["tasks", "run", "--no-config", "--format", "json", TASKS])
        .args(["--model", "acme/m", "--base-url", &server.url("/v1")])
        .args(["--limit", "1", "--retries", "0"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 1, "{}", stderr_text(&output));
    json_stdout(&output)["generation"]["failed"][0]["error"].clone()
}

#[test]
fn an_error_object_in_a_200_reply_is_shown_in_the_failure() {
    let server = Server::start(|request, _| {
        if request.method == "GET" {
            return Reply::json(r#"{"object": "list", "data": []}"#);
        }
        Reply::json(r#"{"error": {"message": "internal thing failed", "type": "server_error"}}"#)
    });
    assert_eq!(
        first_failure(&server),
        json!({"kind": "invalid_output", "message": "the API answered with an error: \
            {\"message\":\"internal thing failed\",\"type\":\"server_error\"}"})
    );
}

/// `tasks run` of the fixture's first two tasks by `acme/m` of `server`, saving its completions
/// in `saved.jsonl`, with `extra` flags.
fn saving_run(sb: &Sandbox, server: &Server, extra: &[&str]) -> std::process::Output {
    let tasks = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(TASKS);
    sb.evalctl()
        .env("ACME_API_KEY", KEY)
        .args(["tasks", "run", "--no-config", "--format", "json"])
        .arg(&tasks)
        .args([
            "--model",
            "acme/m",
            "--base-url",
            &server.url("/v1"),
            "--limit",
            "2",
        ])
        .args(["--save-outputs", "saved.jsonl"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_run_whose_completions_are_all_saved_needs_no_api_to_resume() {
    let sb = Sandbox::new();
    // An API whose key is revoked once the first run is done.
    let revoked = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let server = Server::start({
        let revoked = Arc::clone(&revoked);
        move |_, _| {
            if revoked.load(Ordering::SeqCst) {
                return Reply::status(401, "revoked");
            }
            Reply::json(
                json!({"choices": [{"message": {"role": "assistant", "content": "41"}}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})
                .to_string(),
            )
        }
    });
    let run = |extra: &[&str]| saving_run(&sb, &server, extra);
    let first = run(&[]);
    assert_eq!(code(&first), 0, "{}", stderr_text(&first));
    revoked.store(true, Ordering::SeqCst);
    let requests = server.request_count();
    // Every completion is saved: nothing to check, nothing to call.
    let resumed = run(&["--resume"]);
    assert_eq!(code(&resumed), 0, "{}", stderr_text(&resumed));
    assert_eq!(json_stdout(&resumed)["generation"]["resumed"], 2);
    assert_eq!(server.request_count(), requests);
}

#[test]
fn cached_completions_are_never_another_servers() {
    // A base URL from the environment is part of the completion key, as --base-url is.
    let (first, second) = (fake_model(KEY), fake_model(KEY));
    let cache = tempfile::tempdir().unwrap();
    let run = |server: &Server| {
        let output = evalctl()
            .env("ACME_API_KEY", KEY)
            .env("EVALCTL_JUDGE_BASE_URL", server.url("/v1"))
            .args(["tasks", "run", "--no-config", "--format", "json", TASKS])
            .args(["--model", "acme/m", "--limit", "2", "-j", "1", "--cache"])
            .arg("--cache-dir")
            .arg(cache.path())
            .output()
            .unwrap();
        assert_eq!(code(&output), 0, "{}", stderr_text(&output));
        // Absent when nothing came from the cache.
        json_stdout(&output)["generation"]["cached"].as_u64()
    };
    assert_eq!(run(&first), None);
    assert_eq!(run(&second), None);
    assert_eq!(run(&first), Some(2));
}

#[test]
fn a_completion_cut_at_the_token_limit_is_said_saved_and_resumed_so() {
    // The model stops at its token limit on every task: the saved lines, the summary and a
    // warning say so, and a resumed run says it of the completions it took from the file.
    let sb = Sandbox::new();
    let server = Server::start(|_, _| {
        Reply::json(
            json!({"choices": [{"message": {"role": "assistant", "content": "4"},
                                "finish_reason": "length"}],
                   "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}})
            .to_string(),
        )
    });
    let run = |extra: &[&str]| saving_run(&sb, &server, &[&["--max-tokens", "1"], extra].concat());
    for extra in [&[][..], &["--resume"]] {
        let output = run(extra);
        let summary = json_stdout(&output);
        let ids = summary["generation"]["cut_short"].clone();
        assert_eq!(ids, json!(["arith_001", "arith_002"]), "{extra:?}");
        assert_eq!(
            (stderr_text(&output).lines()).find(|line| line.starts_with("warning:")),
            Some(
                "warning: acme/m stopped at its token limit in 2 tasks (task \"arith_001\" and \
                 others): their completions may be cut short (--max-tokens raises the limit)"
            ),
            "{extra:?}"
        );
    }
    let saved: Vec<Value> = sb.jsonl("saved.jsonl");
    assert_eq!(
        saved
            .iter()
            .map(|line| &line["cut_short"])
            .collect::<Vec<_>>(),
        [&json!(true), &json!(true)]
    );
}
