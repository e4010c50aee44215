//! The extended checks of FEP 2.3.6 — `semantic_similarity` and `llm_judge` — as data: their
//! settings validated once per check ([`Spec`]), the call each evaluation needs ([`Call`], owned,
//! so it can be sent while the run goes on) and how an API's reply becomes the check's `results`.
//! Sending is `evaluator::check_calls`'s work; nothing here touches the network.
//!
//! `semantic_similarity` sends `text` and `reference` to `{base}/embeddings` in one request; its
//! `score` is the similarity of the two vectors by `similarity_metric`: `cosine` (the default)
//! and `dot` clamped to [0, 1], `euclidean` as `1 / (1 + distance)`. With a `threshold` the
//! results also hold `passed`. `llm_judge` fills its `prompt`'s `{{$.path}}` placeholders from the
//! evaluation context, asks `{base}/chat/completions` for one JSON object matching
//! `response_format` (a JSON Schema), validates the reply and returns it as `response`.

pub mod provider;

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::args::{CompiledPath, PathCache};
use super::result::CheckError;
use super::standard::{as_text, CheckKind};
use crate::input::strict;
use crate::scoring::json::{schema_validator, within_validation_bounds};
use crate::text::{clip, one_line};
pub use provider::{AllowedEndpoint, EndpointPolicy, KeySource, ProviderSettings};

/// What a check that calls out came back with.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The check's `results` object, or why there is none.
    pub outcome: Result<Value, CheckError>,
    /// How long the call took, retries included.
    pub elapsed_ms: f64,
}

/// The answers to one test case's checks, in the order of its checks: `None` for a check that
/// does not call out (or could not be called: its evaluation reports why).
pub type CaseAnswers = Vec<Option<Answer>>;

/// An extended check's validated settings.
#[derive(Debug)]
pub enum Spec {
    /// `semantic_similarity`.
    Similarity {
        /// Where the embeddings come from.
        provider: ProviderSettings,
        /// How the vectors are compared.
        metric: Metric,
        /// When given, the results hold `passed`.
        threshold: Option<Threshold>,
    },
    /// `llm_judge`.
    Judge {
        /// Where the judge is.
        provider: ProviderSettings,
        /// The prompt, its placeholders compiled.
        template: Template,
        /// `response_format` as given (sent to the judge in its instructions).
        response_format: Value,
        /// `response_format` compiled.
        validator: jsonschema::Validator,
    },
}

impl Spec {
    /// Why a run's score cannot be read from this check's results: an `llm_judge` whose
    /// `response_format` declares neither a boolean `passed` nor a number `score`.
    pub fn unscored(&self) -> Option<&'static str> {
        let Spec::Judge {
            response_format, ..
        } = self
        else {
            return None;
        };
        let declares = |name: &str, types: &[&str]| {
            response_format
                .pointer(&format!("/properties/{name}/type"))
                .and_then(Value::as_str)
                .is_some_and(|ty| types.contains(&ty))
        };
        (!declares("passed", &["boolean"]) && !declares("score", &["number", "integer"])).then_some(
            "run --checks scores an llm_judge by its response's `passed` (boolean) or `score` \
             (0 to 1): declare one of them in response_format.properties",
        )
    }

    /// The provider settings.
    pub fn provider(&self) -> &ProviderSettings {
        match self {
            Spec::Similarity { provider, .. } | Spec::Judge { provider, .. } => provider,
        }
    }

    /// The provider settings, for the endpoint policy to settle (see [`EndpointPolicy::admit`]).
    pub fn provider_mut(&mut self) -> &mut ProviderSettings {
        match self {
            Spec::Similarity { provider, .. } | Spec::Judge { provider, .. } => provider,
        }
    }
}

/// One evaluation's call, resolved against its context.
#[derive(Debug)]
pub enum Call {
    /// Embed `text` and `reference` and compare them.
    Embed {
        /// The check's settings.
        spec: Arc<Spec>,
        /// The resolved `text`.
        text: String,
        /// The resolved `reference`.
        reference: String,
    },
    /// Ask the judge `prompt`.
    Judge {
        /// The check's settings.
        spec: Arc<Spec>,
        /// The prompt with its placeholders filled.
        prompt: String,
    },
    /// Run a custom check's command on the resolved arguments.
    Command {
        /// The declaration.
        check: Arc<super::custom::CustomCheck>,
        /// The resolved arguments, as one object.
        arguments: Value,
    },
}

