//! `evalctl serve`'s long-running operations (`fep.v1.AsyncEvaluationService`) through the real
//! server with the client generated from the FEP document's own `.proto`: an evaluation started,
//! followed to its stored result, listed page by page and filtered; a running one cancelled (its
//! check's command killed); the token required by all four calls; unknown operations NOT_FOUND;
//! a running one finished and stored before SIGTERM ends the server; one past its deadline
//! failed; and a StreamEvaluation its client cancels, its check's command killed at once.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::serve_support::grpc::{authorized, capitals, checked_by, pb};
use crate::serve_support::{signal, Server};
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

/// A server whose custom check `held` runs a command that holds the FIFO `alive` open while it
/// lives, says it has started, then waits for a line on the FIFO `hold` before it answers
/// `passed`; and a running operation of that check. Returned once the command runs, with the
/// read end of `alive` (its end comes when the command ends).
struct Held {
    server: Server,
    operations: Operations,
    evaluations: EvaluationServiceClient<Channel>,
    id: String,
    alive: std::fs::File,
    hold: std::path::PathBuf,
    dir: tempfile::TempDir,
}

async fn held(extra: &[&str]) -> Held {
    let command = HeldCommand::new(extra);
    let address = format!("http://{}", command.server.grpc);
    let mut operations = AsyncEvaluationServiceClient::connect(address.clone())
        .await
        .unwrap();
    let evaluations = EvaluationServiceClient::connect(address).await.unwrap();
    let operation = operations
        .start_evaluation(authorized(checked_by(capitals(1, true), "held")))
        .await
        .unwrap()
        .into_inner();
    let alive = command.running().await;
    Held {
        server: command.server,
        operations,
        evaluations,
        id: operation.operation_id,
        alive,
        hold: command.hold,
        dir: command.dir,
    }
}

/// A server whose custom check `held` runs the command [`Held`] describes, before any call.
struct HeldCommand {
    server: Server,
    alive: std::path::PathBuf,
    started: std::path::PathBuf,
    hold: std::path::PathBuf,
    dir: tempfile::TempDir,
}

impl HeldCommand {
    fn new(extra: &[&str]) -> HeldCommand {
        let dir = tempfile::tempdir().unwrap();
        let fifo = |name: &str| {
            let path = dir.path().join(name);
            mkfifo(&path);
            path
        };
        let (alive, started, hold) = (fifo("alive"), fifo("started"), fifo("hold"));
        let script = dir.path().join("held.sh");
        std::fs::write(
            &script,
            format!(
                "exec 3>'{}'\necho started >'{}'\nread line <'{}'\necho '{{\"passed\": true}}'\n",
                alive.display(),
                started.display(),
                hold.display()
            ),
        )
        .unwrap();
        let held = format!("held=sh {}", script.display());
        let mut flags = vec!["--custom-check", &held, "--token-env", "SERVE_OPS_TOKEN"];
        flags.extend_from_slice(extra);
        let server = Server::start(
            &dir.path().join("s.db"),
            &flags,
            &[("SERVE_OPS_TOKEN", "grpc-token")],
        );
        HeldCommand {
            server,
            alive,
            started,
            hold,
            dir,
        }
    }

    /// Wait until the command runs (`alive` has its writer, `started` its line): the read end
    /// of `alive`.
    async fn running(&self) -> std::fs::File {
        let (alive, started) = (self.alive.clone(), self.started.clone());
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
        alive
    }
}

/// Wait until the held command has ended: the end of `alive`.
async fn ended(alive: std::fs::File) {
    let rest = tokio::task::spawn_blocking(move || {
        let mut rest = Vec::new();
        let mut alive = alive;
        alive.read_to_end(&mut rest).unwrap();
        rest
    })
    .await
    .unwrap();
    assert_eq!(rest, b"");
}

#[tokio::test]
async fn cancelling_a_running_operation_kills_its_check() {
    let Held {
        server: _server,
        mut operations,
        mut evaluations,
        id,
        alive,
        // Kept to the end: the command's FIFOs are in it.
        dir: _dir,
        ..
    } = held(&["--max-concurrent", "1"]).await;
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

    // The command is killed: its end of `alive` closes (nothing writes `hold`).
    ended(alive).await;

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

// Multi-threaded: the clients' connections are served while this thread waits on the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_the_running_operations_finish() {
    let Held {
        mut server,
        alive,
        id,
        hold,
        dir,
        ..
    } = held(&[]).await;
    signal(&server.child, "TERM");
    let mut waiting = String::new();
    server.stderr.read_line(&mut waiting).unwrap();
    assert_eq!(waiting, "SIGTERM: waiting for 1 evaluation still running\n");
    // The check answers now: the evaluation completes and is stored before the server exits.
    tokio::task::spawn_blocking(move || std::fs::write(hold, "go\n").unwrap())
        .await
        .unwrap();
    ended(alive).await;
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let mut rest = String::new();
    server.stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "SIGTERM: stopped after the requests in flight\n");

    let again = Server::start(&dir.path().join("s.db"), &[], &[]);
    let mut evaluations = EvaluationServiceClient::connect(format!("http://{}", again.grpc))
        .await
        .unwrap();
    let stored = evaluations
        .get_evaluation(pb::GetEvaluationRequest { evaluation_id: id })
        .await
        .unwrap()
        .into_inner();
    let check = &stored.results[0].check_results[0];
    let passed = &check.results.as_ref().unwrap().fields["passed"];
    assert_eq!(passed.kind, Some(prost_types::value::Kind::BoolValue(true)));
}

