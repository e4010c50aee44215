//! Running a spec's LLM judges live (`--judges live`; `docs/spec.md`, "Live judges"): each judge's
//! samples go through the OpenAI-compatible judge client (its endpoint and key rules, transport,
//! retries on 429/5xx/timeouts, reply reading and redaction), then become one
//! [`JudgeResult`](crate::evaluation_spec::judges::JudgeResult) per judge as
//! `llm_judge_results` would carry it.
//!
//! [`LiveJudges::new`] is built once per spec; [`LiveJudges::judge_run`] judges one run from
//! already-resolved evidence ([`JudgeInputs`]). `scorecard.judge_limits` are enforced per run: a
//! judge asking for more samples than `max_samples_per_judge`, or whose calls reach
//! `max_tokens` / `max_calls_usd`, is unavailable with a reason. With a token or cost cap the
//! run's calls go one at a time, in declaration order, so the cap is exact; otherwise up to
//! [`LiveJudgeOptions::concurrency`] calls are in flight.
//!
//! [`setup`] makes the judges ready to run, [`plan`] lays out one run's calls, [`run`] makes them
//! (within the [`budget`] when the spec caps it), [`prompt`] words what a judge is shown and
//! [`aggregate`] combines the replies.

mod aggregate;
mod budget;
mod plan;
mod prompt;
mod run;
mod setup;

pub use aggregate::NO_SAMPLE_REASON;
pub use setup::{JudgeInputs, LiveJudgeOptions, LiveJudges};
