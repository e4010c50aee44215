//! Pacing model calls to the limits each API announces, one pacer per base URL and model shared
//! by every caller of the process (the judge, `tasks run`, spec live judges, the FEP's checks).
//!
//! Two controls, both learned from the replies:
//! - **A rate.** When a reply carries `x-ratelimit-limit-requests`, `-remaining-requests` and
//!   `-reset-requests` (the time until the limit is back to full, as OpenAI defines it) and at
//!   least half of the limit is used, the pacer schedules starts as the server's bucket refills
//!   (a generic cell rate algorithm): `limit` requests at once at most, then one per
//!   `reset / (limit - remaining)` (the slowest of the last few readings, less a small margin).
//!   Waiting requests each get their own start, one after another, instead of all going at once
//!   when the limit frees up. A 429 moves the schedule to when the server said its next request
//!   is free (`retry-after-ms`/`Retry-After`, else `x-ratelimit-reset-requests`).
//! - **Requests in flight.** A 429 the announced rate does not explain (a server that limits
//!   requests in flight, or says only `Retry-After`) halves the number of requests in flight
//!   (once per round: 429s of requests started before the cut do not cut again); each success
//!   adds `1/limit`, and slower near the level that last drew a 429.
//!
//! A `Retry-After`/`retry-after-ms` without an announced rate, and an exhausted token limit
//! (`x-ratelimit-remaining-tokens: 0` until `x-ratelimit-reset-tokens`), pause every request to
//! the endpoint until then. A 429 that announces nothing pauses every request too: one second,
//! doubling with each such round of 429s until a request succeeds (a limit per second or minute
//! that does not say so is waited out, not retried into), for at most
//! [`UNANNOUNCED_ROUNDS`] rounds in a row; after that the 429s are failed attempts like any
//! other (a used-up quota answers 429 too). No wait is longer than [`MAX_RETRY_AFTER_SECS`].
//!
//! Each pacer also counts what the limit cost (requests, 429s, the waits made), which a command
//! reports when it ends ([`rate_limited`]).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::{StatusCode, Url};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::transport::{display_url, rate_limits, retry_after, RateLimits, MAX_RETRY_AFTER_SECS};

/// The share of the announced rate the pacer uses: a little slack absorbs requests that reach
/// the server later than planned.
const MARGIN: f64 = 0.97;
/// How many rate readings the pacer keeps; it paces at the slowest of them.
const READINGS: usize = 8;
/// Next to the level that drew the last 429, requests in flight grow this many times slower.
const PROBE_SLOWDOWN: f64 = 8.0;
/// The longest any one wait is.
const MAX_WAIT: Duration = Duration::from_secs(MAX_RETRY_AFTER_SECS);
/// The pause after a first 429 that announces nothing; each further round doubles it.
const UNANNOUNCED_WAIT: Duration = Duration::from_secs(1);
/// How many rounds of 429s that announce nothing, with no success between them, are waited out.
pub const UNANNOUNCED_ROUNDS: u32 = 5;

/// The pacers of this process, by base URL and model.
type Pacers = Mutex<HashMap<(Url, String), Arc<Pacer>>>;

/// The pacers of this process.
fn pacers() -> MutexGuard<'static, HashMap<(Url, String), Arc<Pacer>>> {
    static PACERS: OnceLock<Pacers> = OnceLock::new();
    let pacers = PACERS.get_or_init(Mutex::default);
    pacers.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The pacer of the model at `base`, shared by every caller in this process.
pub fn shared(base: &Url, model: &str) -> Arc<Pacer> {
    Arc::clone(
        pacers()
            .entry((base.clone(), model.to_string()))
            .or_default(),
    )
}

