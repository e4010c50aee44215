//! Sending requests to an OpenAI-compatible API: a [`Connection`] is an endpoint made ready once
//! (its `Authorization` header, marked sensitive, and the secrets every message is scrubbed of);
//! a [`Client`] is the keep-alive HTTP client that posts to it, every request paced by the
//! endpoint's [`Pacer`]. A 429 is waited out and sent again here, without counting as a retry,
//! for the wait the server announced or else the pacer's own: at most [`MAX_WAITS`] times and
//! [`WAIT_FACTOR`] × the call's timeout of waiting per call, counted over all the call's
//! attempts ([`CallWaits`]). Any other failed post is the failed attempt the caller's retries read:
//! transport failures, 429 and 5xx (after the server's `Retry-After`) and timeouts of the API
//! are retryable.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderValue, AUTHORIZATION};
use reqwest::Url;

use super::endpoint::Endpoint;
use super::pacer::{self, Pacer};
use crate::error::bad_flag;
use crate::protocol::{Attempt, CallError, CallWaits, ErrorKind, Retry};
use crate::secrets::Secrets;
use crate::text::seconds;
use crate::transport::{
    build_client, exchange_json, transport_error, url_secrets, MAX_RETRY_AFTER_SECS,
};

/// The most 429s one call waits out before the next counts as a failed attempt.
pub const MAX_WAITS: u32 = 20;
/// One call waits out 429s for at most this many times its timeout in total.
pub const WAIT_FACTOR: u32 = 10;

/// An endpoint ready for requests.
pub struct Connection {
    endpoint: Endpoint,
    /// `Bearer KEY`, marked sensitive; `None` without a key.
    authorization: Option<HeaderValue>,
    /// The key and the base URL's secrets.
    secrets: Secrets,
    /// The pacer of the endpoint's model, shared with every other connection to it.
    pacer: Arc<Pacer>,
}

impl Connection {
    /// Make `endpoint` ready. A key that cannot go in an HTTP header is bad input naming the
    /// variable it came from.
    pub fn new(endpoint: Endpoint) -> anyhow::Result<Connection> {
        let authorization = endpoint
            .key
            .as_ref()
            .map(|key| {
                HeaderValue::from_str(&format!("Bearer {}", key.expose())).map(|mut value| {
                    value.set_sensitive(true);
                    value
                })
            })
            .transpose()
            .map_err(|_| {
                bad_flag(
                    &endpoint.key_env,
                    "the API key is not usable in an HTTP header",
                )
            })?;
        let secrets = Secrets::new(Connection::secrets_of(&endpoint));
        let pacer = pacer::shared(&endpoint.base, &endpoint.model);
        Ok(Connection {
            endpoint,
            authorization,
            secrets,
            pacer,
        })
    }

    /// What requests to `endpoint` send that must never be shown: the key and the base URL's
    /// secrets (for [`Secrets::new`]).
    pub fn secrets_of(endpoint: &Endpoint) -> Vec<String> {
        let url_secrets = url_secrets(&endpoint.base);
        endpoint
            .key
            .iter()
            .map(|key| key.expose().to_string())
            .chain(Secrets::sent_values(url_secrets.iter().map(String::as_str)))
            .collect()
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// What every message about this connection is scrubbed of.
    pub fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// `request` with the key.
    fn authorize(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.authorization {
            Some(authorization) => request.header(AUTHORIZATION, authorization.clone()),
            None => request,
        }
    }
}

/// The keep-alive HTTP client every model call goes through.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
}

impl Client {
    /// A client for at most `concurrency` requests at once, none longer than `timeout` unless a
    /// request says otherwise.
    pub fn new(timeout: Duration, concurrency: usize) -> anyhow::Result<Client> {
        Ok(Client {
            http: build_client(timeout, concurrency)?,
        })
    }

