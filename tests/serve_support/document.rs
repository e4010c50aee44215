//! The FEP document's own OpenAPI document and JSON Schemas (`tests/fep_document/`, copied
//! verbatim from sections 5.1, 2.3.4, 2.3.5, 4.1 and 4.2): what a REST response must be.
//!
//! [`violations`] checks a response body against the schema the OpenAPI document gives for its
//! path, method and status (its `$ref`s resolved in the OpenAPI document's `components`), an
//! EvaluationRunResult also against section 4.2's schema, its test case results against the
//! members section 4.1 allows, and each of its check results against section 2.3.4's schema
//! (a completed one's `results` against that check type's results schema). A method or status the document does not list for a path it defines is evalctl's own
//! (401, 405, 408, 413, 429, 503): its body must be the document's ErrorResponse, as
//! docs/serve.md promises.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::{json, Value};

/// The fixtures' folder.
fn fixtures() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fep_document"))
}

/// A JSON fixture of `schemas/`.
fn schema_file(name: &str) -> Value {
    let path = fixtures().join("schemas").join(name);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// Section 5.1's OpenAPI document, as JSON.
fn openapi() -> &'static Value {
    static OPENAPI: OnceLock<Value> = OnceLock::new();
    OPENAPI.get_or_init(|| {
        let path = fixtures().join("openapi.yaml");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        serde_norway::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
    })
}

/// A JSON Pointer token.
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The OpenAPI path template `path` (query left out) stands for, e.g. `/evaluations/{evaluation_id}`.
fn template(path: &str) -> Option<&'static str> {
    let path = path.split('?').next().unwrap_or_default();
    let segments: Vec<&str> = path.split('/').collect();
    openapi()["paths"]
        .as_object()?
        .keys()
        .find(|template| {
            let parts: Vec<&str> = template.split('/').collect();
            parts.len() == segments.len()
                && parts.iter().zip(&segments).all(|(part, segment)| {
                    part == segment || (part.starts_with('{') && !segment.is_empty())
                })
        })
        .map(String::as_str)
}

/// The JSON Pointer, in the OpenAPI document, of the schema of `method path`'s `status`
/// response: the ErrorResponse where the document lists no such method or status for that path;
/// `None` when it does not define the path at all.
pub fn response_schema(method: &str, path: &str, status: u16) -> Option<String> {
    let template = template(path)?;
    let method = method.to_ascii_lowercase();
    let documented = &openapi()["paths"][template][&method]["responses"][status.to_string()];
    Some(if documented.is_null() {
        "/components/schemas/ErrorResponse".to_string()
    } else {
        format!(
            "/paths/{}/{method}/responses/{status}/content/application~1json/schema",
            escape(template)
        )
    })
}

/// What `instance` breaks of `schema` (whose `$ref`s resolve in the OpenAPI document's `paths`
/// and `components`): one line
/// per error, `at INSTANCE_PATH: ERROR (WHICH)`.
fn errors(which: &str, schema: &Value, instance: &Value) -> Vec<String> {
    let mut root = schema.clone();
    if let Some(object) = root.as_object_mut() {
        for part in ["paths", "components"] {
            object.insert(part.into(), openapi()[part].clone());
        }
    }
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .should_validate_formats(true)
        .build(&root)
        .unwrap_or_else(|err| panic!("{which} is not a schema the validator takes: {err}"));
    validator
        .iter_errors(instance)
        .map(|error| {
            let at = error.instance_path().to_string();
            let at = if at.is_empty() {
                "the top".to_string()
            } else {
                at
            };
            format!("at {at}: {error} ({which})")
        })
        .collect()
}

/// What `value` breaks of the OpenAPI document's schema `components.schemas.NAME`.
pub fn schema_violations(name: &str, value: &Value) -> Vec<String> {
    let pointer = format!("#/components/schemas/{name}");
    errors(
        &format!("openapi.yaml{pointer}"),
        &json!({"$ref": pointer}),
        value,
    )
}

