//! Reading a chat-completions response: the envelope (`choices[0].message.content`, the `model`
//! that answered, `usage`), the judge's JSON object inside the content (plain, fenced or wrapped in
//! prose), and the score — the rubric dimensions' weighted mean or the judge's `score`, 0.0 when a
//! hard constraint is violated, always clamped to [0, 1] whatever `--score-range` says. Score and
//! dimension values go through the one score validator, so `NaN` is `non_finite_score` here too.

use crate::secrets::Secrets;
use serde_json::{Map, Value};

use super::rubric::Rubric;
use crate::llm::reply::{excerpt, message_content};
use crate::protocol::{
    offset_as_written, restore_tokens, to_standard_json, validate_score, Attempt, CallError,
    ErrorKind, Retry, ScoreRange,
};
use crate::text::{clip, json_type};

/// At most this many `{` positions are tried when looking for the JSON object in a reply.
const MAX_OBJECT_STARTS: usize = 64;

/// Turn the body of a successful (2xx) chat-completions response into a final attempt.
///
/// Side info: the judge object's keys except `score` (verbatim), `judge_score` (the score as the
/// judge gave it), `dimension_scores` and `missing_dimensions` with a rubric, `model` (the id that
/// answered, else `requested_model`) and `usage` — also when the reply is unusable. Error
/// messages carry one-line excerpts of the reply, `redact`ed before they are cut.
pub fn read_response(
    body: &[u8],
    requested_model: &str,
    rubric: Option<&Rubric>,
    secrets: &Secrets,
) -> Attempt {
    let envelope = match crate::llm::reply::parse_reply(body) {
        Ok(envelope) => envelope,
        Err(error) => return Attempt::failed(error),
    };
    let (mut score, mut side_info) = match message_content(&envelope, secrets) {
        Ok(content) => judge_reply(&content, rubric, secrets),
        Err(error) => (Err(error), Map::new()),
    };
    if let Err(error) = &mut score {
        if envelope.pointer("/choices/0/finish_reason") == Some(&Value::from("length")) {
            error
                .message
                .push_str(" (the reply was cut off at the token limit: raise --judge-max-tokens)");
        }
    }
    let model = envelope
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(requested_model);
    side_info.insert("model".into(), Value::from(model));
    if let Some(usage) = envelope.get("usage").filter(|usage| usage.is_object()) {
        side_info.insert("usage".into(), usage.clone());
    }
    Attempt {
        score,
        side_info,
        retry: Retry::Never,
        findings: crate::protocol::Findings::default(),
    }
}

/// Score the judge's reply text; the second value is its side info.
fn judge_reply(
    content: &str,
    rubric: Option<&Rubric>,
    secrets: &Secrets,
) -> (Result<f64, CallError>, Map<String, Value>) {
    let raw = content.trim();
    if raw.is_empty() {
        return (
            Err(CallError::new(
                ErrorKind::InvalidJson,
                "the judge's reply is empty",
            )),
            Map::new(),
        );
    }
    let Some(mut object) = find_object(raw) else {
        return (
            Err(CallError::new(
                ErrorKind::InvalidJson,
                format!(
                    "the judge's reply holds no valid JSON object: {}",
                    excerpt(raw, secrets)
                ),
            )),
            Map::new(),
        );
    };
    let judge_score = object.shift_remove("score");
    let mut extra = Map::new();
    let constraints_met = constraints_met(&object, rubric, &mut extra);
    let score = match rubric.filter(|rubric| !rubric.dimensions.is_empty()) {
        Some(rubric) => weighted_dimensions(rubric, &object, &mut extra),
        None => match &judge_score {
            None => Err(CallError::new(
                ErrorKind::InvalidOutput,
                "the judge's reply has no \"score\"",
            )),
            Some(value) => validate_score(value, ScoreRange::Any).map_err(|error| {
                CallError::new(error.kind, format!("the judge's {}", error.message))
            }),
        },
    };
    let score = match (constraints_met, score) {
        (Ok(false), _) => Ok(0.0),
        (Err(error), _) | (Ok(true), Err(error)) => Err(CallError::new(
            error.kind,
            format!("{}; judge reply: {}", error.message, excerpt(raw, secrets)),
        )),
        (Ok(true), Ok(score)) => Ok(score.clamp(0.0, 1.0)),
    };
    if let Some(value) = judge_score {
        object.insert("judge_score".into(), value);
    }
    object.extend(extra);
    let mut side_info = Value::Object(object);
    restore_tokens(&mut side_info);
    let Value::Object(side_info) = side_info else {
        unreachable!("an object stays an object")
    };
    (score, side_info)
}

