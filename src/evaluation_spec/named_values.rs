//! Named JSON values under names known in advance, in the order they were first set: an event
//! payload's kept members and a validator's evidence (`raw_output`). A list rather than a map:
//! each holds a few names, and every run builds many of them.

use serde_json::{Map, Value};

/// Values by name; a later value under a name replaces the earlier one in place (as in a JSON
/// object). Written as a JSON object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NamedValues(Vec<(&'static str, Value)>);

impl NamedValues {
    /// Set `name` to `value`.
    pub fn insert(&mut self, name: &'static str, value: Value) {
        match self.0.iter_mut().find(|(known, _)| *known == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name, value)),
        }
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, value)| value)
    }

    /// Whether `name` is set.
    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The values as a JSON object.
    pub fn into_map(self) -> Map<String, Value> {
        self.0
            .into_iter()
            .map(|(name, value)| (name.to_string(), value))
            .collect()
    }
}

impl<const N: usize> From<[(&'static str, Value); N]> for NamedValues {
    /// Values from literal pairs, whose names are distinct (checked in debug builds: the
    /// validators build their evidence this way for every run).
    fn from(pairs: [(&'static str, Value); N]) -> Self {
        debug_assert!(
            pairs
                .iter()
                .enumerate()
                .all(|(at, (name, _))| pairs[..at].iter().all(|(earlier, _)| earlier != name)),
            "names repeat"
        );
        NamedValues(Vec::from(pairs))
    }
}

impl std::ops::Index<&str> for NamedValues {
    type Output = Value;

    /// The value of `name`, or `null` when it is not set (as indexing a JSON object).
    fn index(&self, name: &str) -> &Value {
        static NULL: Value = Value::Null;
        self.get(name).unwrap_or(&NULL)
    }
}

impl serde::Serialize for NamedValues {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, value)| (*name, value)))
    }
}
