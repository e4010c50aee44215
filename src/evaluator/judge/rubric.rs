//! The `--rubric FILE.json` format: weighted quality dimensions and hard constraints, validated
//! strictly and in full (every problem, each naming the file and the offending field, in one
//! report) and with weights normalised to sum to 1.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{invalid, Problem};
use crate::input::Source;
use crate::text::{clip, json_type};

/// A validated rubric.
#[derive(Debug, Clone, PartialEq)]
pub struct Rubric {
    /// The quality dimensions, in file order; their weights sum to 1.
    pub dimensions: Vec<Dimension>,
    /// Requirements the candidate must meet; a violation scores 0.
    pub hard_constraints: Vec<String>,
}

/// One quality dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct Dimension {
    /// Its name, as the judge must report it.
    pub name: String,
    /// Its normalised weight (all weights sum to 1).
    pub weight: f64,
    /// What it measures, shown to the judge when given.
    pub description: Option<String>,
}

impl Rubric {
    /// Read and validate a rubric file. Problems are bad input (exit 2), one `FILE: field:
    /// reason` problem each, all of them at once.
    pub fn load(path: &Path) -> anyhow::Result<Rubric> {
        let source = Source::File(path.to_path_buf());
        let value = source
            .read_json("a rubric object {\"dimensions\": [...]}")
            .map_err(|problem| invalid(vec![problem]))?;
        Rubric::from_value(&value).map_err(|problems| {
            invalid(
                problems
                    .into_iter()
                    .map(|problem| Problem::new(source.display(), problem))
                    .collect(),
            )
        })
    }

    /// Validate a parsed rubric; on failure, every problem found, each naming its field.
    pub fn from_value(value: &Value) -> Result<Rubric, Vec<String>> {
        let Value::Object(object) = value else {
            return Err(vec![format!(
                "expected a JSON object, found {}",
                json_type(value)
            )]);
        };
        let mut problems = Vec::new();
        reject_unknown_keys(
            object,
            "",
            &["quality_dimensions", "hard_constraints"],
            &mut problems,
        );
        let mut dimensions = Vec::new();
        let mut names = HashSet::new();
        for (index, item) in array(object, "quality_dimensions", &mut problems)
            .iter()
            .enumerate()
        {
            let field = format!("quality_dimensions[{index}]");
            let Some(dimension) = dimension(item, &field, &mut names, &mut problems) else {
                continue;
            };
            dimensions.push(dimension);
        }
        let hard_constraints: Vec<String> = array(object, "hard_constraints", &mut problems)
            .iter()
            .enumerate()
            .filter_map(|(index, item)| {
                kept(
                    non_empty_string(item, &format!("hard_constraints[{index}]")),
                    &mut problems,
                )
            })
            .collect();
        if !problems.is_empty() {
            return Err(problems);
        }
        let total: f64 = dimensions.iter().map(|d| d.weight).sum();
        for dimension in &mut dimensions {
            dimension.weight /= total;
        }
        Ok(Rubric {
            dimensions,
            hard_constraints,
        })
    }
}

/// The value of `result`, or `None` with its problem recorded.
fn kept<T>(result: Result<T, String>, problems: &mut Vec<String>) -> Option<T> {
    result.map_err(|problem| problems.push(problem)).ok()
}

/// The array under `key`, or an empty slice when the key is absent or (a recorded problem) not an
/// array.
fn array<'a>(object: &'a Map<String, Value>, key: &str, problems: &mut Vec<String>) -> &'a [Value] {
    match object.get(key) {
        None => &[],
        Some(Value::Array(items)) => items,
        Some(other) => {
            problems.push(format!(
                "{key}: expected an array, found {}",
                json_type(other)
            ));
            &[]
        }
    }
}

/// One dimension, checking every field of it (and its name against the `names` seen before);
/// `None` when any of them has a problem, all of which are recorded.
fn dimension(
    item: &Value,
    field: &str,
    names: &mut HashSet<String>,
    problems: &mut Vec<String>,
) -> Option<Dimension> {
    let Value::Object(object) = item else {
        problems.push(format!(
            "{field}: expected an object {{\"name\", \"weight\"}}, found {}",
            json_type(item)
        ));
        return None;
    };
    let before = problems.len();
    reject_unknown_keys(
        object,
        &format!("{field}."),
        &["name", "weight", "description"],
        problems,
    );
    let name = match object.get("name") {
        None => {
            problems.push(format!("{field}.name: missing"));
            None
        }
        Some(name) => kept(non_empty_string(name, &format!("{field}.name")), problems),
    };
    if let Some(name) = &name {
        if !names.insert(name.clone()) {
            problems.push(format!("{field}.name: duplicate dimension {name:?}"));
        }
    }
    let weight = kept(weight(object.get("weight"), field), problems);
    let description = object.get("description").and_then(|text| {
        kept(
            non_empty_string(text, &format!("{field}.description")),
            problems,
        )
    });
    match (name, weight) {
        (Some(name), Some(weight)) if problems.len() == before => Some(Dimension {
            name,
            weight,
            description,
        }),
        _ => None,
    }
}

