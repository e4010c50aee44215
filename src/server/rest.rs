//! The FEP REST API (section 5.1) with axum: `POST /evaluate` (`?stream=true` for NDJSON),
//! `GET /evaluations/{evaluation_id}`, `GET /health`, and `GET /openapi.yaml` (the document in
//! `docs/openapi.yaml`). Every failure is the spec's ErrorResponse.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri, Version};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;

use super::engine::{ApiError, Engine, ErrorKind, Limits, Place, FEP_VERSION};
use crate::text::{clip, one_line, ECHOED};

/// The OpenAPI document of this API, as served.
const OPENAPI: &str = include_str!("../../docs/openapi.yaml");

/// The header of a streamed response that names its evaluation id.
const EVALUATION_ID_HEADER: &str = "x-evaluation-id";

/// The REST routes over `engine`.
pub fn router(engine: Arc<Engine>) -> Router {
    Router::new()
        .route("/evaluate", post(evaluate))
        .route("/evaluations/{evaluation_id}", get(get_evaluation))
        .route("/health", get(health))
        .route("/openapi.yaml", get(openapi))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(engine)
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.kind.http_status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, json_body(self.to_json())).into_response();
        if self.kind == ErrorKind::Unauthenticated {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if self.kind == ErrorKind::Busy {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

fn json_body(body: impl Into<Body>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body.into(),
    )
        .into_response()
}

/// Whether the caller may call: a request the server answers at all (see [`answered`]), with
/// the token when `--token-env` sets one.
fn authorize(engine: &Engine, head: &Parts) -> Result<(), ApiError> {
    answered(engine, head)?;
    let headers = &head.headers;
    engine.authorize(
        headers
            .get(header::AUTHORIZATION)
            .map(HeaderValue::as_bytes),
        headers.get("x-api-key").map(HeaderValue::as_bytes),
    )
}

/// Whether the server answers a request at all, the open `/health` and `/openapi.yaml` too: its
/// head names one host (see [`host_of`]), and it does not come from a web page of another site
/// (see [`refuse_web_pages`]).
fn answered(engine: &Engine, head: &Parts) -> Result<(), ApiError> {
    refuse_web_pages(engine, host_of(head)?, &head.headers)
}

/// 403 for what a web browser sends on behalf of a page of another site: a browser may post to
/// a loopback server without asking (a "simple" request: a `text/plain` or form body), and a
/// page whose name is made to resolve to 127.0.0.1 is of the same origin as the server. So a
/// request whose `Origin` is not the server's own is refused; and on a server for its own
/// machine (no `--token-env`, no `--allow-unauthenticated-remote`) so is a request whose `Host`
/// is no loopback name. Programs (curl, a client library) send no `Origin` and name the address
/// they connect to.
fn refuse_web_pages(
    engine: &Engine,
    host: Option<&str>,
    headers: &HeaderMap,
) -> Result<(), ApiError> {
    let mut origins = headers.get_all(header::ORIGIN).iter();
    if let (Some(_), Some(_)) = (origins.next(), origins.next()) {
        return Err(ApiError::new(
            ErrorKind::Forbidden,
            "a request with two Origin headers is refused",
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = String::from_utf8_lossy(origin.as_bytes());
        let own = host.is_some_and(|host| {
            origin
                .strip_prefix("http://")
                .or(origin.strip_prefix("https://"))
                == Some(host)
        });
        if !own {
            return Err(ApiError::new(
                ErrorKind::Forbidden,
                format!(
                    "a request a web page sent (Origin: {}) is refused: evalctl serve answers \
                     programs, not pages of other sites",
                    crate::text::one_line(&origin)
                ),
            ));
        }
    }
    match host {
        Some(host) if engine.loopback_only && !names_loopback(host) => Err(ApiError::new(
            ErrorKind::Forbidden,
            format!(
                "Host {} is not a loopback name (localhost, 127.0.0.1, [::1]): without \
                 --token-env this server answers requests to its loopback address only (a \
                 name made to resolve to it could be a web page's)",
                crate::text::one_line(host)
            ),
        )),
        _ => Ok(()),
    }
}

/// The host a request is for, as HTTP/1.1 says (RFC 9112 §3.2): the authority of an
/// absolute-form target, else its one `Host` header; 400 for two `Host` headers, or none in an
/// HTTP/1.1 request. `None` for an HTTP/1.0 request without one.
fn host_of(head: &Parts) -> Result<Option<&str>, ApiError> {
    if let Some(authority) = head.uri.authority() {
        return Ok(Some(authority.as_str()));
    }
    let mut hosts = head.headers.get_all(header::HOST).iter();
    match (hosts.next(), hosts.next()) {
        (Some(_), Some(_)) => Err(ApiError::new(
            ErrorKind::Validation,
            "the request has two Host headers",
        )),
        (Some(host), None) => match host.to_str() {
            Ok(host) if one_authority(host) => Ok(Some(host)),
            _ => Err(ApiError::new(
                ErrorKind::Validation,
                "the Host header names no one host (HOST or HOST:PORT)",
            )),
        },
        (None, _) if head.version == Version::HTTP_10 => Ok(None),
        (None, _) => Err(ApiError::new(
            ErrorKind::Validation,
            "an HTTP/1.1 request needs a Host header",
        )),
    }
}

/// Whether `host` is one authority as a `Host` header carries it: a host and perhaps a port of
/// digits, no user (`127.0.0.1:8080, evil.example` names two).
fn one_authority(host: &str) -> bool {
    let (name, port) = match host.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((name, rest)) => (name, rest.strip_prefix(':')),
            None => return false,
        },
        None => match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        },
    };
    let port_is_digits =
        port.is_none_or(|port| !port.is_empty() && port.bytes().all(|byte| byte.is_ascii_digit()));
    !name.is_empty()
        && port_is_digits
        && host.parse::<axum::http::uri::Authority>().is_ok()
        && !name.contains([',', '@', ' '])
}

