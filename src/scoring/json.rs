//! JSON primitives for scoring: deep equality under a chosen number rule, and JSON Schema
//! validators compiled the one way every vocabulary compiles them (2020-12 rules, the
//! linear-time `regex` engine for `pattern` within the size limits of every pattern from an
//! input, at most [`MAX_SCHEMA_PATTERNS`] patterns a schema, no network).

use serde_json::{Number, Value};

use crate::patterns::MAX_COMPILED_BYTES;

/// Deep equality with every number compared as an f64.
pub fn equal_as_f64(a: &Value, b: &Value) -> bool {
    deep_equal(a, b, |a, b| {
        a.as_f64() == b.as_f64() && a.as_f64().is_some()
    })
}

/// Deep equality where an integer literal and a float literal differ (`1` ≠ `1.0`).
pub fn equal_typed(a: &Value, b: &Value) -> bool {
    deep_equal(a, b, |a, b| {
        let a = typed_number(a);
        a.is_some() && a == typed_number(b)
    })
}

/// Deep equality of two values, numbers compared by `numbers_equal`.
fn deep_equal(a: &Value, b: &Value, numbers_equal: fn(&Number, &Number) -> bool) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => numbers_equal(a, b),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(a, b)| deep_equal(a, b, numbers_equal))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, a)| b.get(key).is_some_and(|b| deep_equal(a, b, numbers_equal)))
        }
        _ => a == b,
    }
}

/// A number as its literal reads: an integer literal, or a float.
#[derive(PartialEq)]
enum TypedNumber {
    Integer(i64),
    Float(f64),
}

fn typed_number(number: &Number) -> Option<TypedNumber> {
    let literal = number.to_string();
    if !literal.contains(['.', 'e', 'E']) {
        if let Ok(integer) = literal.parse::<i64>() {
            return Some(TypedNumber::Integer(integer));
        }
    }
    number.as_f64().map(TypedNumber::Float)
}

/// The most patterns one schema may hold (`pattern` strings and `patternProperties` keys, as
/// many as it names, repeats included): each compiles to at most [`MAX_COMPILED_BYTES`], and its
/// lazy DFA takes as much, so a schema's patterns cost at most 64 MiB to compile and hold.
pub const MAX_SCHEMA_PATTERNS: usize = 32;

/// The most JSON values one schema may hold: a compiled schema takes about 700 bytes a value
/// (measured on schemas of objects of typed properties), so one compiles to at most about 14 MB
/// beside its patterns (a 7.5 MB schema of 480,000 values took 320 MB).
pub const MAX_SCHEMA_VALUES: usize = 20_000;

/// The most steps one validation may take: a step is one subschema applied to one part of the
/// document, counted as often as the schema reaches it (through `oneOf`, `$ref` and the rest).
/// A schema whose branches each reach the same parts (`oneOf` of two `$ref`s, nested) takes
/// steps exponential in the document's depth; a usual schema takes about its size times the
/// document's. Counted before validating, so a schema and document past it cost next to nothing.
pub const MAX_VALIDATION_STEPS: u64 = 250_000;

/// How many bytes of a string a `pattern` or length check scans for one step of the count.
const SCANNED_BYTES_A_STEP: usize = 64;

/// How deep the count may go through subschemas and the document together.
const MAX_STEP_DEPTH: usize = 512;

/// The most subschemas compiling a schema's `unevaluatedProperties` and `unevaluatedItems` may
/// walk: each walks the subschemas beside it, through every `$ref`, anew (nested ones took
/// 37 s to compile at 13 levels of two references in a 1.6 KB request).
pub const MAX_ANNOTATION_STEPS: u64 = 10_000;

/// Why a schema would take too much work on a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TooMuchWork {
    /// More than [`MAX_VALIDATION_STEPS`].
    Steps,
    /// Subschemas and document nest past [`MAX_STEP_DEPTH`] together, or a subschema reaches
    /// itself without descending into the document (a `$ref` loop).
    Depth,
    /// More than [`MAX_ANNOTATION_STEPS`] to compile.
    Annotations,
    /// The document holds a number no 64-bit float holds (`1e400`): the validator can neither
    /// compare nor hash it (every such number hashes alike, and none equals another).
    HugeNumber,
}

