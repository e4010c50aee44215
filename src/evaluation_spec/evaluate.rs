//! One run record → one evaluation record (`docs/spec.md`, "The evaluation record"): resolve each
//! validator's evidence and run it, collect the metrics, score the dimensions, apply the strategy,
//! and derive status, validity and warnings.

use std::cell::{OnceCell, RefCell};

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::evidence::{Evidence, Resolved, RunRecord, SourcePointer};
use super::judges::JudgeResult;
use super::load::EvaluationSpec;
use super::metrics::{collect_metrics, MetricResult};
use super::model::ValidatorDecl;
use super::scorecard::{
    dimension_result, overall, DimensionInputs, DimensionResult, ValidatorSummary,
};
use super::signals::ValidatorScore;
use super::validators::{
    self, outcome_class, Comparison, RawOutput, ResultState, TargetValue, ToolCall, Validator,
    ValidatorOutcome, Verdict,
};
use crate::protocol::{CallError, ErrorKind};

/// One validator's result in the evaluation record. Its `raw_output` object holds the
/// type-specific evidence (similarity, counts, …); the reference's copies of state, verdict,
/// score, reason, target and values are the result's own members, not repeated there.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidatorResult {
    /// The validator's key.
    pub key: String,
    /// Its type.
    pub kind: String,
    /// `available`, `unavailable` or `error`.
    pub state: ResultState,
    /// `pass`, `fail`, `unavailable`, `evaluator_error`, `pack_error` or `infra_error`.
    pub outcome_class: &'static str,
    /// `pass`, `fail` or `error`; absent when the validator never ran.
    pub verdict: Option<&'static str>,
    /// The score in [0,1].
    pub normalized_score: Option<f64>,
    /// The target reference.
    pub target: String,
    /// The expected-value reference.
    pub expected_from: String,
    /// The resolved target.
    pub actual_value: Option<String>,
    /// The resolved expected value.
    pub expected_value: Option<String>,
    /// The challenge the values belong to.
    pub challenge_identity_id: Option<String>,
    /// The regression case the values belong to.
    pub regression_case_id: Option<String>,
    /// Why it failed, errored or is unavailable.
    pub reason: String,
    /// The event the target value was read from.
    pub source: Option<SourcePointer>,
    /// The type-specific evidence (`raw_output`; empty when the validator never compared).
    pub evidence: RawOutput,
}

/// For serde_json only: the values are written as its `RawValue`s (another serializer would
/// show them as maps).
impl Serialize for ValidatorResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.serialize_sharing(serializer, &EscapedValues::default())
    }
}

/// The value strings of one record's validator results, each escaped as JSON once: the
/// validators that read one target (most read `final_output`) repeat its value, and escaping is
/// most of what writing a long value with quotes in it costs.
#[derive(Default)]
struct EscapedValues<'a> {
    escaped: RefCell<Vec<(&'a str, Box<RawValue>)>>,
}

impl<'a> EscapedValues<'a> {
    /// Serialize the member `name`: `value`, escaped the first time this record holds it.
    fn entry<M: SerializeMap>(
        &self,
        out: &mut M,
        name: &str,
        value: &'a str,
    ) -> Result<(), M::Error> {
        let mut escaped = self.escaped.borrow_mut();
        if let Some((_, raw)) = escaped.iter().find(|(seen, _)| *seen == value) {
            return out.serialize_entry(name, raw);
        }
        let raw = serde_json::value::to_raw_value(value).map_err(serde::ser::Error::custom)?;
        out.serialize_entry(name, &raw)?;
        escaped.push((value, raw));
        Ok(())
    }
}

/// A record's validator results, each value escaped once (serde_json only, as for
/// [`ValidatorResult`]).
fn serialize_results<S: Serializer>(
    results: &[ValidatorResult],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    struct Sharing<'a, 'b>(&'a ValidatorResult, &'b EscapedValues<'a>);
    impl Serialize for Sharing<'_, '_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            self.0.serialize_sharing(serializer, self.1)
        }
    }
    let escaped = EscapedValues::default();
    serializer.collect_seq(results.iter().map(|result| Sharing(result, &escaped)))
}

