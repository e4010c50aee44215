//! `--max-cost`: what the run's model calls have cost so far (the task models' under
//! `--generate`, and the LLM judge's when it is the evaluator), and whether the run may dispatch
//! another call without passing the budget (the calls in flight estimated at the mean cost of
//! the calls made so far). A call whose API reported no token usage cannot be counted: the
//! budget stops the run there.

use std::cell::{Cell, OnceCell};

use crate::llm::price::{Price, Prices};
use crate::record::CallRecord;

/// The relative error of a sum of costs that still counts as equal to the budget.
const COST_ROUNDING: f64 = 1e-9;

/// The budget of a run and what it has spent.
pub struct Budget {
    /// `--max-cost`, in USD.
    max_cost: f64,
    prices: Prices,
    /// `--judge-model`, when the LLM judge scores: its calls spend too.
    judge: Option<String>,
    /// USD spent by the model calls made (resumed lines included: the budget is the whole
    /// run's).
    spent: Cell<f64>,
    /// Calls of the run whose model calls cost something (not answered by a cache, not failed
    /// before any token was spent), whose mean cost estimates a call.
    made: Cell<usize>,
    /// What those calls cost, in USD (`spent` less what superseded lines spent).
    made_cost: Cell<f64>,
    /// Whether a call was held back.
    stopped: Cell<bool>,
    /// The first model whose API reported no token usage for a call: what the run spends can
    /// no longer be counted.
    usage_missing_from: OnceCell<String>,
}

impl Budget {
    /// A budget of `max_cost` USD at `prices`; with `judge`, the judge model's calls count too.
    pub fn new(max_cost: f64, prices: Prices, judge: Option<String>) -> Budget {
        Budget {
            max_cost,
            prices,
            judge,
            spent: Cell::new(0.0),
            made: Cell::new(0),
            made_cost: Cell::new(0.0),
            stopped: Cell::new(false),
            usage_missing_from: OnceCell::new(),
        }
    }

    /// Count what `record`'s model calls cost: its task model's (unless the completion cache
    /// or an earlier line's answer answered) and the judge's (unless the result cache
    /// answered).
    pub fn spend(&self, record: &CallRecord) {
        let Some(cost) = self.cost_of(record) else {
            return;
        };
        self.spent.set(self.spent.get() + cost);
        // A call that failed before spending a token says nothing of what a call costs: counted
        // at $0, it would let more calls start than the budget holds.
        if cost > 0.0 {
            self.made.set(self.made.get() + 1);
            self.made_cost.set(self.made_cost.get() + cost);
        }
    }

    /// Count what a line that answers no call cost: one another line of its call replaces (a
    /// call `--resume` makes again), or one the run stopped before its evaluator scored it.
    pub fn spend_superseded(&self, record: &CallRecord) {
        if let Some(cost) = self.cost_of(record) {
            self.spent.set(self.spent.get() + cost);
        }
    }

    /// What `record`'s model calls cost, when it made any: its task model's and the judge's.
    /// A call whose API reported no token usage cannot be costed: the first such is kept, and
    /// the budget allows no call after it.
    fn cost_of(&self, record: &CallRecord) -> Option<f64> {
        if let Some(model) = record.usage_missing_from(self.judge.as_deref()).first() {
            // Only the first is named.
            let _ = self.usage_missing_from.set(model.to_string());
        }
        let task_model = record
            .generation
            .as_ref()
            .filter(|generation| generation.spent())
            .map(|generation| {
                let usage = &generation.usage;
                self.price(record.task_model.as_ref()).map_or(0.0, |price| {
                    price.cost(usage.prompt_tokens, usage.completion_tokens)
                })
            });
        let judge = self.judge_cost(record);
        (task_model.is_some() || judge.is_some())
            .then(|| task_model.unwrap_or(0.0) + judge.unwrap_or(0.0))
    }

    /// What the judge's call of `record` cost, when the judge scores and the result cache did
    /// not answer.
    fn judge_cost(&self, record: &CallRecord) -> Option<f64> {
        self.judge.as_ref().filter(|_| !record.cached).map(|model| {
            let tokens = record.evaluator_tokens();
            self.price(Some(model))
                .zip(tokens)
                .map_or(0.0, |(price, (prompt, completion))| {
                    price.cost(prompt, completion)
                })
        })
    }

    fn price(&self, model: Option<&String>) -> Option<&Price> {
        model.and_then(|model| self.prices.get(model))
    }

    /// Whether one more call may start with `in_flight` calls running: the spent cost, plus the
    /// calls in flight and this one at the mean cost of a call so far, stays within the budget.
    /// Once it says no, it says no for the rest of the run; so it does once a call's API
    /// reported no token usage.
    pub fn allows(&self, in_flight: usize) -> bool {
        if self.usage_missing_from.get().is_some() {
            self.stopped.set(true);
        }
        if self.stopped.get() {
            return false;
        }
        let made = self.made.get();
        let estimate = if made == 0 {
            0.0
        } else {
            self.made_cost.get() / made as f64
        };
        // Costs are sums of products of prices: 0.05 + 0.01 is 0.060000000000000005, which
        // a budget of 0.06 must still allow.
        let allowed = self.spent.get() + (in_flight + 1) as f64 * estimate
            <= self.max_cost * (1.0 + COST_ROUNDING);
        self.stopped.set(!allowed);
        allowed
    }

    /// `--max-cost`, in USD.
    pub fn max_cost(&self) -> f64 {
        self.max_cost
    }

    /// What the model calls made cost, in USD.
    pub fn spent(&self) -> f64 {
        self.spent.get()
    }

    /// Whether the budget held a call back.
    pub fn stopped(&self) -> bool {
        self.stopped.get()
    }

    /// The model whose API reported no token usage for a call, if one did.
    pub fn usage_missing_from(&self) -> Option<&str> {
        self.usage_missing_from.get().map(String::as_str)
    }
}
