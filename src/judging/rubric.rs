//! The `--rubric FILE.json` format: weighted quality dimensions and hard constraints, validated
//! strictly and in full (every problem, each naming the file and the offending field, in one
//! report) and with weights normalised to sum to 1.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{bad_input, invalid};
use crate::input::json_lines::DocumentLines;
use crate::input::strict::{self, JsonProblem};
use crate::input::Source;
use crate::text::clip;

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
    /// Read and validate a rubric file. Problems are bad input (exit 2), each naming the file
    /// and the offending field as its location, all of them at once.
    pub fn load(path: &Path) -> anyhow::Result<Rubric> {
        let source = Source::File(path.to_path_buf());
        let (value, text) = source
            .read_json_and_text("a rubric object {\"quality_dimensions\": [...]}")
            .map_err(bad_input)?;
        let display = source.display();
        let lines = DocumentLines::new(&text);
        Rubric::from_value(&value).map_err(|problems| {
            invalid(
                problems
                    .iter()
                    .map(|problem| problem.locate_in(&display, &lines, ""))
                    .collect(),
            )
        })
    }

    /// Validate a parsed rubric; on failure, every problem found, each located at its field.
    pub fn from_value(value: &Value) -> Result<Rubric, Vec<JsonProblem>> {
        let object =
            strict::as_object(value).map_err(|reason| vec![JsonProblem::new("", reason)])?;
        let mut problems: Vec<JsonProblem> = strict::unknown_keys(object, &RUBRIC_KEYS)
            .map(|(key, reason)| JsonProblem::at_key(key, reason))
            .collect();
        let mut dimensions = Vec::new();
        let mut names = HashMap::new();
        for (index, item) in array(object, "quality_dimensions", &mut problems)
            .iter()
            .enumerate()
        {
            let at = format!(".quality_dimensions[{index}]");
            let found = dimension(item, &mut names);
            match found {
                Ok(dimension) => dimensions.push(dimension),
                Err(found) => problems.extend(found.into_iter().map(|problem| problem.under(&at))),
            }
        }
        let hard_constraints: Vec<String> = array(object, "hard_constraints", &mut problems)
            .iter()
            .enumerate()
            .filter_map(|(index, item)| {
                non_empty_string(item)
                    .map_err(|reason| {
                        problems.push(JsonProblem::new(
                            format!(".hard_constraints[{index}]"),
                            reason,
                        ));
                    })
                    .ok()
            })
            .collect();
        if !problems.is_empty() {
            return Err(problems);
        }
        let mut total: f64 = dimensions.iter().map(|d| d.weight).sum();
        if total.is_infinite() {
            // Weights near the largest float add up past it: they are scaled down first.
            let largest = dimensions.iter().map(|d| d.weight).fold(0.0, f64::max);
            for dimension in &mut dimensions {
                dimension.weight /= largest;
            }
            total = dimensions.iter().map(|d| d.weight).sum();
        }
        for dimension in &mut dimensions {
            dimension.weight /= total;
        }
        Ok(Rubric {
            dimensions,
            hard_constraints,
        })
    }
}

/// The keys of a rubric object.
const RUBRIC_KEYS: [&str; 2] = ["quality_dimensions", "hard_constraints"];

/// The keys of a quality dimension.
const DIMENSION_KEYS: [&str; 3] = ["name", "weight", "description"];

/// The array under `key`, or an empty slice when the key is absent or (a recorded problem) not an
/// array.
fn array<'a>(
    object: &'a Map<String, Value>,
    key: &str,
    problems: &mut Vec<JsonProblem>,
) -> &'a [Value] {
    match object.get(key).map(strict::as_array) {
        None => &[],
        Some(Ok(items)) => items,
        Some(Err(reason)) => {
            problems.push(JsonProblem::at_key(key, reason));
            &[]
        }
    }
}

/// One dimension, checking every field of it (and its name against the `names` seen before), or
/// every problem found, located relative to the dimension.
fn dimension(
    item: &Value,
    names: &mut HashMap<String, String>,
) -> Result<Dimension, Vec<JsonProblem>> {
    let object = strict::as_object(item).map_err(|reason| vec![JsonProblem::new("", reason)])?;
    let mut problems: Vec<JsonProblem> = strict::unknown_keys(object, &DIMENSION_KEYS)
        .map(|(key, reason)| JsonProblem::at_key(key, reason))
        .collect();
    problems.extend(
        strict::missing_keys(object, &DIMENSION_KEYS[..1])
            .map(|(_, reason)| JsonProblem::new("", reason)),
    );
    let mut field = |key: &str, result: Result<String, String>| {
        result
            .map_err(|reason| problems.push(JsonProblem::at_key(key, reason)))
            .ok()
    };
    let name = object
        .get("name")
        .and_then(|name| field("name", non_empty_string(name)));
    let description = object
        .get("description")
        .and_then(|text| field("description", non_empty_string(text)));
    // A reply's dimensions are matched by name in any ASCII case: `a` and `A` would be one.
    if let Some(name) = &name {
        match names.entry(name.to_ascii_lowercase()) {
            Entry::Vacant(slot) => {
                slot.insert(name.clone());
            }
            Entry::Occupied(first) if first.get() == name => problems.push(JsonProblem::at_key(
                "name",
                format!("duplicate dimension {name:?}"),
            )),
            Entry::Occupied(first) => problems.push(JsonProblem::at_key(
                "name",
                format!(
                    "duplicate dimension {name:?} ({:?} in another case: a reply's names match \
                     in any case)",
                    first.get()
                ),
            )),
        }
    }
    let weight = weight(object.get("weight"))
        .map_err(|reason| problems.push(JsonProblem::at_key("weight", reason)))
        .ok();
    match (name, weight) {
        (Some(name), Some(weight)) if problems.is_empty() => Ok(Dimension {
            name,
            weight,
            description,
        }),
        _ => Err(problems),
    }
}