impl ValidatorResult {
    /// The result as its record holds it, the values escaped through `escaped`.
    fn serialize_sharing<'a, S: Serializer>(
        &'a self,
        serializer: S,
        escaped: &EscapedValues<'a>,
    ) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_map(None)?;
        out.serialize_entry("key", &self.key)?;
        out.serialize_entry("type", &self.kind)?;
        out.serialize_entry("state", self.state.as_str())?;
        out.serialize_entry("outcome_class", self.outcome_class)?;
        if let Some(verdict) = self.verdict {
            out.serialize_entry("verdict", verdict)?;
        }
        if let Some(score) = self.normalized_score {
            out.serialize_entry("normalized_score", &score)?;
        }
        out.serialize_entry("target", &self.target)?;
        out.serialize_entry("expected_from", &self.expected_from)?;
        let values = [
            ("actual_value", &self.actual_value),
            ("expected_value", &self.expected_value),
        ];
        for (name, value) in values {
            if let Some(value) = value {
                escaped.entry(&mut out, name, value)?;
            }
        }
        let optional = [
            ("challenge_identity_id", &self.challenge_identity_id),
            ("regression_case_id", &self.regression_case_id),
        ];
        for (name, value) in optional {
            if let Some(value) = value {
                out.serialize_entry(name, value)?;
            }
        }
        if !self.reason.is_empty() {
            out.serialize_entry("reason", &self.reason)?;
        }
        if let Some(source) = &self.source {
            out.serialize_entry("source", source)?;
        }
        if !self.evidence.is_empty() {
            out.serialize_entry("raw_output", &self.evidence)?;
        }
        out.end()
    }
}

/// The evaluation of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvaluationRecord {
    /// The run record's `id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    /// `complete` when every dimension is available with a score, else `partial`.
    pub status: &'static str,
    /// One result per validator, in declaration order.
    #[serde(serialize_with = "serialize_results")]
    pub validator_results: Vec<ValidatorResult>,
    /// The judge results scoring used.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub llm_judge_results: Vec<JudgeResult>,
    /// One result per metric, in declaration order.
    pub metric_results: Vec<MetricResult>,
    /// One result per dimension, in declaration order.
    pub dimension_results: Vec<DimensionResult>,
    /// Dimension key → score (`null` when it has none).
    pub dimension_scores: Map<String, Value>,
    /// The strategy's overall score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overall_score: Option<f64>,
    /// The verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    /// Why the verdict is what it is.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub overall_reason: String,
    /// `valid`, `degraded` or `invalid`.
    pub validity: &'static str,
    /// The first error or unavailable result behind the validity.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub validity_reason: String,
    /// The scorecard strategy.
    pub strategy: String,
    /// Evidence warnings and unavailable-dimension reasons, sorted and de-duplicated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl EvaluationRecord {
    /// The overall score as a result line's score (`run --spec`'s calls, `spec score`'s
    /// records): a record without one is an `invalid_output` error saying why.
    pub fn score(&self) -> Result<f64, CallError> {
        self.overall_score.ok_or_else(|| {
            CallError::new(
                ErrorKind::InvalidOutput,
                format!(
                    "the scorecard gave no overall score: {}",
                    if self.overall_reason.is_empty() {
                        "no dimension has a score"
                    } else {
                        &self.overall_reason
                    }
                ),
            )
        })
    }
}

fn verdict_text(verdict: Option<Verdict>) -> Option<&'static str> {
    verdict.map(Verdict::as_str)
}

/// A result that never reached the comparison (unavailable or errored evidence).
fn early_result(decl: &ValidatorDecl, state: ResultState, reason: String) -> ValidatorResult {
    ValidatorResult {
        key: decl.key.clone(),
        kind: decl.kind.clone(),
        state,
        outcome_class: "",
        verdict: None,
        normalized_score: None,
        target: decl.target.clone(),
        expected_from: decl.expected_from.clone(),
        actual_value: None,
        expected_value: None,
        challenge_identity_id: None,
        regression_case_id: None,
        reason,
        source: None,
        evidence: RawOutput::default(),
    }
}

fn apply_outcome(result: &mut ValidatorResult, outcome: ValidatorOutcome) {
    result.state = outcome.state;
    result.verdict = verdict_text(outcome.verdict);
    result.normalized_score = outcome.score;
    result.reason = outcome.reason;
    result.evidence = outcome.evidence;
}

