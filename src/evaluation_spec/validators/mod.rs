//! The evaluation-spec validators: one registry of the 21 validator types, their load-time config
//! checks and their comparisons over resolved evidence (the reference's "Validators" and
//! "Implemented validator types" sections; the validator table of `docs/spec.md`, "Validators").
//!
//! Division of labour: the spec module resolves evidence (targets, `expected_from`, captures,
//! events → tool-call trace) and assembles validator results; this module only compares. Build one
//! [`Validator`] per declared validator when the spec is loaded (its config is decoded once, regexes
//! and schemas are cached), then call the method for its type on every run:
//!
//! * [`Validator::compare`] — every type that compares a target string with an expected string
//!   (the text, scored and structured types, `file_content_match`), and the config-only file types
//!   (`file_exists` with a present target, `file_json_schema`, `directory_structure`, which ignore
//!   `expected`);
//! * [`Validator::file_missing`] — `file_exists` whose target resolved to "missing";
//! * [`Validator::code_execution`], [`Validator::tool_call_assertion`], [`Validator::postcondition`]
//!   — the three types with their own paths.
//!
//! [`outcome_class`] classifies any finished result.

mod cache;
mod code_execution;
mod config;
mod files;
mod generation;
mod gofmt;
mod json;
mod math;
mod numeric;
mod postcondition;
mod re2;
mod text;
mod tool_calls;

use serde_json::Value;

use config::RawConfig;

use crate::scoring::Outcome;

/// Every validator type, in the order of the validator table in `docs/spec.md`.
pub const VALIDATOR_TYPES: &[&str] = &[
    "exact_match",
    "contains",
    "regex_match",
    "boolean_assert",
    "fuzzy_match",
    "numeric_match",
    "normalized_match",
    "token_f1",
    "bleu_score",
    "rouge_score",
    "chrf_score",
    "math_equivalence",
    "json_schema",
    "json_path_match",
    "file_exists",
    "file_content_match",
    "file_json_schema",
    "directory_structure",
    "code_execution",
    "tool_call_assertion",
    "postcondition",
];

/// Whether `kind` is one of [`VALIDATOR_TYPES`].
pub fn is_known_type(kind: &str) -> bool {
    VALIDATOR_TYPES.contains(&kind)
}

/// Whether the type needs `expected_from` (then required, and resolved before comparing).
pub fn needs_expected(kind: &str) -> bool {
    matches!(
        kind,
        "exact_match"
            | "contains"
            | "regex_match"
            | "json_schema"
            | "json_path_match"
            | "boolean_assert"
            | "fuzzy_match"
            | "numeric_match"
            | "normalized_match"
            | "token_f1"
            | "math_equivalence"
            | "bleu_score"
            | "rouge_score"
            | "chrf_score"
            | "file_content_match"
    )
}

/// Whether `expected_from` must be omitted (`tool_call_assertion`, `postcondition`); for the other
/// types that do not need it, a given `expected_from` is ignored.
pub fn forbids_expected(kind: &str) -> bool {
    matches!(kind, "tool_call_assertion" | "postcondition")
}

/// Whether the target must use the `file:` prefix (a rule of `spec validate`).
pub fn needs_file_target(kind: &str) -> bool {
    matches!(
        kind,
        "file_exists"
            | "file_content_match"
            | "file_json_schema"
            | "directory_structure"
            | "code_execution"
            | "postcondition"
    )
}

/// A load-time problem with a validator's config. The caller formats it as
/// `evaluation_spec.validators[i].config{at} {message}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    /// Where, relative to `config`: empty, or starting with `.` (e.g. `.threshold`, `.pipeline[1]`).
    pub at: String,
    /// What is wrong.
    pub message: String,
}

/// The load-time config checks for one validator. `config` is the decoded `config` member;
/// `None` and JSON `null` both mean "absent". Types without load-time checks return no problems.
pub fn check_config(kind: &str, config: Option<&Value>) -> Vec<ConfigProblem> {
    let config = RawConfig::from_value(config);
    match kind {
        "fuzzy_match" => text::check_fuzzy(config),
        "numeric_match" => numeric::check(config),
        "normalized_match" => text::check_normalized(config),
        "token_f1" => generation::check_token_f1(config),
        "bleu_score" => generation::check_bleu(config),
        "rouge_score" => generation::check_rouge(config),
        "chrf_score" => generation::check_chrf(config),
        "math_equivalence" => math::check(config),
        "code_execution" => code_execution::check(config),
        "tool_call_assertion" => tool_calls::check(config),
        "postcondition" => postcondition::check(config),
        _ => Vec::new(),
    }
}

