//! The built-in checks adapter (`--checks FILE.json`): FEP checks evaluated in process, no
//! payload built; the checks that call out (extended, custom) are sent through
//! [`CheckCaller`], all of one call's at once.
//!
//! For each call the evaluation context is `test_case` = the dataset example as loaded, with `id`
//! defaulting to `line-N` (its line in the dataset file), and `output` = `{"value": candidate}`.
//! A call without a dataset example has the test case `{"id": "single"}`. The score is the mean
//! of the checks' credits: 1 passed, 0 failed or errored, and for a check whose results hold no
//! `passed` their `score` in [0, 1], else 0 (see `CheckResult::credit`); a `score` outside
//! [0, 1] makes the call an `invalid_output` error. Side information holds
//! the check results (`check_results`) and the names of the checks that failed (`failed_checks`:
//! errored or `passed: false`) and errored (`errored_checks`). A check's name is its type, with `#k` (1-based)
//! when the file has several checks of that type. `errored_checks` is read by the report layer
//! (a warning per check that errored): it is always present, an array of names in file order,
//! empty when no check errored.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use super::check_calls::{api_path, trusted_catalog, CheckCaller, Provider};
use super::{Call, Evaluator};
use crate::checks::result::{ErrorType, Results};
use crate::checks::{
    load_checks_file, AllowedEndpoint, CaseClock, Check, Context, CustomCheck, Trust,
};
use crate::error::{bad_input, Problem};
use crate::input::Record;
use crate::protocol::{Attempt, CallError, ErrorKind, Findings, Retry, PREFLIGHT_CANDIDATE};

/// `--checks FILE.json` and what the command line lends its checks (`--custom-check`,
/// `--allow-custom-check`, `--allow-endpoint`).
#[derive(Debug, Clone)]
pub struct ChecksSpec {
    /// The checks file.
    pub path: PathBuf,
    /// What the command line lends the file's checks.
    pub trust: Trust,
}

impl ChecksSpec {
    /// The custom check types the file's checks may run: the command line's (`--custom-check`,
    /// in its order), then by name those the file declares that `--allow-custom-check` allows. A
    /// call's key hashes their commands, as a command evaluator's.
    pub fn runnable_custom_checks(&self) -> anyhow::Result<Vec<Arc<CustomCheck>>> {
        let mut catalog = trusted_catalog(&self.trust)?;
        load_checks_file(&self.path, &mut catalog)?;
        let typed = |name: &str| self.trust.custom.iter().any(|check| check.name == name);
        let from_the_command_line =
            (self.trust.custom.iter()).filter_map(|check| catalog.custom.get(&check.name).cloned());
        let declared = (catalog.custom.iter())
            .filter(|(name, _)| !typed(name) && !catalog.refused.contains(*name))
            .map(|(_, check)| Arc::clone(check));
        Ok(from_the_command_line.chain(declared).collect())
    }
}

