//! Behavioral signals (the reference's "Behavioral panel"; `docs/spec.md`, "Metrics and behavioral
//! signals"): scores in [0,1] computed from the tool-call trace (failed calls included) or, for
//! recovery in multi-turn runs, from the transcript and the validators, and the behavioral
//! dimension that weighs them.

use std::collections::HashSet;

use super::evidence::{TraceEntry, Turn};
use super::gostr::loose_string;
use super::model::BehavioralConfig;
use super::validators::ResultState;

/// What a validator result contributes to the signals: its state and score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidatorScore {
    /// The result's state.
    pub state: ResultState,
    /// Its normalised score.
    pub score: Option<f64>,
}

/// A signal's score, or why it has none.
pub type SignalScore = Result<f64, String>;

/// The score of signal `key` (one of the five keys).
pub fn signal_score(
    key: &str,
    trace: &[TraceEntry<'_>],
    turns: &[Turn],
    validators: &[ValidatorScore],
) -> SignalScore {
    match key {
        "recovery_behavior" if !turns.is_empty() => multi_turn_recovery(turns, validators),
        "recovery_behavior" => Ok(recovery_behavior(trace)),
        "exploration_efficiency" => Ok(exploration_efficiency(trace)),
        "error_cascade" => Ok(error_cascade(trace)),
        "scope_adherence" => Ok(scope_adherence(trace)),
        "confidence_calibration" => confidence_calibration(trace, validators),
        other => Err(format!("unsupported behavioral signal {other:?}")),
    }
}

/// Adaptive recoveries (the call after a failure differs) over recovery attempts (failures that
/// are not the last call); 1 without failures, 0 when no failure was followed by a call.
pub fn recovery_behavior(trace: &[TraceEntry<'_>]) -> f64 {
    let failures = trace.iter().filter(|entry| entry.failed).count();
    if failures == 0 {
        return 1.0;
    }
    let mut attempts = 0;
    let mut adaptive = 0;
    for pair in trace.windows(2) {
        if pair[0].failed {
            attempts += 1;
            if pair[0].signature() != pair[1].signature() {
                adaptive += 1;
            }
        }
    }
    if attempts == 0 {
        0.0
    } else {
        adaptive as f64 / attempts as f64
    }
}

/// 1 − repeated calls / calls (1 for an empty trace).
pub fn exploration_efficiency(trace: &[TraceEntry<'_>]) -> f64 {
    if trace.is_empty() {
        return 1.0;
    }
    let mut seen = HashSet::new();
    let duplicates = trace
        .iter()
        .filter(|entry| !seen.insert(entry.signature()))
        .count();
    1.0 - duplicates as f64 / trace.len() as f64
}

/// 1 / the longest run of consecutive failed calls (1 without failures).
pub fn error_cascade(trace: &[TraceEntry<'_>]) -> f64 {
    let mut longest = 0;
    let mut streak = 0;
    for entry in trace {
        streak = if entry.failed { streak + 1 } else { 0 };
        longest = longest.max(streak);
    }
    if longest == 0 {
        1.0
    } else {
        1.0 / longest as f64
    }
}

/// Whether a call failed because the runtime's policy refused the tool.
fn out_of_scope(entry: &TraceEntry<'_>) -> bool {
    if !entry.failed {
        return false;
    }
    if entry.failure_origin.trim().eq_ignore_ascii_case("policy") {
        return true;
    }
    let message = entry.error_message().to_lowercase();
    message.contains("tool is not allowed in this runtime")
        || message.contains("tool is not available in this runtime")
}

/// 1 − out-of-scope calls / calls (1 for an empty trace).
pub fn scope_adherence(trace: &[TraceEntry<'_>]) -> f64 {
    if trace.is_empty() {
        return 1.0;
    }
    let outside = trace.iter().filter(|entry| out_of_scope(entry)).count();
    1.0 - outside as f64 / trace.len() as f64
}

/// 1 when every validator is available with a full score, 0 when one is available below it;
/// unavailable when there are none or one is not available.
fn validators_outcome(validators: &[ValidatorScore]) -> Result<f64, String> {
    if validators.is_empty() {
        return Err("validator outcome is unavailable".to_string());
    }
    let mut outcome = 1.0;
    for validator in validators {
        match (validator.state, validator.score) {
            (ResultState::Available, Some(score)) => {
                if score < 1.0 {
                    outcome = 0.0;
                }
            }
            _ => {
                return Err("validator outcome requires all validators to be available".to_string())
            }
        }
    }
    Ok(outcome)
}

/// Recovery in a multi-turn run: 1 without mismatched turns; otherwise 1 if the validators all
/// pass fully in the end, else 0.
pub fn multi_turn_recovery(turns: &[Turn], validators: &[ValidatorScore]) -> SignalScore {
    if !turns.iter().any(|turn| turn.mismatch) {
        return Ok(1.0);
    }
    validators_outcome(validators)
}

/// The Brier-style calibration of the latest `report_confidence` call (rejected at load; kept
/// for the collector's completeness).
fn confidence_calibration(trace: &[TraceEntry<'_>], validators: &[ValidatorScore]) -> SignalScore {
    let confidence = trace
        .iter()
        .rev()
        .filter(|entry| !entry.failed && entry.tool_name == "report_confidence")
        .find_map(|entry| {
            let arguments = entry.arguments?;
            ["confidence", "score"].iter().find_map(|key| {
                let value = arguments.get(*key)?;
                let value = value
                    .as_f64()
                    .or_else(|| loose_string(value)?.parse().ok())?;
                (0.0..=1.0).contains(&value).then_some(value)
            })
        })
        .ok_or_else(|| "report_confidence evidence is unavailable".to_string())?;
    let outcome = validators_outcome(validators)?;
    Ok((1.0 - (confidence - outcome).powi(2)).max(0.0))
}

/// The behavioral dimension: the weighted mean of the declared signals, 0 (still available) when
/// a gated signal is below its threshold; unavailable when a signal is.
pub fn behavioral_dimension(
    config: Option<&BehavioralConfig>,
    trace: &[TraceEntry<'_>],
    turns: &[Turn],
    validators: &[ValidatorScore],
) -> Result<(f64, String), String> {
    let signals = match config {
        Some(config) if !config.signals.is_empty() => &config.signals,
        _ => return Err("behavioral config is unavailable".to_string()),
    };
    let mut total_weight = 0.0;
    let mut weighted = 0.0;
    let mut gate_failures = Vec::new();
    for signal in signals {
        let score = signal_score(&signal.key, trace, turns, validators).map_err(|reason| {
            format!(
                "behavioral signal {:?} is unavailable: {reason}",
                signal.key
            )
        })?;
        total_weight += signal.weight;
        weighted += signal.weight * score;
        if let (true, Some(threshold)) = (signal.gate, signal.pass_threshold) {
            if score < threshold {
                gate_failures.push(format!("{}={score:.3} < {threshold:.3}", signal.key));
            }
        }
    }
    if total_weight <= 0.0 {
        return Err("behavioral weights are unavailable".to_string());
    }
    if gate_failures.is_empty() {
        Ok((weighted / total_weight, String::new()))
    } else {
        Ok((
            0.0,
            format!("behavioral gate failed: {}", gate_failures.join(", ")),
        ))
    }
}
