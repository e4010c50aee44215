//! `evalctl serve` over gRPC (`fep.v1.EvaluationService`): the real server on an ephemeral
//! loopback port, driven with the client generated from the FEP document's own `.proto`:
//! evaluation, retrieval, validation errors, authentication and streaming (each case in the
//! document's fields as it finishes), the operator's custom checks answered over gRPC, the token
//! checked before a message is read, a message that does not arrive in time, one read for
//! what it decodes into before it is decoded, the deadline of an evaluation, and a request over
//! `--max-check-results` refused by every RPC that evaluates; and evalctl's additions to that
//! `.proto`, seen through evalctl's own client.

use crate::serve_support::grpc::{authorized, capitals, checked_by, evalctl_pb, pb};
use crate::serve_support::Server;
use pb::evaluation_service_client::EvaluationServiceClient;
use prost::Message;

#[tokio::test]
async fn grpc_evaluates_stores_validates_authenticates_and_streams() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("s.db"),
        &["--token-env", "SERVE_GRPC_TOKEN"],
        &[("SERVE_GRPC_TOKEN", "grpc-token")],
    );
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    let health = client
        .health_check(pb::HealthCheckRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(health.status, "healthy");

    let refused = client.run_evaluation(capitals(1, true)).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unauthenticated);

    let run = client
        .run_evaluation(authorized(capitals(2, true)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(run.status, pb::EvaluationStatus::Completed as i32);
    assert_eq!(run.results.len(), 2);
    let passed = |result: &pb::TestCaseResult| {
        result.check_results[0].results.as_ref().unwrap().fields["passed"]
            .kind
            .clone()
    };
    assert_eq!(
        passed(&run.results[0]),
        Some(prost_types::value::Kind::BoolValue(true))
    );
    assert_eq!(
        passed(&run.results[1]),
        Some(prost_types::value::Kind::BoolValue(false))
    );
    let found = client
        .get_evaluation(authorized(pb::GetEvaluationRequest {
            evaluation_id: run.evaluation_id.clone(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(found, run);

    let invalid = client
        .run_evaluation(authorized(capitals(1, false)))
        .await
        .unwrap_err();
    assert_eq!(invalid.code(), tonic::Code::InvalidArgument);
    assert!(
        invalid
            .message()
            .contains("test_cases[0]: missing required key `input`"),
        "{}",
        invalid.message()
    );

    let mut stream = client
        .stream_evaluation(authorized(capitals(3, true)))
        .await
        .unwrap()
        .into_inner();
    let mut messages = Vec::new();
    while let Some(message) = stream.message().await.unwrap() {
        messages.push(message);
    }
    assert_eq!(messages.len(), 4);
    let mut partials = Vec::new();
    for (index, message) in messages[..3].iter().enumerate() {
        assert_eq!(message.status, "running");
        assert_eq!(message.completed_test_cases, index as i32 + 1);
        assert_eq!(message.total_test_cases, 3);
        // The document's own field carries the case that just finished: a partial final_result.
        let partial = message.final_result.as_ref().unwrap();
        assert_eq!(partial.evaluation_id, message.evaluation_id);
        assert_eq!(partial.results.len(), 1);
        let context = partial.results[0].execution_context.as_ref().unwrap();
        assert_eq!(context.test_case.as_ref().unwrap().id, format!("t{index}"));
        partials.push(partial.results[0].clone());
    }
    let last = &messages[3];
    assert_eq!(last.status, "completed");
    assert_eq!((last.completed_test_cases, last.total_test_cases), (3, 3));
    let final_result = last.final_result.as_ref().unwrap();
    assert_eq!(final_result.status, pb::EvaluationStatus::Completed as i32);
    assert_eq!(final_result.summary.unwrap().total_test_cases, 3);
    assert_eq!(final_result.results, partials);
    let stored = client
        .get_evaluation(authorized(pb::GetEvaluationRequest {
            evaluation_id: last.evaluation_id.clone(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(&stored, final_result);
}

/// A server whose custom check `held` answers `passed` at once, except for the output `Lyon`:
/// then it waits for a line on the FIFO `hold` (in `dir`) first.
fn held_for_lyon(dir: &std::path::Path) -> (Server, std::path::PathBuf) {
    let hold = dir.join("hold");
    let made = std::process::Command::new("mkfifo")
        .arg(&hold)
        .status()
        .unwrap();
    assert!(made.success());
    let script = dir.join("held.sh");
    std::fs::write(
        &script,
        format!(
            "case \"$(cat)\" in *Lyon*) read line <'{}' ;; esac\necho '{{\"passed\": true}}'\n",
            hold.display()
        ),
    )
    .unwrap();
    let held = format!("held=sh {}", script.display());
    let server = Server::start(&dir.join("s.db"), &["--custom-check", &held], &[]);
    (server, hold)
}

#[tokio::test]
async fn stream_evaluation_gives_each_case_in_the_documents_fields_as_it_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let (server, hold) = held_for_lyon(dir.path());
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    // t0 (Paris) is answered at once; t1 (Lyon) waits for `hold`.
    let mut stream = client
        .stream_evaluation(checked_by(capitals(2, true), "held"))
        .await
        .unwrap()
        .into_inner();
    let first = stream.message().await.unwrap().unwrap();
    assert_eq!(first.status, "running");
    assert_eq!((first.completed_test_cases, first.total_test_cases), (1, 2));
    let partial = first.final_result.clone().unwrap();
    let case = |result: &pb::TestCaseResult| {
        let context = result.execution_context.as_ref().unwrap();
        context.test_case.as_ref().unwrap().id.clone()
    };
    assert_eq!(partial.results.iter().map(case).collect::<Vec<_>>(), ["t0"]);
    // Only now may t1's check answer: the first case came while the second was still running.
    tokio::task::spawn_blocking(move || std::fs::write(hold, "go\n").unwrap())
        .await
        .unwrap();
    let second = stream.message().await.unwrap().unwrap();
    assert_eq!(
        (second.status.as_str(), second.completed_test_cases),
        ("running", 2)
    );
    let second_partial = second.final_result.clone().unwrap();
    assert_eq!(
        second_partial.results.iter().map(case).collect::<Vec<_>>(),
        ["t1"]
    );
    let last = stream.message().await.unwrap().unwrap();
    assert_eq!(last.status, "completed");
    let final_result = last.final_result.unwrap();
    assert_eq!(
        final_result.results,
        [partial.results, second_partial.results].concat()
    );
    assert_eq!(
        final_result.summary.unwrap(),
        pb::EvaluationSummary {
            total_test_cases: 2,
            completed_test_cases: 2,
            error_test_cases: 0,
            skipped_test_cases: 0,
        }
    );
    assert!(stream.message().await.unwrap().is_none());
}

/// evalctl's additions to the document's proto reach a client built from evalctl's own
/// `proto/fep/v1/fep.proto`: each running message's case in `test_case_result` (field 6) too,
/// and an output's `id` (field 3 of Output, which the REST API has) kept in the result.
#[tokio::test]
async fn evalctls_own_client_also_gets_its_additional_fields() {
    use evalctl_pb::evaluation_service_client::EvaluationServiceClient;
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    let mut request = evalctl_pb::EvaluationRequest::decode(
        prost::Message::encode_to_vec(&capitals(2, true)).as_slice(),
    )
    .unwrap();
    request.outputs[0].id = Some("out-0".into());
    let mut stream = client
        .stream_evaluation(request)
        .await
        .unwrap()
        .into_inner();
    let mut messages = Vec::new();
    while let Some(message) = stream.message().await.unwrap() {
        messages.push(message);
    }
    assert_eq!(messages.len(), 3);
    for message in &messages[..2] {
        let partial = message.final_result.as_ref().unwrap();
        assert_eq!(message.test_case_result.as_ref(), partial.results.first());
    }
    let output = |message: &evalctl_pb::EvaluationProgress| {
        let result = message.test_case_result.as_ref().unwrap();
        result
            .execution_context
            .as_ref()
            .unwrap()
            .output
            .clone()
            .unwrap()
    };
    assert_eq!(output(&messages[0]).id.as_deref(), Some("out-0"));
    assert_eq!(output(&messages[1]).id, None);
    assert_eq!(messages[2].test_case_result, None);
}

#[tokio::test]
async fn grpc_answers_the_operators_custom_checks() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("s.db"),
        &[
            "--custom-check",
            "double=sh -c 'cat >/dev/null; echo \"{\\\"passed\\\": true, \\\"n\\\": 2}\"'",
        ],
        &[],
    );
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    let mut request = capitals(1, true);
    if let Some(pb::check_configuration::Configuration::SharedChecks(shared)) = request
        .checks
        .as_mut()
        .and_then(|checks| checks.configuration.as_mut())
    {
        shared.checks[0].r#type = "double".into();
    }
    let run = client.run_evaluation(request).await.unwrap().into_inner();
    let results = run.results[0].check_results[0].results.as_ref().unwrap();
    assert_eq!(
        results.fields["n"].kind,
        Some(prost_types::value::Kind::NumberValue(2.0))
    );
    assert_eq!(
        results.fields["passed"].kind,
        Some(prost_types::value::Kind::BoolValue(true))
    );
}

/// A call of `path` whose message is `message`'s encoding (of whatever type), answered as an
/// EvaluationRunResult.
async fn raw_call<M: prost::Message + Default + Send + Sync + 'static>(
    address: &str,
    path: &'static str,
    message: tonic::Request<M>,
) -> Result<pb::EvaluationRunResult, tonic::Status> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{address}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let codec = tonic_prost::ProstCodec::<M, pb::EvaluationRunResult>::default();
    grpc.unary(
        message,
        tonic::codegen::http::uri::PathAndQuery::from_static(path),
        codec,
    )
    .await
    .map(tonic::Response::into_inner)
}

#[tokio::test]
async fn the_token_is_checked_before_the_message_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("s.db"),
        &["--token-env", "SERVE_GRPC_TOKEN", "--max-body", "1000"],
        &[("SERVE_GRPC_TOKEN", "grpc-token")],
    );
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    // Over --max-body: refused for its size only once the caller is known.
    let large = capitals(50, true);
    let refused = client.run_evaluation(large.clone()).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unauthenticated);
    assert_eq!(
        refused.message(),
        "a valid bearer token is required (Authorization: Bearer TOKEN)"
    );
    let too_large = client.run_evaluation(authorized(large)).await.unwrap_err();
    assert_eq!(too_large.code(), tonic::Code::ResourceExhausted);
    // Bytes that are no EvaluationRequest (a TestCase that ends inside a field): never decoded
    // without the token.
    let undecodable = || pb::GetEvaluationRequest {
        evaluation_id: "x".into(),
    };
    const RUN: &str = "/fep.v1.EvaluationService/RunEvaluation";
    let refused = raw_call(&server.grpc, RUN, tonic::Request::new(undecodable()))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unauthenticated);
    let undecoded = raw_call(&server.grpc, RUN, authorized(undecodable()))
        .await
        .unwrap_err();
    assert_eq!(
        (undecoded.code(), undecoded.message()),
        (
            tonic::Code::InvalidArgument,
            "the message is not an EvaluationRequest that can be decoded: it ends inside a field"
        )
    );
    // HealthCheck needs no token.
    assert_eq!(
        client
            .health_check(pb::HealthCheckRequest {})
            .await
            .unwrap()
            .into_inner()
            .status,
        "healthy"
    );
}

