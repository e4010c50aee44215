//! The work bound of a JSONPath query, checked before the query runs: a query whose worst case
//! over the document at hand would visit more than [`MAX_QUERY_NODES`] nodes, or build more than
//! [`MAX_LOCATION_BYTES`] of node locations, is refused with a reason naming the limit.
//!
//! The query engine keeps every node it selects, with its location string, at every step, so a
//! few descendant segments over a deep document (`$..*..*..*..*` over a 120-deep array) multiply
//! into billions of nodes. The bound is computed from the query and four numbers of the
//! document (its nodes, depth, widest container and longest location): each step's node count
//! is bounded by the previous step's, how often one node can recur in it, and the document's
//! shape; a filter costs its subqueries once per candidate, a comparison the values it compares
//! (two arrays are compared element by element, two strings byte by byte), a `length()` call
//! the text it counts, and a `match()` or `search()` call the text it reads, and more when its
//! pattern compiles large. The bound is an
//! over-estimate, exact enough that ordinary queries over ordinary documents stay far below it.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use jsonpath_rust::parser::model::{
    Comparable, Comparison, Filter, FilterAtom, FnArg, Literal, Segment, Selector, SingularQuery,
    SingularQuerySegment, Test, TestFunction,
};
use regex::RegexBuilder;
use serde_json::Value;

use crate::text::thousands;

/// The most nodes one query may visit, its filters' subqueries included.
pub const MAX_QUERY_NODES: u64 = 1_000_000;

/// The most bytes of node locations (`$['a'][0]`) one query may hold at once.
pub const MAX_LOCATION_BYTES: u64 = 256 << 20;

/// What a `match()` or `search()` call costs in nodes: the engine compiles its pattern on every
/// call (with the regex crate's own limit of 10 MB).
const REGEX_CALL_NODES: u64 = 100;

/// What such a call costs when its pattern compiles to more than [`SMALL_PATTERN_BYTES`], or
/// comes from the document (its size is then unknown).
const LARGE_REGEX_CALL_NODES: u64 = 100_000;

/// How many bytes of text a comparison reads for the work of one node visited (`memcmp`).
const COMPARED_BYTES_PER_NODE: u64 = 1024;

/// How many bytes of text a `match()` or `search()` call reads for the work of one node visited.
const SEARCHED_BYTES_PER_NODE: u64 = 64;

/// The compiled size under which a pattern counts as [`REGEX_CALL_NODES`].
const SMALL_PATTERN_BYTES: usize = 64 << 10;

/// The most literal patterns whose size class is remembered.
const MAX_SIZED_PATTERNS: usize = 256;

/// Whether each literal pattern seen compiles within [`SMALL_PATTERN_BYTES`].
static SMALL_PATTERNS: LazyLock<Mutex<HashMap<String, bool>>> = LazyLock::new(Mutex::default);

/// The nodes one `match()` or `search()` call with `pattern` counts for.
fn regex_call_nodes(pattern: &FnArg) -> u64 {
    let FnArg::Literal(Literal::String(pattern)) = pattern else {
        return LARGE_REGEX_CALL_NODES;
    };
    let known = SMALL_PATTERNS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .get(pattern)
        .copied();
    let small = known.unwrap_or_else(|| {
        let small = !matches!(
            RegexBuilder::new(pattern)
                .size_limit(SMALL_PATTERN_BYTES)
                .build(),
            Err(regex::Error::CompiledTooBig(_))
        );
        let mut sized = SMALL_PATTERNS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if sized.len() < MAX_SIZED_PATTERNS {
            sized.insert(pattern.clone(), small);
        }
        small
    });
    if small {
        REGEX_CALL_NODES
    } else {
        LARGE_REGEX_CALL_NODES
    }
}

/// Memory one selected node holds besides its location text.
const NODE_BYTES: u64 = 48;

/// Why a query may not run.
#[derive(Debug, PartialEq, Eq)]
pub enum Exceeded {
    /// More than [`MAX_QUERY_NODES`] nodes.
    Nodes,
    /// More than [`MAX_LOCATION_BYTES`] of locations.
    LocationBytes,
}

impl Exceeded {
    /// The reason, for the check's `jsonpath_error`.
    pub fn reason(&self, path: &str) -> String {
        match self {
            Exceeded::Nodes => format!(
                "JSONPath `{path}` could visit more than {} nodes of this evaluation context \
                 (the limit for one query)",
                thousands(MAX_QUERY_NODES)
            ),
            Exceeded::LocationBytes => format!(
                "JSONPath `{path}` could hold more than {} MiB of node locations for this \
                 evaluation context (the limit for one query)",
                MAX_LOCATION_BYTES >> 20
            ),
        }
    }
}

