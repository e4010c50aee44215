//! Preflight: static checks of the evaluator's setup, then one probe call with
//! `{"_protocol_version": 2, "candidate": "__evalctl_preflight__"}` (+ `task_model`, + the first
//! dataset record), validated by the same score validator as every call.

use super::call_with_retries;
use crate::error::Fatal;
use crate::evaluator::{Call, Evaluator};
use crate::input::Record;
use crate::protocol::{ErrorKind, PREFLIGHT_CANDIDATE};

/// What a passed preflight learned.
#[derive(Debug, Clone, PartialEq)]
pub enum Probe {
    /// The probe call answered with this valid score.
    Answered(f64),
    /// No probe was sent (`--skip-preflight`, or a judge without `--probe-judge`).
    Skipped,
}

/// Check the setup and, when `probe` is true and the evaluator probes, make the probe call.
/// The probe is retried like any call (`retries` extra attempts for transport failures, 429 and
/// 5xx), so a server that is still warming up does not fail a run that `--retries` would carry.
/// A failure is a [`Fatal::Preflight`] (exit 3) naming the evaluator and the cause.
pub async fn preflight(
    evaluator: &dyn Evaluator,
    task_model: Option<&str>,
    first_example: Option<&Record>,
    probe: bool,
    retries: u32,
) -> anyhow::Result<Probe> {
    let fail = |cause: String| -> anyhow::Error {
        Fatal::Preflight(format!(
            "evaluator preflight failed for {}: {cause}",
            evaluator.describe()
        ))
        .into()
    };
    if !probe {
        // A setup that cannot work fails every call: it is said even with --skip-preflight.
        evaluator.check_setup().map_err(|cause| {
            fail(format!(
                "{cause} (--skip-preflight skips the probe call, not this check)"
            ))
        })?;
        return Ok(Probe::Skipped);
    }
    evaluator.check_setup().map_err(fail)?;
    evaluator.check_access().await.map_err(fail)?;
    if !evaluator.probes() {
        return Ok(Probe::Skipped);
    }
    let call = Call {
        candidate: PREFLIGHT_CANDIDATE,
        task_model,
        example: first_example,
        answer: None,
    };
    let (attempt, _) = call_with_retries(evaluator, &call, retries).await;
    match attempt.score {
        Ok(score) => Ok(Probe::Answered(score)),
        Err(error) => {
            // An evaluator that answered, but not with a score, may just not understand the
            // sentinel; one that could not be reached would fail every call the same way, and
            // so would a recognised cause (log lines on stdout, refused credentials).
            let sentinel_may_matter = !error.setup_fault
                && !matches!(
                    error.kind,
                    ErrorKind::Spawn | ErrorKind::Timeout | ErrorKind::Transport
                );
            // Only where the sentinel may matter is the probe itself part of the cause.
            Err(fail(if sentinel_may_matter {
                format!(
                    "the probe call (candidate {PREFLIGHT_CANDIDATE:?}{}) failed: {} — an \
                     evaluator that cannot score this sentinel candidate can be run {}",
                    if first_example.is_some() {
                        ", the first dataset record as example"
                    } else {
                        ""
                    },
                    error.message,
                    evaluator.without_probe(),
                )
            } else {
                error.message
            }))
        }
    }
}
