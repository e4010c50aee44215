//! The `evaluation_spec` shape (`docs/spec.md`, "What a spec holds"): serde types decoded strictly
//! (unknown keys are errors at every level, a JSON `null` for any member means "absent") and
//! serialised back as the normalised spec. Enumerated members (`judge_mode`, validator `type`,
//! dimension `source`, …) stay strings here so that a wrong value is reported by validation with
//! the reference's exact message rather than as a decode error.

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `Option<T>` where `null` is `None`, collapsed to `T::default()`: the "null means absent" rule
/// for members that are plain values in the model.
pub(crate) fn null_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn is_zero_i64(value: &i64) -> bool {
    *value == 0
}

fn is_zero_f64(value: &f64) -> bool {
    *value == 0.0
}

/// One evaluation spec, as decoded and (after [`super::normalize`]) normalised.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SpecDefinition {
    /// The spec's name (required, trimmed).
    #[serde(deserialize_with = "null_default")]
    pub name: String,
    /// The spec's version (> 0).
    #[serde(deserialize_with = "null_default")]
    pub version_number: i32,
    /// `deterministic`, `llm_judge` or `hybrid`.
    #[serde(deserialize_with = "null_default")]
    pub judge_mode: String,
    /// The validators, in declaration order.
    #[serde(deserialize_with = "null_default")]
    pub validators: Vec<ValidatorDecl>,
    /// The metrics, in declaration order.
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub metrics: Vec<MetricDecl>,
    /// The behavioral signals block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behavioral: Option<BehavioralConfig>,
    /// The LLM judges.
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub llm_judges: Vec<JudgeDecl>,
    /// File and directory captures taken after the run.
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub post_execution_checks: Vec<PostExecutionCheck>,
    /// Limits enforced by the runner (scoring uses two of them as normalisation fallbacks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime_limits: Option<RuntimeLimits>,
    /// Per-model token prices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pricing: Option<PricingConfig>,
    /// How dimensions roll up into a verdict.
    #[serde(deserialize_with = "null_default")]
    pub scorecard: Scorecard,
}

/// One validator declaration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ValidatorDecl {
    /// Unique key.
    #[serde(deserialize_with = "null_default")]
    pub key: String,
    /// One of the 21 validator types.
    #[serde(rename = "type", deserialize_with = "null_default")]
    pub kind: String,
    /// Evidence reference of the actual value.
    #[serde(deserialize_with = "null_default")]
    pub target: String,
    /// Evidence reference of the expected value.
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub expected_from: String,
    /// The type's configuration, kept as JSON (its strictness depends on the type).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
}

/// One metric declaration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricDecl {
    /// Unique key.
    #[serde(deserialize_with = "null_default")]
    pub key: String,
    /// `numeric`, `text` or `boolean`.
    #[serde(rename = "type", deserialize_with = "null_default")]
    pub kind: String,
    /// The collector that produces the value.
    #[serde(deserialize_with = "null_default")]
    pub collector: String,
    /// Free-form unit.
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub unit: String,
}

/// The `behavioral` block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BehavioralConfig {
    /// The declared signals (non-empty).
    #[serde(deserialize_with = "null_default")]
    pub signals: Vec<SignalDecl>,
}

/// One behavioral signal declaration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SignalDecl {
    /// One of the five signal keys.
    #[serde(deserialize_with = "null_default")]
    pub key: String,
    /// Weight in the behavioral dimension (> 0).
    #[serde(deserialize_with = "null_default")]
    pub weight: f64,
    /// Whether the signal gates the behavioral dimension.
    #[serde(deserialize_with = "null_default", skip_serializing_if = "is_false")]
    pub gate: bool,
    /// The gate's threshold in [0,1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_threshold: Option<f64>,
}

