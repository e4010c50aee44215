//! A small pool of worker threads for evaluating test cases: the calling thread hands out jobs
//! (batches of test cases) in order, the workers evaluate them in any order, and the calling
//! thread hands each result to one sink in job order — so the output is the same as a serial run,
//! only sooner. The jobs in flight are bounded, so memory does not grow with the input.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::sync::mpsc::{self, Receiver, RecvError, SyncSender, TrySendError};
use std::sync::Mutex;
use std::thread;

/// The most worker threads a run uses (evaluation is CPU-bound; more than the cores only adds
/// switching).
const MAX_WORKERS: usize = 8;

/// Test cases per job: enough to make the hand-over cost negligible, few enough that the memory
/// of the jobs in flight stays small.
pub const BATCH: usize = 256;

/// How many workers to start: one per available core, at most [`MAX_WORKERS`].
pub fn workers() -> usize {
    thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(MAX_WORKERS)
}

/// Run `work` on every job of `jobs` and give the results to `sink` in the order of the jobs.
/// With one core, or a single job, everything runs on the calling thread. `jobs` is drawn on the
/// calling thread, so it may read input; the first error of `sink` stops drawing jobs (the jobs
/// in flight finish, their results are dropped) and is returned.
pub fn ordered<J, R, E>(
    jobs: impl Iterator<Item = J>,
    work: impl Fn(J) -> R + Sync,
    mut sink: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E>
where
    J: Send,
    R: Send,
{
    let workers = workers();
    let mut jobs = jobs.peekable();
    let mut first = match jobs.next() {
        Some(job) => job,
        None => return Ok(()),
    };
    // One core, or a single job (a small request): no thread is worth starting.
    if workers == 1 || jobs.peek().is_none() {
        sink(work(first))?;
        return jobs.try_for_each(|job| sink(work(job)));
    }
    let (job_sender, job_receiver) = mpsc::sync_channel::<(usize, J)>(workers * 2);
    let job_receiver = Mutex::new(job_receiver);
    let (result_sender, results) = mpsc::channel::<(usize, R)>();
    thread::scope(|scope| {
        for _ in 0..workers {
            let (job_receiver, result_sender, work) = (&job_receiver, result_sender.clone(), &work);
            scope.spawn(move || {
                while let Some((sequence, job)) = next_job(job_receiver) {
                    if result_sender.send((sequence, work(job))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(result_sender);
        let mut order = InOrder::new(sink);
        let mut sent = 0;
        loop {
            if !send_job(&job_sender, (sent, first), &results, &mut order) {
                break;
            }
            sent += 1;
            while let Ok(done) = results.try_recv() {
                order.deliver(done);
            }
            if order.failed() {
                break;
            }
            first = match jobs.next() {
                Some(job) => job,
                None => break,
            };
        }
        drop(job_sender);
        for done in results {
            order.deliver(done);
        }
        order.finish()
    })
}

/// The next job for a worker; `None` once the jobs have run out.
fn next_job<J>(receiver: &Mutex<Receiver<(usize, J)>>) -> Option<(usize, J)> {
    // A poisoned lock means another worker panicked: the scope re-raises that panic.
    let receiver = receiver.lock().ok()?;
    receiver.recv().map_err(|RecvError| ()).ok()
}

/// Queue `job`, taking results in while the queue is full; `false` when the workers are gone.
fn send_job<J, R, E>(
    sender: &SyncSender<(usize, J)>,
    mut job: (usize, J),
    results: &Receiver<(usize, R)>,
    order: &mut InOrder<R, E, impl FnMut(R) -> Result<(), E>>,
) -> bool {
    loop {
        match sender.try_send(job) {
            Ok(()) => return true,
            Err(TrySendError::Full(back)) => {
                job = back;
                match results.recv() {
                    Ok(done) => order.deliver(done),
                    Err(RecvError) => return false,
                }
            }
            Err(TrySendError::Disconnected(_)) => return false,
        }
    }
}

/// Results put back in job order on their way to the sink.
struct InOrder<R, E, S: FnMut(R) -> Result<(), E>> {
    sink: S,
    next: usize,
    waiting: BTreeMap<usize, R>,
    outcome: Result<(), E>,
}

impl<R, E, S: FnMut(R) -> Result<(), E>> InOrder<R, E, S> {
    fn new(sink: S) -> Self {
        InOrder {
            sink,
            next: 0,
            waiting: BTreeMap::new(),
            outcome: Ok(()),
        }
    }

    /// Take in the result of job `sequence` and pass on every result now in order.
    fn deliver(&mut self, (sequence, result): (usize, R)) {
        if self.failed() {
            return;
        }
        self.waiting.insert(sequence, result);
        while let Some(result) = self.waiting.remove(&self.next) {
            self.next += 1;
            if let Err(error) = (self.sink)(result) {
                self.outcome = Err(error);
                self.waiting.clear();
                return;
            }
        }
    }

    fn failed(&self) -> bool {
        self.outcome.is_err()
    }

    fn finish(self) -> Result<(), E> {
        self.outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_out_in_job_order() {
        let mut seen = Vec::new();
        let outcome: Result<(), ()> = ordered(
            0..1000u64,
            |job| {
                // Uneven work, so jobs finish out of order.
                let spin = (job * 7919) % 2000;
                (0..spin).fold(job, |acc, step| acc.wrapping_add(step) % 1_000_003);
                job
            },
            |result| {
                seen.push(result);
                Ok(())
            },
        );
        assert_eq!(outcome, Ok(()));
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn a_sink_error_stops_the_run() {
        let mut seen = 0;
        let outcome = ordered(
            0..10_000u32,
            |job| job,
            |result| {
                seen += 1;
                if result == 5 {
                    Err("full")
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(outcome, Err("full"));
        assert_eq!(seen, 6);
    }
}
