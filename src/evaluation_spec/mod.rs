//! Evaluation specs (the `evaluation_spec` block of challenge packs): strict decoding, normalisation,
//! validation, evidence resolution, validators, metrics, behavioral signals and scorecards.
//!
//! See `docs/spec.md` for the user-facing description. The semantics are those of agentclash's
//! *Evaluation spec reference* (`evaluation-spec-reference.md`) and its implementation; the last
//! section of `docs/spec.md`, "Where evalctl departs from the reference", lists the differences.
//! Comments in this module name that reference's sections ("the reference's Scorecard section")
//! and `docs/spec.md`'s headings. The entry points are [`load_spec`] (decode, normalise, validate)
//! and `evaluate_run` (one run record → one evaluation record).

pub mod decode;
pub mod evaluate;
pub mod evidence;
pub mod gostr;
pub mod judges;
pub mod live;
mod load;
pub mod locate;
pub mod metrics;
pub mod model;
pub mod named_values;
pub mod normalize;
pub mod payload;
pub mod scorecard;
pub mod signals;
pub mod summary;
pub mod validate;
pub mod validators;
mod yaml_nesting;

pub use decode::SpecProblem;
pub use evaluate::{evaluate_run, EvaluationRecord};
pub use evidence::RunRecord;
pub use load::{load_spec, read_spec, read_spec_warning, spec_problem, EvaluationSpec};
pub use model::SpecDefinition;
pub use summary::did_not_pass;