#[tokio::test]
async fn an_evaluation_past_the_request_timeout_is_deadline_exceeded() {
    let dir = tempfile::tempdir().unwrap();
    // A custom check whose command never answers (the server kills it at the deadline).
    let server = Server::start(
        &dir.path().join("s.db"),
        &[
            "--custom-check",
            "stuck=sh -c 'cat >/dev/null; exec sleep 3600'",
            "--request-timeout",
            "2",
            // Shorter than the call: a connection with a call in flight is not idle.
            "--idle-timeout",
            "1",
        ],
        &[],
    );
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    let mut request = capitals(1, true);
    if let Some(pb::check_configuration::Configuration::SharedChecks(shared)) = request
        .checks
        .as_mut()
        .and_then(|checks| checks.configuration.as_mut())
    {
        shared.checks[0].r#type = "stuck".into();
    }
    let expired = client.run_evaluation(request.clone()).await.unwrap_err();
    assert_eq!(expired.code(), tonic::Code::DeadlineExceeded);
    assert_eq!(
        expired.message(),
        "the request was not evaluated within 2s (--request-timeout); its evaluation was stopped"
    );
    let mut stream = client
        .stream_evaluation(request)
        .await
        .unwrap()
        .into_inner();
    let ended = stream.message().await.unwrap_err();
    assert_eq!(ended.code(), tonic::Code::DeadlineExceeded);
    let health = client
        .health_check(pb::HealthCheckRequest {})
        .await
        .unwrap();
    assert_eq!(health.into_inner().status, "healthy");
}

