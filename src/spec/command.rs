//! The `evalctl spec` commands: read the spec through the shared reader, report its problems
//! through the shared problem type, print through the reporter.

use serde::Serialize;

use super::{load_spec, EvaluationSpec, SpecProblem};
use crate::error::{invalid, Problem};
use crate::exit::Exit;
use crate::input::Source;
use crate::report::{print_stdout, Format, Reporter};

/// `evalctl spec validate`.
#[derive(Debug, Clone)]
pub struct ValidateConfig {
    /// The spec or manifest file.
    pub file: Source,
    /// Print the normalised spec as JSON instead of the report.
    pub print: bool,
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

fn spec_problem(display: &str, problem: &SpecProblem) -> Problem {
    let located = Problem::new(display, problem.to_string());
    Problem {
        line: problem.line,
        ..located
    }
}

/// What a valid spec holds, for the report.
#[derive(Debug, Serialize)]
struct ValidReport<'a> {
    ok: bool,
    file: String,
    name: &'a str,
    version_number: i64,
    judge_mode: String,
    validators: usize,
    metrics: usize,
    llm_judges: usize,
    dimensions: usize,
    strategy: String,
}

/// `evalctl spec validate FILE [--print]`: exit 0 when the spec is valid; its problems are bad
/// input (exit 2).
pub fn validate(config: &ValidateConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    let spec = read_spec(&config.file)?;
    let definition = spec.definition();
    if config.print {
        print_stdout(&format!("{}\n", serde_json::to_string_pretty(definition)?))?;
        return Ok(Exit::Success);
    }
    let report = ValidReport {
        ok: true,
        file: config.file.display(),
        name: &definition.name,
        version_number: i64::from(definition.version_number),
        judge_mode: definition.judge_mode.clone(),
        validators: definition.validators.len(),
        metrics: definition.metrics.len(),
        llm_judges: definition.llm_judges.len(),
        dimensions: definition.scorecard.dimensions.len(),
        strategy: definition.scorecard.strategy.clone(),
    };
    match reporter.format {
        Format::Json => print_stdout(&format!("{}\n", serde_json::to_string_pretty(&report)?))?,
        Format::Text => print_stdout(&format!(
            "{}: valid: {} v{} ({} judging; {} validators, {} metrics, {} LLM judges; {} \
             dimensions, {} strategy)\n",
            report.file,
            report.name,
            report.version_number,
            report.judge_mode,
            report.validators,
            report.metrics,
            report.llm_judges,
            report.dimensions,
            report.strategy
        ))?,
    }
    Ok(Exit::Success)
}