/// How `semantic_similarity` compares two vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// The cosine of their angle, clamped to [0, 1].
    Cosine,
    /// Their dot product, clamped to [0, 1] (the cosine for unit vectors).
    Dot,
    /// `1 / (1 + distance)`.
    Euclidean,
}

impl Metric {
    const NAMES: [&'static str; 3] = ["cosine", "dot", "euclidean"];

    fn parse(name: &str) -> Result<Metric, String> {
        match name {
            "cosine" => Ok(Metric::Cosine),
            "dot" => Ok(Metric::Dot),
            "euclidean" => Ok(Metric::Euclidean),
            other => Err(format!(
                "unknown metric `{other}` (known: {})",
                Metric::NAMES.join(", ")
            )),
        }
    }

    fn name(self) -> &'static str {
        Metric::NAMES[self as usize]
    }

    /// The score of two vectors of equal length, and the raw value it came from. Cosine and
    /// distance are computed on the vectors scaled to at most 1, so that no square or product
    /// of finite values overflows or vanishes (the cosine of a vector and itself is 1 however
    /// large or small its values); a dot product may be infinite.
    pub fn score(self, a: &[f64], b: &[f64]) -> (f64, f64) {
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
        let raw = match self {
            Metric::Cosine => {
                let (a, b) = (scaled(a.iter().copied()), scaled(b.iter().copied()));
                let norms = (dot(&a, &a) * dot(&b, &b)).sqrt();
                if norms == 0.0 {
                    0.0
                } else {
                    dot(&a, &b) / norms
                }
            }
            Metric::Dot => dot(a, b),
            Metric::Euclidean => {
                let largest = a
                    .iter()
                    .zip(b)
                    .map(|(x, y)| (x - y).abs())
                    .fold(0.0, f64::max);
                let differences = scaled(a.iter().zip(b).map(|(x, y)| x - y));
                largest * dot(&differences, &differences).sqrt()
            }
        };
        let score = match self {
            Metric::Cosine | Metric::Dot => raw.clamp(0.0, 1.0),
            Metric::Euclidean => 1.0 / (1.0 + raw),
        };
        (score, raw)
    }
}

/// `values` divided by the largest of their magnitudes (unchanged when all are 0, or one is not
/// finite).
fn scaled(values: impl Iterator<Item = f64> + Clone) -> Vec<f64> {
    let largest = values.clone().map(f64::abs).fold(0.0, f64::max);
    if largest == 0.0 || !largest.is_finite() {
        return values.collect();
    }
    values.map(|value| value / largest).collect()
}

/// `semantic_similarity`'s `threshold`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Threshold {
    min: Option<f64>,
    max: Option<f64>,
    min_inclusive: bool,
    max_inclusive: bool,
    negate: bool,
}

impl Threshold {
    const KEYS: [&'static str; 5] = [
        "min_value",
        "max_value",
        "min_inclusive",
        "max_inclusive",
        "negate",
    ];

    fn parse(object: &Map<String, Value>) -> Result<Threshold, Vec<String>> {
        let mut problems: Vec<String> = strict::unknown_keys(object, &Threshold::KEYS)
            .map(|(key, reason)| format!("{}: {reason}", strict::key_name(key)))
            .collect();
        let mut bound = |key: &str| match object.get(key) {
            None => None,
            Some(value) => match value.as_f64().filter(|v| (0.0..=1.0).contains(v)) {
                Some(bound) => Some(bound),
                None => {
                    problems.push(format!(
                        "{key}: expected a number from 0 to 1, found {value}"
                    ));
                    None
                }
            },
        };
        let (min, max) = (bound("min_value"), bound("max_value"));
        let mut flag = |key: &str, default: bool| match object.get(key) {
            None => default,
            Some(Value::Bool(flag)) => *flag,
            Some(other) => {
                problems.push(format!("{key}: {}", strict::wrong_type("a boolean", other)));
                default
            }
        };
        let threshold = Threshold {
            min,
            max,
            min_inclusive: flag("min_inclusive", true),
            max_inclusive: flag("max_inclusive", true),
            negate: flag("negate", false),
        };
        if !object.contains_key("min_value") && !object.contains_key("max_value") {
            problems.push("needs at least one of `min_value` and `max_value`".to_string());
        }
        if problems.is_empty() {
            Ok(threshold)
        } else {
            Err(problems)
        }
    }

