//! Lines of field paths in a spec file, so validation problems (found after decoding, when
//! positions are gone) can name the line they are about. One pass over the text records the
//! line of every object key and array element by its path (`version.evaluation_spec.validators[2]
//! .config`); a problem's path is looked up in the spec's subtree, falling back to its nearest
//! located ancestor. JSON is scanned exactly; YAML in block style (as packs are written), with
//! flow collections and block scalars treated as leaves.

use std::collections::HashMap;

/// Where each path of a document starts.
#[derive(Debug, Default)]
pub struct LineIndex {
    lines: HashMap<String, usize>,
    /// The path of the spec object in the document (`evaluation_spec`, `version.evaluation_spec`
    /// or empty for a bare spec).
    root: String,
}

impl LineIndex {
    /// Index a spec file's text (JSON when it starts with `{` or `[`, else YAML).
    pub fn new(text: &str) -> LineIndex {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let lines = if text.trim_start().starts_with(['{', '[']) {
            json_lines(text)
        } else {
            yaml_lines(text)
        };
        let root = ["evaluation_spec", "version.evaluation_spec"]
            .into_iter()
            .find(|root| lines.contains_key(*root))
            .unwrap_or("")
            .to_string();
        LineIndex { lines, root }
    }

    /// The line of a problem path (`evaluation_spec.…`), or of its nearest located ancestor.
    pub fn line_of(&self, problem_path: &str) -> Option<usize> {
        let relative = problem_path
            .strip_prefix("evaluation_spec")
            .unwrap_or(problem_path)
            .trim_start_matches('.');
        let mut path = match (self.root.is_empty(), relative.is_empty()) {
            (true, _) => relative.to_string(),
            (false, true) => self.root.clone(),
            (false, false) => format!("{}.{relative}", self.root),
        };
        loop {
            if let Some(line) = self.lines.get(&path) {
                return Some(*line);
            }
            let cut = path.rfind(['.', '['])?;
            path.truncate(cut);
        }
    }
}

fn child(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// A JSON container being scanned: its path, and the next element index or the pending key.
enum Frame {
    Object { path: String, key: Option<String> },
    Array { path: String, next: usize },
}

/// The path of the value that starts at the current position (advancing the array index or
/// taking the pending key).
fn value_path(stack: &mut [Frame]) -> Option<String> {
    match stack.last_mut() {
        None => Some(String::new()),
        Some(Frame::Object { path, key }) => key.take().map(|key| child(path, &key)),
        Some(Frame::Array { path, next }) => {
            *next += 1;
            Some(format!("{path}[{}]", *next - 1))
        }
    }
}

/// A scalar value: array elements get their line (object members got theirs with the key).
fn record_element(lines: &mut HashMap<String, usize>, stack: &mut [Frame], line: usize) {
    let in_array = matches!(stack.last(), Some(Frame::Array { .. }));
    if let Some(path) = value_path(stack) {
        if in_array {
            lines.entry(path).or_insert(line);
        }
    }
}

/// Paths of a JSON text with the line each value starts on.
fn json_lines(text: &str) -> HashMap<String, usize> {
    let mut lines = HashMap::new();
    let mut stack: Vec<Frame> = Vec::new();
    let bytes = text.as_bytes();
    let mut line = 1;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                let literal = text.get(start..=i.min(bytes.len() - 1)).unwrap_or("");
                let is_key = matches!(stack.last(), Some(Frame::Object { key: None, .. }))
                    && bytes
                        .get(i + 1..)
                        .unwrap_or_default()
                        .iter()
                        .find(|b| !b.is_ascii_whitespace())
                        .is_some_and(|b| *b == b':');
                if is_key {
                    let key: String = serde_json::from_str(literal).unwrap_or_default();
                    if let Some(Frame::Object { path, key: pending }) = stack.last_mut() {
                        lines.entry(child(path, &key)).or_insert(line);
                        *pending = Some(key);
                    }
                } else {
                    record_element(&mut lines, &mut stack, line);
                }
            }
            b'{' | b'[' => {
                let path = value_path(&mut stack).unwrap_or_default();
                lines.entry(path.clone()).or_insert(line);
                stack.push(if bytes[i] == b'{' {
                    Frame::Object { path, key: None }
                } else {
                    Frame::Array { path, next: 0 }
                });
            }
            b'}' | b']' => {
                stack.pop();
            }
            b',' | b':' => {}
            byte if byte.is_ascii_whitespace() => {}
            _ => {
                record_element(&mut lines, &mut stack, line);
                while i + 1 < bytes.len() && !b",]}\n \t\r".contains(&bytes[i + 1]) {
                    i += 1;
                }
            }
        }
        i += 1;
    }
    lines
}

/// A YAML block node being scanned.
struct Node {
    column: usize,
    path: String,
    is_item: bool,
    items: usize,
}

/// The key of a `key: value` / `key:` line, with the text after the colon.
fn yaml_key(content: &str) -> Option<(String, &str)> {
    let (key, rest) = if let Some(quote @ ('"' | '\'')) = content.chars().next() {
        let end = content[1..].find(quote)? + 1;
        let rest = content[end + 1..].trim_start().strip_prefix(':')?;
        (content[1..end].to_string(), rest)
    } else {
        let colon = content
            .find(": ")
            .or_else(|| content.ends_with(':').then(|| content.len() - 1))?;
        let key = &content[..colon];
        if key.starts_with(['[', '{', '#', '&', '*', '!', '|', '>']) {
            return None;
        }
        (key.trim_end().to_string(), &content[colon + 1..])
    };
    Some((key, rest.trim()))
}

