//! The gRPC messages (FEP 5.2) to and from the JSON documents the engine reads and writes: a
//! request becomes the EvaluationRequest JSON the REST API takes (so both APIs validate with the
//! same wording), and a result document becomes an EvaluationRunResult message.
//!
//! `google.protobuf.Struct` numbers are doubles, so JSON numbers cross as `f64`.

use prost_types::value::Kind;
use serde_json::{Map, Value};

use super::engine::JsonCount;
use super::pb;

/// The request as the EvaluationRequest JSON document. Absent message fields stay absent, so
/// validation reports them as missing.
pub fn request_to_json(request: pb::EvaluationRequest) -> Value {
    let mut object = Map::new();
    let test_cases = request.test_cases.into_iter().map(test_case_to_json);
    object.insert("test_cases".into(), Value::Array(test_cases.collect()));
    let outputs = request.outputs.into_iter().map(output_to_json);
    object.insert("outputs".into(), Value::Array(outputs.collect()));
    use pb::check_configuration::Configuration;
    match request.checks.and_then(|checks| checks.configuration) {
        Some(Configuration::SharedChecks(shared)) => {
            object.insert("checks".into(), checks_to_json(shared.checks));
        }
        Some(Configuration::PerTestCaseChecks(per_case)) => {
            let lists = per_case
                .check_lists
                .into_iter()
                .map(|list| checks_to_json(list.checks));
            object.insert("checks".into(), Value::Array(lists.collect()));
        }
        None => {}
    }
    insert_some(
        &mut object,
        "experiment_metadata",
        request.experiment_metadata,
        experiment_to_json,
    );
    Value::Object(object)
}

/// How many values and containers [`request_to_json`] makes of `request` (at most), counted
/// without converting it, so that the memory its document takes is known before it is taken.
pub fn request_count(request: &pb::EvaluationRequest) -> JsonCount {
    use pb::check_configuration::Configuration;
    let mut count = Counter::default();
    count.object(0); // the request
    count.array();
    for case in &request.test_cases {
        count.object(1); // id
        match case.input.as_ref().and_then(|input| input.value.as_ref()) {
            Some(pb::input_value::Value::ObjectValue(fields)) => count.fields(fields),
            _ => count.scalar(),
        }
        count.output(&case.expected);
        count.some_fields(&case.metadata);
    }
    count.array();
    for output in &request.outputs {
        count.object(1); // id
        count.output(&output.value);
        count.some_fields(&output.metadata);
    }
    let checks = |count: &mut Counter, checks: &[pb::Check]| {
        count.array();
        for check in checks {
            count.object(2); // type, version
            count.some_fields(&check.arguments);
        }
    };
    match request
        .checks
        .as_ref()
        .and_then(|checks| checks.configuration.as_ref())
    {
        Some(Configuration::SharedChecks(shared)) => checks(&mut count, &shared.checks),
        Some(Configuration::PerTestCaseChecks(per_case)) => {
            count.array();
            for list in &per_case.check_lists {
                checks(&mut count, &list.checks);
            }
        }
        None => {}
    }
    if let Some(experiment) = &request.experiment_metadata {
        count.object(1); // name
        count.some_fields(&experiment.metadata);
    }
    count.0
}

/// A running [`JsonCount`].
#[derive(Default)]
struct Counter(JsonCount);

impl Counter {
    fn scalar(&mut self) {
        self.0.values += 1;
    }

    /// An array (its elements are counted apart).
    fn array(&mut self) {
        self.0.values += 1;
        self.0.containers += 1;
    }

    /// An object with `scalars` scalar members (its other members are counted apart).
    fn object(&mut self, scalars: u64) {
        self.array();
        self.0.values += scalars;
    }

    fn fields(&mut self, fields: &prost_types::Struct) {
        self.object(0);
        for value in fields.fields.values() {
            self.value(value);
        }
    }

    fn some_fields(&mut self, fields: &Option<prost_types::Struct>) {
        if let Some(fields) = fields {
            self.fields(fields);
        }
    }

