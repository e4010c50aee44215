//! The score-range matrix of the protocol seed: evaluator outputs and what each must produce
//! under `--score-range unit` and `--score-range any`, and a checker for `--output` records.

use serde_json::Value;

/// What a call with a given evaluator output must produce.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Expect {
    /// A valid score.
    Score(f64),
    /// An error of this kind (`error.kind` in the result line).
    Error(&'static str),
}

/// Evaluator output → expected outcome under `--score-range unit` and `--score-range any`.
pub const SCORE_MATRIX: &[(&str, Expect, Expect)] = &[
    (r#"{"score": 0}"#, Expect::Score(0.0), Expect::Score(0.0)),
    (r#"{"score": 1}"#, Expect::Score(1.0), Expect::Score(1.0)),
    (r#"{"score": 0.5}"#, Expect::Score(0.5), Expect::Score(0.5)),
    (r#"{"score": -0.0}"#, Expect::Score(0.0), Expect::Score(0.0)),
    (
        r#"{"score": 1e-400}"#,
        Expect::Score(0.0),
        Expect::Score(0.0),
    ),
    (
        r#"{"score": 1.5}"#,
        Expect::Error("out_of_range"),
        Expect::Score(1.5),
    ),
    (
        r#"{"score": -0.1}"#,
        Expect::Error("out_of_range"),
        Expect::Score(-0.1),
    ),
    (
        r#"{"score": 1e300}"#,
        Expect::Error("out_of_range"),
        Expect::Score(1e300),
    ),
    (
        r#"{"score": "0.5"}"#,
        Expect::Error("non_numeric_score"),
        Expect::Error("non_numeric_score"),
    ),
    (
        r#"{"score": true}"#,
        Expect::Error("non_numeric_score"),
        Expect::Error("non_numeric_score"),
    ),
    (
        r#"{"score": null}"#,
        Expect::Error("non_numeric_score"),
        Expect::Error("non_numeric_score"),
    ),
    (
        r#"{"score": [0.5]}"#,
        Expect::Error("non_numeric_score"),
        Expect::Error("non_numeric_score"),
    ),
    (
        r#"{"score": {"v": 1}}"#,
        Expect::Error("non_numeric_score"),
        Expect::Error("non_numeric_score"),
    ),
    (
        r#"{"reason": "no score"}"#,
        Expect::Error("missing_score"),
        Expect::Error("missing_score"),
    ),
    (
        r#"{"Score": 0.5}"#,
        Expect::Error("missing_score"),
        Expect::Error("missing_score"),
    ),
    (
        r#"{"score": NaN}"#,
        Expect::Error("non_finite_score"),
        Expect::Error("non_finite_score"),
    ),
    (
        r#"{"score": Infinity}"#,
        Expect::Error("non_finite_score"),
        Expect::Error("non_finite_score"),
    ),
    (
        r#"{"score": -Infinity}"#,
        Expect::Error("non_finite_score"),
        Expect::Error("non_finite_score"),
    ),
    (
        r#"{"score": 1e400}"#,
        Expect::Error("non_finite_score"),
        Expect::Error("non_finite_score"),
    ),
    (
        r#"{"score": -1e400}"#,
        Expect::Error("non_finite_score"),
        Expect::Error("non_finite_score"),
    ),
    (
        "[0.5]",
        Expect::Error("invalid_output"),
        Expect::Error("invalid_output"),
    ),
    (
        "0.5",
        Expect::Error("invalid_output"),
        Expect::Error("invalid_output"),
    ),
    (
        r#""score""#,
        Expect::Error("invalid_output"),
        Expect::Error("invalid_output"),
    ),
    (
        "null",
        Expect::Error("invalid_output"),
        Expect::Error("invalid_output"),
    ),
    (
        r#"{"score": 0.5"#,
        Expect::Error("invalid_json"),
        Expect::Error("invalid_json"),
    ),
    (
        r#"{"score": 0.5} trailing"#,
        Expect::Error("invalid_json"),
        Expect::Error("invalid_json"),
    ),
    (
        "score=0.5",
        Expect::Error("invalid_json"),
        Expect::Error("invalid_json"),
    ),
    // Two scores: which one counts is the JSON reader's choice.
    (
        r#"{"score": 1, "score": 0}"#,
        Expect::Error("invalid_json"),
        Expect::Error("invalid_json"),
    ),
    (
        r#"{"score": 1, "why": {"a": NaN, "a": 1}}"#,
        Expect::Error("invalid_json"),
        Expect::Error("invalid_json"),
    ),
    (
        "",
        Expect::Error("invalid_json"),
        Expect::Error("invalid_json"),
    ),
    (
        "  \n",
        Expect::Error("invalid_json"),
        Expect::Error("invalid_json"),
    ),
];

/// Check one `--output` record against `expected`; returns a description of the mismatch.
pub fn check_record(record: &Value, expected: Expect) -> Result<(), String> {
    match expected {
        Expect::Score(score) => {
            if !record["error"].is_null() {
                return Err(format!(
                    "expected score {score}, got error {}",
                    record["error"]
                ));
            }
            match record["score"].as_f64() {
                Some(got) if (got - score).abs() <= score.abs() * 1e-12 => Ok(()),
                _ => Err(format!("expected score {score}, got {}", record["score"])),
            }
        }
        Expect::Error(kind) => {
            if record["error"]["kind"] != kind {
                return Err(format!("expected error {kind}, got {}", record["error"]));
            }
            if record["score"].as_f64() != Some(0.0) {
                return Err(format!("a failed call scores 0.0, got {}", record["score"]));
            }
            if record["error"]["message"]
                .as_str()
                .is_none_or(str::is_empty)
            {
                return Err("the error has no message".into());
            }
            Ok(())
        }
    }
}
