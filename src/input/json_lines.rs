//! The line of a JSON document a problem's location points at (`checks[1].arguments.pattern`),
//! so that problems in one-document inputs (checks files, rubrics, FEP requests) name a line as
//! JSONL and YAML inputs do. The document is walked as text with the shared [`Scan`], down the
//! location's path only; a location the document lacks (a missing key) points at the deepest
//! value it has.

use super::json_scan::Scan;

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
        scan: Scan::new(document),
        text: document,
        line: 1,
        counted: 0,
    };
    walker.scan.skip_whitespace();
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

/// A walk down one location of a document, on the shared [`Scan`], counting lines as it goes.
struct Walker<'a> {
    scan: Scan<'a>,
    text: &'a [u8],
    /// The line of the byte at `counted`.
    line: usize,
    counted: usize,
}

impl Walker<'_> {
    /// The 1-based line of where the scan is.
    fn line(&mut self) -> usize {
        let at = self.scan.at();
        self.line += memchr::memchr_iter(b'\n', &self.text[self.counted..at]).count();
        self.counted = at;
        self.line
    }

    /// Walk one value; `wanted` are the steps still to take below it. The line of each value on
    /// the way is recorded in `found` (deeper ones replace it); a value below none of them is
    /// passed whole.
    fn value(&mut self, wanted: &[Step], found: &mut Option<usize>) -> Option<()> {
        let Some((next, below)) = wanted.split_first() else {
            return self.scan.value();
        };
        let open = match self.scan.peek()? {
            open @ (b'{' | b'[') => open,
            // A scalar where the location goes deeper: its line is the deepest one.
            _ => return self.scan.value(),
        };
        let close = if open == b'{' { b'}' } else { b']' };
        self.scan.next();
        self.scan.skip_whitespace();
        if self.scan.peek() == Some(close) {
            self.scan.next();
            return Some(());
        }
        for index in 0.. {
            self.scan.skip_whitespace();
            let line = self.line();
            let step = if open == b'{' {
                let key = self.scan.string()?;
                self.scan.skip_whitespace();
                self.scan.expect(b':')?;
                self.scan.skip_whitespace();
                Step::Key(serde_json::from_slice(&self.text[key]).ok()?)
            } else {
                Step::Index(index)
            };
            if *next == step {
                *found = Some(line);
                self.value(below, found)?;
            } else {
                self.scan.value()?;
            }
            self.scan.skip_whitespace();
            match self.scan.next()? {
                b',' => {}
                byte if byte == close => return Some(()),
                _ => return None,
            }
        }
        None
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
    fn a_location_past_a_deeply_nested_value_still_has_its_line() {
        // 120 levels: more than a split of a FEP request scans, fewer than serde_json parses.
        let deep = format!("{}{}", "[".repeat(120), "]".repeat(120));
        let document = format!("{{\"checks\": [\n  {deep},\n  {{\"type\": \"x\"}}\n]}}\n");
        assert!(serde_json::from_str::<serde_json::Value>(&document).is_ok());
        assert_eq!(line_of(document.as_bytes(), "checks[1].type"), Some(3));
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
