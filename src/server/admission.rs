//! How a gRPC call is admitted ([`Admitted`], in front of both services), on its headers, before
//! a byte of its message is read or decoded:
//! - without the token (`--token-env`), it is UNAUTHENTICATED (HealthCheck stays open);
//! - a call that evaluates (`RunEvaluation`, `StreamEvaluation`, `StartEvaluation`) takes its
//!   [`Place`], as a REST request does before its body: one of `--max-concurrent`
//!   (RESOURCE_EXHAUSTED at once when none is free), and a share of `--max-memory` that grows
//!   as the message's bytes arrive, so that clients sending large messages slowly cannot hold
//!   more memory than the budget between them. The place travels to the handler in the
//!   request's extensions ([`take_place`]).
//! - a call that does not evaluate has a message of at most [`MAX_OTHER_MESSAGE`] bytes (an id,
//!   a page token): RESOURCE_EXHAUSTED past it, so that it holds no memory the budget does not
//!   count;
//! - its message must arrive within `--body-timeout` (DEADLINE_EXCEEDED), as a REST body must;
//! - once it has arrived, and before it is decoded, its wire bytes are read for what decoding
//!   takes ([`message_cost`]): more test cases than `--max-test-cases` are refused
//!   (INVALID_ARGUMENT), the memory of the decoded message is held in the place, and a message
//!   that cannot be decoded (cut short, nested too deep) is INVALID_ARGUMENT saying why.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Bytes;
use http_body::{Body, Frame, SizeHint};
use tonic::codegen::{http, BoxFuture, Service};
use tonic::server::NamedService;
use tonic::Status;

use super::engine::{too_many_test_cases, ApiError, Engine, ErrorKind, Place};
use super::message_cost::message_cost;

/// The header a call's status travels in when it has no message to answer with.
const GRPC_STATUS: &str = "grpc-status";

/// The path of the call that needs no token.
const HEALTH_CHECK: &str = "/fep.v1.EvaluationService/HealthCheck";

/// The calls that evaluate a request message.
const EVALUATING: [&str; 3] = [
    "/fep.v1.EvaluationService/RunEvaluation",
    "/fep.v1.EvaluationService/StreamEvaluation",
    "/fep.v1.AsyncEvaluationService/StartEvaluation",
];

/// The largest message of a call that does not evaluate (HealthCheck's is empty; the others
/// name an evaluation, an operation or a page).
const MAX_OTHER_MESSAGE: usize = 64 << 10;

/// Where an evaluating call's place waits for its handler.
#[derive(Clone, Default)]
struct PlaceSlot(Arc<Mutex<Option<Place>>>);

/// The place [`Admitted`] took for this call, which its message's bytes are held in.
pub fn take_place<T>(request: &tonic::Request<T>) -> Result<Place, Status> {
    request
        .extensions()
        .get::<PlaceSlot>()
        .and_then(|slot| slot.0.lock().ok()?.take())
        .ok_or_else(|| Status::internal("the call has no place among the evaluations"))
}

/// A gRPC service behind the token check, whose evaluating calls take their place before their
/// message is read.
#[derive(Clone)]
pub struct Admitted<S> {
    engine: Arc<Engine>,
    inner: S,
}

impl<S> Admitted<S> {
    /// `inner`, answering only the callers `engine` authorizes, as `engine` admits them.
    pub fn new(engine: Arc<Engine>, inner: S) -> Self {
        Admitted { engine, inner }
    }

    /// Whether a call of `path` with `headers` is refused, or the place it takes when it
    /// evaluates.
    fn admit(&self, path: &str, headers: &http::HeaderMap) -> Result<Option<PlaceSlot>, Status> {
        if path != HEALTH_CHECK {
            self.engine.authorize(
                headers.get("authorization").map(|value| value.as_bytes()),
                headers.get("x-api-key").map(|value| value.as_bytes()),
            )?;
        }
        if !EVALUATING.contains(&path) {
            return Ok(None);
        }
        let place = self.engine.admit(0)?;
        Ok(Some(PlaceSlot(Arc::new(Mutex::new(Some(place))))))
    }
}

impl<S, B> Service<http::Request<B>> for Admitted<S>
where
    S: Service<
        http::Request<HeldBody<B>>,
        Response = http::Response<tonic::body::Body>,
        Error = Infallible,
        Future = BoxFuture<http::Response<tonic::body::Body>, Infallible>,
    >,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let slot = match self.admit(request.uri().path(), request.headers()) {
            Ok(slot) => slot,
            Err(refused) => {
                let response = refused.into_http();
                return Box::pin(async move { Ok(response) });
            }
        };
        let (mut head, body) = request.into_parts();
        if let Some(slot) = &slot {
            head.extensions.insert(slot.clone());
        }
        let limits = self.engine.limits;
        let body = HeldBody::new(body, slot, limits.max_test_cases, limits.body_timeout);
        let call = self.inner.call(http::Request::from_parts(head, body));
        Box::pin(async move {
            let mut response = call.await?;
            // tonic refuses a message over --max-body as OUT_OF_RANGE (11); the FEP's status
            // table gives a size refusal RESOURCE_EXHAUSTED (8). The service itself never
            // answers OUT_OF_RANGE, so every 11 is that refusal.
            let headers = response.headers_mut();
            if headers
                .get(GRPC_STATUS)
                .is_some_and(|status| status == "11")
            {
                headers.insert(GRPC_STATUS, http::HeaderValue::from_static("8"));
            }
            Ok(response)
        })
    }
}

impl<S: NamedService> NamedService for Admitted<S> {
    const NAME: &'static str = S::NAME;
}