impl std::fmt::Display for TooMuchWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TooMuchWork::Steps => write!(
                f,
                "validating this document against the schema would take more than \
                 {MAX_VALIDATION_STEPS} steps (each subschema counted for each part of the \
                 document it applies to, as often as oneOf, anyOf, allOf and $ref reach it)"
            ),
            TooMuchWork::Depth => write!(
                f,
                "the schema's subschemas and the document nest deeper than {MAX_STEP_DEPTH} \
                 levels together, or a $ref leads back to where it stands without descending \
                 into the document"
            ),
            TooMuchWork::Annotations => write!(
                f,
                "compiling the schema's unevaluatedProperties and unevaluatedItems would walk \
                 more than {MAX_ANNOTATION_STEPS} subschemas (each walks the subschemas beside \
                 it, through every $ref)"
            ),
            TooMuchWork::HugeNumber => f.write_str(
                "the document holds a number beyond what a 64-bit float holds, which the \
                 validator cannot compare",
            ),
        }
    }
}

/// Count the steps validating `instance` against `schema` takes, at most: every applicator's
/// subschemas are counted (both of `then` and `else`, every `$ref` target a reference may name),
/// so the count is never under the validator's work. The count stops past
/// [`MAX_VALIDATION_STEPS`], so it costs at most that many steps itself.
pub fn within_validation_bounds(schema: &Value, instance: &Value) -> Result<(), TooMuchWork> {
    if holds_a_huge_number(instance) {
        return Err(TooMuchWork::HugeNumber);
    }
    let mut count = StepCount::new(schema, MAX_VALIDATION_STEPS);
    count.steps(schema, instance, 0)
}

/// Whether `value` holds a number no finite 64-bit float holds.
fn holds_a_huge_number(value: &Value) -> bool {
    match value {
        Value::Number(number) => number.as_f64().is_none_or(|number| !number.is_finite()),
        Value::Array(items) => items.iter().any(holds_a_huge_number),
        Value::Object(members) => members.values().any(holds_a_huge_number),
        _ => false,
    }
}

/// Count, at most, the subschemas compiling `schema` walks for its `unevaluatedProperties` and
/// `unevaluatedItems`: for each, those beside it, in place, through every `$ref`. `Ok` when
/// within [`MAX_ANNOTATION_STEPS`].
fn within_compile_bounds(schema: &Value) -> Result<(), TooMuchWork> {
    let mut count = StepCount::new(schema, MAX_ANNOTATION_STEPS);
    let mut annotated = Vec::new();
    gather_annotated(schema, 0, &mut annotated);
    for node in annotated {
        // A key is a document part that no subschema descends into: only in-place ones apply.
        count
            .steps(node, &KEY, 0)
            .map_err(|too_much| match too_much {
                TooMuchWork::Steps => TooMuchWork::Annotations,
                other => other,
            })?;
    }
    Ok(())
}

/// The subschemas under `value` that hold `unevaluatedProperties` or `unevaluatedItems`.
fn gather_annotated<'s>(value: &'s Value, depth: usize, found: &mut Vec<&'s Value>) {
    if depth > MAX_STEP_DEPTH {
        return;
    }
    match value {
        Value::Object(members) => {
            if members.contains_key("unevaluatedProperties")
                || members.contains_key("unevaluatedItems")
            {
                found.push(value);
            }
            for member in members.values() {
                gather_annotated(member, depth + 1, found);
            }
        }
        Value::Array(items) => {
            for item in items {
                gather_annotated(item, depth + 1, found);
            }
        }
        _ => {}
    }
}

/// How many parts (values, at every depth) `value` has: what comparing it costs.
fn parts(value: &Value) -> u64 {
    match value {
        Value::Array(items) => 1 + items.iter().map(parts).sum::<u64>(),
        Value::Object(members) => 1 + members.values().map(parts).sum::<u64>(),
        _ => 1,
    }
}

/// The state of one count: where references lead, and the steps counted so far.
struct StepCount<'s> {
    /// The schema and each subschema with an `$id`, against which a pointer may resolve.
    resources: Vec<&'s Value>,
    /// Each `$anchor` and `$dynamicAnchor` name, with the subschemas that declare it.
    anchors: std::collections::HashMap<&'s str, Vec<&'s Value>>,
    /// The targets of each reference met so far.
    targets: std::collections::HashMap<&'s str, std::rc::Rc<[&'s Value]>>,
    steps: u64,
    /// The most steps counted before the count stops.
    limit: u64,
}

