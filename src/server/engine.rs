//! What the REST and gRPC front ends share: request validation (the wording of `fep evaluate`),
//! the limits, evaluation through the FEP engine, storing results, and the API's errors.
//!
//! Parsing and evaluating a request is CPU work: it runs on a blocking thread, never on the
//! async workers that answer `/health` and every other client, within `--request-timeout`. A
//! request past its deadline is answered `deadline_exceeded`; its evaluation stops at its next
//! write (between batches of test cases) and keeps its place among `--max-concurrent` until then.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

use super::auth::Token;
use super::store::Store;
use super::ServeChecks;
use crate::checks::{Call, CaseAnswers, Catalog, Declarations, EndpointPolicy};
use crate::evaluator::check_calls::{
    local_catalog, validator_checks, CheckCaller, DEFAULT_CONCURRENCY,
};
use crate::fep::{evaluate_request, parse_request, request_calls, Layout, Request, RunWriter};
use crate::input::document_json_reason;

/// The FEP version `/health` and HealthCheck report.
pub const FEP_VERSION: &str = "0.0.1";

/// The request limits (`--max-body`, `--max-test-cases`, `--max-concurrent`, `--body-timeout`,
/// `--request-timeout`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The largest request body, in bytes.
    pub max_body: usize,
    /// The most test cases in one request.
    pub max_test_cases: usize,
    /// The most evaluations running at once; more are turned away (429).
    pub max_concurrent: usize,
    /// The longest a REST body may take to arrive (408).
    pub body_timeout: Duration,
    /// The longest a request may take from its body's arrival to its result (503).
    pub request_timeout: Duration,
}

/// What kind of failure an [`ApiError`] is: its HTTP status, gRPC code and `error` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request is not a valid EvaluationRequest (400).
    Validation,
    /// More test cases than `--max-test-cases` (400).
    TooManyTestCases,
    /// A body over `--max-body` (413).
    BodyTooLarge,
    /// `--max-concurrent` evaluations are running (429).
    Busy,
    /// The body did not arrive within `--body-timeout` (408).
    BodyTimeout,
    /// The request was not evaluated within `--request-timeout` (503).
    DeadlineExceeded,
    /// No valid token (401).
    Unauthenticated,
    /// No such evaluation or path (404).
    NotFound,
    /// The path exists, the method does not (405).
    MethodNotAllowed,
    /// The server failed (500).
    Internal,
}

impl ErrorKind {
    /// The ErrorResponse's `error`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Validation => "validation_error",
            ErrorKind::TooManyTestCases => "too_many_test_cases",
            ErrorKind::BodyTooLarge => "payload_too_large",
            ErrorKind::Busy => "too_many_requests",
            ErrorKind::BodyTimeout => "request_timeout",
            ErrorKind::DeadlineExceeded => "deadline_exceeded",
            ErrorKind::Unauthenticated => "unauthenticated",
            ErrorKind::NotFound => "not_found",
            ErrorKind::MethodNotAllowed => "method_not_allowed",
            ErrorKind::Internal => "internal_error",
        }
    }

    /// The HTTP status code.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorKind::Validation | ErrorKind::TooManyTestCases => 400,
            ErrorKind::BodyTooLarge => 413,
            ErrorKind::Busy => 429,
            ErrorKind::BodyTimeout => 408,
            ErrorKind::DeadlineExceeded => 503,
            ErrorKind::Unauthenticated => 401,
            ErrorKind::NotFound => 404,
            ErrorKind::MethodNotAllowed => 405,
            ErrorKind::Internal => 500,
        }
    }

    /// The gRPC status code.
    pub fn grpc_code(self) -> tonic::Code {
        match self {
            ErrorKind::Validation | ErrorKind::TooManyTestCases => tonic::Code::InvalidArgument,
            ErrorKind::BodyTooLarge | ErrorKind::Busy => tonic::Code::ResourceExhausted,
            ErrorKind::BodyTimeout | ErrorKind::DeadlineExceeded => tonic::Code::DeadlineExceeded,
            ErrorKind::Unauthenticated => tonic::Code::Unauthenticated,
            ErrorKind::NotFound => tonic::Code::NotFound,
            ErrorKind::MethodNotAllowed => tonic::Code::Unimplemented,
            ErrorKind::Internal => tonic::Code::Internal,
        }
    }
}

