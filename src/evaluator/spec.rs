//! The evaluation-spec adapter (`--spec FILE`): each call scores one synthesized run in process.
//!
//! The run's final output is the candidate; its single challenge input is the example record
//! (its `inputs` / `expectations` objects become the case's inputs and expectations, and the
//! whole record is the case payload); a call without a dataset has no challenge input. The
//! call's score is the scorecard's overall score; the verdict is the call's `passed`, and side
//! information holds the verdict, its reason, the dimension scores, the validity and the
//! validators that did not pass. With `--live-judges` the spec's LLM judges run for every call;
//! without, judge-backed dimensions are unavailable.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use super::{Call, Evaluator};

use crate::evaluation_spec::live::{LiveJudgeOptions, LiveJudges};
use crate::evaluation_spec::validators::ResultState;
use crate::evaluation_spec::{evaluate_run, read_spec, EvaluationSpec, RunRecord};
use crate::input::Source;
use crate::protocol::{Attempt, CallError, ErrorKind, Findings, Retry};

/// `--spec FILE` and its judge flags.
#[derive(Debug, Clone)]
pub struct SpecSpec {
    /// The spec or manifest file.
    pub path: PathBuf,
    /// `--live-judges`: run the spec's LLM judges for every call.
    pub live_judges: bool,
    /// `--judge-base-url`: one endpoint for every judge model.
    pub judge_base_url: Option<String>,
}

/// Load and validate the spec (every problem is bad input, exit 2) and build the evaluator; a
/// live judge that sets no `timeout_ms` has `timeout` (`--timeout`) for each call.
pub fn build(
    spec: &SpecSpec,
    retries: u32,
    timeout: std::time::Duration,
) -> anyhow::Result<Arc<dyn Evaluator>> {
    let loaded = read_spec(&Source::File(spec.path.clone()))?;
    let live = spec
        .live_judges
        .then(|| {
            LiveJudges::new(
                loaded.definition(),
                &LiveJudgeOptions {
                    base_url: spec.judge_base_url.clone(),
                    retries,
                    timeout,
                    ..LiveJudgeOptions::default()
                },
            )
        })
        .transpose()?;
    Ok(Arc::new(SpecEvaluator {
        path: spec.path.clone(),
        spec: loaded,
        live,
    }))
}

/// An evaluation spec as an evaluator.
pub struct SpecEvaluator {
    path: PathBuf,
    spec: EvaluationSpec,
    live: Option<LiveJudges>,
}

#[async_trait]
impl Evaluator for SpecEvaluator {
    fn kind(&self) -> &'static str {
        "spec"
    }

    fn target(&self) -> String {
        self.path.display().to_string()
    }

    fn describe(&self) -> String {
        format!("spec file {}", self.path.display())
    }

    /// The spec was validated when it was loaded; a probe would add nothing (and cost judge
    /// calls).
    fn probes(&self) -> bool {
        false
    }

    /// Each live judge endpoint lets its key in (`GET {base}/models`), as `spec score --judges
    /// live` checks before any run.
    async fn check_access(&self) -> Result<(), String> {
        match &self.live {
            Some(live) => live
                .check_access()
                .await
                .map_err(|reason| format!("live judges cannot run: {reason}")),
            None => Ok(()),
        }
    }

    fn closing_warnings(&self) -> Vec<String> {
        self.live
            .as_ref()
            .and_then(LiveJudges::failure_warning)
            .into_iter()
            .collect()
    }

    async fn evaluate(&self, call: &Call<'_>) -> Attempt {
        let mut run = match synthesized_run(call) {
            Ok(run) => run,
            Err(reason) => {
                return Attempt::failed(CallError::new(ErrorKind::InvalidOutput, reason));
            }
        };
        if let Some(live) = &self.live {
            run.llm_judge_results = live.judge_run(&live.inputs_for(&run)).await;
        }
        let record = evaluate_run(&self.spec, &run);
        let not_passed: Vec<Value> = record
            .validator_results
            .iter()
            .filter(|result| {
                result.state != ResultState::Available || result.verdict != Some("pass")
            })
            .map(|result| Value::from(result.key.as_str()))
            .collect();
        let mut side_info = Map::new();
        side_info.insert("passed".into(), json!(record.passed));
        side_info.insert("overall_reason".into(), json!(record.overall_reason));
        side_info.insert(
            "dimension_scores".into(),
            Value::Object(record.dimension_scores.clone()),
        );
        side_info.insert("validity".into(), json!(record.validity));
        side_info.insert("validators_not_passed".into(), Value::Array(not_passed));
        let score = record.score();
        Attempt {
            score,
            side_info,
            retry: Retry::Never,
            findings: Findings {
                passed: record.passed,
                errored_checks: Vec::new(),
            },
        }
    }
}

/// The run record a call stands for: the candidate as the final output, the example (if any) as
/// the single challenge input.
fn synthesized_run(call: &Call<'_>) -> Result<RunRecord, String> {
    let challenge_inputs: Vec<Value> = call
        .example
        .map(|record| {
            let case_values = |key: &str| -> Map<String, Value> {
                record
                    .value
                    .get(key)
                    .and_then(Value::as_object)
                    .map(|object| {
                        object
                            .iter()
                            .map(|(name, value)| (name.clone(), json!({ "value": value })))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let case_key = format!("line-{}", record.line);
            json!({
                "challenge_key": "dataset",
                "case_key": case_key,
                "item_key": case_key,
                "payload": record.value,
                "inputs": case_values("inputs"),
                "expectations": case_values("expectations"),
            })
        })
        .into_iter()
        .collect();
    let run = json!({
        "challenge_inputs": challenge_inputs,
        "events": [{
            "type": "system.run.completed",
            "sequence_number": 1,
            "occurred_at": "1970-01-01T00:00:00Z",
            "payload": {"final_output": call.scored_text()},
        }],
    });
    serde_json::from_value(run).map_err(|err| format!("cannot build the run record: {err}"))
}