/// Everything in `body`, the answer `status` to `method path`, that the FEP document's schemas
/// refuse (empty: it conforms); `None` when the document does not define `method path`.
pub fn violations(method: &str, path: &str, status: u16, body: &Value) -> Option<Vec<String>> {
    let pointer = response_schema(method, path, status)?;
    let mut found = errors(
        &format!("openapi.yaml#{pointer}"),
        // A URI fragment: the braces of a path template percent-encoded.
        &json!({"$ref": format!("#{}", pointer.replace('{', "%7B").replace('}', "%7D"))}),
        body,
    );
    let reference = openapi()
        .pointer(&pointer)
        .and_then(|schema| schema["$ref"].as_str());
    if reference == Some("#/components/schemas/EvaluationRunResult") {
        found.extend(errors(
            "evaluation_run_result.json",
            &schema_file("evaluation_run_result.json"),
            body,
        ));
        found.extend(check_result_violations(body));
        let test_case_result = schema_file("test_case_result.json");
        let results = body["results"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        for (index, result) in results.iter().enumerate() {
            found.extend(unlisted(
                &test_case_result,
                result,
                &format!("/results/{index}"),
            ));
        }
    }
    Some(found)
}

/// The members of `value` (at `at`) that `schema` forbids with `additionalProperties: false`,
/// in its nested object schemas too: all section 4.1's block can be checked for, since it is
/// not a JSON Schema (`"type": "TestCase"`, `"items": "CheckResult"`).
fn unlisted(schema: &Value, value: &Value, at: &str) -> Vec<String> {
    let (Some(properties), Some(members)) = (schema["properties"].as_object(), value.as_object())
    else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (name, member) in members {
        match properties.get(name) {
            Some(property) => found.extend(unlisted(property, member, &format!("{at}/{name}"))),
            None if schema["additionalProperties"] == false => found.push(format!(
                "at {at}: member `{name}` is not allowed (test_case_result.json)"
            )),
            None => {}
        }
    }
    found
}

/// The completed check results of `run` against section 2.3.4's schema and their `results`
/// against the results schema of their check type (2.3.5), where the document gives one.
fn check_result_violations(run: &Value) -> Vec<String> {
    let check_result = schema_file("check_result.json");
    let mut found = Vec::new();
    let results = run["results"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (case, result) in results.iter().enumerate() {
        let checks = result["check_results"].as_array();
        for (index, check) in checks
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let which = format!("results[{case}].check_results[{index}]");
            found.extend(errors(
                &format!("check_result.json, {which}"),
                &check_result,
                check,
            ));
            let check_type = check["check_type"].as_str().unwrap_or_default();
            let file = format!("{check_type}.results.json");
            if check["status"] == "completed" && fixtures().join("schemas").join(&file).exists() {
                found.extend(errors(
                    &format!("{file}, {which}.results"),
                    &schema_file(&file),
                    &check["results"],
                ));
            }
        }
    }
    found
}

/// Panic unless `reply`, the answer to `method path`, conforms to the FEP document: a path the
/// document defines is answered JSON that its schemas take (or, with `?stream=true`, NDJSON,
/// whose lines the streaming tests check); nothing is checked of other paths.
pub fn assert_conforms(method: &str, path: &str, reply: &super::Reply) {
    let status = reply.status;
    match reply.header("content-type") {
        Some("application/json") => {
            let body = reply.json();
            let found = violations(method, path, status, &body).unwrap_or_default();
            assert!(
                found.is_empty(),
                "{method} {path} answered {status} with a body the FEP document's schemas refuse:\n{}\n{body:#}",
                found.join("\n")
            );
        }
        Some("application/x-ndjson") if path.contains("stream=") => {}
        other => assert!(
            template(path).is_none() || reply.body.is_empty(),
            "{method} {path} answered {status} with a body of content-type {other:?}, not JSON"
        ),
    }
}
