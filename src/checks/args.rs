//! Check arguments: the literal-or-JSONPath rule, the escape rule, compiling each distinct
//! JSONPath once per run, and resolving arguments against an evaluation context.
//!
//! A string argument that starts with `$.` (or is exactly `$`) is a JSONPath (RFC 9535) over the
//! evaluation context `{"test_case": {...}, "output": {...}}`; a string that starts with `\$.` is
//! the literal `$.…` without the backslash; every other value is a literal.

use std::collections::HashMap;
use std::sync::Arc;

use jsonpath_rust::parser::model::{JpQuery, Segment, Selector};
use jsonpath_rust::parser::parse_json_path;
use jsonpath_rust::query::js_path_process;
use serde_json::Value;

use super::path_budget;
use crate::text::one_line;

/// Where an argument's value comes from.
#[derive(Debug, Clone)]
pub enum ArgSource {
    /// A literal value (after the escape rule).
    Literal(Value),
    /// A compiled JSONPath and its text.
    Path(CompiledPath),
}

/// A JSONPath compiled once and shared by every check of the run that uses the same text.
#[derive(Debug, Clone)]
pub struct CompiledPath {
    text: Arc<str>,
    plan: Arc<Plan>,
}

/// How a compiled path is evaluated. Paths made only of name and index selectors (`$.a.b[0]`,
/// `$['a']`, by far the most common) are walked directly, with the RFC 9535 semantics of those
/// selectors; every other path runs through jsonpath-rust's query engine, once its work is known
/// to stay within the limits of [`path_budget`].
#[derive(Debug)]
enum Plan {
    Walk(Vec<Step>),
    /// A query, the walk of its leading name and index selectors to the node where its work
    /// starts, and the length of that node's location.
    Query {
        query: JpQuery,
        lead: Vec<Step>,
        lead_location: u64,
    },
}

/// One step of a direct walk.
#[derive(Debug, PartialEq)]
enum Step {
    /// An object member (nothing on other values).
    Name(String),
    /// An array element; negative counts from the end (nothing on other values).
    Index(i64),
}

impl Plan {
    fn of(query: JpQuery) -> Plan {
        let lead: Vec<Step> = query
            .segments
            .iter()
            .map_while(|segment| match segment {
                Segment::Selector(Selector::Name(name)) => Some(Step::Name(name.clone())),
                Segment::Selector(Selector::Index(index)) => Some(Step::Index(*index)),
                _ => None,
            })
            .collect();
        if lead.len() == query.segments.len() {
            return Plan::Walk(lead);
        }
        let lead_location = lead
            .iter()
            .map(|step| match step {
                Step::Name(name) => path_budget::name_selector_bytes(name),
                Step::Index(_) => path_budget::INDEX_SELECTOR_BYTES,
            })
            .fold(path_budget::ROOT_LOCATION_BYTES, u64::saturating_add);
        Plan::Query {
            query,
            lead,
            lead_location,
        }
    }
}

/// The node `steps` lead to from `value`, if any.
fn walk<'a>(steps: &[Step], value: &'a Value) -> Option<&'a Value> {
    steps
        .iter()
        .try_fold(value, |value, step| step.select(value))
}

/// Objects up to this many members are searched key by key rather than by hash.
const SMALL_OBJECT: usize = 8;

impl Step {
    fn select<'a>(&self, value: &'a Value) -> Option<&'a Value> {
        match (self, value) {
            // Hashing the name costs more than comparing it with each key of a small object.
            (Step::Name(name), Value::Object(object)) if object.len() <= SMALL_OBJECT => object
                .iter()
                .find_map(|(key, value)| (key == name).then_some(value)),
            (Step::Name(name), Value::Object(object)) => object.get(name),
            (Step::Index(index), Value::Array(items)) => {
                let position = if *index < 0 {
                    i64::try_from(items.len()).ok()? + index
                } else {
                    *index
                };
                items.get(usize::try_from(position).ok()?)
            }
            _ => None,
        }
    }
}

