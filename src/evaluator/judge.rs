//! The LLM-judge adapter over OpenAI-compatible chat-completions APIs.

use std::path::PathBuf;
use std::sync::Arc;

use super::Evaluator;
use crate::config::ExecConfig;

/// `--judge-model` and its companion flags.
#[derive(Debug, Clone)]
pub struct JudgeSpec {
    /// `PROVIDER/MODEL`.
    pub model: String,
    /// `--objective`.
    pub objective: String,
    /// `--rubric FILE.json`.
    pub rubric: Option<PathBuf>,
    /// `--judge-base-url`.
    pub base_url: Option<String>,
    /// `--judge-api-key-env`.
    pub api_key_env: Option<String>,
    /// `--judge-temperature`.
    pub temperature: f64,
    /// `--judge-max-tokens`.
    pub max_tokens: Option<u32>,
    /// `--probe-judge`.
    pub probe: bool,
}

/// Build the judge evaluator.
pub fn build(_spec: &JudgeSpec, _exec: &ExecConfig) -> anyhow::Result<Arc<dyn Evaluator>> {
    Err(crate::error::bad_input(
        "error: --judge-model is not implemented yet",
    ))
}
