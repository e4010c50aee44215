//! `evalctl run --generate` through the real binary: candidates as prompt templates answered by a
//! `sh` `--task-model-command` and by a loopback OpenAI-compatible server (chat and completions,
//! usage in replies, two task models), the answers scored by built-in checks and seen by a
//! command evaluator, result lines and summaries per candidate × task model, `--resume` and
//! `--cache` making no second generation, the `[run]` keys of evalctl.toml (a task model command
//! there runs in the file's directory), and every problem a user can cause reported before any
//! call.

use std::path::PathBuf;

use crate::common::{
    code, json_stdout, refused_url, stderr_text, stdout_text, Reply, Sandbox, Server,
};
use serde_json::{json, Value};

pub(crate) const KEY: &str = "sk-Gn5tQ2wX8vL4mP7rK3zY";

/// The fixtures of docs/generate.md, by absolute path.
pub(crate) fn fixture(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "fixtures", "generate", name]
        .iter()
        .collect();
    path.display().to_string()
}

/// A task model command that logs each request on its own line of requests.log, then answers
/// as fixtures/generate/model.sh does.
fn logging_model(sb: &Sandbox) {
    sb.write(
        "model.sh",
        format!(
            "r=$(cat)\nprintf '%s\\n' \"$r\" >> requests.log\nprintf '%s' \"$r\" | sh {}\n",
            fixture("model.sh")
        ),
    );
}

/// `evalctl run --generate` in `sb` over the fixture dataset and checks, `--format json`.
fn generate(sb: &Sandbox) -> assert_cmd::Command {
    generate_as(sb, "json")
}

/// A sandbox holding the terse prompt of the fixtures as `terse.txt`.
pub(crate) fn with_terse_prompt() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "terse.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    sb
}

/// [`generate`] with `--format FORMAT`.
pub(crate) fn generate_as(sb: &Sandbox, format: &str) -> assert_cmd::Command {
    let mut command = sb.evalctl();
    command.args([
        "run",
        "--no-config",
        "--format",
        format,
        "--generate",
        "--dataset",
        &fixture("qa.jsonl"),
        "--checks",
        &fixture("checks.json"),
    ]);
    command
}

/// `evalctl run --generate --format json` in `sb` over its own `d.jsonl`, answered by its
/// `model.sh`.
fn generate_local(sb: &Sandbox) -> assert_cmd::Command {
    let mut command = sb.evalctl();
    command.args([
        "run",
        "--no-config",
        "--format",
        "json",
        "--generate",
        "--dataset",
        "d.jsonl",
        "--task-model-command",
        "sh model.sh",
    ]);
    command
}

/// What a result line says about its call, without timings, keys and run metadata.
fn essentials(record: &Value) -> Value {
    let mut generation = record["generation"].clone();
    if let Some(generation) = generation.as_object_mut() {
        generation.remove("latency_ms");
    }
    json!({
        "candidate": record["candidate_id"],
        "task_model": record["task_model"],
        "example": record["example_id"],
        "output": record["output"],
        "score": record["score"],
        "error": record["error"],
        "generation": generation,
    })
}

fn sorted_essentials(records: &[Value]) -> Vec<Value> {
    sorted(records.iter().map(essentials).collect())
}

fn sorted(mut lines: Vec<Value>) -> Vec<Value> {
    lines.sort_by_key(|line| line.to_string());
    lines
}

/// Each candidate summary's id, task model, score and train n / errors.
fn rows(summary: &Value) -> Vec<Value> {
    summary["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            json!([
                row["id"],
                row["task_model"],
                row["score"],
                row["train"]["n"],
                row["train"]["errors"]
            ])
        })
        .collect()
}

