//! `evalctl serve` over HTTP: the real server on an ephemeral loopback port, driven with the FEP
//! spec's example, invalid requests, auth, limits (413, 400 for too many test cases or check
//! results, 429), persistence across a restart,
//! streaming order and a graceful shutdown with a request in flight.

use crate::serve_support;

use crate::serve_support::document::schema_violations;
use crate::serve_support::{
    capitals_request, read_reply, read_reply_telling_when_the_body_starts, send, Server,
};
use serde_json::{json, Value};

const AUTH: &str = "Authorization: Bearer s3cret-token";

fn evaluate(server: &Server, body: &[u8]) -> serve_support::Reply {
    server.request("POST", "/evaluate", &[], body)
}

/// One request with exactly these header lines (the Host among them, or none), read whole.
fn raw_request(server: &Server, head: &str, body: &[u8]) -> serve_support::Reply {
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(&server.rest).expect("connects");
    let head = format!(
        "{head}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    read_reply(stream)
}

#[test]
fn what_a_web_page_of_another_site_sends_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    let address = server.rest.clone();
    // A page posting its "simple" request (text/plain, no preflight) to the loopback server.
    let posted = raw_request(
        &server,
        &format!(
            "POST /evaluate HTTP/1.1\r\nHost: {address}\r\nOrigin: https://evil.example\r\n\
             Content-Type: text/plain"
        ),
        &capitals_request(1),
    );
    assert_eq!(posted.status, 403);
    assert_eq!(
        posted.json(),
        json!({"error": "forbidden", "message": "a request a web page sent (Origin: \
            https://evil.example) is refused: evalctl serve answers programs, not pages of other \
            sites"})
    );
    // A page whose name was made to resolve to 127.0.0.1 (DNS rebinding) is of the server's
    // origin: its Host is not a loopback name.
    let rebound = raw_request(
        &server,
        "GET /evaluations/some-id HTTP/1.1\r\nHost: evil.example:8080",
        b"",
    );
    assert_eq!(rebound.status, 403);
    assert_eq!(
        rebound.json()["message"],
        "Host evil.example:8080 is not a loopback name (localhost, 127.0.0.1, [::1]): without \
         --token-env this server answers requests to its loopback address only (a name made to \
         resolve to it could be a web page's)"
    );
    // A head that names two hosts, or two origins, is not taken at its first: the host of an
    // absolute-form target is the request's, two Host headers or none in HTTP/1.1 are a 400.
    // Programs are answered: its own origin, loopback names, no Host at all (HTTP/1.0).
    let port = address.rsplit_once(':').unwrap().1;
    for (head, status) in [
        (
            format!("POST http://evil.example/evaluate HTTP/1.1\r\nHost: {address}"),
            403,
        ),
        (
            format!("POST /evaluate HTTP/1.1\r\nHost: {address}\r\nHost: evil.example"),
            400,
        ),
        ("POST /evaluate HTTP/1.1".to_string(), 400),
        (
            format!("POST /evaluate HTTP/1.1\r\nHost: {address}, evil.example"),
            400,
        ),
        (
            format!("POST /evaluate HTTP/1.1\r\nHost: localhost:{port},evil.example"),
            400,
        ),
        (
            format!(
                "POST /evaluate HTTP/1.1\r\nHost: {address}\r\nOrigin: http://{address}\r\n\
                 Origin: https://evil.example"
            ),
            403,
        ),
        (
            format!("POST /evaluate HTTP/1.1\r\nHost: {address}\r\nOrigin: http://{address}"),
            200,
        ),
        (
            format!("POST /evaluate HTTP/1.1\r\nHost: localhost:{port}"),
            200,
        ),
        (
            format!("POST /evaluate HTTP/1.1\r\nHost: [::1]:{port}"),
            200,
        ),
        ("POST /evaluate HTTP/1.0".to_string(), 200),
    ] {
        let reply = raw_request(
            &server,
            &format!("{head}\r\nContent-Type: application/json"),
            &capitals_request(1),
        );
        assert_eq!(
            reply.status,
            status,
            "{head}: {}",
            String::from_utf8_lossy(&reply.body)
        );
        // The open paths (no token needed) are no exception: a page learns nothing from them.
        for open in ["/health", "/openapi.yaml"] {
            let head = head
                .replacen("POST", "GET", 1)
                .replacen("/evaluate", open, 1);
            let reply = raw_request(&server, &head, b"");
            assert_eq!(reply.status, status, "{head}");
        }
    }
}