/// Load and validate the checks file and build the evaluator; `concurrency` bounds the calls of
/// checks that call out. Every problem in the file — an extended check's endpoint or key among
/// them — is reported before anything runs (exit 2).
pub fn build(spec: &ChecksSpec, concurrency: usize) -> anyhow::Result<Arc<dyn Evaluator>> {
    let path = spec.path.as_path();
    let checks = load_checks_file(path, &mut trusted_catalog(&spec.trust)?)?;
    if checks.is_empty() {
        return Err(bad_input(
            Problem::new(
                path.display().to_string(),
                "no checks (the score is the mean of the checks' results, so at least one is needed)",
            )
            .at("checks"),
        ));
    }
    let names = check_names(&checks);
    let setup_problems: Vec<Problem> = checks
        .iter()
        .zip(&names)
        .filter_map(|(check, name)| {
            let spec = check.extended()?;
            let reason = spec
                .unscored()
                .map(str::to_string)
                .or_else(|| Provider::resolve(spec.provider(), api_path(spec)).err())?;
            Some(Problem::new(
                path.display().to_string(),
                format!("check {name}: {reason}"),
            ))
        })
        .collect();
    if !setup_problems.is_empty() {
        return Err(crate::error::invalid(setup_problems));
    }
    // A check the command line does not allow errs on every call (a warning says so); when no
    // check may run, every call would score 0 without anything evaluated.
    if checks.iter().all(|check| !check.refusals().is_empty()) {
        let mut problems: Vec<Problem> = checks
            .iter()
            .zip(&names)
            .flat_map(|(check, name)| {
                check.refusals().iter().map(move |refusal| {
                    Problem::new(
                        path.display().to_string(),
                        format!("check {name}: {}", refusal.describe("")),
                    )
                })
            })
            .collect();
        problems.push(Problem::new(
            path.display().to_string(),
            "no check of the file may run, so nothing would be evaluated: allow what they name \
             on the command line, or add a check that runs",
        ));
        return Err(crate::error::invalid(problems));
    }
    let caller = checks
        .iter()
        .any(Check::calls_out)
        .then(|| CheckCaller::new(concurrency))
        .transpose()?;
    Ok(Arc::new(ChecksEvaluator {
        path: path.to_path_buf(),
        checks,
        names,
        caller,
        unset_keys: (spec.trust.endpoints.iter())
            .inspect(|endpoint| endpoint.hold_key())
            .filter_map(AllowedEndpoint::unset_key)
            .collect(),
    }))
}

/// Built-in checks as an evaluator.
pub struct ChecksEvaluator {
    path: PathBuf,
    checks: Vec<Check>,
    names: Vec<String>,
    /// Sends the calls of checks that call out; `None` when none does.
    caller: Option<CheckCaller>,
    /// The warnings of endpoints allowed with a key that is not set.
    unset_keys: Vec<String>,
}

