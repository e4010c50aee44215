//! Loading a spec: a file's bytes decoded strictly, normalised and validated into an
//! [`EvaluationSpec`] with its validators built once for every run it scores.

use super::decode::{self, SpecProblem};
use super::model::SpecDefinition;
use super::{locate, normalize, validate, validators};
use crate::error::{invalid, Problem};
use crate::input::Source;

/// A loaded spec: decoded strictly, normalised and valid, with its validators built (configs
/// decoded, patterns compiled) once for every run it scores.
#[derive(Debug)]
pub struct EvaluationSpec {
    pub(super) definition: SpecDefinition,
    pub(super) validators: Vec<validators::Validator>,
    /// What `spec validate` reports without rejecting the spec (unknown collectors, metric
    /// types their collectors do not yield), located in the file it was loaded from.
    warnings: Vec<SpecProblem>,
}

impl EvaluationSpec {
    /// The normalised definition (serialise it for `spec validate --print`).
    pub fn definition(&self) -> &SpecDefinition {
        &self.definition
    }

    /// What `spec validate` should report without rejecting the spec (unknown collectors, metric
    /// types their collectors do not yield), with their lines.
    pub fn warnings(&self) -> &[SpecProblem] {
        &self.warnings
    }

    /// A valid spec from a definition: normalise it, then validate it.
    pub fn from_definition(mut definition: SpecDefinition) -> Result<Self, Vec<SpecProblem>> {
        normalize::normalize(&mut definition);
        let problems = validate::validate(&definition);
        if problems.is_empty() {
            let validators = definition
                .validators
                .iter()
                .map(|decl| validators::Validator::new(&decl.kind, decl.config.as_ref()))
                .collect();
            Ok(EvaluationSpec {
                warnings: validate::advisories(&definition),
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
        Ok(mut spec) if problems.is_empty() => {
            locate_lines(bytes, &mut spec.warnings);
            Ok(spec)
        }
        Ok(_) => Err(problems),
        Err(mut invalid) => {
            locate_lines(bytes, &mut invalid);
            problems.extend(invalid);
            Err(problems)
        }
    }
}

/// What `spec validate` warns about in a spec [`load_spec`] refused, as far as it decodes: the
/// warnings come with the errors, not only once the errors are fixed.
fn warnings_despite_errors(bytes: &[u8], display: &str) -> Vec<SpecProblem> {
    let Ok((mut definition, _)) = decode::decode(bytes, display) else {
        return Vec::new();
    };
    normalize::normalize(&mut definition);
    let mut warnings = validate::advisories(&definition);
    locate_lines(bytes, &mut warnings);
    warnings
}

/// Give each of `found` without a line the line its path is on in the spec file `bytes`.
fn locate_lines(bytes: &[u8], found: &mut [SpecProblem]) {
    if found.is_empty() {
        return;
    }
    let index = locate::LineIndex::new(&String::from_utf8_lossy(bytes));
    for problem in found {
        problem.line = problem.line.or_else(|| index.line_of(&problem.path));
    }
}

/// Read and load the spec in `source`: every problem, decoding or validation, as a located
/// [`Problem`] (`FILE[:LINE]: <field path> <message>`).
pub fn read_spec(source: &Source) -> anyhow::Result<EvaluationSpec> {
    read_spec_warning(source).map_err(|(error, _)| error)
}

/// [`read_spec`], with what `spec validate` warns about in a spec it refuses (see
/// [`warnings_despite_errors`]), located in the file.
pub fn read_spec_warning(source: &Source) -> Result<EvaluationSpec, (anyhow::Error, Vec<Problem>)> {
    let display = source.display();
    let bytes = source
        .read()
        .map_err(|problem| (invalid(vec![problem]), Vec::new()))?;
    load_spec(&bytes, &display).map_err(|problems| {
        let located = |found: &[SpecProblem]| -> Vec<Problem> {
            found
                .iter()
                .map(|problem| spec_problem(&display, problem))
                .collect()
        };
        let warnings = warnings_despite_errors(&bytes, &display);
        (invalid(located(&problems)), located(&warnings))
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
        shareable::<crate::evaluation_spec::EvaluationRecord>();
    }
}