    fn output(&mut self, value: &Option<pb::OutputValue>) {
        match value.as_ref().and_then(|value| value.value.as_ref()) {
            Some(pb::output_value::Value::ObjectValue(fields)) => self.fields(fields),
            _ => self.scalar(),
        }
    }

    fn value(&mut self, value: &prost_types::Value) {
        match &value.kind {
            Some(Kind::StructValue(fields)) => self.fields(fields),
            Some(Kind::ListValue(list)) => {
                self.array();
                for value in &list.values {
                    self.value(value);
                }
            }
            _ => self.scalar(),
        }
    }
}

/// Set `key` to the converted `value`, when there is one.
fn insert_some<T>(
    object: &mut Map<String, Value>,
    key: &str,
    value: Option<T>,
    convert: impl FnOnce(T) -> Value,
) {
    if let Some(value) = value {
        object.insert(key.into(), convert(value));
    }
}

fn test_case_to_json(test_case: pb::TestCase) -> Value {
    use pb::input_value::Value as Input;
    let mut object = Map::new();
    object.insert("id".into(), Value::String(test_case.id));
    match test_case.input.and_then(|input| input.value) {
        Some(Input::StringValue(text)) => {
            object.insert("input".into(), Value::String(text));
        }
        Some(Input::ObjectValue(fields)) => {
            object.insert("input".into(), struct_to_json(fields));
        }
        None => {}
    }
    insert_some(
        &mut object,
        "expected",
        test_case.expected,
        output_value_to_json,
    );
    insert_some(&mut object, "metadata", test_case.metadata, struct_to_json);
    Value::Object(object)
}

fn output_to_json(output: pb::Output) -> Value {
    let mut object = Map::new();
    insert_some(&mut object, "id", output.id, Value::String);
    insert_some(&mut object, "value", output.value, output_value_to_json);
    insert_some(&mut object, "metadata", output.metadata, struct_to_json);
    Value::Object(object)
}

fn output_value_to_json(value: pb::OutputValue) -> Value {
    use pb::output_value::Value as Output;
    match value.value {
        Some(Output::StringValue(text)) => Value::String(text),
        Some(Output::ObjectValue(fields)) => struct_to_json(fields),
        None => Value::Null,
    }
}

fn checks_to_json(checks: Vec<pb::Check>) -> Value {
    let checks = checks.into_iter().map(|check| {
        let mut object = Map::new();
        object.insert("type".into(), Value::String(check.r#type));
        insert_some(&mut object, "arguments", check.arguments, struct_to_json);
        insert_some(&mut object, "version", check.version, Value::String);
        Value::Object(object)
    });
    Value::Array(checks.collect())
}

fn experiment_to_json(experiment: pb::ExperimentMetadata) -> Value {
    let mut object = Map::new();
    insert_some(&mut object, "name", experiment.name, Value::String);
    insert_some(&mut object, "metadata", experiment.metadata, struct_to_json);
    Value::Object(object)
}

fn struct_to_json(fields: prost_types::Struct) -> Value {
    Value::Object(
        fields
            .fields
            .into_iter()
            .map(|(key, value)| (key, value_to_json(value)))
            .collect(),
    )
}

/// A Struct's number (every one is a double on the wire) as JSON: an integral one as an integer,
/// as a REST client writes it (`4`, not `4.0`), so that a check compares it the same whichever
/// front end the request came through.
fn number_to_json(number: f64) -> Value {
    /// Integers up to 2^53 are exact in a double.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if number.fract() == 0.0 && number.abs() <= EXACT {
        Value::from(number as i64)
    } else {
        serde_json::Number::from_f64(number).map_or(Value::Null, Value::Number)
    }
}

fn value_to_json(value: prost_types::Value) -> Value {
    match value.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::NumberValue(number)) => number_to_json(number),
        Some(Kind::StringValue(text)) => Value::String(text),
        Some(Kind::BoolValue(flag)) => Value::Bool(flag),
        Some(Kind::StructValue(fields)) => struct_to_json(fields),
        Some(Kind::ListValue(list)) => {
            Value::Array(list.values.into_iter().map(value_to_json).collect())
        }
    }
}

