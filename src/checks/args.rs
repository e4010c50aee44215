//! Check arguments: the literal-or-JSONPath rule, the escape rule, compiling each distinct
//! JSONPath once per run, and resolving arguments against an evaluation context.
//!
//! A string argument that starts with `$.` (or is exactly `$`) is a JSONPath (RFC 9535) over the
//! evaluation context `{"test_case": {...}, "output": {...}}`; a string that starts with `\$.` is
//! the literal `$.…` without the backslash; every other value is a literal.

use std::collections::HashMap;
use std::sync::Arc;

use jsonpath_rust::parser::model::JpQuery;
use jsonpath_rust::parser::parse_json_path;
use jsonpath_rust::query::js_path_process;
use serde_json::Value;

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
    query: Arc<JpQuery>,
}

impl CompiledPath {
    /// The path as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The first value the path selects in `context`, or why there is none.
    pub fn first<'a>(&self, context: &'a Value) -> Result<&'a Value, String> {
        match js_path_process(&self.query, context) {
            Ok(found) => found.into_iter().next().map(|hit| hit.val).ok_or_else(|| {
                format!(
                    "JSONPath `{}` matched nothing in the evaluation context",
                    self.text
                )
            }),
            Err(err) => Err(format!(
                "JSONPath `{}` could not be evaluated: {err}",
                self.text
            )),
        }
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

/// Apply the literal-or-JSONPath rule and the escape rule to one argument value.
pub fn classify(value: &Value) -> Classified<'_> {
    match value {
        Value::String(text) if text == "$" || text.starts_with("$.") => Classified::Path(text),
        Value::String(text) if text.starts_with("\\$.") => {
            Classified::Literal(Value::String(text[1..].to_string()))
        }
        other => Classified::Literal(other.clone()),
    }
}

/// Every distinct JSONPath of a run, compiled once.
#[derive(Debug, Default)]
pub struct PathCache {
    compiled: HashMap<String, Result<CompiledPath, String>>,
}

impl PathCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The compiled form of `text`, compiling it on first use; an invalid path gives the
    /// parser's reason.
    pub fn compile(&mut self, text: &str) -> Result<CompiledPath, String> {
        if let Some(known) = self.compiled.get(text) {
            return known.clone();
        }
        let compiled = parse_json_path(text)
            .map(|query| CompiledPath {
                text: Arc::from(text),
                query: Arc::new(query),
            })
            .map_err(|err| one_line(&err.to_string()));
        self.compiled.insert(text.to_string(), compiled.clone());
        compiled
    }

    /// How many distinct paths were seen.
    pub fn len(&self) -> usize {
        self.compiled.len()
    }

    /// Whether no path was seen.
    pub fn is_empty(&self) -> bool {
        self.compiled.is_empty()
    }
}

/// A multi-line message (parser and regex errors draw carets) folded into one line.
pub fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classification_follows_the_prefix_and_escape_rules() {
        assert_eq!(
            classify(&json!("$.output.value")),
            Classified::Path("$.output.value")
        );
        assert_eq!(classify(&json!("$")), Classified::Path("$"));
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
    fn paths_compile_once_and_resolve_to_the_first_match() {
        let mut cache = PathCache::new();
        let path = cache.compile("$.output.value[*]").unwrap();
        cache.compile("$.output.value[*]").unwrap();
        assert_eq!(cache.len(), 1);
        let context = json!({"output": {"value": ["a", "b"]}});
        assert_eq!(path.first(&context).unwrap(), &json!("a"));
        let empty = json!({"output": {"value": []}});
        assert!(path.first(&empty).unwrap_err().contains("matched nothing"));
        assert!(cache.compile("$.output[").is_err());
        assert!(cache.compile("$.output[").is_err());
        assert_eq!(cache.len(), 2);
    }
}
