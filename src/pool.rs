//! The worker pool for CPU-bound work (`fep evaluate`'s test cases, `tasks score`'s tasks): the
//! calling thread draws jobs (batches of test cases, or single tasks) in order, one worker per
//! core runs them in any order, and the calling thread hands each result to one sink in job
//! order — so the output is that of a serial run, only sooner. The jobs between
//! drawn and sunk are bounded, so memory does not grow with the input. A single job, or a single
//! core, runs on the calling thread without starting any.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::num::NonZeroUsize;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Mutex, OnceLock};
use std::thread;

/// Test cases per job in `fep evaluate`: enough to make the hand-over cost negligible, few enough that the jobs in
/// flight stay small and a short run still spreads over the workers.
pub const BATCH: usize = 256;

/// The most workers a run starts (evaluation is CPU-bound; more than the cores only adds
/// switching).
const MAX_WORKERS: usize = 8;

/// Sets the number of workers (internal: the tests compare a one-worker run with a parallel one).
const WORKERS_VARIABLE: &str = "EVALCTL_INTERNAL_FEP_WORKERS";

/// How many workers a run uses: one per available core (at most [`MAX_WORKERS`]), or what
/// `EVALCTL_INTERNAL_FEP_WORKERS` says.
pub fn workers() -> usize {
    // Asked once: finding the cores reads the cgroup files.
    static WORKERS: OnceLock<usize> = OnceLock::new();
    *WORKERS.get_or_init(|| {
        let cores = || {
            thread::available_parallelism()
                .map_or(1, NonZeroUsize::get)
                .min(MAX_WORKERS)
        };
        std::env::var(WORKERS_VARIABLE)
            .ok()
            .and_then(|text| text.parse::<usize>().ok())
            .filter(|&count| count > 0)
            .unwrap_or_else(cores)
    })
}

/// A job's result, or the panic that ended its worker (raised again on the calling thread).
type Outcome<R> = thread::Result<R>;

/// Run `work` on every job of `jobs` on `workers` threads (usually [`workers`]) and give the
/// results to `sink` in the order of the jobs. `jobs` is drawn on the calling thread (it may read input); the first error
/// of `sink` stops the drawing (the jobs running finish, those drawn but not begun are not run,
/// their results are dropped) and is returned.
pub fn ordered<J, R, E>(
    workers: usize,
    jobs: impl Iterator<Item = J>,
    work: impl Fn(J) -> R + Sync,
    mut sink: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E>
where
    J: Send,
    R: Send,
{
    let mut jobs = jobs.peekable();
    let Some(first) = jobs.next() else {
        return Ok(());
    };
    if workers == 1 || jobs.peek().is_none() {
        sink(work(first))?;
        return jobs.try_for_each(|job| sink(work(job)));
    }
    let (job_sender, job_receiver) = mpsc::sync_channel::<(usize, J)>(workers);
    let job_receiver = Mutex::new(job_receiver);
    let (result_sender, results) = mpsc::channel::<(usize, Outcome<R>)>();
    // Set once the sink has failed: the jobs drawn but not begun are then passed over.
    let sink_failed = AtomicBool::new(false);
    thread::scope(|scope| {
        for _ in 0..workers {
            let (job_receiver, result_sender, work) = (&job_receiver, result_sender.clone(), &work);
            let sink_failed = &sink_failed;
            scope.spawn(move || {
                while let Some((sequence, job)) = next_job(job_receiver) {
                    if sink_failed.load(Ordering::Relaxed) {
                        continue;
                    }
                    let outcome = panic::catch_unwind(AssertUnwindSafe(|| work(job)));
                    if result_sender.send((sequence, outcome)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(result_sender);
        let mut order = InOrder::new(sink);
        let deliver = |order: &mut InOrder<R, E, _>, done| {
            order.deliver(done);
            if order.failed() {
                sink_failed.store(true, Ordering::Relaxed);
            }
        };
        // Jobs drawn but not yet sunk: at most this many, or the results of the jobs after a slow
        // one would pile up.
        let limit = workers * 4;
        for (sequence, job) in std::iter::once(first).chain(jobs).enumerate() {
            while sequence - order.next >= limit && !order.failed() {
                match results.recv() {
                    Ok(done) => deliver(&mut order, done),
                    Err(_) => break,
                }
            }
            if order.failed() || job_sender.send((sequence, job)).is_err() {
                break;
            }
            while let Ok(done) = results.try_recv() {
                deliver(&mut order, done);
            }
        }
        drop(job_sender);
        for done in results {
            deliver(&mut order, done);
        }
        order.outcome
    })
}

/// `work` on every item of `items`, in batches on the workers (each batch with a `state` of its
/// own), the answers in the order of the items.
pub fn map<T: Sync, S, U: Send>(
    items: &[T],
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &T) -> U + Sync,
) -> Vec<U> {
    let mut answers = Vec::with_capacity(items.len());
    let done: Result<(), Infallible> = ordered(
        workers(),
        items.chunks(BATCH),
        |batch| {
            let mut state = state();
            batch
                .iter()
                .map(|item| work(&mut state, item))
                .collect::<Vec<U>>()
        },
        |batch| {
            answers.extend(batch);
            Ok(())
        },
    );
    match done {
        Ok(()) => answers,
    }
}

/// The next job for a worker; `None` once the jobs have run out.
fn next_job<J>(receiver: &Mutex<Receiver<(usize, J)>>) -> Option<(usize, J)> {
    // A worker never panics while holding the lock (jobs run outside it), so it is not poisoned.
    let receiver = receiver.lock().ok()?;
    receiver.recv().ok()
}

/// Results put back in job order on their way to the sink.
struct InOrder<R, E, S: FnMut(R) -> Result<(), E>> {
    sink: S,
    /// The job whose result the sink takes next.
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

    /// Take in the result of job `sequence` and sink every result now in order; a job's panic
    /// is raised again here.
    fn deliver(&mut self, (sequence, outcome): (usize, Outcome<R>)) {
        let result = outcome.unwrap_or_else(|payload| panic::resume_unwind(payload));
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_out_in_job_order() {
        let mut seen = Vec::new();
        let outcome: Result<(), ()> = ordered(
            3,
            0..1000u64,
            |job| {
                // Uneven work, so jobs finish out of order.
                let spin = (job * 7919) % 20_000;
                std::hint::black_box((0..spin).fold(job, |acc, step| acc.wrapping_add(step)));
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
            3,
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

    #[test]
    fn a_panicking_job_panics_the_caller() {
        let caught = panic::catch_unwind(|| {
            ordered(
                3,
                0..100u32,
                |job| assert_ne!(job, 40, "job 40 fails"),
                |()| Ok::<(), ()>(()),
            )
        });
        assert!(caught.is_err());
    }
}
