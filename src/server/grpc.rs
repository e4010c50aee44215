//! The FEP gRPC service (section 5.2, `fep.v1.EvaluationService`) with tonic: RunEvaluation,
//! GetEvaluation, HealthCheck and StreamEvaluation, over the same engine as the REST API. An
//! invalid request is INVALID_ARGUMENT whose message lists every problem; a missing or wrong
//! token is UNAUTHENTICATED, decided on the call's headers before its message is read
//! ([`Admitted`], which guards the AsyncEvaluationService too; HealthCheck stays open).

use std::sync::Arc;

use prost::Message;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::admission::{take_place, Admitted};
use super::convert::{request_count, request_to_json, run_result, test_case_result};
use super::engine::{blocking, ApiError, Engine, ErrorKind, Line, Place, FEP_VERSION};
use super::pb;
use super::pb::evaluation_service_server::{EvaluationService, EvaluationServiceServer};
use crate::fep;

/// The service over `engine`, taking messages up to `--max-body` bytes from the callers that
/// carry the token.
pub fn service(engine: Arc<Engine>) -> Admitted<EvaluationServiceServer<Grpc>> {
    let max_body = engine.limits.max_body;
    let inner = EvaluationServiceServer::new(Grpc {
        engine: Arc::clone(&engine),
    })
    .max_decoding_message_size(max_body)
    .max_encoding_message_size(usize::MAX);
    Admitted::new(engine, inner)
}

/// The EvaluationService implementation.
pub struct Grpc {
    engine: Arc<Engine>,
}

impl From<ApiError> for Status {
    fn from(error: ApiError) -> Self {
        Status::new(error.kind.grpc_code(), error.message)
    }
}

/// How many times the memory of an answer over REST a gRPC call's answer takes: the stored
/// document, its parsed values and the message made of them. (100,000 test cases times 10
/// checks took 7.6 GB over gRPC where the REST answer was estimated at 611 MB.)
pub const GRPC_ANSWER_COPIES: u64 = 13;

/// The request `message` validated, once `place` holds the memory its JSON document takes (the
/// message itself arrived within `--max-body`).
fn prepare(
    engine: &Engine,
    message: pb::EvaluationRequest,
    place: &mut Place,
) -> Result<fep::Request, ApiError> {
    let cost = request_count(&message).cost(message.encoded_len() as u64);
    place.hold(cost, "the JSON document of its message")?;
    engine.prepare(request_to_json(message), place, GRPC_ANSWER_COPIES)
}

/// A stored EvaluationRunResult document.
pub fn parse_document(document: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(document).map_err(|err| {
        ApiError::new(
            ErrorKind::Internal,
            format!("a stored result is not valid JSON: {err}"),
        )
    })
}

/// Start evaluating an admitted EvaluationRequest case by case (`StreamEvaluation`,
/// `StartEvaluation`): the number of its test cases, its evaluation id and its result lines.
pub async fn start_streaming(
    engine: &Arc<Engine>,
    request: Request<pb::EvaluationRequest>,
) -> Result<(i32, String, mpsc::Receiver<Line>), Status> {
    let place = take_place(&request)?;
    let message = request.into_inner();
    let total = i32::try_from(message.test_cases.len()).unwrap_or(i32::MAX);
    let (evaluation_id, lines) = engine
        .evaluate_streaming(place, move |engine, place| prepare(engine, message, place))
        .await?;
    Ok((total, evaluation_id, lines))
}

#[tonic::async_trait]
impl EvaluationService for Grpc {
    async fn run_evaluation(
        &self,
        request: Request<pb::EvaluationRequest>,
    ) -> Result<Response<pb::EvaluationRunResult>, Status> {
        let place = take_place(&request)?;
        let message = request.into_inner();
        let document = self
            .engine
            .run(place, move |engine, place| prepare(engine, message, place))
            .await?;
        // A large result takes a while to convert.
        let result = blocking(move || parse_document(&document).map(|run| run_result(&run)));
        Ok(Response::new(result.await?))
    }

    async fn get_evaluation(
        &self,
        request: Request<pb::GetEvaluationRequest>,
    ) -> Result<Response<pb::EvaluationRunResult>, Status> {
        let document = self
            .engine
            .stored(request.into_inner().evaluation_id, GRPC_ANSWER_COPIES)
            .await?;
        Ok(Response::new(run_result(&parse_document(&document)?)))
    }

    async fn health_check(
        &self,
        _request: Request<pb::HealthCheckRequest>,
    ) -> Result<Response<pb::HealthCheckResponse>, Status> {
        Ok(Response::new(pb::HealthCheckResponse {
            status: "healthy".into(),
            version: FEP_VERSION.into(),
        }))
    }

    type StreamEvaluationStream = ReceiverStream<Result<pb::EvaluationProgress, Status>>;

    /// A "running" message per test case result as it completes (carrying it in
    /// `test_case_result`), then a "completed" one whose `final_result` has the summary (its
    /// `results` are the ones already sent).
    async fn stream_evaluation(
        &self,
        request: Request<pb::EvaluationRequest>,
    ) -> Result<Response<Self::StreamEvaluationStream>, Status> {
        let (total, evaluation_id, mut lines) = start_streaming(&self.engine, request).await?;
        let (progress, messages) = mpsc::channel(64);
        tokio::spawn(async move {
            let mut completed = 0;
            // Every case's result, for the completed message's `final_result.results`: a client
            // built from the FEP document's proto (which has no `test_case_result`) finds them
            // there, and in each running message's partial `final_result` as they finish.
            let mut results = Vec::new();
            while let Some(line) = lines.recv().await {
                let line = match line {
                    Ok(line) => line,
                    Err(error) => {
                        let _ = progress.send(Err(error.into())).await;
                        return;
                    }
                };
                let message = match serde_json::from_slice::<Value>(&line) {
                    Ok(summary) if summary.get("evaluation_id").is_some() => {
                        let mut final_result = run_result(&summary);
                        final_result.results = std::mem::take(&mut results);
                        Ok(pb::EvaluationProgress {
                            evaluation_id: evaluation_id.clone(),
                            status: "completed".into(),
                            completed_test_cases: completed,
                            total_test_cases: total,
                            final_result: Some(final_result),
                            test_case_result: None,
                        })
                    }
                    Ok(result) => {
                        completed += 1;
                        let result = test_case_result(&result);
                        results.push(result.clone());
                        Ok(pb::EvaluationProgress {
                            evaluation_id: evaluation_id.clone(),
                            status: "running".into(),
                            completed_test_cases: completed,
                            total_test_cases: total,
                            final_result: Some(pb::EvaluationRunResult {
                                evaluation_id: evaluation_id.clone(),
                                results: vec![result.clone()],
                                ..Default::default()
                            }),
                            test_case_result: Some(result),
                        })
                    }
                    Err(err) => Err(Status::internal(format!(
                        "a result line is not valid JSON: {err}"
                    ))),
                };
                if progress.send(message).await.is_err() {
                    // The client went away; dropping `lines` stops the evaluation.
                    return;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(messages)))
    }
}