/// What one endpoint's rate limit cost this process's calls to a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimited {
    /// The base URL, as shown to users.
    pub url: String,
    /// The model, as requests name it.
    pub model: String,
    /// Requests sent.
    pub requests: u64,
    /// Requests answered 429.
    pub too_many: u64,
    /// The 429s the calls waited out and sent again (the rest were failed attempts).
    pub waited_out: u64,
    /// The time those waits took, summed over the calls.
    pub waited: Duration,
    /// Requests not sent because a pause of every request (a 429's `Retry-After`, an exhausted
    /// limit) was longer than their calls could still wait.
    pub not_sent: u64,
}

/// Every endpoint and model of this process that answered a 429, by URL and model.
pub fn rate_limited() -> Vec<RateLimited> {
    let mut limited: Vec<RateLimited> = pacers()
        .iter()
        .filter_map(|((base, model), pacer)| {
            let state = pacer.lock();
            (state.too_many > 0).then(|| RateLimited {
                url: display_url(base),
                model: model.clone(),
                requests: state.started,
                too_many: state.too_many,
                waited_out: state.waited_out,
                waited: state.waited,
                not_sent: state.not_sent,
            })
        })
        .collect();
    limited.sort_by(|a, b| (&a.url, &a.model).cmp(&(&b.url, &b.model)));
    limited
}

/// Paces the requests to one endpoint and model.
#[derive(Default)]
pub struct Pacer {
    state: Mutex<State>,
    /// Woken when a request in flight finishes.
    released: Notify,
}

/// What the pacer learned so far.
struct State {
    /// Requests in flight allowed; infinite until a 429 the rate does not explain.
    limit: f64,
    /// The number of requests in flight that drew the last such 429.
    ceiling: f64,
    in_flight: usize,
    /// Requests started so far (each one's number is its place in this count).
    started: u64,
    /// `started` when `limit` was last cut.
    cut_at: u64,
    /// Rounds of 429s that announced nothing since the last success.
    unannounced_rounds: u32,
    /// The announced rate, once known.
    rate: Option<Rate>,
    /// The last few rate readings: time per request.
    readings: VecDeque<Duration>,
    /// Requests answered 429.
    too_many: u64,
    /// 429s waited out, and the time those waits took (over all the calls).
    waited_out: u64,
    waited: Duration,
    /// The requests a pause kept from being sent.
    not_sent: u64,
    /// When the server's bucket is full again after every start taken so far.
    full_at: Option<Instant>,
    /// No request starts before this.
    pause_until: Option<Instant>,
}

impl Default for State {
    fn default() -> State {
        State {
            limit: f64::INFINITY,
            ceiling: f64::INFINITY,
            in_flight: 0,
            started: 0,
            cut_at: 0,
            unannounced_rounds: 0,
            rate: None,
            readings: VecDeque::new(),
            too_many: 0,
            waited_out: 0,
            waited: Duration::ZERO,
            not_sent: 0,
            full_at: None,
            pause_until: None,
        }
    }
}

/// An announced rate.
#[derive(Debug, Clone, Copy)]
struct Rate {
    /// Time per request, with the margin.
    interval: Duration,
    /// How much earlier than `full_at` a start may be: the time the bucket takes to refill all
    /// but one request, at the announced rate.
    burst: Duration,
}

/// A request's place among the requests in flight; finishing (or dropping) it frees the place.
pub struct Permit {
    pacer: Arc<Pacer>,
    /// The request's number.
    number: u64,
    /// How long a pause held the request before it started (see [`Pacer::start`]).
    pub paused: Duration,
}

