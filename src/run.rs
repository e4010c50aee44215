//! The `run` and `preflight` commands: load and validate inputs, build the evaluator, preflight
//! it, make the calls, report, and decide the exit code.

use std::sync::Arc;

use crate::config::RunConfig;
use crate::error::Fatal;
use crate::evaluator::{self, Evaluator, EvaluatorSpec};
use crate::exit::Exit;
use crate::input::{load_inputs, Inputs};
use crate::report::{
    self, EvaluatorInfo, Format, PreflightReport, ProbeAnswer, ResultsFile, Tally,
};
use crate::runner::preflight::{preflight, Probe};
use crate::runner::{self, plan_calls, unless_interrupted, CallRecord, RunContext};

/// `evalctl run`.
pub fn run(config: RunConfig) -> anyhow::Result<Exit> {
    let (inputs, evaluator) = prepare(&config)?;
    if let Some(path) = &config.output {
        // Checked now (exit 2 before any call); created only once preflight has passed.
        ResultsFile::check_writable(path)?;
    }
    let inputs = Arc::new(inputs);
    let plan = plan_calls(&inputs, config.exec.limit);
    let planned = plan.len();
    let concurrency = runner::calls_in_flight(
        config.exec.concurrency,
        planned,
        evaluator.kind(),
        config.color,
    );
    let progress = report::progress_bar(plan.len() as u64);
    let candidate_ids = inputs.candidates.iter().map(|c| c.id.clone()).collect();
    let splits = report::Splits {
        train: inputs.dataset.is_some(),
        val: inputs.valset.is_some(),
    };
    let built_in_checks = matches!(config.evaluator, EvaluatorSpec::Checks(_));
    let mut tally = Tally::new(candidate_ids, splits, built_in_checks);
    let context = Arc::new(RunContext {
        evaluator: Arc::clone(&evaluator),
        inputs: Arc::clone(&inputs),
        task_model: config.task_model.as_deref().map(Arc::from),
        retries: config.exec.retries,
    });
    let (finished, results_failed, stopped_in_preflight) = runner::block_on(async {
        match probe(&config, &inputs, evaluator.as_ref()).await {
            Some(probed) => probed?,
            None => {
                report::print_warning(
                    "interrupted during preflight: no call was made",
                    config.color,
                );
                let nothing = runner::Finished {
                    interrupted: true,
                    elapsed: std::time::Duration::ZERO,
                };
                return Ok((nothing, false, true));
            }
        };
        let mut results = config
            .output
            .as_deref()
            .map(ResultsFile::open)
            .transpose()?;
        let on_finished = |record: CallRecord| {
            if let Some(file) = results.as_mut() {
                if let Err(error) = file.append(&record) {
                    // Keep scoring: the summary still covers every call, and the exit code says 1.
                    progress.suspend(|| {
                        diag!("error: {error:#}; the remaining results are not written")
                    });
                    results = None;
                }
            }
            tally.add(&record);
            progress.inc(1);
        };
        let finished = runner::execute(context, plan, concurrency, on_finished).await;
        anyhow::Ok((
            finished,
            config.output.is_some() && results.is_none(),
            false,
        ))
    })??;
    progress.finish_and_clear();

    let (summary, diagnostics) = tally.finish(
        evaluator_info(evaluator.as_ref()),
        config.score_range,
        finished.elapsed.as_secs_f64() * 1000.0,
        finished.interrupted,
    );
    let kept_output = config.output.as_deref().filter(|_| !results_failed);
    report::print_diagnostics(&diagnostics, summary.calls.total, kept_output, config.color);
    report::print_summary(&summary, Format::resolve(config.format), config.color)?;

    if finished.interrupted {
        if !stopped_in_preflight {
            report::print_interrupted(summary.calls.total, planned);
        }
        return Ok(Exit::Interrupted);
    }
    let below = config
        .fail_under
        .map(|threshold| (threshold, summary.below(threshold)));
    if let Some((threshold, failed)) = &below {
        report::print_gate_failures(failed, *threshold);
    }
    let gate_failed = below.is_some_and(|(_, failed)| !failed.is_empty());
    Ok(
        if summary.calls.errors > 0 || gate_failed || results_failed {
            Exit::EvaluationFailed
        } else {
            Exit::Success
        },
    )
}