#[test]
fn every_error_the_server_sends_is_declared_in_the_openapi_document_it_serves() {
    let document: Value =
        serde_norway::from_str(include_str!("../docs/openapi.yaml")).expect("the document");
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    let address = server.rest.clone();
    let cases = [
        // A Host that names no one host, a page of another site, methods a path does not take.
        (
            "/health",
            "GET /health HTTP/1.1\r\nHost: a b".to_string(),
            400,
        ),
        (
            "/openapi.yaml",
            format!(
                "GET /openapi.yaml HTTP/1.1\r\nHost: {address}\r\nOrigin: https://evil.example"
            ),
            403,
        ),
        (
            "/evaluate",
            format!("DELETE /evaluate HTTP/1.1\r\nHost: {address}"),
            405,
        ),
        (
            "/health",
            format!("PUT /health HTTP/1.1\r\nHost: {address}"),
            405,
        ),
    ];
    let errors = document["components"]["schemas"]["ErrorResponse"]["properties"]["error"]
        ["description"]
        .as_str()
        .unwrap()
        .to_string();
    for (path, head, status) in cases {
        let reply = raw_request(&server, &head, b"");
        let error = reply.json()["error"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let declared = (document["paths"][path].as_object().unwrap().values())
            .any(|operation| !operation["responses"][status.to_string()].is_null());
        assert_eq!(
            (reply.status, declared, errors.contains(&error)),
            (status, true, true),
            "{head}: {error}"
        );
    }
}

#[test]
fn the_spec_example_is_evaluated_stored_and_found_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("serve.db");
    let server = Server::start(&db, &[], &[]);
    let health = server.request("GET", "/health", &[], b"");
    assert_eq!(health.status, 200);
    assert_eq!(health.json()["status"], "healthy");
    let reply = evaluate(&server, &capitals_request(2));
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let run = reply.json();
    assert_eq!(run["status"], "completed");
    assert_eq!(run["summary"]["total_test_cases"], 2);
    assert_eq!(
        run["results"][0]["check_results"][0]["results"],
        json!({"passed": true})
    );
    assert_eq!(
        run["results"][1]["check_results"][0]["results"],
        json!({"passed": false})
    );
    let id = run["evaluation_id"].as_str().unwrap().to_string();
    let found = server.request("GET", &format!("/evaluations/{id}"), &[], b"");
    assert_eq!(found.json(), run);
    let (status, _) = server.terminate();
    assert!(status.success());

    let restarted = Server::start(&db, &[], &[]);
    let found = restarted.request("GET", &format!("/evaluations/{id}"), &[], b"");
    assert_eq!(found.status, 200);
    assert_eq!(found.json(), run);
    let missing = restarted.request("GET", "/evaluations/nope", &[], b"");
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["error"], "not_found");
}

#[test]
fn every_answered_evaluation_is_stored_by_the_time_sigterm_has_stopped_the_server() {
    // Results are committed behind the answers; a stop right after the last answer must not
    // lose any of them.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("serve.db");
    let server = Server::start(&db, &[], &[]);
    let runs: Vec<Value> = (1..=40)
        .map(|n| {
            let reply = evaluate(&server, &capitals_request(n));
            assert_eq!(reply.status, 200);
            reply.json()
        })
        .collect();
    let (status, _) = server.terminate();
    assert!(status.success());
    let restarted = Server::start(&db, &[], &[]);
    for run in &runs {
        let id = run["evaluation_id"].as_str().unwrap();
        let found = restarted.request("GET", &format!("/evaluations/{id}"), &[], b"");
        assert_eq!(found.status, 200, "{id}");
        assert_eq!(&found.json(), run);
    }
}

