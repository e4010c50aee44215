//! `serve --max-memory`: the memory the requests in flight may hold together, estimated before
//! it is taken. A request whose parsed document alone would be over it is refused (413,
//! RESOURCE_EXHAUSTED) before it is parsed, whatever members it holds; one that would take the
//! budget past it while another request holds the rest is turned away (429), and admitted once
//! that request has stopped.

use std::io::{BufRead, BufReader};

use serde_json::json;

use crate::serve_support::grpc::{authorized, capitals, pb};
use crate::serve_support::{capitals_request, read_reply, send, Server};
use pb::evaluation_service_client::EvaluationServiceClient;

/// A valid, empty request with a member no schema lists: `values` zeros.
fn junk_request(values: usize) -> Vec<u8> {
    let zeros = vec!["0"; values].join(",");
    format!(r#"{{"test_cases":[],"outputs":[],"checks":[],"junk":[{zeros}]}}"#).into_bytes()
}

#[test]
fn a_request_whose_parsed_document_would_be_over_max_memory_is_a_413() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("s.db"),
        &["--max-body", "100000", "--max-memory", "1000000"],
        &[],
    );
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
                            from its body); this server gives requests 1.0 MB in all \
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
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("s.db"),
        &["--max-body", "1000000", "--max-memory", "1000000"],
        &[],
    );
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    let refused = client
        .run_evaluation(authorized(capitals(5_000, true)))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
    assert_eq!(
        refused.message(),
        "the request would take about 4.7 MB of memory (the JSON document of its message); \
         this server gives requests 1.0 MB in all (--max-memory)"
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
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("s.db"),
        &["--max-body", "3000000", "--max-memory", "60000000"],
        &[],
    );
    // A streamed evaluation of 30,000 test cases whose results this client does not read: it
    // holds about 44 MB of the 60 MB for as long as the test needs.
    let large = capitals_request(30_000);
    let first = send(&server.rest, "POST", "/evaluate?stream=true", &[], &large);
    let mut first = BufReader::new(first);
    let mut line = String::new();
    while line != "\r\n" {
        line.clear();
        first
            .read_line(&mut line)
            .expect("the first response's head");
    }
    first
        .read_line(&mut line)
        .expect("a first result: the evaluation runs");

    let busy = server.request("POST", "/evaluate", &[], &large);
    assert_eq!(busy.status, 429, "{}", String::from_utf8_lossy(&busy.body));
    assert_eq!(
        busy.json(),
        json!({
            "error": "too_many_requests",
            "message": "the request would take about 28.6 MB of memory (the document parsed \
                        from its body), and the requests in flight hold too much of the 60.0 MB \
                        this server gives them (--max-memory); try again shortly",
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