/// A dimension's weight: 1 when absent, else a positive finite number.
fn weight(value: Option<&Value>, field: &str) -> Result<f64, String> {
    match value {
        None => Ok(1.0),
        Some(Value::Number(number)) => match number.as_f64() {
            Some(weight) if weight.is_finite() && weight > 0.0 => Ok(weight),
            _ => Err(format!(
                "{field}.weight: must be a positive finite number, found {number}"
            )),
        },
        Some(other) => Err(format!(
            "{field}.weight: must be a positive finite number, found {} {}",
            json_type(other),
            clip(&other.to_string(), 40)
        )),
    }
}

fn non_empty_string(value: &Value, field: &str) -> Result<String, String> {
    match value {
        Value::String(text) if !text.trim().is_empty() => Ok(text.trim().to_string()),
        Value::String(_) => Err(format!("{field}: must not be empty")),
        other => Err(format!(
            "{field}: expected a string, found {}",
            json_type(other)
        )),
    }
}

/// Record one problem per key of `object` that is not in `known`.
fn reject_unknown_keys(
    object: &Map<String, Value>,
    prefix: &str,
    known: &[&str],
    problems: &mut Vec<String>,
) {
    for key in object.keys().filter(|key| !known.contains(&key.as_str())) {
        problems.push(format!(
            "{prefix}{key}: unknown key (expected {})",
            known.join(", ")
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn weights_are_normalised() {
        let rubric = Rubric::from_value(&json!({
            "quality_dimensions": [{"name": "clarity", "weight": 3}, {"name": "accuracy", "weight": 1}],
            "hard_constraints": ["under 200 words"]
        }))
        .unwrap();
        assert_eq!(rubric.dimensions[0].weight, 0.75);
        assert_eq!(rubric.dimensions[1].weight, 0.25);
        assert_eq!(rubric.hard_constraints, ["under 200 words"]);
        let equal =
            Rubric::from_value(&json!({"quality_dimensions": [{"name": "a"}, {"name": "b"}]}))
                .unwrap();
        assert_eq!(equal.dimensions[1].weight, 0.5);
    }

    #[test]
    fn bad_shapes_name_the_field() {
        let cases = [
            (json!([]), "expected a JSON object, found array"),
            (
                json!({"quality_dimension": []}),
                "quality_dimension: unknown key",
            ),
            (
                json!({"quality_dimensions": {}}),
                "quality_dimensions: expected an array",
            ),
            (
                json!({"quality_dimensions": ["x"]}),
                "quality_dimensions[0]: expected an object",
            ),
            (
                json!({"quality_dimensions": [{"name": "a"}, {"weight": 1}]}),
                "quality_dimensions[1].name: missing",
            ),
            (
                json!({"quality_dimensions": [{"name": "a", "weight": "high"}]}),
                "quality_dimensions[0].weight: must be a positive finite number, found string",
            ),
            (
                json!({"quality_dimensions": [{"name": "a", "weight": 0}]}),
                "quality_dimensions[0].weight: must be a positive",
            ),
            (
                json!({"quality_dimensions": [{"name": "a", "wieght": 1}]}),
                "quality_dimensions[0].wieght: unknown key",
            ),
            (
                json!({"quality_dimensions": [{"name": "a"}, {"name": "a"}]}),
                "quality_dimensions[1].name: duplicate",
            ),
            (
                json!({"hard_constraints": ["ok", 3]}),
                "hard_constraints[1]: expected a string",
            ),
            (
                json!({"hard_constraints": [" "]}),
                "hard_constraints[0]: must not be empty",
            ),
        ];
        for (value, expected) in cases {
            let problems = Rubric::from_value(&value).unwrap_err();
            assert_eq!(problems.len(), 1, "{value}: {problems:?}");
            assert!(problems[0].starts_with(expected), "{value}: {problems:?}");
        }
    }

    #[test]
    fn every_problem_is_reported() {
        let problems = Rubric::from_value(&json!({
            "quality_dimensions": [{"name": "a", "wieght": 1}, {"name": "a"}, {"weight": -1}],
            "hard_constraints": ["", 3],
            "x": 1
        }))
        .unwrap_err();
        let fields: Vec<&str> = problems
            .iter()
            .map(|problem| problem.split(": ").next().unwrap())
            .collect();
        assert_eq!(
            fields,
            [
                "x",
                "quality_dimensions[0].wieght",
                "quality_dimensions[1].name",
                "quality_dimensions[2].name",
                "quality_dimensions[2].weight",
                "hard_constraints[0]",
                "hard_constraints[1]",
            ],
            "{problems:?}"
        );
    }
}