/// The numbers of a document the bound is computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    /// Nodes, the document itself included.
    nodes: u64,
    /// Levels below the document (0 for a scalar).
    depth: u64,
    /// Members of its largest array or object.
    widest: u64,
    /// Bytes of its longest normalized location, `$` included.
    location: u64,
    /// Bytes of its strings and member names.
    text: u64,
}

impl Shape {
    /// The shape of `document`, whose own location is `location` bytes long, walked without
    /// recursion.
    fn of(document: &Value, location: u64) -> Shape {
        let mut shape = Shape {
            nodes: 0,
            depth: 0,
            widest: 0,
            location,
            text: 0,
        };
        let mut pending = vec![(document, 0u64, location)];
        while let Some((value, depth, location)) = pending.pop() {
            shape.nodes += 1;
            shape.depth = shape.depth.max(depth);
            shape.location = shape.location.max(location);
            match value {
                Value::Array(items) => {
                    shape.widest = shape.widest.max(items.len() as u64);
                    let index_bytes = items.len().to_string().len() as u64 + 2;
                    pending.extend(
                        items
                            .iter()
                            .map(|item| (item, depth + 1, location + index_bytes)),
                    );
                }
                Value::Object(members) => {
                    shape.widest = shape.widest.max(members.len() as u64);
                    pending.extend(members.iter().map(|(key, member)| {
                        shape.text += key.len() as u64;
                        (member, depth + 1, location + name_selector_bytes(key))
                    }));
                }
                Value::String(text) => shape.text += text.len() as u64,
                _ => {}
            }
        }
        shape
    }

    /// What comparing the whole document costs, in nodes: each node, and its text.
    fn compared(self) -> u64 {
        self.nodes + self.text / COMPARED_BYTES_PER_NODE
    }
}

/// Bytes of the location `$` of the evaluation context itself.
pub const ROOT_LOCATION_BYTES: u64 = 1;

/// The most bytes of `[N]` in a normalized location.
pub const INDEX_SELECTOR_BYTES: u64 = 22;

/// Bytes of `['key']` in a normalized location: at most six per control character (`\u0001`),
/// two per quote or backslash.
pub fn name_selector_bytes(key: &str) -> u64 {
    let escaped: u64 = key
        .bytes()
        .map(|byte| match byte {
            b'\'' | b'\\' => 1,
            0..=0x1f => 5,
            _ => 0,
        })
        .sum();
    key.len() as u64 + escaped + 4
}

/// The value a singular query (`$.a[0]`) names in `root`, if any.
fn singular<'v>(root: &'v Value, segments: &[SingularQuerySegment]) -> Option<&'v Value> {
    segments
        .iter()
        .try_fold(root, |value, segment| match segment {
            SingularQuerySegment::Name(name) => value.get(name.as_str()),
            SingularQuerySegment::Index(index) => {
                let items = value.as_array()?;
                let at = match usize::try_from(*index) {
                    Ok(at) => at,
                    Err(_) => items
                        .len()
                        .checked_sub(usize::try_from(index.unsigned_abs()).ok()?)?,
                };
                items.get(at)
            }
        })
}

/// Bounds on the nodes a query holds after some of its steps.
#[derive(Debug, Clone, Copy)]
struct Nodes {
    /// How many nodes.
    count: u64,
    /// How many times one node can be among them.
    repeats: u64,
}

/// The bound of one query run: the shapes it is computed from and the work counted so far.
struct Bound<'a> {
    /// The shape of the node the query starts from.
    start: Shape,
    /// The whole evaluation context, for absolute subqueries (`$` inside a filter).
    root: &'a Value,
    /// Its shape, measured when first needed.
    root_shape: Option<Shape>,
    /// The nodes visited so far.
    visited: u64,
    /// The most nodes held at once by one step.
    peak: u64,
}

/// Refuse a query whose remaining `segments`, run from `start` (whose location is
/// `start_location` bytes long) inside the evaluation context `root`, could exceed a limit.
pub fn admit(
    segments: &[Segment],
    start: &Value,
    start_location: u64,
    root: &Value,
) -> Result<(), Exceeded> {
    let mut bound = Bound {
        start: Shape::of(start, start_location),
        root,
        root_shape: None,
        visited: 0,
        peak: 0,
    };
    let shape = bound.start;
    bound.query(segments, shape);
    if bound.visited > MAX_QUERY_NODES {
        return Err(Exceeded::Nodes);
    }
    let longest = bound
        .start
        .location
        .max(bound.root_shape.map_or(0, |s| s.location));
    if bound.peak.saturating_mul(longest + NODE_BYTES) > MAX_LOCATION_BYTES {
        return Err(Exceeded::LocationBytes);
    }
    Ok(())
}