/// `evalctl preflight`: validate every input, probe the evaluator once, score nothing.
/// With `--format json` a failure is reported on stdout too, as `{"ok": false, "exit", "errors"}`,
/// so a CI job can parse either outcome.
pub fn preflight_only(config: RunConfig) -> anyhow::Result<Exit> {
    let outcome = check_everything(&config);
    if let (Err(error), Format::Json) = (&outcome, Format::resolve(config.format)) {
        if let Some(fatal) = error.downcast_ref::<Fatal>() {
            report::print_preflight_failure(&fatal.to_string(), fatal.exit() as u8)?;
        }
    }
    outcome
}

fn check_everything(config: &RunConfig) -> anyhow::Result<Exit> {
    let (inputs, evaluator) = prepare(config)?;
    if let Some(path) = &config.output {
        ResultsFile::check_writable(path)?;
    }
    let Some(probed) = runner::block_on(probe(config, &inputs, evaluator.as_ref()))? else {
        let message = "interrupted: preflight stopped before the evaluator answered";
        report::print_warning(message, config.color);
        if Format::resolve(config.format) == Format::Json {
            report::print_preflight_failure(message, Exit::Interrupted as u8)?;
        }
        return Ok(Exit::Interrupted);
    };
    let count = |records: &Option<Vec<crate::input::Record>>| records.as_ref().map(Vec::len);
    let report = PreflightReport {
        ok: true,
        evaluator: evaluator_info(evaluator.as_ref()),
        candidates: inputs.candidates.len(),
        dataset_records: count(&inputs.dataset),
        valset_records: count(&inputs.valset),
        probe: match probed? {
            Probe::Answered(score) => Some(ProbeAnswer { score }),
            Probe::Skipped => None,
        },
        description: evaluator.describe(),
    };
    report::print_preflight(&report, Format::resolve(config.format))?;
    Ok(Exit::Success)
}

/// The preflight of `config` (setup checks, then the probe unless `--skip-preflight`), or `None`
/// when an interruption came first.
async fn probe(
    config: &RunConfig,
    inputs: &Inputs,
    evaluator: &dyn Evaluator,
) -> Option<anyhow::Result<Probe>> {
    unless_interrupted(preflight(
        evaluator,
        config.task_model.as_deref(),
        inputs.dataset.as_ref().and_then(|records| records.first()),
        !config.exec.skip_preflight,
        config.exec.retries,
    ))
    .await
}

/// Load the inputs and build the evaluator. Problems in both (a bad dataset and a bad checks
/// file, say) are reported together, so one run shows everything to fix.
fn prepare(config: &RunConfig) -> anyhow::Result<(Inputs, Arc<dyn Evaluator>)> {
    let loading = config.clone();
    let inputs = runner::read_interruptibly(move || load_inputs(&loading));
    let evaluator = evaluator::build(&config.evaluator, &config.exec, config.score_range);
    let (inputs, evaluator) = match (inputs, evaluator) {
        (Ok(inputs), Ok(evaluator)) => (inputs, evaluator),
        (Err(first), Err(second)) => match (
            first.downcast_ref::<Fatal>(),
            second.downcast_ref::<Fatal>(),
        ) {
            (Some(Fatal::BadInput(first)), Some(Fatal::BadInput(second))) => {
                return Err(Fatal::BadInput(format!("{first}\n{second}")).into())
            }
            _ => return Err(first),
        },
        (Err(error), _) | (_, Err(error)) => return Err(error),
    };
    for candidate in inputs.candidates.iter().filter(|c| c.text.is_empty()) {
        report::print_warning(
            &format!("warning: candidate {} is empty", candidate.id),
            config.color,
        );
    }
    Ok((inputs, evaluator))
}

fn evaluator_info(evaluator: &dyn Evaluator) -> EvaluatorInfo {
    EvaluatorInfo {
        kind: evaluator.kind().to_string(),
        target: evaluator.target(),
    }
}
