//! The FEP's long-running operations (section 5.2, `fep.v1.AsyncEvaluationService`):
//! StartEvaluation validates a request as RunEvaluation does and answers at once with a
//! "running" operation whose evaluation goes on in the background (through the streaming engine,
//! within `--max-concurrent` and `--request-timeout`); GetOperation shows its status and progress
//! and, once "completed", the stored EvaluationRunResult; ListOperations pages and filters them;
//! CancelOperation stops the evaluation (its checks' commands are killed) and marks it
//! "cancelled".
//!
//! Operations live in memory: every running one and the last [`KEEP_FINISHED`] finished ones. An
//! operation's id is its evaluation's id; the results themselves are in the database.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use tokio::sync::{mpsc, oneshot};
use tonic::{Request, Response, Status};

use super::admission::Admitted;
use super::engine::{ApiError, Engine, ErrorKind, Line};
use super::grpc::{holding, result_message, start_streaming, GRPC_ANSWER_COPIES};
use super::pb;
use super::pb::async_evaluation_service_server::{
    AsyncEvaluationService, AsyncEvaluationServiceServer,
};
use crate::text::{clip, ECHOED};

/// How many finished operations are kept (the oldest go first).
const KEEP_FINISHED: usize = 1000;

/// How many operations a ListOperations page has when `page_size` is absent or 0.
const DEFAULT_PAGE_SIZE: usize = 50;

/// The most operations one ListOperations page has.
const MAX_PAGE_SIZE: usize = 1000;

/// The service over `engine`, behind the same token check as the EvaluationService.
pub fn service(engine: Arc<Engine>) -> Admitted<AsyncEvaluationServiceServer<Operations>> {
    let max_body = engine.limits.max_body;
    let inner = AsyncEvaluationServiceServer::new(Operations {
        engine: Arc::clone(&engine),
        registry: Arc::default(),
    })
    .max_decoding_message_size(max_body)
    .max_encoding_message_size(usize::MAX);
    Admitted::new(engine, inner)
}

/// The AsyncEvaluationService implementation.
pub struct Operations {
    engine: Arc<Engine>,
    registry: Arc<Mutex<Registry>>,
}

/// Where an operation stands; the names are the FEP's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl Stage {
    const ALL: [Stage; 4] = [
        Stage::Running,
        Stage::Completed,
        Stage::Failed,
        Stage::Cancelled,
    ];

    fn name(self) -> &'static str {
        match self {
            Stage::Running => "running",
            Stage::Completed => "completed",
            Stage::Failed => "failed",
            Stage::Cancelled => "cancelled",
        }
    }
}

/// One operation.
struct Operation {
    id: String,
    stage: Stage,
    created_at: SystemTime,
    completed_at: Option<SystemTime>,
    completed_test_cases: i32,
    total_test_cases: i32,
    error: Option<ApiError>,
    /// Stops the evaluation (while it runs).
    cancel: Option<oneshot::Sender<()>>,
}

impl Operation {
    /// The message, without the result (GetOperation adds it).
    fn message(&self) -> pb::EvaluationOperation {
        pb::EvaluationOperation {
            operation_id: self.id.clone(),
            status: self.stage.name().into(),
            created_at: Some(self.created_at.into()),
            // The evaluation starts as the operation is created.
            started_at: Some(self.created_at.into()),
            completed_at: self.completed_at.map(Into::into),
            progress: Some(pb::EvaluationProgress {
                evaluation_id: self.id.clone(),
                status: self.stage.name().into(),
                completed_test_cases: self.completed_test_cases,
                total_test_cases: self.total_test_cases,
                final_result: None,
                test_case_result: None,
            }),
            result: None,
            error: self.error.as_ref().map(|error| pb::FepError {
                code: error.kind.name().into(),
                message: error.message.clone(),
                details: None,
            }),
            metadata: None,
        }
    }
}

/// The operations kept, by the order they were started in.
#[derive(Default)]
struct Registry {
    operations: BTreeMap<u64, Operation>,
    /// The finished ones, oldest first.
    finished: VecDeque<u64>,
    next: u64,
}

impl Registry {
    /// The number of operation `id`.
    fn number_of(&self, id: &str) -> Option<u64> {
        self.operations
            .iter()
            .find(|(_, operation)| operation.id == id)
            .map(|(number, _)| *number)
    }

    /// End the running operation `number` at `stage`; the oldest finished ones beyond
    /// [`KEEP_FINISHED`] are forgotten.
    fn finish(&mut self, number: u64, stage: Stage, error: Option<ApiError>) {
        let Some(operation) = self.operations.get_mut(&number) else {
            return;
        };
        if operation.stage != Stage::Running {
            return;
        }
        operation.stage = stage;
        operation.error = error;
        operation.completed_at = Some(SystemTime::now());
        operation.cancel = None;
        self.finished.push_back(number);
        while self.finished.len() > KEEP_FINISHED {
            if let Some(oldest) = self.finished.pop_front() {
                self.operations.remove(&oldest);
            }
        }
    }
}

