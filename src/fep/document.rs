//! Parsing a large JSON document on the worker pool: a request's `test_cases` and `outputs` are
//! most of its bytes, so the top-level object is split first (one quick scan for where each member
//! and each element of an array member starts and ends, see [`Split`], which [`super::large`]
//! also uses), and the elements of the long arrays are parsed by serde_json on the workers, in
//! batches. The value is the one [`parse_unique`] gives (keys in order; an object that repeats a
//! key is refused). Whatever the scan does not expect — not an object, malformed JSON, a repeated
//! key, nesting deeper than [`crate::input::json_scan::MAX_DEPTH`] — is parsed serially, so a bad
//! document gets the one parser's own error.

use std::ops::Range;

use serde_json::{Map, Value};

use crate::input::json_scan::Scan;
use crate::input::parse_unique;
use crate::pool;

/// The JSON value of `bytes`, as [`parse_unique`] parses it.
pub fn parse_document(bytes: &[u8]) -> serde_json::Result<Value> {
    match Split::of(bytes).and_then(|split| split.document(&[])) {
        Some(document) => Ok(document),
        None => parse_unique(bytes),
    }
}

/// A member of the top-level object, as found by the scan.
struct Member {
    /// The key, decoded.
    key: String,
    /// The whole value.
    value: Range<usize>,
    /// For an array value, each element.
    elements: Option<Vec<Range<usize>>>,
}

/// A JSON object split into its members, and the elements of its array members.
pub struct Split<'a> {
    bytes: &'a [u8],
    members: Vec<Member>,
}

