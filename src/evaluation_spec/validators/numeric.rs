//! numeric_match: Go-style float parsing or number extraction, significant-digit rounding,
//! absolute / relative tolerances (either one passing is enough).

use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;
use serde_json::json;

use super::config::{check_strict, decode, Problems, RawConfig};
use super::text::{evidence, go_quote};
use super::{Comparison, ConfigProblem};
use crate::evaluation_spec::gostr::go_g;
use crate::scoring::normalize::{strip_currency, without_chars};

/// The leftmost number `extract_number` takes (ASCII digits only).
static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    // ok: a constant pattern, checked by the unit tests.
    Regex::new(r"[+-]?([0-9]+(\.[0-9]+)?|\.[0-9]+)([eE][+-]?[0-9]+)?").expect("valid regex")
});

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NumericConfig {
    absolute_tolerance: Option<f64>,
    relative_tolerance: Option<f64>,
    extract_number: Option<bool>,
    significant_digits: Option<i64>,
    tolerance_mode: Option<String>,
    tolerance: Option<f64>,
}

/// The config after the legacy `tolerance_mode` / `tolerance` pair is translated.
#[derive(Debug)]
pub(super) struct NumericSettings {
    absolute_tolerance: Option<f64>,
    relative_tolerance: Option<f64>,
    extract_number: bool,
    significant_digits: Option<i64>,
}

impl NumericConfig {
    fn settings(&self) -> Result<NumericSettings, String> {
        let mode = self.tolerance_mode.as_deref().map(str::trim).unwrap_or("");
        let legacy = !mode.is_empty() || self.tolerance.is_some();
        let current = self.absolute_tolerance.is_some() || self.relative_tolerance.is_some();
        let (mut absolute, mut relative) = (self.absolute_tolerance, self.relative_tolerance);
        if legacy {
            if current {
                return Err("cannot mix tolerance_mode/tolerance with \
                            absolute_tolerance/relative_tolerance"
                    .to_string());
            }
            let tolerance = self.tolerance.unwrap_or(0.001);
            match if mode.is_empty() { "relative" } else { mode } {
                "absolute" => absolute = Some(tolerance),
                "relative" => relative = Some(tolerance),
                _ => {
                    return Err(
                        "tolerance_mode must be either \"absolute\" or \"relative\"".to_string()
                    )
                }
            }
        }
        Ok(NumericSettings {
            absolute_tolerance: absolute,
            relative_tolerance: relative,
            extract_number: self.extract_number.unwrap_or(false),
            significant_digits: self.significant_digits,
        })
    }
}

/// Decode the config (strictly) and translate the legacy keys; errors are run-time reasons.
pub(super) fn prepare(config: RawConfig<'_>) -> Result<NumericSettings, String> {
    decode::<NumericConfig>(config)
        .and_then(|config| config.settings())
        .map_err(|err| format!("parse numeric_match config: {err}"))
}

pub(super) fn check(config: RawConfig<'_>) -> Vec<ConfigProblem> {
    check_strict::<NumericConfig>(config, |config, problems: &mut Problems| {
        match config.settings() {
            Err(err) => problems.add("", err),
            Ok(settings) => {
                if settings.absolute_tolerance.is_some_and(|value| value < 0.0) {
                    problems.add(".absolute_tolerance", "must be greater than or equal to 0");
                }
                if settings.relative_tolerance.is_some_and(|value| value < 0.0) {
                    problems.add(".relative_tolerance", "must be greater than or equal to 0");
                }
                if settings.significant_digits.is_some_and(|value| value <= 0) {
                    problems.add(".significant_digits", "must be greater than 0");
                }
            }
        }
    })
}

/// Go's `strconv.ParseFloat(text, 64)` for decimal forms and inf/infinity/nan; out-of-range
/// literals are errors, not infinities.
pub(super) fn parse_go_float(text: &str) -> Result<f64, String> {
    let syntax = || {
        format!(
            "strconv.ParseFloat: parsing {}: invalid syntax",
            go_quote(text)
        )
    };
    let unsigned = text.trim_start_matches(['+', '-']);
    if text.len() - unsigned.len() > 1 || unsigned.starts_with(['+', '-']) {
        return Err(syntax());
    }
    let value: f64 = text.parse().map_err(|_| syntax())?;
    let literal_infinity = matches!(unsigned.to_ascii_lowercase().as_str(), "inf" | "infinity");
    if value.is_infinite() && !literal_infinity {
        return Err(format!(
            "strconv.ParseFloat: parsing {}: value out of range",
            go_quote(text)
        ));
    }
    Ok(value)
}

