//! The HTTP transport shared by everything that speaks HTTP (the HTTP evaluator and the LLM
//! client): one keep-alive client, JSON POSTs with capped bodies, retry advice from status codes
//! and `Retry-After` (or `retry-after-ms`), the rate limits a server announces in its
//! `x-ratelimit-*` headers, transport errors people can act on, and URLs shown without secrets.

use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, CONTENT_TYPE, RETRY_AFTER};
use reqwest::{StatusCode, Url};

use crate::protocol::{Attempt, CallError, ErrorKind, Retry, MAX_OUTPUT_BYTES};
use crate::secrets::Secrets;
use crate::text::{clip, counted, one_line, seconds, strip_os_error};

/// The URL as shown to users: user info and the query (where APIs put keys) hidden. A URL
/// without a host (`u:pw@host`, read as the scheme `u`) is shown as its text is, see
/// [`display_url_text`].
pub fn display_url(url: &Url) -> String {
    if url.host().is_none() {
        return display_url_text(url.as_str());
    }
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

/// A URL a user wrote, as shown to them (a message saying why it is refused quotes it): as
/// written when it parses with a host and holds no user info, query or fragment; else
/// [`display_url`] of it; else, when it does not parse, [`display_url_text`].
pub fn shown_url(text: &str) -> String {
    match Url::parse(text.trim()) {
        Ok(url) if url.host().is_some() => {
            let plain = url.username().is_empty()
                && url.password().is_none()
                && url.query().is_none()
                && url.fragment().is_none();
            match plain {
                true => text.trim().to_string(),
                false => display_url(&url),
            }
        }
        Ok(url) => display_url(&url),
        Err(_) => display_url_text(text),
    }
}

/// A URL that does not parse (or parses without a host), as shown to users: its scheme and
/// slashes, then what follows its last `@` (user info may hold a password, with `/`, `?` or `#`
/// in it: where the user info ends cannot be told, so all before that `@` goes), then `?…` for
/// a query or fragment.
pub fn display_url_text(text: &str) -> String {
    let (prefix, rest) = text.split_at(scheme_and_slashes(text));
    let host_on = rest.rsplit_once('@').map_or(rest, |(_, after)| after);
    match host_on.find(['?', '#']) {
        Some(at) => format!("{prefix}{}?…", &host_on[..at]),
        None => format!("{prefix}{host_on}"),
    }
}

/// The length of `text`'s scheme (`http:`, when it starts like one) and the slashes after it.
fn scheme_and_slashes(text: &str) -> usize {
    let scheme = text.split_once(':').map_or(0, |(scheme, _)| {
        let mut chars = scheme.chars();
        let named = chars
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'));
        if named {
            scheme.len() + 1
        } else {
            0
        }
    });
    let after = &text[scheme..];
    scheme + after.len() - after.trim_start_matches(['/', '\\']).len()
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

/// How long the server asks to wait: `retry-after-ms` (milliseconds, as OpenAI-compatible APIs
/// send it), else `Retry-After` (delta-seconds or an HTTP date; a past date is no delay), capped
/// at [`MAX_RETRY_AFTER_SECS`]. `None` when both are absent or unreadable.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    retry_after_at(headers, SystemTime::now())
}

/// [`retry_after`] as seen at `now`.
fn retry_after_at(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let cap = Duration::from_secs(MAX_RETRY_AFTER_SECS);
    let millis = header_text(headers, "retry-after-ms")
        .and_then(|value| value.parse::<f64>().ok())
        .and_then(|ms| non_negative_seconds(ms / 1000.0));
    if let Some(delay) = millis {
        return Some(delay.min(cap));
    }
    let value = header_text(headers, RETRY_AFTER.as_str())?;
    let delay = match value.parse::<f64>() {
        Ok(seconds) => non_negative_seconds(seconds)?,
        Err(_) => {
            let when = httpdate::parse_http_date(value).ok()?;
            when.duration_since(now).unwrap_or_default()
        }
    };
    Some(delay.min(cap))
}

/// `seconds` as a delay (capped at [`MAX_RETRY_AFTER_SECS`]); `None` when negative or not a number.
fn non_negative_seconds(seconds: f64) -> Option<Duration> {
    (seconds.is_finite() && seconds >= 0.0)
        .then(|| Duration::from_secs_f64(seconds.min(MAX_RETRY_AFTER_SECS as f64)))
}

/// A header's value, trimmed, when present and text.
fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    Some(headers.get(name)?.to_str().ok()?.trim())
}

/// One limit a server announces: `x-ratelimit-limit-KIND`, `x-ratelimit-remaining-KIND` and
/// `x-ratelimit-reset-KIND` (the time until the limit is back to full), each absent when not sent
/// or unreadable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateWindow {
    /// How many requests (or tokens) the full limit allows.
    pub limit: Option<u64>,
    /// How many are left.
    pub remaining: Option<u64>,
    /// How long until the limit is back to full.
    pub reset: Option<Duration>,
}

/// The limits a server announces for requests and for tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateLimits {
    /// `x-ratelimit-*-requests`.
    pub requests: RateWindow,
    /// `x-ratelimit-*-tokens`.
    pub tokens: RateWindow,
}