impl Bound<'_> {
    /// The shape of the whole evaluation context, measured once.
    fn root_shape(&mut self) -> Shape {
        *self
            .root_shape
            .get_or_insert_with(|| Shape::of(self.root, ROOT_LOCATION_BYTES))
    }

    /// Count a query of `segments` run once from a node of the document of `shape`.
    fn query(&mut self, segments: &[Segment], shape: Shape) {
        let one = Nodes {
            count: 1,
            repeats: 1,
        };
        self.query_from(segments, one, shape);
    }

    /// Count a query of `segments` run from each of the nodes `from`: together, as the work of
    /// the runs adds up to that of one run over all of them.
    fn query_from(&mut self, segments: &[Segment], from: Nodes, shape: Shape) {
        let mut nodes = from;
        for segment in segments {
            nodes = self.segment(segment, nodes, shape);
        }
    }

    /// Count nodes visited and note the step's size.
    fn visit(&mut self, count: u64) {
        self.visited = self.visited.saturating_add(count);
        self.peak = self.peak.max(count);
    }

    fn segment(&mut self, segment: &Segment, nodes: Nodes, shape: Shape) -> Nodes {
        match segment {
            Segment::Selector(selector) => self.selector(selector, nodes, shape),
            Segment::Selectors(selectors) => {
                let mut out = Nodes {
                    count: 0,
                    repeats: 0,
                };
                for selector in selectors {
                    // Each selector runs on its own copy of the step.
                    self.visit(nodes.count);
                    let selected = self.selector(selector, nodes, shape);
                    out.count = out.count.saturating_add(selected.count);
                    out.repeats = out.repeats.saturating_add(selected.repeats);
                }
                out
            }
            Segment::Descendant(inner) => {
                // Every node and its descendants; a node recurs once per ancestor-or-self in
                // the step, and is moved once per level on the way up.
                let levels = shape.depth + 1;
                let repeats = nodes.repeats.saturating_mul(levels);
                let count = nodes
                    .count
                    .saturating_mul(shape.nodes)
                    .min(repeats.saturating_mul(shape.nodes));
                self.visit(count.saturating_mul(levels));
                self.peak = self.peak.max(count);
                self.segment(inner, Nodes { count, repeats }, shape)
            }
        }
    }

    fn selector(&mut self, selector: &Selector, nodes: Nodes, shape: Shape) -> Nodes {
        let children = nodes
            .count
            .saturating_mul(shape.widest)
            .min(nodes.repeats.saturating_mul(shape.nodes));
        match selector {
            Selector::Name(_) | Selector::Index(_) => {
                self.visit(nodes.count);
                nodes
            }
            Selector::Wildcard | Selector::Slice(..) => {
                self.visit(children);
                Nodes {
                    count: children,
                    repeats: nodes.repeats,
                }
            }
            Selector::Filter(filter) => {
                // The filter runs once per child, from that child: its relative subqueries are
                // counted over all the children at once (a child's own children are few where
                // others' are many), the rest once per child.
                let candidates = Nodes {
                    count: children,
                    repeats: nodes.repeats,
                };
                self.visit(children);
                self.filter(filter, candidates, shape);
                candidates
            }
        }
    }

    /// Count `filter` run from each of the candidates `from`.
    fn filter(&mut self, filter: &Filter, from: Nodes, shape: Shape) {
        match filter {
            Filter::Or(parts) | Filter::And(parts) => {
                for part in parts {
                    self.filter(part, from, shape);
                }
            }
            Filter::Atom(FilterAtom::Filter { expr, .. }) => self.filter(expr, from, shape),
            Filter::Atom(FilterAtom::Test { expr, .. }) => self.test(expr, from, shape),
            Filter::Atom(FilterAtom::Comparison(comparison)) => {
                let (left, right) = match comparison.as_ref() {
                    Comparison::Eq(left, right)
                    | Comparison::Ne(left, right)
                    | Comparison::Gt(left, right)
                    | Comparison::Gte(left, right)
                    | Comparison::Lt(left, right)
                    | Comparison::Lte(left, right) => (left, right),
                };
                // Equal values are compared whole; the smaller side bounds the work.
                let left = self.comparable(left, from, shape);
                let right = self.comparable(right, from, shape);
                self.visited = self.visited.saturating_add(left.min(right));
            }
        }
    }

    fn test(&mut self, test: &Test, from: Nodes, shape: Shape) {
        match test {
            Test::RelQuery(segments) => self.query_from(segments, from, shape),
            Test::AbsQuery(query) => {
                // The same query from the root, once per candidate.
                let root = self.root_shape();
                let before = self.visited;
                self.query(&query.segments, root);
                let once = self.visited - before;
                self.visited = before.saturating_add(once.saturating_mul(from.count));
            }
            Test::Function(function) => self.function(function, from, shape),
        }
    }

    /// Count a comparable evaluated for each of the candidates `from`; what comparing its
    /// values costs over all of them, in nodes ([`Shape::compared`]).
    fn comparable(&mut self, comparable: &Comparable, from: Nodes, shape: Shape) -> u64 {
        match comparable {
            Comparable::Literal(literal) => {
                self.visit(from.count);
                let text = match literal {
                    Literal::String(text) => text.len() as u64,
                    _ => 0,
                };
                from.count
                    .saturating_mul(1 + text / COMPARED_BYTES_PER_NODE)
            }
            Comparable::SingularQuery(SingularQuery::Current(_)) => {
                self.visit(from.count);
                // Each candidate's own value: together at most the document, once per time a
                // node recurs among the candidates.
                from.repeats
                    .min(from.count)
                    .saturating_mul(shape.compared())
            }
            Comparable::SingularQuery(SingularQuery::Root(segments)) => {
                self.visit(from.count);
                // The same value for every candidate.
                let value = singular(self.root, segments);
                let once = value.map_or(1, |value| Shape::of(value, 0).compared());
                from.count.saturating_mul(once)
            }
            Comparable::Function(function) => {
                self.function(function, from, shape);
                from.repeats
                    .min(from.count)
                    .saturating_mul(shape.compared())
                    .max(from.count)
            }
        }
    }

    fn function(&mut self, function: &TestFunction, from: Nodes, shape: Shape) {
        match function {
            TestFunction::Custom(_, args) => {
                for arg in args {
                    self.argument(arg, from, shape);
                }
            }
            TestFunction::Length(arg) => {
                self.argument(arg, from, shape);
                // Counting a string's characters reads it.
                let read = self.text_read(arg, from, shape);
                self.visited = self.visited.saturating_add(read / COMPARED_BYTES_PER_NODE);
            }
            TestFunction::Value(arg) | TestFunction::Count(arg) => self.argument(arg, from, shape),
            TestFunction::Search(text, pattern) | TestFunction::Match(text, pattern) => {
                self.argument(text, from, shape);
                self.argument(pattern, from, shape);
                // Work, not nodes held: compiling the pattern on every call, and reading the
                // text (each candidate's own, or the same text for every candidate).
                let calls = regex_call_nodes(pattern).saturating_mul(from.count);
                let read = self.text_read(text, from, shape);
                let work = calls.saturating_add(read / SEARCHED_BYTES_PER_NODE);
                self.visited = self.visited.saturating_add(work);
            }
        }
    }

    /// The bytes of text a function reads of its argument `text` over all the candidates
    /// `from`: each candidate's own, or the same text for every candidate.
    fn text_read(&mut self, text: &FnArg, from: Nodes, shape: Shape) -> u64 {
        match text {
            FnArg::Literal(Literal::String(text)) => from.count.saturating_mul(text.len() as u64),
            FnArg::Literal(_) => 0,
            FnArg::Test(test) if matches!(**test, Test::RelQuery(_)) => {
                from.repeats.min(from.count).saturating_mul(shape.text)
            }
            FnArg::Test(_) | FnArg::Filter(_) => {
                let root = self.root_shape();
                from.count.saturating_mul(root.text.max(shape.text))
            }
        }
    }

    fn argument(&mut self, arg: &FnArg, from: Nodes, shape: Shape) {
        match arg {
            FnArg::Literal(_) => self.visit(from.count),
            FnArg::Test(test) => self.test(test, from, shape),
            FnArg::Filter(filter) => self.filter(filter, from, shape),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonpath_rust::parser::parse_json_path;
    use serde_json::json;

    fn admitted(path: &str, document: &Value) -> Result<(), Exceeded> {
        admit(
            &parse_json_path(path).unwrap().segments,
            document,
            ROOT_LOCATION_BYTES,
            document,
        )
    }

    fn nested(depth: usize) -> Value {
        (0..depth).fold(json!([]), |inner, _| json!([inner]))
    }

    #[test]
    fn the_shape_counts_nodes_depth_width_and_the_longest_location() {
        let document = json!({"a": [1, 2, {"it's": null}], "b": "x"});
        assert_eq!(
            Shape::of(&document, ROOT_LOCATION_BYTES),
            Shape {
                nodes: 7,
                depth: 3,
                widest: 3,
                // $['a'][2]['it\'s']
                location: 18,
                // a, it's, b and "x"
                text: 7,
            }
        );
        assert_eq!(Shape::of(&nested(3), ROOT_LOCATION_BYTES).depth, 3);
        assert_eq!(Shape::of(&json!([]), 100).location, 100);
    }

    #[test]
    fn ordinary_queries_are_admitted() {
        let wide = json!({"items": (0..5_000).map(|n| json!({"n": n, "tags": ["a", "b"]}))
            .collect::<Vec<_>>()});
        for path in [
            "$..n",
            "$.items[*].tags[0]",
            "$.items[?@.n > 5].n",
            "$.items[?match(@.tags[0], 'a')]",
            "$..items[-1:]",
            // A filter inside a filter: each item's own tags, not the widest array, per item.
            "$.items[?@.tags[?@ == 'x']].n",
            "$.items[?@..n].n",
        ] {
            assert_eq!(admitted(path, &wide), Ok(()), "{path}");
        }
        assert_eq!(admitted("$..*..*", &nested(50)), Ok(()));
    }

    #[test]
    fn queries_that_multiply_beyond_the_limits_are_refused() {
        assert_eq!(
            admitted("$..*..*..*..*", &nested(120)),
            Err(Exceeded::Nodes)
        );
        let wide = json!((0..2_000).collect::<Vec<_>>());
        assert_eq!(admitted("$[?$[*]]", &wide), Err(Exceeded::Nodes));
        assert_eq!(admitted("$[?count($..*) > 0]", &wide), Err(Exceeded::Nodes));
        // A pattern that compiles large, or comes from the document, costs more per call.
        let items = json!((0..100).map(|n| n.to_string()).collect::<Vec<_>>());
        assert_eq!(admitted("$[?match(@, '[0-9]{2}')]", &items), Ok(()));
        assert_eq!(
            admitted("$[?match(@, '\\\\w{300}')]", &items),
            Err(Exceeded::Nodes)
        );
        assert_eq!(admitted("$[?match(@, $[0])]", &items), Err(Exceeded::Nodes));
        // Comparing two arrays costs their elements, two strings their bytes, per candidate;
        // a pattern's text costs what it reads.
        let zeros = json!({"arr": vec![0; 2_000]});
        assert_eq!(admitted("$.arr[?@ == $.arr[0]]", &zeros), Ok(()));
        assert_eq!(
            admitted("$.arr[?$.arr == $.arr]", &zeros),
            Err(Exceeded::Nodes)
        );
        let long = json!({"big": "x".repeat(1_000_000), "items": vec![0; 2_000]});
        assert_eq!(admitted("$.items[?@ == 0]", &long), Ok(()));
        assert_eq!(
            admitted("$.items[?$.big == $.big]", &long),
            Err(Exceeded::Nodes)
        );
        assert_eq!(
            admitted("$.items[?search($.big, 'x')]", &long),
            Err(Exceeded::Nodes)
        );
        // Counting a long text's characters once per candidate reads it each time.
        assert_eq!(
            admitted("$.items[?length($.big) > 1]", &long),
            Err(Exceeded::Nodes)
        );
        assert_eq!(admitted("$.items[?length(@) > 1]", &long), Ok(()));
        let key = "k".repeat(50_000);
        let long_keys = (0..100).fold(json!(1), |inner, _| json!({key.as_str(): inner}));
        assert_eq!(admitted("$..*", &long_keys), Err(Exceeded::LocationBytes));
        // A long leading path makes every location below it long.
        let wide = json!((0..200_000).collect::<Vec<_>>());
        let segments = parse_json_path("$[*]").unwrap().segments;
        assert_eq!(admit(&segments, &wide, 1, &wide), Ok(()));
        assert_eq!(
            admit(&segments, &wide, 2_000, &wide),
            Err(Exceeded::LocationBytes)
        );
    }

    #[test]
    fn reasons_name_the_limits() {
        assert_eq!(
            Exceeded::Nodes.reason("$..*"),
            "JSONPath `$..*` could visit more than 1,000,000 nodes of this evaluation context \
             (the limit for one query)"
        );
        assert_eq!(
            Exceeded::LocationBytes.reason("$..*"),
            "JSONPath `$..*` could hold more than 256 MiB of node locations for this evaluation \
             context (the limit for one query)"
        );
    }
}