/// Run one validator against the run's evidence.
fn run_validator<'a>(
    decl: &ValidatorDecl,
    validator: &Validator,
    evidence: &Evidence<'a>,
    tool_calls: &OnceCell<Vec<ToolCall<'a>>>,
) -> ValidatorResult {
    let mut result = early_result(decl, ResultState::Available, String::new());
    match decl.kind.as_str() {
        "code_execution" => {
            let (payload, source) = evidence.code_execution(&decl.key, &decl.target);
            result.source = source;
            apply_outcome(
                &mut result,
                validator.code_execution(&decl.key, payload.as_ref()),
            );
            return result;
        }
        "tool_call_assertion" => {
            let outcome =
                validator.tool_call_assertion(tool_calls.get_or_init(|| evidence.tool_calls()));
            result.source = outcome
                .source_call
                .and_then(|index| evidence.tool_call_source(index));
            apply_outcome(&mut result, outcome);
            return result;
        }
        _ => {}
    }
    let (actual, actual_challenge) = evidence.resolve(&decl.target);
    if let Resolved::Error(reason) = actual {
        return early_result(decl, ResultState::Error, reason);
    }
    let set_ids = |result: &mut ValidatorResult, challenge: Option<&str>| {
        result.challenge_identity_id = challenge.map(str::to_string);
        result.regression_case_id = evidence.regression_case_for(challenge).map(str::to_string);
    };
    if decl.kind == "postcondition" {
        set_ids(&mut result, actual_challenge);
        result.source = evidence.source_of(&decl.target);
        result.actual_value = actual.value().map(str::to_string);
        let target = match &actual {
            Resolved::Value(value) => TargetValue::Present(value),
            Resolved::Missing(reason) | Resolved::Error(reason) => TargetValue::Missing { reason },
        };
        apply_outcome(&mut result, validator.postcondition(target));
        return result;
    }
    if decl.kind == "file_exists" && actual.value().is_none() {
        set_ids(&mut result, actual_challenge);
        result.source = evidence.source_of(&decl.target);
        apply_comparison(&mut result, validator.file_missing());
        return result;
    }
    let needs_expected = validators::needs_expected(&decl.kind);
    let (expected, expected_challenge) = if needs_expected {
        evidence.resolve(&decl.expected_from)
    } else {
        (Resolved::Value(String::new()), None)
    };
    if let Resolved::Error(reason) = expected {
        return early_result(decl, ResultState::Error, reason);
    }
    let challenge = actual_challenge.or(expected_challenge);
    let (actual, expected) = match (actual, expected) {
        (Resolved::Value(actual), Resolved::Value(expected)) => (actual, expected),
        (actual, expected) => {
            let reason = [actual, expected]
                .into_iter()
                .find_map(|resolved| match resolved {
                    Resolved::Missing(reason) if !reason.trim().is_empty() => Some(reason),
                    _ => None,
                })
                .unwrap_or_else(|| "evidence is unavailable".to_string());
            let mut result = early_result(decl, ResultState::Unavailable, reason);
            set_ids(&mut result, challenge);
            return result;
        }
    };
    let comparison = validator.compare(&actual, &expected);
    // The resolved values move into the result (they are not needed after the comparison).
    result.actual_value = Some(actual);
    result.expected_value = needs_expected.then_some(expected);
    set_ids(&mut result, challenge);
    result.source = evidence.source_of(&decl.target);
    apply_comparison(&mut result, comparison);
    result
}

fn apply_comparison(result: &mut ValidatorResult, comparison: Comparison) {
    apply_outcome(result, ValidatorOutcome::from(comparison));
}

/// The first error (validators, then metrics, then dimensions), else the first unavailable
/// result (dimensions, then validators, then metrics).
fn validity(
    validators: &[ValidatorResult],
    metrics: &[MetricResult],
    dimensions: &[DimensionResult],
) -> (&'static str, String) {
    let or = |reason: &str, fallback: &str| {
        if reason.trim().is_empty() {
            fallback.to_string()
        } else {
            reason.to_string()
        }
    };
    let invalid = |what: &str, name: &str, reason: &str, fallback: &str| {
        let reason = or(reason, fallback);
        ("invalid", format!("{what} {name:?} errored: {reason}"))
    };
    let degraded = |what: &str, name: &str, reason: &str, fallback: &str| {
        let reason = or(reason, fallback);
        ("degraded", format!("{what} {name:?} unavailable: {reason}"))
    };
    if let Some(v) = validators.iter().find(|v| v.state == ResultState::Error) {
        return invalid("validator", &v.key, &v.reason, "validator error");
    }
    if let Some(m) = metrics.iter().find(|m| m.state == "error") {
        return invalid("metric", &m.key, &m.reason, "metric error");
    }
    if let Some(d) = dimensions.iter().find(|d| d.state == ResultState::Error) {
        return invalid("dimension", &d.dimension, &d.reason, "dimension error");
    }
    let unavailable = ResultState::Unavailable;
    if let Some(d) = dimensions.iter().find(|d| d.state == unavailable) {
        return degraded(
            "dimension",
            &d.dimension,
            &d.reason,
            "missing scoring evidence",
        );
    }
    if let Some(v) = validators.iter().find(|v| v.state == unavailable) {
        return degraded("validator", &v.key, &v.reason, "missing validator evidence");
    }
    if let Some(m) = metrics.iter().find(|m| m.state == "unavailable") {
        return degraded("metric", &m.key, &m.reason, "missing metric evidence");
    }
    ("valid", String::new())
}

