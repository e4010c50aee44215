//! Candidate prompt templates: `{{field}}` names a top-level field of the example, `{{a.b}}` a
//! nested one (a number step indexes an array). Anything else between braces stays as written,
//! so code and JSON in a prompt need no escaping.

use serde_json::Value;

/// A placeholder of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    /// The field path as written, trimmed (`question`, `meta.topic`).
    pub field: String,
    /// Byte range of the whole `{{ ... }}` in the template.
    range: std::ops::Range<usize>,
    /// 1-based line of the template it starts on.
    pub line: usize,
}

/// A candidate's text split into its placeholders.
#[derive(Debug, Clone)]
pub struct Template<'a> {
    text: &'a str,
    placeholders: Vec<Placeholder>,
}

impl<'a> Template<'a> {
    /// Find the placeholders of `text`.
    pub fn parse(text: &'a str) -> Template<'a> {
        let mut placeholders = Vec::new();
        let mut from = 0;
        while let Some(open) = text[from..].find("{{").map(|at| from + at) {
            let Some(close) = text[open + 2..].find("}}").map(|at| open + 2 + at) else {
                break;
            };
            let field = text[open + 2..close].trim();
            if is_field_path(field) {
                placeholders.push(Placeholder {
                    field: field.to_string(),
                    range: open..close + 2,
                    line: 1 + text[..open].matches('\n').count(),
                });
                from = close + 2;
            } else {
                from = open + 1;
            }
        }
        Template { text, placeholders }
    }

    /// The placeholders, in order.
    pub fn placeholders(&self) -> &[Placeholder] {
        &self.placeholders
    }

    /// Whether the template has no placeholder (the candidate is then a system prompt).
    pub fn is_plain(&self) -> bool {
        self.placeholders.is_empty()
    }

    /// The text with each placeholder replaced by its field of `example` (a string as is, any
    /// other value as compact JSON), or the first placeholder whose field `example` lacks.
    pub fn render(&self, example: &Value) -> Result<String, &Placeholder> {
        let mut out = String::with_capacity(self.text.len());
        let mut from = 0;
        for placeholder in &self.placeholders {
            let value = lookup(example, &placeholder.field).ok_or(placeholder)?;
            out.push_str(&self.text[from..placeholder.range.start]);
            out.push_str(&text_of(value));
            from = placeholder.range.end;
        }
        out.push_str(&self.text[from..]);
        Ok(out)
    }
}

/// A value as prompt text: a string as is, anything else as compact JSON.
pub fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `field` of `example`, following dots into objects (and numbers into arrays).
pub fn lookup<'v>(example: &'v Value, field: &str) -> Option<&'v Value> {
    field
        .split('.')
        .try_fold(example, |value, step| match value {
            Value::Object(object) => object.get(step),
            Value::Array(items) => items.get(step.parse::<usize>().ok()?),
            _ => None,
        })
}

/// `name(.name)*` with names of letters, digits, `_` and `-`.
fn is_field_path(text: &str) -> bool {
    !text.is_empty()
        && text.split('.').all(|step| {
            !step.is_empty()
                && step
                    .chars()
                    .all(|ch| ch.is_alphanumeric() || ch == '_' || ch == '-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn placeholders_are_field_paths_between_double_braces() {
        let template = Template::parse("Q: {{question}}\n{{ meta.topic }} {{not a field}} {}\n{{x");
        let fields: Vec<_> = template
            .placeholders()
            .iter()
            .map(|p| (p.field.as_str(), p.line))
            .collect();
        assert_eq!(fields, vec![("question", 1), ("meta.topic", 2)]);
        assert!(Template::parse("You are terse. {\"a\": {\"b\": 1}}").is_plain());
    }

    #[test]
    fn rendering_fills_strings_as_is_and_other_values_as_json() {
        let example =
            json!({"question": "2+2?", "meta": {"topic": "math", "tags": ["a", "b"]}, "n": 4});
        let template =
            Template::parse("{{question}} [{{meta.topic}}] {{meta.tags}} {{meta.tags.1}} {{n}}");
        assert_eq!(
            template.render(&example).unwrap(),
            r#"2+2? [math] ["a","b"] b 4"#
        );
        let missing = Template::parse("{{question}} {{answer}}");
        assert_eq!(missing.render(&example).unwrap_err().field, "answer");
    }
}
