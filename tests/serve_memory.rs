//! `serve --max-memory`: the memory the requests in flight may hold together, estimated before
//! it is taken. A request whose parsed document or answer alone would be over it is refused
//! (413, RESOURCE_EXHAUSTED) before it is parsed or evaluated, whatever members it holds; one
//! that would take the budget past it while another request holds the rest is turned away
//! (429), and admitted once that request has stopped. A body holds memory as its bytes arrive,
//! not as its head declares; a stored result read back holds its size while it is answered.

use serde_json::json;

use crate::serve_support::grpc::{authorized, capitals, pb};
use crate::serve_support::{capitals_request, read_reply, send, Reply, Server};
use pb::evaluation_service_client::EvaluationServiceClient;

/// A server with `flags`, and the folder of its database.
fn server_with(flags: &[&str]) -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), flags, &[]);
    (server, dir)
}

/// A valid, empty request with a member no schema lists: `values` zeros.
fn junk_request(values: usize) -> Vec<u8> {
    let zeros = vec!["0"; values].join(",");
    format!(r#"{{"test_cases":[],"outputs":[],"checks":[],"junk":[{zeros}]}}"#).into_bytes()
}

/// Assert that `reply` is a 413 saying `message`.
fn assert_too_large(reply: &Reply, message: &str) {
    assert_eq!(
        reply.status,
        413,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.json()["message"], message);
}

#[test]
fn a_request_whose_parsed_document_would_be_over_max_memory_is_a_413() {
    let (server, _dir) = server_with(&["--max-body", "100000", "--max-memory", "1000000"]);
    // 60 KB of zeros: within --max-body, but about 4 MB once parsed.
    let junk = junk_request(30_000);
    for path in ["/evaluate", "/evaluate?stream=true"] {
        let reply = server.request("POST", path, &[], &junk);
        assert_eq!(reply.status, 413, "{path}");
        assert_eq!(
            reply.json(),
            json!({
                "error": "payload_too_large",
                "message": "the request would take about 4.0 MB of memory (the document parsed \
                            from its body); this server gives requests 1,000,000 bytes in all \
                            (--max-memory)",
            }),
            "{path}"
        );
    }
    // The budget is whole again: a request within it is evaluated.
    let small = server.request("POST", "/evaluate", &[], &junk_request(1_000));
    assert_eq!(
        small.status,
        200,
        "{}",
        String::from_utf8_lossy(&small.body)
    );
    assert_eq!(small.json()["status"], "completed");
}

#[tokio::test]
async fn a_grpc_message_whose_document_would_be_over_max_memory_is_resource_exhausted() {
    let (server, _dir) = server_with(&["--max-body", "1000000", "--max-memory", "1000000"]);
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    let refused = client
        .run_evaluation(authorized(capitals(5_000, true)))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
    // Refused before it is decoded: what its decoded message holds is over the budget.
    assert_eq!(
        refused.message(),
        "the request would take about 2.8 MB of memory (its message decoded); this server \
         gives requests 1,000,000 bytes in all (--max-memory)"
    );
    // With room for that, the JSON document made of the message is over it.
    let (roomier, _roomier_dir) =
        server_with(&["--max-body", "1000000", "--max-memory", "6000000"]);
    let mut roomier_client = EvaluationServiceClient::connect(format!("http://{}", roomier.grpc))
        .await
        .unwrap();
    let refused = roomier_client
        .run_evaluation(authorized(capitals(5_000, true)))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
    assert_eq!(
        refused.message(),
        "the request would take about 11.4 MB of memory (the JSON document of its message); \
         this server gives requests 6,000,000 bytes in all (--max-memory)"
    );
    let streamed = client
        .stream_evaluation(authorized(capitals(5_000, true)))
        .await
        .unwrap_err();
    assert_eq!(streamed.code(), tonic::Code::ResourceExhausted);
    // A message within the budget is evaluated.
    let run = client
        .run_evaluation(authorized(capitals(10, true)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(run.results.len(), 10);
}

#[test]
fn past_max_memory_a_request_gets_429_until_the_requests_in_flight_stop() {
    let (server, _dir) = server_with(&["--max-body", "3000000", "--max-memory", "100000000"]);
    // A streamed evaluation of 30,000 test cases whose results this client does not read: it
    // holds about 73 MB of the 100 MB for as long as the test needs.
    let large = capitals_request(30_000);
    let (first, _) = server.stream_left_unread(&large);

    let busy = server.request("POST", "/evaluate", &[], &large);
    assert_eq!(busy.status, 429, "{}", String::from_utf8_lossy(&busy.body));
    assert_eq!(
        busy.json(),
        json!({
            "error": "too_many_requests",
            "message": "the request would take about 51.7 MB of memory (the document parsed \
                        from its body), and the requests in flight hold too much of the \
                        100,000,000 bytes this server gives them (--max-memory); try again shortly",
        })
    );
    assert_eq!(busy.header("retry-after"), Some("1"));
    // A small request still fits beside the first.
    let small = server.request("POST", "/evaluate", &[], &capitals_request(1));
    assert_eq!(
        small.status,
        200,
        "{}",
        String::from_utf8_lossy(&small.body)
    );

    // The first client goes away: its evaluation stops and its memory is free again.
    drop(first);
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        // Not checked against the document's schemas: 30,000 results take a minute.
        let reply = read_reply(send(&server.rest, "POST", "/evaluate", &[], &large));
        if reply.status == 200 {
            assert_eq!(reply.json()["summary"]["total_test_cases"], 30_000);
            break;
        }
        assert_eq!(
            reply.status,
            429,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        assert!(
            std::time::Instant::now() < give_up,
            "the memory was never freed"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_body_holds_memory_as_it_arrives_not_as_its_head_declares() {
    let (server, _dir) = server_with(&["--max-body", "1000000", "--max-memory", "1000000"]);
    // Two clients declare bodies as large as the whole budget, send a byte, and wait.
    let held: Vec<std::net::TcpStream> = [
        "Content-Length: 1000000\r\n",
        "Transfer-Encoding: chunked\r\n\r\n1\r\n",
    ]
    .iter()
    .map(|framing| {
        let mut stream = std::net::TcpStream::connect(&server.rest).unwrap();
        let head = format!("POST /evaluate HTTP/1.1\r\nHost: localhost\r\n{framing}\r\n{{");
        std::io::Write::write_all(&mut stream, head.as_bytes()).unwrap();
        stream
    })
    .collect();
    // Others are served meanwhile.
    let small = server.request("POST", "/evaluate", &[], &capitals_request(1));
    assert_eq!(
        small.status,
        200,
        "{}",
        String::from_utf8_lossy(&small.body)
    );
    drop(held);
}

#[test]
fn a_request_whose_answer_would_repeat_its_values_past_max_memory_is_a_413() {
    let (server, _dir) = server_with(&["--max-body", "1000000", "--max-memory", "5000000"]);
    // A 200 KB request whose 100 checks each repeat its 100 KB values in their results.
    let long = "x".repeat(100_000);
    let check = json!({"type": "exact_match",
        "arguments": {"actual": "$.output.value", "expected": "$.test_case.expected"}});
    let request = json!({
        "test_cases": [{"id": "t", "input": "q", "expected": long}],
        "outputs": [{"value": long}],
        "checks": vec![check; 100],
    });
    let reply = server.request("POST", "/evaluate", &[], request.to_string().as_bytes());
    assert_too_large(
        &reply,
        "the request would take about 60.8 MB of memory (the answer of its 100 check results); \
         this server gives requests 5,000,000 bytes in all (--max-memory)",
    );
}

#[test]
fn a_request_whose_results_would_repeat_its_check_past_max_memory_is_a_413() {
    let (server, _dir) = server_with(&["--max-body", "1000000", "--max-memory", "5000000"]);
    // A 60 KB request: one shared check with a 20 KB literal and 2,000 arguments exact_match
    // ignores, which each of its 200 results repeats (`resolved_arguments`,
    // `metadata.ignored`).
    let request = |test_cases: usize| {
        let mut arguments = serde_json::Map::new();
        for index in 0..2000 {
            arguments.insert(format!("k{index}"), json!(1));
        }
        arguments.insert("actual".into(), json!("$.output.value"));
        arguments.insert("expected".into(), json!("x".repeat(20_000)));
        json!({
            "test_cases": (0..test_cases).map(|i| json!({"id": format!("t{i}"), "input": "q"})).collect::<Vec<_>>(),
            "outputs": vec![json!({"value": "x"}); test_cases],
            "checks": [{"type": "exact_match", "arguments": arguments}],
        })
        .to_string()
    };
    let reply = server.request("POST", "/evaluate", &[], request(200).as_bytes());
    assert_too_large(
        &reply,
        "the request would take about 33.7 MB of memory (the answer of its 200 check results); \
         this server gives requests 5,000,000 bytes in all (--max-memory)",
    );
    // Its results do repeat them: 20 test cases fit, and each result names the 2,000.
    let reply = server.request("POST", "/evaluate", &[], request(20).as_bytes());
    assert_eq!(reply.status, 200);
    let results = &reply.json()["results"];
    assert_eq!(results.as_array().unwrap().len(), 20);
    for result in results.as_array().unwrap() {
        let check = &result["check_results"][0];
        assert_eq!(check["metadata"]["ignored"].as_array().unwrap().len(), 2000);
        assert_eq!(
            check["resolved_arguments"]["expected"]["value"]
                .as_str()
                .unwrap()
                .len(),
            20_000
        );
    }
}

#[test]
fn a_string_of_control_characters_counts_as_written_escaped() {
    let (server, _dir) = server_with(&["--max-body", "1000000", "--max-memory", "10000000"]);
    // 100,000 U+0001 are 600 kB written (`\u0001` each), 100 kB decoded.
    let request = |text: String| {
        let check = json!({"type": "exact_match",
            "arguments": {"actual": "$.output.value", "expected": "x"}});
        json!({
            "test_cases": [{"id": "t", "input": "q"}],
            "outputs": [{"value": text}],
            "checks": vec![check; 10],
        })
        .to_string()
    };
    let escaped = server.request(
        "POST",
        "/evaluate",
        &[],
        request("\u{1}".repeat(100_000)).as_bytes(),
    );
    assert_too_large(
        &escaped,
        "the request would take about 19.8 MB of memory (the answer of its 10 check results); \
         this server gives requests 10,000,000 bytes in all (--max-memory)",
    );
    // The same length of plain text fits.
    let plain = server.request(
        "POST",
        "/evaluate",
        &[],
        request("x".repeat(100_000)).as_bytes(),
    );
    assert_eq!(
        plain.status,
        200,
        "{}",
        String::from_utf8_lossy(&plain.body)
    );
}

#[tokio::test]
async fn a_stored_result_read_back_holds_its_size_while_it_is_answered() {
    let (server, _dir) = server_with(&["--max-body", "1000000", "--max-memory", "3000000"]);
    let answered = server.request("POST", "/evaluate", &[], &capitals_request(1000));
    assert_eq!(
        answered.status,
        200,
        "{}",
        String::from_utf8_lossy(&answered.body)
    );
    let id = answered.json()["evaluation_id"]
        .as_str()
        .unwrap()
        .to_string();
    // Over REST the document is answered as it is stored.
    let read = server.request("GET", &format!("/evaluations/{id}"), &[], b"");
    assert_eq!(read.status, 200);
    assert_eq!(read.body, answered.body);
    // gRPC makes a message of it and encodes that: more than the budget.
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    let refused = client
        .get_evaluation(pb::GetEvaluationRequest { evaluation_id: id })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
    assert_eq!(
        refused.message(),
        "the request would take about 4.7 MB of memory (the stored result); this server gives \
         requests 3,000,000 bytes in all (--max-memory)"
    );
}

/// A request of `n` `regex` checks, each a distinct pattern that compiles to nearly the limit
/// for one pattern (19 Unicode word characters).
fn heavy_patterns_request(n: usize) -> Vec<u8> {
    let checks: Vec<_> = (0..n)
        .map(|i| {
            json!({"type": "regex", "arguments": {"text": "$.output.value", "pattern": format!("\\w{{19}}q{i}")}})
        })
        .collect();
    serde_json::to_vec(&json!({
        "test_cases": [{"id": "a", "input": "x"}],
        "outputs": [{"value": "hello"}],
        "checks": checks,
    }))
    .unwrap()
}

#[test]
fn a_request_whose_regular_expressions_would_be_over_max_memory_is_a_413() {
    // A few KB of patterns compile to megabytes: each holds the most one pattern may take
    // before it is compiled (the fourth does not fit), then what it takes: its compiled program
    // and the room its searches grow into.
    let (server, _dir) = server_with(&["--max-body", "100000", "--max-memory", "8000000"]);
    let reply = server.request("POST", "/evaluate", &[], &heavy_patterns_request(10));
    assert_too_large(
        &reply,
        "the request would take about 8.5 MB of memory (the regular expressions of its \
         checks); this server gives requests 8,000,000 bytes in all (--max-memory)",
    );
    // Patterns of every size are held to the byte: none leaves the share's count behind its
    // units (which made ordinary patterns a 500).
    for pattern in ["abc", "hello", "h.llo", "x{1,3}", "q13", "^a", "\\d+"] {
        let request = json!({
            "test_cases": [{"id": "a", "input": "x"}],
            "outputs": [{"value": "hello"}],
            "checks": [{"type": "regex", "arguments": {"text": "$.output.value", "pattern": pattern}}],
        });
        let reply = server.request(
            "POST",
            "/evaluate",
            &[],
            &serde_json::to_vec(&request).unwrap(),
        );
        assert_eq!(
            reply.status,
            200,
            "{pattern}: {}",
            String::from_utf8_lossy(&reply.body)
        );
    }
    let within = server.request("POST", "/evaluate", &[], &heavy_patterns_request(2));
    assert_eq!(
        (within.status, &within.json()["summary"]["completed_checks"]),
        (200, &json!(2)),
        "{}",
        String::from_utf8_lossy(&within.body)
    );
}