/// A call's message body whose bytes its place holds as they arrive (twice: tonic's buffer and
/// the copy read for its cost), read whole for what decoding it takes before tonic decodes it,
/// and given `--body-timeout` to arrive. A refusal fails the body, and tonic answers it as its
/// status. The body of a call that does not evaluate is passed on as it arrives, within
/// [`MAX_OTHER_MESSAGE`] and `--body-timeout`.
pub struct HeldBody<B> {
    inner: B,
    slot: Option<PlaceSlot>,
    max_test_cases: usize,
    body_timeout: Duration,
    /// Until the body has ended (its message read whole, and the stream half-closed, which the
    /// call waits for): when its time is up.
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The message's bytes so far (its 5-byte gRPC prefix first), until it is read whole.
    message: Option<Vec<u8>>,
    /// How many bytes have arrived.
    received: usize,
}

impl<B> HeldBody<B> {
    fn new(
        inner: B,
        slot: Option<PlaceSlot>,
        max_test_cases: usize,
        body_timeout: Duration,
    ) -> Self {
        let deadline = Some(Box::pin(tokio::time::sleep(body_timeout)));
        let message = slot.as_ref().map(|_| Vec::new());
        HeldBody {
            inner,
            slot,
            max_test_cases,
            body_timeout,
            deadline,
            message,
            received: 0,
        }
    }

    /// Hold `bytes` more in the call's place, for `what`.
    fn hold(&self, bytes: u64, what: &str) -> Result<(), ApiError> {
        let Some(slot) = &self.slot else {
            return Ok(());
        };
        match slot.0.lock() {
            Ok(mut place) => match place.as_mut() {
                Some(place) => place.hold(bytes, what),
                None => Ok(()),
            },
            Err(_) => Err(ApiError::new(ErrorKind::Internal, "a place was lost")),
        }
    }

    /// Take in `data`, the next bytes of the message: once it is whole, what decoding it
    /// takes is checked and held.
    fn arrived(&mut self, data: &[u8]) -> Result<(), ApiError> {
        self.received = self.received.saturating_add(data.len());
        if self.slot.is_none() && self.received > MAX_OTHER_MESSAGE {
            return Err(ApiError::new(
                ErrorKind::BodyTooLarge,
                format!(
                    "the message is larger than {} bytes (the most a call that does not \
                     evaluate takes)",
                    crate::text::thousands(MAX_OTHER_MESSAGE as u64)
                ),
            ));
        }
        self.hold(2 * data.len() as u64, "its message")?;
        let Some(bytes) = &mut self.message else {
            return Ok(());
        };
        bytes.extend_from_slice(data);
        let Some(prefix) = bytes.get(..5) else {
            return Ok(());
        };
        let len = u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize;
        let compressed = prefix[0] != 0;
        let Some(message) = bytes.get(5..5 + len) else {
            return Ok(());
        };
        // A compressed message is refused by tonic, undecoded.
        let cost = (!compressed).then(|| message_cost(message)).transpose();
        self.message = None;
        let cost = cost.map_err(|reason| {
            ApiError::new(
                ErrorKind::Validation,
                format!("the message is not an EvaluationRequest that can be decoded: {reason}"),
            )
        })?;
        let Some(cost) = cost else {
            return Ok(());
        };
        if cost.test_cases > self.max_test_cases {
            return Err(too_many_test_cases(cost.test_cases, self.max_test_cases));
        }
        self.hold(cost.bytes, "its message decoded")
    }
}

impl<B> Body for HeldBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let frame = match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            Poll::Ready(Some(Err(err))) => return Poll::Ready(Some(Err(err.into()))),
            Poll::Ready(None) => {
                self.deadline = None;
                return Poll::Ready(None);
            }
            Poll::Pending => {
                let late =
                    (self.deadline.as_mut()).is_some_and(|due| due.as_mut().poll(cx).is_ready());
                if !late {
                    return Poll::Pending;
                }
                self.deadline = None;
                let error = ApiError::new(
                    ErrorKind::BodyTimeout,
                    format!(
                        "the request message did not arrive within {:?} (--body-timeout)",
                        self.body_timeout
                    ),
                );
                return Poll::Ready(Some(Err(Box::new(Status::from(error)))));
            }
        };
        if let Some(data) = frame.data_ref().cloned() {
            if let Err(error) = self.arrived(&data) {
                return Poll::Ready(Some(Err(Box::new(Status::from(error)))));
            }
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::engine::MemoryBudget;
    use http_body_util::BodyExt;
    use tokio::sync::Semaphore;

    #[tokio::test]
    async fn a_message_holds_its_bytes_as_they_arrive_and_fails_past_the_budget() {
        let budget = MemoryBudget::new(3_000);
        let running = Arc::new(Semaphore::new(1));
        let place = Place::new(running.try_acquire_owned().unwrap(), &budget);
        let slot = PlaceSlot(Arc::new(Mutex::new(Some(place))));
        let kilobyte = || Ok::<_, Infallible>(Frame::data(Bytes::from(vec![b'x'; 1_000])));
        let frames = tokio_stream::iter([kilobyte(), kilobyte(), kilobyte(), kilobyte()]);
        let mut body = HeldBody::new(
            http_body_util::StreamBody::new(frames),
            Some(slot),
            10,
            Duration::from_secs(60),
        );
        // Each kilobyte is held twice: tonic's buffer, and the copy read for its cost.
        assert!(body.frame().await.unwrap().is_ok());
        let refused = body.frame().await.unwrap().unwrap_err();
        let status = refused.downcast::<Status>().unwrap();
        assert_eq!(status.code(), tonic::Code::ResourceExhausted);
        assert_eq!(
            status.message(),
            "the request would take about 4.0 kB of memory (its message); this server gives \
             requests 3,000 bytes in all (--max-memory)"
        );
    }
}
