//! The check types built in: the four standard checks of FEP 2.3.5 — `exact_match`, `contains`,
//! `regex`, `threshold` — as argument schemas and pass/fail rules over resolved argument values
//! (matching texts with [`crate::scoring::matching`]), and the two extended ones of 2.3.6, whose
//! schemas are here and whose answers come from outside (see [`super::extended`]).
//!
//! Text arguments accept any JSON value: a string is used as is, anything else by its compact JSON
//! text. Every other argument type is strict; a mismatch is a `validation_error` naming the
//! argument (and its JSONPath when it came from one).

use std::borrow::Cow;
use std::cmp::Ordering;

use serde_json::Value;

use super::result::CheckError;
use crate::input::strict::{self, key_name, wrong_type};
use crate::patterns::{self, DocumentPatterns, Pattern, PatternError, RegexFlags};
use crate::scoring::matching::{self, Case, Need};
use crate::scoring::Outcome;
use crate::text::{one_line, thousands};

/// The most arguments any standard check takes.
pub const MAX_ARGS: usize = 6;

/// The semantic version of every standard check implemented here.
pub const CHECK_VERSION: &str = "1.0.0";

/// A standard check type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    /// Two texts are equal (optionally ignoring case; optionally negated).
    ExactMatch,
    /// A text contains all phrases (or, negated, none of them).
    Contains,
    /// A text matches a regular expression (optionally negated).
    Regex,
    /// A number lies within bounds (optionally negated).
    Threshold,
    /// Two texts' embeddings are close (FEP 2.3.6).
    SemanticSimilarity,
    /// An LLM answers a prompt in a given JSON format (FEP 2.3.6).
    LlmJudge,
    /// A type declared in `custom_checks` or with `--custom-check`: a command answers it.
    Custom,
}

/// The type an argument must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    /// Any JSON value, read as text.
    Text,
    /// A boolean.
    Bool,
    /// A JSON number.
    Number,
    /// A non-empty array of strings.
    Phrases,
    /// A string holding a regular expression.
    Pattern,
    /// An object of boolean regex flags.
    Flags,
    /// A JSON object (its members are checked by the extended check itself).
    Object,
    /// A string.
    Str,
}

/// One argument of a check's schema.
#[derive(Debug, Clone, Copy)]
pub struct ArgSpec {
    /// The argument name.
    pub name: &'static str,
    /// Its type.
    pub ty: ArgType,
    /// Whether it must be given.
    pub required: bool,
    /// Whether it must be a literal (a setting, not data a JSONPath could select).
    pub literal: bool,
}

pub(super) const fn arg(name: &'static str, ty: ArgType, required: bool) -> ArgSpec {
    ArgSpec {
        name,
        ty,
        required,
        literal: false,
    }
}

/// An argument that must be given literally.
pub(super) const fn setting(name: &'static str, ty: ArgType, required: bool) -> ArgSpec {
    ArgSpec {
        name,
        ty,
        required,
        literal: true,
    }
}

/// `semantic_similarity`'s arguments (FEP 2.3.6).
const SEMANTIC_SIMILARITY: [ArgSpec; 6] = [
    arg("text", ArgType::Text, true),
    arg("reference", ArgType::Text, true),
    setting("threshold", ArgType::Object, false),
    setting("provider_config", ArgType::Object, false),
    setting("model_config", ArgType::Object, true),
    setting("similarity_metric", ArgType::Str, false),
];
/// `llm_judge`'s arguments (FEP 2.3.6).
const LLM_JUDGE: [ArgSpec; 4] = [
    setting("prompt", ArgType::Str, true),
    setting("response_format", ArgType::Object, true),
    setting("provider_config", ArgType::Object, false),
    setting("model_config", ArgType::Object, true),
];

