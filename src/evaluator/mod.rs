//! Evaluators: one trait, one adapter per kind (command, HTTP, LLM judge, built-in checks,
//! evaluation spec).
//!
//! An adapter makes one attempt at a call; retries, concurrency, preflight and the run itself are
//! the runner's. Each adapter enforces `--timeout` on its own attempt, so a command evaluator can
//! kill its process group.

pub mod check_calls;
pub mod checks;
pub mod command;
pub mod http;
pub mod judge;
pub mod spec;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::input::Record;
use crate::protocol::{build_payload, Attempt, ScoreRange};

/// Which evaluator to build, as resolved from the command line.
#[derive(Debug, Clone)]
pub enum EvaluatorSpec {
    /// `--evaluator-command`: a child process per call.
    Command(command::CommandSpec),
    /// `--evaluator-url`: a POST per call.
    Http(http::HttpSpec),
    /// `--judge-model`: an OpenAI-compatible chat-completions call per call.
    Judge(judge::JudgeSpec),
    /// `--checks FILE.json`: built-in checks evaluated in process.
    Checks(checks::ChecksSpec),
    /// `--spec FILE`: an evaluation spec's scorecard, evaluated in process.
    Spec(spec::SpecSpec),
}

impl EvaluatorSpec {
    /// The LLM judge's model (`--judge-model PROVIDER/MODEL`, as given), when the judge scores.
    pub fn judge_model(&self) -> Option<&str> {
        match self {
            EvaluatorSpec::Judge(judge) => Some(&judge.endpoint.model),
            _ => None,
        }
    }
}

/// The inputs of one evaluator call.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The candidate text.
    pub candidate: &'a str,
    /// `--task-model`, when given.
    pub task_model: Option<&'a str>,
    /// The dataset or valset record (with its line and exact text), in dataset-backed calls.
    pub example: Option<&'a Record>,
    /// `run --generate`: the task model's answer, which is what is scored.
    pub answer: Option<Answer<'a>>,
}

/// A task model's answer to a candidate rendered for the call's example (`run --generate`).
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    /// The rendered prompt, as text.
    pub prompt: &'a str,
    /// The task model's answer.
    pub output: &'a str,
}

impl<'a> Call<'a> {
    /// The protocol-v2 payload of this call, from the one shared builder.
    pub fn payload(&self) -> Vec<u8> {
        build_payload(
            self.candidate,
            self.task_model,
            self.example.map(|record| record.text.as_ref()),
            self.answer.map(|answer| (answer.prompt, answer.output)),
        )
    }

    /// The text that is scored: the task model's answer under `--generate`, else the candidate.
    pub fn scored_text(&self) -> &'a str {
        self.answer.map_or(self.candidate, |answer| answer.output)
    }

    /// The example record as a JSON value, in dataset-backed calls.
    pub fn example_value(&self) -> Option<&'a Value> {
        self.example.map(|record| &record.value)
    }
}

/// An evaluator adapter.
#[async_trait]
pub trait Evaluator: Send + Sync {
    /// The adapter kind for summaries: `command`, `http`, `judge`, `checks` or `spec`.
    fn kind(&self) -> &'static str;

    /// What it is, for summaries: the command line, URL, model or checks file (never a secret).
    fn target(&self) -> String;

    /// How preflight messages name it, e.g. `command 'bash eval.sh' (cwd: /x)`.
    fn describe(&self) -> String;

    /// Checks that need no call (command found, script present, key configured, ...).
    fn check_setup(&self) -> Result<(), String> {
        Ok(())
    }

    /// Checks that need a request but spend nothing (a judge's key against the models
    /// endpoint); run by preflight unless `--skip-preflight`.
    async fn check_access(&self) -> Result<(), String> {
        Ok(())
    }

    /// What preflight should warn about, given the first dataset record (if any) and the dataset
    /// file it is from: things that are not errors but likely mistakes, such as a check's
    /// JSONPath that matches nothing in it.
    fn setup_warnings(
        &self,
        _first_example: Option<(&std::path::Path, &crate::input::Record)>,
    ) -> Vec<String> {
        Vec::new()
    }

    /// What the run should warn about once its calls are made: things that are not errors but
    /// change what the scores mean, such as a spec's live judge calls that gave no score.
    fn closing_warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// Whether preflight sends a probe call.
    fn probes(&self) -> bool {
        true
    }

    /// How to run without the probe call, for the hint of a probe that failed.
    fn without_probe(&self) -> &'static str {
        "with --skip-preflight"
    }

    /// One attempt at scoring `call`, within the configured timeout.
    async fn evaluate(&self, call: &Call<'_>) -> Attempt;
}

/// Build the evaluator `spec` names: each call within `timeout`, with up to `concurrency` calls
/// in flight (`retries` is for the calls an adapter makes inside one call: a spec's live
/// judges, each within `timeout` unless the judge sets its own). Configuration problems are bad input (exit 2).
pub fn build(
    spec: &EvaluatorSpec,
    timeout: std::time::Duration,
    concurrency: usize,
    retries: u32,
    score_range: ScoreRange,
) -> anyhow::Result<Arc<dyn Evaluator>> {
    Ok(match spec {
        EvaluatorSpec::Command(spec) => Arc::new(command::CommandEvaluator::new(
            spec.clone(),
            timeout,
            score_range,
        )),
        EvaluatorSpec::Http(spec) => Arc::new(http::HttpEvaluator::new(
            spec.clone(),
            timeout,
            concurrency,
            score_range,
        )?),
        EvaluatorSpec::Judge(spec) => judge::build(spec, timeout, concurrency)?,
        EvaluatorSpec::Checks(spec) => checks::build(spec, concurrency)?,
        EvaluatorSpec::Spec(spec) => spec::build(spec, retries, timeout)?,
    })
}
