//! The one way evalctl makes many calls at a bounded number at once: the runner's evaluator
//! calls, `tasks run`'s completions, the live spec judges and the checks that call out all start
//! their calls through an [`InFlight`].
//!
//! Calls start in the order given while there is room (and, for callers that share a limit
//! across several users, while a shared place is free); the caller takes each result as its call
//! finishes, so memory holds only the calls in flight. A call that panicked is a bug and panics
//! the caller. Dropping an [`InFlight`] (or [`InFlight::stop`]) aborts the calls in flight: a
//! command evaluator's process group is killed by its own guard.
//!
//! The CPU-bound work of `fep evaluate` and `tasks score` runs on the ordered worker pool
//! (`crate::pool`) instead: threads, not tasks, and results in input order.

use std::future::Future;
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// Places shared by several [`InFlight`]s (every evaluation `serve` runs at once, say), so that
/// together they never make more than its size of calls.
pub type SharedPlaces = Arc<Semaphore>;

/// Shared places for at most `limit` calls at once (at least one).
pub fn shared_places(limit: usize) -> SharedPlaces {
    Arc::new(Semaphore::new(limit.max(1)))
}

/// The calls started and not yet taken back, at most `limit` at once.
pub struct InFlight<T> {
    calls: JoinSet<T>,
    limit: usize,
    shared: Option<SharedPlaces>,
}

impl<T: Send + 'static> InFlight<T> {
    /// At most `limit` calls at once (at least one).
    pub fn new(limit: usize) -> Self {
        InFlight {
            calls: JoinSet::new(),
            limit: limit.max(1),
            shared: None,
        }
    }

    /// Each call also waits for one of `places` before it runs.
    pub fn sharing(mut self, places: SharedPlaces) -> Self {
        self.shared = Some(places);
        self
    }

    /// How many calls are in flight.
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Whether another call may start now.
    pub fn has_room(&self) -> bool {
        self.calls.len() < self.limit
    }

    /// Start `call` (the caller has checked [`InFlight::has_room`]).
    pub fn start(&mut self, call: impl Future<Output = T> + Send + 'static) {
        match &self.shared {
            None => {
                self.calls.spawn(call);
            }
            Some(places) => {
                let places = Arc::clone(places);
                self.calls.spawn(async move {
                    // The semaphore is never closed, so a place always comes.
                    let _place = places.acquire_owned().await;
                    call.await
                });
            }
        }
    }

    /// Start calls from `pending` while there is room.
    pub fn fill<F>(&mut self, pending: &mut impl Iterator<Item = F>)
    where
        F: Future<Output = T> + Send + 'static,
    {
        while self.has_room() {
            let Some(call) = pending.next() else { break };
            self.start(call);
        }
    }

    /// The result of the next call to finish; `None` when none is in flight.
    pub async fn next(&mut self) -> Option<T> {
        loop {
            match self.calls.join_next().await? {
                Ok(result) => return Some(result),
                Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
                // Only a call aborted by `stop` ends cancelled, and `stop` waits for it.
                Err(_) => {}
            }
        }
    }

    /// After a first interruption (Ctrl-C): hand each call in flight that finishes within `grace`
    /// to `on_finished`, and stop the others once `grace` has passed or `again` has resolved (a
    /// second interruption), handing on those that had finished as they were stopped. How many
    /// calls were stopped, and whether `again` stopped them (else the grace ended, or none was
    /// left to stop).
    pub async fn finish_within(
        &mut self,
        grace: std::time::Duration,
        again: impl Future,
        mut on_finished: impl FnMut(T),
    ) -> (usize, bool) {
        let grace_ends = tokio::time::sleep(grace);
        tokio::pin!(grace_ends, again);
        let by_again = loop {
            if self.is_empty() {
                return (0, false);
            }
            tokio::select! {
                biased;
                _ = &mut again => break true,
                () = &mut grace_ends => break false,
                Some(finished) = self.next() => on_finished(finished),
            }
        };
        (self.stop_handing_on(on_finished).await, by_again)
    }

    /// [`InFlight::stop`], handing the calls that had finished to `on_finished`: how many calls
    /// were stopped before they finished.
    pub async fn stop_handing_on(&mut self, on_finished: impl FnMut(T)) -> usize {
        let running = self.len();
        let finished = self.stop().await;
        let stopped = running - finished.len();
        finished.into_iter().for_each(on_finished);
        stopped
    }

    /// Abort every call in flight and wait until they have ended; the results of the calls that
    /// had finished already, not yet taken, are returned rather than lost.
    pub async fn stop(&mut self) -> Vec<T> {
        self.calls.abort_all();
        let mut finished = Vec::new();
        while let Some(joined) = self.calls.join_next().await {
            match joined {
                Ok(result) => finished.push(result),
                Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
                Err(_) => {}
            }
        }
        finished
    }
}