const EXACT_MATCH: [ArgSpec; 4] = [
    arg("actual", ArgType::Text, true),
    arg("expected", ArgType::Text, true),
    arg("case_sensitive", ArgType::Bool, false),
    arg("negate", ArgType::Bool, false),
];
const CONTAINS: [ArgSpec; 4] = [
    arg("text", ArgType::Text, true),
    arg("phrases", ArgType::Phrases, true),
    arg("case_sensitive", ArgType::Bool, false),
    arg("negate", ArgType::Bool, false),
];
const REGEX: [ArgSpec; 4] = [
    arg("text", ArgType::Text, true),
    arg("pattern", ArgType::Pattern, true),
    arg("negate", ArgType::Bool, false),
    arg("flags", ArgType::Flags, false),
];
const THRESHOLD: [ArgSpec; 6] = [
    arg("value", ArgType::Number, true),
    arg("min_value", ArgType::Number, false),
    arg("max_value", ArgType::Number, false),
    arg("min_inclusive", ArgType::Bool, false),
    arg("max_inclusive", ArgType::Bool, false),
    arg("negate", ArgType::Bool, false),
];

/// Slots of `regex` whose literal values let the pattern be compiled before the run.
pub const REGEX_PATTERN: usize = 1;
/// See [`REGEX_PATTERN`].
pub const REGEX_FLAGS: usize = 3;

impl CheckKind {
    /// Every check type built in.
    pub const ALL: [CheckKind; 6] = [
        CheckKind::ExactMatch,
        CheckKind::Contains,
        CheckKind::Regex,
        CheckKind::Threshold,
        CheckKind::SemanticSimilarity,
        CheckKind::LlmJudge,
    ];

    /// The check type named `name`.
    pub fn from_name(name: &str) -> Option<CheckKind> {
        Self::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// The type's name in FEP documents.
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::ExactMatch => "exact_match",
            CheckKind::Contains => "contains",
            CheckKind::Regex => "regex",
            CheckKind::Threshold => "threshold",
            CheckKind::SemanticSimilarity => "semantic_similarity",
            CheckKind::LlmJudge => "llm_judge",
            CheckKind::Custom => "custom",
        }
    }

    /// The argument schema; an argument's slot is its index here.
    pub fn schema(self) -> &'static [ArgSpec] {
        match self {
            CheckKind::ExactMatch => &EXACT_MATCH,
            CheckKind::Contains => &CONTAINS,
            CheckKind::Regex => &REGEX,
            CheckKind::Threshold => &THRESHOLD,
            CheckKind::SemanticSimilarity => &SEMANTIC_SIMILARITY,
            CheckKind::LlmJudge => &LLM_JUDGE,
            // A custom check's arguments are whatever its command reads.
            CheckKind::Custom => &[],
        }
    }

    /// A rule across arguments that the schema alone does not state, given which slots are set.
    pub fn cross_argument_problem(self, given: &[bool; MAX_ARGS]) -> Option<&'static str> {
        (self == CheckKind::Threshold && !given[1] && !given[2])
            .then_some("threshold needs at least one of `min_value` and `max_value`")
    }

    /// Whether its arguments schema (FEP 2.3.5) allows members it does not list, which are then
    /// ignored: `exact_match`'s, `contains`' and `regex`'s do; `threshold`'s and those of the
    /// extended checks (2.3.6) set `additionalProperties: false`.
    pub fn open_arguments(self) -> bool {
        matches!(
            self,
            CheckKind::ExactMatch | CheckKind::Contains | CheckKind::Regex
        )
    }

    /// Whether a check of this type is answered outside evalctl (an API, a command).
    pub fn calls_out(self) -> bool {
        matches!(
            self,
            CheckKind::SemanticSimilarity | CheckKind::LlmJudge | CheckKind::Custom
        )
    }

    /// Evaluate a standard check over resolved arguments: its verdict; `compiled` is the regex
    /// compiled before the run, when pattern and flags were literals. A type that [calls
    /// out](CheckKind::calls_out) is never run here.
    pub fn run(self, args: &Args<'_>, compiled: Option<&Pattern>) -> Result<Outcome, CheckError> {
        match self {
            CheckKind::ExactMatch => {
                let case = case_rule(args.flag(2, true)?);
                let equal = matching::exact(&args.text(0), &args.text(1), case);
                Ok(Outcome::verdict(equal != args.flag(3, false)?))
            }
            CheckKind::Contains => {
                let phrases = args.get(1, as_phrases)?.unwrap_or_default();
                let case_sensitive = args.flag(2, true)?;
                let negate = args.flag(3, false)?;
                let text = args.text(0);
                let scan = (phrases.len() as u64).saturating_mul(text.len() as u64);
                if scan > MAX_CONTAINS_SCAN {
                    return Err(CheckError::validation(format!(
                        "argument `phrases`: searching {} phrases in {} bytes of text could scan \
                         more than {} bytes (the limit for one check)",
                        phrases.len(),
                        text.len(),
                        thousands(MAX_CONTAINS_SCAN)
                    )));
                }
                let case = case_rule(case_sensitive);
                Ok(Outcome::verdict(if negate {
                    !matching::contains(&text, &phrases, case, Need::Any)
                } else {
                    matching::contains(&text, &phrases, case, Need::All)
                }))
            }
            CheckKind::Regex => {
                let matched = match compiled {
                    Some(regex) => regex.is_match(&args.text(0)),
                    None => {
                        let pattern = args.get(REGEX_PATTERN, as_pattern)?.unwrap_or_default();
                        let flags = args.get(REGEX_FLAGS, as_flags)?.unwrap_or_default();
                        compile_regex(pattern, flags)
                            .map_err(|reason| {
                                CheckError::validation(format!("argument `pattern`: {reason}"))
                            })?
                            .is_match(&args.text(0))
                    }
                };
                Ok(Outcome::verdict(matched != args.flag(2, false)?))
            }
            CheckKind::Threshold => {
                let value = args.get(0, as_compared)?.unwrap_or(Compared::NONE);
                let above_min = match args.get(1, as_compared)? {
                    None => true,
                    Some(min) if args.flag(3, true)? => value >= min,
                    Some(min) => value > min,
                };
                let below_max = match args.get(2, as_compared)? {
                    None => true,
                    Some(max) if args.flag(4, true)? => value <= max,
                    Some(max) => value < max,
                };
                Ok(Outcome::verdict(
                    (above_min && below_max) != args.flag(5, false)?,
                ))
            }
            CheckKind::SemanticSimilarity | CheckKind::LlmJudge | CheckKind::Custom => Err(
                CheckError::unknown(format!("{} is answered from outside", self.name()), false),
            ),
        }
    }
}