impl Pacer {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wait for a place among the requests in flight and for this request's start time. A pause
    /// of every request (a 429's `Retry-After`, an exhausted limit) holds the request for at
    /// most `may_wait`, what its call may still wait: a longer one is not waited, and `Err`
    /// says how long it would have been (the call fails now, as a 429 it may not wait out).
    pub async fn start(self: &Arc<Self>, may_wait: Duration) -> Result<Permit, Duration> {
        let (number, mut at, paused) = loop {
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            {
                let mut state = self.lock();
                if (state.in_flight as f64) < state.limit {
                    let now = Instant::now();
                    if let Some(asked) = state.pause_past(now, may_wait) {
                        state.not_sent += 1;
                        return Err(asked);
                    }
                    state.in_flight += 1;
                    state.started += 1;
                    let paused = state.pause_past(now, Duration::ZERO).unwrap_or_default();
                    let at = state.reserve(now);
                    break (state.started - 1, at, paused);
                }
            }
            released.await;
        };
        let took_place = Instant::now();
        let mut permit = Permit {
            pacer: Arc::clone(self),
            number,
            paused,
        };
        // A pause announced while this request waited holds it too, within what it may wait.
        loop {
            tokio::time::sleep_until(at).await;
            let mut state = self.lock();
            let now = Instant::now();
            let waited = now.saturating_duration_since(took_place);
            match state.pause_until {
                Some(until) if until > now => {
                    if let Some(asked) = state.pause_past(now, may_wait.saturating_sub(waited)) {
                        // Not sent: the place is freed as the permit drops, the number unused.
                        state.started -= 1;
                        state.not_sent += 1;
                        return Err(asked);
                    }
                    permit.paused += until - now;
                    at = until;
                }
                _ => return Ok(permit),
            }
        }
    }

    /// A caller waited `wait` after a 429 and sends its request again (for [`rate_limited`]).
    pub fn waited_out(&self, wait: Duration) {
        let mut state = self.lock();
        state.waited_out += 1;
        state.waited += wait;
    }
}

impl Permit {
    /// Learn from what the server answered (`status` and `headers`; `None` when no answer came).
    /// For a 429, the wait before the request may be sent again once the pacer lets it start,
    /// without counting as a retry: the one the server announced (`Retry-After`,
    /// `retry-after-ms` or `x-ratelimit-reset-*`), else the pacer's own (see the module
    /// documentation); `None` when the 429 is to be a failed attempt.
    pub fn finish(self, status: Option<StatusCode>, headers: &HeaderMap) -> Option<Duration> {
        let now = Instant::now();
        let limits = rate_limits(headers);
        let mut state = self.pacer.lock();
        state.learn(&limits, now);
        let announced = match status {
            Some(StatusCode::TOO_MANY_REQUESTS) => {
                state.too_many += 1;
                state.rejected(self.number, retry_after(headers), &limits, now)
            }
            Some(status) if status.is_success() => {
                state.succeeded();
                None
            }
            _ => None,
        };
        drop(state);
        announced
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.pacer.lock().in_flight -= 1;
        self.pacer.released.notify_waiters();
    }
}

impl State {
    /// Take the next start: now, or when the pause ends, or when the bucket has a request.
    fn reserve(&mut self, now: Instant) -> Instant {
        let mut at = self.pause_until.filter(|until| *until > now).unwrap_or(now);
        if let Some(rate) = self.rate {
            let full_at = self.full_at.unwrap_or(now);
            if let Some(free_at) = full_at.checked_sub(rate.burst) {
                at = at.max(free_at);
            }
            self.full_at = Some(full_at.max(at) + rate.interval);
        }
        at
    }

    /// The server's bucket is full no earlier than `full_at`.
    fn full_no_earlier_than(&mut self, full_at: Instant) {
        self.full_at = Some(self.full_at.map_or(full_at, |known| known.max(full_at)));
    }

    /// Read the `x-ratelimit-*` headers of a reply.
    fn learn(&mut self, limits: &RateLimits, now: Instant) {
        let requests = limits.requests;
        if let (Some(limit), Some(remaining), Some(reset)) =
            (requests.limit, requests.remaining, requests.reset)
        {
            // Only a limit at least half used says its rate: a fixed window early on does not.
            if limit > remaining && !reset.is_zero() && remaining.saturating_mul(2) <= limit {
                let reading = reset.div_f64((limit - remaining) as f64).min(MAX_WAIT);
                if self.readings.len() == READINGS {
                    self.readings.pop_front();
                }
                self.readings.push_back(reading);
                let slowest = self.readings.iter().max().copied().unwrap_or(reading);
                // The first reading places the schedule; later replies are late by the time the
                // model took, so only 429s move it.
                if self.rate.is_none() {
                    self.full_no_earlier_than(now + reset.min(MAX_WAIT));
                }
                self.rate = Some(Rate {
                    interval: slowest.div_f64(MARGIN),
                    burst: slowest.saturating_mul(u32::try_from(limit - 1).unwrap_or(u32::MAX)),
                });
            }
        }
        if self.rate.is_none() && requests.remaining == Some(0) {
            self.pause_for(requests.reset, now);
        }
        if limits.tokens.remaining == Some(0) {
            self.pause_for(limits.tokens.reset, now);
        }
    }