/// The document part a `propertyNames` subschema sees: a key, to which only in-place keywords
/// apply.
static KEY: Value = Value::Null;

impl<'s> StepCount<'s> {
    fn new(schema: &'s Value, limit: u64) -> StepCount<'s> {
        let mut count = StepCount {
            resources: vec![schema],
            anchors: std::collections::HashMap::new(),
            targets: std::collections::HashMap::new(),
            steps: 0,
            limit,
        };
        count.index(schema, 0);
        count
    }

    /// Note the resources and anchors under `value`.
    fn index(&mut self, value: &'s Value, depth: usize) {
        if depth > MAX_STEP_DEPTH {
            return;
        }
        match value {
            Value::Object(members) => {
                if members.get("$id").is_some_and(Value::is_string) && depth > 0 {
                    self.resources.push(value);
                }
                for name in ["$anchor", "$dynamicAnchor", "$recursiveAnchor"] {
                    if let Some(Value::String(anchor)) = members.get(name) {
                        self.anchors.entry(anchor).or_default().push(value);
                    }
                }
                for member in members.values() {
                    self.index(member, depth + 1);
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.index(item, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// The subschemas `reference` may name: a JSON pointer tried against every resource (those
    /// whose `$id` it names, else all), or an anchor.
    fn resolve(&self, reference: &str) -> Vec<&'s Value> {
        let (uri, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let fragment = percent_decoded(fragment);
        if !(fragment.is_empty() || fragment.starts_with('/')) {
            return self
                .anchors
                .get(fragment.as_str())
                .cloned()
                .unwrap_or_default();
        }
        let named = |resource: &&&'s Value| {
            resource
                .get("$id")
                .and_then(Value::as_str)
                .is_some_and(|id| {
                    id.trim_end_matches('#')
                        .ends_with(uri.trim_start_matches("./"))
                })
        };
        let mut found: Vec<&'s Value> = (self.resources.iter())
            .filter(|resource| uri.is_empty() || named(resource))
            .filter_map(|resource| resource.pointer(&fragment))
            .collect();
        if found.is_empty() && !uri.is_empty() {
            found = (self.resources.iter())
                .filter_map(|resource| resource.pointer(&fragment))
                .collect();
        }
        found.sort_by_key(|target| std::ptr::from_ref(*target) as usize);
        found.dedup_by_key(|target| std::ptr::from_ref(*target) as usize);
        found
    }

    /// Count `steps` more; past the limit, stop.
    fn add(&mut self, steps: u64) -> Result<(), TooMuchWork> {
        self.steps = self.steps.saturating_add(steps);
        match self.steps > self.limit {
            true => Err(TooMuchWork::Steps),
            false => Ok(()),
        }
    }

    /// Count the steps of `schema` applied to `instance`, `depth` levels into the count.
    fn steps(
        &mut self,
        schema: &'s Value,
        instance: &Value,
        depth: usize,
    ) -> Result<(), TooMuchWork> {
        self.add(1)?;
        let Value::Object(keywords) = schema else {
            return Ok(());
        };
        if depth > MAX_STEP_DEPTH {
            return Err(TooMuchWork::Depth);
        }
        let next = depth + 1;
        // `unevaluatedProperties` and `unevaluatedItems` have the subschemas beside them applied
        // again, to learn what they evaluated.
        let passes = match keywords.contains_key("unevaluatedProperties")
            || keywords.contains_key("unevaluatedItems")
        {
            true => 2,
            false => 1,
        };
        for (keyword, value) in keywords {
            match (keyword.as_str(), instance) {
                ("allOf" | "anyOf" | "oneOf", _) => {
                    for _ in 0..passes {
                        for sub in value.as_array().into_iter().flatten() {
                            self.steps(sub, instance, next)?;
                        }
                    }
                }
                ("not" | "if" | "then" | "else", _) => {
                    for _ in 0..passes {
                        self.steps(value, instance, next)?;
                    }
                }
                ("dependentSchemas" | "dependencies", _) => {
                    for _ in 0..passes {
                        for sub in value.as_object().into_iter().flat_map(|subs| subs.values()) {
                            self.steps(sub, instance, next)?;
                        }
                    }
                }
                ("$ref" | "$dynamicRef" | "$recursiveRef", _) => {
                    let reference = value.as_str().unwrap_or_default();
                    let targets = match self.targets.get(reference) {
                        Some(targets) => targets.clone(),
                        None => {
                            let targets: std::rc::Rc<[&'s Value]> = self.resolve(reference).into();
                            self.targets.insert(reference, targets.clone());
                            targets
                        }
                    };
                    for _ in 0..passes {
                        for target in targets.iter() {
                            self.steps(target, instance, next)?;
                        }
                    }
                }
                ("prefixItems", Value::Array(items)) => {
                    for (sub, item) in value.as_array().into_iter().flatten().zip(items) {
                        self.steps(sub, item, next)?;
                    }
                }
                ("items", Value::Array(items)) if value.is_array() => {
                    for (sub, item) in value.as_array().into_iter().flatten().zip(items) {
                        self.steps(sub, item, next)?;
                    }
                }
                (
                    "items" | "additionalItems" | "unevaluatedItems" | "contains",
                    Value::Array(items),
                ) => {
                    for item in items {
                        self.steps(value, item, next)?;
                    }
                }
                ("properties", Value::Object(members)) => {
                    for (name, sub) in value.as_object().into_iter().flatten() {
                        if let Some(member) = members.get(name) {
                            self.steps(sub, member, next)?;
                        }
                    }
                }
                ("patternProperties", Value::Object(members)) => {
                    for sub in value.as_object().into_iter().flat_map(|subs| subs.values()) {
                        for member in members.values() {
                            self.steps(sub, member, next)?;
                        }
                    }
                }
                ("additionalProperties", Value::Object(members)) => {
                    // The members `properties` names are not additional (with
                    // `patternProperties` beside it, any may be).
                    let named = (keywords.get("properties").and_then(Value::as_object))
                        .filter(|_| !keywords.contains_key("patternProperties"));
                    for (name, member) in members {
                        if !named.is_some_and(|named| named.contains_key(name)) {
                            self.steps(value, member, next)?;
                        }
                    }
                }
                ("unevaluatedProperties", Value::Object(members)) => {
                    for member in members.values() {
                        self.steps(value, member, next)?;
                    }
                }
                // What these compare or scan costs as much as the parts compared, the text
                // scanned (a pattern applied 20,000 times to 200 KB ran for minutes).
                ("uniqueItems", Value::Array(items)) if value == &Value::Bool(true) => {
                    self.add(items.len() as u64)?;
                }
                ("pattern" | "minLength" | "maxLength" | "format", Value::String(text)) => {
                    self.add((text.len() / SCANNED_BYTES_A_STEP) as u64)?;
                }
                ("const", _) => self.add(parts(value))?,
                ("enum", _) => {
                    let values = value.as_array().into_iter().flatten();
                    self.add(values.map(parts).sum())?;
                }
                ("propertyNames", Value::Object(members)) => {
                    for _ in members.keys() {
                        self.steps(value, &KEY, next)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// `text` with each `%XX` escape decoded (a JSON pointer in a URI fragment).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escaped = (bytes[at] == b'%')
            .then(|| text.get(at + 1..at + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                at += 3;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Why a schema gave no validator.
#[derive(Debug)]
pub struct SchemaError {
    /// A `$ref` did not resolve (the schema may be well formed).
    pub unresolved: bool,
    /// The reason, as the validator words it.
    pub reason: String,
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// A validator for `schema` with JSON Schema 2020-12 rules and the `regex` crate for `pattern`,
/// each pattern compiled within [`MAX_COMPILED_BYTES`]; a schema of more than
/// [`MAX_SCHEMA_VALUES`] values or [`MAX_SCHEMA_PATTERNS`] patterns is refused before anything
/// is compiled.
pub fn schema_validator(schema: &Value) -> Result<jsonschema::Validator, SchemaError> {
    if holds_more_values_than(schema, MAX_SCHEMA_VALUES) {
        return Err(SchemaError {
            unresolved: false,
            reason: format!(
                "the schema holds more than {MAX_SCHEMA_VALUES} JSON values, the most one schema \
                 may hold"
            ),
        });
    }
    let patterns = patterns_in(schema);
    if patterns > MAX_SCHEMA_PATTERNS {
        return Err(SchemaError {
            unresolved: false,
            reason: format!(
                "the schema holds {patterns} patterns (pattern, patternProperties), more than \
                 the {MAX_SCHEMA_PATTERNS} one schema may hold"
            ),
        });
    }
    if let Err(too_much) = within_compile_bounds(schema) {
        return Err(SchemaError {
            unresolved: false,
            reason: too_much.to_string(),
        });
    }
    let pattern_options = jsonschema::PatternOptions::regex()
        .size_limit(MAX_COMPILED_BYTES)
        .dfa_size_limit(MAX_COMPILED_BYTES);
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_pattern_options(pattern_options)
        .build(schema)
        .map_err(|err| SchemaError {
            unresolved: matches!(
                err.kind(),
                jsonschema::error::ValidationErrorKind::Referencing(_)
            ),
            reason: err.to_string(),
        })
}

/// Whether `value` holds more than `most` JSON values (itself, its members and items, at every
/// depth); counting stops there.
fn holds_more_values_than(value: &Value, most: usize) -> bool {
    let mut counted = 0;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        counted += 1;
        if counted > most {
            return true;
        }
        match value {
            Value::Object(members) => pending.extend(members.values()),
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    false
}

/// How many patterns `schema` names: `pattern` members whose value is a string, and the keys
/// of `patternProperties` objects, wherever they stand.
fn patterns_in(schema: &Value) -> usize {
    match schema {
        Value::Object(members) => members
            .iter()
            .map(|(name, value)| {
                let own = match (name.as_str(), value) {
                    ("pattern", Value::String(_)) => 1,
                    ("patternProperties", Value::Object(keys)) => keys.len(),
                    _ => 0,
                };
                own + patterns_in(value)
            })
            .sum(),
        Value::Array(items) => items.iter().map(patterns_in).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `{"$defs": {"d0": {}, "dN": {"allOf": [REF(N-1), REF(N-1)]}}, "$ref": REF(depth)}`: 2^depth
    /// steps on any document, wherever `reference` makes each reference lead.
    fn doubling(
        depth: usize,
        name: impl Fn(usize) -> Value,
        reference: impl Fn(usize) -> String,
    ) -> Value {
        let mut defs = serde_json::Map::new();
        defs.insert("d0".into(), name(0));
        for level in 1..=depth {
            let below = json!({"$ref": reference(level - 1)});
            let mut def = name(level);
            def["allOf"] = json!([below, below]);
            defs.insert(format!("d{level}"), def);
        }
        json!({"$defs": defs, "$ref": reference(depth)})
    }

    #[test]
    fn the_steps_of_a_validation_follow_every_reference_and_stop_at_the_bound() {
        let plain = |_: usize| json!({});
        // About 2^17 steps are within the bound; 2^20 are not, by pointer, percent-escaped pointer,
        // anchor or `$id`.
        let by_pointer = |level: usize| format!("#/$defs/d{level}");
        assert_eq!(
            within_validation_bounds(&doubling(15, plain, by_pointer), &json!(1)),
            Ok(())
        );
        assert_eq!(
            within_validation_bounds(&doubling(18, plain, by_pointer), &json!(1)),
            Err(TooMuchWork::Steps)
        );
        type Name = Box<dyn Fn(usize) -> Value>;
        type Reference = Box<dyn Fn(usize) -> String>;
        let ways: [(&str, Name, Reference); 3] = [
            (
                "percent-escaped pointer",
                Box::new(plain),
                Box::new(|level| format!("#/%24defs/d{level}")),
            ),
            (
                "anchor",
                Box::new(|level| json!({"$anchor": format!("a{level}")})),
                Box::new(|level| format!("#a{level}")),
            ),
            (
                "$id",
                Box::new(|level| json!({"$id": format!("https://example.com/d{level}")})),
                Box::new(|level| format!("d{level}")),
            ),
        ];
        for (way, name, reference) in ways {
            assert_eq!(
                within_validation_bounds(&doubling(18, name, reference), &json!(1)),
                Err(TooMuchWork::Steps),
                "{way}"
            );
        }
        // What descends into the document counts each part it reaches.
        let items = json!({"items": {"properties": {"a": {"type": "string"}}}});
        let document = json!(vec![json!({"a": "x"}); 1000]);
        assert_eq!(within_validation_bounds(&items, &document), Ok(()));
        let document = json!(vec![json!({"a": "x"}); 130_000]);
        assert_eq!(
            within_validation_bounds(&items, &document),
            Err(TooMuchWork::Steps)
        );
        // `unevaluatedProperties` applies the subschemas beside it again: twice a level.
        let mut defs = serde_json::Map::new();
        let mut document = json!({});
        defs.insert("d0".into(), json!({}));
        for level in 1..=20 {
            let below = json!({"$ref": format!("#/$defs/d{}", level - 1)});
            defs.insert(
                format!("d{level}"),
                json!({"anyOf": [{"properties": {"a": below}}], "unevaluatedProperties": false}),
            );
            document = json!({ "a": document });
        }
        let annotated = json!({"$defs": defs, "$ref": "#/$defs/d20"});
        assert_eq!(
            within_validation_bounds(&annotated, &document),
            Err(TooMuchWork::Steps)
        );
        // A reference back to where it stands never descends: never ends.
        let a_loop = json!({"$defs": {"a": {"not": {"$ref": "#/$defs/a"}}}, "$ref": "#/$defs/a"});
        assert_eq!(
            within_validation_bounds(&a_loop, &json!(1)),
            Err(TooMuchWork::Depth)
        );
    }

    #[test]
    fn what_compiling_and_comparing_cost_is_counted_too() {
        // Each `unevaluatedProperties` walks the references beside it anew when compiled.
        let mut defs = serde_json::Map::new();
        defs.insert(
            "d0".into(),
            json!({"properties": {"a": {"type": "integer"}}}),
        );
        for level in 1..=12 {
            let below = json!({"$ref": format!("#/$defs/d{}", level - 1)});
            defs.insert(
                format!("d{level}"),
                json!({"anyOf": [below, below], "unevaluatedProperties": false}),
            );
        }
        let schema = json!({"$defs": defs, "properties": {"never": {"$ref": "#/$defs/d12"}}});
        assert_eq!(
            schema_validator(&schema).unwrap_err().reason,
            TooMuchWork::Annotations.to_string()
        );
        let usual = json!({"allOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}],
            "unevaluatedProperties": false,
            "$defs": {"a": {"properties": {"x": {}}}, "b": {"properties": {"y": {}}}}});
        assert!(schema_validator(&usual).is_ok());
        // A number no float holds cannot be compared or hashed.
        let unique = json!({"uniqueItems": true});
        let huge: Value = serde_json::from_str("[1e400, 1e400]").unwrap();
        assert_eq!(
            within_validation_bounds(&unique, &huge),
            Err(TooMuchWork::HugeNumber)
        );
        // `uniqueItems`, `const` and `enum` cost as much as what they compare.
        let many = json!((0..300_000).collect::<Vec<u32>>());
        assert_eq!(
            within_validation_bounds(&unique, &many),
            Err(TooMuchWork::Steps)
        );
        assert_eq!(within_validation_bounds(&json!({}), &many), Ok(()));
        let big_const = json!({"items": {"const": (0..100).collect::<Vec<u32>>()}});
        assert_eq!(
            within_validation_bounds(&big_const, &json!(vec![0; 3000])),
            Err(TooMuchWork::Steps)
        );
        // A pattern scans its text: applied 300 times to 64 KB it is past the bound.
        let mut defs = serde_json::Map::new();
        defs.insert("p".into(), json!({"pattern": "a$"}));
        let scanned = json!({"$defs": defs, "allOf": vec![json!({"$ref": "#/$defs/p"}); 300]});
        assert_eq!(
            within_validation_bounds(&scanned, &json!("b".repeat(64 << 10))),
            Err(TooMuchWork::Steps)
        );
        assert_eq!(
            within_validation_bounds(&scanned, &json!("b".repeat(1 << 10))),
            Ok(())
        );
        // The members `properties` names are not additional: 20,000 records of ten fields are
        // 11 steps each.
        let fields: serde_json::Map<String, Value> = (0..10)
            .map(|field| (format!("f{field}"), json!({"type": "string"})))
            .collect();
        let records = json!({"items": {"properties": fields, "additionalProperties": false}});
        let record: serde_json::Map<String, Value> = (0..10)
            .map(|field| (format!("f{field}"), json!("x")))
            .collect();
        assert_eq!(
            within_validation_bounds(&records, &json!(vec![record; 20_000])),
            Ok(())
        );
    }

    #[test]
    fn number_rules() {
        assert!(equal_as_f64(&json!({"a": [1]}), &json!({"a": [1.0]})));
        assert!(!equal_typed(&json!({"a": [1]}), &json!({"a": [1.0]})));
        assert!(equal_typed(
            &json!({"a": [1.5, "x"]}),
            &json!({"a": [1.5, "x"]})
        ));
        assert!(!equal_as_f64(&json!([1, 2]), &json!([1])));
    }
}
