//! The hook `run --generate` plugs into the runner: before a call is scored, a task model answers
//! the candidate rendered for the call's example (the generator itself is `crate::generate`'s).

use async_trait::async_trait;

use crate::input::{Candidate, Record};
use crate::protocol::CallError;
use crate::record::GenerationInfo;
use crate::store::CallKey;

/// What answers the calls of a run under `--generate`.
#[async_trait]
pub trait Generate: Send + Sync {
    /// How results and payloads name task model `index` (`PROVIDER/MODEL` or `command 'CMD'`).
    fn label(&self, index: usize) -> &str;

    /// The answer of the task model `call` names, retried like any call.
    async fn answer(&self, call: GenerationCall<'_>) -> Generated;
}

/// One call a task model answers.
#[derive(Debug, Clone, Copy)]
pub struct GenerationCall<'a> {
    /// Which task model (an index into the run's task models).
    pub task_model: usize,
    /// The candidate, rendered for `example`.
    pub candidate: &'a Candidate,
    /// The example the candidate is rendered for (`None` for single calls).
    pub example: Option<&'a Record>,
    /// The repeat index under `--repeat`.
    pub repeat: Option<u32>,
    /// The key of the call the answer is scored in.
    pub key: &'a CallKey,
}

/// One task model's answer.
#[derive(Debug)]
pub struct Generated {
    /// The rendered prompt, as text.
    pub prompt: String,
    /// The answer, or why there is none.
    pub answer: Result<String, CallError>,
    /// The task model's call.
    pub info: GenerationInfo,
}