#[tokio::test]
async fn grpc_refuses_what_the_schemas_refuse_as_invalid_argument() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    let mut no_checks = capitals(1, true);
    no_checks.checks = None;
    let mut bad_version = capitals(1, true);
    if let Some(pb::check_configuration::Configuration::SharedChecks(shared)) = bad_version
        .checks
        .as_mut()
        .and_then(|checks| checks.configuration.as_mut())
    {
        shared.checks[0].version = Some("latest".into());
    }
    let mut empty_value = capitals(1, true);
    empty_value.outputs[0].value = Some(pb::OutputValue { value: None });
    for (request, message) in [
        (
            no_checks,
            "invalid EvaluationRequest (1 problem): missing required key `checks`",
        ),
        (
            bad_version,
            "invalid EvaluationRequest (1 problem): checks[0].version: `latest` is not a \
             semantic version (MAJOR.MINOR.PATCH)",
        ),
        (
            empty_value,
            "invalid EvaluationRequest (1 problem): outputs[0].value: expected a string or an \
             object, found null",
        ),
    ] {
        let refused = client.run_evaluation(request).await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::InvalidArgument);
        assert_eq!(refused.message(), message);
    }
}

#[tokio::test]
async fn every_rpc_that_evaluates_refuses_a_request_over_the_check_result_limit() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &["--max-check-results", "2"], &[]);
    let address = format!("http://{}", server.grpc);
    let mut client = EvaluationServiceClient::connect(address.clone())
        .await
        .unwrap();
    let mut operations =
        pb::async_evaluation_service_client::AsyncEvaluationServiceClient::connect(address)
            .await
            .unwrap();
    let message = "3 check results in one request (test cases times the checks that apply to \
                   each); this server takes at most 2 (--max-check-results)";
    let refused = [
        client.run_evaluation(capitals(3, true)).await.unwrap_err(),
        client
            .stream_evaluation(capitals(3, true))
            .await
            .unwrap_err(),
        operations
            .start_evaluation(capitals(3, true))
            .await
            .unwrap_err(),
    ];
    for refused in refused {
        assert_eq!(refused.code(), tonic::Code::InvalidArgument);
        assert_eq!(refused.message(), message);
    }
    let run = client
        .run_evaluation(capitals(2, true))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(run.results.len(), 2);
}