/// Paths of a block-style YAML text with the line each key or item is on.
fn yaml_lines(text: &str) -> HashMap<String, usize> {
    let mut lines = HashMap::new();
    let mut stack: Vec<Node> = Vec::new();
    let mut scalar_above: Option<usize> = None;
    for (number, raw) in text.lines().enumerate() {
        let line = number + 1;
        let content = raw.trim_start();
        let column = raw.len() - content.len();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        if let Some(key_column) = scalar_above {
            if column > key_column {
                continue;
            }
            scalar_above = None;
        }
        if column == 0 && (content.starts_with("---") || content.starts_with("...")) {
            stack.clear();
            continue;
        }
        let mut column = column;
        let mut content = content;
        if let Some(after) = content
            .strip_prefix('-')
            .filter(|after| after.is_empty() || after.starts_with(' '))
        {
            while stack
                .last()
                .is_some_and(|top| top.column > column || (top.column == column && top.is_item))
            {
                stack.pop();
            }
            let Some(parent) = stack.last_mut() else {
                continue;
            };
            let path = format!("{}[{}]", parent.path, parent.items);
            parent.items += 1;
            lines.entry(path.clone()).or_insert(line);
            stack.push(Node {
                column,
                path,
                is_item: true,
                items: 0,
            });
            let rest = after.trim_start();
            column += content.len() - rest.len();
            content = rest;
            if content.is_empty() {
                continue;
            }
        }
        let Some((key, value)) = yaml_key(content) else {
            continue;
        };
        while stack
            .last()
            .is_some_and(|top| top.column > column || (top.column == column && !top.is_item))
        {
            stack.pop();
        }
        let path = child(stack.last().map_or("", |parent| &parent.path), &key);
        lines.entry(path.clone()).or_insert(line);
        if value.starts_with(['|', '>']) {
            scalar_above = Some(column);
        }
        stack.push(Node {
            column,
            path,
            is_item: false,
            items: 0,
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluation_spec::decode::SpecProblem;

    #[test]
    fn yaml_paths_map_to_their_lines() {
        let text = "\
pack:
  slug: p
version:
  number: 1
  evaluation_spec:
    name: s
    validators:
      - key: a
        type: exact_match
      - key: b
        config:
          threshold: 2
    llm_judges:
    - key: j
      rubric: |
        key: not a key
      model: claude-x
";
        let index = LineIndex::new(text);
        assert_eq!(index.line_of("evaluation_spec.name"), Some(6));
        assert_eq!(index.line_of("evaluation_spec.validators[1]"), Some(10));
        assert_eq!(
            index.line_of("evaluation_spec.validators[1].config.threshold"),
            Some(12)
        );
        assert_eq!(
            index.line_of("evaluation_spec.validators[1].target"),
            Some(10)
        );
        assert_eq!(
            index.line_of("evaluation_spec.llm_judges[0].model"),
            Some(17)
        );
        assert_eq!(index.line_of("evaluation_spec"), Some(5));
    }

    #[test]
    fn json_paths_map_to_their_lines() {
        let text = "{\"name\": \"s\",\n \"validators\": [\n  {\"key\": \"a\"},\n  {\"key\": \"b\",\n   \"config\": {\"t\": 1}}],\n \"scorecard\": {\"dimensions\": [\"x\",\n \"y\"]}}";
        let index = LineIndex::new(text);
        assert_eq!(index.line_of("evaluation_spec.name"), Some(1));
        assert_eq!(
            index.line_of("evaluation_spec.validators[1].config.t"),
            Some(5)
        );
        assert_eq!(
            index.line_of("evaluation_spec.validators[1].target"),
            Some(4)
        );
        assert_eq!(
            index.line_of("evaluation_spec.scorecard.dimensions[1]"),
            Some(7)
        );
    }

    #[test]
    fn load_spec_gives_validation_problems_their_lines() {
        let text = "\
evaluation_spec:
  name: s
  version_number: 0
  judge_mode: deterministic
  validators:
    - key: v
      type: exact_match
      target: artifact
      expected_from: literal:x
  scorecard:
    dimensions: [correctness]
";
        let problems =
            crate::evaluation_spec::load_spec(text.as_bytes(), "pack.yaml").expect_err("invalid");
        assert_eq!(
            SpecProblem::located(&problems),
            [
                (
                    "evaluation_spec.version_number must be greater than 0".to_string(),
                    Some(3)
                ),
                (
                    format!(
                        "evaluation_spec.validators[0].target {}",
                        crate::evaluation_spec::evidence::unsupported_reference("artifact")
                    ),
                    Some(8)
                ),
            ]
        );
    }

    #[test]
    fn malformed_text_never_panics() {
        for text in [
            "\"",
            "{\"a",
            "{\"a\":",
            "[1,",
            "- - -",
            "key: \"open",
            "\u{a0}x: y",
            "'q",
            ": x",
            "{\"é\": [\"\\\"]}",
            "a:\n  - |\n    b: c\n  - d: e",
        ] {
            let index = LineIndex::new(text);
            let _ = index.line_of("evaluation_spec.a[0].b");
        }
    }
}