#[test]
fn an_invalid_request_lists_every_problem_in_the_words_of_fep_evaluate() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    let reply = evaluate(
        &server,
        br#"{"test_cases": [{"id": "a", "input": "q"}, {"input": 3}], "outputs": [{"value": "x"}],
             "checks": [{"type": "fuzzy", "arguments": {}}], "experiment": {}}"#,
    );
    assert_eq!(reply.status, 400);
    let error = reply.json();
    assert_eq!(error["error"], "validation_error");
    assert_eq!(
        error["details"]["problems"],
        json!([
            "outputs: 1 outputs for 2 test cases (outputs[i] belongs to test_cases[i])",
            "test_cases[1]: missing required key `id`",
            "test_cases[1].input: expected a string or an object, found number",
            "checks[0].type: unknown check type `fuzzy` (did you mean `spec.fuzzy_match`? known: exact_match, contains, regex, threshold, semantic_similarity, llm_judge; spec.TYPE runs an evaluation-spec validator; a custom type is one this server declares with --custom-check)",
        ])
    );
    assert!(error["message"]
        .as_str()
        .unwrap()
        .starts_with("invalid EvaluationRequest (4 problems): outputs: 1 outputs"));
    let not_json = evaluate(&server, b"{\"test_cases\": [");
    assert_eq!(not_json.status, 400);
    assert!(not_json.json()["details"]["problems"][0]
        .as_str()
        .unwrap()
        .starts_with("invalid JSON: EOF while parsing"));
    // A request that says two things: which value counts is the reader's choice.
    let twice = evaluate(
        &server,
        br#"{"test_cases": [{"id": "a", "input": "q", "id": "b"}], "outputs": [{"value": "x"}],
             "checks": [{"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "x"}}]}"#,
    );
    assert_eq!(twice.status, 400);
    assert_eq!(
        twice.json()["details"]["problems"],
        json!([
            "the key `id` is given twice in one object (the second at line 1, column 46): keep one"
        ])
    );
    // A check that cannot run is that check's error, never the request's.
    let bad_path = evaluate(
        &server,
        br#"{"test_cases": [{"id": "a", "input": "q"}], "outputs": [{"value": "x"}],
             "checks": [{"type": "exact_match", "arguments": {"actual": "$.output.nope", "expected": "x"}},
                        {"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "x"}}]}"#,
    );
    assert_eq!(bad_path.status, 200);
    let run = bad_path.json();
    assert_eq!(run["status"], "error");
    assert_eq!(
        run["results"][0]["check_results"][0]["error"]["type"],
        "jsonpath_error"
    );
    assert_eq!(run["results"][0]["check_results"][1]["status"], "completed");
    let wrong_method = server.request("DELETE", "/evaluate", &[], b"");
    assert_eq!(wrong_method.status, 405);
    assert_eq!(wrong_method.json()["error"], "method_not_allowed");
}

#[test]
fn the_token_is_required_except_for_health_and_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("s.db"),
        &["--token-env", "SERVE_TEST_TOKEN"],
        &[("SERVE_TEST_TOKEN", "s3cret-token")],
    );
    let without = evaluate(&server, &capitals_request(1));
    assert_eq!(without.status, 401);
    assert_eq!(without.json()["error"], "unauthenticated");
    assert_eq!(without.header("www-authenticate"), Some("Bearer"));
    let wrong = server.request(
        "POST",
        "/evaluate",
        &["Authorization: Bearer s3cret-tokeN"],
        &capitals_request(1),
    );
    assert_eq!(wrong.status, 401);
    let with = server.request("POST", "/evaluate", &[AUTH], &capitals_request(1));
    assert_eq!(with.status, 200);
    let id = with.json()["evaluation_id"].as_str().unwrap().to_string();
    assert_eq!(
        server
            .request("GET", &format!("/evaluations/{id}"), &[], b"")
            .status,
        401
    );
    let api_key = server.request(
        "GET",
        &format!("/evaluations/{id}"),
        &["X-API-Key: s3cret-token"],
        b"",
    );
    assert_eq!(api_key.status, 200);
    assert_eq!(server.request("GET", "/health", &[], b"").status, 200);
    let startup = server.startup.clone();
    let (status, rest) = server.terminate();
    assert!(status.success());
    assert!(
        !format!("{startup}{rest}").contains("s3cret"),
        "{startup}{rest}"
    );
}

#[test]
fn a_token_short_enough_to_guess_is_warned_about_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let startup_of = |token: &str| {
        let server = Server::start(
            &db,
            &["--token-env", "SERVE_TEST_TOKEN"],
            &[("SERVE_TEST_TOKEN", token)],
        );
        let lines: Vec<String> = (server.startup.lines())
            .map(|line| match line.split_once(" listening on ") {
                Some((api, _)) => format!("{api} listening on ADDRESS"),
                None => line.to_string(),
            })
            .collect();
        // Stopped as soon as it says it listens, it stops gracefully: its signals are caught
        // before it says so.
        let (status, _) = server.terminate();
        assert!(status.success());
        lines
    };
    let listening = [
        format!("database {}", db.display()),
        "REST listening on ADDRESS".to_string(),
        "gRPC listening on ADDRESS".to_string(),
    ];
    let mut warned = vec![
        "warning: the token in SERVE_TEST_TOKEN is 15 bytes long: a token shorter than 16 bytes \
         can be guessed; use a long random one (such as `openssl rand -hex 32`)"
            .to_string(),
    ];
    warned.extend(listening.iter().cloned());
    assert_eq!(startup_of("fifteen-byte-tk"), warned);
    assert_eq!(startup_of("sixteen-bytes-tk"), listening);
}