/// A validator's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    Error,
}

impl Verdict {
    /// The verdict as the evaluation record writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
        }
    }
}

/// The state of a validator result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultState {
    Available,
    Unavailable,
    Error,
}

impl ResultState {
    /// The state as the evaluation record writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ResultState::Available => "available",
            ResultState::Unavailable => "unavailable",
            ResultState::Error => "error",
        }
    }
}

/// How the reference words a validator's result: the failure or error text (empty on most
/// passes) and the type-specific evidence keys (the caller adds the base keys and renames
/// collisions to `evidence_<key>`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Wording {
    pub reason: String,
    pub evidence: RawOutput,
}

/// What comparing two resolved strings found: the scoring core's outcome (`normalized_score`
/// and verdict) worded as the reference words it, or, when the comparison could not finish, the
/// error's wording.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison(Result<Outcome<Wording>, Wording>);

impl Comparison {
    /// Score 1 on a pass, 0 and `fail_reason` on a failure.
    fn binary(passed: bool, fail_reason: &str) -> Comparison {
        Comparison::decided(passed, "", fail_reason)
    }

    /// Score 1 and `pass_reason` on a pass, 0 and `fail_reason` on a failure.
    fn decided(passed: bool, pass_reason: &str, fail_reason: &str) -> Comparison {
        let reason = if passed { pass_reason } else { fail_reason };
        Comparison::worded(Outcome::verdict(passed), reason.to_string())
    }

    /// A scored outcome; the reason is kept (so only written) on a failure.
    fn scored(passed: bool, score: f64, fail_reason: impl FnOnce() -> String) -> Comparison {
        let reason = if passed { String::new() } else { fail_reason() };
        Comparison::worded(Outcome::judged(passed, score), reason)
    }

    fn worded(outcome: Outcome, reason: String) -> Comparison {
        Comparison(Ok(outcome.with_detail(Wording {
            reason,
            evidence: RawOutput::default(),
        })))
    }

    /// An error outcome with `reason`.
    fn error(reason: String) -> Comparison {
        Comparison(Err(Wording {
            reason,
            evidence: RawOutput::default(),
        }))
    }

    fn with_evidence(mut self, evidence: RawOutput) -> Comparison {
        self.wording_mut().evidence = evidence;
        self
    }

    fn wording_mut(&mut self) -> &mut Wording {
        match &mut self.0 {
            Ok(outcome) => &mut outcome.detail,
            Err(wording) => wording,
        }
    }

    /// The verdict as the record writes it: `error` when the comparison could not finish, else
    /// the outcome's (every validator's outcome has one).
    fn verdict(&self) -> Verdict {
        match &self.0 {
            Ok(outcome) if outcome.is_pass() => Verdict::Pass,
            Ok(_) => Verdict::Fail,
            Err(_) => Verdict::Error,
        }
    }

    /// Asserts that the comparison could not finish, for a reason that `holds`.
    #[cfg(test)]
    fn assert_error(&self, holds: impl Fn(&str) -> bool) {
        match &self.0 {
            Err(wording) => assert!(holds(&wording.reason), "{}", wording.reason),
            Ok(outcome) => panic!("not an error: {outcome:?}"),
        }
    }

    /// The score the result gives.
    #[cfg(test)]
    fn score(&self) -> Option<f64> {
        self.0.as_ref().ok().map(|outcome| outcome.score)
    }

    /// The reason the result gives.
    #[cfg(test)]
    fn reason(&self) -> &str {
        match &self.0 {
            Ok(outcome) => &outcome.detail.reason,
            Err(wording) => &wording.reason,
        }
    }

    /// The evidence the result gives.
    #[cfg(test)]
    fn evidence(&self) -> &RawOutput {
        match &self.0 {
            Ok(outcome) => &outcome.detail.evidence,
            Err(wording) => &wording.evidence,
        }
    }
}

/// A validator's type-specific evidence: the `raw_output` of its result.
pub type RawOutput = super::named_values::NamedValues;

/// A finished validator result (before `outcome_class`, which [`outcome_class`] computes).
#[derive(Debug, Clone, PartialEq)]
pub struct ValidatorOutcome {
    pub state: ResultState,
    /// `None` when the validator never ran (unavailable).
    pub verdict: Option<Verdict>,
    pub score: Option<f64>,
    pub reason: String,
    pub evidence: RawOutput,
    /// For `tool_call_assertion`: the trace index of the first matched call (the source pointer).
    pub source_call: Option<usize>,
}

