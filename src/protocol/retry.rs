//! Retrying transient failures: exponential backoff with jitter, or the server's `Retry-After`.
//! Any attempt that says whether another may follow ([`Retryable`]) can be retried: an
//! evaluator's call, a model's completion, a check's API call.

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

/// Make attempts with `make_attempt` until one succeeds, fails for good, or `retries` extra attempts
/// are spent, waiting between them as [`backoff`] or the server's `Retry-After` says. Returns the
/// last attempt and how many attempts were made.
pub async fn with_retries<F, Fut, A>(retries: u32, mut make_attempt: F) -> (A, u32)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = A>,
    A: Retryable,
{
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