#[test]
fn requests_over_a_limit_get_an_error_response() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("s.db"),
        &["--max-body", "2000", "--max-test-cases", "3"],
        &[],
    );
    let large = evaluate(&server, &vec![b' '; 5000]);
    assert_eq!(large.status, 413);
    assert_eq!(large.json()["error"], "payload_too_large");
    // A head that declares a body over the limit is answered at once, its body not awaited.
    let mut declared = std::net::TcpStream::connect(&server.rest).unwrap();
    declared
        .set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    std::io::Write::write_all(
        &mut declared,
        b"POST /evaluate HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: 999999999\r\n\r\n",
    )
    .unwrap();
    let declared = read_reply(declared);
    assert_eq!(declared.status, 413);
    assert_eq!(
        declared.json()["message"],
        "the request body is over 2000 bytes (--max-body)"
    );
    let many = evaluate(&server, &capitals_request(4));
    assert_eq!(many.status, 400);
    assert_eq!(many.json()["error"], "too_many_test_cases");
    assert_eq!(evaluate(&server, &capitals_request(3)).status, 200);
    // The server is still up after the errors.
    assert_eq!(server.request("GET", "/health", &[], b"").status, 200);
}

/// A request of `n` test cases (the first with `own` checks of its own) and `shared` checks.
fn checked_request(n: usize, shared: usize, own: usize) -> Vec<u8> {
    let check = json!({"type": "exact_match",
        "arguments": {"actual": "$.output.value", "expected": "$.test_case.expected"}});
    let test_cases: Vec<Value> = (0..n)
        .map(|i| {
            let mut case = json!({"id": format!("t{i}"), "input": "q", "expected": "Paris"});
            if i == 0 && own > 0 {
                case["checks"] = json!(vec![check.clone(); own]);
            }
            case
        })
        .collect();
    serde_json::to_vec(&json!({
        "test_cases": test_cases,
        "outputs": vec![json!({"value": "Paris"}); n],
        "checks": vec![check; shared],
    }))
    .unwrap()
}