impl From<Comparison> for ValidatorOutcome {
    /// The one mapping of a comparison to the record's shape: an error becomes state `error`
    /// with no score; an outcome is `available`, its score the `normalized_score`.
    fn from(comparison: Comparison) -> Self {
        let verdict = comparison.verdict();
        let (state, score, wording) = match comparison.0 {
            Ok(outcome) => (ResultState::Available, Some(outcome.score), outcome.detail),
            Err(wording) => (ResultState::Error, None, wording),
        };
        ValidatorOutcome {
            state,
            verdict: Some(verdict),
            score,
            reason: wording.reason,
            evidence: wording.evidence,
            source_call: None,
        }
    }
}

/// One entry of the tool-call trace, built by the caller from `tool.call.completed` /
/// `tool.call.failed` events in event order, borrowing from the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolCall<'a> {
    /// `tool_name` of the event payload.
    pub name: &'a str,
    /// `arguments` of the payload (`{}` when absent); a JSON string stays a string.
    pub arguments: &'a Value,
    /// The event was `tool.call.failed`, or its `result.is_error` was true.
    pub failed: bool,
}

/// What a `postcondition` target resolved to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TargetValue<'a> {
    /// The captured content (or listing JSON).
    Present(&'a str),
    /// Missing, with the resolver's reason (`file capture key "k" is unavailable`, or
    /// `captured file "k" does not exist at path "p"`).
    Missing { reason: &'a str },
}

/// A validator ready to run: its type and its decoded config. Build it once per declared validator.
#[derive(Debug)]
pub struct Validator {
    kind: String,
    prepared: Prepared,
}

/// A type with its decoded config (or the run-time error its config yields).
#[derive(Debug)]
enum Prepared {
    ExactMatch,
    Contains,
    RegexMatch(text::RegexCache),
    BooleanAssert,
    FuzzyMatch(Result<text::FuzzyConfig, String>),
    NumericMatch(Result<numeric::NumericSettings, String>),
    NormalizedMatch(Result<text::NormalizedConfig, String>),
    TokenF1(Result<generation::TokenF1Config, String>),
    BleuScore(Result<generation::BleuConfig, String>),
    RougeScore(Result<generation::RougeConfig, String>),
    ChrfScore(Result<generation::ChrfConfig, String>),
    MathEquivalence(Result<math::MathConfig, String>),
    JsonSchema(json::SchemaCache),
    JsonPathMatch,
    FileExists(Result<files::FileExistsConfig, String>),
    FileContentMatch(Result<files::FileContentConfig, String>, text::RegexCache),
    FileJsonSchema(Result<json::CompiledSchema, String>),
    DirectoryStructure(Result<files::DirectoryConfig, String>),
    CodeExecution(Result<code_execution::CodeExecutionConfig, String>),
    ToolCallAssertion(Result<tool_calls::ToolCallConfig, String>),
    Postcondition(Result<postcondition::Condition, String>),
    Unsupported,
}

impl Prepared {
    fn new(kind: &str, config: RawConfig<'_>) -> Prepared {
        let strict = |err: String| format!("parse {kind} config: {err}");
        match kind {
            "exact_match" => Prepared::ExactMatch,
            "contains" => Prepared::Contains,
            "regex_match" => Prepared::RegexMatch(text::RegexCache::default()),
            "boolean_assert" => Prepared::BooleanAssert,
            "fuzzy_match" => Prepared::FuzzyMatch(config::decode(config).map_err(strict)),
            "numeric_match" => Prepared::NumericMatch(numeric::prepare(config)),
            "normalized_match" => Prepared::NormalizedMatch(config::decode(config).map_err(strict)),
            "token_f1" => Prepared::TokenF1(config::decode(config).map_err(strict)),
            "bleu_score" => Prepared::BleuScore(config::decode(config).map_err(strict)),
            "rouge_score" => Prepared::RougeScore(config::decode(config).map_err(strict)),
            "chrf_score" => Prepared::ChrfScore(config::decode(config).map_err(strict)),
            "math_equivalence" => Prepared::MathEquivalence(config::decode(config).map_err(strict)),
            "json_schema" => Prepared::JsonSchema(json::SchemaCache::default()),
            "json_path_match" => Prepared::JsonPathMatch,
            "file_exists" => Prepared::FileExists(files::prepare_file_exists(config)),
            "file_content_match" => Prepared::FileContentMatch(
                files::prepare_file_content(config),
                text::RegexCache::default(),
            ),
            "file_json_schema" => Prepared::FileJsonSchema(files::prepare_file_json_schema(config)),
            "directory_structure" => Prepared::DirectoryStructure(files::prepare_directory(config)),
            "code_execution" => Prepared::CodeExecution(code_execution::prepare(config)),
            "tool_call_assertion" => Prepared::ToolCallAssertion(tool_calls::prepare(config)),
            "postcondition" => Prepared::Postcondition(postcondition::prepare(config)),
            _ => Prepared::Unsupported,
        }
    }
}

impl Validator {
    /// A validator of type `kind` with its `config` member (`None` or JSON `null` = absent). Never
    /// fails: config problems the load-time checks do not catch surface as `error` results when the
    /// validator runs, as in the reference.
    pub fn new(kind: &str, config: Option<&Value>) -> Validator {
        Validator::with_raw(kind, RawConfig::from_value(config))
    }

    fn with_raw(kind: &str, config: RawConfig<'_>) -> Validator {
        Validator {
            kind: kind.to_string(),
            prepared: Prepared::new(kind, config),
        }
    }

    /// Like [`Validator::new`], from config text that may not even be JSON (the text is decoded
    /// when the validator is built; a syntax error becomes the type's config error at run time).
    pub fn from_config_text(kind: &str, text: &str) -> Validator {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => Validator::new(kind, Some(&value)),
            Err(err) => Validator::with_raw(kind, RawConfig::Unparsable(&err.to_string())),
        }
    }

    /// The validator's type.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Compare the resolved target `actual` with the resolved `expected` (pass `""` for types that
    /// do not need `expected_from`). For `file_exists` this is the "target present" path.
    pub fn compare(&self, actual: &str, expected: &str) -> Comparison {
        match &self.prepared {
            Prepared::ExactMatch => text::exact_match(actual, expected),
            Prepared::Contains => text::contains(actual, expected),
            Prepared::RegexMatch(cache) => text::regex_match(cache, actual, expected),
            Prepared::BooleanAssert => text::boolean_assert(actual, expected),
            Prepared::FuzzyMatch(config) => compared(config, text::fuzzy_match, actual, expected),
            Prepared::NumericMatch(settings) => {
                compared(settings, numeric::numeric_match, actual, expected)
            }
            Prepared::NormalizedMatch(config) => {
                compared(config, text::normalized_match, actual, expected)
            }
            Prepared::TokenF1(config) => compared(config, generation::token_f1, actual, expected),
            Prepared::BleuScore(config) => {
                compared(config, generation::bleu_score, actual, expected)
            }
            Prepared::RougeScore(config) => {
                compared(config, generation::rouge_score, actual, expected)
            }
            Prepared::ChrfScore(config) => {
                compared(config, generation::chrf_score, actual, expected)
            }
            Prepared::MathEquivalence(config) => {
                compared(config, math::math_equivalence, actual, expected)
            }
            Prepared::JsonSchema(cache) => json::json_schema(cache, actual, expected),
            Prepared::JsonPathMatch => json::json_path_match(actual, expected),
            Prepared::FileExists(config) => with_config(config, files::file_present),
            Prepared::FileContentMatch(config, cache) => with_config(config, |config| {
                files::file_content_match(config, cache, actual, expected)
            }),
            Prepared::FileJsonSchema(schema) => {
                with_config(schema, |schema| files::file_json_schema(schema, actual))
            }
            Prepared::DirectoryStructure(config) => {
                with_config(config, |config| files::directory_structure(config, actual))
            }
            Prepared::CodeExecution(_)
            | Prepared::ToolCallAssertion(_)
            | Prepared::Postcondition(_)
            | Prepared::Unsupported => self.unsupported(),
        }
    }

    /// The error of a type that cannot run this way.
    fn unsupported(&self) -> Comparison {
        Comparison::error(format!(
            "unsupported validator type {}",
            text::go_quote(&self.kind)
        ))
    }

    /// `file_exists` when the target resolved to "missing" (no capture, or `exists: false`):
    /// always state `available`.
    pub fn file_missing(&self) -> Comparison {
        match &self.prepared {
            Prepared::FileExists(config) => files::file_missing(config.as_ref().ok()),
            _ => self.unsupported(),
        }
    }

    /// `code_execution`. `key` is the validator's key; `event_payload` is the payload of the
    /// **last** `grader.verification.code_executed` event whose `validator_key` equals `key`
    /// (`None` when there is none).
    pub fn code_execution(&self, key: &str, event_payload: Option<&Value>) -> ValidatorOutcome {
        match &self.prepared {
            Prepared::CodeExecution(config) => {
                code_execution::code_execution(config, key, event_payload)
            }
            _ => self.unsupported().into(),
        }
    }

    /// `tool_call_assertion` over the whole trace, failed calls included (they are counted
    /// and otherwise ignored here). `source_call` of the outcome indexes `trace`.
    pub fn tool_call_assertion(&self, trace: &[ToolCall<'_>]) -> ValidatorOutcome {
        match &self.prepared {
            Prepared::ToolCallAssertion(Ok(config)) => {
                tool_calls::tool_call_assertion(config, trace)
            }
            Prepared::ToolCallAssertion(Err(err)) => Comparison::error(err.clone()).into(),
            _ => self.unsupported().into(),
        }
    }

    /// `postcondition` over its resolved `file:` target.
    pub fn postcondition(&self, target: TargetValue<'_>) -> ValidatorOutcome {
        match &self.prepared {
            Prepared::Postcondition(Ok(condition)) => {
                postcondition::postcondition(condition, target)
            }
            Prepared::Postcondition(Err(err)) => Comparison::error(err.clone()).into(),
            _ => self.unsupported().into(),
        }
    }
}

/// Why `schema` (JSON text) is not a usable JSON Schema for the `json_schema` validator
/// (`parse JSON schema: …` / `resolve JSON schema: …`), or `None` when it is one.
pub fn json_schema_problem(schema: &str) -> Option<String> {
    json::compile_schema_text(schema).err()
}

/// Run `compare` with a decoded config, or turn the config error into the result.
fn compared<T>(
    config: &Result<T, String>,
    compare: fn(&T, &str, &str) -> Comparison,
    actual: &str,
    expected: &str,
) -> Comparison {
    with_config(config, |config| compare(config, actual, expected))
}

fn with_config<T>(
    config: &Result<T, String>,
    compare: impl FnOnce(&T) -> Comparison,
) -> Comparison {
    match config {
        Ok(config) => compare(config),
        Err(err) => Comparison::error(err.clone()),
    }
}

/// The `outcome_class` of a finished result: `pass`, `fail`, `unavailable`,
/// `evaluator_error`, `pack_error` or `infra_error`.
pub fn outcome_class(
    kind: &str,
    state: ResultState,
    verdict: Option<Verdict>,
    score: Option<f64>,
    reason: &str,
) -> &'static str {
    match (state, verdict) {
        (ResultState::Available, Some(Verdict::Pass)) => "pass",
        (ResultState::Available, Some(Verdict::Fail)) => "fail",
        (ResultState::Available, Some(Verdict::Error)) => "evaluator_error",
        (ResultState::Available, None) if score.is_some() => "fail",
        (ResultState::Available, None) | (ResultState::Unavailable, _) => "unavailable",
        (ResultState::Error, _) if kind == "code_execution" => {
            if reason.starts_with("parse code_execution config")
                || reason.contains("pass_at_k requires")
            {
                "pack_error"
            } else {
                "infra_error"
            }
        }
        (ResultState::Error, _) if is_pack_error(reason) => "pack_error",
        (ResultState::Error, _) => "evaluator_error",
    }
}

