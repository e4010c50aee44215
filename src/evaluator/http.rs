//! The HTTP adapter: `POST` the payload as `application/json` over one reused (keep-alive)
//! client; the response body is the evaluator's JSON result. The transport itself is shared with
//! the judge in `transport`.

use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{
    HeaderMap, HeaderName, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, TRANSFER_ENCODING,
};
use reqwest::Url;

use super::{Call, Evaluator};
use crate::error::bad_flag;
use crate::protocol::{parse_evaluator_output, Attempt, Retry, ScoreRange};
use crate::secrets::Secrets;
use crate::transport::{build_client, display_url, send_json, url_secrets};

/// `--evaluator-url` and `--header`, validated.
#[derive(Debug, Clone)]
pub struct HttpSpec {
    /// Where to POST.
    pub url: Url,
    /// Extra headers (values may be secrets: never printed).
    pub headers: HeaderMap,
}

/// The headers that say what a request's body is and where it ends: evalctl's own, for the JSON
/// payload it sends (a second `Content-Type` would make a server read it as something else).
const FRAMING: [HeaderName; 3] = [CONTENT_LENGTH, CONTENT_TYPE, TRANSFER_ENCODING];

impl HttpSpec {
    /// Validate the URL and the `Name: value` headers.
    pub fn new(url: String, headers: &[String]) -> anyhow::Result<Self> {
        let parsed = Url::parse(&url).map_err(|err| {
            bad_flag(
                "--evaluator-url",
                format!("not a valid URL: {err}{}", missing_scheme_hint(&url)),
            )
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad_flag(
                "--evaluator-url",
                format!(
                    "{}: the scheme must be http or https{}",
                    display_url(&parsed),
                    missing_scheme_hint(&url)
                ),
            ));
        }
        let mut map = HeaderMap::new();
        for header in headers {
            let (name, value) = header.split_once(':').ok_or_else(|| {
                bad_flag(
                    "--header",
                    format!("{:?}: expected \"Name: value\"", header_name_only(header)),
                )
            })?;
            let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
                bad_flag(
                    "--header",
                    format!("{:?}: invalid header name", name.trim()),
                )
            })?;
            if FRAMING.contains(&name) {
                return Err(bad_flag(
                    "--header",
                    format!("{name}: evalctl sets it for each request's body; it cannot be given"),
                ));
            }
            let mut value = HeaderValue::from_str(value.trim()).map_err(|_| {
                bad_flag(
                    "--header",
                    format!("{name}: the value contains a control character (a newline?)"),
                )
            })?;
            value.set_sensitive(true);
            map.append(name, value);
        }
        Ok(HttpSpec {
            url: parsed,
            headers: map,
        })
    }
}

/// `; did you mean http://URL?` when `url` has no scheme but starts with what looks like a host
/// (`127.0.0.1:8000/score`, `localhost:8000/score`, `example.com/score`) and reads as a URL with
/// one; else nothing. Credentials and the query
/// are not shown.
fn missing_scheme_hint(url: &str) -> String {
    let authority = url.split('/').next().unwrap_or_default();
    let looks_like_a_host = authority == "localhost" || authority.contains(['.', ':']);
    // With an `@` in it, what is a host and what a password cannot be told: no guess is shown.
    if url.contains("://") || url.contains('@') || !looks_like_a_host {
        return String::new();
    }
    match Url::parse(&format!("http://{url}")) {
        Ok(with_scheme) if with_scheme.host().is_some() => {
            format!("; did you mean {}?", display_url(&with_scheme))
        }
        _ => String::new(),
    }
}

/// What to show of a header argument as typed (its variables not expanded) in an error: its
/// name only, never its value.
pub fn header_name_only(header: &str) -> &str {
    header
        .split(|c: char| c == ':' || c == '=' || c.is_whitespace())
        .next()
        .unwrap_or_default()
}

/// POSTs each call to a URL.
pub struct HttpEvaluator {
    spec: HttpSpec,
    client: reqwest::Client,
    timeout: Duration,
    score_range: ScoreRange,
    /// `--header` values and URL credentials, removed from everything reported.
    secrets: Secrets,
}

impl HttpEvaluator {
    /// One client for the whole run: its connection pool keeps connections alive between calls.
    pub fn new(
        spec: HttpSpec,
        timeout: Duration,
        concurrency: usize,
        score_range: ScoreRange,
    ) -> anyhow::Result<Self> {
        let client = build_client(timeout, concurrency)?;
        let header_values = spec
            .headers
            .values()
            .filter_map(|value| value.to_str().ok());
        let url_secrets = url_secrets(&spec.url);
        let sent = header_values.chain(url_secrets.iter().map(String::as_str));
        let secrets = Secrets::new(Secrets::sent_values(sent));
        Ok(HttpEvaluator {
            spec,
            client,
            timeout,
            score_range,
            secrets,
        })
    }
}

#[async_trait]
impl Evaluator for HttpEvaluator {
    fn kind(&self) -> &'static str {
        "http"
    }

    fn target(&self) -> String {
        display_url(&self.spec.url)
    }

    fn describe(&self) -> String {
        format!("url {}", display_url(&self.spec.url))
    }

    async fn evaluate(&self, call: &Call<'_>) -> Attempt {
        let body = call.payload();
        let request = self
            .client
            .post(self.spec.url.clone())
            .headers(self.spec.headers.clone())
            .body(body);
        let attempt = match send_json(request, self.timeout, &self.secrets).await {
            Ok(body) => {
                let (score, side_info) = parse_evaluator_output(&body, self.score_range);
                Attempt {
                    score,
                    side_info,
                    retry: Retry::Never,
                    findings: crate::protocol::Findings::default(),
                }
            }
            Err(failed) => failed,
        };
        self.secrets.scrub(attempt)
    }
}