/// An EvaluationRunResult document (as stored, or a run's summary line) as the message.
pub fn run_result(document: &Value) -> pb::EvaluationRunResult {
    let summary = &document["summary"];
    pb::EvaluationRunResult {
        evaluation_id: text(&document["evaluation_id"]),
        started_at: timestamp(&document["started_at"]),
        completed_at: timestamp(&document["completed_at"]),
        status: status_number(&document["status"]),
        summary: Some(pb::EvaluationSummary {
            total_test_cases: count(&summary["total_test_cases"]),
            completed_test_cases: count(&summary["completed_test_cases"]),
            error_test_cases: count(&summary["error_test_cases"]),
            skipped_test_cases: count(&summary["skipped_test_cases"]),
        }),
        results: document["results"]
            .as_array()
            .map(|results| results.iter().map(test_case_result).collect())
            .unwrap_or_default(),
        experiment: document
            .get("experiment")
            .map(|experiment| pb::ExperimentMetadata {
                name: experiment.get("name").map(text),
                metadata: experiment.get("metadata").and_then(to_struct),
            }),
        metadata: document.get("metadata").and_then(to_struct),
    }
}

/// One test case result (FEP 4.1) as the message.
pub fn test_case_result(result: &Value) -> pb::TestCaseResult {
    let context = &result["execution_context"];
    let summary = &result["summary"];
    let test_case = &context["test_case"];
    let output = &context["output"];
    pb::TestCaseResult {
        status: status_number(&result["status"]),
        execution_context: Some(pb::ExecutionContext {
            test_case: Some(pb::TestCase {
                id: text(&test_case["id"]),
                input: test_case.get("input").map(|input| pb::InputValue {
                    value: Some(match input {
                        Value::Object(_) => pb::input_value::Value::ObjectValue(
                            to_struct(input).unwrap_or_default(),
                        ),
                        other => pb::input_value::Value::StringValue(text(other)),
                    }),
                }),
                expected: test_case
                    .get("expected")
                    .filter(|expected| !expected.is_null())
                    .map(output_value),
                metadata: test_case.get("metadata").and_then(to_struct),
            }),
            output: Some(pb::Output {
                value: output.get("value").map(output_value),
                metadata: output.get("metadata").and_then(to_struct),
                id: output.get("id").map(text),
            }),
        }),
        check_results: result["check_results"]
            .as_array()
            .map(|checks| {
                checks
                    .iter()
                    .map(|check| check_result(check, test_case, output))
                    .collect()
            })
            .unwrap_or_default(),
        summary: Some(pb::TestCaseSummary {
            total_checks: count(&summary["total_checks"]),
            completed_checks: count(&summary["completed_checks"]),
            error_checks: count(&summary["error_checks"]),
            skipped_checks: count(&summary["skipped_checks"]),
        }),
        metadata: result.get("metadata").and_then(to_struct),
    }
}

