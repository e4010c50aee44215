//! `evalctl serve` with the checks that call out: extended checks against a fake
//! OpenAI-compatible API (only at the endpoint the operator allows, with the key lent for it), the operator's
//! custom checks, `spec.TYPE` checks, and requests that try to declare commands. The real server
//! on loopback ports, over HTTP (batch and NDJSON streaming).

use serde_json::{json, Value};

use crate::extended_support::{fake_api, judge, similarity, KEY};
use crate::serve_support::Server;

/// A command that answers `{"passed": true, "got": <its stdin>}`.
const ECHO: &str = r#"echo=sh -c 'printf "{\"passed\": true, \"got\": %s}" "$(cat)"'"#;

fn request(checks: Value) -> Vec<u8> {
    json!({
        "test_cases": [{"id": "t1", "input": "Capital of France?", "expected": "Paris"}],
        "outputs": [{"value": "Paris"}],
        "checks": checks
    })
    .to_string()
    .into_bytes()
}

#[test]
fn extended_custom_and_validator_checks_are_answered_at_the_endpoints_allowed() {
    let api = fake_api();
    let dir = tempfile::tempdir().unwrap();
    let allowed = format!("EXT_TEST_KEY@{}", api.url("/v1"));
    let server = Server::start(
        &dir.path().join("s.db"),
        &["--allow-endpoint", &allowed, "--custom-check", ECHO],
        &[
            ("EXT_TEST_KEY", KEY),
            ("EXT_OTHER_KEY", "sk-Other9Key4Not7Lent"),
        ],
    );
    let mut unlent = similarity(&api);
    unlent["arguments"]["provider_config"]["api_key"] = json!("${EXT_OTHER_KEY}");
    // A client's own endpoint would receive the lent key: refused, the server calls no one.
    let thief = fake_api();
    let mut foreign = similarity(&thief);
    foreign["arguments"]["provider_config"]
        .as_object_mut()
        .unwrap()
        .remove("api_key");
    let reply = server.request(
        "POST",
        "/evaluate",
        &[],
        &request(json!([
            similarity(&api),
            judge(&api),
            {"type": "echo", "arguments": {"text": "$.output.value"}},
            {"type": "spec.fuzzy_match", "arguments": {"actual": "$.output.value", "expected": "$.test_case.expected",
                "config": {"case_insensitive": true}}},
            unlent,
            foreign
        ])),
    );
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let text = String::from_utf8_lossy(&reply.body).to_string();
    assert!(!text.contains(KEY) && !text.contains("sk-Other9Key4Not7Lent"));
    let document = reply.json();
    let results = document["results"][0]["check_results"].as_array().unwrap();
    assert_eq!(
        results[0]["results"]["response"],
        json!({"score": 1.0, "passed": true})
    );
    assert_eq!(
        results[1]["results"]["response"],
        json!({"passed": true, "reasoning": "compared"})
    );
    assert_eq!(
        results[2]["results"],
        json!({"passed": true, "got": {"text": "Paris"}})
    );
    assert_eq!(results[3]["results"]["passed"], true);
    assert_eq!(
        results[4]["error"],
        json!({"type": "validation_error", "recoverable": false,
            "message": format!("arguments.provider_config.api_key: this server does not lend the key in `EXT_OTHER_KEY` for {} (leave the key out: the server uses `EXT_TEST_KEY`)", api.url("/v1"))})
    );
    assert_eq!(
        results[5]["error"]["message"],
        format!("arguments.provider_config.base_url: this server calls only the endpoints its operator allows ({})", api.url("/v1"))
    );
    assert!(
        thief.requests().is_empty(),
        "the foreign endpoint was called"
    );
    // Streamed, the answers come in the result lines.
    let streamed = server.request(
        "POST",
        "/evaluate?stream=true",
        &[],
        &request(json!([judge(&api)])),
    );
    let first: Value =
        serde_json::from_slice(streamed.body.split(|&byte| byte == b'\n').next().unwrap()).unwrap();
    assert_eq!(
        first["check_results"][0]["results"]["response"]["passed"],
        true
    );
}

#[test]
fn a_request_cannot_declare_commands() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    let mut body: Value = serde_json::from_slice(&request(json!([
        {"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "Paris"}}
    ])))
    .unwrap();
    body["custom_checks"] = json!({"pwn": {"command": ["sh", "-c", "touch /tmp/pwned"]}});
    let reply = server.request("POST", "/evaluate", &[], body.to_string().as_bytes());
    assert_eq!(reply.status, 400);
    assert_eq!(
        reply.json()["details"]["problems"],
        json!(["custom_checks: this server runs only the custom checks its operator declared (evalctl serve --custom-check NAME=COMMAND)"])
    );
}