/// A failed API call, answered as the spec's ErrorResponse (REST) or a status (gRPC).
#[derive(Debug, Clone)]
pub struct ApiError {
    /// What failed.
    pub kind: ErrorKind,
    /// For people.
    pub message: String,
    /// `details.problems`: every problem of an invalid request.
    pub problems: Vec<String>,
}

impl ApiError {
    /// An error without details.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ApiError {
        ApiError {
            kind,
            message: message.into(),
            problems: Vec::new(),
        }
    }

    /// The ErrorResponse document.
    pub fn to_json(&self) -> Vec<u8> {
        let mut response = Map::new();
        response.insert("error".into(), self.kind.name().into());
        response.insert("message".into(), self.message.clone().into());
        if !self.problems.is_empty() {
            let problems = Value::from(self.problems.clone());
            response.insert(
                "details".into(),
                Value::Object(Map::from_iter([("problems".to_string(), problems)])),
            );
        }
        let mut body = Value::Object(response).to_string().into_bytes();
        body.push(b'\n');
        body
    }
}

fn invalid_request(problems: Vec<String>) -> ApiError {
    let count = problems.len();
    ApiError {
        kind: ErrorKind::Validation,
        message: format!(
            "invalid EvaluationRequest ({count} problem{}): {}",
            if count == 1 { "" } else { "s" },
            problems.join("; ")
        ),
        problems,
    }
}

/// The state every request of both front ends shares.
pub struct Engine {
    /// The results database.
    pub store: Store,
    /// The request limits.
    pub limits: Limits,
    /// The token requests need, with `--token-env`.
    pub token: Option<Token>,
    running: Arc<Semaphore>,
    /// The custom checks and endpoints requests may use.
    checks: ServeChecks,
    /// Sends the calls of checks that call out.
    caller: CheckCaller,
    /// Catalogs of earlier requests, kept for the next ones: building one (the validators'
    /// check types) and compiling the JSONPaths a request names cost more than evaluating a
    /// small request, and most requests name the same few paths.
    spare_catalogs: Mutex<Vec<Catalog>>,
}

/// The most catalogs kept for reuse.
const SPARE_CATALOGS: usize = 16;

impl Engine {
    /// The engine over `store`.
    pub fn new(
        store: Store,
        limits: Limits,
        token: Option<Token>,
        checks: ServeChecks,
    ) -> anyhow::Result<Engine> {
        local_catalog(&checks.custom)?;
        Ok(Engine {
            store,
            running: Arc::new(Semaphore::new(limits.max_concurrent)),
            limits,
            token,
            checks,
            caller: CheckCaller::new(SERVER_CALLS)?,
            spare_catalogs: Mutex::default(),
        })
    }

    /// Whether a request with these header values may call the evaluation endpoints.
    pub fn authorize(
        &self,
        authorization: Option<&[u8]>,
        api_key: Option<&[u8]>,
    ) -> Result<(), ApiError> {
        match &self.token {
            Some(token) if !token.accepts(authorization, api_key) => Err(ApiError::new(
                ErrorKind::Unauthenticated,
                "a valid bearer token is required (Authorization: Bearer TOKEN)",
            )),
            _ => Ok(()),
        }
    }

    /// A place among the running evaluations, or 429 when `--max-concurrent` are running.
    pub fn admit(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        Arc::clone(&self.running).try_acquire_owned().map_err(|_| {
            ApiError::new(
                ErrorKind::Busy,
                format!(
                    "{} evaluations are running (--max-concurrent); try again shortly",
                    self.limits.max_concurrent
                ),
            )
        })
    }

    /// How many evaluations hold a place among `--max-concurrent` now.
    pub fn evaluations_running(&self) -> usize {
        self.limits.max_concurrent - self.running.available_permits()
    }