#[tokio::test]
async fn an_integral_number_compares_as_over_rest() {
    // Every Struct number is a double on the wire: 4 arrives as 4.0, and must still be `4`.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    let mut request = capitals(1, true);
    let number = prost_types::Value {
        kind: Some(prost_types::value::Kind::NumberValue(4.0)),
    };
    request.outputs[0].value = Some(pb::OutputValue {
        value: Some(pb::output_value::Value::ObjectValue(prost_types::Struct {
            fields: [("n".to_string(), number)].into_iter().collect(),
        })),
    });
    let arguments = serde_json::json!({"actual": "$.output.value.n", "expected": "4"});
    let rest = server.request(
        "POST",
        "/evaluate",
        &[],
        serde_json::json!({"test_cases": [{"id": "t0", "input": "q"}],
            "outputs": [{"value": {"n": 4}}],
            "checks": [{"type": "exact_match", "arguments": arguments}]})
        .to_string()
        .as_bytes(),
    );
    assert_eq!(
        rest.json()["results"][0]["check_results"][0]["results"]["passed"],
        true
    );
    if let Some(pb::check_configuration::Configuration::SharedChecks(shared)) = request
        .checks
        .as_mut()
        .and_then(|checks| checks.configuration.as_mut())
    {
        let path = prost_types::Value {
            kind: Some(prost_types::value::Kind::StringValue(
                "$.output.value.n".into(),
            )),
        };
        let expected = prost_types::Value {
            kind: Some(prost_types::value::Kind::StringValue("4".into())),
        };
        let fields = &mut shared.checks[0].arguments.as_mut().unwrap().fields;
        fields.insert("actual".into(), path);
        fields.insert("expected".into(), expected);
    }
    let run = client.run_evaluation(request).await.unwrap().into_inner();
    assert_eq!(
        run.results[0].check_results[0]
            .results
            .as_ref()
            .unwrap()
            .fields["passed"]
            .kind,
        Some(prost_types::value::Kind::BoolValue(true))
    );
}

