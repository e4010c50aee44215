//! The runner: the plan of calls, the preflight probe, their async dispatch and the record of
//! each finished call. This module owns the tokio runtime; work in flight is bounded by `-j`,
//! retries are applied per call, and an interruption (Ctrl-C, SIGTERM, SIGHUP) stops the run and
//! keeps what finished.

mod fd_limit;
mod generation;
pub mod journal;
pub mod key;
mod plan;
pub mod preflight;
pub mod resume;
mod retry;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use fd_limit::{calls_in_flight, connections_open};
pub use generation::{Generate, Generated, GenerationCall};
pub use plan::{plan_calls, plan_generation, PlannedCall, Shard};
pub use retry::call_with_retries;

use crate::evaluator::{Answer, Call, Evaluator};
use crate::in_flight::InFlight;
use crate::input::{Inputs, Record};
use crate::interrupt::{catch_in_flag, interruption_of_kind, Interruption};
use crate::protocol::{validate_score, Attempt, CallError, ErrorKind, Findings, Retry, ScoreRange};
use crate::record::{CallRecord, RunInfo};
use crate::store::CachedResult;
use key::KeyedFiles;

/// How long calls in flight get to finish after Ctrl-C (a second Ctrl-C, SIGTERM or SIGHUP
/// stops them at once).
pub const GRACE: Duration = Duration::from_secs(5);

/// Run `future` to completion on the one runtime of this process. It is single-threaded: calls
/// in flight wait on children and sockets, and one thread spares every finished call a
/// cross-thread wake-up (about 5–10% more command calls per second at `-j 2` on two cores, in
/// `benches/throughput.rs`).
///
/// Once the runtime is gone, SIGINT, SIGTERM and SIGHUP only set the flag
/// [`crate::interrupt::interrupt_requested`] reads: what follows (the summary, the reports) is
/// written whole, never cut off by a signal's default action, and `run` then ends with 130.
pub fn block_on<F: Future>(future: F) -> anyhow::Result<F::Output> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let output = runtime.block_on(future);
    drop(runtime);
    catch_in_flag();
    Ok(output)
}

/// How a run ended.
pub struct Finished {
    /// An interruption (Ctrl-C, SIGTERM, SIGHUP) stopped the run before every call finished.
    pub interrupted: bool,
    /// Wall time of the calls.
    pub elapsed: Duration,
    /// Calls that were still in flight when the run stopped them, and why.
    pub stopped: Option<Stopped>,
}

/// Calls in flight that the run stopped instead of letting them finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped {
    /// How many calls were stopped.
    pub calls: usize,
    /// Why.
    pub cause: StopCause,
    /// How many of them had their task model's answer (`--generate`), handed on as
    /// `interrupted` lines.
    pub answered: usize,
}

/// Why calls in flight were stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCause {
    /// SIGTERM or SIGHUP, or a second Ctrl-C (`again`: after a first Ctrl-C).
    Signal {
        /// Whether a first Ctrl-C had already stopped dispatch.
        again: bool,
    },
    /// They did not finish within [`GRACE`] of the first Ctrl-C.
    GraceEnded,
}

/// Everything one call needs, shared by all calls of the run.
pub struct RunContext {
    /// The evaluator.
    pub evaluator: Arc<dyn Evaluator>,
    /// Candidates and examples.
    pub inputs: Arc<Inputs>,
    /// `--task-model`.
    pub task_model: Option<Arc<str>>,
    /// `--generate`: the task models that answer each call before it is scored.
    pub generator: Option<Arc<dyn Generate>>,
    /// `--retries`.
    pub retries: u32,
    /// `--cache`: answers repeated calls, keeps successful results.
    pub cache: Option<crate::store::Cache>,
    /// `--score-range`: what a score from the cache must satisfy, as an evaluator's must.
    pub score_range: ScoreRange,
    /// The files the call keys hash, as they were: once one changes, no answer is cached under
    /// keys that no longer describe the evaluator.
    pub keyed_files: KeyedFiles,

    /// What every result line carries about the run.
    pub run_info: RunInfo,
    /// Each candidate's text digest ([`key::text_digest`]), by candidate index.
    pub candidate_digests: Vec<String>,
    /// The lines of calls the run stopped after their task model answered: each keeps the
    /// answer and what it spent (`interrupted`), handed on once the calls have stopped.
    pub unscored: std::sync::Mutex<Vec<CallRecord>>,
}