#[tokio::test]
async fn an_operation_past_the_request_timeout_fails() {
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
    let mut operations = AsyncEvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    let operation = operations
        .start_evaluation(checked_by(capitals(1, true), "stuck"))
        .await
        .unwrap()
        .into_inner();
    let operation = finished(&mut operations, &operation.operation_id).await;
    assert_eq!(operation.status, "failed");
    assert_eq!(operation.result, None);
    assert_eq!(
        operation.error,
        Some(pb::FepError {
            code: "deadline_exceeded".into(),
            message: "the request was not evaluated within 1s (--request-timeout); its \
                      evaluation was stopped"
                .into(),
            details: None,
        })
    );
    let failed = list(&mut operations, Some("status=failed"), None, None)
        .await
        .unwrap();
    assert_eq!(ids(&failed), [operation.operation_id.as_str()]);
}

#[tokio::test]
async fn an_error_repeats_at_most_100_characters_of_what_the_client_sent() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    let address = format!("http://{}", server.grpc);
    let long = "x".repeat(20_000);
    let clipped = format!("{}…", "x".repeat(100));
    let mut evaluations = EvaluationServiceClient::connect(address.clone())
        .await
        .unwrap();
    let missing = evaluations
        .get_evaluation(pb::GetEvaluationRequest {
            evaluation_id: long.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (missing.code(), missing.message()),
        (
            tonic::Code::NotFound,
            format!("no evaluation with id `{clipped}`").as_str()
        )
    );
    let mut operations = AsyncEvaluationServiceClient::connect(address)
        .await
        .unwrap();
    let missing = operations
        .get_operation(pb::GetOperationRequest {
            operation_id: long.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (missing.code(), missing.message()),
        (
            tonic::Code::NotFound,
            format!("no operation with id `{clipped}`").as_str()
        )
    );
}

#[tokio::test]
async fn a_page_token_is_a_number_list_operations_gave() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    let mut operations = AsyncEvaluationServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .unwrap();
    // No operation was started; no token is written with a sign or a leading zero; and the
    // error repeats at most 100 characters of a long one.
    let long = "9".repeat(20_000);
    let clipped = format!("{}…", "9".repeat(100));
    for (token, said) in [
        ("999999", "999999"),
        ("03", "03"),
        ("+3", "+3"),
        (&long, &clipped),
    ] {
        let listed = operations
            .list_operations(pb::ListOperationsRequest {
                page_token: Some(token.to_string()),
                ..pb::ListOperationsRequest::default()
            })
            .await
            .unwrap_err();
        assert_eq!(
            (listed.code(), listed.message()),
            (
                tonic::Code::InvalidArgument,
                format!("page_token `{said}` is not one ListOperations gave").as_str()
            )
        );
    }
}

#[tokio::test]
async fn a_stream_its_client_cancels_kills_its_check_and_frees_its_place() {
    // A long --idle-timeout: the connection, idle once the stream is cancelled, stays open.
    let command = HeldCommand::new(&["--max-concurrent", "1", "--idle-timeout", "600"]);
    let mut evaluations =
        EvaluationServiceClient::connect(format!("http://{}", command.server.grpc))
            .await
            .unwrap();
    let stream = evaluations
        .stream_evaluation(authorized(checked_by(capitals(1, true), "held")))
        .await
        .unwrap();
    let alive = command.running().await;
    // The client cancels while the check runs: its command is killed (nothing writes `hold`),
    // and the place is free again.
    drop(stream);
    // (Given up on well before the check's own 30 s timeout would kill it.)
    tokio::time::timeout(std::time::Duration::from_secs(20), ended(alive))
        .await
        .expect("the command was not killed when its client cancelled the stream");
    // The place is freed as the evaluation stops, just after its command is killed.
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let next = loop {
        match evaluations
            .run_evaluation(authorized(capitals(1, true)))
            .await
        {
            Err(busy) if busy.code() == tonic::Code::ResourceExhausted => {
                assert!(
                    std::time::Instant::now() < give_up,
                    "the cancelled stream kept its place"
                );
                tokio::task::yield_now().await;
            }
            answered => break answered.unwrap().into_inner(),
        }
    };
    assert_eq!(next.status, pb::EvaluationStatus::Completed as i32);
}
