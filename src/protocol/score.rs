//! The one score validator: used by the command and HTTP parse paths and by preflight alike, so
//! parse-time and preflight-time rules cannot drift apart.

use serde_json::{Map, Value};

use super::lenient_json::{offset_as_written, restore_tokens, sentinel_token, to_standard_json};
use super::outcome::{CallError, ErrorKind};
use crate::input::{
    json_error_what, parse_unique_str, repeated_key_reason, repeated_key_reason_at,
};
use crate::text::{clip, json_type, one_line};

/// Which scores are valid (`--score-range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoreRange {
    /// A finite JSON number in [0.0, 1.0] (the default, the legacy behaviour).
    Unit,
    /// Any finite JSON number.
    Any,
}

impl ScoreRange {
    /// The name of the mode, as `--score-range` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ScoreRange::Unit => "unit",
            ScoreRange::Any => "any",
        }
    }
}

impl serde::Serialize for ScoreRange {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Validate a `score` value under `range`.
pub fn validate_score(value: &Value, range: ScoreRange) -> Result<f64, CallError> {
    let score = match value {
        Value::Number(number) => match number.as_f64() {
            Some(score) if score.is_finite() => score,
            _ => {
                return Err(CallError::new(
                    ErrorKind::NonFiniteScore,
                    format!("score {number} is not a finite number (it overflows f64)"),
                ))
            }
        },
        other => {
            if let Some(token) = sentinel_token(other) {
                return Err(CallError::new(
                    ErrorKind::NonFiniteScore,
                    format!("score is {token}; scores must be finite numbers"),
                ));
            }
            return Err(CallError::new(
                ErrorKind::NonNumericScore,
                match other {
                    Value::Null => "score must be a JSON number, found null".to_string(),
                    _ => format!(
                        "score must be a JSON number, found {} {}",
                        json_type(other),
                        clip(&other.to_string(), 80)
                    ),
                },
            ));
        }
    };
    if range == ScoreRange::Unit && !(0.0..=1.0).contains(&score) {
        return Err(CallError::new(
            ErrorKind::OutOfRange,
            format!("score {score} is outside [0, 1]; pass --score-range any to accept unbounded scores"),
        ));
    }
    // -0 is 0: adding 0 makes it positive, so that no result or aggregate shows `-0.0`.
    Ok(score + 0.0)
}

/// Parse an evaluator's raw answer (stdout or HTTP body) into a validated score and side info.
///
/// Every key other than `score` is returned as side information, also when the score is invalid.
pub fn parse_evaluator_output(
    raw: &[u8],
    range: ScoreRange,
) -> (Result<f64, CallError>, Map<String, Value>) {
    let value = match parse_json(raw) {
        Ok(value) => value,
        Err(error) => return (Err(error), Map::new()),
    };
    let mut object = match value {
        Value::Object(object) => object,
        other => {
            return (
                Err(CallError::new(
                    ErrorKind::InvalidOutput,
                    format!(
                        "expected a JSON object with a score, found {}",
                        sentinel_token(&other).unwrap_or(json_type(&other))
                    ),
                )),
                Map::new(),
            )
        }
    };
    let score = match object.shift_remove("score") {
        None => Err(CallError::new(
            ErrorKind::MissingScore,
            "output has no \"score\" key",
        )),
        Some(value) => validate_score(&value, range),
    };
    let mut side_info = Value::Object(object);
    restore_tokens(&mut side_info);
    let Value::Object(side_info) = side_info else {
        unreachable!("an object stays an object")
    };
    (score, side_info)
}

fn parse_json(raw: &[u8]) -> Result<Value, CallError> {
    let text = std::str::from_utf8(raw).map_err(|err| {
        CallError::new(
            ErrorKind::InvalidJson,
            format!("output is not valid UTF-8: {err}"),
        )
    })?;
    // A byte order mark before the answer (some Windows tools write one) is ignored, as at the
    // start of every input.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(CallError::new(
            ErrorKind::InvalidJson,
            "output is empty; expected a JSON object with a score",
        ));
    }
    // An answer that gives a key twice (`{"score": 1, "score": 0}`) says two things at once:
    // parse_unique_str refuses it, in the strict parse or, for an answer with `NaN` tokens or a
    // lone surrogate, in the lenient one.
    let ambiguous = |reason| {
        CallError::new(
            ErrorKind::InvalidJson,
            format!("output is ambiguous JSON: {reason}"),
        )
    };
    let strict_err = match parse_unique_str(text) {
        Ok(value) => return Ok(value),
        Err(err) => err,
    };
    if let Some(reason) = repeated_key_reason(&strict_err) {
        return Err(ambiguous(reason));
    }
    if let Some(standard) = to_standard_json(text) {
        match parse_unique_str(&standard) {
            Ok(value) => return Ok(value),
            Err(lenient_err) => {
                if let Some(reason) = repeated_key_reason_at(
                    &lenient_err,
                    column_as_written(text, &standard, &lenient_err),
                ) {
                    return Err(ambiguous(reason));
                }
            }
        }
    }
    Err(CallError::new(
        ErrorKind::InvalidJson,
        format!(
            "output is not valid JSON ({} at line {} column {}): {}",
            json_error_what(&strict_err),
            strict_err.line(),
            strict_err.column(),
            clip(&one_line(text.trim()), 200)
        ),
    ))
}