fn check_result(check: &Value, test_case: &Value, output: &Value) -> pb::CheckResult {
    let metadata = &check["metadata"];
    let additional: Map<String, Value> = metadata
        .as_object()
        .map(|fields| {
            fields
                .iter()
                .filter(|(key, _)| *key != "check_version")
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect()
        })
        .unwrap_or_default();
    pb::CheckResult {
        check_type: text(&check["check_type"]),
        status: status_number(&check["status"]),
        results: to_struct(&check["results"]),
        resolved_arguments: check.get("resolved_arguments").and_then(to_struct),
        evaluated_at: timestamp(&check["evaluated_at"]),
        metadata: Some(pb::CheckResultMetadata {
            test_case_id: text(&test_case["id"]),
            test_case_metadata: test_case.get("metadata").and_then(to_struct),
            output_metadata: output.get("metadata").and_then(to_struct),
            check_version: text(&metadata["check_version"]),
            additional_metadata: (!additional.is_empty())
                .then(|| to_struct(&Value::Object(additional)))
                .flatten(),
        }),
        error: check
            .get("error")
            .filter(|error| !error.is_null())
            .map(|error| pb::CheckError {
                r#type: match error["type"].as_str() {
                    Some("jsonpath_error") => pb::CheckErrorType::JsonpathError,
                    Some("validation_error") => pb::CheckErrorType::ValidationError,
                    Some("timeout_error") => pb::CheckErrorType::TimeoutError,
                    _ => pb::CheckErrorType::UnknownError,
                } as i32,
                message: text(&error["message"]),
                recoverable: error["recoverable"].as_bool(),
            }),
    }
}

fn output_value(value: &Value) -> pb::OutputValue {
    pb::OutputValue {
        value: Some(match value {
            Value::Object(_) => {
                pb::output_value::Value::ObjectValue(to_struct(value).unwrap_or_default())
            }
            other => pb::output_value::Value::StringValue(text(other)),
        }),
    }
}

/// `completed`, `error`, `skip` as the number all four status enums give them.
fn status_number(status: &Value) -> i32 {
    match status.as_str() {
        Some("completed") => 1,
        Some("error") => 2,
        Some("skip") => 3,
        _ => 0,
    }
}

/// A string as itself; any other JSON value as its JSON text (an output value that is a number).
fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn count(value: &Value) -> i32 {
    value
        .as_u64()
        .map_or(0, |count| i32::try_from(count).unwrap_or(i32::MAX))
}

fn timestamp(value: &Value) -> Option<prost_types::Timestamp> {
    value.as_str()?.parse().ok()
}

/// An object as a Struct; `None` for anything else.
fn to_struct(value: &Value) -> Option<prost_types::Struct> {
    let fields = value.as_object()?;
    Some(prost_types::Struct {
        fields: fields
            .iter()
            .map(|(key, value)| (key.clone(), to_value(value)))
            .collect(),
    })
}

fn to_value(value: &Value) -> prost_types::Value {
    let kind = match value {
        Value::Null => Kind::NullValue(0),
        Value::Bool(flag) => Kind::BoolValue(*flag),
        Value::Number(number) => Kind::NumberValue(number.as_f64().unwrap_or(f64::NAN)),
        Value::String(text) => Kind::StringValue(text.clone()),
        Value::Array(items) => Kind::ListValue(prost_types::ListValue {
            values: items.iter().map(to_value).collect(),
        }),
        Value::Object(_) => Kind::StructValue(to_struct(value).unwrap_or_default()),
    };
    prost_types::Value { kind: Some(kind) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn structs_round_trip_through_json() {
        let original = json!({"a": "x", "b": 1.5, "c": [true, null], "d": {"e": "f"}, "n": 4});
        let round = struct_to_json(to_struct(&original).unwrap());
        assert_eq!(round, original);
        // An integral double is the integer a REST client would write.
        assert_eq!(round["n"].to_string(), "4");
        assert_eq!(number_to_json(-0.0).to_string(), "0");
        assert_eq!(number_to_json(1e300).to_string(), "1e+300");
    }

    #[test]
    fn a_request_keeps_what_validation_must_see() {
        let request = pb::EvaluationRequest {
            test_cases: vec![pb::TestCase {
                id: "t".into(),
                input: None,
                expected: None,
                metadata: None,
            }],
            outputs: vec![pb::Output {
                value: Some(pb::OutputValue {
                    value: Some(pb::output_value::Value::StringValue("v".into())),
                }),
                metadata: None,
                id: None,
            }],
            checks: None,
            experiment_metadata: None,
        };
        assert_eq!(
            request_to_json(request),
            json!({"test_cases": [{"id": "t"}], "outputs": [{"value": "v"}]})
        );
    }
}
