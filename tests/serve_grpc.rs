//! `evalctl serve` over gRPC (`fep.v1.EvaluationService`): the real server on an ephemeral
//! loopback port, driven with the vendored client: evaluation, retrieval, validation errors,
//! authentication and streaming order, the operator's custom checks answered over gRPC, the
//! token checked before a message is read, and the deadline of an evaluation.

use crate::serve_support::grpc::{authorized, capitals, pb};
use crate::serve_support::Server;
use pb::evaluation_service_client::EvaluationServiceClient;

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
    for (index, message) in messages[..3].iter().enumerate() {
        assert_eq!(message.status, "running");
        assert_eq!(message.completed_test_cases, index as i32 + 1);
        let test_case = message.test_case_result.as_ref().unwrap();
        let context = test_case.execution_context.as_ref().unwrap();
        assert_eq!(context.test_case.as_ref().unwrap().id, format!("t{index}"));
        // The FEP document's own fields carry it too: the partial final_result of this case.
        let partial = message.final_result.as_ref().unwrap();
        assert_eq!(partial.results, vec![test_case.clone()]);
    }
    let last = &messages[3];
    assert_eq!(last.status, "completed");
    let final_result = last.final_result.as_ref().unwrap();
    assert_eq!(final_result.summary.unwrap().total_test_cases, 3);
    let every: Vec<_> = messages[..3]
        .iter()
        .map(|message| message.test_case_result.clone().unwrap())
        .collect();
    assert_eq!(final_result.results, every);
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
    assert_eq!(undecoded.code(), tonic::Code::Internal, "{undecoded:?}");
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
        "the request was not evaluated within 1s (--request-timeout); its evaluation was stopped"
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