    fn passes(&self, score: f64) -> bool {
        let above = self.min.is_none_or(|min| {
            if self.min_inclusive {
                score >= min
            } else {
                score > min
            }
        });
        let below = self.max.is_none_or(|max| {
            if self.max_inclusive {
                score <= max
            } else {
                score < max
            }
        });
        (above && below) != self.negate
    }
}

/// An `llm_judge` prompt: text and `{{$.path}}` placeholders.
#[derive(Debug)]
pub struct Template(Vec<Piece>);

#[derive(Debug)]
enum Piece {
    Text(String),
    Path(CompiledPath),
}

impl Template {
    /// Split `prompt` at its `{{...}}` placeholders that hold a JSONPath (`{{$.output.value}}`);
    /// other braces are text.
    fn parse(prompt: &str, paths: &mut PathCache) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut rest = prompt;
        let mut text = String::new();
        while let Some(open) = rest.find("{{") {
            let Some(close) = rest[open + 2..].find("}}") else {
                break;
            };
            let inner = rest[open + 2..open + 2 + close].trim();
            if inner.starts_with('$') {
                text.push_str(&rest[..open]);
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                let path = paths.compile(inner).map_err(|reason| {
                    format!("placeholder {{{{{inner}}}}}: not a valid JSONPath: {reason}")
                })?;
                pieces.push(Piece::Path(path));
            } else {
                text.push_str(&rest[..open + 2 + close + 2]);
            }
            rest = &rest[open + 2 + close + 2..];
        }
        text.push_str(rest);
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Template(pieces))
    }

    /// The prompt for `context`: each placeholder's first match, a string as it is and any
    /// other value as compact JSON.
    pub fn render(&self, context: &Value) -> Result<String, CheckError> {
        let mut prompt = String::new();
        for piece in &self.0 {
            match piece {
                Piece::Text(text) => prompt.push_str(text),
                Piece::Path(path) => {
                    let value = path.first(context).map_err(|reason| {
                        CheckError::jsonpath(format!(
                            "argument `prompt`: placeholder {{{{{}}}}}: {reason}",
                            path.text()
                        ))
                    })?;
                    prompt.push_str(&as_text(value));
                }
            }
        }
        Ok(prompt)
    }
}

/// A setting argument as given, by name (`None` when absent).
pub type Setting<'a> = dyn Fn(&str) -> Option<&'a Value> + 'a;

/// `(at, reason)` for a `reason` written `member.path: what` about `argument`: the location
/// goes where the location goes (`threshold.min_value`), the rest is the reason.
fn located(argument: &str, reason: String) -> (String, String) {
    match reason.split_once(": ") {
        Some((path, rest)) if !path.contains(' ') => {
            let at = if path.starts_with(argument) {
                path.to_string()
            } else {
                format!("{argument}.{path}")
            };
            (at, rest.to_string())
        }
        _ => (argument.to_string(), reason),
    }
}

/// Validate an extended check's settings (where it may call is the [`EndpointPolicy`]'s to
/// say). Problems are `(at, reason)`, `at` relative to `arguments` (`provider_config.api_key`).
pub fn prepare(
    kind: CheckKind,
    setting: &Setting<'_>,
    paths: &mut PathCache,
) -> Result<Spec, Vec<(String, String)>> {
    let mut problems = Vec::new();
    let reserved: &[&str] = match kind {
        CheckKind::SemanticSimilarity => &["input"],
        _ => &["messages", "response_format", "stream", "n"],
    };
    let provider = ProviderSettings::parse(
        setting("provider_config"),
        setting("model_config"),
        reserved,
    )
    .map_err(|found| {
        problems.extend(found.into_iter().map(|reason| {
            let argument = if reason.starts_with("model_config") {
                "model_config"
            } else {
                "provider_config"
            };
            located(argument, reason)
        }));
    })
    .ok();
    let spec = match kind {
        CheckKind::SemanticSimilarity => {
            let metric = match setting("similarity_metric").and_then(Value::as_str) {
                None => Some(Metric::Cosine),
                Some(name) => Metric::parse(name)
                    .map_err(|reason| problems.push(("similarity_metric".into(), reason)))
                    .ok(),
            };
            if let Some(format) = provider
                .as_ref()
                .and_then(|provider| provider.model_config.get("encoding_format"))
                .filter(|format| format.as_str() != Some("float"))
            {
                problems.push((
                    "model_config.encoding_format".into(),
                    format!("only \"float\" is read, found {format}"),
                ));
            }
            let threshold = setting("threshold")
                .and_then(Value::as_object)
                .map(|object| {
                    Threshold::parse(object).map_err(|found| {
                        problems
                            .extend(found.into_iter().map(|reason| located("threshold", reason)));
                    })
                })
                .transpose()
                .ok()
                .flatten();
            match (provider, metric) {
                (Some(provider), Some(metric)) if problems.is_empty() => Some(Spec::Similarity {
                    provider,
                    metric,
                    threshold,
                }),
                _ => None,
            }
        }
        _ => {
            let prompt = setting("prompt")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let template = Template::parse(prompt, paths)
                .map_err(|reason| problems.push(("prompt".into(), reason)))
                .ok();
            let response_format = setting("response_format").cloned().unwrap_or(Value::Null);
            let validator = schema_validator(&response_format)
                .map_err(|err| {
                    problems.push((
                        "response_format".into(),
                        format!("not a usable JSON Schema: {}", one_line(&err.to_string())),
                    ))
                })
                .ok();
            match (provider, template, validator) {
                (Some(provider), Some(template), Some(validator)) if problems.is_empty() => {
                    Some(Spec::Judge {
                        provider,
                        template,
                        response_format,
                        validator,
                    })
                }
                _ => None,
            }
        }
    };
    spec.ok_or(problems)
}

