//! `--max-cost`: what the task models' calls have cost so far, and whether the run may dispatch
//! another call without passing the budget (the calls in flight estimated at the mean cost of
//! the calls made so far).

use std::cell::Cell;

use super::price::Prices;
use crate::runner::CallRecord;

/// The budget of a run and what it has spent.
pub struct Budget {
    /// `--max-cost`, in USD.
    max_cost: f64,
    prices: Prices,
    /// USD spent by the task model calls made (resumed lines included: the budget is the
    /// whole run's).
    spent: Cell<f64>,
    /// Task model calls made (not answered by the cache), whose mean cost estimates a call.
    made: Cell<usize>,
    /// Whether a call was held back.
    stopped: Cell<bool>,
}

impl Budget {
    /// A budget of `max_cost` USD at `prices`.
    pub fn new(max_cost: f64, prices: Prices) -> Budget {
        Budget {
            max_cost,
            prices,
            spent: Cell::new(0.0),
            made: Cell::new(0),
            stopped: Cell::new(false),
        }
    }

    /// Count what `record`'s task model call cost.
    pub fn spend(&self, record: &CallRecord) {
        let Some(generation) = record.generation.as_ref().filter(|g| !g.cached) else {
            return;
        };
        let price = record
            .task_model
            .as_ref()
            .and_then(|model| self.prices.get(model));
        if let Some(price) = price {
            let usage = &generation.usage;
            let cost = price.cost(usage.prompt_tokens, usage.completion_tokens);
            self.spent.set(self.spent.get() + cost);
        }
        self.made.set(self.made.get() + 1);
    }

    /// Whether one more call may start with `in_flight` calls running: the spent cost, plus the
    /// calls in flight and this one at the mean cost of a call so far, stays within the budget.
    /// Once it says no, it says no for the rest of the run.
    pub fn allows(&self, in_flight: usize) -> bool {
        if self.stopped.get() {
            return false;
        }
        let made = self.made.get();
        let estimate = if made == 0 {
            0.0
        } else {
            self.spent.get() / made as f64
        };
        let allowed = self.spent.get() + (in_flight + 1) as f64 * estimate <= self.max_cost;
        self.stopped.set(!allowed);
        allowed
    }

    /// `--max-cost`, in USD.
    pub fn max_cost(&self) -> f64 {
        self.max_cost
    }

    /// What the calls made cost, in USD.
    pub fn spent(&self) -> f64 {
        self.spent.get()
    }

    /// Whether the budget held a call back.
    pub fn stopped(&self) -> bool {
        self.stopped.get()
    }
}