    /// One POST of the JSON `body` to `url` of `connection`, within `timeout`, paced by the
    /// connection's pacer: the body of a 2xx reply, or the failed attempt (a timeout of the API
    /// retryable like a 5xx), each free of the connection's secrets (a server may echo the key,
    /// and what a reply holds reaches results, reports and caches). A 429 with an
    /// announced limit is sent again once the pacer lets it (see the module documentation).
    pub async fn post(
        &self,
        connection: &Connection,
        url: &Url,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<Vec<u8>, Attempt> {
        let budget = timeout.saturating_mul(WAIT_FACTOR);
        let mut waits = CallWaits::of_this_call();
        // The wait of the 429 being waited out, counted in `waits` already: the pause it sets
        // is that wait.
        let mut waiting_out = Duration::ZERO;
        loop {
            let may_wait = (budget + waiting_out).saturating_sub(waits.waited);
            let permit = match connection.pacer.start(may_wait).await {
                Ok(permit) => permit,
                Err(pause) => return Err(not_sent(pause, &waits, budget)),
            };
            // A pause another call's 429 set holds this call too, and counts as its waiting.
            let held = permit.paused.saturating_sub(waiting_out);
            if !held.is_zero() {
                waits.waited += held;
                waits.record();
            }
            let request = self
                .http
                .post(url.clone())
                .timeout(timeout)
                .body(body.clone());
            let answer =
                exchange_json(connection.authorize(request), timeout, &connection.secrets).await;
            let wait = permit.finish(answer.status, &answer.headers);
            match wait {
                Some(wait) if waits.waits < MAX_WAITS && waits.waited + wait <= budget => {
                    waits.waits += 1;
                    waits.waited += wait;
                    waits.record();
                    connection.pacer.waited_out(wait);
                    waiting_out = wait;
                }
                _ => {
                    return answer
                        .body
                        .map(|reply| connection.secrets.redact_bytes(reply))
                        .map_err(|failed| {
                            let failed = connection.secrets.scrub(retry_timeouts(failed));
                            match wait {
                                Some(wait) => not_waited(failed, wait, &waits, budget),
                                None => failed,
                            }
                        })
                }
            }
        }
    }

    /// `GET {base}/models` with the key: free, so a rejected key (401) or an unreachable server
    /// shows before any call. Any other answer says nothing against the connection: some
    /// compatible servers have no models endpoint, and a key scoped to completions alone may be
    /// refused it (403) and still complete.
    pub async fn check_access(
        &self,
        connection: &Connection,
        timeout: Duration,
    ) -> Result<(), String> {
        let request = self
            .http
            .get(connection.endpoint.url_for("models"))
            .timeout(timeout);
        match connection.authorize(request).send().await {
            Ok(response) if response.status().as_u16() == 401 => {
                let (status, key_env) = (response.status().as_u16(), &connection.endpoint.key_env);
                Err(match connection.endpoint.key {
                    Some(_) => format!(
                        "the API rejected the key in {key_env} (HTTP {status} from the models \
                         endpoint)"
                    ),
                    None => format!(
                        "the API wants a key, and {key_env} is not set (HTTP {status} from the \
                         models endpoint)"
                    ),
                })
            }
            Ok(_) => Ok(()),
            Err(err) => Err(connection.secrets.redact(
                &transport_error(&err, timeout)
                    .score
                    .err()
                    .map_or_else(String::new, |error| error.message),
            )),
        }
    }
}

/// A 429 whose wait the call did not make: its message says why (the waits a call makes are
/// bounded, in number and in time). A wait past what the call may still wait is not made by a
/// retry either: the call fails now.
fn not_waited(mut failed: Attempt, wait: Duration, waits: &CallWaits, budget: Duration) -> Attempt {
    if let Err(error) = &mut failed.score {
        let why = if waits.waits >= MAX_WAITS {
            format!("after the {MAX_WAITS} waits a call makes, it waits no more")
        } else {
            failed.retry = Retry::Never;
            // A wait is read capped at the longest one made: the API may have asked for more.
            let at_least = if wait >= Duration::from_secs(MAX_RETRY_AFTER_SECS) {
                "at least "
            } else {
                ""
            };
            format!(
                "the API asks the call to wait {at_least}{}, past what it may wait in all: {} \
                 ({WAIT_FACTOR} times its time limit, --timeout), of which {} are spent",
                seconds(wait),
                seconds(budget),
                seconds(waits.waited)
            )
        };
        error.message = format!("{} ({why})", error.message);
    }
    failed
}

/// A request not sent: every request to the API is paused (a 429's `Retry-After`, an exhausted
/// limit) for `pause`, longer than the call may still wait. It fails now, as a 429 it may not
/// wait out does, and is not retried.
fn not_sent(pause: Duration, waits: &CallWaits, budget: Duration) -> Attempt {
    Attempt::failed(CallError::new(
        ErrorKind::HttpStatus,
        format!(
            "not sent: the API pauses every request for {} more (HTTP 429 Too Many Requests, or \
             a limit used up), past what the call may wait in all: {} ({WAIT_FACTOR} times its \
             time limit, --timeout), of which {} are spent",
            // Read as whole seconds: the pause was announced in them.
            seconds(Duration::from_secs(pause.as_secs_f64().ceil() as u64)),
            seconds(budget),
            seconds(waits.waited)
        ),
    ))
}

/// A failed attempt, with an API that did not answer in time made retryable like a 5xx.
fn retry_timeouts(mut failed: Attempt) -> Attempt {
    if failed
        .score
        .as_ref()
        .is_err_and(|error| error.kind == ErrorKind::Timeout)
    {
        failed.retry = Retry::Allowed { after: None };
    }
    failed
}
