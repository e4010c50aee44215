//! The `run` and `preflight` commands: load and validate inputs, build the evaluator, preflight
//! it, make the calls, report, and decide the exit code.

use std::sync::Arc;

use serde_json::json;

use crate::config::RunConfig;
use crate::error::Fatal;
use crate::evaluator::preflight::{preflight, Probe};
use crate::evaluator::{self, Evaluator};
use crate::exit::Exit;
use crate::input::{load_inputs, Inputs};
use crate::report::{self, CallRecord, EvaluatorInfo, Format, ResultsFile, Tally};
use crate::runner::{self, plan_calls, unless_interrupted, RunContext};

/// `evalctl run`.
pub fn run(config: RunConfig) -> anyhow::Result<Exit> {
    let (inputs, evaluator) = prepare(&config)?;
    let mut results = config
        .output
        .as_deref()
        .map(ResultsFile::open)
        .transpose()?;
    let format = Format::resolve(config.format);
    let inputs = Arc::new(inputs);
    let plan = plan_calls(&inputs, config.exec.limit);
    let planned = plan.len();
    let progress = report::progress_bar(plan.len() as u64);
    let candidate_ids = inputs.candidates.iter().map(|c| c.id.clone()).collect();
    let splits = report::Splits {
        train: inputs.dataset.is_some(),
        val: inputs.valset.is_some(),
    };
    let mut tally = Tally::new(candidate_ids, splits);
    let mut results_failed = false;
    let context = Arc::new(RunContext {
        evaluator: Arc::clone(&evaluator),
        inputs: Arc::clone(&inputs),
        task_model: config.task_model.as_deref().map(Arc::from),
        retries: config.exec.retries,
    });
    let on_finished = |record: CallRecord| {
        if let Some(file) = results.as_mut() {
            if let Err(error) = file.append(&record) {
                // Keep scoring: the summary still covers every call, and the exit code says 1.
                progress.suspend(|| {
                    eprintln!("error: {error:#}; the remaining results are not written")
                });
                results = None;
                results_failed = true;
            }
        }
        tally.add(&record);
        progress.inc(1);
    };
    let finished = runner::block_on(async {
        let probed = unless_interrupted(preflight(
            evaluator.as_ref(),
            config.task_model.as_deref(),
            first_example(&inputs),
            !config.exec.skip_preflight,
            config.exec.retries,
        ))
        .await;
        match probed {
            None => {
                return Ok(runner::Finished {
                    interrupted: true,
                    elapsed: std::time::Duration::ZERO,
                })
            }
            Some(result) => result?,
        };
        anyhow::Ok(runner::execute(context, plan, config.exec.concurrency, on_finished).await)
    })??;
    progress.finish_and_clear();

    let (summary, diagnostics) = tally.finish(
        evaluator_info(evaluator.as_ref()),
        config.score_range,
        finished.elapsed.as_secs_f64() * 1000.0,
        finished.interrupted,
    );
    let kept_output = config.output.as_deref().filter(|_| !results_failed);
    report::print_diagnostics(&diagnostics, kept_output, config.color);
    report::print_summary(&summary, format, config.color)?;

    if finished.interrupted {
        eprintln!(
            "interrupted: {} of {planned} calls finished; the summary covers them",
            summary.calls.total
        );
        return Ok(Exit::Interrupted);
    }
    let gate_failed = config.fail_under.is_some_and(|threshold| {
        let below = summary.below(threshold);
        for candidate in &below {
            match candidate.score {
                Some(score) => eprintln!(
                    "fail-under: candidate {} scored {score:.4}, below {threshold}",
                    candidate.id
                ),
                None => eprintln!(
                    "fail-under: candidate {} has no score (no call finished)",
                    candidate.id
                ),
            }
        }
        !below.is_empty()
    });
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
            let message = fatal.to_string();
            let errors: Vec<&str> = message
                .lines()
                .map(|line| line.strip_prefix("error: ").unwrap_or(line))
                .collect();
            let report = json!({"ok": false, "exit": fatal.exit() as u8, "errors": errors});
            report::print_stdout(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
        }
    }
    outcome
}

fn check_everything(config: &RunConfig) -> anyhow::Result<Exit> {
    let (inputs, evaluator) = prepare(config)?;
    if let Some(path) = &config.output {
        ResultsFile::check_writable(path)?;
    }
    let Some(probe) = runner::block_on(unless_interrupted(preflight(
        evaluator.as_ref(),
        config.task_model.as_deref(),
        first_example(&inputs),
        !config.exec.skip_preflight,
        config.exec.retries,
    )))?
    else {
        eprintln!("interrupted: preflight stopped before the evaluator answered");
        return Ok(Exit::Interrupted);
    };
    let probe = probe?;
    let count = |records: &Option<Vec<crate::input::Record>>| records.as_ref().map(Vec::len);
    let probe_score = match probe {
        Probe::Answered(score) => Some(score),
        Probe::Skipped => None,
    };
    let report = json!({
        "ok": true,
        "evaluator": evaluator_info(evaluator.as_ref()),
        "candidates": inputs.candidates.len(),
        "dataset_records": count(&inputs.dataset),
        "valset_records": count(&inputs.valset),
        "probe": match probe_score { Some(score) => json!({"score": score}), None => json!(null) },
    });
    match Format::resolve(config.format) {
        Format::Json => {
            report::print_stdout(&format!("{}\n", serde_json::to_string_pretty(&report)?))?
        }
        Format::Text => {
            let mut line = format!("preflight ok: {} candidate(s)", inputs.candidates.len());
            if let Some(n) = count(&inputs.dataset) {
                line.push_str(&format!(", dataset {n} records"));
            }
            if let Some(n) = count(&inputs.valset) {
                line.push_str(&format!(", valset {n} records"));
            }
            line.push_str(&match probe_score {
                Some(score) => format!(
                    "; {} answered the probe with score {score}\n",
                    evaluator.describe()
                ),
                None => format!("; {} set up (no probe sent)\n", evaluator.describe()),
            });
            report::print_stdout(&line)?;
        }
    }
    Ok(Exit::Success)
}

/// Load the inputs and build the evaluator. Problems in both (a bad dataset and a bad checks
/// file, say) are reported together, so one run shows everything to fix.
fn prepare(config: &RunConfig) -> anyhow::Result<(Inputs, Arc<dyn Evaluator>)> {
    let inputs = load_inputs(config);
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
        eprintln!("warning: candidate {} is empty", candidate.id);
    }
    Ok((inputs, evaluator))
}

fn first_example(inputs: &Inputs) -> Option<&crate::input::Record> {
    inputs.dataset.as_ref().and_then(|records| records.first())
}

fn evaluator_info(evaluator: &dyn Evaluator) -> EvaluatorInfo {
    EvaluatorInfo {
        kind: evaluator.kind().to_string(),
        target: evaluator.target(),
    }
}