/// FEP's `case_sensitive: false` lowercases both sides.
fn case_rule(case_sensitive: bool) -> Case {
    if case_sensitive {
        Case::Sensitive
    } else {
        Case::Lowercased
    }
}

/// The resolved arguments of one check evaluation, by schema slot.
#[derive(Debug)]
pub struct Args<'a> {
    schema: &'static [ArgSpec],
    slots: [Option<Slot<'a>>; MAX_ARGS],
}

/// One resolved argument value and the JSONPath it came from, if any.
#[derive(Debug, Clone, Copy)]
pub struct Slot<'a> {
    /// The value.
    pub value: &'a Value,
    /// The JSONPath it was selected by.
    pub jsonpath: Option<&'a str>,
}

impl<'a> Args<'a> {
    /// Arguments for `kind` with nothing resolved yet.
    pub fn new(kind: CheckKind) -> Self {
        Args {
            schema: kind.schema(),
            slots: [None; MAX_ARGS],
        }
    }

    /// Set slot `slot`.
    pub fn set(&mut self, slot: usize, value: Slot<'a>) {
        self.slots[slot] = Some(value);
    }

    /// The text of slot `slot` (empty when absent; required slots are always present).
    fn text(&self, slot: usize) -> Cow<'a, str> {
        self.slots[slot].map_or(Cow::Borrowed(""), |slot| as_text(slot.value))
    }

    /// The boolean in slot `slot`, or `default` when it was not given.
    fn flag(&self, slot: usize, default: bool) -> Result<bool, CheckError> {
        Ok(self.get(slot, as_bool)?.unwrap_or(default))
    }

    /// Slot `slot` converted by `convert`, or `None` when it was not given.
    fn get<T>(
        &self,
        slot: usize,
        convert: fn(&'a Value) -> Result<T, String>,
    ) -> Result<Option<T>, CheckError> {
        let Some(given) = self.slots[slot] else {
            return Ok(None);
        };
        convert(given.value).map(Some).map_err(|reason| {
            let name = self.schema[slot].name;
            CheckError::validation(match given.jsonpath {
                Some(path) => format!("argument `{name}` (from `{path}`): {reason}"),
                None => format!("argument `{name}`: {reason}"),
            })
        })
    }
}

