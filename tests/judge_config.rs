//! Judge configuration through the real binary: usage errors (exit 2) name the flag, variable or
//! rubric field; a missing API key fails preflight (exit 3) without any request.

use crate::common::evalctl;
use crate::judge_support::{fixture, FakeJudge, KEY};
use predicates::prelude::*;

fn judge(model: &str) -> assert_cmd::Command {
    let mut command = evalctl();
    command.args(["run", "--judge-model", model, "--candidate", "c"]);
    command
}

#[test]
fn objective_is_required() {
    judge("openai/gpt-4o-mini").assert().code(2).stderr(
        "error: --judge-model: needs --objective TEXT: what the judge scores candidates against\n",
    );
    judge("openai/gpt-4o-mini")
        .args(["--objective", "  "])
        .assert()
        .code(2)
        .stderr("error: --objective: must not be empty\n");
}

#[test]
fn model_must_be_provider_slash_model() {
    judge("gpt-4o-mini")
        .args(["--objective", "x"])
        .assert()
        .code(2)
        .stderr(
            "error: --judge-model: \"gpt-4o-mini\": expected PROVIDER/MODEL, e.g. openai/gpt-4o-mini\n",
        );
}

#[test]
fn unknown_provider_needs_a_base_url() {
    judge("acme/judge-1")
        .args(["--objective", "x"])
        .assert()
        .code(2)
        .stderr(
            "error: --judge-model: \"acme/judge-1\": provider \"acme\" has no default endpoint; \
             pass --judge-base-url URL or set EVALCTL_JUDGE_BASE_URL (providers with a default: \
             openai, openrouter, together, groq, fireworks, deepseek, mistral, xai, gemini, \
             anthropic, ollama, vllm, llamacpp, lmstudio, litellm)\n",
        );
}

#[test]
fn invalid_base_urls_name_their_source() {
    judge("acme/judge-1")
        .args(["--objective", "x", "--judge-base-url", "ftp://example.com"])
        .assert()
        .code(2)
        .stderr(
            "error: --judge-base-url: \"ftp://example.com\": the scheme must be http or https\n",
        );
    judge("acme/judge-1")
        .args(["--objective", "x"])
        .env("EVALCTL_JUDGE_BASE_URL", "localhost:8000")
        .assert()
        .code(2)
        .stderr(
            "error: EVALCTL_JUDGE_BASE_URL: \"localhost:8000\": the scheme must be http or https\n",
        );
    // A URL that does not parse, or parses without a host, is quoted without its user info and
    // query: they may be secrets (a password may hold a `/`).
    for (url, said) in [
        (
            "http://proxy:s3cret-pw@[::1/v1?key=s3cret-key",
            "\"http://[::1/v1?…\": invalid IPv6 address",
        ),
        (
            "http:/proxy:s3cret-pw@[::1/v1",
            "\"http:/[::1/v1\": invalid IPv6 address",
        ),
        (
            "http://proxy:s3c/ret-pw@[::1/v1",
            "\"http://[::1/v1\": invalid port number",
        ),
        (
            "http://proxy:s3c#ret-pw@[::1/v1",
            "\"http://[::1/v1\": invalid port number",
        ),
        (
            "proxy:s3cret-pw@host/v1?key=s3cret-key",
            "\"proxy:host/v1?…\": the scheme must be http or https",
        ),
    ] {
        judge("acme/judge-1")
            .args(["--objective", "x", "--judge-base-url", url])
            .assert()
            .code(2)
            .stderr(format!("error: --judge-base-url: {said}\n"));
    }
}

#[test]
fn a_base_url_with_a_user_or_password_is_refused_when_a_key_would_be_replaced() {
    // The URL's user and password would go as `Authorization: Basic`, and the key not at all;
    // the password is not shown.
    judge("acme/judge-1")
        .args(["--objective", "x", "--judge-base-url"])
        .arg("http://proxy:s3cret-pw@127.0.0.1:9/v1")
        .env("ACME_API_KEY", KEY)
        .assert()
        .code(2)
        .stderr(
            "error: --judge-base-url: http://127.0.0.1:9/v1: the URL names a user or password, \
             which would be sent in place of the API key in ACME_API_KEY: leave them out of the \
             URL\n",
        );
}

#[test]
fn rubric_problems_name_the_file_and_field() {
    let bad = fixture("rubric_bad_weight.json");
    judge("ollama/llama3")
        .args(["--objective", "x", "--rubric", &bad])
        .assert()
        .code(2)
        .stderr(format!(
            "error: {bad}:4: quality_dimensions[1].weight: expected a positive finite number, found string \"high\"\n"
        ));
    let dir = tempfile::tempdir().unwrap();
    let not_json = dir.path().join("rubric.json");
    std::fs::write(&not_json, "{\"quality_dimensions\": [").unwrap();
    judge("ollama/llama3")
        .args(["--objective", "x", "--rubric"])
        .arg(&not_json)
        .assert()
        .code(2)
        .stderr(format!(
            "error: {}: invalid JSON: EOF while parsing a list at line 1, column 24\n",
            not_json.display()
        ));
    judge("ollama/llama3")
        .args(["--objective", "x", "--rubric", "/nonexistent/rubric.json"])
        .assert()
        .code(2)
        .stderr("error: /nonexistent/rubric.json: cannot read: No such file or directory\n");
}

