//! The LLM-judge surface of a spec (`docs/spec.md`, "LLM judges") that scoring needs: which
//! provider a judge model id maps to, and the judge results a run record carries
//! (`llm_judge_results`). Running judges live is the judge executor's business, not this module's.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::model::null_default;
use crate::input::decode_unique;

/// The provider a judge model id maps to by prefix (`claude-` → anthropic, `gpt-`/`o1`/`o3`/`o4`/
/// `text-embedding` → openai, `gemini-`, `grok-` → xai, `mistral-`, any id with `/` → openrouter),
/// case-insensitively after trimming; `None` for anything else.
pub fn judge_provider(model: &str) -> Option<&'static str> {
    let model = model.trim().to_lowercase();
    let starts = |prefix: &str| model.starts_with(prefix);
    if starts("claude-") {
        Some("anthropic")
    } else if starts("gpt-")
        || starts("o1")
        || starts("o3")
        || starts("o4")
        || starts("text-embedding")
    {
        Some("openai")
    } else if starts("gemini-") {
        Some("gemini")
    } else if starts("grok-") {
        Some("xai")
    } else if starts("mistral-") {
        Some("mistral")
    } else if model.contains('/') {
        Some("openrouter")
    } else {
        None
    }
}

/// One judge's result for a run, as recorded in the run record's `llm_judge_results`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JudgeResult {
    /// The judge's key.
    #[serde(deserialize_with = "null_default")]
    pub judge_key: String,
    /// The judge's mode.
    #[serde(deserialize_with = "null_default")]
    pub mode: String,
    /// The score in [0,1]; absent when the judge could not score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub normalized_score: Option<f64>,
    /// The judge's parsed reply.
    #[serde(deserialize_with = "decode_unique")]
    pub payload: Value,
    /// `single-model`, `low`, `medium` or `high`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<String>,
    /// Population variance of the sample scores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variance: Option<f64>,
    /// Successful samples.
    #[serde(deserialize_with = "null_default")]
    pub sample_count: i64,
    /// Models consulted.
    #[serde(deserialize_with = "null_default")]
    pub model_count: i64,
    /// Why there is no score, when there is none.
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub reason: String,
}