#[test]
fn a_request_over_the_check_result_limit_is_refused_before_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &["--max-check-results", "6"], &[]);
    let refused = |count: usize| {
        json!({
            "error": "too_many_check_results",
            "message": format!(
                "{count} check results in one request (test cases times the checks that apply \
                 to each); this server takes at most 6 (--max-check-results)"
            ),
        })
    };
    // 7 test cases × 1 shared check; 2 × 2 shared plus 3 of the first test case's own.
    for (body, count) in [(checked_request(7, 1, 0), 7), (checked_request(2, 2, 3), 7)] {
        for path in ["/evaluate", "/evaluate?stream=true"] {
            let reply = server.request("POST", path, &[], &body);
            assert_eq!(reply.status, 400, "{path}");
            assert_eq!(reply.header("content-type"), Some("application/json"));
            assert_eq!(reply.json(), refused(count), "{path}");
        }
    }
    // At the limit: 3 × 2 shared; 2 × 2 shared plus 2 of its own.
    for (body, test_cases) in [(checked_request(3, 2, 0), 3), (checked_request(2, 2, 2), 2)] {
        let reply = server.request("POST", "/evaluate", &[], &body);
        assert_eq!(
            reply.status,
            200,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        let run = reply.json();
        assert_eq!(run["summary"]["total_test_cases"], test_cases);
        let results = run["results"].as_array().unwrap();
        let check_results: usize = results
            .iter()
            .map(|result| result["check_results"].as_array().unwrap().len())
            .sum();
        assert_eq!(check_results, 6);
    }
}

#[test]
fn the_default_check_result_limit_refuses_ten_thousand_cases_times_a_thousand_checks() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    let body = checked_request(10_000, 1_000, 0);
    assert!(body.len() < 2 << 20, "{}", body.len());
    let reply = server.request("POST", "/evaluate", &[], &body);
    assert_eq!(reply.status, 400);
    assert_eq!(
        reply.json(),
        json!({
            "error": "too_many_check_results",
            "message": "10000000 check results in one request (test cases times the checks \
                        that apply to each); this server takes at most 1000000 \
                        (--max-check-results)",
        })
    );
}

/// The JSON values of a streamed (NDJSON) answer's lines.
fn ndjson(body: &[u8]) -> Vec<Value> {
    body.split(|&byte| byte == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).unwrap())
        .collect()
}

#[test]
fn streaming_sends_each_result_in_order_then_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    let reply = server.request("POST", "/evaluate?stream=true", &[], &capitals_request(5));
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/x-ndjson"));
    let lines = ndjson(&reply.body);
    assert_eq!(lines.len(), 6);
    for (index, line) in lines[..5].iter().enumerate() {
        assert_eq!(
            line["execution_context"]["test_case"]["id"],
            format!("t{index}")
        );
        // Each line is a TestCaseResult as the FEP document's OpenAPI document defines it.
        assert_eq!(
            schema_violations("TestCaseResult", line),
            Vec::<String>::new()
        );
    }
    let summary = &lines[5];
    assert_eq!(summary["summary"]["total_test_cases"], 5);
    let id = summary["evaluation_id"].as_str().unwrap();
    assert_eq!(reply.header("x-evaluation-id"), Some(id));
    // The streamed run is stored as one document with the same results.
    let stored = server
        .request("GET", &format!("/evaluations/{id}"), &[], b"")
        .json();
    assert_eq!(stored["results"].as_array().unwrap(), &lines[..5].to_vec());
    assert_eq!(stored["summary"], summary["summary"]);
    // The query is read as a form is: percent-encoded, and each parameter once.
    for (query, status, message) in [
        (
            "stream=yes",
            400,
            Some("query parameter stream: expected true or false, found `yes`"),
        ),
        ("stream=%74rue", 200, None),
        (
            "stream=true&stream=false",
            400,
            Some("query parameter stream is given twice: keep one"),
        ),
        ("other=1&stream=false", 200, None),
    ] {
        let reply = server.request(
            "POST",
            &format!("/evaluate?{query}"),
            &[],
            &capitals_request(1),
        );
        assert_eq!(reply.status, status, "{query}");
        if let Some(message) = message {
            assert_eq!(
                reply.json(),
                json!({"error": "validation_error", "message": message}),
                "{query}"
            );
        } else {
            let streamed = query.contains("%74rue");
            assert_eq!(
                reply.header("content-type"),
                Some(if streamed {
                    "application/x-ndjson"
                } else {
                    "application/json"
                }),
                "{query}"
            );
        }
    }
}

