//! Judging one run: the planned calls made (at most `concurrency` at once, or one at a time
//! within the run's budget), each with the judge client's retries, and the replies combined
//! into one result per judge.

use std::collections::HashMap;
use std::sync::Arc;

use super::aggregate::{combine, Mode, ModelSamples, Reading};
use super::budget::Budget;
use super::plan::{plan, Outcome, PlannedCall};
use super::setup::{JudgeInputs, LiveJudges, Shared};
use crate::evaluation_spec::judges::JudgeResult;
use crate::evaluation_spec::model::JudgeDecl;
use crate::in_flight;
use crate::judging::reply::read_response;
use crate::protocol::with_retries;
use crate::protocol::{Attempt, CallError, ErrorKind};

impl LiveJudges {
    /// Judge one run: one result per declared judge, in declaration order.
    pub async fn judge_run(&self, inputs: &JudgeInputs) -> Vec<JudgeResult> {
        let shared = &self.shared;
        let mut settled: Vec<Option<JudgeResult>> = Vec::new();
        let mut calls = Vec::new();
        for (index, judge) in shared.judges.iter().enumerate() {
            match plan(index, judge, shared.limits, inputs) {
                Ok(judge_calls) => {
                    calls.extend(judge_calls);
                    settled.push(None);
                }
                Err(reason) => settled.push(Some(unavailable(&judge.decl, reason))),
            }
        }
        for (order, call) in calls.iter_mut().enumerate() {
            call.order = order;
        }
        let (mut outcomes, limit_hits) = if shared.limits.budgeted() {
            self.run_within_budget(calls).await
        } else {
            (self.run_concurrently(calls).await, HashMap::new())
        };
        outcomes.sort_by_key(|outcome| outcome.order);
        shared
            .judges
            .iter()
            .zip(settled)
            .enumerate()
            .map(|(index, (judge, settled))| {
                if let Some(result) = settled {
                    return result;
                }
                if let Some(reason) = limit_hits.get(&index) {
                    return unavailable(&judge.decl, reason.clone());
                }
                let mut models: Vec<ModelSamples> = judge
                    .models
                    .iter()
                    .map(|model| ModelSamples {
                        model: model.declared.clone(),
                        ..ModelSamples::default()
                    })
                    .collect();
                for outcome in outcomes.iter().filter(|outcome| outcome.judge == index) {
                    let samples = &mut models[outcome.model];
                    match &outcome.score {
                        Ok(score) => samples.scores.push(*score),
                        Err(error) => samples.errors.push(error.message.clone()),
                    }
                }
                combine(
                    &judge.decl.key,
                    &judge.decl.mode,
                    judge.mode == Mode::Assertion,
                    judge.decl.consensus.as_ref(),
                    &models,
                )
            })
            .collect()
    }

    /// Every call at once, at most `concurrency` in flight.
    async fn run_concurrently(&self, calls: Vec<PlannedCall>) -> Vec<Outcome> {
        let calls = calls.into_iter().map(|call| {
            let shared = Arc::clone(&self.shared);
            async move {
                let attempt = shared.execute(&call).await;
                call.outcome(attempt)
            }
        });
        in_flight::all(self.shared.concurrency, calls).await
    }

    /// The calls one at a time, each only while the run's judge budget lasts. The second value
    /// names the judges a limit made unavailable, with the reason.
    async fn run_within_budget(
        &self,
        calls: Vec<PlannedCall>,
    ) -> (Vec<Outcome>, HashMap<usize, String>) {
        let mut budget = Budget {
            limits: self.shared.limits,
            tokens: 0,
            usd: 0.0,
        };
        let mut outcomes = Vec::new();
        let mut limit_hits = HashMap::new();
        for call in calls {
            if limit_hits.contains_key(&call.judge) {
                continue;
            }
            if let Err(reason) = budget.check(true) {
                limit_hits.insert(call.judge, reason);
                continue;
            }
            let attempt = self.shared.execute(&call).await;
            let model = &self.shared.judges[call.judge].models[call.model];
            if let Err(reason) = budget.charge(&attempt.side_info, model) {
                limit_hits.insert(call.judge, reason);
            }
            outcomes.push(call.outcome(attempt));
        }
        (outcomes, limit_hits)
    }
}

impl Shared {
    /// One call with the judge client's retries, counted in the tally.
    async fn execute(&self, call: &PlannedCall) -> Attempt {
        let attempt = with_retries(self.retries, || self.attempt(call)).await.0;
        let failure = attempt.score.as_ref().err();
        self.tally.add(failure.map(|error| error.message.as_str()));
        attempt
    }

    /// One request; the score is the judge's per the call's reading; free of secrets.
    async fn attempt(&self, call: &PlannedCall) -> Attempt {
        let judge = &self.judges[call.judge];
        let model = &judge.models[call.model];
        let endpoint = model.connection.endpoint();
        let attempt = match self
            .client
            .post(
                &model.connection,
                &endpoint.chat_url,
                call.body.clone(),
                judge.timeout,
            )
            .await
        {
            Ok(body) => read_spec_reply(
                read_response(&body, &endpoint.model, None, &self.secrets),
                &call.reading,
            ),
            Err(failed) => failed,
        };
        self.secrets.scrub(attempt)
    }
}

/// The judge client's reading of a reply, scored by the spec judge's `reading`. When the reply
/// held no judge object at all (only the client's `model` and `usage` side info), the client's
/// own error says why (no JSON object, a refusal, an API error).
fn read_spec_reply(mut reply: Attempt, reading: &Reading) -> Attempt {
    match reading.score(&reply.side_info) {
        Ok(score) => reply.score = Ok(score),
        Err(problem) => {
            let replied = reply
                .side_info
                .keys()
                .any(|key| key != "model" && key != "usage");
            if replied || reply.score.is_ok() {
                reply.score = Err(CallError::new(ErrorKind::InvalidOutput, problem));
            }
        }
    }
    reply
}

/// A result without a score.
fn unavailable(decl: &JudgeDecl, reason: String) -> JudgeResult {
    JudgeResult {
        judge_key: decl.key.clone(),
        mode: decl.mode.clone(),
        reason,
        ..JudgeResult::default()
    }
}
