//! How a gRPC call is admitted ([`Admitted`], in front of both services), on its headers, before
//! a byte of its message is read or decoded:
//! - without the token (`--token-env`), it is UNAUTHENTICATED (HealthCheck stays open);
//! - a call that evaluates (`RunEvaluation`, `StreamEvaluation`, `StartEvaluation`) takes its
//!   [`Place`], as a REST request does before its body: one of `--max-concurrent`
//!   (RESOURCE_EXHAUSTED at once when none is free), and a share of `--max-memory` that grows
//!   as the message's bytes arrive, so that clients sending large messages slowly cannot hold
//!   more memory than the budget between them. The place travels to the handler in the
//!   request's extensions ([`take_place`]).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use axum::body::Bytes;
use http_body::{Body, Frame, SizeHint};
use tonic::codegen::{http, BoxFuture, Service};
use tonic::server::NamedService;
use tonic::Status;

use super::engine::{ApiError, Engine, ErrorKind, Place};

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
        let body = HeldBody { inner: body, slot };
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

/// A call's message body whose bytes its place holds as they arrive; past `--max-memory` the
/// body fails with the refusal, which tonic answers as its status.
pub struct HeldBody<B> {
    inner: B,
    slot: Option<PlaceSlot>,
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
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => return Poll::Pending,
        };
        if let (Some(data), Some(slot)) = (frame.data_ref(), &self.slot) {
            let held = match slot.0.lock() {
                Ok(mut place) => match place.as_mut() {
                    Some(place) => place.hold(data.len() as u64, "its message"),
                    None => Ok(()),
                },
                Err(_) => Err(ApiError::new(ErrorKind::Internal, "a place was lost")),
            };
            if let Err(error) = held {
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
        let mut body = HeldBody {
            inner: http_body_util::StreamBody::new(frames),
            slot: Some(slot),
        };
        for _ in 0..3 {
            assert!(body.frame().await.unwrap().is_ok());
        }
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