/// Whether a `Host` header names a loopback address: `localhost`, an IPv4 address in
/// 127.0.0.0/8 or `[::1]`, with or without a port.
fn names_loopback(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(bracketed) => bracketed
            .split_once(']')
            .map_or(bracketed, |(name, _)| name),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|address| address.is_loopback())
}

/// `?stream=true|false` (absent: false), percent-encoded or not; given twice, refused as a JSON
/// key given twice is.
fn stream_requested(uri: &Uri) -> Result<bool, ApiError> {
    let mut stream = None;
    for (name, value) in form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()) {
        if name != "stream" {
            continue;
        }
        let refused = |message: String| Err(ApiError::new(ErrorKind::Validation, message));
        if stream.is_some() {
            return refused("query parameter stream is given twice: keep one".to_string());
        }
        stream = Some(match value.as_ref() {
            "true" => true,
            "false" => false,
            other => {
                return refused(format!(
                    "query parameter stream: expected true or false, found `{}`",
                    clip(&one_line(other), ECHOED)
                ))
            }
        });
    }
    Ok(stream.unwrap_or(false))
}

async fn evaluate(
    State(engine): State<Arc<Engine>>,
    request: Request,
) -> Result<Response, ApiError> {
    // The request taken whole: the Uri and HeaderMap extractors would copy its head.
    let (head, body) = request.into_parts();
    authorize(&engine, &head)?;
    let stream = stream_requested(&head.uri)?;
    // A body its head says is too large is refused before it takes a place or is waited for.
    let declared = (head.headers.get(header::CONTENT_LENGTH))
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > engine.limits.max_body as u64) {
        return Err(body_too_large(&engine.limits));
    }
    let mut place = engine.admit(0)?;
    let body = read_body(body, &engine.limits, declared, &mut place).await?;
    let prepare = move |engine: &Engine, place: &mut Place| engine.prepare_body(&body, place);
    if stream {
        let (evaluation_id, lines) = engine.evaluate_streaming(place, prepare).await?;
        // An error ends the stream as an ErrorResponse line.
        let lines = ReceiverStream::new(lines)
            .map(|line| Ok::<_, std::io::Error>(line.unwrap_or_else(|err| err.to_json().into())));
        let mut response = (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-ndjson"),
            )],
            Body::from_stream(lines),
        )
            .into_response();
        if let Ok(value) = HeaderValue::from_str(&evaluation_id) {
            response.headers_mut().insert(EVALUATION_ID_HEADER, value);
        }
        return Ok(response);
    }
    Ok(json_body(engine.run(place, prepare).await?))
}