/// One side: the token that was parsed and its value.
fn parse_side(text: &str, extract: bool) -> Result<(String, f64), String> {
    if !extract {
        let token = text.trim();
        return parse_go_float(token).map(|value| (token.to_string(), value));
    }
    let cleaned = without_chars(&strip_currency(text), |ch| matches!(ch, ',' | '%'));
    let cleaned = cleaned.trim();
    match NUMBER.find(cleaned) {
        Some(found) => {
            parse_go_float(found.as_str()).map(|value| (found.as_str().to_string(), value))
        }
        None => Err(format!("no numeric value found in {}", go_quote(text))),
    }
}

/// Round to `digits` significant digits, halves away from zero.
fn round_significant(value: f64, digits: i64) -> f64 {
    if value == 0.0 || !value.is_finite() {
        return value;
    }
    let magnitude = value.abs().log10().floor() + 1.0;
    let scale = 10f64.powf(digits as f64 - magnitude);
    (value * scale).round() / scale
}

pub(super) fn numeric_match(
    settings: &NumericSettings,
    actual: &str,
    expected: &str,
) -> Comparison {
    let (expected_token, expected_value) = match parse_side(expected, settings.extract_number) {
        Ok(parsed) => parsed,
        Err(err) => return Comparison::error(format!("parse expected numeric value: {err}")),
    };
    let (actual_token, actual_value) = match parse_side(actual, settings.extract_number) {
        Ok(parsed) => parsed,
        Err(err) => return Comparison::error(format!("parse actual numeric value: {err}")),
    };
    let (actual_value, expected_value) = match settings.significant_digits {
        Some(digits) if digits > 0 => (
            round_significant(actual_value, digits),
            round_significant(expected_value, digits),
        ),
        _ => (actual_value, expected_value),
    };
    let absolute = (actual_value - expected_value).abs();
    let relative = if expected_value != 0.0 {
        absolute / expected_value.abs()
    } else if absolute == 0.0 {
        0.0
    } else {
        f64::INFINITY
    };
    let passed = match (settings.absolute_tolerance, settings.relative_tolerance) {
        (None, None) => actual_value == expected_value,
        (absolute_tolerance, relative_tolerance) => {
            absolute_tolerance.is_some_and(|tolerance| absolute <= tolerance)
                || relative_tolerance.is_some_and(|tolerance| relative <= tolerance)
        }
    };
    // A pass keeps no reason: only a failure's is written.
    let reason = if passed {
        String::new()
    } else {
        format!(
            "actual {} is not within tolerance of expected {}",
            go_g(actual_value, None),
            go_g(expected_value, None)
        )
    };
    Comparison::binary(passed, &reason).with_evidence(evidence([
        ("actual_raw", json!(actual)),
        ("expected_raw", json!(expected)),
        ("actual_parsed", json!(actual_token)),
        ("expected_parsed", json!(expected_token)),
        ("actual_numeric", json!(actual_value)),
        ("expected_numeric", json!(expected_value)),
        ("absolute_difference", json!(absolute)),
        ("relative_difference", json!(relative)),
        ("extract_number", json!(settings.extract_number)),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_float_forms() {
        assert_eq!(parse_go_float("1e3"), Ok(1000.0));
        assert_eq!(parse_go_float("-Inf"), Ok(f64::NEG_INFINITY));
        assert!(parse_go_float("NaN").is_ok_and(f64::is_nan));
        assert!(parse_go_float("1e400").is_err_and(|err| err.ends_with("value out of range")));
        assert!(parse_go_float("+-1").is_err());
        assert!(parse_go_float("abc").is_err_and(|err| err.ends_with("invalid syntax")));
    }

    #[test]
    fn significant_digits_round_half_away_from_zero() {
        assert_eq!(round_significant(123456.0, 3), 123000.0);
        assert_eq!(round_significant(-9876.0, 2), -9900.0);
        assert_eq!(round_significant(2.5, 1), 3.0);
    }
}