#[tokio::test]
async fn a_grpc_connection_with_no_call_gives_its_place_back_after_the_idle_timeout() {
    // The channel stays open and answers the server's pings, but makes no call: past
    // --idle-timeout it is closed, and a client waiting for its place is answered.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("s.db"),
        &["--max-connections", "1", "--idle-timeout", "1"],
        &[],
    );
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    client
        .health_check(pb::HealthCheckRequest {})
        .await
        .unwrap();
    let rest = server.rest.clone();
    let health = tokio::task::spawn_blocking(move || {
        crate::serve_support::request(&rest, "GET", "/health", &[], b"")
    })
    .await
    .unwrap();
    assert_eq!(health.status, 200);
    drop(client);
}

#[tokio::test]
async fn a_message_that_does_not_arrive_in_time_is_deadline_exceeded_and_frees_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("s.db"),
        &["--body-timeout", "1", "--max-concurrent", "1"],
        &[],
    );
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", server.grpc))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    // A call whose message never comes, and one whose message comes but whose stream never
    // ends (the call waits for its end): each stream of messages then waits forever.
    let never = || tokio_stream::pending::<pb::EvaluationRequest>();
    let silent: Vec<_> = vec![
        Box::pin(never()) as std::pin::Pin<Box<dyn tokio_stream::Stream<Item = _> + Send>>,
        Box::pin(tokio_stream::StreamExt::chain(
            tokio_stream::iter([capitals(2, true)]),
            never(),
        )),
    ];
    for messages in silent {
        grpc.ready().await.unwrap();
        let refused = grpc
            .client_streaming(
                tonic::Request::new(messages),
                tonic::codegen::http::uri::PathAndQuery::from_static(
                    "/fep.v1.EvaluationService/RunEvaluation",
                ),
                tonic_prost::ProstCodec::<pb::EvaluationRequest, pb::EvaluationRunResult>::default(
                ),
            )
            .await
            .unwrap_err();
        assert_eq!(
            (refused.code(), refused.message()),
            (
                tonic::Code::DeadlineExceeded,
                "the request message did not arrive within 1s (--body-timeout)"
            )
        );
    }
    // Its place among --max-concurrent 1 is free again.
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    let run = client.run_evaluation(capitals(2, true)).await.unwrap();
    assert_eq!(
        run.into_inner().status,
        pb::EvaluationStatus::Completed as i32
    );
}

/// The wire bytes of an EvaluationRequest of `count` empty test cases (two bytes each).
#[derive(Clone, PartialEq, prost::Message)]
struct EmptyTestCases {
    #[prost(bytes = "vec", repeated, tag = "1")]
    test_cases: Vec<Vec<u8>>,
}

#[tokio::test]
async fn a_message_of_many_small_test_cases_is_refused_before_it_is_decoded() {
    // 100,000 empty test cases (200 kB) sent to a server of `--max-test-cases max`: refused.
    let refusal = |max: &'static str| async move {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(
            &dir.path().join("s.db"),
            &[
                "--max-body",
                "1000000",
                "--max-memory",
                "5000000",
                "--max-test-cases",
                max,
            ],
            &[],
        );
        let many = EmptyTestCases {
            test_cases: vec![Vec::new(); 100_000],
        };
        const RUN: &str = "/fep.v1.EvaluationService/RunEvaluation";
        let refused = raw_call(&server.grpc, RUN, tonic::Request::new(many))
            .await
            .unwrap_err();
        (refused.code(), refused.message().to_string())
    };
    assert_eq!(
        refusal("10").await,
        (
            tonic::Code::InvalidArgument,
            "100000 test cases in one request; this server takes at most 10 (--max-test-cases)"
                .to_string()
        )
    );
    // Within --max-test-cases, what 200 kB decode into is over --max-memory.
    assert_eq!(
        refusal("1000000").await,
        (
            tonic::Code::ResourceExhausted,
            "the request would take about 24.6 MB of memory (its message decoded); this server \
             gives requests 5,000,000 bytes in all (--max-memory)"
                .to_string()
        )
    );
}

