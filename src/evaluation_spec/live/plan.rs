//! The calls of one judge for one run: each model's samples with the prompt they are shown
//! (n_wise outputs rotated under `position_debiasing`), and how each reply is read.

use serde_json::json;

use super::aggregate::{Mode, Reading};
use super::prompt::{self, Shown};
use super::setup::{JudgeInputs, Limits, LiveJudge};
use crate::llm::Body;
use crate::protocol::{Attempt, CallError};

/// One judge call to make.
pub(super) struct PlannedCall {
    /// Position among the run's calls, so samples keep their order (set once all are planned).
    pub(super) order: usize,
    pub(super) judge: usize,
    pub(super) model: usize,
    /// The chat-completions request body.
    pub(super) body: Vec<u8>,
    pub(super) reading: Reading,
}

impl PlannedCall {
    pub(super) fn outcome(&self, attempt: Attempt) -> Outcome {
        Outcome {
            order: self.order,
            judge: self.judge,
            model: self.model,
            score: attempt.score,
        }
    }
}

/// What one call gave.
pub(super) struct Outcome {
    pub(super) order: usize,
    pub(super) judge: usize,
    pub(super) model: usize,
    pub(super) score: Result<f64, CallError>,
}

/// The calls of `judge` for one run, or why it cannot be judged.
pub(super) fn plan(
    index: usize,
    judge: &LiveJudge,
    limits: Limits,
    inputs: &JudgeInputs,
) -> Result<Vec<PlannedCall>, String> {
    let decl = &judge.decl;
    if let Some(max) = limits.max_samples.filter(|max| judge.samples > *max) {
        return Err(format!(
            "judge_limits.max_samples_per_judge is {max} but judge {:?} asks for {} samples per \
             model",
            decl.key, judge.samples
        ));
    }
    let final_output = inputs.final_output.as_deref().map_err(Clone::clone)?;
    let resolved = |reference: &str| match inputs.evidence.get(reference) {
        Some(value) => value.clone(),
        None => Err(format!(
            "evidence {reference:?} was not resolved for the judge"
        )),
    };
    let context = decl
        .context_from
        .iter()
        .map(|reference| Ok((reference.clone(), resolved(reference)?)))
        .collect::<Result<Vec<_>, String>>()?;
    let reference = (judge.mode == Mode::Reference)
        .then(|| resolved(&decl.reference_from))
        .transpose()?;
    let agents: Vec<&str> = std::iter::once(final_output)
        .chain(inputs.other_agent_outputs.iter().map(String::as_str))
        .collect();
    if judge.mode == Mode::NWise && agents.len() < 2 {
        return Err(
            "n_wise judging needs the outputs of at least two agents; this run has one".into(),
        );
    }
    let instruction = match judge.mode {
        Mode::Rubric | Mode::Reference => &decl.rubric,
        Mode::Assertion => &decl.assertion,
        Mode::NWise => &decl.prompt,
    };
    let mut calls = Vec::new();
    for (model_index, model) in judge.models.iter().enumerate() {
        for sample in 0..judge.samples {
            let (outputs, reading) = shown_outputs(judge, &agents, sample);
            let shown = Shown {
                mode: judge.mode,
                instruction,
                scale: judge.scale,
                context: &context,
                reference: reference.as_deref(),
                outputs: &outputs,
                anti_gaming_clauses: &decl.anti_gaming_clauses,
            };
            let messages = json!([
                {"role": "system", "content": prompt::system_message(&shown)},
                {"role": "user", "content": prompt::user_message(&shown)},
            ]);
            let body = Body::chat(model.connection.endpoint(), messages)
                .with("temperature", 0.0)
                .json_object();
            calls.push(PlannedCall {
                order: 0,
                judge: index,
                model: model_index,
                body: body.to_bytes(),
                reading,
            });
        }
    }
    Ok(calls)
}

/// The labelled outputs sample `sample` shows and how its reply is read. n_wise shows every
/// agent as `candidate_N`, the run's own output first, or with `position_debiasing` rotated by
/// one place per sample.
fn shown_outputs<'a>(
    judge: &LiveJudge,
    agents: &[&'a str],
    sample: usize,
) -> (Vec<(String, &'a str)>, Reading) {
    match judge.mode {
        Mode::NWise => {
            let count = agents.len();
            let rotation = if judge.decl.position_debiasing {
                sample % count
            } else {
                0
            };
            let outputs: Vec<(String, &str)> = (0..count)
                .map(|place| {
                    (
                        format!("candidate_{}", place + 1),
                        agents[(place + rotation) % count],
                    )
                })
                .collect();
            let own = outputs[(count - rotation) % count].0.clone();
            let labels = outputs.iter().map(|(label, _)| label.clone()).collect();
            (outputs, Reading::Ranking { own, labels })
        }
        Mode::Assertion => (
            vec![("output".into(), agents[0])],
            Reading::Verdict {
                expect: judge.decl.expect.unwrap_or(true),
            },
        ),
        Mode::Rubric | Mode::Reference => (
            vec![("output".into(), agents[0])],
            Reading::Scale {
                min: judge.scale.0,
                max: judge.scale.1,
            },
        ),
    }
}