fn not_found(id: &str) -> Status {
    Status::not_found(format!("no operation with id `{}`", clip(id, ECHOED)))
}

impl Operations {
    fn registry(&self) -> MutexGuard<'_, Registry> {
        lock(&self.registry)
    }
}

/// The registry, even after a panic elsewhere (its state stays consistent between statements).
fn lock(registry: &Mutex<Registry>) -> MutexGuard<'_, Registry> {
    registry
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Follow operation `number`'s evaluation of `total` test cases: count its test case results,
/// then end it as "completed" once the result is stored (the line stream ends after the summary
/// line), "failed" on an error, or stop when `cancelled` fires (CancelOperation has ended the
/// operation; dropping `lines` stops the evaluation).
async fn follow(
    registry: Arc<Mutex<Registry>>,
    number: u64,
    total: i32,
    mut lines: mpsc::Receiver<Line>,
    mut cancelled: oneshot::Receiver<()>,
) {
    // A line per test case result, then the summary line.
    let mut received = 0;
    let mut failure = None;
    loop {
        let line = tokio::select! {
            line = lines.recv() => line,
            _ = &mut cancelled => return,
        };
        match line {
            None => break,
            Some(Err(error)) => failure = Some(error),
            Some(Ok(_)) => {
                received += 1;
                if let Some(operation) = lock(&registry).operations.get_mut(&number) {
                    operation.completed_test_cases = received.min(total);
                }
            }
        }
    }
    let (stage, error) = match failure {
        Some(error) => (Stage::Failed, Some(error)),
        None if received > total => (Stage::Completed, None),
        None => (
            Stage::Failed,
            Some(ApiError::new(
                ErrorKind::Internal,
                "the evaluation ended before its result",
            )),
        ),
    };
    lock(&registry).finish(number, stage, error);
}

/// A ListOperations `filter`: empty, or `status=STATUS`.
fn parse_filter(filter: &str) -> Result<Option<Stage>, Status> {
    let filter = filter.trim();
    if filter.is_empty() {
        return Ok(None);
    }
    let wanted = filter
        .strip_prefix("status")
        .map(str::trim_start)
        .and_then(|rest| rest.strip_prefix('='))
        .map(str::trim);
    match wanted.and_then(|name| Stage::ALL.into_iter().find(|stage| stage.name() == name)) {
        Some(stage) => Ok(Some(stage)),
        None => Err(Status::invalid_argument(format!(
            "filter `{}` is not understood: expected `status=STATUS`, STATUS one of {}",
            clip(filter, ECHOED),
            Stage::ALL.map(Stage::name).join(", ")
        ))),
    }
}

#[tonic::async_trait]
impl AsyncEvaluationService for Operations {
    async fn start_evaluation(
        &self,
        request: Request<pb::EvaluationRequest>,
    ) -> Result<Response<pb::EvaluationOperation>, Status> {
        let (total_test_cases, evaluation_id, lines) =
            start_streaming(&self.engine, request).await?;
        let (cancel, cancelled) = oneshot::channel();
        let operation = Operation {
            id: evaluation_id,
            stage: Stage::Running,
            created_at: SystemTime::now(),
            completed_at: None,
            completed_test_cases: 0,
            total_test_cases,
            error: None,
            cancel: Some(cancel),
        };
        let answer = operation.message();
        let number = {
            let mut registry = self.registry();
            let number = registry.next;
            registry.next += 1;
            registry.operations.insert(number, operation);
            number
        };
        let registry = Arc::clone(&self.registry);
        tokio::spawn(follow(registry, number, total_test_cases, lines, cancelled));
        Ok(Response::new(answer))
    }

    /// The operation; a completed one with its stored result.
    async fn get_operation(
        &self,
        request: Request<pb::GetOperationRequest>,
    ) -> Result<Response<pb::EvaluationOperation>, Status> {
        let id = request.into_inner().operation_id;
        let mut operation = {
            let registry = self.registry();
            let number = registry.number_of(&id).ok_or_else(|| not_found(&id))?;
            registry.operations[&number].message()
        };
        if operation.status == Stage::Completed.name() {
            match self.engine.stored(id, GRPC_ANSWER_COPIES).await {
                Ok(document) => {
                    operation.result = Some(result_message(&document)?);
                    return Ok(holding(operation, document));
                }
                // Pruned by --retain meanwhile.
                Err(error) if error.kind == ErrorKind::NotFound => {}
                Err(error) => return Err(error.into()),
            }
        }
        Ok(Response::new(operation))
    }