/// One LLM judge declaration (`docs/spec.md`, "LLM judges").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JudgeDecl {
    /// `rubric`, `assertion`, `n_wise` or `reference`.
    #[serde(deserialize_with = "null_default")]
    pub mode: String,
    /// Unique key (shared with no validator or metric).
    #[serde(deserialize_with = "null_default")]
    pub key: String,
    /// The single judge model.
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub model: String,
    /// Several judge models (needs `consensus`).
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub models: Vec<String>,
    /// Calls per model (0 ⇒ 3).
    #[serde(deserialize_with = "null_default", skip_serializing_if = "is_zero_i64")]
    pub samples: i64,
    /// Evidence references shown to the judge.
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub context_from: Vec<String>,
    /// A JSON Schema for the judge's reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The raw score range of rubric/reference replies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score_scale: Option<ScoreScale>,
    /// Rubric text (rubric and reference modes).
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub rubric: String,
    /// Assertion text (assertion mode).
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub assertion: String,
    /// The verdict that counts as a pass in assertion mode (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<bool>,
    /// Prompt text (n_wise mode).
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub prompt: String,
    /// Shuffle candidates between samples (n_wise mode).
    #[serde(deserialize_with = "null_default", skip_serializing_if = "is_false")]
    pub position_debiasing: bool,
    /// Evidence reference of the reference answer (reference mode).
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub reference_from: String,
    /// How several models' results combine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consensus: Option<Consensus>,
    /// Extra clauses appended to the judge prompt.
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub anti_gaming_clauses: Vec<String>,
    /// Per-call timeout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<i64>,
}

/// A judge's raw score range.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScoreScale {
    /// Lowest raw score.
    #[serde(deserialize_with = "null_default")]
    pub min: f64,
    /// Highest raw score.
    #[serde(deserialize_with = "null_default")]
    pub max: f64,
}

/// Cross-model consensus of a multi-model judge.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Consensus {
    /// `median`, `mean`, `majority_vote` or `unanimous`.
    #[serde(deserialize_with = "null_default")]
    pub aggregation: String,
    /// Agreement threshold in [0,1].
    #[serde(deserialize_with = "null_default", skip_serializing_if = "is_zero_f64")]
    pub min_agreement_threshold: f64,
    /// Flag results whose models disagree.
    #[serde(deserialize_with = "null_default", skip_serializing_if = "is_false")]
    pub flag_on_disagreement: bool,
}

/// One post-execution capture.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PostExecutionCheck {
    /// Unique key, referenced as `file:<key>`.
    #[serde(deserialize_with = "null_default")]
    pub key: String,
    /// `file_capture` or `directory_listing`.
    #[serde(rename = "type", deserialize_with = "null_default")]
    pub kind: String,
    /// The captured path.
    #[serde(deserialize_with = "null_default")]
    pub path: String,
    /// List directories recursively.
    #[serde(deserialize_with = "null_default", skip_serializing_if = "is_false")]
    pub recursive: bool,
    /// Capture size limit (0 = the default 1 MiB).
    #[serde(deserialize_with = "null_default", skip_serializing_if = "is_zero_i64")]
    pub max_size_bytes: i64,
}

/// `runtime_limits`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RuntimeLimits {
    /// Token budget of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_total_tokens: Option<i64>,
    /// Cost budget of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// Wall-clock budget of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_duration_ms: Option<i64>,
    /// Agent iteration budget, 1..=1000.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<i32>,
}

/// `pricing`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PricingConfig {
    /// One price row per (provider, model).
    #[serde(deserialize_with = "null_default")]
    pub models: Vec<PricingRow>,
}

/// One price row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PricingRow {
    /// Provider key as recorded on model-call events.
    #[serde(deserialize_with = "null_default")]
    pub provider_key: String,
    /// Model id as recorded on model-call events.
    #[serde(deserialize_with = "null_default")]
    pub provider_model_id: String,
    /// USD per million input tokens.
    #[serde(deserialize_with = "null_default")]
    pub input_cost_per_million_tokens: f64,
    /// USD per million output tokens.
    #[serde(deserialize_with = "null_default")]
    pub output_cost_per_million_tokens: f64,
}