/// A dimension's weight: 1 when absent, else a positive finite number.
fn weight(value: Option<&Value>) -> Result<f64, String> {
    match value {
        None => Ok(1.0),
        Some(Value::Number(number)) => match number.as_f64() {
            Some(weight) if weight.is_finite() && weight > 0.0 => Ok(weight),
            _ => Err(format!("expected a positive finite number, found {number}")),
        },
        Some(other) => Err(format!(
            "{} {}",
            strict::wrong_type("a positive finite number", other),
            clip(&other.to_string(), 40)
        )),
    }
}

/// A non-empty string, trimmed.
fn non_empty_string(value: &Value) -> Result<String, String> {
    let text = strict::as_str(value)?.trim();
    if text.is_empty() {
        return Err("must not be empty".to_string());
    }
    Ok(text.to_string())
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
        // Weights whose sum no float holds are scaled down first.
        let huge = Rubric::from_value(&json!({
            "quality_dimensions": [{"name": "a", "weight": 1e308}, {"name": "b", "weight": 1e308}],
        }))
        .unwrap();
        assert_eq!(
            (huge.dimensions[0].weight, huge.dimensions[1].weight),
            (0.5, 0.5)
        );
        assert_eq!(rubric.hard_constraints, ["under 200 words"]);
        let equal =
            Rubric::from_value(&json!({"quality_dimensions": [{"name": "a"}, {"name": "b"}]}))
                .unwrap();
        assert_eq!(equal.dimensions[1].weight, 0.5);
    }

    #[test]
    fn bad_shapes_name_the_field() {
        let cases = [
            (json!([]), "expected an object, found array"),
            (
                json!({"quality_dimension": []}),
                "quality_dimension: unknown key `quality_dimension` (expected one of quality_dimensions, hard_constraints)",
            ),
            (
                json!({"quality_dimensions": {}}),
                "quality_dimensions: expected an array, found object",
            ),
            (
                json!({"quality_dimensions": ["x"]}),
                "quality_dimensions[0]: expected an object, found string",
            ),
            (
                json!({"quality_dimensions": [{"name": "a"}, {"weight": 1}]}),
                "quality_dimensions[1]: missing required key `name`",
            ),
            (
                json!({"quality_dimensions": [{"name": "a", "weight": "high"}]}),
                "quality_dimensions[0].weight: expected a positive finite number, found string \"high\"",
            ),
            (
                json!({"quality_dimensions": [{"name": "a", "weight": 0}]}),
                "quality_dimensions[0].weight: expected a positive finite number, found 0",
            ),
            (
                json!({"quality_dimensions": [{"name": "a", "wieght": 1}]}),
                "quality_dimensions[0].wieght: unknown key `wieght` (expected one of name, weight, description)",
            ),
            (
                json!({"quality_dimensions": [{"name": "a"}, {"name": "a"}]}),
                "quality_dimensions[1].name: duplicate dimension \"a\"",
            ),
            (
                json!({"quality_dimensions": [{"name": "Clarity"}, {"name": "clarity"}]}),
                "quality_dimensions[1].name: duplicate dimension \"clarity\" (\"Clarity\" in \
                 another case: a reply's names match in any case)",
            ),
            (
                json!({"hard_constraints": ["ok", 3]}),
                "hard_constraints[1]: expected a string, found number",
            ),
            (
                json!({"hard_constraints": [" "]}),
                "hard_constraints[0]: must not be empty",
            ),
        ];
        for (value, expected) in cases {
            let problems = Rubric::from_value(&value).unwrap_err();
            assert_eq!(problems.len(), 1, "{value}: {problems:?}");
            assert_eq!(problems[0].describe(""), expected, "{value}");
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
        let fields: Vec<String> = problems
            .iter()
            .map(|problem| {
                problem
                    .locate("r.json", None, "")
                    .location
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(
            fields,
            [
                "x",
                "quality_dimensions[0].wieght",
                "quality_dimensions[1].name",
                "quality_dimensions[2]",
                "quality_dimensions[2].weight",
                "hard_constraints[0]",
                "hard_constraints[1]",
            ],
            "{problems:?}"
        );
    }
}
