//! The `evalctl spec` commands: read the spec and the runs through the shared readers, report
//! problems through the shared problem type, write evaluation records (with the result-line
//! members `summarize`, `compare` and `report` read) through the shared results writer, print
//! through the reporter.

use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use crate::error::{invalid, Fatal, Problem};
use crate::evaluation_spec::live::{LiveJudgeOptions, LiveJudges};
use crate::evaluation_spec::summary::ScoreSummary;
use crate::evaluation_spec::{
    evaluate_run, read_spec, read_spec_warning, spec_problem, EvaluationSpec, RunRecord,
};
use crate::exit::{Exit, Verdict};
use crate::input::{parse_object_line, JsonlStream, Source};
use crate::interrupt::{
    catch_in_flag, interrupt_requested, interrupted_reading, restore_default_actions,
    unless_interrupted_blocking,
};
use crate::record::{
    EvaluatorInfo, RunInfo, ScoredLine, ScoredRun, SharedMembers, Split, SPEC_SCORE,
};
use crate::report::{print, print_json, Document, Format, Reporter, ResultsFile, Spool, Styled};

/// `evalctl spec validate`.
#[derive(Debug, Clone)]
pub struct ValidateConfig {
    /// The spec or manifest file.
    pub file: Source,
    /// Print the normalised spec as JSON instead of the report.
    pub print: bool,
}

/// What the spec holds that is valid but likely a mistake (an unknown collector, a metric type
/// its collector does not yield), as warnings on stderr.
fn warn_about(spec: &EvaluationSpec, source: &Source, reporter: Reporter) {
    for warning in spec.warnings() {
        reporter.warning(spec_problem(&source.display(), warning));
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
    // What would be warned about comes with the errors, not only once they are fixed.
    let spec = read_spec_warning(&config.file).map_err(|(error, warnings)| {
        for warning in warnings {
            reporter.warning(warning);
        }
        error
    })?;
    warn_about(&spec, &config.file, reporter);
    let definition = spec.definition();
    if config.print {
        print_json(definition)?;
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
    print(&report, reporter)?;
    Ok(Exit::Success)
}

/// A valid spec in one line: its name, version, judging and counts.
impl Document for ValidReport<'_> {
    fn text(&self) -> Styled {
        let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        Styled::from(format!(
            "{}: valid: {} v{} ({} judging; {}, {}, {}; {}, {} strategy)\n",
            self.file,
            self.name,
            self.version_number,
            self.judge_mode,
            count(self.validators, "validator"),
            count(self.metrics, "metric"),
            count(self.llm_judges, "LLM judge"),
            count(self.dimensions, "dimension"),
            self.strategy
        ))
    }
}

/// Where `spec score` takes judge results from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgeSource {
    /// The run records' `llm_judge_results` (a missing one makes its judge unavailable).
    Recorded,
    /// evalctl runs the spec's `llm_judges` itself.
    Live,
}

/// `evalctl spec score`.
#[derive(Debug, Clone)]
pub struct ScoreConfig {
    /// The spec or manifest file.
    pub spec: Source,
    /// The runs JSONL, one run record per line.
    pub runs: Source,
    /// Where evaluation records go (appended); without it they go to stdout.
    pub output: Option<std::path::PathBuf>,
    /// Where judge results come from.
    pub judges: JudgeSource,
    /// Live judges: the endpoint for every judge model (else each provider's own).
    pub judge_base_url: Option<String>,
    /// Live judges: retries of a judge call (429, 5xx, timeouts).
    pub retries: u32,
}

