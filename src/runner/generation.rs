//! The hook `run --generate` plugs into the runner: before a call is scored, a task model answers
//! the candidate rendered for the call's example (the generator itself is `crate::generate`'s).

use async_trait::async_trait;

use super::record::GenerationInfo;
use crate::input::{Candidate, Record};
use crate::protocol::CallError;
use crate::store::CallKey;

/// What answers the calls of a run under `--generate`.
#[async_trait]
pub trait Generate: Send + Sync {
    /// How results and payloads name task model `index` (`PROVIDER/MODEL` or `command 'CMD'`).
    fn label(&self, index: usize) -> &str;

    /// The answer of task model `task_model` to `candidate` rendered for `example` (repeat
    /// `repeat`) in the call keyed `key`, retried like any call.
    async fn answer(
        &self,
        task_model: usize,
        candidate: &Candidate,
        example: Option<&Record>,
        repeat: Option<u32>,
        key: &CallKey,
    ) -> Generated;
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