/// 413: the body is over `--max-body` bytes.
fn body_too_large(limits: &Limits) -> ApiError {
    ApiError::new(
        ErrorKind::BodyTooLarge,
        format!(
            "the request body is over {} bytes (--max-body)",
            limits.max_body
        ),
    )
}

/// The whole body, `place` holding its bytes of `--max-memory` as they arrive (not before: a
/// client that declares a large body and sends nothing holds nothing); 413 past `--max-body`
/// bytes, 429 / 413 past `--max-memory`, 408 when it takes longer than `--body-timeout` to
/// arrive.
async fn read_body(
    body: Body,
    limits: &Limits,
    declared: Option<u64>,
    place: &mut Place,
) -> Result<Bytes, ApiError> {
    let read = async {
        let mut body = Limited::new(body, limits.max_body);
        let capacity = declared.map_or(0, |length| length as usize);
        let mut bytes = Vec::with_capacity(0);
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|err| match err.downcast_ref::<LengthLimitError>() {
                Some(_) => body_too_large(limits),
                None => ApiError::new(
                    ErrorKind::Validation,
                    format!("cannot read the request body: {err}"),
                ),
            })?;
            if let Ok(data) = frame.into_data() {
                place.hold(data.len() as u64, "its body")?;
                if bytes.capacity() == 0 {
                    bytes.reserve_exact(capacity.max(data.len()));
                }
                bytes.extend_from_slice(&data);
            }
        }
        Ok(Bytes::from(bytes))
    };
    match tokio::time::timeout(limits.body_timeout, read).await {
        Ok(read) => read,
        Err(_) => Err(ApiError::new(
            ErrorKind::BodyTimeout,
            format!(
                "the request body did not arrive within {:?} (--body-timeout)",
                limits.body_timeout
            ),
        )),
    }
}

async fn get_evaluation(
    State(engine): State<Arc<Engine>>,
    Path(evaluation_id): Path<String>,
    head: Parts,
) -> Result<Response, ApiError> {
    authorize(&engine, &head)?;
    let document = engine.stored(evaluation_id, 1).await?;
    Ok(json_body(document))
}

async fn health(State(engine): State<Arc<Engine>>, head: Parts) -> Result<Response, ApiError> {
    answered(&engine, &head)?;
    Ok(json_body(format!(
        "{{\"status\":\"healthy\",\"version\":\"{FEP_VERSION}\",\"evalctl\":\"{}\"}}\n",
        env!("CARGO_PKG_VERSION")
    )))
}

async fn openapi(State(engine): State<Arc<Engine>>, head: Parts) -> Result<Response, ApiError> {
    answered(&engine, &head)?;
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/yaml"),
        )],
        OPENAPI,
    )
        .into_response())
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::new(ErrorKind::NotFound, format!("no such path: {}", uri.path()))
}

async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        ErrorKind::MethodNotAllowed,
        format!("{method} is not allowed on {}", uri.path()),
    )
}

#[cfg(test)]
mod tests {
    use super::names_loopback;

    #[test]
    fn loopback_names_with_or_without_a_port() {
        for host in [
            "localhost",
            "LOCALHOST:8080",
            "127.0.0.1",
            "127.1.2.3:80",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(names_loopback(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "10.0.0.1:80",
            "[::2]:80",
            "127.0.0.1.evil.example",
        ] {
            assert!(!names_loopback(host), "{host}");
        }
    }
}
