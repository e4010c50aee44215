//! Evaluation specs (the `evaluation_spec` block of challenge packs): strict decoding, normalisation,
//! validation, evidence resolution, validators, metrics, behavioral signals and scorecards.
//!
//! See `docs/spec.md` for the user-facing description and the design page for the reference
//! semantics this module follows.

pub mod validators;