#[test]
fn a_task_model_command_answers_each_candidate_and_the_checks_score_the_answers() {
    let sb = Sandbox::new();
    logging_model(&sb);
    sb.write(
        "terse.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    sb.write(
        "tutor.txt",
        std::fs::read(fixture("prompts/tutor.txt")).unwrap(),
    );
    let output = generate(&sb)
        .args(["--task-model-command", "sh model.sh", "-j", "1"])
        .args(["--output", "results.jsonl", "terse.txt", "tutor.txt"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    let summary = json_stdout(&output);
    let model = "command 'sh model.sh'";
    assert_eq!(
        rows(&summary),
        vec![
            json!(["terse.txt", model, 1.0, 3, 0]),
            json!(["tutor.txt", model, 0.0, 3, 0]),
        ]
    );
    // The preflight probe, then one request per candidate × example, in plan order at -j 1.
    let sampling = json!({"temperature": 0.0});
    let terse = |country: &str| {
        let prompt = format!(
            "Name the city only, nothing else.\nQuestion: what is the capital of {country}?\n"
        );
        json!({"candidate_id": "terse.txt", "prompt": prompt,
               "messages": [{"role": "user", "content": prompt}], "sampling": sampling})
    };
    let system = "You are a friendly geography tutor. Answer in a full sentence.\n";
    let tutor = |country: &str| {
        let input = format!("capital of {country}");
        json!({"candidate_id": "tutor.txt", "prompt": format!("{system}\n\n{input}"),
               "messages": [{"role": "system", "content": system}, {"role": "user", "content": input}],
               "sampling": sampling})
    };
    let requests: Vec<Value> = sb
        .lines("requests.log")
        .iter()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        requests,
        vec![
            json!({"candidate_id": "__evalctl_preflight__", "prompt": "__evalctl_preflight__",
                   "messages": [{"role": "user", "content": "__evalctl_preflight__"}], "sampling": sampling}),
            terse("France"),
            terse("Italy"),
            terse("Japan"),
            tutor("France"),
            tutor("Italy"),
            tutor("Japan"),
        ]
    );
    let generation = json!({"usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}, "attempts": 1});
    let line = |candidate: &str, example: &str, output: &str, score: f64| {
        json!({"candidate": candidate, "task_model": model, "example": example, "output": output,
               "score": score, "error": null, "generation": generation})
    };
    assert_eq!(
        sorted_essentials(&sb.jsonl("results.jsonl")),
        sorted(vec![
            line("terse.txt", "fr", "Paris", 1.0),
            line("terse.txt", "it", "Rome", 1.0),
            line("terse.txt", "jp", "Tokyo", 1.0),
            line(
                "tutor.txt",
                "fr",
                "Great question! The capital is Paris.",
                0.0
            ),
            line(
                "tutor.txt",
                "it",
                "Great question! The capital is Rome.",
                0.0
            ),
            line(
                "tutor.txt",
                "jp",
                "Great question! The capital is Tokyo.",
                0.0
            ),
        ])
    );
    // Answers are essentials' own fields, not the evaluator's: the checks resolved them.
    let first = &sb.jsonl("results.jsonl")[0];
    assert_eq!(
        first["side_info"]["check_results"][0]["resolved_arguments"]["actual"]["value"],
        first["output"]
    );
}

#[test]
fn the_text_summary_has_one_row_per_candidate_and_task_model() {
    let sb = with_terse_prompt();
    let output = generate_as(&sb, "text")
        .args(["--skip-preflight"])
        .args([
            "--task-model-command",
            &format!("sh {}", fixture("model.sh")),
        ])
        .arg("terse.txt")
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    let model = format!("command 'sh {}'", fixture("model.sh"));
    let pad = " ".repeat(model.len().saturating_sub("task model".len()));
    let text = stdout_text(&output);
    let elapsed = text.lines().nth(1).unwrap().to_string();
    assert_eq!(
        text,
        format!(
            "evaluator: checks {checks}   score range: unit\n{elapsed}\n\ncandidate  task model{pad}  score            train mean       n / errors\nterse.txt  {model}  1.0000 ± 0.0000  1.0000 ± 0.0000  3 / 0\n\nscore = the candidate's train mean; failed calls count as 0\n± = half-width of the 95% bootstrap interval over examples (--seed)\n\nexit 0: all 3 calls succeeded\n",
            checks = fixture("checks.json"),
        )
    );
    assert!(
        elapsed.starts_with("calls: 3 (3 ok, 0 errors)   elapsed: "),
        "{elapsed}"
    );
}

#[test]
fn a_command_evaluator_gets_the_prompt_and_the_answer_in_the_payload() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"q\": \"2+2\"}\n");
    sb.write("eval.sh", crate::common::LOG_PAYLOAD);
    sb.write("model.sh", "cat >/dev/null\nprintf '4'\n");
    let output = generate_local(&sb)
        .args(["--evaluator-command", "sh eval.sh"])
        .args(["--candidate", "What is {{q}}?"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(
        sb.lines("payloads.log"),
        [
            r#"{"_protocol_version":2,"candidate":"__evalctl_preflight__","example":{"q": "2+2"}}"#,
            r#"{"_protocol_version":2,"candidate":"What is {{q}}?","task_model":"command 'sh model.sh'","example":{"q": "2+2"},"prompt":"What is 2+2?","output":"4"}"#,
        ]
    );
}

/// A loopback OpenAI-compatible server: the model `small` answers with the capital alone,
/// `large` in a sentence, `judge` as an LLM judge, `{"score": 1}`, `prude` refuses, `void`
/// answers with null content (and no tool call) and `cut` ends with half a surrogate pair; usage in every reply (12 prompt and 3 completion tokens) but
/// `mute`'s; 401 without the key.
pub(crate) fn fake_openai() -> Server {
    Server::start(|request, _| {
        if request.header("Authorization") != Some(&format!("Bearer {KEY}")) {
            return Reply::status(401, r#"{"error": {"message": "bad key"}}"#);
        }
        if request.method == "GET" {
            return Reply::json(r#"{"object": "list", "data": []}"#);
        }
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let prompt = match request.path.as_str() {
            "/v1/chat/completions" => body["messages"].to_string(),
            "/v1/completions" => body["prompt"].to_string(),
            other => return Reply::status(404, format!("no {other}")),
        };
        let city = ["France:Paris", "Italy:Rome", "Japan:Tokyo"]
            .iter()
            .find_map(|pair| {
                let (country, city) = pair.split_once(':').unwrap();
                prompt.contains(country).then_some(city)
            })
            .unwrap_or("unknown");
        let answer = match body["model"].as_str() {
            Some("small") => city.to_string(),
            Some("judge") => json!({"score": 1}).to_string(),
            _ => format!("The capital is {city}."),
        };
        if body["model"] == "cut" {
            // The answer cut mid-emoji, as some servers send it: half a surrogate pair.
            return Reply::json(
                r#"{"choices": [{"index": 0, "message": {"role": "assistant",
                    "content": "Paris \ud83d"}, "finish_reason": "length"}],
                    "usage": {"prompt_tokens": 12, "completion_tokens": 3}}"#,
            );
        }
        let choice = if body["model"] == "prude" {
            json!({"index": 0, "message": {"role": "assistant", "content": null,
                   "refusal": "I can't help with that."}, "finish_reason": "stop"})
        } else if body["model"] == "void" {
            json!({"index": 0, "message": {"role": "assistant", "content": null},
                   "finish_reason": "stop"})
        } else if request.path == "/v1/chat/completions" {
            json!({"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"})
        } else {
            json!({"index": 0, "text": answer, "finish_reason": "stop"})
        };
        let mut reply = json!({"id": "cmpl-1", "object": "chat.completion", "model": body["model"],
                               "choices": [choice],
                               "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}});
        if body["model"] == "mute" {
            // Some servers and proxies leave the token usage out.
            reply.as_object_mut().unwrap().remove("usage");
        }
        Reply::json(reply.to_string())
    })
}

#[test]
fn two_task_models_over_an_openai_compatible_api_make_a_matrix() {
    let server = fake_openai();
    let sb = with_terse_prompt();
    let output = generate(&sb)
        .env("ACME_API_KEY", KEY)
        .args(["--task-model", "acme/small", "--task-model", "acme/large"])
        .args([
            "--task-base-url",
            &server.url("/v1"),
            "--task-max-tokens",
            "32",
        ])
        .args([
            "--task-temperature",
            "0.5",
            "-j",
            "1",
            "--output",
            "results.jsonl",
            "terse.txt",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(
        rows(&json_stdout(&output)),
        vec![
            json!(["terse.txt", "acme/small", 1.0, 3, 0]),
            json!(["terse.txt", "acme/large", 0.0, 3, 0]),
        ]
    );
    let requests = server.requests();
    // Two probes (one per model), then three completions per model.
    assert_eq!(requests.len(), 8);
    let prompt = "Name the city only, nothing else.\nQuestion: what is the capital of France?\n";
    assert_eq!(
        serde_json::from_slice::<Value>(&requests[2].body).unwrap(),
        json!({"model": "small", "messages": [{"role": "user", "content": prompt}],
               "temperature": 0.5, "max_tokens": 32})
    );
    let generation = json!({"usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}, "attempts": 1});
    let line = |model: &str, example: &str, output: &str, score: f64| {
        json!({"candidate": "terse.txt", "task_model": model, "example": example, "output": output,
               "score": score, "error": null, "generation": generation})
    };
    assert_eq!(
        sorted_essentials(&sb.jsonl("results.jsonl")),
        sorted(vec![
            line("acme/small", "fr", "Paris", 1.0),
            line("acme/small", "it", "Rome", 1.0),
            line("acme/small", "jp", "Tokyo", 1.0),
            line("acme/large", "fr", "The capital is Paris.", 0.0),
            line("acme/large", "it", "The capital is Rome.", 0.0),
            line("acme/large", "jp", "The capital is Tokyo.", 0.0),
        ])
    );
    let shown = format!("{}{}", stdout_text(&output), stderr_text(&output));
    assert!(!shown.contains(KEY) && !sb.read("results.jsonl").contains(KEY));
}

#[test]
fn the_completions_api_gets_the_prompt_text() {
    let server = fake_openai();
    let sb = Sandbox::new();
    sb.write("tutor.txt", "Answer tersely.");
    let output = generate(&sb)
        .env("ACME_API_KEY", KEY)
        .args([
            "--task-model",
            "acme/small",
            "--task-api",
            "completions",
            "--skip-preflight",
        ])
        .args([
            "--task-base-url",
            &server.url("/v1"),
            "-j",
            "1",
            "--limit",
            "1",
            "tutor.txt",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/completions");
    assert_eq!(
        serde_json::from_slice::<Value>(&requests[0].body).unwrap(),
        json!({"model": "small", "prompt": "Answer tersely.\n\ncapital of France", "temperature": 0.0})
    );
}

#[test]
fn resume_and_the_cache_generate_nothing_twice() {
    let sb = Sandbox::new();
    logging_model(&sb);
    sb.write(
        "terse.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    let run = |extra: &[&str]| {
        let output = generate(&sb)
            .args(["--task-model-command", "sh model.sh", "--skip-preflight"])
            .args(extra)
            .arg("terse.txt")
            .output()
            .unwrap();
        assert_eq!(code(&output), 0, "{}", stderr_text(&output));
        output
    };
    run(&["--output", "results.jsonl"]);
    assert_eq!(sb.lines("requests.log").len(), 3);
    let resumed = run(&["--output", "results.jsonl", "--resume"]);
    assert_eq!(sb.lines("requests.log").len(), 3, "resume generated again");
    assert_eq!(
        stderr_text(&resumed),
        "resuming results.jsonl: 3 of 3 calls already done, 0 to make\n"
    );
    // Another temperature is another run: its resume says the task models differ.
    let changed = generate(&sb)
        .args(["--task-model-command", "sh model.sh", "--skip-preflight"])
        .args([
            "--task-temperature",
            "0.7",
            "--output",
            "results.jsonl",
            "--resume",
        ])
        .arg("terse.txt")
        .output()
        .unwrap();
    assert_eq!(code(&changed), 2);
    let lines = sb.jsonl("results.jsonl");
    let before = lines[0]["run"]["fingerprint"].as_str().unwrap();
    let stderr = stderr_text(&changed);
    let now = (stderr.split("this one is run ").nth(1))
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_default();
    assert_eq!(
        stderr,
        format!(
            "error: results.jsonl: holds 3 lines not of this run (run {before}: its evaluator or \
             task models differ; this one is run {now}): name another --output file, or pass \
             --append-run to add this run beside them (summarize, merge and report then take one \
             run at a time: --run ID)\n"
        )
    );
    // With --cache, the second run's answers come from the cache: the model is not called.
    run(&["--cache", "--cache-dir", "cache"]);
    assert_eq!(sb.lines("requests.log").len(), 6);
    run(&[
        "--cache",
        "--cache-dir",
        "cache",
        "--output",
        "cached.jsonl",
    ]);
    assert_eq!(
        sb.lines("requests.log").len(),
        6,
        "the cache did not answer"
    );
    let cached = sb.jsonl("cached.jsonl");
    assert!(cached
        .iter()
        .all(|line| line["generation"]["cached"] == json!(true) && line["output"].is_string()));
    // Another temperature is another answer: the cache does not hold it.
    run(&[
        "--cache",
        "--cache-dir",
        "cache",
        "--task-temperature",
        "0.7",
    ]);
    assert_eq!(sb.lines("requests.log").len(), 9);
}

#[test]
fn a_cached_answer_is_keyed_by_what_the_user_declares_and_the_candidate_a_command_sees() {
    let sb = with_terse_prompt();
    logging_model(&sb);
    sb.write(
        "same.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    sb.write("notes.txt", "v1");
    let run = |candidate: &str, extra: &[&str]| {
        let output = generate(&sb)
            .args(["--task-model-command", "sh model.sh", "--skip-preflight"])
            .args([
                "--cache",
                "--cache-dir",
                "cache",
                "--cache-input",
                "notes.txt",
            ])
            .args(extra)
            .arg(candidate)
            .output()
            .unwrap();
        assert_eq!(code(&output), 0, "{}", stderr_text(&output));
        sb.lines("requests.log").len()
    };
    assert_eq!(run("terse.txt", &[]), 3);
    assert_eq!(run("terse.txt", &[]), 3, "the cache did not answer");
    // A declared input edited, or a new salt, is another answer (both were served the old one).
    sb.write("notes.txt", "v2");
    assert_eq!(run("terse.txt", &[]), 6);
    assert_eq!(run("terse.txt", &["--cache-salt", "model v2"]), 9);
    assert_eq!(run("terse.txt", &["--cache-salt", "model v2"]), 9);
    // The command gets the candidate's id with the prompt: the same prompt under another id is
    // asked again.
    assert_eq!(run("same.txt", &["--cache-salt", "model v2"]), 12);
}

#[test]
fn the_project_file_turns_generation_on() {
    let sb = Sandbox::new();
    logging_model(&sb);
    sb.write(
        "terse.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    sb.write(
        "evalctl.toml",
        format!(
            "[evaluator]\nchecks = {:?}\n\n[run]\ndataset = {:?}\ngenerate = true\ntask_model_command = \"sh model.sh\"\ntask_temperature = 0.25\n",
            fixture("checks.json"),
            fixture("qa.jsonl")
        ),
    );
    let output = sb
        .evalctl()
        .args(["run", "--format", "json", "--skip-preflight", "terse.txt"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(
        rows(&json_stdout(&output)),
        vec![json!(["terse.txt", "command 'sh model.sh'", 1.0, 3, 0])]
    );
    let first: Value = serde_json::from_str(&sb.lines("requests.log")[0]).unwrap();
    assert_eq!(first["sampling"], json!({"temperature": 0.25}));
}

/// A project with a task model command and its script in `sb`, and an empty subdirectory
/// `sub` holding the candidate, `terse.txt`.
fn command_project(sb: &Sandbox) {
    logging_model(sb);
    sb.write(
        "sub/terse.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    sb.write(
        "evalctl.toml",
        format!(
            "[evaluator]\nchecks = {:?}\n\n[run]\ndataset = {:?}\ngenerate = true\n\
             task_model_command = \"sh model.sh\"\nskip_preflight = true\n",
            fixture("checks.json"),
            fixture("qa.jsonl")
        ),
    );
}

#[test]
fn the_task_model_command_of_the_project_file_runs_in_the_file_s_directory() {
    let sb = Sandbox::new();
    command_project(&sb);
    // Named from a subdirectory: `sh model.sh` runs beside the file, where its script is.
    let output = sb
        .evalctl()
        .current_dir(sb.join("sub"))
        .args(["run", "--format", "json", "--config", "../evalctl.toml"])
        .arg("terse.txt")
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(
        rows(&json_stdout(&output)),
        vec![json!(["terse.txt", "command 'sh model.sh'", 1.0, 3, 0])]
    );
    assert_eq!(sb.lines("requests.log").len(), 3);
    // With the directory the file names.
    sb.write("models/model.sh", sb.read("model.sh"));
    let toml = sb.read("evalctl.toml");
    sb.write(
        "evalctl.toml",
        format!("{toml}task_model_cwd = \"models\"\n"),
    );
    let output = sb
        .evalctl()
        .current_dir(sb.join("sub"))
        .args([
            "run",
            "--format",
            "json",
            "--config",
            "../evalctl.toml",
            "terse.txt",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(sb.lines("models/requests.log").len(), 3);
    assert_eq!(sb.lines("requests.log").len(), 3);
}

#[test]
fn a_task_model_command_on_the_command_line_runs_where_evalctl_runs() {
    let sb = Sandbox::new();
    command_project(&sb);
    sb.write("sub/model.sh", sb.read("model.sh"));
    // The flag replaces the file's command, and the directory it would run in.
    let output = sb
        .evalctl()
        .current_dir(sb.join("sub"))
        .args(["run", "--format", "json", "--config", "../evalctl.toml"])
        .args(["--task-model-command", "sh model.sh", "terse.txt"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(sb.lines("sub/requests.log").len(), 3);
    assert!(!sb.exists("requests.log"));
    let output = sb
        .evalctl()
        .current_dir(sb.join("sub"))
        .args(["run", "--config", "../evalctl.toml"])
        .args(["--task-model-cwd", "nowhere", "terse.txt"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert_eq!(
        stderr_text(&output),
        "error: --task-model-cwd: nowhere: no such directory\n"
    );
}

#[test]
fn a_failed_generation_is_a_failed_call_naming_the_task_model() {
    let sb = with_terse_prompt();
    sb.write(
        "model.sh",
        "cat >/dev/null\necho 'out of memory' >&2\nexit 3\n",
    );
    let output = generate(&sb)
        .args([
            "--task-model-command",
            "sh model.sh",
            "--skip-preflight",
            "--limit",
            "1",
        ])
        .args(["--retries", "0", "--output", "results.jsonl", "terse.txt"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 1);
    assert_eq!(
        stderr_text(&output),
        "failed: terse.txt with command 'sh model.sh' train fr (line 1): exit_status: task model command 'sh model.sh': command exited with code 3; stderr: out of memory\nexit 1: 1 of 1 calls failed\n"
    );
    let lines = sb.jsonl("results.jsonl");
    assert_eq!(
        lines[0]["error"],
        json!({"kind": "exit_status", "message": "task model command 'sh model.sh': command exited with code 3; stderr: out of memory"})
    );
    assert_eq!(lines[0].get("output"), None);
}

/// `run --generate` in `format` over the first example, answered by `model` of [`fake_openai`]
/// with no retry, its results in `results.jsonl` of the returned sandbox.
fn one_answer_from(model: &str, format: &str) -> (Sandbox, std::process::Output) {
    let server = fake_openai();
    let sb = with_terse_prompt();
    let output = generate_as(&sb, format)
        .env("ACME_API_KEY", KEY)
        .args(["--task-model", model, "--task-base-url", &server.url("/v1")])
        .args(["--skip-preflight", "--limit", "1", "--retries", "0"])
        .args(["--output", "results.jsonl", "terse.txt"])
        .output()
        .unwrap();
    (sb, output)
}

#[test]
fn junit_has_a_suite_per_candidate_task_model_and_split() {
    let server = fake_openai();
    let sb = with_terse_prompt();
    // acme/prude refuses every prompt: its calls are errors of its own suite.
    let output = generate_as(&sb, "text")
        .env("ACME_API_KEY", KEY)
        .args(["--task-model", "acme/small", "--task-model", "acme/prude"])
        .args(["--task-base-url", &server.url("/v1"), "--skip-preflight"])
        .args(["--limit", "1", "--junit", "report.xml", "terse.txt"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 1, "{}", stderr_text(&output));
    let refusal = "task model acme/prude: the model refused: I can&apos;t help with that.";
    assert_eq!(
        crate::ci_reports::junit(&sb),
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>
<testsuites name=\"evalctl\" tests=\"2\" failures=\"0\" errors=\"1\" time=\"T\">
  <testsuite name=\"terse.txt with acme/prude train\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"T\">
    <testcase name=\"terse.txt with acme/prude train fr (line 1)\" classname=\"terse.txt with acme/prude.train\" time=\"T\">
      <error message=\"{refusal}\" type=\"invalid_output\">{refusal}</error>
      <system-out>score: 0
error: invalid_output: {refusal}</system-out>
    </testcase>
  </testsuite>
  <testsuite name=\"terse.txt with acme/small train\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\" time=\"T\">
    <testcase name=\"terse.txt with acme/small train fr (line 1)\" classname=\"terse.txt with acme/small.train\" time=\"T\">
      <system-out>score: 1</system-out>
    </testcase>
  </testsuite>
</testsuites>
"
        )
    );
}

#[test]
fn a_reply_that_refuses_or_has_no_content_is_a_failed_call_not_an_empty_answer_to_score() {
    for (model, reason) in [
        ("prude", "the model refused: I can't help with that."),
        (
            "void",
            "the reply's choices[0].message.content is null: no answer (finish_reason stop)",
        ),
    ] {
        let (sb, output) = one_answer_from(&format!("acme/{model}"), "text");
        assert_eq!(code(&output), 1);
        assert_eq!(
            stderr_text(&output),
            format!(
                "failed: terse.txt with acme/{model} train fr (line 1): invalid_output: task \
                 model acme/{model}: {reason}\nexit 1: 1 of 1 calls failed\n"
            )
        );
        let line = &sb.jsonl("results.jsonl")[0];
        assert_eq!(line.get("output"), None);
        // The reply spent its tokens all the same.
        assert_eq!(line["generation"]["usage"]["total_tokens"], json!(15));
    }
}

#[test]
fn an_answer_cut_at_the_token_limit_is_scored_and_said_to_be_cut_short() {
    // acme/cut stops at its token limit mid-emoji: the half character is a replacement
    // character, and the line, the summary and a warning say the answer may be cut short, as
    // the cache keeps it.
    let server = fake_openai();
    let sb = with_terse_prompt();
    let run = |cache: &[&str], output: &str| {
        generate_as(&sb, "json")
            .env("ACME_API_KEY", KEY)
            .args([
                "--task-model",
                "acme/cut",
                "--task-base-url",
                &server.url("/v1"),
            ])
            .args(["--skip-preflight", "--limit", "1", "--retries", "0"])
            .args(cache)
            .args(["--output", output, "terse.txt"])
            .output()
            .unwrap()
    };
    let warning = "warning: acme/cut stopped at its token limit in 1 call: the answers scored \
                   may be cut short (--task-max-tokens raises the limit)\n";
    let cache: &[&str] = &["--cache", "--cache-dir", "c"];
    for (cache, cached, output) in [
        (&[][..], false, "plain.jsonl"),
        (cache, false, "stored.jsonl"),
        (cache, true, "recalled.jsonl"),
    ] {
        let results = output;
        let output = run(cache, results);
        assert_eq!(code(&output), 0, "{}", stderr_text(&output));
        assert_eq!(stderr_text(&output), warning);
        assert_eq!(json_stdout(&output)["cut_short"], json!({"acme/cut": 1}));
        let line = &sb.jsonl(results)[0];
        assert_eq!(
            (
                &line["output"],
                &line["generation"]["cut_short"],
                &line["generation"].get("cached").is_some()
            ),
            (&json!("Paris \u{fffd}"), &json!(true), &cached),
        );
    }
    // A whole answer says nothing of it.
    let (sb, output) = one_answer_from("acme/small", "json");
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(json_stdout(&output).get("cut_short"), None);
    assert_eq!(
        sb.jsonl("results.jsonl")[0]["generation"].get("cut_short"),
        None
    );
}

// ----- problems before any call -----------------------------------------------------------------

/// Run `evalctl run --generate` in a sandbox with `args`, expecting `exit` and exactly `stderr`.
fn refused(sb: &Sandbox, args: &[&str], env: &[(&str, &str)], exit: i32, stderr: &str) {
    let mut command = sb.evalctl();
    command
        .args(["run", "--no-config", "--format", "text"])
        .args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert_eq!(code(&output), exit, "{}", stderr_text(&output));
    assert_eq!(stderr_text(&output), stderr);
    assert_eq!(stdout_text(&output), "");
}

/// A sandbox with a task model command that logs each call to called.log, and a command
/// evaluator scoring 1.
fn problem_sandbox() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "model.sh",
        "cat >/dev/null\necho called >> called.log\nprintf x\n",
    );
    sb.write("eval.sh", "cat >/dev/null\nprintf '{\"score\": 1}'\n");
    sb.write("d.jsonl", "{\"input\": \"i\"}\n");
    sb.write("system.txt", "Be terse.");
    sb
}

const EVALUATOR: [&str; 2] = ["--evaluator-command", "sh eval.sh"];

#[test]
fn a_placeholder_an_example_lacks_is_named_before_any_call() {
    let sb = problem_sandbox();
    sb.write(
        "q.jsonl",
        "{\"q\": \"a\", \"input\": \"i\"}\n{\"input\": \"j\"}\n{}\n{\"q\": \"b\"}\n",
    );
    sb.write(
        "ask.txt",
        "Context first.\nQuestion: {{q}} ({{meta.lang}})\n",
    );
    let mut args = vec![
        "--generate",
        "--dataset",
        "q.jsonl",
        "--task-model-command",
        "sh model.sh",
    ];
    args.extend(EVALUATOR);
    args.extend(["ask.txt", "system.txt"]);
    refused(
        &sb,
        &args,
        &[],
        2,
        "error: ask.txt:2: placeholder {{meta.lang}}: the example at q.jsonl:1 has no field `meta.lang` (and 3 more examples)\n\
         error: ask.txt:2: placeholder {{q}}: the example at q.jsonl:2 has no field `q` (and 1 more example)\n\
         error: system.txt: a candidate without placeholders is the system prompt, sent with the example's `messages` or `input`: the example at q.jsonl:3 has neither (and 1 more example)\n",
    );
    assert!(!sb.exists("called.log"));
}

#[test]
fn a_remote_task_model_without_a_key_is_refused_even_without_preflight() {
    let sb = problem_sandbox();
    let mut args = vec![
        "--generate",
        "--dataset",
        "d.jsonl",
        "--task-model",
        "openai/gpt-4o-mini",
    ];
    args.extend(EVALUATOR);
    args.extend(["--skip-preflight", "system.txt"]);
    refused(
        &sb,
        &args,
        &[],
        3,
        "error: task model preflight failed for model openai/gpt-4o-mini at https://api.openai.com/v1: no API key: OPENAI_API_KEY is not set (export it, or name another variable with --task-api-key-env; only a local --task-base-url works without a key) (--skip-preflight skips the probe call, not this check)\n",
    );
}

#[test]
fn an_unreachable_task_model_fails_preflight() {
    let sb = problem_sandbox();
    let base = refused_url("/v1");
    let mut args = vec![
        "--generate",
        "--dataset",
        "d.jsonl",
        "--task-model",
        "acme/m",
    ];
    args.extend(EVALUATOR);
    args.extend(["--task-base-url", &base, "--retries", "0", "system.txt"]);
    refused(
        &sb,
        &args,
        &[],
        3,
        &format!("error: task model preflight failed for model acme/m at {base}: the probe completion (prompt \"__evalctl_preflight__\") failed: connection refused — is the server running?\n"),
    );
}

#[test]
fn a_rejected_key_fails_preflight_without_showing_it() {
    let server = fake_openai();
    let sb = problem_sandbox();
    let base = server.url("/v1");
    let mut args = vec![
        "--generate",
        "--dataset",
        "d.jsonl",
        "--task-model",
        "acme/m",
    ];
    args.extend(EVALUATOR);
    args.extend([
        "--task-base-url",
        &base,
        "--task-api-key-env",
        "MY_KEY",
        "system.txt",
    ]);
    let mut command = sb.evalctl();
    command
        .args(["run", "--no-config", "--format", "text"])
        .args(&args);
    let output = command
        .env("MY_KEY", "sk-wrong-key-0123456789")
        .output()
        .unwrap();
    assert_eq!(code(&output), 3);
    let stderr = stderr_text(&output);
    assert!(
        stderr.starts_with(&format!("error: task model preflight failed for model acme/m at {base}: the probe completion (prompt \"__evalctl_preflight__\") failed: HTTP 401")),
        "{stderr}"
    );
    assert!(!stderr.contains("sk-wrong-key-0123456789"));
}

#[test]
fn generation_flags_are_checked_before_anything_runs() {
    let sb = problem_sandbox();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--task-temperature", "1", "--dataset", "d.jsonl"],
            "error: --task-temperature: only applies to --generate\n",
        ),
        (
            &["--task-model-command", "sh model.sh", "--dataset", "d.jsonl"],
            "error: --task-model-command: only applies to --generate\n",
        ),
        (
            &["--task-model", "a/b", "--task-model", "a/c", "--dataset", "d.jsonl"],
            "error: --task-model: without --generate, one task model is metadata for the evaluator; pass --generate to have several task models answer\n",
        ),
        (
            &["--generate", "--task-model", "a/b"],
            "error: --generate: needs a dataset: each candidate is rendered for each example (pass --dataset FILE.jsonl, or set run.dataset in evalctl.toml)\n",
        ),
        (
            &["--generate", "--dataset", "d.jsonl"],
            "error: --generate: no task model: pass --task-model PROVIDER/MODEL (repeatable) or --task-model-command CMD, or set run.task_model in evalctl.toml\n",
        ),
        (
            &["--generate", "--dataset", "d.jsonl", "--task-model", "a/b", "--task-model", "a/b"],
            "error: --task-model: a/b is given twice\n",
        ),
        (
            &["--generate", "--dataset", "d.jsonl", "--task-model", "a/b", "--task-temperature", "-1"],
            "error: --task-temperature: -1: must be a finite number >= 0\n",
        ),
        (
            &["--task-model-cwd", ".", "--dataset", "d.jsonl"],
            "error: --task-model-cwd: only applies to --generate\n",
        ),
        (
            &["--generate", "--dataset", "d.jsonl", "--task-model", "a/b", "--task-model-cwd", "."],
            "error: --task-model-cwd: only applies to --task-model-command\n",
        ),
    ];
    for (flags, stderr) in cases {
        let mut args = flags.to_vec();
        args.extend(EVALUATOR);
        args.push("system.txt");
        refused(&sb, &args, &[], 2, stderr);
    }
    assert!(!sb.exists("called.log"));
}

#[test]
fn the_judge_judges_the_answer_with_the_prompt_beside_it() {
    let judge = crate::judge_support::FakeJudge::start(Some(crate::judge_support::KEY));
    let output = crate::judge_support::judge_run(&judge, Some(crate::judge_support::KEY))
        .args([
            "--no-config",
            "--generate",
            "--dataset",
            &fixture("qa.jsonl"),
            "--limit",
            "1",
        ])
        .args([
            "--task-model-command",
            &format!("sh {}", fixture("model.sh")),
        ])
        .arg(fixture("prompts/terse.txt"))
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    let received = judge.received();
    assert_eq!(received.len(), 1);
    let model = format!("command 'sh {}'", fixture("model.sh"));
    assert_eq!(
        received[0].user_message(),
        format!(
            "## Objective\nAnswer the user's question correctly and briefly.\n\n## Task model\nThe candidate is the answer the model {model} gave to the prompt below.\n\n## Dataset example\nJudge the candidate on this example:\n```json\n{{\n  \"id\": \"fr\",\n  \"input\": \"capital of France\",\n  \"expected\": \"Paris\"\n}}\n```\n\n## Prompt\nThe prompt the candidate answers:\n```text\nName the city only, nothing else.\nQuestion: what is the capital of France?\n\n```\n\n## Candidate\n```text\nParis\n```\n"
        )
    );
}

#[test]
fn resume_scores_again_the_answers_a_failed_evaluator_left() {
    let sb = Sandbox::new();
    logging_model(&sb);
    sb.write(
        "terse.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    sb.write("d.jsonl", std::fs::read(fixture("qa.jsonl")).unwrap());
    // Fails while `down` exists; then scores 1 when the payload's answer is Paris.
    sb.write(
        "eval.sh",
        "p=$(cat)\n[ -e down ] && { echo down >&2; exit 1; }\ncase \"$p\" in *'\"output\":\"Paris\"'*) printf '{\"score\": 1}' ;; *) printf '{\"score\": 0}' ;; esac\n",
    );
    sb.write("down", "");
    let run = |extra: &[&str]| {
        generate_local(&sb)
            .args(["--evaluator-command", "sh eval.sh"])
            .args([
                "--skip-preflight",
                "--retries",
                "0",
                "--limit",
                "1",
                "--output",
                "results.jsonl",
            ])
            .args(extra)
            .arg("terse.txt")
            .output()
            .unwrap()
    };
    assert_eq!(code(&run(&[])), 1);
    assert_eq!(sb.lines("requests.log").len(), 1);
    std::fs::remove_file(sb.join("down")).unwrap();
    let resumed = run(&["--resume"]);
    assert_eq!(code(&resumed), 0, "{}", stderr_text(&resumed));
    assert_eq!(
        sb.lines("requests.log").len(),
        1,
        "the answer was generated again"
    );
    let lines = sb.jsonl("results.jsonl");
    assert_eq!(lines.len(), 2);
    assert_eq!(
        (&lines[1]["output"], &lines[1]["score"]),
        (&json!("Paris"), &json!(1.0))
    );
    // The answer's call is the first line's: the second says it recalled it.
    let mut recalled = lines[0]["generation"].clone();
    recalled["recalled"] = json!(true);
    assert_eq!(lines[1]["generation"], recalled);
}

#[test]
fn an_evaluation_spec_sees_the_answer_as_final_output() {
    let sb = Sandbox::new();
    let spec_fixture = |name: &str| format!("{}/fixtures/spec/{name}", env!("CARGO_MANIFEST_DIR"));
    let output = sb
        .evalctl()
        .args([
            "run",
            "--no-config",
            "--format",
            "json",
            "--generate",
            "--output",
            "results.jsonl",
        ])
        .args([
            "--task-model-command",
            &format!("sh {}", fixture("model.sh")),
        ])
        .args([
            "--spec",
            &spec_fixture("pack.yaml"),
            "--dataset",
            &spec_fixture("dataset.jsonl"),
        ])
        .args(["--candidate", "{{inputs.question}}", "-j", "1"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    // The answer names the capital (the `contains` validator passes) but is far from the
    // reference sentence (the fuzzy match does not).
    let lines: Vec<Value> = sb
        .jsonl("results.jsonl")
        .iter()
        .map(|line| json!([line["output"], line["side_info"]["validators_not_passed"]]))
        .collect();
    assert_eq!(
        lines,
        vec![
            json!(["Paris", ["close_to_reference"]]),
            json!(["Rome", ["close_to_reference"]])
        ]
    );
}

#[test]
fn an_example_with_messages_follows_the_system_prompt() {
    let server = fake_openai();
    let sb = Sandbox::new();
    sb.write(
        "chat.jsonl",
        "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": \"Hello!\"}, {\"role\": \"user\", \"content\": \"Capital of Italy?\"}], \"expected\": \"Rome\"}\n",
    );
    let output = sb
        .evalctl()
        .env("ACME_API_KEY", KEY)
        .args([
            "run",
            "--no-config",
            "--format",
            "json",
            "--generate",
            "--dataset",
            "chat.jsonl",
        ])
        .args(["--checks", &fixture("checks.json"), "--skip-preflight"])
        .args([
            "--task-model",
            "acme/small",
            "--task-base-url",
            &server.url("/v1"),
        ])
        .args(["--candidate", "Answer with one word."])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(
        rows(&json_stdout(&output)),
        vec![json!(["cand-1", "acme/small", 1.0, 1, 0])]
    );
    let requests = server.requests();
    assert_eq!(
        serde_json::from_slice::<Value>(&requests[0].body).unwrap()["messages"],
        json!([
            {"role": "system", "content": "Answer with one word."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "Capital of Italy?"}
        ])
    );
}

#[test]
fn an_http_evaluator_gets_the_prompt_and_the_answer_in_the_payload() {
    let evaluator = Server::fixed(Reply::json(r#"{"score": 0.5}"#));
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"q\": \"2+2\"}\n");
    sb.write("model.sh", "cat >/dev/null\nprintf '4'\n");
    let output = generate_local(&sb)
        .arg("--skip-preflight")
        .args([
            "--evaluator-url",
            &evaluator.url("/score"),
            "--candidate",
            "What is {{q}}?",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    let bodies: Vec<String> = evaluator.requests().iter().map(|r| r.body_text()).collect();
    assert_eq!(
        bodies,
        [
            r#"{"_protocol_version":2,"candidate":"What is {{q}}?","task_model":"command 'sh model.sh'","example":{"q": "2+2"},"prompt":"What is 2+2?","output":"4"}"#
        ]
    );
}

#[test]
fn preflight_probes_each_task_model_once_and_scores_nothing() {
    let sb = problem_sandbox();
    let output = sb
        .evalctl()
        .args([
            "preflight",
            "--no-config",
            "--format",
            "text",
            "--generate",
            "--dataset",
            "d.jsonl",
        ])
        .args([
            "--task-model-command",
            "sh model.sh",
            EVALUATOR[0],
            EVALUATOR[1],
            "system.txt",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(sb.lines("called.log"), ["called"]);
}

#[test]
fn shards_of_a_generating_run_merge_into_its_summary() {
    let sb = with_terse_prompt();
    sb.write(
        "tutor.txt",
        std::fs::read(fixture("prompts/tutor.txt")).unwrap(),
    );
    let model = format!("sh {}", fixture("model.sh"));
    let run = |extra: &[&str]| {
        let output = generate(&sb)
            .args(["--task-model-command", &model, "--skip-preflight"])
            .args(extra)
            .args(["terse.txt", "tutor.txt"])
            .output()
            .unwrap();
        assert_eq!(code(&output), 0, "{}", stderr_text(&output));
        json_stdout(&output)
    };
    let whole = run(&[]);
    run(&["--shard", "0/2", "--output", "a.jsonl"]);
    run(&["--shard", "1/2", "--output", "b.jsonl"]);
    let merged = sb
        .evalctl()
        .args(["merge", "--format", "json", "a.jsonl", "b.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&merged), 0, "{}", stderr_text(&merged));
    assert_eq!(json_stdout(&merged)["candidates"], whole["candidates"]);
}

#[test]
fn compare_pairs_calls_by_candidate_task_model_and_example() {
    let server = fake_openai();
    let sb = with_terse_prompt();
    for output in ["base.jsonl", "new.jsonl"] {
        let run = generate(&sb)
            .env("ACME_API_KEY", KEY)
            .args(["--task-model", "acme/small", "--task-model", "acme/large"])
            .args(["--task-base-url", &server.url("/v1"), "-j", "1"])
            .args(["--output", output, "terse.txt"])
            .output()
            .unwrap();
        assert_eq!(code(&run), 0, "{}", stderr_text(&run));
    }
    let compared = sb
        .evalctl()
        .args(["compare", "base.jsonl", "new.jsonl", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&compared), 0, "{}", stderr_text(&compared));
    let document = json_stdout(&compared);
    let candidates: Vec<Value> = document["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|candidate| json!([candidate["id"], candidate["pairs"], candidate["base_mean"]]))
        .collect();
    // Each task model's calls are paired with the same model's, never pooled with the other's.
    assert_eq!(
        candidates,
        [
            json!(["terse.txt with acme/large", 3, 0.0]),
            json!(["terse.txt with acme/small", 3, 1.0]),
        ]
    );
}