#[tokio::test]
async fn a_check_result_carries_its_test_cases_and_its_outputs_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    let tagged = |key: &str, value: &str| prost_types::Struct {
        fields: [(
            key.to_string(),
            prost_types::Value {
                kind: Some(prost_types::value::Kind::StringValue(value.into())),
            },
        )]
        .into(),
    };
    let mut request = capitals(1, true);
    request.test_cases[0].metadata = Some(tagged("topic", "geography"));
    request.outputs[0].metadata = Some(tagged("model", "m-1"));
    let run = client.run_evaluation(request).await.unwrap().into_inner();
    let metadata = run.results[0].check_results[0].metadata.clone().unwrap();
    assert_eq!(
        (metadata.test_case_metadata, metadata.output_metadata),
        (
            Some(tagged("topic", "geography")),
            Some(tagged("model", "m-1"))
        )
    );
}

#[tokio::test]
async fn a_message_that_cannot_be_decoded_or_echoes_too_much_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    // A test case whose id (field 1) is the byte 0xff: not UTF-8.
    let not_utf8 = EmptyTestCases {
        test_cases: vec![vec![0x0a, 0x01, 0xff]],
    };
    let refused = raw_call(
        &server.grpc,
        "/fep.v1.EvaluationService/RunEvaluation",
        tonic::Request::new(not_utf8),
    )
    .await
    .unwrap_err();
    assert_eq!(
        (refused.code(), refused.message()),
        (
            tonic::Code::InvalidArgument,
            "the message is not an EvaluationRequest that can be decoded: field 1 of a TestCase \
             is text that is not UTF-8"
        )
    );
    // A check version of 20,000 characters is repeated as its first 100.
    let mut request = capitals(1, true);
    let Some(pb::check_configuration::Configuration::SharedChecks(shared)) = request
        .checks
        .as_mut()
        .and_then(|checks| checks.configuration.as_mut())
    else {
        unreachable!("capitals shares its checks")
    };
    shared.checks[0].version = Some("9".repeat(20_000));
    let mut client = EvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    let refused = client.run_evaluation(request).await.unwrap_err();
    assert_eq!(
        (refused.code(), refused.message()),
        (
            tonic::Code::InvalidArgument,
            format!(
                "invalid EvaluationRequest (1 problem): checks[0].version: `{}…` is not a \
                 semantic version (MAJOR.MINOR.PATCH)",
                "9".repeat(100)
            )
            .as_str()
        )
    );
}

#[tokio::test]
async fn a_call_that_does_not_evaluate_takes_a_small_message_and_only_for_the_body_timeout() {
    // HealthCheck needs no token: its message may hold no memory the budget does not count,
    // nor its connection past --body-timeout.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &["--body-timeout", "1"], &[]);
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", server.grpc))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    let health = || {
        tonic::codegen::http::uri::PathAndQuery::from_static(
            "/fep.v1.EvaluationService/HealthCheck",
        )
    };
    let codec = || tonic_prost::ProstCodec::<EmptyTestCases, pb::HealthCheckResponse>::default();
    let large = EmptyTestCases {
        test_cases: vec![vec![0; 100_000]],
    };
    grpc.ready().await.unwrap();
    let refused = grpc
        .unary(tonic::Request::new(large), health(), codec())
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), refused.message()),
        (
            tonic::Code::ResourceExhausted,
            "the message is larger than 65,536 bytes (the most a call that does not evaluate \
             takes)"
        )
    );
    grpc.ready().await.unwrap();
    let never = tokio_stream::pending::<EmptyTestCases>();
    let late = grpc
        .client_streaming(tonic::Request::new(never), health(), codec())
        .await
        .unwrap_err();
    assert_eq!(
        (late.code(), late.message()),
        (
            tonic::Code::DeadlineExceeded,
            "the request message did not arrive within 1s (--body-timeout)"
        )
    );
    // A health check as clients send it is answered.
    grpc.ready().await.unwrap();
    let healthy = grpc
        .unary(
            tonic::Request::new(EmptyTestCases::default()),
            health(),
            codec(),
        )
        .await
        .unwrap();
    assert_eq!(healthy.into_inner().status, "healthy");
}
