//! Evaluating a request into its EvaluationRunResult document on a blocking thread, within
//! `--request-timeout`, and storing it; and reading a stored one back.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::body::Bytes;

use super::error::{internal, ApiError, ErrorKind};
use super::place::{Place, Share};
use super::state::Engine;
use crate::checks::{Call, CaseAnswers, Timestamp};
use crate::fep::{evaluate_request, request_calls, Layout, Request, RunWriter};

impl Engine {
    /// Evaluate the request `prepare` gives within `--request-timeout` and store the result; the
    /// EvaluationRunResult document, once stored. `prepare` and the evaluation run on a blocking
    /// thread, the calls of checks that call out are answered between them. `place` is held
    /// until the evaluation has stopped, past the deadline too, and its memory share until the
    /// document returned is dropped (once written).
    pub async fn run(
        self: &Arc<Self>,
        mut place: Place,
        prepare: impl FnOnce(&Engine, &mut Place) -> Result<Request, ApiError> + Send + 'static,
    ) -> Result<Bytes, ApiError> {
        let waiting = Waiting::default();
        let started = Timestamp::now();
        let evaluated = async {
            let (engine, abandoned) = (Arc::clone(self), waiting.flag());
            let prepared = blocking(move || {
                let mut request = prepare(&engine, &mut place)?;
                if request.calls_out() {
                    let calls = request_calls(&mut request);
                    return Ok(Prepared::Calls(request, calls, place));
                }
                let evaluated = engine.evaluate(request, Vec::new(), started, &abandoned);
                let share = place.answered();
                evaluated.map(|evaluated| Prepared::Evaluated(evaluated, share))
            })
            .await?;
            match prepared {
                Prepared::Evaluated(evaluated, share) => Ok((evaluated, share)),
                Prepared::Calls(request, calls, place) => {
                    let answers = self.answer(calls).await;
                    let (engine, abandoned) = (Arc::clone(self), waiting.flag());
                    blocking(move || {
                        let evaluated = engine.evaluate(request, answers, started, &abandoned);
                        let share = place.answered();
                        evaluated.map(|evaluated| (evaluated, share))
                    })
                    .await
                }
            }
        };
        let (evaluated, share) = tokio::time::timeout(self.limits.request_timeout, evaluated)
            .await
            .unwrap_or_else(|_| Err(self.deadline_exceeded()))?;
        drop(waiting);
        Ok(share.with(self.store(evaluated).await?))
    }

    /// Evaluate `request` (with the answers to its calls), which `started` then, into an
    /// EvaluationRunResult document;
    /// it stops at its next check once `abandoned` is set.
    fn evaluate(
        &self,
        request: Request,
        answers: Vec<CaseAnswers>,
        started: Timestamp,
        abandoned: &AtomicBool,
    ) -> Result<Evaluated, ApiError> {
        let mut document = Awaited {
            bytes: Vec::with_capacity(1024),
            abandoned,
        };
        let writer = RunWriter::begin_at(
            &mut document,
            request.experiment.as_ref(),
            Layout::Document,
            started,
        )
        .map_err(internal)?;
        let evaluation_id = writer.evaluation_id().to_string();
        let mut answers = answers.into_iter();
        let stopped = || abandoned.load(Ordering::Relaxed);
        evaluate_request(
            request,
            writer,
            || answers.next().unwrap_or_default(),
            &stopped,
        )
        .map_err(internal)?;
        Ok(Evaluated {
            evaluation_id,
            document: Bytes::from(document.bytes),
        })
    }

    /// The error of a request past `--request-timeout`.
    pub(super) fn deadline_exceeded(&self) -> ApiError {
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
    pub(super) async fn store(&self, evaluated: Evaluated) -> Result<Bytes, ApiError> {
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

    /// The stored EvaluationRunResult document of `evaluation_id` (404 when there is none),
    /// holding its size `copies` times of `--max-memory` (the front end's copies of it) until it
    /// is dropped: 429 / 413 when the budget cannot.
    pub async fn stored(
        self: &Arc<Self>,
        evaluation_id: String,
        copies: u64,
    ) -> Result<Bytes, ApiError> {
        let engine = Arc::clone(self);
        let lookup = tokio::task::spawn_blocking(move || {
            let found = engine.store.get(&evaluation_id);
            (found, evaluation_id)
        });
        match lookup.await {
            Ok((Ok(Some(stored)), _)) => {
                let mut share = self.memory_share();
                share.hold(stored.size().saturating_mul(copies), "the stored result")?;
                let document = blocking(move || {
                    stored.document().map_err(|reason| {
                        ApiError::new(
                            ErrorKind::Internal,
                            format!("cannot read the database: {reason}"),
                        )
                    })
                })
                .await?;
                Ok(share.with(document))
            }
            Ok((Ok(None), evaluation_id)) => Err(ApiError::new(
                ErrorKind::NotFound,
                format!(
                    "no evaluation with id `{}`",
                    crate::text::clip(&evaluation_id, crate::text::ECHOED)
                ),
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
}

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
    Evaluated(Evaluated, Share),
    Calls(Request, Vec<Vec<Option<Call>>>, Place),
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

/// An evaluated request, not yet stored.
pub struct Evaluated {
    pub(super) evaluation_id: String,
    pub(super) document: Bytes,
}
