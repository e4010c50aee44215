//! A candidate and an example made into what the task model is asked: a candidate with
//! placeholders is filled in and sent as one user message; a candidate without any is the system
//! message, followed by the example's `messages` (OpenAI chat shape) or else its `input` as the
//! user message. The prompt text (what the completions API and the payload's `prompt` get) is the
//! filled-in template, or the system prompt and the messages' contents a blank line apart.

use serde_json::{json, Value};

use super::template::{lookup, text_of, Template};
use crate::error::Problem;
use crate::input::{Candidate, Record};

/// A rendered prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The prompt as one text.
    pub text: String,
    /// The prompt as chat messages.
    pub messages: Value,
}

impl Rendered {
    /// `candidate` rendered for `example`, or the field the example lacks.
    pub fn of(candidate: &str, example: Option<&Value>) -> Result<Rendered, String> {
        let template = Template::parse(candidate);
        let empty = Value::Object(serde_json::Map::new());
        let example = example.unwrap_or(&empty);
        if !template.is_plain() {
            let text = template
                .render(example)
                .map_err(|placeholder| placeholder.field.clone())?;
            return Ok(Rendered::user(text));
        }
        let mut messages = vec![json!({"role": "system", "content": candidate})];
        if let Some(Value::Array(chat)) = example.get("messages") {
            messages.extend(chat.iter().cloned());
        } else {
            let input = lookup(example, "input").ok_or_else(|| "input".to_string())?;
            messages.push(json!({"role": "user", "content": text_of(input)}));
        }
        let text = messages
            .iter()
            .map(|message| message.get("content").map_or_else(String::new, text_of))
            .collect::<Vec<_>>()
            .join("\n\n");
        Ok(Rendered {
            text,
            messages: Value::Array(messages),
        })
    }

    /// The preflight probe: `text` as one user message.
    pub fn probe(text: &str) -> Rendered {
        Rendered::user(text.to_string())
    }

    fn user(text: String) -> Rendered {
        Rendered {
            messages: json!([{"role": "user", "content": text}]),
            text,
        }
    }
}

/// A field a candidate needs: (the field, its placeholder's line in the candidate) → (the first
/// example lacking it, how many more do).
type Missing = ((String, Option<usize>), (String, usize));

/// Every candidate that cannot be rendered for some example of `splits` (each a file as named
/// and its records): one problem per candidate and missing field, naming the candidate, the
/// placeholder's line in it, the field and the first example that lacks it.
pub fn missing_fields(candidates: &[Candidate], splits: &[(&str, Vec<&Record>)]) -> Vec<Problem> {
    let mut problems = Vec::new();
    for candidate in candidates {
        let template = Template::parse(&candidate.text);
        let mut missing: Vec<Missing> = Vec::new();
        for (file, records) in splits {
            for record in records.iter() {
                let lacking: Vec<(&str, Option<usize>)> = if template.is_plain() {
                    let has_chat = matches!(record.value.get("messages"), Some(Value::Array(_)));
                    let has_input = lookup(&record.value, "input").is_some();
                    if has_chat || has_input {
                        Vec::new()
                    } else {
                        vec![("input", None)]
                    }
                } else {
                    template
                        .placeholders()
                        .iter()
                        .filter(|placeholder| lookup(&record.value, &placeholder.field).is_none())
                        .map(|placeholder| (placeholder.field.as_str(), Some(placeholder.line)))
                        .collect()
                };
                for (field, line) in lacking {
                    match missing.iter_mut().find(|(key, _)| key.0 == field) {
                        Some((_, (_, more))) => *more += 1,
                        None => missing.push((
                            (field.to_string(), line),
                            (format!("{file}:{}", record.line), 0),
                        )),
                    }
                }
            }
        }
        for ((field, line), (first, more)) in missing {
            let more = match more {
                0 => String::new(),
                1 => " (and 1 more example)".to_string(),
                n => format!(" (and {n} more examples)"),
            };
            problems.push(match line {
                Some(line) => Problem::at_line(
                    &candidate.id,
                    line,
                    format!("placeholder {{{{{field}}}}}: the example at {first} has no field `{field}`{more}"),
                ),
                None => Problem::new(
                    &candidate.id,
                    format!(
                        "a candidate without placeholders is the system prompt, sent with the \
                         example's `messages` or `input`: the example at {first} has neither{more}"
                    ),
                ),
            });
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_is_one_user_message() {
        let rendered = Rendered::of("Q: {{q}}", Some(&json!({"q": "2+2?"}))).unwrap();
        assert_eq!(rendered.text, "Q: 2+2?");
        assert_eq!(
            rendered.messages,
            json!([{"role": "user", "content": "Q: 2+2?"}])
        );
        assert_eq!(
            Rendered::of("{{a.b}}", Some(&json!({"a": {}}))).unwrap_err(),
            "a.b"
        );
    }

    #[test]
    fn a_plain_candidate_is_the_system_prompt() {
        let rendered = Rendered::of("Be terse.", Some(&json!({"input": "Hi"}))).unwrap();
        assert_eq!(rendered.text, "Be terse.\n\nHi");
        assert_eq!(
            rendered.messages,
            json!([{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hi"}])
        );
        let chat = json!({"messages": [{"role": "user", "content": "A"}, {"role": "assistant", "content": "B"}, {"role": "user", "content": "C"}]});
        let rendered = Rendered::of("S", Some(&chat)).unwrap();
        assert_eq!(rendered.text, "S\n\nA\n\nB\n\nC");
        assert_eq!(rendered.messages.as_array().unwrap().len(), 4);
        assert_eq!(Rendered::of("S", Some(&json!({}))).unwrap_err(), "input");
    }

    #[test]
    fn missing_fields_name_candidate_line_example_and_field() {
        let candidates = [
            Candidate {
                id: "p.txt".into(),
                text: "Intro\n{{question}} {{ctx}}".into(),
                numbered: false,
            },
            Candidate {
                id: "sys.txt".into(),
                text: "System".into(),
                numbered: false,
            },
        ];
        let records = [
            Record::from_value(1, json!({"question": "a", "ctx": "c", "input": "i"})),
            Record::from_value(2, json!({"ctx": "c"})),
            Record::from_value(3, json!({})),
        ];
        let problems: Vec<String> =
            missing_fields(&candidates, &[("qa.jsonl", records.iter().collect())])
                .iter()
                .map(ToString::to_string)
                .collect();
        assert_eq!(
            problems,
            vec![
                "p.txt:2: placeholder {{question}}: the example at qa.jsonl:2 has no field `question` (and 1 more example)",
                "p.txt:2: placeholder {{ctx}}: the example at qa.jsonl:3 has no field `ctx`",
                "sys.txt: a candidate without placeholders is the system prompt, sent with the example's `messages` or `input`: the example at qa.jsonl:2 has neither (and 1 more example)",
            ]
        );
    }
}
