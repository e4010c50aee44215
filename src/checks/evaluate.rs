//! Evaluating a prepared check on one evaluation context: its arguments resolved (literals and
//! JSONPaths, in the order given), what to send for a check that calls out ([`Check::call`]),
//! and the result ([`Check::evaluate`]).

use std::sync::Arc;

use serde_json::Value;

use super::args::ArgSource;
use super::extended::{Answer, Call, Spec};
use super::prepare::{CallsOut, Check};
use super::result::{CheckError, CheckResult, Resolved, Results};
use super::standard::{as_text, Args, Slot, CHECK_VERSION};
use super::timestamp::CaseClock;
use crate::scoring::Outcome;

impl Check {
    /// What to send for this check on `context`, when it calls out and can be called (an
    /// invalid check, or a JSONPath that selects nothing, is reported by [`Check::evaluate`]).
    pub fn call(&self, context: &Value) -> Option<Call> {
        self.call_for(context).ok().flatten()
    }

    /// Resolve a check that calls out on `context` (the arguments that resolved go into
    /// `resolved`): the `llm_judge` prompt, or why it cannot be called — its own problems, a
    /// JSONPath or prompt placeholder that selects nothing.
    fn resolve_call<'a>(
        &'a self,
        context: &'a Value,
        resolved: &mut Vec<Resolved<'a>>,
    ) -> Result<Option<String>, CheckError> {
        if let Some(error) = &self.problem_error {
            return Err(error.clone());
        }
        self.resolve(context, resolved)?;
        match self.extended() {
            Some(Spec::Judge { template, .. }) => template.render(context).map(Some),
            _ => Ok(None),
        }
    }

    fn call_for(&self, context: &Value) -> Result<Option<Call>, CheckError> {
        let Some(calls_out) = self.calls_out.as_ref().filter(|_| self.calls_out()) else {
            return Ok(None);
        };
        let mut resolved = Vec::with_capacity(self.args.len());
        let prompt = self.resolve_call(context, &mut resolved)?;
        let value = |name: &str| {
            resolved
                .iter()
                .find(|arg| arg.name == name)
                .map_or(String::new(), |arg| as_text(arg.value).into_owned())
        };
        Ok(Some(match calls_out {
            CallsOut::Custom(check) => Call::Command {
                check: Arc::clone(check),
                arguments: arguments(&resolved),
            },
            CallsOut::Extended(spec) => match &**spec {
                Spec::Similarity { .. } => Call::Embed {
                    spec: Arc::clone(spec),
                    text: value("text"),
                    reference: value("reference"),
                },
                Spec::Judge { .. } => Call::Judge {
                    spec: Arc::clone(spec),
                    prompt: prompt.unwrap_or_default(),
                },
            },
        }))
    }

    /// The JSONPaths among this check's arguments that select nothing in `context`.
    pub fn unmatched_paths(&self, context: &Value) -> Vec<&str> {
        self.args
            .iter()
            .filter_map(|arg| match &arg.source {
                ArgSource::Path(path) if path.first(context).is_err() => Some(path.text()),
                _ => None,
            })
            .collect()
    }

    /// Run the check over an evaluation context `{"test_case": ..., "output": ...}`; `clock` is
    /// the test case's (see [`CaseClock`]). A check that calls out reads its `answer` (the
    /// answer to [`Check::call`] on this context).
    pub fn evaluate<'a>(
        &'a self,
        context: &'a Value,
        clock: &mut CaseClock,
        answer: Option<Answer>,
    ) -> CheckResult<'a> {
        let mut resolved = Vec::with_capacity(self.args.len());
        let (outcome, execution_time_ms) = if let Some((kind, answer)) = self.validator() {
            let outcome = self
                .resolve_call(context, &mut resolved)
                .and_then(|_| answer(kind, &arguments(&resolved)))
                .map(Results::Answered);
            (outcome, clock.lap_ms())
        } else if self.calls_out.is_some() {
            let outcome = self
                .resolve_call(context, &mut resolved)
                .and_then(|_| {
                    answer.ok_or_else(|| {
                        CheckError::unknown(format!("{} was not answered", self.type_name()), true)
                    })
                })
                .map(|answer| (answer.outcome.map(Results::Answered), answer.elapsed_ms));
            clock.lap_ms();
            match outcome {
                Ok(answered) => answered,
                Err(error) => (Err(error), 0.0),
            }
        } else {
            let outcome = self.run(context, &mut resolved).map(Results::from);
            (outcome, clock.lap_ms())
        };
        CheckResult {
            check_type: self.type_name(),
            outcome,
            resolved,
            evaluated_at: clock.at(),
            check_version: CHECK_VERSION,
            execution_time_ms,
            ignored: &self.ignored,
        }
    }

    fn run<'a>(
        &'a self,
        context: &'a Value,
        resolved: &mut Vec<Resolved<'a>>,
    ) -> Result<Outcome, CheckError> {
        if let Some(error) = &self.problem_error {
            return Err(error.clone());
        }
        let args = self.resolve(context, resolved)?;
        self.kind.run(&args, self.regex.as_ref())
    }

    /// Resolve the arguments into `resolved` (in the order given) and, for a standard check,
    /// into schema slots; the first JSONPath that selects nothing is the error.
    fn resolve<'a>(
        &'a self,
        context: &'a Value,
        resolved: &mut Vec<Resolved<'a>>,
    ) -> Result<Args<'a>, CheckError> {
        let mut args = Args::new(self.kind);
        let mut path_error = None;
        for arg in &self.args {
            let slot = match &arg.source {
                ArgSource::Literal(value) => Slot {
                    value,
                    jsonpath: None,
                },
                ArgSource::Path(path) => match path.first(context) {
                    Ok(value) => Slot {
                        value,
                        jsonpath: Some(path.text()),
                    },
                    Err(reason) => {
                        path_error.get_or_insert_with(|| {
                            CheckError::jsonpath(format!("argument `{}`: {reason}", arg.name))
                        });
                        continue;
                    }
                },
            };
            if let Some(index) = arg.slot {
                args.set(index, slot);
            }
            resolved.push(Resolved {
                name: &arg.name,
                jsonpath: slot.jsonpath,
                value: slot.value,
            });
        }
        match path_error {
            Some(error) => Err(error),
            None => Ok(args),
        }
    }
}

/// A custom check's resolved arguments as the object its command or validator receives.
fn arguments(resolved: &[Resolved<'_>]) -> Value {
    Value::Object(
        resolved
            .iter()
            .map(|arg| (arg.name.to_string(), arg.value.clone()))
            .collect(),
    )
}