    /// How long the pause of every start lasts from `now`, when that is longer than `may_wait`.
    fn pause_past(&self, now: Instant, may_wait: Duration) -> Option<Duration> {
        self.pause_until
            .map(|until| until.saturating_duration_since(now))
            .filter(|pause| *pause > may_wait)
    }

    /// Pause every start for `delay` (at most [`MAX_WAIT`]).
    fn pause_for(&mut self, delay: Option<Duration>, now: Instant) {
        if let Some(delay) = delay {
            let until = now + delay.min(MAX_WAIT);
            self.pause_until = Some(self.pause_until.map_or(until, |paused| paused.max(until)));
        }
    }

    /// A 429 to request `number`: the wait the server announced, else the pacer's own while
    /// rounds of unannounced 429s are left.
    fn rejected(
        &mut self,
        number: u64,
        after: Option<Duration>,
        limits: &RateLimits,
        now: Instant,
    ) -> Option<Duration> {
        let out_of_requests = limits.requests.remaining == Some(0);
        let out_of_tokens = limits.tokens.remaining == Some(0);
        let explained = out_of_tokens || (out_of_requests && self.rate.is_some());
        match (self.rate, after) {
            // The server's next request is free `after` from now (without `Retry-After`: when
            // its reset says, else a request's time): no start before then.
            (Some(rate), after) if out_of_requests => {
                let full_at = match (after, limits.requests.reset) {
                    (Some(after), _) => now + after + rate.burst,
                    (None, Some(reset)) => now + reset.min(MAX_WAIT),
                    (None, None) => now + rate.interval + rate.burst,
                };
                self.full_no_earlier_than(full_at);
            }
            (_, Some(after)) => self.pause_for(Some(after), now),
            (_, None) => {}
        }
        let reset = [limits.requests, limits.tokens]
            .into_iter()
            .filter_map(|window| window.reset)
            .min();
        let announced = after.or(reset);
        if !explained && number >= self.cut_at {
            let level = self.limit.min(self.in_flight as f64);
            self.ceiling = level;
            self.limit = (level / 2.0).floor().max(1.0);
            self.cut_at = self.started;
            if announced.is_none() {
                self.unannounced_rounds += 1;
            }
        }
        match announced {
            Some(wait) => Some(wait.min(MAX_WAIT)),
            None if !explained && self.unannounced_rounds <= UNANNOUNCED_ROUNDS => {
                let doubling = self.unannounced_rounds.saturating_sub(1).min(16);
                let wait = UNANNOUNCED_WAIT.saturating_mul(1 << doubling).min(MAX_WAIT);
                self.pause_for(Some(wait), now);
                Some(wait)
            }
            None => None,
        }
    }

