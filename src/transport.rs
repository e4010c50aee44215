//! The HTTP transport shared by everything that speaks HTTP (the HTTP evaluator and the LLM
//! client): one keep-alive client, JSON POSTs with capped bodies, retry advice from status codes
//! and `Retry-After`, transport errors people can act on, and URLs shown without secrets.

use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, CONTENT_TYPE, RETRY_AFTER};
use reqwest::{StatusCode, Url};

use crate::protocol::{Attempt, CallError, ErrorKind, Retry, MAX_OUTPUT_BYTES};
use crate::secrets::Secrets;
use crate::text::{clip, one_line, seconds, strip_os_error};

/// The URL as shown to users: user info and the query (where APIs put keys) hidden.
pub fn display_url(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    match url.query() {
        Some(_) => format!("{shown}?…"),
        None => shown.to_string(),
    }
}

/// The parts of a URL that may be secrets: its password (and the Basic credentials made from
/// it) and its query values, decoded and as written.
pub fn url_secrets(url: &Url) -> Vec<String> {
    let decoded = url.query_pairs().map(|(_, value)| value.into_owned());
    // As written in the URL too: a server echoing its request line shows them percent-encoded.
    let raw = url
        .query()
        .into_iter()
        .flat_map(|query| query.split('&'))
        .filter_map(|pair| pair.split_once('=').map(|(_, value)| value.to_string()));
    let password = url.password().map(|password| {
        // The credentials as sent: `Authorization: Basic base64(user:password)`.
        let basic = crate::secrets::base64(format!("{}:{password}", url.username()).as_bytes());
        [password.to_string(), basic]
    });
    password
        .into_iter()
        .flatten()
        .chain(decoded)
        .chain(raw)
        .collect()
}

/// The reqwest client every HTTP-speaking adapter uses: keep-alive pool sized for `-j`,
/// `--timeout` per request, no redirects followed.
pub fn build_client(timeout: Duration, concurrency: usize) -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .pool_max_idle_per_host(concurrency.max(1))
        .pool_idle_timeout(Duration::from_secs(90))
        .tcp_nodelay(true)
        .user_agent(concat!("evalctl/", env!("CARGO_PKG_VERSION")))
        // A redirect would carry headers and the URL (secrets among them) to another place; a
        // 3xx is reported as an `http_status` error instead.
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .build()?)
}

/// A transport-level failure as a call error, with the cause people can act on.
pub fn transport_error(err: &reqwest::Error, timeout: Duration) -> Attempt {
    if err.is_timeout() {
        return Attempt::failed(CallError::new(
            ErrorKind::Timeout,
            format!("no answer within {}", seconds(timeout)),
        ));
    }
    let reason = root_cause(err);
    let message = if reason.to_lowercase().contains("connection refused") {
        "connection refused — is the server running?".to_string()
    } else if err.is_connect() {
        format!("cannot connect: {reason}")
    } else {
        format!("request failed: {reason}")
    };
    Attempt::transient(CallError::new(ErrorKind::Transport, message), None)
}

fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cause: &dyn std::error::Error = err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    strip_os_error(&cause.to_string())
}

/// The longest a server's `Retry-After` may make a call wait, in seconds; a longer delay (or a
/// far-future date) is cut to this, so a misbehaving server cannot stall a run for hours.
pub const MAX_RETRY_AFTER_SECS: u64 = 60;

/// `Retry-After` as a delay: delta-seconds or an HTTP date (a past date is no delay), capped at
/// [`MAX_RETRY_AFTER_SECS`]. `None` when absent or unreadable.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    retry_after_at(headers, SystemTime::now())
}

/// [`retry_after`] as seen at `now`.
fn retry_after_at(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    let delay = if let Ok(seconds) = value.parse::<f64>() {
        if !seconds.is_finite() || seconds < 0.0 {
            return None;
        }
        Duration::from_secs_f64(seconds.min(MAX_RETRY_AFTER_SECS as f64))
    } else {
        let when = httpdate::parse_http_date(value).ok()?;
        when.duration_since(now).unwrap_or_default()
    };
    Some(delay.min(Duration::from_secs(MAX_RETRY_AFTER_SECS)))
}

