//! The run summary: per-candidate aggregates over each split, and the call counts.
//!
//! [`Tally`] ([`tally`]) counts each call as it finishes and gives the [`Summary`]
//! ([`run_summary`]) at the end: each row's [`aggregate`] over a split, its [`pass_at_k`] under
//! `--repeat`, and what the model calls [`spend`]; [`gate_report`] holds how the gates judged
//! the run, and [`rounding`] keeps float rounding out of means and gates.

mod aggregate;
mod gate_report;
mod pass_at_k;
mod rounding;
mod run_summary;
mod spend;
mod tally;

pub use aggregate::Aggregate;
pub use gate_report::{
    BudgetReport, CompleteGate, ErrorGate, FailUnderGate, GateReport, VerdictGate,
};
pub use rounding::{below, mean_in_order, mean_of_examples};
pub use run_summary::{Calls, CandidateSummary, Summary};
pub use spend::Usage;
pub(super) use tally::{scored_below, verdict_failed};
pub use tally::{Diagnostics, Tally};