/// The `results` of `semantic_similarity` from the two embeddings; `metadata` describes the call.
pub fn similarity_results(
    spec: &Spec,
    text: &[f64],
    reference: &[f64],
    mut metadata: Map<String, Value>,
) -> Result<Value, CheckError> {
    let Spec::Similarity {
        metric, threshold, ..
    } = spec
    else {
        return Err(CheckError::unknown(
            "not a semantic_similarity check",
            false,
        ));
    };
    if text.len() != reference.len() || text.is_empty() {
        return Err(CheckError::unknown(
            format!(
                "the embeddings API returned vectors of {} and {} dimensions",
                text.len(),
                reference.len()
            ),
            false,
        ));
    }
    if text.iter().chain(reference).any(|value| !value.is_finite()) {
        return Err(CheckError::unknown(
            "the embeddings API returned a value that is not a finite number",
            false,
        ));
    }
    let all_zero = |vector: &[f64]| vector.iter().all(|value| *value == 0.0);
    if *metric == Metric::Cosine && (all_zero(text) || all_zero(reference)) {
        return Err(CheckError::unknown(
            format!(
                "the embeddings API returned a vector of zeros for the {}: its cosine with \
                 another vector is undefined",
                match (all_zero(text), all_zero(reference)) {
                    (true, true) => "text and the reference",
                    (true, false) => "text",
                    _ => "reference",
                }
            ),
            false,
        ));
    }
    let (score, raw) = metric.score(text, reference);
    if !raw.is_finite() {
        return Err(CheckError::unknown(
            format!(
                "the {} of the embeddings is beyond what a number holds",
                match metric {
                    Metric::Dot => "dot product",
                    Metric::Cosine => "cosine",
                    Metric::Euclidean => "distance",
                }
            ),
            false,
        ));
    }
    let mut response = Map::new();
    response.insert("score".into(), json!(score));
    if let Some(threshold) = threshold {
        response.insert("passed".into(), Value::Bool(threshold.passes(score)));
    }
    metadata.insert("similarity_metric".into(), Value::from(metric.name()));
    metadata.insert(
        match metric {
            Metric::Euclidean => "distance",
            _ => "similarity",
        }
        .into(),
        json!(raw),
    );
    metadata.insert("dimensions_used".into(), Value::from(text.len()));
    Ok(json!({"response": response, "metadata": metadata}))
}

/// The instructions that go with an `llm_judge` prompt: answer with one JSON object matching
/// `response_format`.
pub fn judge_instructions(response_format: &Value) -> String {
    let mut text = String::from(
        "You are an evaluator. Reply with exactly one JSON object, and nothing else, that is \
         valid against this JSON Schema:\n",
    );
    let _ = write!(text, "{response_format}");
    text
}