/// The `x-ratelimit-*` headers of a reply.
pub fn rate_limits(headers: &HeaderMap) -> RateLimits {
    let window = |kind: &str| {
        let count = |part: &str| {
            header_text(headers, &format!("x-ratelimit-{part}-{kind}"))?
                .parse::<u64>()
                .ok()
        };
        RateWindow {
            limit: count("limit"),
            remaining: count("remaining"),
            reset: header_text(headers, &format!("x-ratelimit-reset-{kind}")).and_then(reset_delay),
        }
    };
    RateLimits {
        requests: window("requests"),
        tokens: window("tokens"),
    }
}

/// An `x-ratelimit-reset-*` value as a delay: a Go-style duration (`20ms`, `1s`, `1.5s`, `6m0s`,
/// `1h2m3s`; units `h`, `m`, `s`, `ms`, `us`/`µs`, `ns`) or a bare number of seconds.
pub fn reset_delay(text: &str) -> Option<Duration> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let mut rest = text;
    let mut total = 0.0;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|end| *end > 0)?;
        let number: f64 = rest[..number_end].parse().ok()?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds_per_unit = match &rest[..unit_end] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        total += number * seconds_per_unit;
        rest = &rest[unit_end..];
    }
    if text.is_empty() {
        return None;
    }
    Duration::try_from_secs_f64(total).ok()
}

