//! The line of a JSON document a problem's location points at (`checks[1].arguments.pattern`),
//! so that problems in one-document inputs (checks files, rubrics, FEP requests) name a line as
//! JSONL and YAML inputs do. The document is walked as text, tracking the path of each value;
//! a location the document lacks (a missing key) points at the deepest value it has.

/// One step of a location: a member or an element.
#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Documents larger than this are not walked: a problem in a large FEP request keeps its JSON
/// location alone.
const LARGEST: usize = 4 << 20;

/// How many problems of one document get a line: each walks the document again, so a file of
/// thousands of problems would take time quadratic in its size; the rest keep their JSON
/// location alone (and the first ones show where to look).
const LOOKUPS: usize = 50;

/// A JSON document whose problems are given lines, [`LOOKUPS`] at the most.
pub struct DocumentLines<'a> {
    document: &'a [u8],
    lookups: std::cell::Cell<usize>,
}

impl<'a> DocumentLines<'a> {
    /// The lines of `document` (its text).
    pub fn new(document: &'a [u8]) -> DocumentLines<'a> {
        DocumentLines {
            document,
            lookups: std::cell::Cell::new(0),
        }
    }

    /// [`line_of`] `location`, while lookups are left.
    pub fn line(&self, location: &str) -> Option<usize> {
        let done = self.lookups.get();
        if done >= LOOKUPS {
            return None;
        }
        self.lookups.set(done + 1);
        line_of(self.document, location)
    }
}

/// The 1-based line where the value at `location` starts in `document` (for a member, its key),
/// or of the deepest value of `location` the document has; `None` for the whole document, a
/// location that does not parse, a document of one line, one that is not JSON or one larger
/// than [`LARGEST`].
fn line_of(document: &[u8], location: &str) -> Option<usize> {
    let document = document.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(document);
    let steps = parse_location(location)?;
    // In a document of one line, every location is on it: the line says nothing.
    let one_line = !document.trim_ascii_end().contains(&b'\n');
    if steps.is_empty() || one_line || document.len() > LARGEST {
        return None;
    }
    let mut walker = Walker {
        text: document,
        at: 0,
        line: 1,
    };
    walker.skip_space();
    let mut found = None;
    walker.value(&steps, &mut found)?;
    found
}

/// `checks[1].arguments."odd key"` as its steps; a leading `.` is allowed.
fn parse_location(location: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut rest = location.strip_prefix('.').unwrap_or(location);
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            steps.push(Step::Index(after[..end].parse().ok()?));
            rest = &after[end + 1..];
        } else if rest.starts_with('"') {
            let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<String>();
            let key = stream.next()?.ok()?;
            rest = &rest[stream.byte_offset()..];
            steps.push(Step::Key(key));
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            if end == 0 {
                return None;
            }
            steps.push(Step::Key(rest[..end].to_string()));
            rest = &rest[end..];
        }
        rest = rest.strip_prefix('.').unwrap_or(rest);
    }
    Some(steps)
}

struct Walker<'a> {
    text: &'a [u8],
    at: usize,
    line: usize,
}

impl Walker<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        if byte == b'\n' {
            self.line += 1;
        }
        Some(byte)
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.bump();
        }
    }

    /// Walk one value; `wanted` are the steps still to take below it. The line of each value on
    /// the way is recorded in `found` (deeper ones replace it).
    fn value(&mut self, wanted: &[Step], found: &mut Option<usize>) -> Option<()> {
        match self.peek()? {
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.bump();
                self.skip_space();
                if self.peek() == Some(close) {
                    self.bump();
                    return Some(());
                }
                for index in 0.. {
                    self.skip_space();
                    let line = self.line;
                    let step = if open == b'{' {
                        let key = self.string()?;
                        self.skip_space();
                        (self.bump()? == b':').then_some(())?;
                        self.skip_space();
                        Step::Key(key)
                    } else {
                        Step::Index(index)
                    };
                    match wanted.split_first() {
                        Some((next, below)) if *next == step => {
                            *found = Some(line);
                            self.value(below, found)?;
                        }
                        _ => self.value(&[], &mut None)?,
                    }
                    self.skip_space();
                    match self.bump()? {
                        b',' => {}
                        byte if byte == close => return Some(()),
                        _ => return None,
                    }
                }
                None
            }
            b'"' => self.string().map(drop),
            _ => {
                // A number, true, false or null: up to the next delimiter.
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')
                ) {
                    self.bump();
                }
                Some(())
            }
        }
    }

    /// A JSON string, decoded (a key is compared with its location's).
    fn string(&mut self) -> Option<String> {
        let start = self.at;
        (self.bump()? == b'"').then_some(())?;
        loop {
            match self.bump()? {
                b'\\' => {
                    self.bump()?;
                }
                b'"' => break,
                _ => {}
            }
        }
        serde_json::from_slice(&self.text[start..self.at]).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECKS: &str = "{\"checks\": [\n  {\"type\": \"exact_match\", \"arguments\": {}},\n  \
                          {\n    \"type\": \"regexx\",\n    \"arguments\": {\"a.b\": [1, 2]}\n  }\n]}\n";

    #[test]
    fn locations_point_at_the_line_of_their_value_or_its_deepest_part() {
        let line = |location| line_of(CHECKS.as_bytes(), location);
        assert_eq!(line("checks"), Some(1));
        assert_eq!(line("checks[0]"), Some(2));
        assert_eq!(line("checks[1]"), Some(3));
        assert_eq!(line("checks[1].type"), Some(4));
        assert_eq!(line("checks[1].arguments.\"a.b\"[1]"), Some(5));
        // A key the document lacks: the deepest value it has.
        assert_eq!(line("checks[1].arguments.pattern"), Some(5));
        assert_eq!(line("checks[7]"), Some(1));
        assert_eq!(line(""), None);
        assert_eq!(line_of(b"not json\n\n", "checks"), None);
        assert_eq!(line_of(b"{\"checks\": []}\n", "checks"), None);
        let with_bom = [b"\xEF\xBB\xBF".as_slice(), CHECKS.as_bytes()].concat();
        assert_eq!(line_of(&with_bom, "checks[1].type"), Some(4));
        let lines = DocumentLines::new(CHECKS.as_bytes());
        let given: Vec<Option<usize>> = (0..LOOKUPS + 1).map(|_| lines.line("checks[1]")).collect();
        assert_eq!(given[LOOKUPS - 1], Some(3));
        assert_eq!(given[LOOKUPS], None);
    }

    #[test]
    fn locations_parse_into_keys_and_indexes() {
        assert_eq!(
            parse_location(".a[2].\"x.y\".b"),
            Some(vec![
                Step::Key("a".into()),
                Step::Index(2),
                Step::Key("x.y".into()),
                Step::Key("b".into()),
            ])
        );
        assert_eq!(parse_location("a[x]"), None);
    }
}