/// `evalctl spec score SPEC RUNS.jsonl`: one evaluation record per run, written only once every
/// line is known to be a run record (to `--output`, or as JSONL on stdout), then the summary (on
/// stdout with `--output`, else on stderr). Exit 0 when every run passed, 1 when one failed or has
/// no verdict, 2 on invalid input, 130 when interrupted (what was scored is written).
pub fn score(config: &ScoreConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    let spec = read_spec(&config.spec);
    let output = config.output.as_deref().map_or(Ok(()), |path| {
        ResultsFile::check_scoring_output(
            path,
            &[
                ("the spec", config.spec.path()),
                ("the runs file", config.runs.path()),
            ],
        )
    });
    let spec = match spec {
        Ok(spec) => {
            warn_about(&spec, &config.spec, reporter);
            spec
        }
        Err(error) => {
            return Err(Fatal::merge(
                [Some(error), output.err()].into_iter().flatten(),
            ))
        }
    };
    // An unwritable --output is reported with every problem of the runs file (which is then
    // only checked, not scored).
    let output_problems = match output {
        Ok(()) => Vec::new(),
        Err(error) => match error.downcast::<Fatal>() {
            Ok(Fatal::Invalid(problems)) => problems,
            Ok(other) => return Err(other.into()),
            Err(other) => return Err(other),
        },
    };
    let live = match config.judges {
        JudgeSource::Recorded => None,
        JudgeSource::Live => Some(LiveJudges::new(
            spec.definition(),
            &LiveJudgeOptions {
                base_url: config.judge_base_url.clone(),
                retries: config.retries,
                ..LiveJudgeOptions::default()
            },
        )?),
    };
    // A rejected key or an unreachable API shows once, before any run, not in every record.
    if let Some(live) = &live {
        crate::runner::block_on(live.check_access())?
            .map_err(|reason| Fatal::Preflight(format!("live judges cannot run: {reason}")))?;
    }
    catch_in_flag();
    // One runtime for the whole file: live judge calls are awaited run by run.
    let scored = crate::runner::block_on(score_runs(config, &spec, live.as_ref(), output_problems));
    restore_default_actions();
    if let Some(warning) = live.as_ref().and_then(LiveJudges::failure_warning) {
        reporter.warning(warning);
    }
    crate::report::print_rate_limits(reporter);
    let (spool, mut summary, run) = scored??;
    let members = run.as_members()?;
    let mut exit = summary.conclude();
    match &config.output {
        Some(path) => {
            // A failed write is reported after the summary, which is printed whole (exit 4).
            let written = spool.append_to(path, &members);
            if written.is_err() {
                exit = Exit::Internal;
                summary.closing = Verdict::new(
                    exit,
                    format!(
                        "the records could not be written to {} (see stderr)",
                        path.display()
                    ),
                );
            }
            print(&summary, reporter)?;
            if let Err(error) = written {
                reporter.diagnose(&error);
            }
            // stdout is JSON: say on stderr why the exit code is not 0, for CI logs.
            if reporter.format == Format::Json && exit != Exit::Success {
                reporter.note(summary.closing.line());
            }
        }
        None => {
            let mut spooled = spool.records(&members)?;
            let mut stdout = crate::report::stdout_until_closed();
            std::io::copy(&mut spooled, &mut stdout)
                .and_then(|_| stdout.flush())
                .map_err(|err| crate::report::stdout_error(&err))?;
            reporter.note(summary.to_text().trim_end());
        }
    }
    Ok(exit)
}

