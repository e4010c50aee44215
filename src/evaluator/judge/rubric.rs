//! The `--rubric FILE.json` format: weighted quality dimensions and hard constraints, validated
//! strictly (every problem names the file and the offending field) and with weights normalised to
//! sum to 1.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::bad_input;
use crate::protocol::{clip, json_type};

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
    /// Read and validate a rubric file. Problems are bad input (exit 2) naming the file and field.
    pub fn load(path: &Path) -> anyhow::Result<Rubric> {
        let fail =
            |reason: String| bad_input(format!("error: --rubric {}: {reason}", path.display()));
        let text =
            std::fs::read_to_string(path).map_err(|err| fail(format!("cannot read: {err}")))?;
        let value: Value =
            serde_json::from_str(&text).map_err(|err| fail(format!("not valid JSON: {err}")))?;
        Rubric::from_value(&value).map_err(fail)
    }

    /// Validate a parsed rubric; the error names the offending field.
    pub fn from_value(value: &Value) -> Result<Rubric, String> {
        let Value::Object(object) = value else {
            return Err(format!(
                "expected a JSON object, found {}",
                json_type(value)
            ));
        };
        reject_unknown_keys(object, "", &["quality_dimensions", "hard_constraints"])?;
        let mut dimensions = Vec::new();
        let mut names = HashSet::new();
        for (index, item) in array(object, "quality_dimensions")?.iter().enumerate() {
            let field = format!("quality_dimensions[{index}]");
            let dimension = dimension(item, &field)?;
            if !names.insert(dimension.name.clone()) {
                return Err(format!(
                    "{field}.name: duplicate dimension {:?}",
                    dimension.name
                ));
            }
            dimensions.push(dimension);
        }
        let total: f64 = dimensions.iter().map(|d| d.weight).sum();
        for dimension in &mut dimensions {
            dimension.weight /= total;
        }
        let hard_constraints = array(object, "hard_constraints")?
            .iter()
            .enumerate()
            .map(|(index, item)| non_empty_string(item, &format!("hard_constraints[{index}]")))
            .collect::<Result<_, _>>()?;
        Ok(Rubric {
            dimensions,
            hard_constraints,
        })
    }
}

/// The array under `key`, or an empty slice when the key is absent.
fn array<'a>(object: &'a Map<String, Value>, key: &str) -> Result<&'a [Value], String> {
    match object.get(key) {
        None => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(other) => Err(format!(
            "{key}: expected an array, found {}",
            json_type(other)
        )),
    }
}

fn dimension(item: &Value, field: &str) -> Result<Dimension, String> {
    let Value::Object(object) = item else {
        return Err(format!(
            "{field}: expected an object {{\"name\", \"weight\"}}, found {}",
            json_type(item)
        ));
    };
    reject_unknown_keys(
        object,
        &format!("{field}."),
        &["name", "weight", "description"],
    )?;
    let name = match object.get("name") {
        None => return Err(format!("{field}.name: missing")),
        Some(name) => non_empty_string(name, &format!("{field}.name"))?,
    };
    let weight = match object.get("weight") {
        None => 1.0,
        Some(Value::Number(number)) => match number.as_f64() {
            Some(weight) if weight.is_finite() && weight > 0.0 => weight,
            _ => {
                return Err(format!(
                    "{field}.weight: must be a positive finite number, found {number}"
                ))
            }
        },
        Some(other) => {
            return Err(format!(
                "{field}.weight: must be a positive finite number, found {} {}",
                json_type(other),
                clip(&other.to_string(), 40)
            ))
        }
    };
    let description = object
        .get("description")
        .map(|text| non_empty_string(text, &format!("{field}.description")))
        .transpose()?;
    Ok(Dimension {
        name,
        weight,
        description,
    })
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

fn reject_unknown_keys(
    object: &Map<String, Value>,
    prefix: &str,
    known: &[&str],
) -> Result<(), String> {
    match object.keys().find(|key| !known.contains(&key.as_str())) {
        Some(key) => Err(format!(
            "{prefix}{key}: unknown key (expected {})",
            known.join(", ")
        )),
        None => Ok(()),
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
            let error = Rubric::from_value(&value).unwrap_err();
            assert!(error.starts_with(expected), "{value}: {error}");
        }
    }
}
