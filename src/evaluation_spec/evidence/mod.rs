//! Evidence references and their resolution against one run (the reference's "Evidence references
//! validators understand"; `docs/spec.md`, "Validators" and "The run record"): the reference forms
//! accepted at load time, the run record (challenge inputs and events), the evidence built from the
//! ordered events, and the resolution of a reference to a string, "missing" or an error.
//!
//! From the ground up: [`timestamp`] (event instants), [`record`] (the run record and the scoring
//! order of its events), [`members`] (reading a payload member), [`source`] (source pointers),
//! [`trace`] (the tool-call trace), [`resolve`] (case and artifact references), [`turns`]
//! (conversation turns and transcripts), [`usage`] (token usage from model calls), [`gather`]
//! (the evidence of one run, built from its events) and [`lookup`] (what scoring asks of that
//! evidence); [`reference`] is the load-time check of a reference's form.

mod gather;
mod lookup;
mod members;
mod record;
mod reference;
mod resolve;
mod source;
mod timestamp;
mod trace;
mod turns;
mod usage;

pub use gather::{Evidence, StepDuration};
pub use record::{order_events, Artifact, CaseValue, ChallengeInput, Event, RunRecord};
pub use reference::{is_supported_reference, unsupported_reference};
pub use resolve::Resolved;
pub use source::SourcePointer;
pub use timestamp::Timestamp;
pub use trace::{tool_trace, TraceEntry};
pub use turns::Turn;
pub use usage::ModelUsage;