/// Every call of `calls`, at most `limit` at once; the results in the order the calls finish.
pub async fn all<T, F>(limit: usize, calls: impl IntoIterator<Item = F>) -> Vec<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let mut pending = calls.into_iter();
    let mut in_flight = InFlight::new(limit);
    let mut results = Vec::new();
    loop {
        in_flight.fill(&mut pending);
        match in_flight.next().await {
            Some(result) => results.push(result),
            None => return results,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Calls that record how many of them run at once, each waiting for the runtime to move on.
    fn counted_calls(
        count: usize,
        running: &Arc<AtomicUsize>,
        most: &Arc<AtomicUsize>,
    ) -> Vec<impl Future<Output = usize> + Send + 'static> {
        (0..count)
            .map(|index| {
                let (running, most) = (Arc::clone(running), Arc::clone(most));
                async move {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    for _ in 0..3 {
                        tokio::task::yield_now().await;
                    }
                    running.fetch_sub(1, Ordering::SeqCst);
                    index
                }
            })
            .collect()
    }

    #[tokio::test]
    async fn stop_returns_what_finished_and_was_not_taken() {
        let mut in_flight: InFlight<u32> = InFlight::new(2);
        let (done, finished) = tokio::sync::oneshot::channel();
        in_flight.start(async move {
            let _ = done.send(());
            7
        });
        in_flight.start(std::future::pending());
        // The first call has run to its end; the second never ends.
        finished.await.unwrap();
        tokio::task::yield_now().await;
        assert_eq!(in_flight.stop().await, [7]);
        assert!(in_flight.is_empty());
    }

    #[tokio::test]
    async fn all_runs_every_call_and_never_more_than_the_limit_at_once() {
        let (running, most) = (Arc::default(), Arc::default());
        let mut results = all(3, counted_calls(20, &running, &most)).await;
        results.sort_unstable();
        assert_eq!(results, (0..20).collect::<Vec<_>>());
        assert_eq!(most.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn shared_places_bound_several_sets_together() {
        let (running, most) = (Arc::default(), Arc::default());
        let places = shared_places(2);
        let mut first = InFlight::new(4).sharing(Arc::clone(&places));
        let mut second = InFlight::new(4).sharing(places);
        let mut calls = counted_calls(8, &running, &most).into_iter();
        first.fill(&mut calls);
        second.fill(&mut calls);
        assert_eq!((first.len(), second.len()), (4, 4));
        let mut finished = 0;
        while first.next().await.is_some() {
            finished += 1;
        }
        while second.next().await.is_some() {
            finished += 1;
        }
        assert_eq!(finished, 8);
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_panicking_call_panics_the_caller() {
        let mut in_flight = InFlight::new(2);
        in_flight.start(async { panic!("a bug") });
        let caught = tokio::spawn(async move { in_flight.next().await }).await;
        assert!(caught.is_err_and(|error| error.is_panic()));
    }
}
