//! The `run` and `preflight` commands: load and validate inputs, build the evaluator, preflight
//! it, make the calls, report, and decide the exit code.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::RunConfig;
use crate::error::bad_flag;
use crate::error::Fatal;
use crate::evaluator::{self, Evaluator, EvaluatorSpec};
use crate::exit::Exit;
use crate::generate::budget::Budget;
use crate::generate::model::ModelSpec;
use crate::generate::{check_templates, Generator};
use crate::input::{load_inputs, repeated_ids, CandidateSource, Inputs, Source};
use crate::interrupt::{interrupt_requested, read_interruptibly, unless_interrupted};
use crate::record::{CallRecord, EvaluatorInfo, RunIdentity, RunInfo, Split, Splits};
use crate::report::{
    self, check_distinct, Junit, PreflightReport, ProbeAnswer, Reporter, ResultsFile, Tally,
};
use crate::runner::key::{text_digest, KeyContext, KeyedFiles, RunDigests};
use crate::runner::preflight::{preflight, Probe};
use crate::runner::resume::{check_output, resume_from, OutputUse, ResumedLine};
use crate::runner::{self, plan_calls, RunContext};
use crate::store::Table;

/// `evalctl run`.
pub fn run(config: RunConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    let (inputs, evaluator) = prepare(&config, reporter)?;
    let generator = generator(&config, &inputs)?;
    let inputs = Arc::new(inputs);
    let Planned {
        mut plan,
        plan_calls_total,
        digests,
        keyed_files,
        output_checked,
    } = plan_checked(&config, &inputs, generator.as_deref())?;
    let planned = plan.len();
    let (concurrency, limited) =
        runner::calls_in_flight(config.exec.concurrency, planned, evaluator.kind());
    if let Some(warning) = limited {
        reporter.warning(warning);
    }
    let candidate_ids: Vec<String> = inputs.candidates.iter().map(|c| c.id.clone()).collect();
    let mut junit = config
        .junit
        .as_ref()
        .map(|_| Junit::new(candidate_ids.clone(), config.pass_score));
    let splits = Splits {
        train: inputs.dataset.is_some(),
        // A valset none of whose examples `--example` picks takes no part in the run: the score
        // is the train mean, as without a valset (said, since a gate then judges the train mean).
        val: inputs
            .valset
            .as_deref()
            .is_some_and(|records| config.exec.examples.used(records).next().is_some()),
    };
    if let (Some(valset), false) = (&config.valset, splits.val) {
        reporter.warning(format!(
            "--example picks no example of the valset {}: the score (and --fail-under) is the \
             train mean, and `compare` pairs this run only with runs without a valset",
            valset.display()
        ));
    }
    let mut tally =
        Tally::new(candidate_ids, splits, config.seed, config.pass_score).repeated(config.repeat);
    if let Some(generator) = &generator {
        tally = tally.per_task_model(&generator.labels());
    }
    let judge_model = config.evaluator.judge_model().map(str::to_string);
    tally = tally.priced(config.pricing.prices.clone(), judge_model.clone());
    let budget = config
        .pricing
        .max_cost
        .map(|max_cost| Budget::new(max_cost, config.pricing.prices.clone(), judge_model));
    // `--report` needs every record at the end; without it, memory does not grow with calls.
    let mut report_records = config.report.as_ref().map(|_| Vec::new());
    // A results file being resumed is held as its only writer before it is read: while another
    // evalctl writes it, its last line, half-written, must not be taken for one cut short and
    // removed.
    let mut resumed_file = None;
    // The failed lines whose calls the run makes again, by key: one whose call it does not
    // make (stopped first) still answers it, as in the file.
    let mut remade: BTreeMap<String, CallRecord> = BTreeMap::new();
    if let Some(path) = config.output.as_deref().filter(|_| config.resume) {
        if path.exists() {
            resumed_file = Some(ResultsFile::open(path)?);
        }
        let resumed = resume_from(
            path,
            &digests.fingerprint,
            &inputs,
            &mut plan,
            config.resume_keep_errors,
            config.score_range,
            |line| match line {
                ResumedLine::Answers(record) => {
                    keep_for_report(&mut report_records, &record);
                    tally.add(&record);
                    if let Some(budget) = &budget {
                        budget.spend(&record);
                    }
                    if let Some(junit) = junit.as_mut() {
                        junit.add(&record);
                    }
                }
                ResumedLine::Remade(record) => {
                    if let Some(budget) = &budget {
                        budget.spend_superseded(&record);
                    }
                    remade.insert(record.call_key(), record);
                }
                ResumedLine::Superseded(record) => {
                    tally.add_superseded(&record);
                    if let Some(budget) = &budget {
                        budget.spend_superseded(&record);
                    }
                }
            },
        )?;
        report::print_resumed(path, &resumed, planned, reporter);
    }
    let progress = report::Progress::start(
        plan.len() as u64,
        concurrency,
        &inputs
            .candidates
            .iter()
            .map(|c| c.id.clone())
            .collect::<Vec<_>>(),
        Split::scored_in(splits),
        config.heartbeat,
    );
    let context = Arc::new(RunContext {
        evaluator: Arc::clone(&evaluator),
        inputs: Arc::clone(&inputs),
        task_model: config.task_model.as_deref().map(Arc::from),
        generator: generator
            .clone()
            .map(|generator| generator as Arc<dyn runner::Generate>),
        retries: config.exec.retries,
        cache: config
            .cache_dir
            .as_deref()
            .map(crate::store::Cache::open)
            .transpose()?
            .map(|cache| cache.expect(Table::Results, plan.iter().map(|call| &call.key)))
            .transpose()?,
        score_range: config.score_range,
        keyed_files,
        run_info: RunInfo {
            command: None,
            evaluator: evaluator_info(evaluator.as_ref()),
            score_range: config.score_range.as_str().to_string(),
            splits,
            candidates: inputs.candidates.len(),
            identity: Some(RunIdentity {
                fingerprint: digests.fingerprint.clone(),
                evaluator_digest: digests.evaluator.clone(),
                inputs_digest: digests.inputs.clone(),
                shard: shard_label(&config),
                shard_calls: planned,
                plan_calls: plan_calls_total,
            }),
        },
        candidate_digests: inputs
            .candidates
            .iter()
            .map(|candidate| text_digest(&candidate.text))
            .collect(),
        unscored: Default::default(),
    });
    let (finished, results_failed, stopped_in_preflight) = runner::block_on(async {
        // A resumed run with every call done already, or whose budget is spent already, makes
        // no call: nothing is probed (a model's probe is a paid call).
        let budget_allows = budget.as_ref().is_none_or(|budget| budget.allows(0));
        let probe_evaluator = !config.exec.skip_preflight && !plan.is_empty() && budget_allows;
        let models = generator.as_deref();
        match probe(
            &config,
            &inputs,
            evaluator.as_ref(),
            probe_evaluator,
            models,
        )
        .await
        {
            Some(probed) => probed?,
            None => {
                let nothing = runner::Finished {
                    interrupted: true,
                    elapsed: std::time::Duration::ZERO,
                    stopped: None,
                };
                return Ok((nothing, false, true));
            }
        };
        let results = match resumed_file.take() {
            Some(file) => Some(file),
            None => match config.output.as_deref() {
                Some(path) => Some(open_checked(
                    path,
                    output_checked.as_ref(),
                    &config,
                    &digests,
                    &plan,
                )?),
                None => None,
            },
        }
        .map(ResultsFile::in_background);
        // Once results cannot be written, no call is started: its result would be lost.
        let results = RefCell::new(results);
        let mut write_failure = None;
        let on_finished = |record: CallRecord| {
            if !record.unscored() {
                keep_for_report(&mut report_records, &record);
                // The failed line this one replaces counts only for what it spent.
                if let Some(earlier) = remade.remove(&record.call_key()) {
                    tally.add_superseded(&earlier);
                }
            }
            let mut open = results.borrow_mut();
            if let Some(file) = open.as_mut() {
                if let Err(error) = file.append(&record) {
                    // The calls in flight finish and count in the summary; the exit code says 4.
                    progress.suspend(|| reporter.diagnose(&error));
                    *open = None;
                    write_failure = Some(error);
                }
            }
            drop(open);
            tally.add(&record);
            if record.unscored() {
                // A call stopped after its task model answered: only what it spent counts.
                if let Some(budget) = &budget {
                    budget.spend_superseded(&record);
                }
                return;
            }
            if let Some(budget) = &budget {
                budget.spend(&record);
            }
            if let Some(junit) = junit.as_mut() {
                junit.add(&record);
            }
            progress.record(&record);
        };
        let on_stopping = |in_flight: usize| {
            progress.suspend(|| report::print_stopping(in_flight, runner::GRACE, reporter))
        };
        let writing = config.output.is_some();
        let may_dispatch = |in_flight: usize| {
            let written = results
                .borrow()
                .as_ref()
                .map_or(!writing, |file| !file.has_failed());
            written
                && budget
                    .as_ref()
                    .is_none_or(|budget| budget.allows(in_flight))
        };
        let finished = runner::execute(
            Arc::clone(&context),
            plan,
            concurrency,
            on_finished,
            on_stopping,
            may_dispatch,
        )
        .await;
        match results.into_inner().map(ResultsFile::finish) {
            Some(Err(error)) => {
                reporter.diagnose(&error);
                write_failure = Some(error);
            }
            Some(Ok(Some(warning))) => reporter.warning(warning),
            _ => {}
        }
        anyhow::Ok((finished, write_failure.is_some(), false))
    })??;
    progress.finish();
    // Failed calls the run did not make again (stopped first) are failed calls still.
    let not_remade = remade.len();
    for earlier in remade.into_values() {
        keep_for_report(&mut report_records, &earlier);
        tally.add(&earlier);
        if let Some(junit) = junit.as_mut() {
            junit.add(&earlier);
        }
    }
    if let Some(stopped) = finished.stopped {
        let kept_in = config
            .output
            .as_deref()
            .map(|path| path.display().to_string());
        report::print_stopped(stopped, runner::GRACE, kept_in.as_deref(), reporter);
    }
    for warning in evaluator.closing_warnings() {
        reporter.warning(warning);
    }
    let keyed_files = std::iter::once(&context.keyed_files).chain(
        generator
            .iter()
            .flat_map(|generator| generator.keyed_files()),
    );
    for warning in keyed_files.filter_map(KeyedFiles::changed_during_the_run) {
        reporter.warning(warning);
    }
    if let Some(directory) = context.keyed_files.changed_directory() {
        let removed = (context.cache.as_ref()).map(crate::store::Cache::forget_results_stored);
        reporter.warning(KeyedFiles::directory_changed_during_the_run(
            directory, removed,
        ));
    }
    let caches = context
        .cache
        .iter()
        .chain(generator.iter().flat_map(|g| g.cache()));
    for warning in caches.filter_map(crate::store::Cache::flush) {
        reporter.warning(warning);
    }

    let (mut summary, diagnostics) = tally.finish(
        evaluator_info(evaluator.as_ref()),
        config.score_range,
        Some(crate::text::milliseconds(finished.elapsed)),
        finished.interrupted,
    );
    if stopped_in_preflight {
        // Nothing was evaluated: no summary of nothing, but the failure document; a resumed run
        // summarises the calls its journal holds.
        if summary.calls.total == 0 {
            reporter.stopped(
                "interrupted during preflight: nothing was evaluated",
                Exit::Interrupted,
            );
            return Ok(Exit::Interrupted);
        }
        reporter.warning(format!(
            "interrupted during preflight: no call was made; the summary covers the {} calls \
             resumed",
            summary.calls.total
        ));
    }
    summary.budget = budget.map(|budget| report::BudgetReport {
        max_cost_usd: budget.max_cost(),
        spent_usd: budget.spent(),
        stopped: budget.stopped(),
        calls_not_made: if budget.stopped() {
            (planned + not_remade).saturating_sub(summary.calls.total)
        } else {
            0
        },
        usage_missing_from: budget.usage_missing_from().map(str::to_string),
    });
    summary.numbered_texts = inputs
        .candidates
        .iter()
        .filter(|candidate| candidate.numbered)
        .map(|candidate| (candidate.id.clone(), candidate.text.clone()))
        .collect();
    // A shard's summary covers its own calls, an interrupted run's those that finished: the
    // rest of the run's plan is missing from it, as a summary of its results file says.
    let covered = if finished.interrupted || results_failed {
        summary.calls.total
    } else {
        planned
    };
    summary.partial = match config.shard {
        Some(shard) => {
            report::Partial::of_shard(shard.index, shard.count, plan_calls_total, covered)
        }
        None => report::Partial::new(
            plan_calls_total.saturating_sub(covered),
            plan_calls_total,
            Vec::new(),
            crate::record::completed_by(None),
        ),
    };
    let not_made = (planned + not_remade).saturating_sub(summary.calls.total);
    if let Some(path) = config
        .output
        .as_deref()
        .filter(|_| results_failed && not_made > 0)
    {
        reporter.note(format!(
            "stopped: no call is started once results cannot be written: {} not made (run \
             --resume makes them once {} can be written)",
            crate::text::counted(not_made, "call", "calls"),
            path.display()
        ));
    }
    let gates = config.gates;
    let junit_written = crate::report::write_junit_if_asked(
        junit.as_ref(),
        config.junit.as_deref(),
        &summary,
        gates.fail_under,
        reporter,
    );
    let exit = gates.judge(&mut summary, results_failed || junit_written.is_err());
    let kept_in = (config.output.as_deref())
        .filter(|_| !results_failed)
        .map(|path| path.display().to_string());
    report::print_diagnostics(
        &diagnostics,
        summary.calls.total,
        kept_in.as_deref(),
        reporter,
    );
    report::print_rate_limits(reporter);
    report::print(&summary, reporter)?;
    report::append_step_summary(&summary, reporter);
    let html_written = match (&config.report, &report_records) {
        (Some(path), Some(records)) => {
            let page = report::html::Report::of_run(&summary, records, &inputs);
            report::html::write_run_report(&page, path)
                .map(Some)
                .map_err(|error| reporter.diagnose(&error))
        }
        _ => Ok(None),
    };
    let html_failed = html_written.is_err();
    report::print_written(
        &[junit_written.ok().flatten(), html_written.ok().flatten()],
        reporter,
    );
    if html_failed {
        return Ok(Exit::Internal);
    }
    if finished.interrupted && !stopped_in_preflight {
        report::print_interrupted(summary.calls.total, planned, reporter);
    }
    report::print_gate_verdict(&summary, reporter);
    // A signal since the calls ended (the handlers stay in place) let everything above be
    // written whole; it still ends the run as an interruption.
    if interrupt_requested() && exit != Exit::Interrupted {
        report::print_interrupted_while_writing(reporter);
        return Ok(Exit::Interrupted);
    }
    Ok(exit)
}