/// `scorecard`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Scorecard {
    /// The dimensions (string shorthand or objects).
    #[serde(deserialize_with = "null_default")]
    pub dimensions: Vec<Dimension>,
    /// `weighted` (default), `binary` or `hybrid`.
    #[serde(deserialize_with = "null_default")]
    pub strategy: String,
    /// Overall threshold (weighted, hybrid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_threshold: Option<f64>,
    /// Legacy normalisation of the built-in latency and cost dimensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub normalization: Option<LegacyNormalization>,
    /// Limits on judge spending.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge_limits: Option<JudgeLimits>,
}

/// `scorecard.normalization` (legacy).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LegacyNormalization {
    /// Latency envelope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencyNormalization>,
    /// Cost envelope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostNormalization>,
}

/// `scorecard.normalization.latency`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LatencyNormalization {
    /// Latency that scores 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_ms: Option<f64>,
    /// Latency that scores 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_ms: Option<f64>,
}

/// `scorecard.normalization.cost`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CostNormalization {
    /// Cost that scores 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_usd: Option<f64>,
    /// Cost that scores 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_usd: Option<f64>,
}

/// `scorecard.judge_limits`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JudgeLimits {
    /// Cap on samples per judge, 0..=10 (0 = no cap).
    #[serde(deserialize_with = "null_default", skip_serializing_if = "is_zero_i64")]
    pub max_samples_per_judge: i64,
    /// Cap on judge spending in USD (0 = no cap).
    #[serde(deserialize_with = "null_default", skip_serializing_if = "is_zero_f64")]
    pub max_calls_usd: f64,
    /// Cap on judge tokens (0 = no cap).
    #[serde(deserialize_with = "null_default", skip_serializing_if = "is_zero_i64")]
    pub max_tokens: i64,
}

/// One scorecard dimension. Decodes from a bare string (the key) or a strict object.
///
/// `remote = "Self"` makes serde's derives inherent functions (`Dimension::deserialize`,
/// `Dimension::serialize`) rather than trait impls, so that the `Deserialize` impl below can
/// take the bare string itself and hand an object to the derived, strict decoding.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, default)]
pub struct Dimension {
    /// Unique key.
    #[serde(deserialize_with = "null_default")]
    pub key: String,
    /// Where the score comes from (empty until built-in expansion).
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub source: String,
    /// Validators in scope (empty = all).
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub validators: Vec<String>,
    /// Metric key (source `metric`).
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub metric: String,
    /// Judge key (source `llm_judge`).
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub judge_key: String,
    /// `higher` or `lower`.
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub better_direction: String,
    /// Normalisation envelope of a raw value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub normalization: Option<DimensionNormalization>,
    /// Weight in the weighted mean (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// Whether the dimension gates the verdict.
    #[serde(deserialize_with = "null_default", skip_serializing_if = "is_false")]
    pub gate: bool,
    /// The gate's threshold in [0,1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_threshold: Option<f64>,
}

impl Serialize for Dimension {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Dimension::serialize(self, serializer)
    }
}

/// A dimension's normalisation envelope (`max` is the floor for `higher`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DimensionNormalization {
    /// The value that scores 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    /// The value that scores 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

impl<'de> Deserialize<'de> for Dimension {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DimensionVisitor;

        impl<'de> Visitor<'de> for DimensionVisitor {
            type Value = Dimension;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a dimension key string or a dimension object")
            }

            fn visit_str<E: de::Error>(self, key: &str) -> Result<Dimension, E> {
                Ok(Dimension {
                    key: key.to_string(),
                    ..Dimension::default()
                })
            }

            fn visit_unit<E: de::Error>(self) -> Result<Dimension, E> {
                Ok(Dimension::default())
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Dimension, A::Error> {
                Dimension::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }

        deserializer.deserialize_any(DimensionVisitor)
    }
}