#[test]
fn an_endpoint_allowed_with_a_key_that_is_not_set_is_said_at_start() {
    let api = fake_api();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let allowed = format!("EXT_UNSET_KEY@{}", api.url("/v1"));
    let server = Server::start(&db, &["--allow-endpoint", &allowed], &[]);
    let masked: Vec<String> = (server.startup.lines())
        .map(|line| match line.split_once(" listening on ") {
            Some((api, _)) => format!("{api} listening on ADDRESS"),
            None => line.to_string(),
        })
        .collect();
    assert_eq!(
        masked,
        [
            format!(
                "warning: --allow-endpoint EXT_UNSET_KEY@http://127.0.0.1:{}: EXT_UNSET_KEY is \
                 not set, so no key is sent there",
                api.port()
            ),
            format!("database {}", db.display()),
            "REST listening on ADDRESS".to_string(),
            "gRPC listening on ADDRESS".to_string(),
        ]
    );
}

#[test]
fn a_custom_checks_command_gets_neither_the_token_nor_the_lent_keys_and_shows_no_secret() {
    const TOKEN: &str = "tok-Canary-0123456789abcdef";
    const OWN: &str = "pw-Canary-778899";
    let spill = r#"spill=sh -c 'cat >/dev/null; printf "{\"passed\": true, \"token\": \"%s\", \"lent\": \"%s\", \"own\": \"%s\"}" "${SERVE_TEST_TOKEN-unset}" "${EXT_TEST_KEY-unset}" "${OWN_SERVICE_PASSWORD-unset}"'"#;
    let crash = r#"crash=sh -c 'cat >/dev/null; echo "own=$OWN_SERVICE_PASSWORD" >&2; exit 1'"#;
    // The secret where the stderr excerpt (its last 500 characters) would cut through it.
    let cut =
        r#"cut=sh -c 'cat >/dev/null; printf "%0600d$OWN_SERVICE_PASSWORD%0492d" 0 0 >&2; exit 1'"#;
    let api = fake_api();
    let dir = tempfile::tempdir().unwrap();
    let allowed = format!("EXT_TEST_KEY@{}", api.url("/v1"));
    let server = Server::start(
        &dir.path().join("s.db"),
        &[
            &[
                "--token-env",
                "SERVE_TEST_TOKEN",
                "--allow-endpoint",
                &allowed,
            ][..],
            &["--custom-check", spill, "--custom-check", crash],
            &["--custom-check", cut],
        ]
        .concat(),
        &[
            ("SERVE_TEST_TOKEN", TOKEN),
            ("EXT_TEST_KEY", KEY),
            ("OWN_SERVICE_PASSWORD", OWN),
        ],
    );
    let auth = format!("Authorization: Bearer {TOKEN}");
    let reply = server.request(
        "POST",
        "/evaluate",
        &[&auth],
        &request(json!([
            {"type": "spill", "arguments": {}},
            {"type": "crash", "arguments": {}},
            {"type": "cut", "arguments": {}}
        ])),
    );
    assert_eq!(reply.status, 200);
    let document = reply.json();
    let results = &document["results"][0]["check_results"];
    // The token and the lent key are not in the command's environment; a secret of the
    // operator's own that is (its name says what it is) does not reach the client.
    assert_eq!(
        results[0]["results"],
        json!({"passed": true, "token": "unset", "lent": "unset", "own": "[redacted]"})
    );
    assert_eq!(
        results[1]["error"],
        json!({"type": "unknown_error", "recoverable": false,
            "message": "command exited with code 1; stderr: own=[redacted]"})
    );
    assert_eq!(
        results[2]["error"]["message"],
        format!(
            "command exited with code 1; stderr: …edacted]{}",
            "0".repeat(492)
        )
    );
    // Nor does it reach the store.
    let id = document["evaluation_id"].as_str().unwrap();
    let stored = server.request("GET", &format!("/evaluations/{id}"), &[&auth], b"");
    assert_eq!(stored.json()["results"], document["results"]);
    let (status, logs) = server.terminate();
    assert!(status.success());
    for text in [
        String::from_utf8_lossy(&reply.body).to_string(),
        String::from_utf8_lossy(&stored.body).to_string(),
        logs,
    ] {
        assert!(
            !text.contains(TOKEN) && !text.contains(KEY) && !text.contains(OWN),
            "{text}"
        );
    }
}