/// Open `--output` at `path` (not resumed) as its only writer, and check it again against the
/// run's plan now that no other evalctl can write it, when it changed since [`plan_checked`]
/// looked (`checked`): another run given the same file may have written it meanwhile (while
/// this run's preflight probe was answered).
fn open_checked(
    path: &Path,
    checked: Option<&FileState>,
    config: &RunConfig,
    digests: &RunDigests,
    plan: &[runner::PlannedCall],
) -> anyhow::Result<ResultsFile> {
    let file = ResultsFile::open(path)?;
    if FileState::of(path).as_ref() != checked {
        let allowed = OutputUse {
            resume: config.resume,
            append_run: config.append_run,
        };
        check_output(path, digests, &shard_label(config), plan, allowed)?;
    }
    Ok(file)
}

/// What tells a file that changed from one that did not: its length and modification time
/// (`None`: no such file, or an empty one).
#[derive(Debug, PartialEq, Eq)]
struct FileState {
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileState {
    fn of(path: &Path) -> Option<FileState> {
        let metadata = std::fs::metadata(path).ok().filter(|meta| meta.len() > 0)?;
        Some(FileState {
            len: metadata.len(),
            modified: metadata.modified().ok(),
        })
    }
}

/// The run's plan, with `--output` checked against it.
struct Planned {
    /// This shard's calls.
    plan: Vec<runner::PlannedCall>,
    /// Calls of the whole run, every shard together.
    plan_calls_total: usize,
    digests: RunDigests,
    /// The files the call keys hash, as they were.
    keyed_files: KeyedFiles,
    /// `--output` as it was when checked against the plan.
    output_checked: Option<FileState>,
}

/// Plan the run's calls (this shard's), and refuse (exit 2) an `--output` the run may not write
/// to: one that holds this run without `--resume`, another run without `--append-run`, or is no
/// results file. `preflight` makes the same check, so that it passes only when `run` would start.
fn plan_checked(
    config: &RunConfig,
    inputs: &Inputs,
    generator: Option<&Generator>,
) -> anyhow::Result<Planned> {
    let keys = KeyContext::new(
        &config.evaluator,
        config.score_range,
        config.task_model.as_deref(),
        &config.declared,
    )?;
    let (keys, mut plan) = match generator {
        None => {
            let plan = plan_calls(inputs, &config.exec.examples, config.repeat, &keys);
            (keys, plan)
        }
        Some(generator) => generator.plan(&keys, inputs, &config.exec.examples, config.repeat),
    };
    let plan_calls_total = plan.len();
    if let Some(shard) = config.shard {
        shard.keep(&mut plan);
    }
    let digests = RunDigests::of(&keys, inputs, &config.exec.examples, config.repeat);
    let mut output_checked = None;
    if let Some(path) = config.output.as_deref() {
        output_checked = FileState::of(path);
        let allowed = OutputUse {
            resume: config.resume,
            append_run: config.append_run,
        };
        check_output(path, &digests, &shard_label(config), &plan, allowed)?;
    }
    Ok(Planned {
        plan,
        plan_calls_total,
        digests,
        keyed_files: keys.keyed_files().clone(),
        output_checked,
    })
}

/// `evalctl preflight`: validate every input, probe the evaluator once, score nothing. A
/// failure is reported by the reporter like any command's (with `--format json`, as
/// `{"ok": false, "exit", "errors"}` on stdout), so a CI job can parse either outcome.
pub fn preflight_only(config: RunConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    let (inputs, evaluator) = prepare(&config, reporter)?;
    let generator = generator(&config, &inputs)?;
    plan_checked(&config, &inputs, generator.as_deref())?;
    let probe_evaluator = !config.exec.skip_preflight;
    let models = generator.as_deref();
    let Some(probed) = runner::block_on(probe(
        &config,
        &inputs,
        evaluator.as_ref(),
        probe_evaluator,
        models,
    ))?
    else {
        reporter.stopped(
            "interrupted: preflight stopped before the evaluator answered",
            Exit::Interrupted,
        );
        return Ok(Exit::Interrupted);
    };
    let count = |records: &Option<Vec<crate::input::Record>>| records.as_ref().map(Vec::len);
    let used = |records: &Option<Vec<crate::input::Record>>| {
        let records = records.as_deref()?;
        Some(config.exec.examples.used(records).count())
    };
    let report = PreflightReport {
        ok: true,
        evaluator: evaluator_info(evaluator.as_ref()),
        candidates: inputs.candidates.len(),
        dataset_records: count(&inputs.dataset),
        valset_records: count(&inputs.valset),
        dataset_used: used(&inputs.dataset),
        valset_used: used(&inputs.valset),
        probe: match probed? {
            Probe::Answered(score) => Some(ProbeAnswer { score }),
            Probe::Skipped => None,
        },
        description: evaluator.describe(),
    };
    report::print(&report, reporter)?;
    Ok(Exit::Success)
}

/// The preflight of `config` (setup checks, then the probe when `probe_evaluator`), the task
/// models' first (`--generate`), or `None` when an interruption came first.
async fn probe(
    config: &RunConfig,
    inputs: &Inputs,
    evaluator: &dyn Evaluator,
    probe_evaluator: bool,
    task_models: Option<&Generator>,
) -> Option<anyhow::Result<Probe>> {
    unless_interrupted(async {
        if let Some(task_models) = task_models {
            task_models.preflight(probe_evaluator).await?;
        }
        preflight(
            evaluator,
            config.task_model.as_deref(),
            first_example(config, inputs).map(|(_, record)| record),
            probe_evaluator,
            config.exec.retries,
        )
        .await
    })
    .await
}

/// `--generate`: check every candidate renders for every example, then build the task models.
fn generator(config: &RunConfig, inputs: &Inputs) -> anyhow::Result<Option<Arc<Generator>>> {
    let Some(spec) = &config.generate else {
        return Ok(None);
    };
    check_templates(
        inputs,
        [config.dataset.as_deref(), config.valset.as_deref()],
        &config.exec.examples,
    )?;
    let mut generator = Generator::build(
        spec,
        config.exec.timeout,
        config.exec.concurrency,
        config.exec.retries,
        config.cache_dir.as_deref(),
        &config.declared,
    )?;
    if let Some(path) = config.output.as_deref().filter(|_| config.resume) {
        generator.recall(path);
    }
    Ok(Some(Arc::new(generator)))
}

/// The run's shard as its lines name it: `K/N`, `0/1` unsharded.
fn shard_label(config: &RunConfig) -> String {
    (config.shard).map_or_else(|| "0/1".to_string(), |shard| shard.to_string())
}

/// How many ids shared by examples of one split are warned about one by one.
const REPEATED_IDS_SHOWN: usize = 5;

/// The files the run writes: `--output`, `--report`, `--junit`.
fn files_written(config: &RunConfig) -> Vec<(&'static str, &Path)> {
    [
        ("--output", &config.output),
        ("--report", &config.report),
        ("--junit", &config.junit),
    ]
    .into_iter()
    .filter_map(|(flag, path)| Some((flag, path.as_deref()?)))
    .collect()
}

/// The files the run reads: the candidates, the dataset and valset, the `--cache-input` files,
/// the evaluator's files (a command's script among them) and the task-model commands' files.
fn files_read(config: &RunConfig) -> Vec<(&'static str, PathBuf)> {
    let mut read: Vec<(&'static str, PathBuf)> = Vec::new();
    match &config.candidates {
        CandidateSource::Files(paths) => {
            read.extend(paths.iter().map(|path| ("a candidate file", path.into())));
        }
        CandidateSource::Jsonl(Source::File(path)) => read.push(("--candidates", path.clone())),
        _ => {}
    }
    read.extend(config.dataset.clone().map(|path| ("--dataset", path)));
    read.extend((config.declared.paths.iter()).map(|path| ("--cache-input", path.clone())));
    read.extend(config.valset.clone().map(|path| ("--valset", path)));
    read.extend(
        (config.cache_dir.iter()).map(|dir| ("the --cache database", crate::store::database(dir))),
    );
    read.extend(
        config
            .config_file
            .clone()
            .map(|path| ("the config file", path)),
    );
    match &config.evaluator {
        EvaluatorSpec::Checks(checks) => read.push(("--checks", checks.path.clone())),
        EvaluatorSpec::Spec(spec) => read.push(("--spec", spec.path.clone())),
        EvaluatorSpec::Judge(judge) => {
            read.extend(judge.rubric.clone().map(|path| ("--rubric", path)));
        }
        EvaluatorSpec::Command(command) => read.extend(
            command
                .named_files()
                .map(|(_, path)| ("a file of --evaluator-command", path)),
        ),
        EvaluatorSpec::Http(_) => {}
    }
    let task_models = config.generate.iter().flat_map(|spec| &spec.models);
    for model in task_models {
        if let ModelSpec::Command(command) = model {
            read.extend(
                command
                    .named_files()
                    .map(|(_, path)| ("a file of --task-model-command", path)),
            );
        }
    }
    read
}

/// Load the inputs, build the evaluator and check `--output` can be written. Problems in all
/// three (a bad dataset, a bad checks file and an unwritable output, say) are reported together,
/// so one run shows everything to fix. `--output` is only checked here: it is created once
/// preflight has passed.
fn prepare(config: &RunConfig, reporter: Reporter) -> anyhow::Result<(Inputs, Arc<dyn Evaluator>)> {
    let (candidates, dataset, valset, examples) = (
        config.candidates.clone(),
        config.dataset.clone(),
        config.valset.clone(),
        config.exec.examples.clone(),
    );
    let inputs = read_interruptibly(move || {
        load_inputs(
            &candidates,
            dataset.as_deref(),
            valset.as_deref(),
            &examples,
        )
    });
    let evaluator = evaluator::build(
        &config.evaluator,
        config.exec.timeout,
        config.exec.concurrency,
        config.exec.retries,
        config.score_range,
    );
    let output = config
        .output
        .as_deref()
        .map_or(Ok(()), |path| ResultsFile::check_writable(path, "--output"));
    let junit = config
        .junit
        .as_deref()
        .map_or(Ok(()), Junit::check_writable);
    let html = config.report.as_deref().map_or(Ok(()), |path| {
        report::html::check_writable(path, "--report")
    });
    let read = files_read(config);
    let read: Vec<_> = read
        .iter()
        .map(|(flag, path)| (*flag, path.as_path()))
        .collect();
    let distinct = check_distinct(&files_written(config), &read);
    let outputs = [output.err(), junit.err(), html.err(), distinct.err()];
    let output = match outputs.into_iter().flatten().collect::<Vec<_>>() {
        errors if errors.is_empty() => Ok(()),
        errors => Err(Fatal::merge(errors)),
    };
    let (inputs, evaluator) = match (inputs, evaluator, output) {
        (Ok(inputs), Ok(evaluator), Ok(())) => (inputs, evaluator),
        (inputs, evaluator, output) => {
            // While the user fixes the inputs, an evaluator that cannot start is worth knowing
            // too (`pyhton3 eval.py`, a missing `eval.sh`): preflight would only say so on the
            // next try.
            let setup = evaluator.as_ref().ok().and_then(|evaluator| {
                let reason = evaluator.check_setup().err()?;
                Some(bad_flag(&evaluator.describe(), reason))
            });
            let errors = [inputs.err(), evaluator.err(), output.err(), setup];
            return Err(Fatal::merge(errors.into_iter().flatten()));
        }
    };
    for candidate in inputs.candidates.iter().filter(|c| c.text.is_empty()) {
        reporter.warning(format!("candidate {} is empty", candidate.id));
    }
    let splits = [
        (config.dataset.as_deref(), &inputs.dataset),
        (config.valset.as_deref(), &inputs.valset),
    ];
    for (path, records) in splits {
        let (Some(path), Some(records)) = (path, records) else {
            continue;
        };
        // Only the examples the run uses: a shared id among the others does not matter here.
        let used = config.exec.examples.used(records).map(|(_, record)| record);
        let repeated = repeated_ids(used);
        if repeated.len() > REPEATED_IDS_SHOWN {
            reporter.warning(format!(
                "{}: {} ids are each the id of more than one example; the first {REPEATED_IDS_SHOWN}:",
                path.display(),
                repeated.len()
            ));
        }
        for (id, first, line) in repeated.into_iter().take(REPEATED_IDS_SHOWN) {
            reporter.warning(format!(
                "{}:{line}: id {id:?} is also line {first}'s: results and failures name both \
                 {id:?}, and --example {id:?} picks both",
                path.display()
            ));
        }
    }
    if let CandidateSource::Files(_) = &config.candidates {
        for candidate in inputs
            .candidates
            .iter()
            .filter(|c| looks_like_jsonl(&c.text))
        {
            reporter.warning(format!(
                "candidate file {} looks like JSONL (a JSON object on its first line); it is \
                 scored as one candidate text. Did you mean --dataset {0} or --candidates {0}?",
                candidate.id
            ));
        }
    }
    for warning in evaluator.setup_warnings(first_example(config, &inputs)) {
        reporter.warning(warning);
    }
    Ok((inputs, evaluator))
}

/// The first example the run uses (of the dataset, else of the valset) with its file: the one
/// the preflight probe sends and the evaluator's setup checks look at.
fn first_example<'a>(
    config: &'a RunConfig,
    inputs: &'a Inputs,
) -> Option<(&'a std::path::Path, &'a crate::input::Record)> {
    let splits = [
        (config.dataset.as_deref(), &inputs.dataset),
        (config.valset.as_deref(), &inputs.valset),
    ];
    splits.into_iter().find_map(|(path, records)| {
        let (_, record) = config.exec.examples.used(records.as_deref()?).next()?;
        Some((path?, record))
    })
}

/// Whether a candidate file's text looks like JSONL: its first non-blank line is a JSON object
/// and so is its second, if it has one.
fn looks_like_jsonl(text: &str) -> bool {
    let mut lines = text.lines().filter(|line| !line.trim().is_empty());
    let is_object = |line: &str| {
        serde_json::from_str::<serde_json::Value>(line).is_ok_and(|value| value.is_object())
    };
    lines.next().is_some_and(is_object) && lines.next().is_none_or(is_object)
}

/// Keep a copy of `record` for `--report` (when `records` is kept at all).
fn keep_for_report(records: &mut Option<Vec<CallRecord>>, record: &CallRecord) {
    if let Some(kept) = records.as_mut() {
        kept.push(record.clone());
    }
}

fn evaluator_info(evaluator: &dyn Evaluator) -> EvaluatorInfo {
    EvaluatorInfo {
        kind: evaluator.kind().to_string(),
        target: evaluator.target(),
    }
}
