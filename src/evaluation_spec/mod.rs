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
mod flow_depth;
pub mod gostr;
pub mod judges;
pub mod live;
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

pub use decode::SpecProblem;
pub use evaluate::{evaluate_run, EvaluationRecord};
pub use evidence::RunRecord;
pub use model::SpecDefinition;

use crate::error::{invalid, Problem};
use crate::input::Source;

/// A loaded spec: decoded strictly, normalised and valid, with its validators built (configs
/// decoded, patterns compiled) once for every run it scores.
#[derive(Debug)]
pub struct EvaluationSpec {
    definition: SpecDefinition,
    validators: Vec<validators::Validator>,
}

impl EvaluationSpec {
    /// The normalised definition (serialise it for `spec validate --print`).
    pub fn definition(&self) -> &SpecDefinition {
        &self.definition
    }

    /// What `spec validate` should report without rejecting the spec (unknown collectors, metric
    /// types their collectors do not yield).
    pub fn warnings(&self) -> Vec<SpecProblem> {
        validate::advisories(&self.definition)
    }

    /// A valid spec from a definition: normalise it, then validate it.
    pub fn from_definition(mut definition: SpecDefinition) -> Result<Self, Vec<SpecProblem>> {
        normalize::normalize(&mut definition);
        let problems = validate::validate(&definition);
        if problems.is_empty() {
            let validators = evaluate::build_validators(&definition);
            Ok(EvaluationSpec {
                definition,
                validators,
            })
        } else {
            Err(problems)
        }
    }
}

/// Decode (JSON or YAML; a manifest's `evaluation_spec` or a bare spec), normalise and validate a
/// spec file's bytes. `display` names the file (its extension picks the format when it has one).
/// Every problem is returned at once, unknown keys with the rest.
pub fn load_spec(bytes: &[u8], display: &str) -> Result<EvaluationSpec, Vec<SpecProblem>> {
    let (definition, mut problems) = decode::decode(bytes, display)?;
    match EvaluationSpec::from_definition(definition) {
        Ok(spec) if problems.is_empty() => Ok(spec),
        Ok(_) => Err(problems),
        Err(mut invalid) => {
            let index = locate::LineIndex::new(&String::from_utf8_lossy(bytes));
            for problem in &mut invalid {
                problem.line = problem.line.or_else(|| index.line_of(&problem.path));
            }
            problems.extend(invalid);
            Err(problems)
        }
    }
}

/// Read and load the spec in `source`: every problem, decoding or validation, as a located
/// [`Problem`] (`FILE[:LINE]: <field path> <message>`).
pub fn read_spec(source: &Source) -> anyhow::Result<EvaluationSpec> {
    let display = source.display();
    let bytes = source.read().map_err(|problem| invalid(vec![problem]))?;
    load_spec(&bytes, &display).map_err(|problems| {
        invalid(
            problems
                .iter()
                .map(|problem| spec_problem(&display, problem))
                .collect(),
        )
    })
}

/// A spec problem located in the file `display` names.
pub fn spec_problem(display: &str, problem: &SpecProblem) -> Problem {
    let located = Problem::new(display, problem.to_string());
    Problem {
        line: problem.line,
        ..located
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loaded_spec_can_score_runs_from_several_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<EvaluationSpec>();
        shareable::<EvaluationRecord>();
    }
}
