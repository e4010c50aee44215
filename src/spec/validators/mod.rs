//! The evaluation-spec validators: one registry of the 21 validator types, their load-time config
//! checks and their comparisons over resolved evidence (design page §2).
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
//!   — the three types with their own paths (§2.5–2.7).
//!
//! [`outcome_class`] classifies any finished result (§2.8).

use serde_json::{Map, Value};

/// Every validator type, in the order of the design page.
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

/// Whether the type needs `expected_from` (§2.1: required and resolved before comparing).
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

/// Whether the target must use the `file:` prefix (§1.6).
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

/// The load-time config checks of §2 for one validator. `config` is the decoded `config` member;
/// `None` and JSON `null` both mean "absent". Types without load-time checks return no problems.
pub fn check_config(kind: &str, config: Option<&Value>) -> Vec<ConfigProblem> {
    let _ = (kind, config);
    Vec::new()
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

/// The outcome of comparing two resolved strings.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub verdict: Verdict,
    /// `normalized_score` in [0, 1]; `None` when the verdict is `Error`.
    pub score: Option<f64>,
    /// Empty on most passes; the failure or error text otherwise.
    pub reason: String,
    /// Type-specific evidence keys (the caller adds the base keys and renames collisions to
    /// `evidence_<key>`).
    pub evidence: Map<String, Value>,
}

/// A finished validator result (before `outcome_class`, which [`outcome_class`] computes).
#[derive(Debug, Clone, PartialEq)]
pub struct ValidatorOutcome {
    pub state: ResultState,
    /// `None` when the validator never ran (unavailable).
    pub verdict: Option<Verdict>,
    pub score: Option<f64>,
    pub reason: String,
    pub evidence: Map<String, Value>,
    /// For `tool_call_assertion`: the trace index of the first matched call (the source pointer).
    pub source_call: Option<usize>,
}

impl From<Comparison> for ValidatorOutcome {
    /// A comparison whose verdict is `Error` becomes state `error`; any other is `available`.
    fn from(comparison: Comparison) -> Self {
        let state = if comparison.verdict == Verdict::Error {
            ResultState::Error
        } else {
            ResultState::Available
        };
        ValidatorOutcome {
            state,
            verdict: Some(comparison.verdict),
            score: comparison.score,
            reason: comparison.reason,
            evidence: comparison.evidence,
            source_call: None,
        }
    }
}

/// One entry of the tool-call trace, built by the caller from `tool.call.completed` /
/// `tool.call.failed` events in event order (§3.5).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// `tool_name` of the event payload.
    pub name: String,
    /// `arguments` of the payload (`{}` when absent); a JSON string stays a string.
    pub arguments: Value,
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
}

impl Validator {
    /// A validator of type `kind` with its `config` member (`None` or JSON `null` = absent). Never
    /// fails: config problems the load-time checks do not catch surface as `error` results when the
    /// validator runs, as in the reference.
    pub fn new(kind: &str, config: Option<&Value>) -> Validator {
        let _ = config;
        Validator {
            kind: kind.to_string(),
        }
    }

    /// Like [`Validator::new`], from config text that may not even be JSON (the text is decoded
    /// when the validator is built; a syntax error becomes the type's config error at run time).
    pub fn from_config_text(kind: &str, text: &str) -> Validator {
        let _ = text;
        Validator::new(kind, None)
    }

    /// The validator's type.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Compare the resolved target `actual` with the resolved `expected` (pass `""` for types that
    /// do not need `expected_from`). For `file_exists` this is the "target present" path.
    pub fn compare(&self, actual: &str, expected: &str) -> Comparison {
        let _ = (actual, expected);
        error(format!("unsupported validator type {:?}", self.kind))
    }

    /// `file_exists` when the target resolved to "missing" (no capture, or `exists: false`):
    /// always state `available` (§2.4).
    pub fn file_missing(&self) -> Comparison {
        error(format!("unsupported validator type {:?}", self.kind))
    }

    /// `code_execution` (§2.5). `key` is the validator's key; `event_payload` is the payload of the
    /// **last** `grader.verification.code_executed` event whose `validator_key` equals `key`
    /// (`None` when there is none).
    pub fn code_execution(&self, key: &str, event_payload: Option<&Value>) -> ValidatorOutcome {
        let _ = (key, event_payload);
        error(format!("unsupported validator type {:?}", self.kind)).into()
    }

    /// `tool_call_assertion` (§2.6) over the whole trace, failed calls included (they are counted
    /// and otherwise ignored here). `source_call` of the outcome indexes `trace`.
    pub fn tool_call_assertion(&self, trace: &[ToolCall]) -> ValidatorOutcome {
        let _ = trace;
        error(format!("unsupported validator type {:?}", self.kind)).into()
    }

    /// `postcondition` (§2.7) over its resolved `file:` target.
    pub fn postcondition(&self, target: TargetValue<'_>) -> ValidatorOutcome {
        let _ = target;
        error(format!("unsupported validator type {:?}", self.kind)).into()
    }
}

/// An error comparison with `reason`.
fn error(reason: String) -> Comparison {
    Comparison {
        verdict: Verdict::Error,
        score: None,
        reason,
        evidence: Map::new(),
    }
}

/// The `outcome_class` of a finished result (§2.8): `pass`, `fail`, `unavailable`,
/// `evaluator_error`, `pack_error` or `infra_error`.
pub fn outcome_class(
    kind: &str,
    state: ResultState,
    verdict: Option<Verdict>,
    score: Option<f64>,
    reason: &str,
) -> &'static str {
    let _ = (kind, reason);
    match (state, verdict) {
        (ResultState::Available, Some(Verdict::Pass)) => "pass",
        (ResultState::Available, Some(Verdict::Fail)) => "fail",
        (ResultState::Available, Some(Verdict::Error)) => "evaluator_error",
        (ResultState::Available, None) if score.is_some() => "fail",
        (ResultState::Available, None) | (ResultState::Unavailable, _) => "unavailable",
        (ResultState::Error, _) => "evaluator_error",
    }
}