/// Make every call of `plan`, at most `concurrency` at once, handing each finished call to
/// `on_finished` as it completes (nothing is kept here, so memory does not grow with the plan).
/// Each call starts only if `may_dispatch(calls in flight)` says so (`--max-cost`); once it says
/// no, the calls in flight finish and the rest of the plan is left undone.
/// Ctrl-C stops dispatch and gives the calls in flight [`GRACE`] to finish (`on_stopping` is
/// told how many there are); a second Ctrl-C, SIGTERM, SIGHUP or the end of the grace aborts
/// them (killing command evaluators) and ends the run.
pub async fn execute(
    context: Arc<RunContext>,
    plan: Vec<PlannedCall>,
    concurrency: usize,
    mut on_finished: impl FnMut(CallRecord),
    on_stopping: impl FnOnce(usize),
    may_dispatch: impl Fn(usize) -> bool,
) -> Finished {
    let started = Instant::now();
    let mut pending = plan.into_iter().peekable();
    let mut in_flight = InFlight::new(concurrency);
    let mut interrupted = false;
    let mut on_stopping = Some(on_stopping);
    let mut stopped = None;
    let signal = interruption_of_kind();
    tokio::pin!(signal);
    loop {
        while in_flight.has_room() {
            let running = in_flight.len();
            let Some(call) = pending.next_if(|_| may_dispatch(running)) else {
                break;
            };
            in_flight.start(perform(Arc::clone(&context), call));
        }
        if in_flight.is_empty() {
            break;
        }
        tokio::select! {
            biased;
            kind = &mut signal => {
                interrupted = true;
                let (calls, cause) = match (kind, on_stopping.take()) {
                    (Interruption::CtrlC, Some(tell)) => {
                        tell(in_flight.len());
                        let (calls, again) = in_flight
                            .finish_within(GRACE, interruption_of_kind(), &mut on_finished)
                            .await;
                        let cause = if again {
                            StopCause::Signal { again: true }
                        } else {
                            StopCause::GraceEnded
                        };
                        (calls, cause)
                    }
                    _ => {
                        let calls = in_flight.stop_handing_on(&mut on_finished).await;
                        (calls, StopCause::Signal { again: false })
                    }
                };
                let answered = hand_on_unscored(&context, &mut on_finished);
                // Calls that all finished as they were stopped stopped none.
                stopped = (calls > 0).then_some(Stopped { calls, cause, answered });
                break;
            }
            Some(record) = in_flight.next() => on_finished(record),
        }
    }
    Finished {
        interrupted,
        elapsed: started.elapsed(),
        stopped,
    }
}

/// Hand to `on_finished` the `interrupted` lines of the calls stopped after their task model
/// answered: how many there were.
fn hand_on_unscored(context: &RunContext, on_finished: &mut impl FnMut(CallRecord)) -> usize {
    // A call that panicked is a bug the runner reports itself; the lines kept are still good.
    let mut kept = (context.unscored.lock()).unwrap_or_else(std::sync::PoisonError::into_inner);
    let lines = std::mem::take(&mut *kept);
    drop(kept);
    let answered = lines.len();
    lines.into_iter().for_each(on_finished);
    answered
}

/// A call's `interrupted` line, kept while its evaluator scores the task model's answer: should
/// the run stop the call (dropping it), the line goes to the run's unscored lines.
struct UnscoredLine<'a> {
    line: Option<CallRecord>,
    into: &'a std::sync::Mutex<Vec<CallRecord>>,
}

impl Drop for UnscoredLine<'_> {
    fn drop(&mut self) {
        if let Some(line) = self.line.take() {
            let mut lines = (self.into.lock()).unwrap_or_else(std::sync::PoisonError::into_inner);
            lines.push(line);
        }
    }
}