impl<'a> Split<'a> {
    /// The split of the object that `bytes` holds; `None` when it is not an object or not the
    /// way the scan expects.
    pub fn of(bytes: &'a [u8]) -> Option<Split<'a>> {
        let members = members(bytes)?
            .into_iter()
            .map(|(key, value, elements)| {
                let key: String = serde_json::from_slice(&bytes[key]).ok()?;
                Some(Member {
                    key,
                    value,
                    elements,
                })
            })
            .collect::<Option<Vec<Member>>>()?;
        // The key serde_json reads as a number in disguise (arbitrary precision) and the like.
        if members
            .first()
            .is_some_and(|member| member.key.starts_with('$'))
        {
            return None;
        }
        Some(Split { bytes, members })
    }

    /// The text and the elements of the array member `key`, when it occurs once and is an array.
    pub fn elements(&self, key: &str) -> Option<(&'a [u8], &[Range<usize>])> {
        let mut found = self.members.iter().filter(|member| member.key == key);
        let member = found.next()?;
        if found.next().is_some() {
            return None;
        }
        Some((self.bytes, member.elements.as_deref()?))
    }

    /// The document, with the members named in `empty` given as empty arrays; `None` when a part
    /// does not parse.
    pub fn document(&self, empty: &[&str]) -> Option<Value> {
        let mut object = Map::with_capacity(self.members.len());
        for member in &self.members {
            let value = match &member.elements {
                _ if empty.contains(&member.key.as_str()) => Value::Array(Vec::new()),
                Some(elements) if elements.len() > pool::BATCH => {
                    Value::Array(parse_elements(self.bytes, elements)?)
                }
                _ => parse_unique(&self.bytes[member.value.clone()]).ok()?,
            };
            // A key given twice is for the serial parse to name.
            if object.insert(member.key.clone(), value).is_some() {
                return None;
            }
        }
        Some(Value::Object(object))
    }
}

/// The elements at `elements` of `bytes`, parsed in batches on the workers.
fn parse_elements(bytes: &[u8], elements: &[Range<usize>]) -> Option<Vec<Value>> {
    let mut values = Vec::with_capacity(elements.len());
    pool::ordered(
        pool::workers(),
        elements.chunks(pool::BATCH),
        |batch| {
            batch
                .iter()
                .map(|element| parse_unique(&bytes[element.clone()]))
                .collect::<serde_json::Result<Vec<Value>>>()
        },
        |parsed| {
            values.extend(parsed?);
            Ok::<(), serde_json::Error>(())
        },
    )
    .ok()?;
    Some(values)
}

/// Where a member's key (with its quotes) and value are, and each element of an array value.
type MemberSpans = (Range<usize>, Range<usize>, Option<Vec<Range<usize>>>);

/// The members of the object that `bytes` holds (an optional UTF-8 BOM and whitespace around
/// it); `None` when it is not an object or not the way the scan expects.
fn members(bytes: &[u8]) -> Option<Vec<MemberSpans>> {
    let mut scan = Scan::parts_of(bytes);
    scan.skip_whitespace();
    scan.expect(b'{')?;
    scan.skip_whitespace();
    let mut members = Vec::new();
    if scan.peek() == Some(b'}') {
        scan.next();
    } else {
        loop {
            let key = scan.string()?;
            scan.skip_whitespace();
            scan.expect(b':')?;
            scan.skip_whitespace();
            let start = scan.at();
            let elements = if scan.peek() == Some(b'[') {
                Some(scan.elements()?)
            } else {
                scan.value()?;
                None
            };
            members.push((key, start..scan.at(), elements));
            scan.skip_whitespace();
            match scan.next()? {
                b',' => scan.skip_whitespace(),
                b'}' => break,
                _ => return None,
            }
        }
    }
    scan.skip_whitespace();
    (scan.at() == bytes.len()).then_some(members)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` parsed here and by serde_json: the same value, or both an error (the same one).
    fn agrees(text: &str) {
        let ours = parse_document(text.as_bytes()).map_err(|err| err.to_string());
        let theirs = serde_json::from_str::<Value>(text).map_err(|err| err.to_string());
        assert_eq!(ours, theirs, "{text}");
        if let Ok(value) = ours {
            // Keys in the same order, too.
            assert_eq!(value.to_string(), theirs.unwrap_or_default().to_string());
        }
    }

    fn long_array(element: &str, count: usize) -> String {
        vec![element; count].join(",")
    }

    #[test]
    fn documents_parse_as_serde_json_parses_them() {
        let many = long_array(r#"{"id": "a\"]}", "n": [1, {"x": "\\"}], "e": 1.5e3}"#, 700);
        for text in [
            format!(r#"{{"test_cases": [{many}], "outputs": [{many}], "checks": []}}"#),
            "{}".to_string(),
            r#"{"a": [], "b": "x", "c": null, "d": -0.5}"#.to_string(),
            "[1, 2]".to_string(),
            "3".to_string(),
        ] {
            agrees(&text);
        }
    }

    #[test]
    fn a_key_given_twice_is_refused_where_it_comes_again_whichever_way_it_is_parsed() {
        let many = long_array(r#"{"id": "a\"]}", "n": [1, {"x": "\\"}], "e": 1.5e3}"#, 700);
        let refused = |text: &str| parse_document(text.as_bytes()).unwrap_err().to_string();
        // The column just past the key `"b"` found from byte `from` on, the blank after it included.
        let at = |text: &str, from: usize| {
            let key = text[from..].find(r#""b""#).unwrap() + from + 3;
            key + text[key..].len() - text[key..].trim_start().len()
        };
        let top = format!(r#" {{ "b" : [ {many} ] , "a" : 1 , "b" : [] }} "#);
        assert_eq!(
            refused(&top),
            format!(
                "the key `b` is given twice in one object at line 1 column {}",
                at(&top, 4)
            )
        );
        let inside = format!(r#"{{"a": [{many}, {{"b": 1, "b": 2}}]}}"#);
        assert_eq!(
            refused(&inside),
            format!(
                "the key `b` is given twice in one object at line 1 column {}",
                at(&inside, at(&inside, 0))
            )
        );
    }

    #[test]
    fn bad_documents_get_serde_jsons_error() {
        let many = long_array(r#"{"id": "a"}"#, 600);
        for text in [
            format!(r#"{{"a": [{many}, ]}}"#),
            format!(r#"{{"a": [{many}, {{"id": }}]}}"#),
            format!(r#"{{"a": [{many}]}} x"#),
            format!(r#"{{"a": [{many}] "b": 1}}"#),
            format!(r#"{{"a": [{many}, tru]}}"#),
            format!(r#"{{"a": [{many}, {{"x": [}}]}}"#),
            format!(r#"{{"a": [{many}, "tab	in a string"]}}"#),
            format!(r#"{{"a": [{many}, "{}"]}}"#, "[".repeat(200)),
            format!(
                r#"{{"a": [{many}, {}1{}]}}"#,
                "[".repeat(127),
                "]".repeat(127)
            ),
            r#"{"a": 1,}"#.to_string(),
            r#"{"a" 1}"#.to_string(),
            "{".to_string(),
            String::new(),
        ] {
            agrees(&text);
        }
    }

    #[test]
    fn a_number_in_disguise_is_left_to_serde_json() {
        agrees(r#"{"$serde_json::private::Number": "1"}"#);
    }
}