    /// Wait until no evaluation runs (each stops within `--request-timeout`).
    pub async fn drained(&self) {
        // --max-concurrent is at most 65,536.
        let every = u32::try_from(self.limits.max_concurrent).unwrap_or(u32::MAX);
        let _ = self.running.acquire_many(every).await;
    }

    /// What a request's checks are prepared with: the operator's custom checks and no command a
    /// client declares, only the endpoints (and their keys) the operator allows.
    fn catalog(&self) -> Catalog {
        Catalog {
            declarations: Declarations::Refused,
            endpoints: EndpointPolicy::Only(self.checks.allowed_endpoints.clone()),
            ..Catalog::with_custom(validator_checks().chain(self.checks.custom.iter().cloned()))
        }
    }

    /// The answers to the calls of a request's checks that call out.
    async fn answer(&self, calls: Vec<Vec<Option<Call>>>) -> Vec<CaseAnswers> {
        self.caller
            .with_window(DEFAULT_CONCURRENCY)
            .answer_cases(calls)
            .await
    }

    /// Parse and validate a JSON body as an EvaluationRequest.
    pub fn prepare_body(&self, body: &[u8]) -> Result<Request, ApiError> {
        let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(invalid_request(vec![
                "the request body is empty (expected an EvaluationRequest object)".into(),
            ]));
        }
        let document = serde_json::from_slice(body)
            .map_err(|err| invalid_request(vec![document_json_reason(&err)]))?;
        self.prepare(document)
    }

    /// Validate an EvaluationRequest document: every problem, worded as `fep evaluate` does.
    pub fn prepare(&self, document: Value) -> Result<Request, ApiError> {
        let test_cases = document
            .get("test_cases")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if test_cases > self.limits.max_test_cases {
            return Err(ApiError::new(
                ErrorKind::TooManyTestCases,
                format!(
                    "{test_cases} test cases in one request; this server takes at most {} \
                     (--max-test-cases)",
                    self.limits.max_test_cases
                ),
            ));
        }
        // A request cannot declare custom checks here, so parsing one changes nothing in the
        // catalog but its compiled paths: the next request may use it.
        let mut catalog = self
            .spare_catalogs
            .lock()
            .ok()
            .and_then(|mut spare| spare.pop())
            .unwrap_or_else(|| self.catalog());
        let parsed = parse_request(document, &mut catalog);
        if let Ok(mut spare) = self.spare_catalogs.lock() {
            if spare.len() < SPARE_CATALOGS {
                spare.push(catalog);
            }
        }
        parsed.map_err(|problems| {
            invalid_request(
                problems
                    .iter()
                    .map(|problem| problem.describe(""))
                    .collect(),
            )
        })
    }

    /// Evaluate the request `prepare` gives within `--request-timeout` and store the result; the
    /// EvaluationRunResult document, once stored. `prepare` and the evaluation run on a blocking
    /// thread, the calls of checks that call out are answered between them. `permit` is held
    /// until the evaluation has stopped, past the deadline too.
    pub async fn run(
        self: &Arc<Self>,
        permit: OwnedSemaphorePermit,
        prepare: impl FnOnce(&Engine) -> Result<Request, ApiError> + Send + 'static,
    ) -> Result<Bytes, ApiError> {
        let waiting = Waiting::default();
        let evaluated = async {
            let (engine, abandoned) = (Arc::clone(self), waiting.flag());
            let prepared = blocking(move || {
                let mut request = prepare(&engine)?;
                if request.calls_out() {
                    let calls = request_calls(&mut request);
                    return Ok(Prepared::Calls(request, calls, permit));
                }
                let evaluated = engine.evaluate(request, Vec::new(), &abandoned);
                drop(permit);
                evaluated.map(Prepared::Evaluated)
            })
            .await?;
            match prepared {
                Prepared::Evaluated(evaluated) => Ok(evaluated),
                Prepared::Calls(request, calls, permit) => {
                    let answers = self.answer(calls).await;
                    let (engine, abandoned) = (Arc::clone(self), waiting.flag());
                    blocking(move || {
                        let evaluated = engine.evaluate(request, answers, &abandoned);
                        drop(permit);
                        evaluated
                    })
                    .await
                }
            }
        };
        let evaluated = tokio::time::timeout(self.limits.request_timeout, evaluated)
            .await
            .unwrap_or_else(|_| Err(self.deadline_exceeded()))?;
        drop(waiting);
        self.store(evaluated).await
    }

    /// Evaluate `request` (with the answers to its calls) into an EvaluationRunResult document;
    /// it stops at its next write once `abandoned` is set.
    fn evaluate(
        &self,
        request: Request,
        answers: Vec<CaseAnswers>,
        abandoned: &AtomicBool,
    ) -> Result<Evaluated, ApiError> {
        let mut document = Awaited {
            bytes: Vec::with_capacity(1024),
            abandoned,
        };
        let writer = RunWriter::begin(&mut document, request.experiment.as_ref(), Layout::Document)
            .map_err(internal)?;
        let evaluation_id = writer.evaluation_id().to_string();
        let mut answers = answers.into_iter();
        evaluate_request(request, writer, || answers.next().unwrap_or_default())
            .map_err(internal)?;
        Ok(Evaluated {
            evaluation_id,
            document: Bytes::from(document.bytes),
        })
    }

    /// The error of a request past `--request-timeout`.
    fn deadline_exceeded(&self) -> ApiError {
        ApiError::new(
            ErrorKind::DeadlineExceeded,
            format!(
                "the request was not evaluated within {:?} (--request-timeout); its evaluation \
                 was stopped",
                self.limits.request_timeout
            ),
        )
    }

    /// Store an evaluated request; its document, once committed.
    async fn store(&self, evaluated: Evaluated) -> Result<Bytes, ApiError> {
        self.store
            .insert(evaluated.evaluation_id, evaluated.document.clone())
            .await
            .map_err(|reason| {
                ApiError::new(
                    ErrorKind::Internal,
                    format!("the result could not be stored: {reason}"),
                )
            })?;
        Ok(evaluated.document)
    }

    /// The stored EvaluationRunResult document of `evaluation_id` (404 when there is none).
    pub async fn stored(self: &Arc<Self>, evaluation_id: String) -> Result<Bytes, ApiError> {
        let engine = Arc::clone(self);
        let lookup = tokio::task::spawn_blocking(move || {
            let found = engine.store.get(&evaluation_id);
            (found, evaluation_id)
        });
        match lookup.await {
            Ok((Ok(Some(document)), _)) => Ok(document),
            Ok((Ok(None), evaluation_id)) => Err(ApiError::new(
                ErrorKind::NotFound,
                format!("no evaluation with id `{evaluation_id}`"),
            )),
            Ok((Err(reason), _)) => Err(ApiError::new(
                ErrorKind::Internal,
                format!("cannot read the database: {reason}"),
            )),
            Err(err) => Err(ApiError::new(
                ErrorKind::Internal,
                format!("cannot read the database: {err}"),
            )),
        }
    }

    /// Evaluate the request `prepare` gives (on blocking threads) within `--request-timeout`,
    /// sending each NDJSON line (the test case results as they complete, then the summary line)
    /// to the receiver returned with the evaluation id; the whole result is stored at the end.
    /// The calls of checks that call out are made meanwhile: a test case is written once it and
    /// those before it are answered. The last item is an error instead when the deadline
    /// passes (the evaluation stops) or the result cannot be stored. A receiver that goes away
    /// stops the evaluation and the calls in flight (nothing is stored).
    pub async fn evaluate_streaming(
        self: &Arc<Self>,
        permit: OwnedSemaphorePermit,
        prepare: impl FnOnce(&Engine) -> Result<Request, ApiError> + Send + 'static,
    ) -> Result<(String, mpsc::Receiver<Line>), ApiError> {
        let deadline = tokio::time::Instant::now() + self.limits.request_timeout;
        let engine = Arc::clone(self);
        let prepared = blocking(move || {
            let mut request = prepare(&engine)?;
            let calls = request.calls_out().then(|| request_calls(&mut request));
            Ok((request, calls, permit))
        });
        let (request, calls, permit) = tokio::time::timeout_at(deadline, prepared)
            .await
            .unwrap_or_else(|_| Err(self.deadline_exceeded()))?;
        let mut answers = calls.map(|calls| {
            self.caller
                .with_window(DEFAULT_CONCURRENCY)
                .answer_in_order(calls)
        });
        let (lines, receiver) = mpsc::channel(64);
        let watched = lines.clone();
        let (started, evaluation_id) = tokio::sync::oneshot::channel();
        let engine = Arc::clone(self);
        let runtime = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let mut sink = LineSink {
                lines,
                pending: Vec::new(),
                kept: Vec::new(),
                deadline,
                runtime: runtime.clone(),
            };
            let evaluated = RunWriter::begin(&mut sink, request.experiment.as_ref(), Layout::Lines)
                .and_then(|writer| {
                    let evaluation_id = writer.evaluation_id().to_string();
                    let _ = started.send(evaluation_id.clone());
                    // An answer that has not come by the deadline, or once the receiver has
                    // gone, is not waited for: the evaluation stops at the next line, and
                    // dropping `answers` stops the calls in flight (killing their commands).
                    let next_answers = || {
                        answers
                            .as_mut()
                            .and_then(|answers| {
                                let answer = async {
                                    tokio::select! {
                                        answer = answers.recv() => answer,
                                        () = watched.closed() => None,
                                    }
                                };
                                let answer = tokio::time::timeout_at(deadline, answer);
                                runtime.block_on(answer).ok().flatten()
                            })
                            .unwrap_or_default()
                    };
                    evaluate_request(request, writer, next_answers).map(|_| evaluation_id)
                });
            let failure = match (evaluated, document_from_lines(&sink.kept)) {
                (Ok(evaluation_id), Some(document)) => {
                    let evaluated = Evaluated {
                        evaluation_id,
                        document: Bytes::from(document),
                    };
                    runtime.block_on(engine.store(evaluated)).err()
                }
                _ if sink.past_deadline() => Some(engine.deadline_exceeded()),
                // The client went away.
                _ => None,
            };
            if let Some(error) = failure {
                // Unless the client has stopped reading: then the stream just ends.
                let _ = sink.lines.try_send(Err(error));
            }
        });
        let evaluation_id = evaluation_id
            .await
            .map_err(|_| ApiError::new(ErrorKind::Internal, "the evaluation could not start"))?;
        Ok((evaluation_id, receiver))
    }
}

