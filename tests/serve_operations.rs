//! `evalctl serve`'s long-running operations (`fep.v1.AsyncEvaluationService`) through the real
//! server with the client generated from the FEP's `.proto`: an evaluation started, followed to
//! its stored result, listed page by page and filtered; a running one cancelled (its check's
//! command killed); the token required by all four calls; unknown operations NOT_FOUND.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::serve_support::grpc::{authorized, capitals, checked_by, pb};
use crate::serve_support::Server;
use pb::async_evaluation_service_client::AsyncEvaluationServiceClient;
use pb::evaluation_service_client::EvaluationServiceClient;
use tonic::transport::Channel;

type Operations = AsyncEvaluationServiceClient<Channel>;

async fn get(operations: &mut Operations, id: &str) -> pb::EvaluationOperation {
    let request = pb::GetOperationRequest {
        operation_id: id.into(),
    };
    operations
        .get_operation(authorized(request))
        .await
        .unwrap()
        .into_inner()
}

/// Ask for operation `id` until it has finished (each answer is one round trip).
async fn finished(operations: &mut Operations, id: &str) -> pb::EvaluationOperation {
    loop {
        let operation = get(operations, id).await;
        if operation.status != "running" {
            return operation;
        }
    }
}

async fn list(
    operations: &mut Operations,
    filter: Option<&str>,
    page_size: Option<i32>,
    page_token: Option<String>,
) -> Result<pb::ListOperationsResponse, tonic::Status> {
    let request = pb::ListOperationsRequest {
        filter: filter.map(str::to_string),
        page_size,
        page_token,
    };
    operations
        .list_operations(authorized(request))
        .await
        .map(tonic::Response::into_inner)
}

fn ids(response: &pb::ListOperationsResponse) -> Vec<&str> {
    response
        .operations
        .iter()
        .map(|operation| operation.operation_id.as_str())
        .collect()
}