/// Read a response body, failing past [`MAX_OUTPUT_BYTES`].
pub async fn read_body(mut response: reqwest::Response) -> Result<Vec<u8>, CallError> {
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > MAX_OUTPUT_BYTES {
                    return Err(CallError::new(
                        ErrorKind::InvalidOutput,
                        format!(
                            "response body exceeded {} MiB",
                            MAX_OUTPUT_BYTES / (1024 * 1024)
                        ),
                    ));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(err) => {
                let kind = if err.is_timeout() {
                    ErrorKind::Timeout
                } else {
                    ErrorKind::Transport
                };
                return Err(CallError::new(
                    kind,
                    format!("reading the response failed: {}", root_cause(&err)),
                ));
            }
        }
    }
}

/// Whether an HTTP status is worth retrying (429 and 5xx).
pub fn is_retryable(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

/// Send `request` with a JSON body (`Content-Type: application/json` is set here) and read a
/// successful (2xx) response body.
///
/// Anything else is the failed attempt: a transport failure (retryable), an unreadable or
/// oversized body, or an HTTP error status with an excerpt of its body (429 and 5xx retryable,
/// after the server's `Retry-After` when it sent one). `secrets` are removed from the body's
/// text before the excerpt is cut from it, so no part of a secret the server echoed survives.
pub async fn send_json(
    request: reqwest::RequestBuilder,
    timeout: Duration,
    secrets: &Secrets,
) -> Result<Vec<u8>, Attempt> {
    let response = request
        .header(CONTENT_TYPE, "application/json")
        .send()
        .await
        .map_err(|err| transport_error(&err, timeout))?;
    let status = response.status();
    let after = retry_after(response.headers());
    let body = read_body(response).await.map_err(|error| {
        let retry = if error.kind == ErrorKind::Transport {
            Retry::Allowed { after: None }
        } else {
            Retry::Never
        };
        Attempt {
            score: Err(error),
            side_info: Default::default(),
            retry,
            findings: crate::protocol::Findings::default(),
        }
    })?;
    if status.is_success() {
        return Ok(body);
    }
    let excerpt = clip(
        &one_line(&secrets.redact(String::from_utf8_lossy(&body).trim())),
        300,
    );
    let message = format!(
        "HTTP {status}{}",
        if excerpt.is_empty() {
            String::new()
        } else {
            format!(": {excerpt}")
        }
    );
    let error = if matches!(status.as_u16(), 401 | 403) {
        CallError::setup_fault(
            ErrorKind::HttpStatus,
            format!(
                "{message} — the server refused the credentials sent (the token or key is not \
                 shown)"
            ),
        )
    } else {
        CallError::new(ErrorKind::HttpStatus, message)
    };
    Err(if is_retryable(status) {
        Attempt::transient(error, after)
    } else {
        Attempt::failed(error)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn after(value: &str, now: SystemTime) -> Option<Duration> {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_str(value).unwrap());
        retry_after_at(&headers, now)
    }

    #[test]
    fn retry_after_delta_seconds_capped() {
        let now = SystemTime::now();
        assert_eq!(after("1", now), Some(Duration::from_secs(1)));
        assert_eq!(after(" 2.5 ", now), Some(Duration::from_millis(2500)));
        assert_eq!(after("0", now), Some(Duration::ZERO));
        let cap = Some(Duration::from_secs(MAX_RETRY_AFTER_SECS));
        assert_eq!(after("3600", now), cap);
        assert_eq!(after("1e300", now), cap);
        assert_eq!(after("-1", now), None);
        assert_eq!(after("soon", now), None);
        assert_eq!(retry_after(&HeaderMap::new()), None);
    }

    #[test]
    fn retry_after_http_dates_past_near_and_far() {
        let now = httpdate::parse_http_date("Wed, 01 Jan 2025 00:00:00 GMT").unwrap();
        assert_eq!(
            after("Tue, 31 Dec 2024 23:59:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            after("Wed, 01 Jan 2025 00:00:10 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            after("Fri, 01 Jan 2100 00:00:00 GMT", now),
            Some(Duration::from_secs(MAX_RETRY_AFTER_SECS))
        );
    }
}