#[test]
fn sigterm_finishes_the_request_in_flight_then_exits() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    let body = capitals_request(20_000);
    let in_flight = send(&server.rest, "POST", "/evaluate?stream=true", &[], &body);
    // The answer is read while the server shuts down (it is larger than the socket buffers);
    // SIGTERM is sent once its first results have arrived.
    let (started, body_started) = std::sync::mpsc::channel();
    let reading = std::thread::spawn(move || {
        read_reply_telling_when_the_body_starts(in_flight, move || {
            let _ = started.send(());
        })
    });
    body_started
        .recv()
        .expect("the evaluation starts answering");
    let address = server.rest.clone();
    let (status, rest) = server.terminate();
    let reply = reading.join().unwrap();
    assert_eq!(reply.status, 200);
    let lines = ndjson(&reply.body);
    assert_eq!(lines.len(), 20_001);
    assert_eq!(lines[20_000]["summary"]["total_test_cases"], 20_000);
    assert!(status.success(), "{rest}");
    assert!(
        rest.contains("SIGTERM: stopped after the requests in flight"),
        "{rest}"
    );
    assert!(std::net::TcpStream::connect(&address).is_err());
}

#[test]
fn an_evaluation_past_max_concurrent_gets_429_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &["--max-concurrent", "1"], &[]);
    // A streamed evaluation whose results this client does not read holds the one place.
    let (first, _) = server.stream_left_unread(&capitals_request(30_000));

    let busy = evaluate(&server, &capitals_request(1));
    assert_eq!(busy.status, 429, "{}", String::from_utf8_lossy(&busy.body));
    let error = busy.json();
    assert_eq!(error["error"], "too_many_requests");
    assert_eq!(
        error["message"],
        "all 1 places for evaluations are taken (--max-concurrent: requests being received or \
         evaluated); try again shortly"
    );
    assert_eq!(busy.header("retry-after"), Some("1"));

    // The client goes away: its evaluation stops, and the place is free again.
    drop(first);
    server.until_a_place_is_free("the place was never freed");
    assert_eq!(server.request("GET", "/health", &[], b"").status, 200);
}

#[test]
fn a_request_of_many_bad_checks_is_answered_with_the_first_problems_and_their_count() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("serve.db"), &[], &[]);
    let checks: Vec<Value> = (0..150)
        .map(|_| json!({"type": "zzz", "arguments": {}}))
        .collect();
    let request = json!({"test_cases": [{"id": "a", "input": "q"}], "outputs": [{"value": "x"}],
                         "checks": checks});
    let reply = evaluate(&server, request.to_string().as_bytes());
    assert_eq!(reply.status, 400);
    let error = reply.json();
    let problem = |index: usize| {
        format!(
            "checks[{index}].type: unknown check type `zzz` (known: exact_match, contains, regex, \
             threshold, semantic_similarity, llm_judge; spec.TYPE runs an evaluation-spec \
             validator; a custom type is one this server declares with --custom-check)"
        )
    };
    assert_eq!(
        error["details"]["problems"],
        json!((0..100).map(problem).collect::<Vec<_>>())
    );
    let first: Vec<String> = (0..10).map(problem).collect();
    assert_eq!(
        error["message"],
        format!(
            "invalid EvaluationRequest (150 problems): {}; … and 140 more (details.problems \
             lists the first 100)",
            first.join("; ")
        )
    );
}