/// A streamed NDJSON line, or the error that ends the stream.
pub type Line = Result<Bytes, ApiError>;

/// Run CPU work on a blocking thread, away from the async workers.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| ApiError::new(ErrorKind::Internal, format!("evaluation failed: {err}")))?
}

/// A request parsed on a blocking thread: evaluated there already, or with the calls of its
/// checks that call out to answer first (and its place among the running evaluations).
enum Prepared {
    Evaluated(Evaluated),
    Calls(Request, Vec<Vec<Option<Call>>>, OwnedSemaphorePermit),
}

/// Held while a request waits for its evaluation; dropped (the request answered, past its
/// deadline, or its client gone), it tells the evaluation to stop.
#[derive(Default)]
struct Waiting(Arc<AtomicBool>);

impl Waiting {
    fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.0)
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The document of an evaluation whose request still waits for it: writing fails once the
/// request has given up (see [`Waiting`]), which stops the evaluation.
struct Awaited<'a> {
    bytes: Vec<u8>,
    abandoned: &'a AtomicBool,
}

impl Write for Awaited<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.abandoned.load(Ordering::Relaxed) {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the request no longer waits for its result",
            ));
        }
        self.bytes.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The most calls of checks that call out the server makes at once, over all evaluations (each
/// makes at most [`DEFAULT_CONCURRENCY`]).
const SERVER_CALLS: usize = 64;

/// An evaluated request, not yet stored.
pub struct Evaluated {
    evaluation_id: String,
    document: Bytes,
}

fn internal(err: io::Error) -> ApiError {
    ApiError::new(ErrorKind::Internal, format!("evaluation failed: {err}"))
}

/// Where a streaming evaluation writes: each flush (the writer flushes after every line) sends
/// the line, and a copy is kept to store the whole result at the end. A flush past the deadline
/// fails, which stops the evaluation, and so does one that waits for a client that has stopped
/// reading until the deadline.
struct LineSink {
    lines: mpsc::Sender<Line>,
    pending: Vec<u8>,
    kept: Vec<u8>,
    deadline: tokio::time::Instant,
    runtime: tokio::runtime::Handle,
}

impl LineSink {
    fn past_deadline(&self) -> bool {
        tokio::time::Instant::now() >= self.deadline
    }
}

impl Write for LineSink {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        if self.past_deadline() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "past --request-timeout",
            ));
        }
        self.kept.extend_from_slice(&self.pending);
        let line = Bytes::from(std::mem::take(&mut self.pending));
        let gone = || io::Error::new(io::ErrorKind::BrokenPipe, "the client went away");
        let line = match self.lines.try_send(Ok(line)) {
            Ok(()) => return Ok(()),
            Err(mpsc::error::TrySendError::Closed(_)) => return Err(gone()),
            Err(mpsc::error::TrySendError::Full(line)) => line,
        };
        let sent = tokio::time::timeout_at(self.deadline, self.lines.send(line));
        match self.runtime.block_on(sent) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(gone()),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client read nothing until --request-timeout",
            )),
        }
    }
}