/// Whether the judge says the hard constraints are met: `hard_constraints_satisfied` as a boolean
/// or as the string `"true"`/`"false"` in any case; anything else is an error. When it is missing
/// they count as met, and with a rubric that has hard constraints `extra` records
/// `hard_constraints_unchecked: true`.
fn constraints_met(
    object: &Map<String, Value>,
    rubric: Option<&Rubric>,
    extra: &mut Map<String, Value>,
) -> Result<bool, CallError> {
    match object.get("hard_constraints_satisfied") {
        None => {
            if rubric.is_some_and(|rubric| !rubric.hard_constraints.is_empty()) {
                extra.insert("hard_constraints_unchecked".into(), Value::Bool(true));
            }
            Ok(true)
        }
        Some(Value::Bool(met)) => Ok(*met),
        Some(Value::String(text)) if text.trim().eq_ignore_ascii_case("true") => Ok(true),
        Some(Value::String(text)) if text.trim().eq_ignore_ascii_case("false") => Ok(false),
        Some(other) => Err(CallError::new(
            ErrorKind::InvalidOutput,
            format!(
                "the judge's \"hard_constraints_satisfied\" must be true or false, found {} {}",
                json_type(other),
                clip(&other.to_string(), 40)
            ),
        )),
    }
}

/// The first JSON object in `text` (preferring one with a `score`, `dimensions` or
/// `hard_constraints_satisfied` key), wherever it starts and whatever follows it. Bare `NaN` and
/// `Infinity` tokens are read as the shared lenient reader does, so the score validator reports
/// them as non-finite scores.
fn find_object(text: &str) -> Option<Map<String, Value>> {
    let mut first = None;
    for object in objects_in(text) {
        if ["score", "dimensions", "hard_constraints_satisfied"]
            .iter()
            .any(|key| object.contains_key(*key))
        {
            return Some(object);
        }
        first.get_or_insert(object);
    }
    first
}

/// [`top_level_objects`], bare `NaN` and `Infinity` tokens read as the lenient reader does.
fn objects_in(text: &str) -> impl Iterator<Item = Map<String, Value>> + '_ {
    top_level(text, |rest| {
        leading_object(rest).or_else(|| {
            let replaced = to_standard_json(rest)?;
            let (object, length) = leading_object(&replaced)?;
            Some((object, offset_as_written(rest, &replaced, length)))
        })
    })
}

/// The JSON objects in `text` that are not inside another (plain, fenced or wrapped in prose),
/// in order: an object nested in a reply is never taken for the reply.
pub(crate) fn top_level_objects(text: &str) -> impl Iterator<Item = Map<String, Value>> + '_ {
    top_level(text, leading_object)
}

/// The objects `read` finds at the `{`s of `text` (its first [`MAX_OBJECT_STARTS`]) that are
/// not inside an object found before.
fn top_level<'a>(
    text: &'a str,
    read: impl Fn(&str) -> Option<(Map<String, Value>, usize)> + 'a,
) -> impl Iterator<Item = Map<String, Value>> + 'a {
    let mut resume = 0;
    text.match_indices('{')
        .take(MAX_OBJECT_STARTS)
        .filter_map(move |(start, _)| {
            if start < resume {
                return None;
            }
            let (object, length) = read(&text[start..])?;
            resume = start + length;
            Some(object)
        })
}