/// Score one run with a loaded spec. Judge results come from the run record; a judge dimension
/// without one is unavailable.
pub fn evaluate_run(spec: &EvaluationSpec, run: &RunRecord) -> EvaluationRecord {
    let definition = &spec.definition;
    let evidence = Evidence::build(run);
    let tool_calls = OnceCell::new();
    let mut validator_results: Vec<ValidatorResult> = definition
        .validators
        .iter()
        .zip(&spec.validators)
        .map(|(decl, validator)| run_validator(decl, validator, &evidence, &tool_calls))
        .collect();
    for result in &mut validator_results {
        result.outcome_class = outcome_class(
            &result.kind,
            result.state,
            match result.verdict {
                Some("pass") => Some(Verdict::Pass),
                Some("fail") => Some(Verdict::Fail),
                Some(_) => Some(Verdict::Error),
                None => None,
            },
            result.normalized_score,
            &result.reason,
        );
    }
    let scores: Vec<ValidatorScore> = validator_results
        .iter()
        .map(|result| ValidatorScore {
            state: result.state,
            score: result.normalized_score,
        })
        .collect();
    let summaries: Vec<ValidatorSummary> = validator_results
        .iter()
        .zip(&scores)
        .map(|(result, score)| ValidatorSummary {
            key: &result.key,
            score: *score,
            reason: &result.reason,
        })
        .collect();
    let pricing = definition
        .pricing
        .as_ref()
        .map_or(&[][..], |pricing| &pricing.models[..]);
    let metric_results = collect_metrics(&definition.metrics, &evidence, &scores, pricing);
    let inputs = DimensionInputs {
        spec: definition,
        evidence: &evidence,
        validators: &summaries,
        validator_scores: &scores,
        metrics: &metric_results,
        judges: &run.llm_judge_results,
    };
    let dimension_results: Vec<DimensionResult> = definition
        .scorecard
        .dimensions
        .iter()
        .map(|dimension| dimension_result(dimension, &inputs))
        .collect();
    let mut warnings: Vec<String> = evidence.warnings.iter().map(|w| w.to_string()).collect();
    for (dimension, result) in definition
        .scorecard
        .dimensions
        .iter()
        .zip(&dimension_results)
    {
        let warns = matches!(
            dimension.source.as_str(),
            "latency" | "cost" | "behavioral" | "metric" | "llm_judge"
        );
        if warns && result.state == ResultState::Unavailable && !result.reason.is_empty() {
            warnings.push(result.reason.clone());
        }
    }
    warnings.sort();
    warnings.dedup();
    let dimension_scores: Map<String, Value> = dimension_results
        .iter()
        .map(|result| (result.dimension.clone(), json!(result.score)))
        .collect();
    let complete = !dimension_results.is_empty()
        && dimension_results
            .iter()
            .all(|result| result.state == ResultState::Available)
        && dimension_results
            .iter()
            .any(|result| result.score.is_some());
    let verdict = overall(definition, &dimension_results);
    let (validity, validity_reason) =
        validity(&validator_results, &metric_results, &dimension_results);
    EvaluationRecord {
        id: run.id.clone(),
        status: if complete { "complete" } else { "partial" },
        validator_results,
        llm_judge_results: run.llm_judge_results.clone(),
        metric_results,
        dimension_results,
        dimension_scores,
        overall_score: verdict.score,
        passed: verdict.passed,
        overall_reason: verdict.reason,
        validity,
        validity_reason,
        strategy: definition.scorecard.strategy.clone(),
        warnings,
    }
}