    /// The newest operations first, without their results.
    async fn list_operations(
        &self,
        request: Request<pb::ListOperationsRequest>,
    ) -> Result<Response<pb::ListOperationsResponse>, Status> {
        let request = request.into_inner();
        let wanted = parse_filter(request.filter.as_deref().unwrap_or_default())?;
        let page_size = match request.page_size.unwrap_or(0) {
            0 => DEFAULT_PAGE_SIZE,
            size => usize::try_from(size)
                .map_err(|_| Status::invalid_argument(format!("page_size {size} is negative")))?
                .min(MAX_PAGE_SIZE),
        };
        let registry = self.registry();
        // A token is the number of the last operation of a page, as ListOperations wrote it.
        let before = match request.page_token.as_deref().unwrap_or_default() {
            "" => u64::MAX,
            token => (token.parse::<u64>().ok())
                .filter(|number| number.to_string() == token && *number < registry.next)
                .ok_or_else(|| {
                    Status::invalid_argument(format!(
                        "page_token `{}` is not one ListOperations gave",
                        clip(token, ECHOED)
                    ))
                })?,
        };
        let mut matching = registry
            .operations
            .range(..before)
            .rev()
            .filter(|(_, operation)| wanted.is_none_or(|stage| operation.stage == stage));
        let page: Vec<_> = matching.by_ref().take(page_size).collect();
        let next_page_token = match (page.last(), matching.next()) {
            (Some((number, _)), Some(_)) => Some(number.to_string()),
            _ => None,
        };
        Ok(Response::new(pb::ListOperationsResponse {
            operations: page
                .into_iter()
                .map(|(_, operation)| operation.message())
                .collect(),
            next_page_token,
        }))
    }

    /// Stop a running operation's evaluation: `cancelled` is false for a finished one.
    async fn cancel_operation(
        &self,
        request: Request<pb::CancelOperationRequest>,
    ) -> Result<Response<pb::CancelOperationResponse>, Status> {
        let id = request.into_inner().operation_id;
        let mut registry = self.registry();
        let number = registry.number_of(&id).ok_or_else(|| not_found(&id))?;
        let cancel = registry
            .operations
            .get_mut(&number)
            .and_then(|operation| operation.cancel.take());
        let cancelled = cancel.is_some();
        if let Some(cancel) = cancel {
            // Its follower drops the evaluation's lines, which stops it.
            let _ = cancel.send(());
            registry.finish(number, Stage::Cancelled, None);
        }
        Ok(Response::new(pb::CancelOperationResponse { cancelled }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running(registry: &mut Registry, id: &str) -> u64 {
        let number = registry.next;
        registry.next += 1;
        let operation = Operation {
            id: id.into(),
            stage: Stage::Running,
            created_at: SystemTime::now(),
            completed_at: None,
            completed_test_cases: 0,
            total_test_cases: 1,
            error: None,
            cancel: None,
        };
        registry.operations.insert(number, operation);
        number
    }

    #[test]
    fn only_the_last_finished_operations_are_kept() {
        let mut registry = Registry::default();
        let held = running(&mut registry, "held");
        for index in 0..=KEEP_FINISHED {
            let number = running(&mut registry, &format!("op{index}"));
            registry.finish(number, Stage::Completed, None);
        }
        assert_eq!(registry.operations.len(), KEEP_FINISHED + 1);
        assert_eq!(registry.number_of("op0"), None);
        assert!(registry.number_of("op1").is_some());
        // A running operation is never forgotten; once finished, it is the newest.
        assert_eq!(registry.number_of("held"), Some(held));
        registry.finish(held, Stage::Cancelled, None);
        assert_eq!(registry.number_of("op1"), None);
        assert_eq!(registry.operations[&held].stage, Stage::Cancelled);
        // Finishing twice changes nothing.
        registry.finish(held, Stage::Completed, None);
        assert_eq!(registry.operations[&held].stage, Stage::Cancelled);
    }

    #[test]
    fn the_filter_is_status_equals_a_status() {
        assert_eq!(parse_filter("").unwrap(), None);
        assert_eq!(
            parse_filter(" status = running ").unwrap(),
            Some(Stage::Running)
        );
        assert_eq!(
            parse_filter("status=cancelled").unwrap(),
            Some(Stage::Cancelled)
        );
        for refused in [
            "status",
            "status=",
            "status=RUNNING",
            "done=true",
            "status=running x",
        ] {
            assert_eq!(
                parse_filter(refused).unwrap_err().code(),
                tonic::Code::InvalidArgument,
                "{refused}"
            );
        }
    }
}