impl CompiledPath {
    /// The path as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The first value the path selects in `context`, or why there is none (a query whose work
    /// could exceed the limits of [`path_budget`] is not run).
    pub fn first<'a>(&self, context: &'a Value) -> Result<&'a Value, String> {
        let found = match self.plan.as_ref() {
            Plan::Walk(steps) => walk(steps, context),
            Plan::Query {
                query,
                lead,
                lead_location,
            } => match walk(lead, context) {
                None => None,
                Some(start) => {
                    path_budget::admit(
                        &query.segments[lead.len()..],
                        start,
                        *lead_location,
                        context,
                    )
                    .map_err(|exceeded| exceeded.reason(&self.text))?;
                    match js_path_process(query, context) {
                        Ok(found) => found.into_iter().next().map(|hit| hit.val),
                        Err(err) => {
                            return Err(format!(
                                "JSONPath `{}` could not be evaluated: {err}",
                                self.text
                            ))
                        }
                    }
                }
            },
        };
        found.ok_or_else(|| {
            format!(
                "JSONPath `{}` matched nothing in the evaluation context",
                self.text
            )
        })
    }
}

/// How a raw argument value is to be read, before any path is compiled.
#[derive(Debug, PartialEq)]
pub enum Classified<'a> {
    /// A JSONPath expression.
    Path(&'a str),
    /// A literal; for an escaped `\$.…` string, the unescaped text.
    Literal(Value),
}

/// Apply the literal-or-JSONPath rule and the escape rule to one argument value (FEP 2.3.2:
/// strings beginning with `$.` are paths; a lone `$`, a regex's end of text, is a literal).
pub fn classify(value: &Value) -> Classified<'_> {
    match value {
        Value::String(text) if text.starts_with("$.") => Classified::Path(text),
        Value::String(text) if text.starts_with("\\$.") => {
            Classified::Literal(Value::String(text[1..].to_string()))
        }
        other => Classified::Literal(other.clone()),
    }
}

/// The most compiled paths a [`PathCache`] keeps.
const MAX_CACHED_PATHS: usize = 1024;

/// The distinct JSONPaths of a run, each compiled once. The cache is bounded: the checks file's
/// paths come first and are kept; once it holds [`MAX_CACHED_PATHS`] paths (a stream of test
/// cases with their own checks can bring new ones without end), a new path is compiled for its
/// check alone.
#[derive(Debug, Default)]
pub struct PathCache {
    compiled: HashMap<String, Result<CompiledPath, String>>,
}

impl PathCache {
    /// The compiled form of `text`, compiling it on first use; an invalid path gives the
    /// parser's reason.
    pub fn compile(&mut self, text: &str) -> Result<CompiledPath, String> {
        if let Some(known) = self.compiled.get(text) {
            return known.clone();
        }
        if let Some(reason) = stray_blank(text) {
            return Err(reason);
        }
        let compiled = parse_json_path(text)
            .map(|query| CompiledPath {
                text: Arc::from(text),
                plan: Arc::new(Plan::of(query)),
            })
            .map_err(|err| one_line(&err.to_string()));
        if self.compiled.len() < MAX_CACHED_PATHS {
            self.compiled.insert(text.to_string(), compiled.clone());
        }
        compiled
    }
}