/// The EvaluationRunResult document that NDJSON `lines` (test case results, then the summary
/// line) stand for, laid out as the document layout writes it.
pub fn document_from_lines(lines: &[u8]) -> Option<Vec<u8>> {
    let lines = lines.strip_suffix(b"\n")?;
    let (cases, last) = match lines.iter().rposition(|&byte| byte == b'\n') {
        Some(end) => (&lines[..end], &lines[end + 1..]),
        None => (&lines[..0], lines),
    };
    let summary: Map<String, Value> = serde_json::from_slice(last).ok()?;
    let mut document = Vec::with_capacity(lines.len() + 64);
    document.push(b'{');
    let member = |document: &mut Vec<u8>, key: &str| {
        if let Some(value) = summary.get(key) {
            document.extend_from_slice(format!("{}:{value},", Value::from(key)).as_bytes());
        }
    };
    for key in ["evaluation_id", "started_at", "experiment"] {
        member(&mut document, key);
    }
    document.extend_from_slice(b"\"results\":[");
    if !cases.is_empty() {
        document.push(b'\n');
        // Each result is compact JSON on one line (newlines inside strings are escaped).
        for (index, case) in cases.split(|&byte| byte == b'\n').enumerate() {
            if index > 0 {
                document.extend_from_slice(b",\n");
            }
            document.extend_from_slice(case);
        }
    }
    document.extend_from_slice(b"\n],");
    for key in ["completed_at", "status", "summary"] {
        member(&mut document, key);
    }
    document.pop();
    document.extend_from_slice(b"}\n");
    Some(document)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_the_document() {
        let lines = b"{\"status\":\"completed\"}\n{\"status\":\"error\"}\n{\"evaluation_id\":\"e\",\"started_at\":\"s\",\"completed_at\":\"c\",\"status\":\"error\",\"summary\":{\"total_test_cases\":2}}\n";
        let document = document_from_lines(lines).unwrap();
        assert_eq!(
            String::from_utf8(document).unwrap(),
            "{\"evaluation_id\":\"e\",\"started_at\":\"s\",\"results\":[\n{\"status\":\"completed\"},\n{\"status\":\"error\"}\n],\"completed_at\":\"c\",\"status\":\"error\",\"summary\":{\"total_test_cases\":2}}\n"
        );
        let empty =
            document_from_lines(b"{\"evaluation_id\":\"e\",\"status\":\"completed\"}\n").unwrap();
        let parsed: Value = serde_json::from_slice(&empty).unwrap();
        assert_eq!(parsed["results"], serde_json::json!([]));
        assert_eq!(document_from_lines(b"not json\n"), None);
    }
}
