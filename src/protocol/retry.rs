//! Retrying transient failures: exponential backoff with jitter, or the server's `Retry-After`.
//! Any attempt that says whether another may follow ([`Retryable`]) can be retried: an
//! evaluator's call, a model's completion, a check's API call.

use std::cell::Cell;
use std::future::Future;
use std::time::Duration;

use super::{Attempt, Retry};

/// The first backoff delay; each retry doubles it.
const BASE_DELAY: Duration = Duration::from_millis(200);
/// No backoff waits longer than this (a server's `Retry-After` may).
const MAX_DELAY: Duration = Duration::from_secs(10);

/// An attempt's outcome that says whether another attempt may follow.
pub trait Retryable {
    /// Whether (and after how long) to retry.
    fn retry(&self) -> Retry;
}

impl Retryable for Attempt {
    fn retry(&self) -> Retry {
        self.retry
    }
}

/// A result whose failure is a failed attempt (a model's completion, say): success is final.
impl<T> Retryable for Result<T, Attempt> {
    fn retry(&self) -> Retry {
        self.as_ref()
            .err()
            .map_or(Retry::Never, |attempt| attempt.retry)
    }
}

/// What one call spent waiting out 429s (a model API's rate limit) without counting them as
/// retries, over all its attempts: a call is allowed so many such waits in all, not per attempt.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CallWaits {
    /// 429s waited out.
    pub waits: u32,
    /// The time they made the call wait.
    pub waited: Duration,
}

tokio::task_local! {
    /// The waits of the call [`with_retries`] is making.
    static CALL_WAITS: Cell<CallWaits>;
}

impl CallWaits {
    /// The waits of the call being made so far (none outside [`with_retries`]).
    pub fn of_this_call() -> CallWaits {
        CALL_WAITS.try_with(Cell::get).unwrap_or_default()
    }

    /// Record the waits of the call being made (nothing outside [`with_retries`]).
    pub fn record(self) {
        let _ = CALL_WAITS.try_with(|waits| waits.set(self));
    }
}

/// Make attempts with `make_attempt` until one succeeds, fails for good, or `retries` extra attempts
/// are spent, waiting between them as [`backoff`] or the server's `Retry-After` says. Returns the
/// last attempt and how many attempts were made. The attempts share one [`CallWaits`].
pub async fn with_retries<F, Fut, A>(retries: u32, mut make_attempt: F) -> (A, u32)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = A>,
    A: Retryable,
{
    let call = async move {
        let mut attempts = 0;
        loop {
            let attempt = make_attempt().await;
            attempts += 1;
            match attempt.retry() {
                Retry::Allowed { after } if attempts <= retries => {
                    tokio::time::sleep(after.unwrap_or_else(|| backoff(attempts))).await;
                }
                _ => return (attempt, attempts),
            }
        }
    };
    CALL_WAITS
        .scope(Cell::new(CallWaits::default()), call)
        .await
}

/// The delay before retry number `attempt` (1-based): 200 ms doubling, ±50% jitter, capped.
pub fn backoff(attempt: u32) -> Duration {
    let exponential = BASE_DELAY
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
        .min(MAX_DELAY);
    exponential.mul_f64(0.5 + fastrand::f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An attempt that says how it may be retried.
    struct Said(Retry);

    impl Retryable for Said {
        fn retry(&self) -> Retry {
            self.0
        }
    }

    /// The instants at which `with_retries` made its attempts, each answered by `answers` in turn.
    async fn attempt_times(retries: u32, answers: &[Retry]) -> (Vec<Duration>, u32) {
        let start = tokio::time::Instant::now();
        let mut times = Vec::new();
        let mut answers = answers.iter().copied();
        let (_, attempts) = with_retries(retries, || {
            times.push(start.elapsed());
            let answer = answers.next().unwrap_or(Retry::Never);
            async move { Said(answer) }
        })
        .await;
        (times, attempts)
    }

    #[tokio::test(start_paused = true)]
    async fn a_servers_retry_after_is_waited_out_exactly() {
        let after = Some(Duration::from_secs(1));
        let (times, attempts) = attempt_times(3, &[Retry::Allowed { after }, Retry::Never]).await;
        assert_eq!(attempts, 2);
        assert_eq!(times, [Duration::ZERO, Duration::from_secs(1)]);
    }

    #[tokio::test(start_paused = true)]
    async fn without_retry_after_the_backoff_is_waited_and_retries_are_bounded() {
        let allowed = Retry::Allowed { after: None };
        let (times, attempts) = attempt_times(2, &[allowed, allowed, allowed, allowed]).await;
        assert_eq!(attempts, 3, "one attempt and two retries");
        let first = times[1] - times[0];
        let second = times[2] - times[1];
        assert!(first >= BASE_DELAY.mul_f64(0.5) && first <= BASE_DELAY.mul_f64(1.5));
        assert!(second >= BASE_DELAY.mul_f64(1.0) && second <= BASE_DELAY.mul_f64(3.0));
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        for attempt in 1..30 {
            let delay = backoff(attempt);
            let nominal = BASE_DELAY
                .saturating_mul(1u32 << (attempt - 1).min(16))
                .min(MAX_DELAY);
            assert!(
                delay >= nominal.mul_f64(0.5) && delay <= nominal.mul_f64(1.5),
                "{attempt}: {delay:?}"
            );
        }
    }
}