/// Read, check and score every run, spooling the records (each with the result-line members
/// but `run`, which is known at the end): the spool, the summary and the `run` of the records,
/// or every problem found in the runs file after those already `found` (then nothing is
/// written, and nothing is scored after the first problem). The candidate is the runs file; the
/// evaluator, the spec.
async fn score_runs(
    config: &ScoreConfig,
    spec: &EvaluationSpec,
    live: Option<&LiveJudges>,
    found: Vec<Problem>,
) -> anyhow::Result<(Spool, ScoreSummary, RunInfo)> {
    let source = config.runs.clone();
    let file = unless_interrupted_blocking(move || JsonlStream::open_file(&source))
        .ok_or_else(interrupted_reading)?
        .map_err(|problem| invalid(vec![problem]))?;
    let mut runs = JsonlStream::new(&config.runs, file);
    let mut summary = ScoreSummary::new(
        spec,
        config.spec.display(),
        config.runs.display(),
        live.is_some(),
    );
    let candidate = config.runs.display();
    let evaluator = EvaluatorInfo {
        kind: "spec".to_string(),
        target: config.spec.display(),
    };
    let mut scored = ScoredRun::new(
        SPEC_SCORE,
        evaluator,
        &serde_json::to_vec(spec.definition())?,
    );
    // A new --output is the spool linked in place: each record holds room for the `run`
    // member, sized for the runs the file holds, so that it is written once.
    let mut spool = Spool::create(config.output.as_deref(), || {
        JsonlStream::foresee_records(&config.runs).map_or(0, |runs| scored.members_len(runs))
    })?;
    let mut problems = found;
    while let Some(next) = runs.next_text() {
        if interrupt_requested() {
            summary.interrupted = true;
            break;
        }
        let (line, text) = match next {
            Ok(next) => next,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        // Decoded straight into the run record (the fast path tracks no member paths); a bad line
        // is decoded again to name the bad member, and worded like every JSONL input's.
        let fast = RunRecord::decode(text).ok();
        let mut run = match fast {
            Some(run) if run.lacks_run_members(text) => {
                problems.push(Problem::at_line(
                    runs.display.as_str(),
                    line,
                    "not a run record: it has none of events, challenge_inputs, \
                     llm_judge_results and human_preference_score (is this the runs file?)",
                ));
                continue;
            }
            Some(run) => run,
            None => {
                let reason = match (parse_object_line(text), RunRecord::from_json_line(text)) {
                    (Err(reason), _) => reason,
                    (Ok(_), Err(reason)) => format!("not a run record: {reason}"),
                    (Ok(_), Ok(_)) => "not a run record".to_string(),
                };
                problems.push(Problem::at_line(runs.display.as_str(), line, reason));
                continue;
            }
        };
        // Live judges replace the recorded results, which are then not read.
        if let Some(reason) = run.judge_score_problem().filter(|_| live.is_none()) {
            problems.push(Problem::at_line(runs.display.as_str(), line, reason));
            continue;
        }
        // After the first problem the rest is only checked.
        if !problems.is_empty() {
            continue;
        }
        if let Some(live) = live {
            let inputs = live.inputs_for(&run);
            run.llm_judge_results = live.judge_run(&inputs).await;
        }
        let record = evaluate_run(spec, &run);
        summary.add(&record);
        let example_id = run.id.as_ref().map(|id| match id {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        });
        let score = record.score();
        let line = ScoredLine {
            own: &record,
            shared: SharedMembers {
                candidate_id: &candidate,
                candidate_index: 0,
                split: Split::Single,
                example_index: summary.runs - 1,
                example_line: Some(line),
                example_id,
                score: Some(*score.as_ref().unwrap_or(&0.0)),
                error: score.err(),
                run: None,
            },
        };
        // The run's digest covers what each scoring concluded (dimension scores, overall
        // score, verdict, validity), not every byte of its record.
        let concluded = serde_json::to_vec(&(
            &record.dimension_scores,
            record.overall_score,
            record.passed,
            record.validity,
        ))?;
        // A run's example is the cases it was given, named as the pack names them.
        let cases = run.challenge_inputs.iter().flat_map(|case| {
            [
                case.challenge_identity_id.as_str(),
                case.regression_case_id.as_deref().unwrap_or(""),
                case.challenge_key.as_str(),
                case.case_key.as_str(),
                case.item_key.as_str(),
            ]
        });
        scored.add(
            line.shared.example_id.as_deref().unwrap_or(""),
            cases,
            &concluded,
        );
        spool.write(&line)?;
    }
    if interrupt_requested() && !problems.is_empty() {
        return Err(interrupted_reading());
    }
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    if summary.runs == 0 && !summary.interrupted {
        return Err(invalid(vec![Problem::new(
            runs.display.as_str(),
            "no runs (expected one run record per line)",
        )]));
    }
    // The runs file is read as it streams: the plan is the runs scored, unless an interrupt
    // left runs unscored. Then it is every run of the file (from stdin, where the rest is
    // unknown, one more than were scored), so that the readers of the records see a partial
    // scoring, not a complete one.
    let plan_calls = match summary.interrupted {
        false => summary.runs,
        true => JsonlStream::records_in(&config.runs)
            .unwrap_or(summary.runs + 1)
            .max(summary.runs),
    };
    Ok((spool, summary, scored.finish(&candidate, plan_calls)))
}