/// The column of `err` in the answer `text`, which `standard` was rewritten from
/// ([`offset_as_written`]).
fn column_as_written(text: &str, standard: &str, err: &serde_json::Error) -> usize {
    fn line(text: &str, number: usize) -> &str {
        text.lines().nth(number.saturating_sub(1)).unwrap_or("")
    }
    offset_as_written(
        line(text, err.line()),
        line(standard, err.line()),
        err.column(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_order_mark_before_the_answer_is_ignored() {
        let (score, side_info) = parse_evaluator_output(
            "\u{feff}{\"score\": 0.5, \"a\": 1}".as_bytes(),
            ScoreRange::Unit,
        );
        assert_eq!(
            (score.ok(), side_info["a"].clone()),
            (Some(0.5), Value::from(1))
        );
    }

    #[test]
    fn non_numeric_messages_name_the_type_once() {
        let null = validate_score(&Value::Null, ScoreRange::Unit).unwrap_err();
        assert_eq!(null.message, "score must be a JSON number, found null");
        let text = validate_score(&Value::from("0.5"), ScoreRange::Unit).unwrap_err();
        assert_eq!(
            text.message,
            "score must be a JSON number, found string \"0.5\""
        );
    }

    fn kind(raw: &str, range: ScoreRange) -> Result<f64, ErrorKind> {
        parse_evaluator_output(raw.as_bytes(), range)
            .0
            .map_err(|err| err.kind)
    }

    #[test]
    fn score_range_matrix() {
        use ErrorKind::*;
        use ScoreRange::*;
        type Expected = Result<f64, ErrorKind>;
        let cases: &[(&str, Expected, Expected)] = &[
            (r#"{"score": 0.5}"#, Ok(0.5), Ok(0.5)),
            (r#"{"score": 0}"#, Ok(0.0), Ok(0.0)),
            (r#"{"score": 1}"#, Ok(1.0), Ok(1.0)),
            (r#"{"score": 1.5}"#, Err(OutOfRange), Ok(1.5)),
            (r#"{"score": -0.1}"#, Err(OutOfRange), Ok(-0.1)),
            (
                r#"{"score": "0.5"}"#,
                Err(NonNumericScore),
                Err(NonNumericScore),
            ),
            (
                r#"{"score": true}"#,
                Err(NonNumericScore),
                Err(NonNumericScore),
            ),
            (
                r#"{"score": null}"#,
                Err(NonNumericScore),
                Err(NonNumericScore),
            ),
            (
                r#"{"score": NaN}"#,
                Err(NonFiniteScore),
                Err(NonFiniteScore),
            ),
            (
                r#"{"score": Infinity}"#,
                Err(NonFiniteScore),
                Err(NonFiniteScore),
            ),
            (
                r#"{"score": -Infinity}"#,
                Err(NonFiniteScore),
                Err(NonFiniteScore),
            ),
            (
                r#"{"score": 1e400}"#,
                Err(NonFiniteScore),
                Err(NonFiniteScore),
            ),
            (r#"{"reason": "x"}"#, Err(MissingScore), Err(MissingScore)),
            (r#"[0.5]"#, Err(InvalidOutput), Err(InvalidOutput)),
            (r#"{"score": 0.5"#, Err(InvalidJson), Err(InvalidJson)),
            ("", Err(InvalidJson), Err(InvalidJson)),
        ];
        for (raw, unit, any) in cases {
            assert_eq!(&kind(raw, Unit), unit, "unit: {raw}");
            assert_eq!(&kind(raw, Any), any, "any: {raw}");
        }
    }

    #[test]
    fn side_info_is_kept_on_errors_and_tokens_restored() {
        let (score, side) = parse_evaluator_output(
            br#"{"score": NaN, "why": "x", "v": Infinity}"#,
            ScoreRange::Unit,
        );
        assert_eq!(score.unwrap_err().kind, ErrorKind::NonFiniteScore);
        assert_eq!(
            Value::Object(side).to_string(),
            r#"{"why":"x","v":"Infinity"}"#
        );
    }
}