/// The JSON object `text` starts with, whatever follows it, and its length in bytes.
fn leading_object(text: &str) -> Option<(Map<String, Value>, usize)> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Ok(Value::Object(object))) => Some((object, values.byte_offset())),
        _ => None,
    }
}

/// The weighted mean of the rubric's dimensions, each clamped to [0, 1]. Records
/// `dimension_scores` and, when the reply lacks any, `missing_dimensions` in `extra`; a missing
/// dimension is an `invalid_output` error naming every one missing (the prompt asks for each, and
/// no overall score stands in for them).
fn weighted_dimensions(
    rubric: &Rubric,
    object: &Map<String, Value>,
    extra: &mut Map<String, Value>,
) -> Result<f64, CallError> {
    let mut total = 0.0;
    let mut values = Map::new();
    let mut missing = Vec::new();
    for dimension in &rubric.dimensions {
        let Some(value) = dimension_value(object, &dimension.name) else {
            missing.push(dimension.name.as_str());
            continue;
        };
        let value = validate_score(value, ScoreRange::Any)
            .map_err(|error| {
                CallError::new(
                    error.kind,
                    format!(
                        "the judge's value for dimension {:?} is unusable: {}",
                        dimension.name, error.message
                    ),
                )
            })?
            .clamp(0.0, 1.0);
        total += dimension.weight * value;
        values.insert(dimension.name.clone(), Value::from(value));
    }
    extra.insert("dimension_scores".into(), Value::Object(values));
    if missing.is_empty() {
        return Ok(total);
    }
    extra.insert("missing_dimensions".into(), Value::from(missing.clone()));
    let names: Vec<String> = missing.iter().map(|name| format!("{name:?}")).collect();
    Err(CallError::new(
        ErrorKind::InvalidOutput,
        format!(
            "the judge's reply lacks the rubric dimension{} {}",
            if missing.len() == 1 { "" } else { "s" },
            names.join(", ")
        ),
    ))
}