impl ArgType {
    /// Why `value` does not have this type, if it does not.
    pub fn check(self, value: &Value) -> Result<(), String> {
        match self {
            ArgType::Text => Ok(()),
            ArgType::Bool => as_bool(value).map(drop),
            ArgType::Number => as_number(value).map(drop),
            ArgType::Phrases => as_phrases(value).map(drop),
            ArgType::Pattern => as_pattern(value).map(drop),
            ArgType::Flags => as_flags(value).map(drop),
            ArgType::Object => strict::as_object(value).map(drop),
            ArgType::Str => strict::as_str(value).map(drop),
        }
    }

    /// The members of `value`, of this type, that its schema allows but does not list (they
    /// are ignored): the unknown flags of a `regex` check's `flags`.
    pub fn ignored(self, value: &Value) -> Vec<&str> {
        match (self, value) {
            (ArgType::Flags, Value::Object(flags)) => flags
                .keys()
                .map(String::as_str)
                .filter(|name| !REGEX_FLAG_NAMES.contains(name))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// A text argument: a string as is, any other value as compact JSON.
pub fn as_text(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(text) => Cow::Borrowed(text),
        other => Cow::Owned(other.to_string()),
    }
}

fn as_bool(value: &Value) -> Result<bool, String> {
    value
        .as_bool()
        .ok_or_else(|| wrong_type("a boolean", value))
}

fn as_number(value: &Value) -> Result<f64, String> {
    match value {
        Value::Number(number) => number
            .as_f64()
            .filter(|number| number.is_finite())
            .ok_or_else(|| format!("expected a finite number, found {number}")),
        other => Err(wrong_type("a number", other)),
    }
}

/// A number as `threshold` compares it: exactly when it and what it is compared with are whole
/// (9007199254740993 is above 9007199254740992, whose 64-bit floats are one; 2^64 is above
/// 2^64 - 1), else as a 64-bit float.
#[derive(Debug, Clone)]
struct Compared {
    float: f64,
    whole: Option<Whole>,
}

/// A whole number as written, of any size.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Whole {
    /// One that an `i128` holds.
    Fits(i128),
    /// One beyond an `i128`'s range: its sign and its digits, with no leading zero.
    Beyond { negative: bool, digits: String },
}

impl Ord for Whole {
    fn cmp(&self, other: &Whole) -> Ordering {
        // Beyond the range means further from zero than every number that fits.
        let side = |whole: &Whole| match whole {
            Whole::Fits(_) => 0,
            Whole::Beyond { negative: true, .. } => -1,
            Whole::Beyond {
                negative: false, ..
            } => 1,
        };
        match (self, other) {
            (Whole::Fits(mine), Whole::Fits(theirs)) => mine.cmp(theirs),
            (
                Whole::Beyond {
                    negative,
                    digits: mine,
                },
                Whole::Beyond {
                    negative: negative_too,
                    digits: theirs,
                },
            ) if negative == negative_too => {
                let magnitude = (mine.len(), mine).cmp(&(theirs.len(), theirs));
                if *negative {
                    magnitude.reverse()
                } else {
                    magnitude
                }
            }
            _ => side(self).cmp(&side(other)),
        }
    }
}

impl PartialOrd for Whole {
    fn partial_cmp(&self, other: &Whole) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Compared {
    /// No number: below, above and equal to nothing.
    const NONE: Compared = Compared {
        float: f64::NAN,
        whole: None,
    };
}

impl PartialEq for Compared {
    fn eq(&self, other: &Compared) -> bool {
        self.partial_cmp(other) == Some(Ordering::Equal)
    }
}

impl PartialOrd for Compared {
    fn partial_cmp(&self, other: &Compared) -> Option<Ordering> {
        match (&self.whole, &other.whole) {
            (Some(mine), Some(theirs)) => Some(mine.cmp(theirs)),
            _ => self.float.partial_cmp(&other.float),
        }
    }
}

fn as_compared(value: &Value) -> Result<Compared, String> {
    let float = as_number(value)?;
    Ok(Compared {
        float,
        whole: as_whole(value, float),
    })
}

/// The whole number a JSON number (whose 64-bit float is `float`) is written as (`12`,
/// `-340282366920938463463374607431768211457`), or `None` for one written with a fraction or an
/// exponent.
fn as_whole(value: &Value, float: f64) -> Option<Whole> {
    if let Some(fits) = (value.as_i64().map(i128::from)).or_else(|| value.as_u64().map(i128::from))
    {
        return Some(Whole::Fits(fits));
    }
    // A whole number no 64-bit integer holds is at least 2^63 either way, and so is its float:
    // any other number is compared as a float, with no need to read its digits.
    if float.fract() != 0.0 || float.abs() < 9_223_372_036_854_775_808.0 {
        return None;
    }
    let Value::Number(number) = value else {
        return None;
    };
    // serde_json keeps a number's digits as written (arbitrary_precision).
    let written = number.to_string();
    let (negative, digits) = match written.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, written.as_str()),
    };
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    Some(match digits.parse::<i128>() {
        Ok(magnitude) => Whole::Fits(if negative { -magnitude } else { magnitude }),
        Err(_) => Whole::Beyond {
            negative,
            digits: digits.trim_start_matches('0').to_string(),
        },
    })
}