/// The reference's legacy deterministic-only entry point: refuses a spec whose `judge_mode` is
/// not `deterministic` (judge results cannot be taken into account there).
pub fn evaluate_run_deterministic(
    spec: &EvaluationSpec,
    run: &RunRecord,
) -> Result<EvaluationRecord, String> {
    if spec.definition.judge_mode != "deterministic" {
        return Err("only deterministic evaluation specs are supported".to_string());
    }
    Ok(evaluate_run(spec, run))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluation_spec::load_spec;

    fn score(spec: &str, run: &str) -> EvaluationRecord {
        let spec = load_spec(spec.as_bytes(), "spec.json").expect("a valid spec");
        let run = RunRecord::from_json_line(run).expect("a valid run");
        evaluate_run(&spec, &run)
    }

    const VALIDATOR: &str = r#"[{"key": "v", "type": "exact_match", "target": "final_output",
        "expected_from": "literal:ok"}]"#;

    #[test]
    fn behavioral_gate_and_human_preference() {
        let spec = format!(
            r#"{{"name": "s", "version_number": 1, "judge_mode": "deterministic",
            "validators": {VALIDATOR},
            "behavioral": {{"signals": [{{"key": "error_cascade", "weight": 1, "gate": true,
                "pass_threshold": 0.6}}, {{"key": "scope_adherence", "weight": 3}}]}},
            "scorecard": {{"dimensions": ["behavioral",
                {{"key": "people", "source": "human_preference"}}]}}}}"#
        );
        let run = r#"{"human_preference_score": 0.25, "events": [
            {"type": "tool.call.failed", "occurred_at": "2026-01-01T00:00:01Z",
             "payload": {"tool_name": "a"}},
            {"type": "tool.call.failed", "occurred_at": "2026-01-01T00:00:02Z",
             "payload": {"tool_name": "b"}}]}"#;
        let record = score(&spec, run);
        let behavioral = &record.dimension_results[0];
        assert_eq!(behavioral.score, Some(0.0));
        assert_eq!(
            behavioral.reason,
            "behavioral gate failed: error_cascade=0.500 < 0.600"
        );
        assert_eq!(record.dimension_results[1].score, Some(0.25));
        assert_eq!(record.overall_score, Some(0.125));
        assert_eq!(record.passed, Some(true));
        assert!(record
            .warnings
            .contains(&"final output evidence is unavailable".to_string()));
    }

    #[test]
    fn cost_uses_undated_prices_and_unknown_collectors_invalidate() {
        let spec = format!(
            r#"{{"name": "s", "version_number": 1, "judge_mode": "deterministic",
            "validators": {VALIDATOR},
            "metrics": [{{"key": "cost", "type": "numeric", "collector": "run_model_cost_usd"}},
                {{"key": "odd", "type": "numeric", "collector": "events"}}],
            "pricing": {{"models": [{{"provider_key": "openai", "provider_model_id": "gpt-4.1-mini",
                "input_cost_per_million_tokens": 1, "output_cost_per_million_tokens": 3}}]}},
            "scorecard": {{"dimensions": ["correctness"]}}}}"#
        );
        let run = r#"{"events": [
            {"type": "model.call.completed", "occurred_at": "2026-01-01T00:00:01Z",
             "payload": {"provider_key": "openai", "provider_model_id": "gpt-4.1-mini-2025-04-14",
                         "usage": {"input_tokens": 1000, "output_tokens": 500}}},
            {"type": "system.run.completed", "occurred_at": "2026-01-01T00:00:02Z",
             "payload": {"final_output": "ok"}}]}"#;
        let record = score(&spec, run);
        let cost = &record.metric_results[0];
        assert!((cost.numeric_value.unwrap_or(0.0) - 0.0025).abs() < 1e-12);
        assert_eq!(record.metric_results[1].state, "error");
        assert_eq!(record.validity, "invalid");
        assert_eq!(
            record.validity_reason,
            "metric \"odd\" errored: collector \"events\" is not supported"
        );
        assert_eq!(record.passed, Some(true));
    }

    #[test]
    fn raw_output_carries_only_the_evidence() {
        let spec = r#"{"name": "s", "version_number": 1, "judge_mode": "deterministic",
            "validators": [{"key": "f", "type": "fuzzy_match", "target": "final_output",
                "expected_from": "literal:hello world"}],
            "scorecard": {"dimensions": ["correctness"]}}"#;
        let run = r#"{"id": "r1", "events": [{"type": "system.run.completed",
            "occurred_at": "2026-01-01T00:00:02Z", "payload": {"final_output": "hello worle"}}]}"#;
        let record = serde_json::to_value(score(spec, run)).expect("serialisable");
        let result = &record["validator_results"][0];
        assert_eq!(result["verdict"], "pass");
        assert_eq!(result["outcome_class"], "pass");
        assert_eq!(result["actual_value"], "hello worle");
        let raw = result["raw_output"].as_object().expect("evidence");
        assert!(raw["similarity"].as_f64().is_some(), "{raw:?}");
        assert!(!raw.contains_key("actual_value"), "{raw:?}");
        assert_eq!(record["id"], "r1");
        assert_eq!(record["status"], "complete");
    }
}