/// A dimension's value in the reply: under `dimensions` (an object of values or of
/// `{"score": ...}`, or an array of `{"name", "score"}`), else a top-level key; names match
/// case-insensitively.
fn dimension_value<'a>(object: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    let by_name = |map: &'a Map<String, Value>| {
        map.get(name).or_else(|| {
            map.iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, value)| value)
        })
    };
    let found = match object.get("dimensions") {
        Some(Value::Object(map)) => by_name(map),
        Some(Value::Array(items)) => items
            .iter()
            .find(|item| {
                item.get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|item_name| item_name.eq_ignore_ascii_case(name))
            })
            .map(|item| {
                item.get("score")
                    .or_else(|| item.get("value"))
                    .unwrap_or(&Value::Null)
            }),
        _ => None,
    }
    .or_else(|| by_name(object))?;
    match found {
        Value::Object(inner) => inner.get("score").or_else(|| inner.get("value")),
        other => Some(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::reply::REPLY_EXCERPT_CHARS;
    use serde_json::json;

    /// No secret to redact.
    fn keep() -> Secrets {
        Secrets::default()
    }

    fn completion(content: &str) -> Vec<u8> {
        json!({
            "model": "judge-1",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        })
        .to_string()
        .into_bytes()
    }

    fn score(content: &str, rubric: Option<&Rubric>) -> Result<f64, ErrorKind> {
        read_response(&completion(content), "m", rubric, &keep())
            .score
            .map_err(|error| error.kind)
    }

    #[test]
    fn finds_the_object_and_clamps() {
        use ErrorKind::*;
        let cases: &[(&str, Result<f64, ErrorKind>)] = &[
            (r#"{"score": 0.7, "reasoning": "ok"}"#, Ok(0.7)),
            ("```json\n{\"score\": 0.6}\n```", Ok(0.6)),
            (
                "Sure! {not json} Here it is: {\"score\": 0.4} Hope that helps.",
                Ok(0.4),
            ),
            (r#"{"score": 1.7}"#, Ok(1.0)),
            (r#"{"score": -2}"#, Ok(0.0)),
            (
                r#"{"score": 0.9, "hard_constraints_satisfied": false}"#,
                Ok(0.0),
            ),
            (r#"{"score": "high"}"#, Err(NonNumericScore)),
            (r#"{"score": 1e400}"#, Err(NonFiniteScore)),
            (r#"{"score": NaN, "reasoning": "NaN"}"#, Err(NonFiniteScore)),
            ("Verdict: {\"score\": -Infinity} done", Err(NonFiniteScore)),
            (r#"{"reasoning": "no score"}"#, Err(InvalidOutput)),
            (r#"{"score": 0.5"#, Err(InvalidJson)),
            ("  ", Err(InvalidJson)),
            ("I cannot judge this.", Err(InvalidJson)),
        ];
        for (content, expected) in cases {
            assert_eq!(&score(content, None), expected, "{content}");
        }
    }

    #[test]
    fn dimensions_weighted_missing_named() {
        let rubric = Rubric::from_value(&json!({"quality_dimensions": [
            {"name": "clarity", "weight": 0.5}, {"name": "accuracy", "weight": 0.3}, {"name": "tone", "weight": 0.2}
        ]}))
        .unwrap();
        let attempt = read_response(
            &completion(
                r#"{"dimensions": {"Clarity": 0.8, "accuracy": {"score": 1.5}}, "reasoning": "r"}"#,
            ),
            "m",
            Some(&rubric),
            &keep(),
        );
        let error = attempt.score.unwrap_err();
        assert_eq!(error.kind, ErrorKind::InvalidOutput);
        assert!(
            error.message.starts_with(
                "the judge's reply lacks the rubric dimension \"tone\"; judge reply: {"
            ),
            "{}",
            error.message
        );
        let side = Value::Object(attempt.side_info);
        assert_eq!(
            side["dimension_scores"],
            json!({"clarity": 0.8, "accuracy": 1.0})
        );
        assert_eq!(side["missing_dimensions"], json!(["tone"]));
        assert_eq!(side["reasoning"], "r");
        assert_eq!(side["model"], "judge-1");
        assert_eq!(side["usage"]["completion_tokens"], 5);
        let listed = r#"{"dimensions": [{"name": "clarity", "score": 1}, {"name": "tone", "score": 1}, {"name": "accuracy", "score": 1}]}"#;
        assert_eq!(score(listed, Some(&rubric)), Ok(1.0));
        let weighted = r#"{"dimensions": {"Clarity": 0.8, "accuracy": 1.5, "tone": 0.5}}"#;
        assert!((score(weighted, Some(&rubric)).unwrap() - 0.8).abs() < 1e-9);
        let bad = r#"{"dimensions": {"clarity": "great"}}"#;
        assert_eq!(score(bad, Some(&rubric)), Err(ErrorKind::NonNumericScore));
        let nan = r#"{"dimensions": {"clarity": NaN, "accuracy": 1, "tone": 1}}"#;
        assert_eq!(score(nan, Some(&rubric)), Err(ErrorKind::NonFiniteScore));
        let overall_only = read_response(
            &completion(r#"{"score": 0.7, "reasoning": "overall"}"#),
            "m",
            Some(&rubric),
            &keep(),
        )
        .score
        .unwrap_err();
        assert!(
            overall_only
                .message
                .starts_with("the judge's reply lacks the rubric dimensions \"clarity\", \"accuracy\", \"tone\";"),
            "{}",
            overall_only.message
        );
        let violated = r#"{"dimensions": {}, "hard_constraints_satisfied": false}"#;
        assert_eq!(score(violated, Some(&rubric)), Ok(0.0));
    }

    #[test]
    fn hard_constraints_missing_stringly_or_invalid() {
        let rubric = Rubric::from_value(&json!({"hard_constraints": ["short"]})).unwrap();
        let unchecked = read_response(
            &completion(r#"{"score": 0.9}"#),
            "m",
            Some(&rubric),
            &keep(),
        );
        assert_eq!(unchecked.score.unwrap(), 0.9);
        assert_eq!(unchecked.side_info["hard_constraints_unchecked"], true);
        let without_constraints =
            read_response(&completion(r#"{"score": 0.9}"#), "m", None, &keep());
        assert!(!without_constraints
            .side_info
            .contains_key("hard_constraints_unchecked"));
        let cases: &[(&str, Result<f64, ErrorKind>)] = &[
            (
                r#"{"score": 0.9, "hard_constraints_satisfied": true}"#,
                Ok(0.9),
            ),
            (
                r#"{"score": 0.9, "hard_constraints_satisfied": "FALSE"}"#,
                Ok(0.0),
            ),
            (
                r#"{"score": 0.9, "hard_constraints_satisfied": " true "}"#,
                Ok(0.9),
            ),
            (
                r#"{"score": "x", "hard_constraints_satisfied": "false"}"#,
                Ok(0.0),
            ),
            (
                r#"{"score": 0.9, "hard_constraints_satisfied": "no"}"#,
                Err(ErrorKind::InvalidOutput),
            ),
            (
                r#"{"score": 0.9, "hard_constraints_satisfied": 0}"#,
                Err(ErrorKind::InvalidOutput),
            ),
            (
                r#"{"score": 0.9, "hard_constraints_satisfied": null}"#,
                Err(ErrorKind::InvalidOutput),
            ),
        ];
        for (content, expected) in cases {
            assert_eq!(&score(content, Some(&rubric)), expected, "{content}");
        }
        let error = score_error(r#"{"score": 1, "hard_constraints_satisfied": "no"}"#);
        assert!(
            error.starts_with(
                "the judge's \"hard_constraints_satisfied\" must be true or false, found string \"no\""
            ),
            "{error}"
        );
    }

    fn score_error(content: &str) -> String {
        read_response(&completion(content), "m", None, &keep())
            .score
            .unwrap_err()
            .message
    }

    #[test]
    fn envelope_problems_and_excerpts() {
        let attempt = read_response(b"<html>", "m", None, &keep());
        assert_eq!(attempt.score.unwrap_err().kind, ErrorKind::InvalidJson);
        let refusal = json!({"choices": [{"message": {"content": null, "refusal": "no"}}]});
        let error = read_response(refusal.to_string().as_bytes(), "m", None, &keep())
            .score
            .unwrap_err();
        assert_eq!(error.message, "the judge refused: no");
        let long = format!("{{\"score\": \"x\", \"pad\": \"{}\"}}", "a".repeat(2000));
        let error = read_response(&completion(&long), "m", None, &keep())
            .score
            .unwrap_err();
        assert!(error.message.ends_with('…'));
        assert!(error.message.len() < 700);
        let cut = json!({"choices": [{"message": {"content": "{\"score\": 0."}, "finish_reason": "length"}]});
        let attempt = read_response(cut.to_string().as_bytes(), "asked", None, &keep());
        assert!(attempt
            .score
            .unwrap_err()
            .message
            .contains("--judge-max-tokens"));
        assert_eq!(attempt.side_info["model"], "asked");
    }

    #[test]
    fn excerpts_are_redacted_before_the_cut_and_on_one_line() {
        let key = "sk-0123456789abcdef";
        let redact = Secrets::new([key.to_string()]);
        let raw = format!(
            "{}\nBearer {key} and more",
            "x".repeat(REPLY_EXCERPT_CHARS - 16)
        );
        let error = read_response(&completion(&raw), "m", None, &redact)
            .score
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::InvalidJson);
        assert!(!error.message.contains("sk-0"), "{}", error.message);
        assert!(
            error.message.contains(" ⏎ Bearer [red"),
            "{}",
            error.message
        );
        assert!(!error.message.contains('\n'), "{}", error.message);
    }
}
