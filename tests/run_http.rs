//! The HTTP adapter under `evalctl run`, against the scriptable server of `common`: the request
//! (POST, JSON content type, payload body, repeatable `--header`), keep-alive reuse, retries
//! (5xx, 429 with `Retry-After`, transport failures; never 404 or a bad score), timeouts, the
//! body cap, the score-range matrix, and that a header secret never shows up in any output.

use std::time::Duration;

use crate::common::{
    check_record, code, json_stdout, refused_url, stderr_text, stdout_text, succeeded, Expect,
    Reply, Sandbox, Server, SCORE_MATRIX,
};
use serde_json::{json, Value};

/// `evalctl run --format json` against `url`, results in out.jsonl.
fn run_http(sb: &Sandbox, url: &str) -> assert_cmd::Command {
    let _ = std::fs::remove_file(sb.join("out.jsonl"));
    let mut command = sb.evalctl();
    command.args([
        "run",
        "--format",
        "json",
        "--evaluator-url",
        url,
        "--output",
        "out.jsonl",
    ]);
    command
}

#[test]
fn posts_the_payload_as_json_with_the_given_headers() {
    let server = Server::fixed(Reply::json(r#"{"score": 0.5, "why": "ok", "n": 1.50}"#));
    let sb = Sandbox::new();
    let out = succeeded(
        run_http(&sb, &server.url("/score"))
            .args(["--candidate", "hello", "--task-model", "m/x"])
            .args([
                "--header",
                "X-Tag: one",
                "--header",
                "X-Tag: two",
                "--header",
                "X-Other:   spaced value  ",
            ]),
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "probe + one call");
    assert_eq!(
        requests[0].body_text(),
        r#"{"_protocol_version":2,"candidate":"__evalctl_preflight__","task_model":"m/x"}"#
    );
    let call = &requests[1];
    assert_eq!(call.method, "POST");
    assert_eq!(call.path, "/score");
    assert_eq!(call.header("content-type"), Some("application/json"));
    assert_eq!(call.headers_named("x-tag"), ["one", "two"]);
    assert_eq!(call.header("x-other"), Some("spaced value"));
    assert_eq!(
        call.body_text(),
        r#"{"_protocol_version":2,"candidate":"hello","task_model":"m/x"}"#
    );
    let record = &sb.jsonl("out.jsonl")[0];
    assert_eq!(record["score"].as_f64(), Some(0.5));
    assert_eq!(record["attempts"], 1);
    // The side info exactly as the evaluator wrote it (1.50 stays 1.50).
    assert_eq!(record["side_info"].to_string(), r#"{"why":"ok","n":1.50}"#);
    let summary = json_stdout(&out);
    assert_eq!(
        summary["evaluator"],
        json!({"kind": "http", "target": server.url("/score")})
    );
}

#[test]
fn dataset_calls_carry_the_example() {
    let server = Server::fixed(Reply::json(r#"{"score": 1}"#));
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"q\": \"a\", \"w\": 1.10}\n");
    succeeded(run_http(&sb, &server.url("/")).args([
        "--candidate",
        "c",
        "--dataset",
        "d.jsonl",
        "--skip-preflight",
    ]));
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "--skip-preflight sends no probe");
    assert_eq!(
        requests[0].body_text(),
        r#"{"_protocol_version":2,"candidate":"c","example":{"q": "a", "w": 1.10}}"#
    );
}

#[test]
fn connections_are_kept_alive_and_reused() {
    let server = Server::fixed(Reply::json(r#"{"score": 1}"#));
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{}\n".repeat(30));
    succeeded(run_http(&sb, &server.url("/")).args([
        "-j",
        "1",
        "--candidate",
        "c",
        "--dataset",
        "d.jsonl",
    ]));
    assert_eq!(server.request_count(), 31);
    // One connection carries every call; hyper may race a spare one while the previous
    // response's connection returns to the pool, hence "at most 2", not "exactly 1".
    assert!(
        server.connection_count() <= 2,
        "-j 1: 31 requests over one kept-alive connection, got {}",
        server.connection_count()
    );

    let server = Server::fixed(Reply::json(r#"{"score": 1}"#).after(Duration::from_millis(5)));
    sb.write("d.jsonl", "{}\n".repeat(60));
    succeeded(run_http(&sb, &server.url("/")).args([
        "-j",
        "4",
        "--candidate",
        "c",
        "--dataset",
        "d.jsonl",
    ]));
    assert_eq!(server.request_count(), 61);
    // hyper may open a spare connection while racing for an idle one: a few, never one per call.
    assert!(
        server.connection_count() <= 8,
        "-j 4: 61 requests over a few connections, got {}",
        server.connection_count()
    );
}

#[test]
fn fails_twice_with_503_then_answers() {
    let server = Server::fail_then(
        2,
        Reply::status(503, "warming up"),
        Reply::json(r#"{"score": 0.8}"#),
    );
    let sb = Sandbox::new();

    succeeded(run_http(&sb, &server.url("/")).args(["--candidate", "c", "--skip-preflight"]));
    let record = &sb.jsonl("out.jsonl")[0];
    assert_eq!(record["attempts"], 3);
    assert_eq!(record["score"].as_f64(), Some(0.8));
    assert_eq!(record["error"], Value::Null);
    assert_eq!(server.request_count(), 3);
}

#[test]
fn the_preflight_probe_is_retried_like_any_call() {
    // A server that is still warming up must not fail preflight when --retries would cover it.
    let server = Server::fail_then(
        2,
        Reply::status(503, "warming up"),
        Reply::json(r#"{"score": 0.8}"#),
    );
    let sb = Sandbox::new();
    succeeded(run_http(&sb, &server.url("/")).args(["--candidate", "c"]));
    assert_eq!(server.request_count(), 4, "3 probe attempts + 1 call");
    assert_eq!(sb.jsonl("out.jsonl")[0]["attempts"], 1);
}

#[test]
fn retries_give_up_after_the_limit() {
    let server = Server::fixed(Reply::status(500, "boom"));
    let sb = Sandbox::new();
    let out = run_http(&sb, &server.url("/"))
        .args(["--candidate", "c", "--skip-preflight", "--retries", "1"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    let record = &sb.jsonl("out.jsonl")[0];
    assert_eq!(record["attempts"], 2);
    assert_eq!(record["error"]["kind"], "http_status");
    assert_eq!(
        record["error"]["message"],
        "HTTP 500 Internal Server Error: boom"
    );
    assert_eq!(server.request_count(), 2);
}

#[test]
fn retries_zero_makes_one_attempt() {
    let server = Server::fixed(Reply::status(503, ""));
    let sb = Sandbox::new();
    let out = run_http(&sb, &server.url("/"))
        .args(["--candidate", "c", "--skip-preflight", "--retries", "0"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    assert_eq!(sb.jsonl("out.jsonl")[0]["attempts"], 1);
    assert_eq!(server.request_count(), 1);
}

#[test]
fn status_429_honours_retry_after() {
    let server = Server::fail_then(
        1,
        Reply::status(429, "slow down").header("Retry-After", "1"),
        Reply::json(r#"{"score": 1}"#),
    );
    let sb = Sandbox::new();

    succeeded(run_http(&sb, &server.url("/")).args(["--candidate", "c", "--skip-preflight"]));
    assert_eq!(sb.jsonl("out.jsonl")[0]["attempts"], 2);
    let requests = server.requests();
    let gap = requests[1].at - requests[0].at;
    assert!(
        gap >= Duration::from_millis(950),
        "Retry-After: 1 not honoured: {gap:?}"
    );
}

#[test]
fn client_errors_and_bad_scores_are_not_retried() {
    let sb = Sandbox::new();
    let server = Server::fixed(Reply::status(404, "no such route"));
    let out = run_http(&sb, &server.url("/nope"))
        .args(["--candidate", "c", "--skip-preflight"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    let record = &sb.jsonl("out.jsonl")[0];
    assert_eq!(record["error"]["kind"], "http_status");
    assert_eq!(
        record["error"]["message"],
        "HTTP 404 Not Found: no such route — is the URL's path right (for a model API, the model's name)?"
    );
    assert_eq!(record["attempts"], 1);
    assert_eq!(server.request_count(), 1);

    let server = Server::fixed(Reply::json(r#"{"score": 7, "k": "v"}"#));
    let out = run_http(&sb, &server.url("/"))
        .args(["--candidate", "c", "--skip-preflight"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    let record = &sb.jsonl("out.jsonl")[0];
    assert_eq!(record["error"]["kind"], "out_of_range");
    assert_eq!(record["side_info"], json!({"k": "v"}));
    assert_eq!(record["attempts"], 1);
    assert_eq!(server.request_count(), 1);
}

#[test]
fn transport_failures_are_retried_then_reported() {
    let sb = Sandbox::new();
    let server = Server::fixed(Reply::hang_up());
    let out = run_http(&sb, &server.url("/"))
        .args(["--candidate", "c", "--skip-preflight", "--retries", "2"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    let record = &sb.jsonl("out.jsonl")[0];
    assert_eq!(record["error"]["kind"], "transport", "{record}");
    assert_eq!(record["attempts"], 3);
    assert_eq!(server.request_count(), 3);

    let out = run_http(&sb, &refused_url("/score"))
        .args(["--candidate", "c", "--skip-preflight", "--retries", "1"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    let record = &sb.jsonl("out.jsonl")[0];
    assert_eq!(record["error"]["kind"], "transport");
    assert_eq!(record["attempts"], 2);
    assert_eq!(
        record["error"]["message"],
        "connection refused — is the server running?"
    );
}

#[test]
fn a_slow_server_times_out() {
    let server = Server::fixed(Reply::json(r#"{"score": 1}"#).after(Duration::from_secs(3)));
    let sb = Sandbox::new();
    // Had evalctl waited for the answer, the call would have succeeded.
    let out = run_http(&sb, &server.url("/"))
        .args(["--candidate", "c", "--skip-preflight", "--timeout", "0.3"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    assert_eq!(sb.jsonl("out.jsonl")[0]["error"]["kind"], "timeout");
}

#[test]
fn a_server_whose_body_stops_coming_times_out_naming_the_limit() {
    // The headers and 4 bytes of a 100-byte body, then nothing, the connection held open.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let _ = crate::common::read_message(&mut reader);
            let _ = std::io::Write::write_all(
                &mut stream,
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"sc",
            );
            held.push(stream);
        }
    });
    let sb = Sandbox::new();
    let out = run_http(&sb, &url)
        .args(["--candidate", "c", "--skip-preflight", "--timeout", "0.3"])
        .args(["--retries", "0"])
        .output()
        .unwrap();
    let error = sb.jsonl("out.jsonl")[0]["error"].clone();
    assert_eq!(
        (code(&out), error),
        (
            1,
            json!({"kind": "timeout", "message": "no whole answer within 0.3s: 4 bytes of the response had arrived"})
        )
    );
}

#[test]
fn a_body_over_8_mib_is_invalid_output() {
    let mut body = br#"{"score": 1, "pad": ""#.to_vec();
    body.extend(std::iter::repeat_n(b'a', 9 * 1024 * 1024));
    body.extend_from_slice(br#""}"#);
    let server = Server::fixed(Reply::json(body));
    let sb = Sandbox::new();
    let out = run_http(&sb, &server.url("/"))
        .args(["--candidate", "c", "--skip-preflight"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    let record = &sb.jsonl("out.jsonl")[0];
    assert_eq!(record["error"]["kind"], "invalid_output", "{record}");
    assert_eq!(record["attempts"], 1);
}

#[test]
fn score_range_matrix_for_the_http_adapter() {
    // The answer is chosen by the X-Case header the test sends.
    let server = Server::start(|request, _| {
        let case: usize = request.header("x-case").unwrap().parse().unwrap();
        Reply::json(SCORE_MATRIX[case].0)
    });
    let sb = Sandbox::new();
    let mut failures = Vec::new();
    for (index, (raw, unit, any)) in SCORE_MATRIX.iter().enumerate() {
        for (range, expected) in [("unit", *unit), ("any", *any)] {
            let out = run_http(&sb, &server.url("/"))
                .args([
                    "--candidate",
                    "c",
                    "--skip-preflight",
                    "--score-range",
                    range,
                ])
                .args(["--header", &format!("X-Case: {index}")])
                .output()
                .unwrap();
            let want_exit = if matches!(expected, Expect::Score(_)) {
                0
            } else {
                1
            };
            if code(&out) != want_exit {
                failures.push(format!(
                    "{range} {raw:?}: exit {}, expected {want_exit}",
                    code(&out)
                ));
            }
            let records = sb.jsonl("out.jsonl");
            match records.as_slice() {
                [record] => {
                    if let Err(why) = check_record(record, expected) {
                        failures.push(format!("{range} {raw:?}: {why}"));
                    }
                    if record["attempts"] != 1 {
                        failures.push(format!("{range} {raw:?}: a bad score was retried"));
                    }
                }
                other => failures.push(format!("{range} {raw:?}: {} result lines", other.len())),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn header_secrets_never_appear_in_any_output() {
    let secret = "SECRET123";
    let sb = Sandbox::new();
    let server = Server::fixed(Reply::status(500, "internal error"));
    let url = server.url("/score");
    let mut outputs = Vec::new();
    // A failing run (with and without retries, json and text), a failing preflight, a bad header.
    for extra in [
        &["--skip-preflight", "--retries", "1"][..],
        &["--skip-preflight", "--retries", "0", "--format", "text"],
        &[],
    ] {
        let out = run_http(&sb, &url)
            .args([
                "--candidate",
                "c",
                "--header",
                &format!("Authorization: Bearer {secret}"),
            ])
            .args(["--header", &format!("X-Api-Key: {secret}")])
            .args(extra)
            .output()
            .unwrap();
        assert_ne!(code(&out), 0);
        outputs.push(out);
    }
    let out = run_http(&sb, &refused_url("/"))
        .args([
            "--candidate",
            "c",
            "--header",
            &format!("Authorization: Bearer {secret}"),
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 3);
    outputs.push(out);
    let out = run_http(&sb, &url)
        .args([
            "--candidate",
            "c",
            "--header",
            &format!("Authorization=Bearer {secret}"),
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    outputs.push(out);
    let out = run_http(&sb, &url)
        .args([
            "--candidate",
            "c",
            "--header",
            &format!("Authorization: Bearer {secret}\u{1}"),
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    outputs.push(out);
    // The header did reach the server.
    assert!(server
        .requests()
        .iter()
        .any(|r| r.header("authorization") == Some("Bearer SECRET123")));
    for out in &outputs {
        assert!(
            !stdout_text(out).contains(secret),
            "stdout: {}",
            stdout_text(out)
        );
        assert!(
            !stderr_text(out).contains(secret),
            "stderr: {}",
            stderr_text(out)
        );
    }
    assert!(!sb.read("out.jsonl").contains(secret));
}

#[test]
fn url_credentials_are_not_shown() {
    let server = Server::fixed(Reply::status(500, "no"));
    let sb = Sandbox::new();
    let url = server
        .url("/")
        .replace("http://", "http://user:PASSWORD42@");
    let out = run_http(&sb, &url)
        .args(["--candidate", "c", "--retries", "0", "--skip-preflight"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    let out2 = run_http(&sb, &url)
        .args(["--candidate", "c", "--retries", "0"])
        .output()
        .unwrap();
    assert_eq!(code(&out2), 3);
    // A URL rejected at parse time or for its scheme is not echoed with its credentials either.
    let malformed = sb
        .evalctl()
        .args([
            "run",
            "--candidate",
            "c",
            "--evaluator-url",
            "http://user:PASSWORD42@[::1",
        ])
        .output()
        .unwrap();
    let bad_scheme = sb
        .evalctl()
        .args([
            "run",
            "--candidate",
            "c",
            "--evaluator-url",
            "ftp://user:PASSWORD42@host/",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&malformed), 2);
    assert_eq!(code(&bad_scheme), 2);
    assert_eq!(
        stderr_text(&malformed),
        "error: --evaluator-url: not a valid URL: invalid IPv6 address\n"
    );
    assert_eq!(
        stderr_text(&bad_scheme),
        "error: --evaluator-url: ftp://host/: the scheme must be http or https\n"
    );
    for out in [&out, &out2, &malformed, &bad_scheme] {
        assert!(
            !stdout_text(out).contains("PASSWORD42"),
            "{}",
            stdout_text(out)
        );
        assert!(
            !stderr_text(out).contains("PASSWORD42"),
            "{}",
            stderr_text(out)
        );
    }
}

#[test]
fn header_secrets_echoed_by_the_server_are_redacted() {
    let secret = "tok-ECHOED-7f3a9c";
    // The server echoes the Authorization header: in a 500 body (where the 300-character excerpt
    // would cut through it) and in the side info of a valid answer.
    let server = Server::start(|request, _| {
        let echoed = request
            .header("authorization")
            .unwrap_or_default()
            .to_string();
        if request.body_text().contains("\"candidate\":\"fail\"") {
            Reply::status(500, format!("{}{echoed} was rejected", "x".repeat(285)))
        } else {
            Reply::json(format!(
                r#"{{"score": 1, "echo": "{echoed}", "nested": [{{"k": "{echoed}"}}]}}"#
            ))
        }
    });
    let sb = Sandbox::new();
    let mut outputs = Vec::new();
    for candidate in ["fail", "ok"] {
        let out = run_http(&sb, &server.url("/score"))
            .args([
                "--candidate",
                candidate,
                "--retries",
                "0",
                "--skip-preflight",
            ])
            .args(["--header", &format!("Authorization: Bearer {secret}")])
            .output()
            .unwrap();
        outputs.push((out, sb.read("out.jsonl")));
    }
    assert_eq!(code(&outputs[0].0), 1);
    assert_eq!(code(&outputs[1].0), 0);
    let record: Value = serde_json::from_str(&outputs[1].1).unwrap();
    assert_eq!(
        record["side_info"],
        json!({"echo": "[redacted]", "nested": [{"k": "[redacted]"}]})
    );
    for (out, results) in &outputs {
        for text in [stdout_text(out), stderr_text(out), results.clone()] {
            for piece in secret.as_bytes().windows(8) {
                let piece = std::str::from_utf8(piece).unwrap();
                assert!(!text.contains(piece), "{piece:?} leaked: {text}");
            }
        }
    }
}

#[test]
fn url_query_values_are_hidden_and_redacted() {
    // The server echoes its request line's query back in an error body and in side info.
    let server = Server::start(|request, _| {
        let echoed = request.path.clone();
        if request.body_text().contains("\"candidate\":\"fail\"") {
            Reply::status(500, format!("bad request {echoed}"))
        } else {
            Reply::json(r#"{"score": 1, "note": "key=QUERYSECRET77 accepted"}"#)
        }
    });
    let sb = Sandbox::new();
    let url = format!("{}?api_key=QUERYSECRET77&v=1", server.url("/score"));
    for candidate in ["fail", "ok"] {
        let out = run_http(&sb, &url)
            .args(["--candidate", candidate, "--retries", "0"])
            .output()
            .unwrap();
        let summary = json_stdout(&out);
        assert_eq!(
            summary["evaluator"]["target"],
            format!("{}?…", server.url("/score"))
        );
        for text in [stdout_text(&out), stderr_text(&out), sb.read("out.jsonl")] {
            assert!(!text.contains("QUERYSECRET77"), "leaked: {text}");
        }
    }
    assert!(server
        .requests()
        .iter()
        .all(|r| r.path == "/score?api_key=QUERYSECRET77&v=1"));
}

#[test]
fn redirects_are_not_followed_and_encoded_secrets_are_redacted() {
    // A redirect would carry the headers elsewhere: it is an http_status error instead.
    let server = Server::start(|request, _| {
        if request.path.starts_with("/moved") {
            Reply::status(307, "").header("Location", "/elsewhere")
        } else {
            let echoed: Vec<String> = request
                .headers
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect();
            Reply::status(500, format!("{} {}", request.path, echoed.join(" ")))
        }
    });
    let sb = Sandbox::new();
    let out = run_http(&sb, &server.url("/moved"))
        .args(["--candidate", "c", "--retries", "0", "--skip-preflight"])
        .args(["--header", "X-Api-Key: REDIRSECRET1"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    assert_eq!(sb.jsonl("out.jsonl")[0]["error"]["kind"], "http_status");
    assert_eq!(server.request_count(), 1, "the redirect was followed");

    // Percent-encoded query values and URL credentials (sent as Basic auth) never show.
    let url = server
        .url("/echo?key=Q%2FSECRET12")
        .replace("http://", "http://user:PWSECRET13@");
    let out = run_http(&sb, &url)
        .args(["--candidate", "c", "--retries", "0", "--skip-preflight"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    let text = format!(
        "{}{}{}",
        stdout_text(&out),
        stderr_text(&out),
        sb.read("out.jsonl")
    );
    for secret in [
        "Q%2FSECRET12",
        "Q/SECRET12",
        "PWSECRET13",
        "dXNlcjpQV1NFQ1JFVDEz",
    ] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
}