/// Whether an error reason blames the pack (its config, pattern, schema or expectation) rather
/// than the evaluated output.
fn is_pack_error(reason: &str) -> bool {
    const STRICT_CONFIG_TYPES: &[&str] = &[
        "fuzzy_match",
        "numeric_match",
        "normalized_match",
        "token_f1",
        "math_equivalence",
        "bleu_score",
        "rouge_score",
        "chrf_score",
        "tool_call_assertion",
    ];
    const CONTAINED: &[&str] = &[
        "invalid regex pattern",
        "unsupported comparator",
        " config is required",
        "unsupported match_mode",
        "unsupported validator type",
    ];
    const PREFIXES: &[&str] = &[
        "parse expected boolean assertion value",
        "parse expected numeric value",
        "parse expected as json",
        "parse bleu_score references",
        "parse rouge_score references",
        "parse chrf_score references",
        "parse json schema",
        "resolve json schema",
        "parse json_path_match expectation",
        "evaluate jsonpath expression",
        "compare jsonpath value",
    ];
    let reason = reason.to_lowercase();
    CONTAINED.iter().any(|part| reason.contains(part))
        || (reason.contains("invalid ") && reason.contains(" config"))
        || (reason.contains(" config.") && reason.contains(" is required"))
        || PREFIXES.iter().any(|prefix| reason.starts_with(prefix))
        || STRICT_CONFIG_TYPES
            .iter()
            .any(|kind| reason.starts_with(&format!("parse {kind} config")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_comparison_maps_to_the_record_in_one_place() {
        let evidence = || text::evidence([("k", json!(1))]);
        let failed = ValidatorOutcome::from(
            Comparison::scored(false, 0.25, || "too low".into()).with_evidence(evidence()),
        );
        assert_eq!(
            failed,
            ValidatorOutcome {
                state: ResultState::Available,
                verdict: Some(Verdict::Fail),
                score: Some(0.25),
                reason: "too low".into(),
                evidence: evidence(),
                source_call: None,
            }
        );
        let passed = ValidatorOutcome::from(Comparison::scored(true, 0.75, || "unused".into()));
        assert_eq!(
            (passed.verdict, passed.score, passed.reason.as_str()),
            (Some(Verdict::Pass), Some(0.75), "")
        );
        let decided = ValidatorOutcome::from(Comparison::decided(true, "there", "gone"));
        assert_eq!(
            (decided.verdict, decided.score, decided.reason.as_str()),
            (Some(Verdict::Pass), Some(1.0), "there")
        );
        let error =
            ValidatorOutcome::from(Comparison::error("bad".into()).with_evidence(evidence()));
        assert_eq!(
            (
                error.state,
                error.verdict,
                error.score,
                error.reason.as_str()
            ),
            (ResultState::Error, Some(Verdict::Error), None, "bad")
        );
        assert_eq!(error.evidence, evidence());
    }

    #[test]
    fn every_type_is_registered() {
        for kind in VALIDATOR_TYPES {
            let prepared = Prepared::new(kind, RawConfig::Absent);
            assert!(!matches!(prepared, Prepared::Unsupported), "{kind}");
        }
        let made_up = Validator::new("made_up", None).compare("a", "a");
        assert_eq!(made_up.reason(), "unsupported validator type \"made_up\"");
        let class = outcome_class("made_up", ResultState::Error, None, None, made_up.reason());
        assert_eq!(class, "pack_error");
    }

    #[test]
    fn null_config_values_mean_absent() {
        let config = json!({"max_ngram": null, "smoothing": null, "threshold": null});
        assert!(check_config("bleu_score", Some(&config)).is_empty());
        let outcome = Validator::new("bleu_score", Some(&config)).compare("a b c d", "a b c d");
        assert_eq!(outcome.verdict(), Verdict::Pass);
        assert_eq!(outcome.evidence()["max_ngram"], json!(4));
        let chrf = json!({"char_order": null, "beta": null});
        assert!(check_config("chrf_score", Some(&chrf)).is_empty());
        let required = check_config("postcondition", Some(&Value::Null));
        assert_eq!(required[0].message, "is required");
        let tool = json!({"tool_name": "search", "count": null, "must_call": null});
        assert!(check_config("tool_call_assertion", Some(&tool)).is_empty());
        let exists = json!({"must_exist": null});
        assert_eq!(
            Validator::new("file_exists", Some(&exists))
                .file_missing()
                .reason(),
            "file does not exist"
        );
    }

    #[test]
    fn load_time_checks_name_the_field() {
        let config = json!({"threshold": 1.5, "typo": 1});
        let problems = check_config("fuzzy_match", Some(&config));
        assert_eq!(problems.len(), 1);
        assert!(problems[0]
            .message
            .starts_with("invalid config: unknown field `typo`"));
        let config = json!({"threshold": 1.5});
        let problems = check_config("token_f1", Some(&config));
        assert_eq!(
            problems,
            vec![ConfigProblem {
                at: ".threshold".into(),
                message: "must be between 0 and 1".into()
            }]
        );
        let config = json!({"pipeline": ["trim", "shout"]});
        let problems = check_config("normalized_match", Some(&config));
        assert_eq!(problems[0].at, ".pipeline[1]");
        assert_eq!(
            problems[0].message,
            "\"shout\" is not a supported normalization step"
        );
    }

    #[test]
    fn schema_problems_for_other_modules() {
        assert_eq!(json_schema_problem(r#"{"type":"object"}"#), None);
        assert!(json_schema_problem(r#"{"type":12}"#)
            .is_some_and(|p| p.starts_with("parse JSON schema")));
    }
}