#[test]
fn every_rubric_problem_is_reported_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let rubric = dir.path().join("rubric.json");
    std::fs::write(
        &rubric,
        r#"{"quality_dimensions":[{"name":"a","wieght":1},{"name":"a"}],"hard_constraints":[""],"x":1}"#,
    )
    .unwrap();
    let file = rubric.display();
    judge("ollama/llama3")
        .args(["--format", "text", "--objective", "x", "--rubric"])
        .arg(&rubric)
        .assert()
        .code(2)
        .stdout("")
        .stderr(format!(
            "error: {file}: x: unknown key `x` (expected one of quality_dimensions, hard_constraints)\n\
             error: {file}: quality_dimensions[0].wieght: unknown key `wieght` (expected one of name, weight, description)\n\
             error: {file}: quality_dimensions[1].name: duplicate dimension \"a\"\n\
             error: {file}: hard_constraints[0]: must not be empty\n"
        ));
    // Names that differ only in case are one to a reply, whose names match in any case.
    std::fs::write(
        &rubric,
        r#"{"quality_dimensions":[{"name":"Clarity"},{"name":"clarity"}]}"#,
    )
    .unwrap();
    judge("ollama/llama3")
        .args(["--format", "text", "--objective", "x", "--rubric"])
        .arg(&rubric)
        .assert()
        .code(2)
        .stdout("")
        .stderr(format!(
            "error: {file}: quality_dimensions[1].name: duplicate dimension \"clarity\" \
             (\"Clarity\" in another case: a reply's names match in any case)\n"
        ));
}

#[test]
fn a_missing_key_fails_preflight_for_a_remote_endpoint() {
    for command in ["run", "preflight"] {
        evalctl()
            .args([
                command,
                "--judge-model",
                "openai/gpt-4o-mini",
                "--objective",
                "x",
            ])
            .args(["--candidate", "c", "--skip-preflight"])
            .assert()
            .code(3)
            .stderr(
                "error: evaluator preflight failed for judge openai/gpt-4o-mini at \
                 https://api.openai.com/v1: no API key: OPENAI_API_KEY is not set (export it, or \
                 name another variable with --judge-api-key-env; only a local --judge-base-url \
                 works without a key) (--skip-preflight skips the probe call, not this check)\n",
            );
    }
    judge("groq/llama-3.1-8b-instant")
        .args(["--objective", "x", "--judge-api-key-env", "MY_GROQ_KEY"])
        .env_remove("MY_GROQ_KEY")
        .assert()
        .code(3)
        .stderr(
            "error: evaluator preflight failed for judge groq/llama-3.1-8b-instant at \
             https://api.groq.com/openai/v1: no API key: MY_GROQ_KEY is not set (export it, or \
             name another variable with --judge-api-key-env; only a local --judge-base-url works \
             without a key)\n",
        );
}

#[test]
fn preflight_without_probe_judge_sends_nothing() {
    // A key and a listening server: without --probe-judge no completion is requested and no
    // tokens are spent; only the free models endpoint checks the key.
    let server = FakeJudge::start(Some(KEY));
    evalctl()
        .args([
            "preflight",
            "--judge-model",
            "fake/judge-model",
            "--judge-base-url",
            &server.base_url(),
            "--objective",
            "x",
        ])
        .args(["--candidate", "c", "--format", "json"])
        .env("FAKE_API_KEY", KEY)
        .assert()
        .code(0)
        .stdout(
            r#"{
  "ok": true,
  "evaluator": {
    "kind": "judge",
    "target": "fake/judge-model"
  },
  "candidates": 1,
  "dataset_records": null,
  "valset_records": null,
  "dataset_used": null,
  "valset_used": null,
  "probe": null
}
"#,
        )
        .stdout(predicate::str::contains(KEY).not());
    assert_eq!(server.received().len(), 0);
    assert_eq!(server.model_lists(), 1);
}

#[test]
fn probe_judge_conflicts_with_skip_preflight() {
    let server = FakeJudge::start(Some(KEY));
    for command in ["run", "preflight"] {
        evalctl()
            .args([
                command,
                "--judge-model",
                "fake/judge-model",
                "--judge-base-url",
                &server.base_url(),
                "--objective",
                "x",
                "--probe-judge",
                "--skip-preflight",
                "--candidate",
                "c",
            ])
            .env("FAKE_API_KEY", KEY)
            .assert()
            .code(2)
            .stderr(format!(
                "error: the argument '--probe-judge' cannot be used with '--skip-preflight'

Usage: evalctl {command} --judge-model <PROVIDER/MODEL> --judge-base-url <URL> --objective <TEXT> --probe-judge --candidate <TEXT> [CANDIDATE_FILE]...

For more information, try '--help'.
"
            ));
    }
    assert_eq!(server.received().len(), 0);
}
