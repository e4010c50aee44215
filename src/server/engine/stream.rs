//! Evaluating a request line by line (NDJSON): each test case result sent as it is written,
//! the calls of checks that call out made meanwhile, and the whole document stored at the end
//! (gathered as the lines are sent, in the document's layout: [`StreamedDocument`]).

use std::io::{self, Write};
use std::sync::Arc;

use axum::body::Bytes;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::error::{ApiError, ErrorKind};
use super::evaluate::{blocking, Evaluated};
use super::place::Place;
use super::state::{json_size, Engine};
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
            let head = request.experiment.as_ref().map_or(0, json_size);
            let mut sink = LineSink {
                lines,
                pending: Vec::new(),
                document: StreamedDocument::new(HEAD_ROOM + head as usize),
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
            let failure = match (evaluated, sink.document.finish()) {
                (Ok(evaluation_id), Some(document)) => {
                    let evaluated = Evaluated {
                        evaluation_id,
                        document,
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
/// the line, and adds it to the document stored at the end. A flush past the deadline fails,
/// which stops the evaluation, and so does one that waits for a client that has stopped reading
/// until the deadline.
struct LineSink {
    lines: mpsc::Sender<Line>,
    pending: Vec<u8>,
    document: StreamedDocument,
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
        for line in self.pending.split(|&byte| byte == b'\n') {
            if !line.is_empty() {
                self.document.line(line);
            }
        }
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

/// Room for a stored document's head beside its experiment: `{`, `evaluation_id`, `started_at`,
/// the member names and `"results":[` take about 130 bytes.
const HEAD_ROOM: usize = 256;

/// The EvaluationRunResult document of a streamed evaluation, gathered line by line (test case
/// results, then the summary line) in the document's layout after room for its head, which is
/// known from the summary line: the document is then made in place, and the results are not
/// held twice.
struct StreamedDocument {
    buffer: Vec<u8>,
    /// The bytes left for the head at the start of `buffer`.
    room: usize,
    /// Where the last line gathered starts in `buffer` (with the separator before it).
    last: usize,
}

impl StreamedDocument {
    /// A document whose head will take at most `room` bytes (or be made whole once more).
    fn new(room: usize) -> Self {
        StreamedDocument {
            buffer: vec![b' '; room],
            room,
            last: room,
        }
    }

    /// Add one line (without its end).
    fn line(&mut self, line: &[u8]) {
        self.last = self.buffer.len();
        let first = self.last == self.room;
        self.buffer
            .extend_from_slice(if first { b"\n" } else { b",\n" });
        self.buffer.extend_from_slice(line);
    }

    /// The document, laid out as the document layout writes it, its last line taken for the
    /// summary line; `None` when that is not a JSON object (or there is none). Leaves nothing.
    fn finish(&mut self) -> Option<Bytes> {
        let mut buffer = std::mem::take(&mut self.buffer);
        if self.last == self.room && buffer.len() == self.room {
            return None;
        }
        let separator = if self.last == self.room { 1 } else { 2 };
        let summary: Map<String, Value> =
            serde_json::from_slice(&buffer[self.last + separator..]).ok()?;
        buffer.truncate(self.last);
        let member = |document: &mut Vec<u8>, key: &str| {
            if let Some(value) = summary.get(key) {
                document.extend_from_slice(format!("{}:{value},", Value::from(key)).as_bytes());
            }
        };
        let mut head = vec![b'{'];
        for key in ["evaluation_id", "started_at", "experiment"] {
            member(&mut head, key);
        }
        head.extend_from_slice(b"\"results\":[");
        buffer.extend_from_slice(b"\n],");
        for key in ["completed_at", "status", "summary"] {
            member(&mut buffer, key);
        }
        buffer.pop();
        buffer.extend_from_slice(b"}\n");
        match self.room.checked_sub(head.len()) {
            Some(start) => {
                buffer[start..self.room].copy_from_slice(&head);
                Some(Bytes::from(buffer).slice(start..))
            }
            None => {
                head.extend_from_slice(&buffer[self.room..]);
                Some(Bytes::from(head))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document gathered from NDJSON `lines` with `room` for its head.
    fn gathered(lines: &[u8], room: usize) -> Option<String> {
        let mut document = StreamedDocument::new(room);
        for line in lines
            .split(|&byte| byte == b'\n')
            .filter(|line| !line.is_empty())
        {
            document.line(line);
        }
        let made = document.finish()?;
        Some(String::from_utf8(made.to_vec()).unwrap())
    }

    #[test]
    fn lines_become_the_document() {
        let lines = b"{\"status\":\"completed\"}\n{\"status\":\"error\"}\n{\"evaluation_id\":\"e\",\"started_at\":\"s\",\"experiment\":{\"name\":\"x\"},\"completed_at\":\"c\",\"status\":\"error\",\"summary\":{\"total_test_cases\":2}}\n";
        let document = "{\"evaluation_id\":\"e\",\"started_at\":\"s\",\"experiment\":{\"name\":\"x\"},\"results\":[\n{\"status\":\"completed\"},\n{\"status\":\"error\"}\n],\"completed_at\":\"c\",\"status\":\"error\",\"summary\":{\"total_test_cases\":2}}\n";
        // Made in place, or once more when the head is larger than the room foreseen.
        assert_eq!(gathered(lines, HEAD_ROOM).as_deref(), Some(document));
        assert_eq!(gathered(lines, 10).as_deref(), Some(document));
        let empty = gathered(b"{\"evaluation_id\":\"e\",\"status\":\"completed\"}\n", 0).unwrap();
        assert_eq!(
            empty,
            "{\"evaluation_id\":\"e\",\"results\":[\n],\"status\":\"completed\"}\n"
        );
        let parsed: Value = serde_json::from_str(&empty).unwrap();
        assert_eq!(parsed["results"], serde_json::json!([]));
        assert_eq!(gathered(b"not json\n", HEAD_ROOM), None);
        assert_eq!(gathered(b"", HEAD_ROOM), None);
    }
}