async fn perform(context: Arc<RunContext>, planned: PlannedCall) -> CallRecord {
    let inputs = &context.inputs;
    let candidate = &inputs.candidates[planned.candidate];
    let example: Option<&Record> = planned
        .example
        .and_then(|index| Some(&inputs.split_records(planned.split)?[index]));
    let generated = match (&context.generator, planned.task_model) {
        (Some(generator), Some(model)) => Some((
            generator.label(model),
            generator
                .answer(GenerationCall {
                    task_model: model,
                    candidate,
                    example,
                    repeat: planned.repeat,
                    key: &planned.key,
                })
                .await,
        )),
        _ => None,
    };
    let line = |attempt: Attempt, attempts: u32, cached: bool, latency_ms: f64| CallRecord {
        latency_ms,
        ..call_line(
            &context,
            &planned,
            example,
            generated.as_ref(),
            attempt,
            attempts,
            cached,
        )
    };
    let answer = match &generated {
        Some((
            label,
            Generated {
                answer: Err(error), ..
            },
        )) => {
            let mut error = error.clone();
            error.message = format!("task model {label}: {}", error.message);
            Err(error)
        }
        Some((
            _,
            Generated {
                prompt,
                answer: Ok(output),
                ..
            },
        )) => Ok(Some(Answer { prompt, output })),
        None => Ok(None),
    };
    let mut unscored = UnscoredLine {
        line: answer.as_ref().is_ok_and(Option::is_some).then(|| {
            let stopped = CallError::new(
                ErrorKind::Interrupted,
                "the run stopped before the evaluator scored the task model's answer: \
                 --resume scores it",
            );
            line(Attempt::failed(stopped), 0, false, 0.0)
        }),
        into: &context.unscored,
    };
    // The record's latency is the evaluator's; the task model's call has its own.
    let started = Instant::now();
    let task_model = match &generated {
        Some((label, _)) => Some(*label),
        None => context.task_model.as_deref(),
    };
    let (attempt, attempts, cached) = match answer {
        Err(error) => (Attempt::failed(error), 0, false),
        Ok(answer) => {
            let call = Call {
                candidate: &candidate.text,
                task_model,
                example,
                answer,
            };
            evaluate(&context, &planned, &call).await
        }
    };
    unscored.line = None;
    line(
        attempt,
        attempts,
        cached,
        crate::text::milliseconds(started.elapsed()),
    )
}

/// The result line of `planned` (`generated` by its task model, under `--generate`): its
/// evaluator's `attempt`, after `attempts` attempts (`cached`: the cache answered).
fn call_line(
    context: &RunContext,
    planned: &PlannedCall,
    example: Option<&Record>,
    generated: Option<&(&str, Generated)>,
    attempt: Attempt,
    attempts: u32,
    cached: bool,
) -> CallRecord {
    let (score, error) = match attempt.score {
        Ok(score) => (score, None),
        Err(error) => (0.0, Some(error)),
    };
    CallRecord {
        key: Some(planned.key.to_string()),
        repeat: planned.repeat,
        candidate_id: context.inputs.candidates[planned.candidate].id.clone(),
        candidate_index: Some(planned.candidate),
        split: planned.split,
        example_index: planned.example,
        example_line: example.map(|record| record.line),
        example_id: example.and_then(Record::id),
        score,
        side_info: attempt.side_info,
        error,
        attempts,
        latency_ms: 0.0,
        passed: attempt.findings.passed,
        candidate_digest: context.candidate_digests.get(planned.candidate).cloned(),
        cached,
        task_model: generated.map(|(label, _)| label.to_string()),
        output: generated.and_then(|(_, generated)| generated.answer.as_ref().ok().cloned()),
        generation: generated.map(|(_, generated)| generated.info.clone()),
        run: Some(context.run_info.clone()),
        errored_checks: attempt.findings.errored_checks,
    }
}

/// Score `call`: from the cache, else by the evaluator with retries (a score it gave is then
/// cached). Returns the attempt, the attempts made and whether the cache answered.
async fn evaluate(
    context: &RunContext,
    planned: &PlannedCall,
    call: &Call<'_>,
) -> (Attempt, u32, bool) {
    // A stored score goes through the one validator as an evaluator's does: one the run's
    // range refuses (a cache edited by hand) is not used, and the call is made.
    let range = context.score_range;
    let hit = (context.cache.as_ref())
        .and_then(|cache| cache.get(&planned.key))
        .filter(|hit| validate_score(&serde_json::json!(hit.score), range).is_ok());
    match hit {
        Some(hit) => {
            let findings = Findings {
                passed: hit.passed,
                errored_checks: CallRecord::errored_checks_of(&hit.side_info),
            };
            let attempt = Attempt {
                score: Ok(hit.score),
                side_info: hit.side_info,
                retry: Retry::Never,
                findings,
            };
            (attempt, 0, true)
        }
        None => {
            let (attempt, attempts) =
                call_with_retries(context.evaluator.as_ref(), call, context.retries).await;
            match (&context.cache, &attempt.score) {
                (Some(cache), Ok(score)) if context.keyed_files.still_hold() => {
                    let result = CachedResult {
                        score: *score,
                        side_info: attempt.side_info.clone(),
                        passed: attempt.findings.passed,
                    };
                    cache.put(&planned.key, result);
                }
                _ => {}
            }
            (attempt, attempts, false)
        }
    }
}