/// The `results` of `llm_judge` from the judge's reply text; `metadata` describes the call.
pub fn judge_results(
    spec: &Spec,
    content: &str,
    metadata: Map<String, Value>,
    objects: impl Iterator<Item = Map<String, Value>>,
) -> Result<Value, CheckError> {
    let Spec::Judge {
        validator,
        response_format,
        ..
    } = spec
    else {
        return Err(CheckError::unknown("not an llm_judge check", false));
    };
    let mut first_problem = None;
    for object in objects {
        let response = Value::Object(object);
        if let Err(too_much) = within_validation_bounds(response_format, &response) {
            return Err(CheckError::unknown(
                format!("the judge's reply was not checked against response_format: {too_much}"),
                false,
            ));
        }
        let errors: Vec<String> = validator
            .iter_errors(&response)
            .take(3)
            .map(|error| {
                let at = error.instance_path().to_string();
                format!(
                    "{}{error}",
                    if at.is_empty() {
                        String::new()
                    } else {
                        format!("{at}: ")
                    }
                )
            })
            .collect();
        if errors.is_empty() {
            return Ok(json!({"response": response, "metadata": metadata}));
        }
        first_problem.get_or_insert(errors.join("; "));
    }
    let cut_off = metadata
        .get("finish_reason")
        .is_some_and(|reason| reason == "length");
    Err(CheckError::unknown(
        format!(
            "{}{}",
            match first_problem {
                Some(problem) =>
                    format!("the judge's reply does not match response_format: {problem}"),
                None => format!(
                    "the judge's reply holds no JSON object: {}",
                    clip(&one_line(content), 300)
                ),
            },
            if cut_off {
                " (the reply was cut off at the token limit: raise model_config.max_tokens)"
            } else {
                ""
            }
        ),
        false,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_score_in_the_unit_interval() {
        let (a, b) = ([1.0, 0.0], [0.0, 1.0]);
        assert_eq!(Metric::Cosine.score(&a, &a), (1.0, 1.0));
        assert_eq!(Metric::Cosine.score(&a, &b).0, 0.0);
        assert_eq!(Metric::Cosine.score(&a, &[-1.0, 0.0]), (0.0, -1.0));
        assert_eq!(Metric::Euclidean.score(&a, &a), (1.0, 0.0));
        assert!((Metric::Euclidean.score(&a, &b).0 - 1.0 / (1.0 + 2f64.sqrt())).abs() < 1e-12);
        assert_eq!(Metric::Dot.score(&[2.0], &[3.0]), (1.0, 6.0));
        // Vectors whose squares overflow or vanish as floating point numbers.
        for size in [6e80, 6e-90, 1e200, 1e-300] {
            let v = [size, 0.75 * size];
            assert!(
                (Metric::Cosine.score(&v, &v).0 - 1.0).abs() < 1e-12,
                "{size}"
            );
            assert_eq!(Metric::Cosine.score(&v, &[-size, 0.0]).0, 0.0, "{size}");
            let distance = Metric::Euclidean.score(&v, &[0.0, 0.0]).1;
            assert!((distance / (1.25 * size) - 1.0).abs() < 1e-12, "{size}");
        }
        assert_eq!(
            Metric::Cosine.score(&[1e200, 0.0], &[1e200, 0.0]),
            (1.0, 1.0)
        );
        assert_eq!(Metric::Euclidean.score(&[1e200], &[-1e200]).1, 2e200);
    }

    #[test]
    fn thresholds_follow_the_threshold_check() {
        let parse = |value: Value| Threshold::parse(value.as_object().unwrap());
        let at_least = parse(json!({"min_value": 0.8})).unwrap();
        assert!(at_least.passes(0.8) && !at_least.passes(0.79));
        let exclusive =
            parse(json!({"min_value": 0.8, "min_inclusive": false, "negate": true})).unwrap();
        assert!(exclusive.passes(0.8) && !exclusive.passes(0.9));
        assert_eq!(parse(json!({"min_value": 2, "x": 1})).unwrap_err().len(), 2);
        assert!(parse(json!({}))
            .unwrap_err()
            .contains(&"needs at least one of `min_value` and `max_value`".to_string()));
    }

    #[test]
    fn templates_fill_placeholders_and_keep_other_braces() {
        let template = Template::parse(
            "Q: {{$.test_case.input}} A: {{ $.output.value }} {{not a path}} {x}",
            &mut PathCache::default(),
        )
        .unwrap();
        let context = json!({"test_case": {"input": "2+2"}, "output": {"value": {"n": 4}}});
        assert_eq!(
            template.render(&context).unwrap(),
            "Q: 2+2 A: {\"n\":4} {{not a path}} {x}"
        );
        let missing = template.render(&json!({"test_case": {}})).unwrap_err();
        assert!(missing
            .message
            .starts_with("argument `prompt`: placeholder {{$.test_case.input}}"));
        assert!(Template::parse("{{$..[}}", &mut PathCache::default()).is_err());
    }
}
