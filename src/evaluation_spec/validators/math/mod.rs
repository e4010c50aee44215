//! math_equivalence: LaTeX-ish normalisation, a small recursive-descent grammar, exact
//! rational canonical forms compared by key (no like-term collection), and an f64 fallback with a
//! tolerance.
//!
//! From the ground up: [`settings`] (the validator's config and its check), [`normalize`] (the
//! LaTeX-ish normalisation), [`grammar`] (tokens, the expression tree and its parser),
//! [`canonical`] (canonical forms and the f64 value) and [`decide`] (the verdict).

mod canonical;
mod decide;
mod grammar;
mod normalize;
mod settings;

pub(super) use decide::math_equivalence;
pub(super) use settings::{check, MathConfig};