    /// A success: one more request in flight per `limit` successes, slower near the ceiling;
    /// the next 429 that announces nothing is a first one again.
    fn succeeded(&mut self) {
        self.unannounced_rounds = 0;
        if self.limit.is_finite() {
            let slowdown = if self.limit + 1.0 >= self.ceiling {
                PROBE_SLOWDOWN
            } else {
                1.0
            };
            self.limit += 1.0 / (self.limit * slowdown);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    /// The request-limit headers: `limit` requests, `remaining` left, back to full in `reset`.
    fn request_limit(limit: &str, remaining: &str, reset: &str) -> HeaderMap {
        headers(&[
            ("x-ratelimit-limit-requests", limit),
            ("x-ratelimit-remaining-requests", remaining),
            ("x-ratelimit-reset-requests", reset),
        ])
    }

    /// A limit of 20 requests, none left, back to full in a second: 50 ms per request.
    fn exhausted() -> HeaderMap {
        request_limit("20", "0", "1s")
    }

    /// The pacer's time per request for 50 ms announced.
    fn paced() -> Duration {
        Duration::from_millis(50).div_f64(MARGIN)
    }

    /// A request's start, with all the time in the world to wait.
    async fn started(pacer: &Arc<Pacer>) -> Permit {
        match pacer.start(Duration::MAX).await {
            Ok(permit) => permit,
            Err(_) => unreachable!("no pause is longer than forever"),
        }
    }

    /// When each of `count` requests, all asking at once, was let start.
    async fn starts(pacer: &Arc<Pacer>, count: usize) -> Vec<Duration> {
        let begin = Instant::now();
        let waiting: Vec<_> = (0..count)
            .map(|_| {
                let pacer = Arc::clone(pacer);
                tokio::spawn(async move {
                    let permit = started(&pacer).await;
                    let at = begin.elapsed();
                    permit.finish(Some(StatusCode::OK), &HeaderMap::new());
                    at
                })
            })
            .collect();
        let mut times = Vec::new();
        for task in waiting {
            times.push(task.await.unwrap());
        }
        times.sort();
        times
    }

    /// A pacer whose first request was answered 200 OK with `headers`.
    async fn answered_ok(headers: &HeaderMap) -> Arc<Pacer> {
        let pacer = Arc::new(Pacer::default());
        started(&pacer).await.finish(Some(StatusCode::OK), headers);
        pacer
    }

    fn close(actual: Duration, expected: Duration) -> bool {
        actual.abs_diff(expected) < Duration::from_millis(1)
    }

    #[tokio::test(start_paused = true)]
    async fn without_announced_limits_nothing_waits() {
        let pacer = Arc::new(Pacer::default());
        assert_eq!(starts(&pacer, 5).await, [Duration::ZERO; 5]);
    }

    #[tokio::test(start_paused = true)]
    async fn an_announced_rate_spreads_starts_instead_of_sending_them_at_once() {
        let pacer = Arc::new(Pacer::default());
        let first = started(&pacer).await;
        assert_eq!(first.finish(Some(StatusCode::OK), &exhausted()), None);
        // The server's next request is free in 50 ms; then one per 50 ms, less the margin.
        let times = starts(&pacer, 4).await;
        for (n, at) in times.iter().enumerate() {
            let expected = Duration::from_millis(50) + paced() * n as u32;
            assert!(close(*at, expected), "{n}: {times:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn what_remains_is_spent_at_once_then_the_rate_holds() {
        let pacer = answered_ok(&request_limit("20", "3", "850ms")).await;
        let times = starts(&pacer, 5).await;
        // Three at once (the margin may hold the third a few milliseconds), the fourth when
        // the server has it, 50 ms on, then at the rate.
        assert_eq!(times[..2], [Duration::ZERO; 2]);
        assert!(times[2] < Duration::from_millis(5), "{times:?}");
        assert!(times[3] >= Duration::from_millis(50), "{times:?}");
        assert!(close(times[4] - times[3], paced()), "{times:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_limit_barely_used_does_not_set_a_rate() {
        // A fixed window early on: 1 of 1,200 used, a minute to go, is no rate of one a minute.
        let pacer = answered_ok(&request_limit("1200", "1199", "59s")).await;
        assert_eq!(starts(&pacer, 3).await, [Duration::ZERO; 3]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_after_pauses_every_request_and_is_an_announced_wait() {
        let pacer = Arc::new(Pacer::default());
        let rejected = started(&pacer).await;
        let waiting = started(&pacer).await;
        let after = headers(&[("retry-after-ms", "300"), ("retry-after", "1")]);
        assert_eq!(
            rejected.finish(Some(StatusCode::TOO_MANY_REQUESTS), &after),
            Some(Duration::from_millis(300))
        );
        drop(waiting);
        assert_eq!(starts(&pacer, 2).await, [Duration::from_millis(300); 2]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_429_under_an_announced_rate_moves_the_schedule_to_the_servers_next_request() {
        let pacer = answered_ok(&request_limit("20", "10", "500ms")).await;
        let rejected = started(&pacer).await;
        let wait_200_ms = headers(&[
            ("x-ratelimit-remaining-requests", "0"),
            ("retry-after-ms", "200"),
        ]);
        let wait = rejected.finish(Some(StatusCode::TOO_MANY_REQUESTS), &wait_200_ms);
        assert_eq!(wait, Some(Duration::from_millis(200)));
        // The next request goes when the server said, the one after it at the rate.
        let times = starts(&pacer, 2).await;
        assert!(close(times[0], Duration::from_millis(200)), "{times:?}");
        assert!(
            close(times[1], Duration::from_millis(200) + paced()),
            "{times:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_exhausted_token_limit_pauses_until_its_reset() {
        let pacer = Arc::new(Pacer::default());
        let first = started(&pacer).await;
        let no_tokens = headers(&[
            ("x-ratelimit-remaining-tokens", "0"),
            ("x-ratelimit-reset-tokens", "1.5s"),
        ]);
        assert_eq!(first.finish(Some(StatusCode::OK), &no_tokens), None);
        assert_eq!(starts(&pacer, 2).await, [Duration::from_millis(1500); 2]);
        // A far reset waits at most the cap.
        let first = started(&pacer).await;
        let far = headers(&[
            ("x-ratelimit-remaining-tokens", "0"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ]);
        first.finish(Some(StatusCode::OK), &far);
        assert_eq!(starts(&pacer, 1).await, [MAX_WAIT]);
    }

    #[tokio::test(start_paused = true)]
    async fn unexplained_429s_halve_requests_in_flight_once_per_round() {
        let pacer = Arc::new(Pacer::default());
        let mut held = Vec::new();
        for _ in 0..8 {
            held.push(started(&pacer).await);
        }
        let too_many = StatusCode::TOO_MANY_REQUESTS;
        // A bare 429 announces no wait: the pacer pauses a second of its own.
        assert_eq!(
            held.pop()
                .unwrap()
                .finish(Some(too_many), &HeaderMap::new()),
            Some(Duration::from_secs(1))
        );
        assert_eq!(pacer.lock().limit, 4.0);
        // Another request of the same round does not cut again.
        held.pop()
            .unwrap()
            .finish(Some(too_many), &HeaderMap::new());
        assert_eq!(pacer.lock().limit, 4.0);
        held.clear();
        // At most four start now; a fifth waits for a place.
        let mut four = Vec::new();
        for _ in 0..4 {
            four.push(started(&pacer).await);
        }
        let fifth = tokio::spawn({
            let pacer = Arc::clone(&pacer);
            async move { started(&pacer).await.number }
        });
        tokio::task::yield_now().await;
        assert!(!fifth.is_finished());
        // A request of the new round that draws a 429 cuts again.
        four.pop()
            .unwrap()
            .finish(Some(too_many), &headers(&[("retry-after", "0")]));
        assert_eq!(pacer.lock().limit, 2.0);
        assert_eq!(pacer.lock().ceiling, 4.0);
        four.clear();
        assert_eq!(fifth.await.unwrap(), 12);
    }

    #[tokio::test(start_paused = true)]
    async fn bare_429s_pause_every_request_doubling_until_a_success_for_five_rounds() {
        let pacer = Arc::new(Pacer::default());
        let bare_429 = |pacer: &Arc<Pacer>| {
            let pacer = Arc::clone(pacer);
            async move {
                let asked = Instant::now();
                let permit = started(&pacer).await;
                let waited = asked.elapsed();
                let wait = permit.finish(Some(StatusCode::TOO_MANY_REQUESTS), &HeaderMap::new());
                (waited, wait)
            }
        };
        let mut seen = Vec::new();
        for _ in 0..UNANNOUNCED_ROUNDS + 1 {
            seen.push(bare_429(&pacer).await);
        }
        let second = Duration::from_secs(1);
        assert_eq!(
            seen,
            [
                (Duration::ZERO, Some(second)),
                (second, Some(second * 2)),
                (second * 2, Some(second * 4)),
                (second * 4, Some(second * 8)),
                (second * 8, Some(second * 16)),
                // A sixth round in a row is the server's word (a used-up quota): a failure.
                (second * 16, None),
            ]
        );
        // A success makes the next one a first round again.
        succeed(&pacer, 1).await;
        assert_eq!(bare_429(&pacer).await, (Duration::ZERO, Some(second)));
    }

    #[tokio::test(start_paused = true)]
    async fn successes_add_requests_in_flight_slower_near_the_last_429() {
        let pacer = Arc::new(Pacer::default());
        {
            let mut state = pacer.lock();
            state.limit = 2.0;
            state.ceiling = 5.0;
        }
        let limit = || pacer.lock().limit;
        // Below the last 429's level: `1/limit` a success (2 + 1/2 + 1/2.5 = 2.9).
        succeed(&pacer, 2).await;
        assert!((limit() - 2.9).abs() < 1e-9, "{}", limit());
        let mut successes = 2;
        while limit() < 4.0 {
            succeed(&pacer, 1).await;
            successes += 1;
        }
        assert_eq!(successes, 6);
        // Next to it, eight times slower: eight successes add about a quarter.
        let before = limit();
        succeed(&pacer, 8).await;
        let added = limit() - before;
        assert!(added > 0.2 && added < 0.25, "{added}");
    }

    async fn succeed(pacer: &Arc<Pacer>, count: usize) {
        for _ in 0..count {
            let permit = started(pacer).await;
            permit.finish(Some(StatusCode::OK), &HeaderMap::new());
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_request_frees_its_place() {
        let pacer = Arc::new(Pacer::default());
        pacer.lock().limit = 1.0;
        let held = started(&pacer).await;
        drop(held);
        let again = started(&pacer).await;
        assert_eq!(pacer.lock().in_flight, 1);
        drop(again);
        assert_eq!(pacer.lock().in_flight, 0);
    }

    #[test]
    fn one_pacer_per_endpoint_and_model() {
        let base = Url::parse("http://127.0.0.1:9/v1").unwrap();
        let other = Url::parse("http://127.0.0.1:10/v1").unwrap();
        assert!(Arc::ptr_eq(&shared(&base, "m"), &shared(&base, "m")));
        assert!(!Arc::ptr_eq(&shared(&base, "m"), &shared(&base, "n")));
        assert!(!Arc::ptr_eq(&shared(&base, "m"), &shared(&other, "m")));
    }
    #[tokio::test(start_paused = true)]
    async fn a_pause_longer_than_a_call_may_wait_is_not_waited() {
        let pacer = Arc::new(Pacer::default());
        let retry_after = headers(&[("retry-after", "30")]);
        started(&pacer)
            .await
            .finish(Some(StatusCode::TOO_MANY_REQUESTS), &retry_after);
        // Every request is paused for 30 s: a call that may wait 10 s more is not sent...
        let refused = pacer.start(Duration::from_secs(10)).await.err();
        assert_eq!(refused, Some(Duration::from_secs(30)));
        // ...one that may wait 40 s starts when the pause ends, and says it was held.
        let begin = Instant::now();
        let permit = pacer.start(Duration::from_secs(40)).await.ok().unwrap();
        assert_eq!(begin.elapsed(), Duration::from_secs(30));
        assert_eq!(permit.paused, Duration::from_secs(30));
        drop(permit);
        let state = pacer.lock();
        assert_eq!((state.started, state.not_sent), (2, 1));
    }
}
