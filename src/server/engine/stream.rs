//! Evaluating a request line by line (NDJSON): each test case result sent as it is written,
//! the calls of checks that call out made meanwhile, and the whole document stored at the end.

use std::io::{self, Write};
use std::sync::Arc;

use axum::body::Bytes;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::error::{ApiError, ErrorKind};
use super::evaluate::{blocking, Evaluated};
use super::place::Place;
use super::state::Engine;
use crate::evaluator::check_calls::DEFAULT_CONCURRENCY;
use crate::fep::{evaluate_request, request_calls, Layout, Request, RunWriter};

impl Engine {
    /// Evaluate the request `prepare` gives (on blocking threads) within `--request-timeout`,
    /// sending each NDJSON line (the test case results as they complete, then the summary line)
    /// to the receiver returned with the evaluation id; the whole result is stored at the end.
    /// The calls of checks that call out are made meanwhile: a test case is written once it and
    /// those before it are answered. The last item is an error instead when the deadline
    /// passes (the evaluation stops) or the result cannot be stored. A receiver that goes away
    /// stops the evaluation and the calls in flight (nothing is stored).
    pub async fn evaluate_streaming(
        self: &Arc<Self>,
        mut place: Place,
        prepare: impl FnOnce(&Engine, &mut Place) -> Result<Request, ApiError> + Send + 'static,
    ) -> Result<(String, mpsc::Receiver<Line>), ApiError> {
        let deadline = tokio::time::Instant::now() + self.limits.request_timeout;
        let engine = Arc::clone(self);
        let prepared = blocking(move || {
            let mut request = prepare(&engine, &mut place)?;
            let calls = request.calls_out().then(|| request_calls(&mut request));
            Ok((request, calls, place))
        });
        let (request, calls, place) = tokio::time::timeout_at(deadline, prepared)
            .await
            .unwrap_or_else(|_| Err(self.deadline_exceeded()))?;
        let mut answers = calls.map(|calls| {
            self.caller
                .with_window(DEFAULT_CONCURRENCY)
                .answer_in_order(calls)
        });
        let (lines, receiver) = mpsc::channel(64);
        let watched = lines.clone();
        // Past the deadline, or with the client gone, the evaluation stops at its next check.
        let gone = lines.clone();
        let stopped = move || tokio::time::Instant::now() >= deadline || gone.is_closed();
        let (started, evaluation_id) = tokio::sync::oneshot::channel();
        let engine = Arc::clone(self);
        let runtime = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            let place = place;
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
                    evaluate_request(request, writer, next_answers, &stopped).map(|_| evaluation_id)
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
            // The evaluation has stopped: its place and memory are free while the last line waits
            // (the lines not yet read are at most the channel's 64).
            drop(place);
            if let Some(error) = failure {
                // A client still reading gets it after the lines before it; one that has stopped
                // reading for ERROR_LINE_GRACE does not, and the stream just ends.
                let sent = tokio::time::timeout(ERROR_LINE_GRACE, sink.lines.send(Err(error)));
                let _ = runtime.block_on(sent);
            }
        });
        let evaluation_id = evaluation_id
            .await
            .map_err(|_| ApiError::new(ErrorKind::Internal, "the evaluation could not start"))?;
        Ok((evaluation_id, receiver))
    }
}

/// How long the error line that ends a stream waits for room behind the lines its client has
/// not read yet.
const ERROR_LINE_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// A streamed NDJSON line, or the error that ends the stream.
pub type Line = Result<Bytes, ApiError>;

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