fn as_phrases(value: &Value) -> Result<Vec<&str>, String> {
    let items = value
        .as_array()
        .ok_or_else(|| wrong_type("an array of strings", value))?;
    if items.is_empty() {
        return Err("must hold at least one phrase".to_string());
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            item.as_str()
                .ok_or_else(|| format!("{} at [{index}]", wrong_type("an array of strings", item)))
        })
        .collect()
}

fn as_pattern(value: &Value) -> Result<&str, String> {
    strict::as_str(value)
}

/// The flags a `regex` check's `flags` object may set.
const REGEX_FLAG_NAMES: [&str; 3] = ["case_insensitive", "multiline", "dot_all"];

fn as_flags(value: &Value) -> Result<RegexFlags, String> {
    let object = strict::as_object(value)?;
    let mut flags = RegexFlags::default();
    for (name, setting) in object {
        let field = match name.as_str() {
            "case_insensitive" => &mut flags.case_insensitive,
            "multiline" => &mut flags.multiline,
            "dot_all" => &mut flags.dot_all,
            // The flags schema allows members it does not list.
            _ => continue,
        };
        *field =
            as_bool(setting).map_err(|reason| format!("flag `{}`: {reason}", key_name(name)))?;
    }
    Ok(flags)
}

/// The most bytes one `contains` check may scan: each phrase is searched for in the whole text,
/// so the work is the number of phrases times the length of the text.
const MAX_CONTAINS_SCAN: u64 = 1_000_000_000;

/// Compile `pattern` with `flags` (once per process, within the size limit of
/// [`patterns`]); the error says why the pattern is not a regular expression or names the limit.
fn compile_regex(pattern: &str, flags: RegexFlags) -> Result<Pattern, String> {
    patterns::compile(pattern, flags).map_err(|err| regex_reason(&err))
}

/// Why a `regex` check's pattern is refused.
fn regex_reason(err: &PatternError) -> String {
    match err {
        PatternError::Syntax(reason) => {
            format!("not a valid regular expression: {}", one_line(reason))
        }
        limit => limit.to_string(),
    }
}

/// Compile a `regex` check's literal pattern and flags before the run, as one of the
/// `document`'s patterns.
pub fn precompile_regex(
    pattern: &Value,
    flags: Option<&Value>,
    document: &DocumentPatterns,
) -> Result<Pattern, String> {
    let flags = flags.map(as_flags).transpose()?.unwrap_or_default();
    document
        .compile(as_pattern(pattern)?, flags)
        .map_err(|err| regex_reason(&err))
}