/// A blank the JSONPath grammar (RFC 9535) does not allow outside brackets, which the parser
/// would take into a name (`$.a b` for the key `a b`) or drop (`$.a `): outside brackets, blank
/// space may only come before a segment (`.` or `[`).
fn stray_blank(text: &str) -> Option<String> {
    let (mut depth, mut quote, mut escaped) = (0usize, None, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(open) = quote {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                _ if c == open => quote = None,
                _ => {}
            }
            continue;
        }
        match c {
            '\'' | '"' if depth > 0 => quote = Some(c),
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 && c.is_whitespace() => {
                while chars.next_if(|next| next.is_whitespace()).is_some() {}
                if !matches!(chars.peek(), Some('.' | '[')) {
                    return Some(
                        "a blank outside brackets may only come before `.` or `[` (a name with \
                         a space is written ['a b'])"
                            .to_string(),
                    );
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blanks_outside_brackets_only_come_before_a_segment() {
        for path in ["$.a b", "$..a b", "$.a ", "$.a\tb", "$ a"] {
            assert!(stray_blank(path).is_some(), "{path:?}");
        }
        for path in [
            "$.a",
            "$ .a",
            "$.a [0]",
            "$['a b']",
            "$[?@.x == 'a b']",
            "$[?@.x == \"a ] b\"]",
        ] {
            assert_eq!(stray_blank(path), None, "{path:?}");
        }
    }

    #[test]
    fn classification_follows_the_prefix_and_escape_rules() {
        assert_eq!(
            classify(&json!("$.output.value")),
            Classified::Path("$.output.value")
        );
        assert_eq!(classify(&json!("$")), Classified::Literal(json!("$")));
        assert_eq!(classify(&json!("$..value")), Classified::Path("$..value"));
        assert_eq!(
            classify(&json!("\\$.literal")),
            Classified::Literal(json!("$.literal"))
        );
        assert_eq!(
            classify(&json!("$5.00")),
            Classified::Literal(json!("$5.00"))
        );
        assert_eq!(classify(&json!("\\$x")), Classified::Literal(json!("\\$x")));
        assert_eq!(classify(&json!(3)), Classified::Literal(json!(3)));
    }

    #[test]
    fn direct_walks_agree_with_the_query_engine() {
        let context = json!({"test_case": {"id": "t", "a b": [1, {"x": [true]}], "it's": 1},
                             "output": {"value": ["p", "q", "r"], "n": null}});
        let paths = [
            "$",
            "$.test_case",
            "$.test_case.id",
            "$.test_case['a b'][1].x[0]",
            "$['test_case']['it\\'s']",
            "$.output.value[-1]",
            "$.output.value[-3]",
            "$.output.value[-4]",
            "$.output.value[3]",
            "$.output.value[0].x",
            "$.output.n",
            "$.output.n.x",
            "$.missing",
            "$.test_case.id[0]",
            "$.test_case[0]",
        ];
        let mut cache = PathCache::default();
        for text in paths {
            let compiled = cache.compile(text).unwrap();
            assert!(matches!(*compiled.plan, Plan::Walk(_)), "{text} is walked");
            let engine = js_path_process(&parse_json_path(text).unwrap(), &context)
                .unwrap()
                .first()
                .map(|hit| hit.val);
            assert_eq!(compiled.first(&context).ok(), engine, "{text}");
        }
        let general = cache.compile("$.output.value[1:]").unwrap();
        assert!(matches!(*general.plan, Plan::Query { .. }));
        assert_eq!(general.first(&context).unwrap(), &json!("q"));
    }

    #[test]
    fn the_cache_is_bounded_and_keeps_its_first_paths() {
        let mut cache = PathCache::default();
        let first = cache.compile("$.output.value").unwrap();
        for index in 0..MAX_CACHED_PATHS + 10 {
            let text = format!("$.test_case.item{index}");
            assert_eq!(cache.compile(&text).unwrap().text(), text);
        }
        assert_eq!(cache.compiled.len(), MAX_CACHED_PATHS);
        let again = cache.compile("$.output.value").unwrap();
        assert!(Arc::ptr_eq(&first.plan, &again.plan), "still cached");
    }

    #[test]
    fn paths_compile_once_and_resolve_to_the_first_match() {
        let mut cache = PathCache::default();
        let path = cache.compile("$.output.value[*]").unwrap();
        let again = cache.compile("$.output.value[*]").unwrap();
        assert!(Arc::ptr_eq(&path.plan, &again.plan), "compiled once");
        let context = json!({"output": {"value": ["a", "b"]}});
        assert_eq!(path.first(&context).unwrap(), &json!("a"));
        let empty = json!({"output": {"value": []}});
        assert!(path.first(&empty).unwrap_err().contains("matched nothing"));
        assert!(cache.compile("$.output[").is_err());
        let reason = cache.compile("$.output[").unwrap_err();
        assert_eq!(cache.compile("$.output[").unwrap_err(), reason);
    }
}