#[tokio::test]
async fn operations_run_in_the_background_and_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("s.db"),
        &["--token-env", "SERVE_OPS_TOKEN"],
        &[("SERVE_OPS_TOKEN", "grpc-token")],
    );
    let address = format!("http://{}", server.grpc);
    let mut operations = AsyncEvaluationServiceClient::connect(address.clone())
        .await
        .unwrap();
    let mut evaluations = EvaluationServiceClient::connect(address).await.unwrap();

    // Without the token, every call is refused.
    let refused = [
        operations.start_evaluation(capitals(1, true)).await.err(),
        operations
            .get_operation(pb::GetOperationRequest::default())
            .await
            .err(),
        operations
            .list_operations(pb::ListOperationsRequest::default())
            .await
            .err(),
        operations
            .cancel_operation(pb::CancelOperationRequest::default())
            .await
            .err(),
    ];
    for status in refused {
        let status = status.expect("refused");
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
        assert_eq!(
            status.message(),
            "a valid bearer token is required (Authorization: Bearer TOKEN)"
        );
    }

    // An invalid request is refused as RunEvaluation refuses it.
    let invalid = operations
        .start_evaluation(authorized(capitals(1, false)))
        .await
        .unwrap_err();
    let run_refusal = evaluations
        .run_evaluation(authorized(capitals(1, false)))
        .await
        .unwrap_err();
    assert_eq!(invalid.code(), tonic::Code::InvalidArgument);
    assert_eq!(invalid.message(), run_refusal.message());

    let mut started = Vec::new();
    for cases in [3, 1, 2] {
        let operation = operations
            .start_evaluation(authorized(capitals(cases, true)))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(operation.status, "running");
        let progress = operation.progress.unwrap();
        assert_eq!(progress.total_test_cases, cases as i32);
        assert!(operation.created_at.is_some() && operation.result.is_none());
        started.push(operation.operation_id);
    }
    for (id, cases) in started.iter().zip([3, 1, 2]) {
        let operation = finished(&mut operations, id).await;
        assert_eq!(operation.status, "completed");
        let progress = operation.progress.unwrap();
        assert_eq!(
            (progress.completed_test_cases, progress.total_test_cases),
            (cases, cases)
        );
        assert!(operation.completed_at.is_some() && operation.error.is_none());
        // The result is the stored evaluation.
        let stored = evaluations
            .get_evaluation(authorized(pb::GetEvaluationRequest {
                evaluation_id: id.clone(),
            }))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(stored.results.len(), cases as usize);
        assert_eq!(operation.result, Some(stored));
    }

    // Newest first, two to a page.
    let first = list(&mut operations, None, Some(2), None).await.unwrap();
    assert_eq!(ids(&first), [&started[2], &started[1]]);
    assert!(first.operations.iter().all(|op| op.result.is_none()));
    let second = list(&mut operations, None, Some(2), first.next_page_token)
        .await
        .unwrap();
    assert_eq!(ids(&second), [&started[0]]);
    assert_eq!(second.next_page_token, None);
    let all = list(&mut operations, None, None, None).await.unwrap();
    assert_eq!(all.operations.len(), 3);
    let completed = list(&mut operations, Some("status=completed"), None, None)
        .await
        .unwrap();
    assert_eq!(completed.operations.len(), 3);
    for status in ["running", "cancelled", "failed"] {
        let filter = format!("status = {status}");
        let none = list(&mut operations, Some(&filter), None, None)
            .await
            .unwrap();
        assert_eq!(none.operations, []);
    }

    let refusals = [
        list(&mut operations, Some("state=done"), None, None).await,
        list(&mut operations, Some("status=pending"), None, None).await,
        list(&mut operations, None, Some(-1), None).await,
        list(&mut operations, None, None, Some("next".into())).await,
    ];
    let messages: Vec<_> = refusals
        .into_iter()
        .map(|refused| {
            let status = refused.unwrap_err();
            assert_eq!(status.code(), tonic::Code::InvalidArgument);
            status.message().to_string()
        })
        .collect();
    assert_eq!(
        messages,
        [
            "filter `state=done` is not understood: expected `status=STATUS`, STATUS one of \
             running, completed, failed, cancelled",
            "filter `status=pending` is not understood: expected `status=STATUS`, STATUS one \
             of running, completed, failed, cancelled",
            "page_size -1 is negative",
            "page_token `next` is not one ListOperations gave",
        ]
    );

    // A finished operation is not cancelled; an unknown one is not found.
    let cancel = |id: &str| {
        authorized(pb::CancelOperationRequest {
            operation_id: id.into(),
        })
    };
    let finished_one = operations
        .cancel_operation(cancel(&started[0]))
        .await
        .unwrap();
    assert!(!finished_one.into_inner().cancelled);
    let unknown = operations
        .cancel_operation(cancel("no-such-operation"))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), tonic::Code::NotFound);
    assert_eq!(
        unknown.message(),
        "no operation with id `no-such-operation`"
    );
    let unknown = operations
        .get_operation(authorized(pb::GetOperationRequest {
            operation_id: "no-such-operation".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), tonic::Code::NotFound);
    assert_eq!(
        unknown.message(),
        "no operation with id `no-such-operation`"
    );
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

#[tokio::test]
async fn cancelling_a_running_operation_kills_its_check() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = |name: &str| {
        let path = dir.path().join(name);
        mkfifo(&path);
        path
    };
    let (alive, started, hold) = (fifo("alive"), fifo("started"), fifo("hold"));
    // The check's command holds `alive` open while it lives, says it has started, then waits
    // for a line on `hold` that never comes.
    let script = dir.path().join("held.sh");
    std::fs::write(
        &script,
        format!(
            "exec 3>'{}'\necho started >'{}'\nread line <'{}'\n",
            alive.display(),
            started.display(),
            hold.display()
        ),
    )
    .unwrap();
    let held = format!("held=sh {}", script.display());
    let server = Server::start(
        &dir.path().join("s.db"),
        &[
            "--custom-check",
            &held,
            "--max-concurrent",
            "1",
            "--token-env",
            "SERVE_OPS_TOKEN",
        ],
        &[("SERVE_OPS_TOKEN", "grpc-token")],
    );
    let address = format!("http://{}", server.grpc);
    let mut operations = AsyncEvaluationServiceClient::connect(address.clone())
        .await
        .unwrap();
    let mut evaluations = EvaluationServiceClient::connect(address).await.unwrap();

    let operation = operations
        .start_evaluation(authorized(checked_by(capitals(1, true), "held")))
        .await
        .unwrap()
        .into_inner();
    let id = operation.operation_id;
    // Wait until the command runs: `alive` has its writer, `started` its line.
    let (alive, started) = tokio::task::spawn_blocking(move || {
        let alive = std::fs::File::open(alive).unwrap();
        let mut line = String::new();
        BufReader::new(std::fs::File::open(started).unwrap())
            .read_line(&mut line)
            .unwrap();
        (alive, line)
    })
    .await
    .unwrap();
    assert_eq!(started, "started\n");
    let running = get(&mut operations, &id).await;
    assert_eq!(running.status, "running");
    assert_eq!(running.progress.unwrap().completed_test_cases, 0);
    // --max-concurrent 1: the running operation holds the place.
    let busy = operations
        .start_evaluation(authorized(capitals(1, true)))
        .await
        .unwrap_err();
    assert_eq!(busy.code(), tonic::Code::ResourceExhausted);

    let cancel = || {
        authorized(pb::CancelOperationRequest {
            operation_id: id.clone(),
        })
    };
    let cancelled = operations.cancel_operation(cancel()).await.unwrap();
    assert!(cancelled.into_inner().cancelled);
    let operation = get(&mut operations, &id).await;
    assert_eq!(operation.status, "cancelled");
    assert!(operation.completed_at.is_some() && operation.result.is_none());

    // The command is killed: its end of `alive` closes (nothing ever writes `hold`).
    let rest = tokio::task::spawn_blocking(move || {
        let mut rest = Vec::new();
        let mut alive = alive;
        alive.read_to_end(&mut rest).unwrap();
        rest
    })
    .await
    .unwrap();
    assert_eq!(rest, b"");

    // Cancelled once; nothing was stored; the place is free again.
    let again = operations.cancel_operation(cancel()).await.unwrap();
    assert!(!again.into_inner().cancelled);
    let stored = evaluations
        .get_evaluation(authorized(pb::GetEvaluationRequest {
            evaluation_id: id.clone(),
        }))
        .await
        .unwrap_err();
    assert_eq!(stored.code(), tonic::Code::NotFound);
    let next = operations
        .start_evaluation(authorized(capitals(1, true)))
        .await
        .unwrap()
        .into_inner();
    let next = finished(&mut operations, &next.operation_id).await;
    assert_eq!(next.status, "completed");
    let cancelled = list(&mut operations, Some("status=cancelled"), None, None)
        .await
        .unwrap();
    assert_eq!(ids(&cancelled), [id.as_str()]);
}
