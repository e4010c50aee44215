//! Retrying an evaluator's call (the loop itself is [`crate::protocol::with_retries`]).

use crate::evaluator::{Call, Evaluator};
use crate::protocol::{with_retries, Attempt};

/// Call `evaluator` until it succeeds, fails for good, or `retries` extra attempts are spent.
/// Returns the last attempt and how many attempts were made.
pub async fn call_with_retries(
    evaluator: &dyn Evaluator,
    call: &Call<'_>,
    retries: u32,
) -> (Attempt, u32) {
    with_retries(retries, || evaluator.evaluate(call)).await
}