/// Read a response body, failing past [`MAX_OUTPUT_BYTES`] or, as the whole exchange does, past
/// `timeout`.
pub async fn read_body(
    mut response: reqwest::Response,
    timeout: Duration,
) -> Result<Vec<u8>, CallError> {
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
            // A server that answered but sends its body too slowly.
            Err(err) if err.is_timeout() => {
                return Err(CallError::new(
                    ErrorKind::Timeout,
                    format!(
                        "no whole answer within {}: {} of the response had arrived",
                        seconds(timeout),
                        counted(body.len(), "byte", "bytes")
                    ),
                ));
            }
            Err(err) => {
                return Err(CallError::new(
                    ErrorKind::Transport,
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

/// What a server answered to one JSON POST: its status and headers (none when no answer came)
/// and the body of a 2xx reply or the failed attempt.
pub struct Answer {
    /// The HTTP status, when the server answered.
    pub status: Option<StatusCode>,
    /// The reply's headers (empty when the server did not answer).
    pub headers: HeaderMap,
    /// The body of a 2xx reply, or the failed attempt.
    pub body: Result<Vec<u8>, Attempt>,
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
    exchange_json(request, timeout, secrets).await.body
}

/// [`send_json`], with the reply's status and headers.
pub async fn exchange_json(
    request: reqwest::RequestBuilder,
    timeout: Duration,
    secrets: &Secrets,
) -> Answer {
    let response = match request
        .header(CONTENT_TYPE, "application/json")
        .send()
        .await
    {
        Ok(response) => response,
        Err(err) => {
            return Answer {
                status: None,
                headers: HeaderMap::new(),
                body: Err(transport_error(&err, timeout)),
            }
        }
    };
    let status = response.status();
    let headers = response.headers().clone();
    let body = read_reply(response, status, &headers, secrets, timeout).await;
    Answer {
        status: Some(status),
        headers,
        body,
    }
}

/// The body of a 2xx reply, or the failed attempt (see [`send_json`]).
async fn read_reply(
    response: reqwest::Response,
    status: StatusCode,
    headers: &HeaderMap,
    secrets: &Secrets,
    timeout: Duration,
) -> Result<Vec<u8>, Attempt> {
    let after = retry_after(headers);
    let body = read_body(response, timeout).await.map_err(|error| {
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
    // Causes that fail every call the same way are setup faults: preflight names them, and does
    // not suggest --skip-preflight.
    let error = match status.as_u16() {
        401 | 403 if secrets.is_empty() => CallError::setup_fault(
            ErrorKind::HttpStatus,
            format!("{message} — the server wants credentials, and none were sent"),
        ),
        401 | 403 => CallError::setup_fault(
            ErrorKind::HttpStatus,
            format!(
                "{message} — the server refused the credentials sent (the token or key is not \
                 shown)"
            ),
        ),
        300..=399 => CallError::setup_fault(
            ErrorKind::HttpStatus,
            format!(
                "{message} — redirects are not followed (the request and its credentials would \
                 go elsewhere): give the URL it points to{}",
                location(headers, secrets)
                    .map(|to| format!(" (Location: {to})"))
                    .unwrap_or_default()
            ),
        ),
        404 | 405 => CallError::setup_fault(
            ErrorKind::HttpStatus,
            format!("{message} — is the URL's path right (for a model API, the model's name)?"),
        ),
        _ => CallError::new(ErrorKind::HttpStatus, message),
    };
    Err(if is_retryable(status) {
        Attempt::transient(error, after)
    } else {
        Attempt::failed(error)
    })
}

/// Where a redirect points, without a user, password, query or fragment (they may carry a
/// token), and free of `secrets`.
fn location(headers: &HeaderMap, secrets: &Secrets) -> Option<String> {
    let to = headers.get(reqwest::header::LOCATION)?.to_str().ok()?;
    let shown = match Url::parse(to) {
        Ok(url) => display_url(&url),
        // A path on the same server.
        Err(_) => display_url_text(to),
    };
    Some(one_line(&secrets.redact(&shown)))
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
    fn a_url_that_does_not_parse_is_shown_without_its_user_info_or_query() {
        // Forms a URL parser reads otherwise, or not at all: the password goes all the same.
        for (url, shown) in [
            ("http://u:s3cret@[bad/v1?key=k", "http://[bad/v1?…"),
            ("http://a@b@host/x", "http://host/x"),
            ("/next?token=t#f", "/next?…"),
            ("/next", "/next"),
            ("localhost:8000", "localhost:8000"),
            ("http:/u:pw@[bad/v1", "http:/[bad/v1"),
            ("http://u:p/w@host/v1", "http://host/v1"),
            ("https:\\\\u:pw@[bad", "https:\\\\[bad"),
            ("u:pw@host/x", "u:host/x"),
            ("//u:pw@other.example/x?q=1", "//other.example/x?…"),
            (
                "https://u:pw@example.com/v1?k=a",
                "https://example.com/v1?…",
            ),
            ("http://alice:pa#ss@127.0.0.1:9/v1", "http://127.0.0.1:9/v1"),
            ("http://bob:hun?ter2@[::1/v1", "http://[::1/v1"),
        ] {
            assert_eq!(display_url_text(url), shown, "{url}");
        }
        // A URL that parses keeps what is not a secret, an `@` in its path too.
        for (url, shown) in [
            ("ftp://example.com", "ftp://example.com"),
            (
                " http://127.0.0.1:9/api@v2/score ",
                "http://127.0.0.1:9/api@v2/score",
            ),
            ("http://u:pw@h/x?k=1", "http://h/x?…"),
            ("http://alice:pa#ss@127.0.0.1:9/v1", "http://127.0.0.1:9/v1"),
        ] {
            assert_eq!(shown_url(url), shown, "{url}");
        }
        let hostless = Url::parse("u:pw@host/x").unwrap();
        assert_eq!(display_url(&hostless), "u:host/x");
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

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn retry_after_ms_is_milliseconds_and_comes_first() {
        let now = SystemTime::now();
        let ms = |value| retry_after_at(&headers(&[("retry-after-ms", value)]), now);
        assert_eq!(ms("250"), Some(Duration::from_millis(250)));
        assert_eq!(ms("1.5"), Some(Duration::from_micros(1500)));
        assert_eq!(ms("0"), Some(Duration::ZERO));
        assert_eq!(
            ms("3600000"),
            Some(Duration::from_secs(MAX_RETRY_AFTER_SECS))
        );
        assert_eq!(ms("-5"), None);
        assert_eq!(ms("soon"), None);
        let both = headers(&[("retry-after-ms", "20"), ("retry-after", "1")]);
        assert_eq!(retry_after_at(&both, now), Some(Duration::from_millis(20)));
        // An unreadable retry-after-ms leaves Retry-After in charge.
        let bad_ms = headers(&[("retry-after-ms", "x"), ("retry-after", "2")]);
        assert_eq!(retry_after_at(&bad_ms, now), Some(Duration::from_secs(2)));
    }

    #[test]
    fn reset_delays_in_the_openai_duration_format() {
        let ms = |ms| Some(Duration::from_millis(ms));
        assert_eq!(reset_delay("1s"), ms(1000));
        assert_eq!(reset_delay("6m0s"), ms(360_000));
        assert_eq!(reset_delay("20ms"), ms(20));
        assert_eq!(reset_delay("1.5s"), ms(1500));
        assert_eq!(reset_delay("1h2m3.5s"), ms(3_723_500));
        assert_eq!(reset_delay("0s"), ms(0));
        assert_eq!(reset_delay("250us"), Some(Duration::from_micros(250)));
        assert_eq!(reset_delay("2"), ms(2000), "a bare number is seconds");
        assert_eq!(reset_delay(" 0.5 "), ms(500));
        for bad in ["", "s", "1x", "1.2.3s", "ms20", "-1s", "-1", "1 s", "1e300"] {
            assert_eq!(reset_delay(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn rate_limit_headers_for_requests_and_tokens() {
        let limits = rate_limits(&headers(&[
            ("x-ratelimit-limit-requests", "1200"),
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "50ms"),
            ("x-ratelimit-remaining-tokens", "149000"),
            ("x-ratelimit-reset-tokens", "6m0s"),
            ("x-ratelimit-limit-tokens", "many"),
        ]));
        assert_eq!(
            limits,
            RateLimits {
                requests: RateWindow {
                    limit: Some(1200),
                    remaining: Some(0),
                    reset: Some(Duration::from_millis(50)),
                },
                tokens: RateWindow {
                    limit: None,
                    remaining: Some(149_000),
                    reset: Some(Duration::from_secs(360)),
                },
            }
        );
        assert_eq!(rate_limits(&HeaderMap::new()), RateLimits::default());
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
