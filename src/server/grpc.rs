//! The FEP gRPC service (section 5.2, `fep.v1.EvaluationService`) with tonic: RunEvaluation,
//! GetEvaluation, HealthCheck and StreamEvaluation, over the same engine as the REST API. An
//! invalid request is INVALID_ARGUMENT whose message lists every problem; a missing or wrong
//! token is UNAUTHENTICATED, decided on the call's headers before its message is read
//! ([`Admitted`], which guards the AsyncEvaluationService too; HealthCheck stays open).

use std::sync::Arc;

use axum::body::Bytes;
use prost::Message;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::admission::{take_place, Admitted};
use super::connections::HeldAnswer;
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
/// document, the message made of it result by result ([`result_message`]) and the message
/// encoded. (At most 7.4 times the REST answer's estimate, measured over 2,000 to 200,000 test
/// cases of 1 to 100 checks; parsing the whole document first took 13 to 18 times.)
pub const GRPC_ANSWER_COPIES: u64 = 8;

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

/// A stored EvaluationRunResult document as the message. Its `results` are parsed and converted
/// one at a time, so beside the document only the message and the result being converted are
/// held, not the parsed values of the whole document.
pub fn result_message(document: &[u8]) -> Result<pb::EvaluationRunResult, ApiError> {
    let invalid = |err: serde_json::Error| {
        ApiError::new(
            ErrorKind::Internal,
            format!("a stored result is not valid JSON: {err}"),
        )
    };
    let split = fep::Split::of(document);
    let parts = split.as_ref().and_then(|split| {
        let results = split.elements("results")?;
        Some((split.document(&["results"])?, results))
    });
    let Some((rest, (bytes, results))) = parts else {
        let document = serde_json::from_slice::<Value>(document).map_err(invalid)?;
        return Ok(run_result(&document));
    };
    let mut message = run_result(&rest);
    message.results = results
        .iter()
        .map(|result| {
            let result =
                serde_json::from_slice::<Value>(&bytes[result.clone()]).map_err(invalid)?;
            Ok(test_case_result(&result))
        })
        .collect::<Result<_, ApiError>>()?;
    Ok(message)
}

/// `message`, the answer made of `document`, which it holds (and its share of `--max-memory`)
/// until it has been written ([`HeldAnswer`]).
pub fn holding<T>(message: T, document: Bytes) -> Response<T> {
    let mut answer = Response::new(message);
    answer.extensions_mut().insert(HeldAnswer(document));
    answer
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
        let held = document.clone();
        let result = blocking(move || result_message(&document));
        Ok(holding(result.await?, held))
    }

    async fn get_evaluation(
        &self,
        request: Request<pb::GetEvaluationRequest>,
    ) -> Result<Response<pb::EvaluationRunResult>, Status> {
        let document = self
            .engine
            .stored(request.into_inner().evaluation_id, GRPC_ANSWER_COPIES)
            .await?;
        Ok(holding(result_message(&document)?, document))
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
            loop {
                // A client that goes away while a test case's checks run (a custom check's
                // command, a model's answer) is seen at once: dropping `lines` stops the
                // evaluation and the calls in flight.
                let line = tokio::select! {
                    line = lines.recv() => line,
                    () = progress.closed() => return,
                };
                let Some(line) = line else { break };
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A stored document of `cases` test case results, each of two checks.
    fn document(cases: usize) -> Value {
        let results: Vec<Value> = (0..cases)
            .map(|index| {
                let test_case = json!({"id": format!("t{index}"), "input": "q",
                    "expected": {"city": "Paris"}, "metadata": {"tags": ["geo", index]}});
                let check = |status: &str| {
                    json!({"check_type": "exact_match", "status": status,
                        "results": {"passed": index % 2 == 0},
                        "resolved_arguments": {"actual": "Lyon", "expected": {"city": "Paris"}},
                        "evaluated_at": "2026-01-02T03:04:05Z",
                        "metadata": {"check_version": "1.0.0", "note": "a \"quoted\" é"}})
                };
                json!({"status": "completed",
                    "execution_context": {"test_case": test_case, "output": {"value": "Lyon"}},
                    "check_results": [check("completed"), check("error")],
                    "summary": {"total_checks": 2, "completed_checks": 1, "error_checks": 1,
                        "skipped_checks": 0}})
            })
            .collect();
        json!({"evaluation_id": "e-1", "started_at": "2026-01-02T03:04:05Z",
            "completed_at": "2026-01-02T03:04:06Z", "status": "completed",
            "summary": {"total_test_cases": cases, "completed_test_cases": cases,
                "error_test_cases": 0, "skipped_test_cases": 0},
            "results": results, "experiment": {"name": "x", "metadata": {"k": 1}}})
    }

    #[test]
    fn a_document_converted_result_by_result_is_the_message_of_the_whole_document() {
        for cases in [0, 1, 3, 700] {
            let whole = document(cases);
            let bytes = serde_json::to_vec_pretty(&whole).unwrap();
            let message = result_message(&bytes).expect("a message");
            assert_eq!(message, run_result(&whole), "{cases} test cases");
            assert_eq!(message.results.len(), cases);
        }
    }

    #[test]
    fn a_document_the_split_does_not_take_is_converted_whole() {
        // `results` twice: the last one is the document's, as serde_json reads it.
        let text =
            br#"{"evaluation_id": "e-2", "results": [], "results": [{"status": "completed"}]}"#;
        let message = result_message(text).expect("a message");
        assert_eq!(message.evaluation_id, "e-2");
        assert_eq!(message.results.len(), 1);
        let broken = result_message(b"{\"results\": [").unwrap_err();
        assert_eq!(broken.kind, ErrorKind::Internal);
        assert_eq!(
            broken.message,
            "a stored result is not valid JSON: EOF while parsing a list at line 1 column 13"
        );
    }
}