#[async_trait]
impl Evaluator for ChecksEvaluator {
    fn kind(&self) -> &'static str {
        "checks"
    }

    fn target(&self) -> String {
        self.path.display().to_string()
    }

    fn describe(&self) -> String {
        format!("checks file {}", self.path.display())
    }

    /// An endpoint allowed with a key that is not set sends none; a check the command line
    /// does not allow errs on every call; so does one with a JSONPath that matches nothing in
    /// the first dataset record (most likely a misspelt field).
    fn setup_warnings(&self, first_example: Option<(&Path, &Record)>) -> Vec<String> {
        let mut warnings: Vec<String> = self.unset_keys.clone();
        warnings.extend(
            self.checks
                .iter()
                .zip(&self.names)
                .flat_map(|(check, name)| {
                    check.refusals().iter().map(move |refusal| {
                        format!(
                            "{}: check {name}: {}",
                            self.path.display(),
                            refusal.describe("")
                        )
                    })
                }),
        );
        let Some((dataset, example)) = first_example else {
            return warnings;
        };
        let call = Call {
            candidate: PREFLIGHT_CANDIDATE,
            task_model: None,
            example: Some(example),
            answer: None,
        };
        let context = Context::new(test_case(&call), json!({ "value": call.candidate }));
        warnings.extend(
            self.checks
                .iter()
                .zip(&self.names)
                .flat_map(|(check, name)| {
                    check
                        .unmatched_paths(context.value())
                        .into_iter()
                        .map(move |path| {
                            format!(
                                "{}:{}: check {name} ({}): JSONPath `{path}` matches nothing in \
                                 the first dataset record; the check will error on such records",
                                dataset.display(),
                                example.line,
                                self.path.display(),
                            )
                        })
                }),
        );
        warnings
    }

    /// The checks were validated when the file was loaded; a probe would add nothing.
    fn probes(&self) -> bool {
        false
    }

    async fn evaluate(&self, call: &Call<'_>) -> Attempt {
        let context = Context::new(test_case(call), json!({ "value": call.scored_text() }));
        let mut answers = match &self.caller {
            Some(caller) => {
                let calls = self.checks.iter().map(|check| check.call(context.value()));
                caller
                    .answer_cases(vec![calls.collect()])
                    .await
                    .pop()
                    .unwrap_or_default()
            }
            None => Vec::new(),
        };
        let mut clock = CaseClock::start();
        let mut check_results = Vec::with_capacity(self.checks.len());
        let mut failed = Vec::new();
        let mut errored = Vec::new();
        let mut credit = 0.0;
        let mut transient = None;
        let mut out_of_range = None;
        for (index, (check, name)) in self.checks.iter().zip(&self.names).enumerate() {
            let answer = answers.get_mut(index).and_then(Option::take);
            let result = check.evaluate(context.value(), &mut clock, answer);
            let unscorable = result
                .outcome
                .as_ref()
                .ok()
                .filter(|results| results.passed().is_none());
            if let Some(score) = unscorable.and_then(Results::score_out_of_range) {
                out_of_range.get_or_insert_with(|| {
                    CallError::new(
                        ErrorKind::InvalidOutput,
                        format!(
                            "check {name}: its score {score} is outside [0, 1], which run \
                             --checks counts (a judge answering on another scale?)"
                        ),
                    )
                });
            }
            if let Err(error) = &result.outcome {
                errored.push(name.clone());
                if error.recoverable && transient.is_none() {
                    transient = Some(CallError::new(
                        if error.kind == ErrorType::Timeout {
                            ErrorKind::Timeout
                        } else {
                            ErrorKind::Transport
                        },
                        format!("check {name}: {}", error.message),
                    ));
                }
            }
            if result.failed() {
                failed.push(Value::from(name.as_str()));
            }
            credit += result.credit();
            check_results.push(serde_json::to_value(&result).unwrap_or(Value::Null));
        }
        let mut side_info = Map::new();
        side_info.insert("check_results".into(), Value::Array(check_results));
        side_info.insert("failed_checks".into(), Value::Array(failed));
        side_info.insert(
            "errored_checks".into(),
            Value::Array(
                errored
                    .iter()
                    .map(|name| Value::from(name.as_str()))
                    .collect(),
            ),
        );
        // A check that may answer on another try (an API's 429 or 5xx, a timeout) makes the call
        // fail transiently: the runner retries it (--retries) rather than score it.
        if let Some(error) = transient {
            return Attempt {
                side_info,
                ..Attempt::transient(error, None)
            };
        }
        // A score outside [0, 1] is no score: the call errors rather than count it as 0.
        if let Some(error) = out_of_range {
            return Attempt {
                side_info,
                ..Attempt::failed(error)
            };
        }
        Attempt {
            score: Ok(credit / self.checks.len() as f64),
            side_info,
            retry: Retry::Never,
            findings: Findings {
                passed: None,
                errored_checks: errored,
            },
        }
    }
}

/// The test case of a call: the example with `id` defaulting to `line-N`, or `{"id": "single"}`.
fn test_case(call: &Call<'_>) -> Value {
    let Some((line, Some(example))) = call
        .example
        .map(|record| (record.line, record.value.as_object()))
    else {
        return json!({ "id": "single" });
    };
    let mut test_case = example.clone();
    if !test_case.contains_key("id") {
        test_case.insert("id".into(), Value::String(format!("line-{line}")));
    }
    Value::Object(test_case)
}

/// Each check's name: its type, plus `#k` when several checks share that type.
fn check_names(checks: &[Check]) -> Vec<String> {
    let mut seen = std::collections::HashMap::new();
    checks
        .iter()
        .map(|check| {
            let name = check.type_name();
            let shared = checks
                .iter()
                .filter(|other| other.type_name() == name)
                .count()
                > 1;
            let occurrence = seen.entry(name).and_modify(|n| *n += 1).or_insert(1);
            if shared {
                format!("{name}#{occurrence}")
            } else {
                name.to_string()
            }
        })
        .collect()
}
