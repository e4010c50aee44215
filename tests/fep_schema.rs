//! The EvaluationRequest read exactly as the JSON Schemas of the FEP document say, the same by
//! `fep evaluate` (a request, a large request, the streaming mode) and by `serve` (REST): members
//! the schemas allow but do not list are ignored (a check's are listed in its metadata), members
//! a schema forbids are refused by name, values outside a schema's types, a `version` that is not
//! semver and a request without `checks` are refused naming the member, and a JSONPath that
//! cannot be parsed is a `jsonpath_error`.

use std::fs;

use serde_json::{json, Value};

use crate::common::evalctl;
use crate::fep_support::{check, evaluate};
use crate::serve_support::Server;

/// `request` through `evalctl fep evaluate --format text -`: exit 2, nothing on stdout and
/// exactly the lines `problems` (each `error: <stdin>: PROBLEM`) on stderr.
fn refused_by_fep_evaluate(request: &Value, problems: &[&str]) {
    let stderr: String = problems
        .iter()
        .map(|problem| format!("error: <stdin>: {problem}\n"))
        .collect();
    evalctl()
        .args(["fep", "evaluate", "--format", "text", "-"])
        .write_stdin(request.to_string())
        .assert()
        .code(2)
        .stdout("")
        .stderr(stderr);
}

/// `request` through `POST /evaluate`: the whole 400 body, listing `problems`.
fn refused_by_serve(server: &Server, request: &Value, problems: &[&str]) {
    let reply = server.request("POST", "/evaluate", &[], request.to_string().as_bytes());
    assert_eq!(
        reply.status,
        400,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let count = problems.len();
    assert_eq!(
        reply.json(),
        json!({
            "error": "validation_error",
            "message": format!(
                "invalid EvaluationRequest ({count} problem{}): {}",
                if count == 1 { "" } else { "s" },
                problems.join("; ")
            ),
            "details": {"problems": problems},
        })
    );
}

/// `request` through `POST /evaluate`, answered 200: the EvaluationRunResult.
fn evaluated_by_serve(server: &Server, request: &Value) -> Value {
    let reply = server.request("POST", "/evaluate", &[], request.to_string().as_bytes());
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    reply.json()
}

fn serve() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("s.db"), &[], &[]);
    (dir, server)
}

/// What a run says of each check of its first test case: status, results, error and ignored
/// members (the parts that do not vary between runs).
fn outcomes(run: &Value) -> Vec<Value> {
    run["results"][0]["check_results"]
        .as_array()
        .expect("check_results")
        .iter()
        .map(|result| {
            json!({
                "status": result["status"],
                "results": result["results"],
                "error": result["error"],
                "ignored": result["metadata"]["ignored"],
            })
        })
        .collect()
}

/// A request whose every object carries a member its schema does not list.
fn request_with_unknown_members() -> Value {
    json!({
        "test_cases": [{"id": "t1", "input": "capital of France?", "expected": "Paris",
                        "tags": ["geography"]}],
        "outputs": [{"value": "Paris", "latency_ms": 12}],
        "checks": [
            {"type": "exact_match", "weight": 2,
             "arguments": {"actual": "$.output.value", "expected": "$.test_case.expected",
                           "ignore_case": true}},
            {"type": "contains",
             "arguments": {"text": "$.output.value", "phrases": ["Par"], "mode": "any"}},
            {"type": "regex",
             "arguments": {"text": "$.output.value", "pattern": "^paris$",
                           "flags": {"case_insensitive": true, "global": true}}}
        ],
        "experiment_metadata": {"name": "typos", "owner": "qa"},
        "priority": "high"
    })
}

fn unknown_member_outcomes() -> Vec<Value> {
    let passed = |ignored: Value| {
        json!({"status": "completed", "results": {"passed": true}, "error": null,
               "ignored": ignored})
    };
    vec![
        passed(json!(["weight", "arguments.ignore_case"])),
        passed(json!(["arguments.mode"])),
        passed(json!(["arguments.flags.global"])),
    ]
}

#[test]
fn members_the_schemas_allow_are_ignored_and_listed_in_the_checks_metadata() {
    let request = request_with_unknown_members();
    let (document, code) = evaluate(&request);
    assert_eq!(code, 0, "{document}");
    assert_eq!(document["status"], "completed");
    assert_eq!(outcomes(&document), unknown_member_outcomes());
    // A check without unknown members has no `ignored`.
    let plain = json!({"test_cases": [{"id": "t1", "input": "q"}], "outputs": [{"value": "x"}],
        "checks": [check("exact_match", json!({"actual": "$.output.value", "expected": "x"}))]});
    let (plain, _) = evaluate(&plain);
    assert_eq!(
        plain["results"][0]["check_results"][0]["metadata"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["check_version", "execution_time_ms"]
    );

    let (_dir, server) = serve();
    let run = evaluated_by_serve(&server, &request);
    assert_eq!(run["status"], "completed");
    assert_eq!(outcomes(&run), unknown_member_outcomes());
}

#[test]
fn a_test_case_id_given_twice_is_refused_where_it_comes_again() {
    // FEP 2.1: a test case's id is unique. Read whole, in batches (more than 256 test cases), or
    // by the server.
    let request = |cases: usize| {
        let mut ids: Vec<String> = (0..cases).map(|i| format!("c{i}")).collect();
        ids[cases - 1] = "c1".to_string();
        json!({
            "test_cases": ids.iter().map(|id| json!({"id": id, "input": "q"})).collect::<Vec<_>>(),
            "outputs": vec![json!({"value": "x"}); cases],
            "checks": [{"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "x"}}],
        })
    };
    let problem = |cases: usize| {
        format!(
            "test_cases[{}].id: \"c1\" is also the id of test_cases[1]: each test case's id is \
             unique (FEP 2.1)",
            cases - 1
        )
    };
    refused_by_fep_evaluate(&request(3), &[&problem(3)]);
    refused_by_fep_evaluate(&request(300), &[&problem(300)]);
    let (_dir, server) = serve();
    refused_by_serve(&server, &request(3), &[&problem(3)]);
}

#[test]
fn large_and_streamed_requests_ignore_the_same_members() {
    // Past 256 test cases a request is evaluated as it is parsed: the same reading.
    let single = request_with_unknown_members();
    let mut large = single.clone();
    large["test_cases"] = (0..300)
        .map(|i| {
            let mut test_case = single["test_cases"][0].clone();
            test_case["id"] = json!(format!("case-{i}"));
            test_case
        })
        .collect();
    large["outputs"] = Value::Array(vec![single["outputs"][0].clone(); 300]);
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("large.json"), large.to_string()).unwrap();
    let assert = evalctl()
        .current_dir(dir.path())
        .args(["fep", "evaluate", "large.json"])
        .assert()
        .code(0);
    let document: Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert_eq!(document["summary"]["completed_test_cases"], 300);
    assert_eq!(outcomes(&document), unknown_member_outcomes());

    let checks = json!({"checks": single["checks"]});
    fs::write(dir.path().join("checks.json"), checks.to_string()).unwrap();
    let line = |value: &Value| format!("{value}\n");
    fs::write(
        dir.path().join("cases.jsonl"),
        line(&single["test_cases"][0]),
    )
    .unwrap();
    fs::write(
        dir.path().join("outputs.jsonl"),
        line(&single["outputs"][0]),
    )
    .unwrap();
    let assert = evalctl()
        .current_dir(dir.path())
        .args([
            "fep",
            "evaluate",
            "--test-cases",
            "cases.jsonl",
            "--outputs",
            "outputs.jsonl",
            "--checks",
            "checks.json",
        ])
        .assert()
        .code(0);
    let document: Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert_eq!(outcomes(&document), unknown_member_outcomes());
}

#[test]
fn threshold_refuses_a_member_its_schema_forbids_naming_it() {
    let request = json!({
        "test_cases": [{"id": "t1", "input": "q"}],
        "outputs": [{"value": {"score": 0.9}}],
        "checks": [check("threshold",
            json!({"value": "$.output.value.score", "min_value": 0.5, "unit": "ratio"}))]
    });
    let refused = vec![json!({
        "status": "error",
        "results": {},
        "error": {"type": "validation_error", "recoverable": false,
                  "message": "arguments.unit: unknown key `unit` (expected one of value, \
                              min_value, max_value, min_inclusive, max_inclusive, negate)"},
        "ignored": null,
    })];
    let (document, code) = evaluate(&request);
    assert_eq!(code, 1);
    assert_eq!(outcomes(&document), refused);
    let (_dir, server) = serve();
    assert_eq!(outcomes(&evaluated_by_serve(&server, &request)), refused);
}

#[test]
fn a_missing_argument_names_the_unlisted_one_that_misspells_it() {
    let request = json!({
        "test_cases": [{"id": "t1", "input": "q"}],
        "outputs": [{"value": "x"}],
        "checks": [check("exact_match", json!({"actual": "$.output.value", "expceted": "x"}))]
    });
    let (document, _) = evaluate(&request);
    assert_eq!(
        document["results"][0]["check_results"][0]["error"]["message"],
        "arguments: missing required key `expected` (`expceted` is given: misspelt?)"
    );
}

#[test]
fn values_outside_the_schemas_types_are_refused_naming_the_member() {
    let case = |id: &str, expected: Value| json!({"id": id, "input": "q", "expected": expected});
    let request = json!({
        "test_cases": [case("a", json!(0.5)), case("b", json!(true)), case("c", json!([1, 2])),
                       case("d", Value::Null)],
        "outputs": [{"value": 0.5}, {"value": true}, {"value": [1, 2]}, {"value": null}],
        "checks": [check("exact_match", json!({"actual": "$.output.value", "expected": "x"}))]
    });
    let problems = [
        "test_cases[0].expected: expected a string, an object or null, found number",
        "test_cases[1].expected: expected a string, an object or null, found boolean",
        "test_cases[2].expected: expected a string, an object or null, found array",
        "outputs[0].value: expected a string or an object, found number",
        "outputs[1].value: expected a string or an object, found boolean",
        "outputs[2].value: expected a string or an object, found array",
        "outputs[3].value: expected a string or an object, found null",
    ];
    refused_by_fep_evaluate(&request, &problems);
    let (_dir, server) = serve();
    refused_by_serve(&server, &request, &problems);

    // The large path and the streaming mode find the same.
    let dir = tempfile::tempdir().unwrap();
    let mut large = json!({
        "test_cases": (0..300).map(|i| case(&format!("c{i}"), json!("x"))).collect::<Vec<_>>(),
        "outputs": vec![json!({"value": "x"}); 300],
        "checks": request["checks"],
    });
    large["outputs"][299]["value"] = json!(0.5);
    fs::write(dir.path().join("large.json"), large.to_string()).unwrap();
    evalctl()
        .current_dir(dir.path())
        .args(["fep", "evaluate", "--format", "text", "large.json"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: large.json: outputs[299].value: expected a string or an object, found number\n",
        );
    fs::write(
        dir.path().join("checks.json"),
        json!({"checks": request["checks"]}).to_string(),
    )
    .unwrap();
    fs::write(
        dir.path().join("cases.jsonl"),
        "{\"id\": \"a\", \"input\": \"q\", \"expected\": 0.5}\n{\"id\": \"b\", \"input\": \"q\"}\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("outputs.jsonl"),
        "{\"value\": \"x\"}\n{\"value\": null}\n",
    )
    .unwrap();
    evalctl()
        .current_dir(dir.path())
        .args([
            "fep",
            "evaluate",
            "--format",
            "text",
            "--test-cases",
            "cases.jsonl",
            "--outputs",
            "outputs.jsonl",
            "--checks",
            "checks.json",
        ])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: cases.jsonl:1: expected: expected a string, an object or null, found number\n\
             error: outputs.jsonl:2: value: expected a string or an object, found null\n",
        );
}

#[test]
fn a_version_that_is_not_semver_is_refused_with_or_without_test_cases() {
    let versioned = |version: Value| {
        json!({"type": "exact_match", "version": version,
               "arguments": {"actual": "$.output.value", "expected": "x"}})
    };
    let checks = json!([
        versioned(json!("latest")),
        versioned(json!(1)),
        versioned(json!("1.0"))
    ]);
    let problems = [
        "checks[0].version: `latest` is not a semantic version (MAJOR.MINOR.PATCH)",
        "checks[1].version: expected a semantic version string, found number",
        "checks[2].version: `1.0` is not a semantic version (MAJOR.MINOR.PATCH)",
    ];
    let (_dir, server) = serve();
    for test_cases in [json!([]), json!([{"id": "t1", "input": "q"}])] {
        let outputs: Vec<Value> = test_cases
            .as_array()
            .unwrap()
            .iter()
            .map(|_| json!({"value": "x"}))
            .collect();
        let request = json!({"test_cases": test_cases, "outputs": outputs, "checks": checks});
        refused_by_fep_evaluate(&request, &problems);
        refused_by_serve(&server, &request, &problems);
    }
    // A semver version of another major is valid: that check cannot run, the others do.
    let request = json!({
        "test_cases": [{"id": "t1", "input": "q"}], "outputs": [{"value": "x"}],
        "checks": [versioned(json!("2.0.0")), versioned(json!("1.4.0"))]
    });
    let expected = vec![
        json!({"status": "error", "results": {}, "ignored": null,
               "error": {"type": "validation_error", "recoverable": false,
                         "message": "version: `2.0.0` is not available: evalctl implements \
                                     1.0.0 (any 1.x.y is accepted)"}}),
        json!({"status": "completed", "results": {"passed": true}, "error": null,
               "ignored": null}),
    ];
    assert_eq!(outcomes(&evaluate(&request).0), expected);
    assert_eq!(outcomes(&evaluated_by_serve(&server, &request)), expected);
}

#[test]
fn checks_is_required_even_when_every_test_case_carries_its_own() {
    let own = check(
        "exact_match",
        json!({"actual": "$.output.value", "expected": "x"}),
    );
    let mut request = json!({
        "test_cases": [{"id": "t1", "input": "q", "checks": [own]}],
        "outputs": [{"value": "x"}]
    });
    let (_dir, server) = serve();
    refused_by_fep_evaluate(&request, &["missing required key `checks`"]);
    refused_by_serve(&server, &request, &["missing required key `checks`"]);
    refused_by_fep_evaluate(
        &json!({"test_cases": [], "outputs": []}),
        &["missing required key `checks`"],
    );
    // An empty `checks` leaves the test cases' own to run.
    request["checks"] = json!([]);
    let passed = vec![json!({"status": "completed", "results": {"passed": true},
                             "error": null, "ignored": null})];
    assert_eq!(outcomes(&evaluate(&request).0), passed);
    assert_eq!(outcomes(&evaluated_by_serve(&server, &request)), passed);
}

#[test]
fn a_name_with_a_blank_outside_brackets_is_no_jsonpath() {
    let request = json!({
        "test_cases": [{"id": "t1", "input": "q"}],
        "outputs": [{"value": {"a b": "x", "k": "x"}}],
        "checks": [
            check("exact_match", json!({"actual": "$.output.value.a b", "expected": "x"})),
            check("exact_match", json!({"actual": "$.output.value.k ", "expected": "x"})),
            check("exact_match", json!({"actual": "$.output.value['a b']", "expected": "x"}))
        ]
    });
    let (document, _) = evaluate(&request);
    let statuses: Vec<Value> = outcomes(&document)
        .into_iter()
        .map(|outcome| json!([outcome["status"], outcome["error"]["message"]]))
        .collect();
    let refused = |path: &str| {
        json!([
            "error",
            format!(
                "arguments.actual: not a valid JSONPath `{path}`: a blank \
            outside brackets may only come before `.` or `[` (a name with a space is written \
            ['a b'])"
            )
        ])
    };
    assert_eq!(
        statuses,
        [
            refused("$.output.value.a b"),
            refused("$.output.value.k "),
            json!(["completed", null])
        ]
    );
}

#[test]
fn a_jsonpath_that_cannot_be_parsed_is_a_jsonpath_error() {
    let request = json!({
        "test_cases": [{"id": "t1", "input": "q"}],
        "outputs": [{"value": "x"}],
        "checks": [
            check("exact_match", json!({"actual": "$.output.value[", "expected": "x"})),
            check("exact_match", json!({"actual": "$.output.nothing", "expected": "x"})),
            check("exact_match", json!({"actual": "$.output.value[", "expected": "x",
                                        "negate": "no"}))
        ]
    });
    let (document, code) = evaluate(&request);
    assert_eq!(code, 1);
    let errors: Vec<Value> = outcomes(&document)
        .into_iter()
        .map(|outcome| outcome["error"].clone())
        .collect();
    let broken =
        "arguments.actual: not a valid JSONPath `$.output.value[`: Failed to parse rule:  \
                  --> 1:16 ⏎   | ⏎ 1 | $.output.value[ ⏎   |                ^--- ⏎   | ⏎   = \
                  expected selector";
    let error =
        |kind: &str, message: &str| json!({"type": kind, "message": message, "recoverable": false});
    assert_eq!(
        errors,
        [
            error("jsonpath_error", broken),
            error(
                "jsonpath_error",
                "argument `actual`: JSONPath `$.output.nothing` matched nothing in the evaluation context"
            ),
            // A check with another problem besides is malformed: a validation_error naming both.
            error(
                "validation_error",
                &format!("{broken}; arguments.negate: expected a boolean, found string")
            ),
        ]
    );
    let (_dir, server) = serve();
    assert_eq!(
        outcomes(&evaluated_by_serve(&server, &request)),
        outcomes(&document)
    );
}

/// The check every REST test makes of each answer (`serve_support::request`): against the
/// OpenAPI document's schema of that path, method and status, section 4.2's EvaluationRunResult,
/// the members 4.1 allows a TestCaseResult, section 2.3.4's CheckResult and the check type's
/// results schema (2.3.5), all verbatim from the FEP document; a method or status the document
/// does not list must be its ErrorResponse.
#[test]
fn responses_are_checked_against_the_documents_openapi_and_json_schemas() {
    use crate::serve_support::capitals_request;
    use crate::serve_support::document::{response_schema, violations};
    assert_eq!(
        [
            response_schema("POST", "/evaluate?stream=yes", 400),
            response_schema("GET", "/evaluations/e-1", 200),
            response_schema("GET", "/evaluations/e-1", 401),
            response_schema("GET", "/health", 200),
            response_schema("GET", "/openapi.yaml", 200),
            response_schema("GET", "/evaluations/a/b", 200),
        ],
        [
            Some("/paths/~1evaluate/post/responses/400/content/application~1json/schema".into()),
            Some(
                "/paths/~1evaluations~1{evaluation_id}/get/responses/200/content/application~1json/schema"
                    .into()
            ),
            Some("/components/schemas/ErrorResponse".into()),
            Some("/paths/~1health/get/responses/200/content/application~1json/schema".into()),
            None,
            None,
        ]
    );

    let (_dir, server) = serve();
    let reply = server.request("POST", "/evaluate", &[], &capitals_request(1));
    let mut run = reply.json();
    assert_eq!(violations("POST", "/evaluate", 200, &run), Some(vec![]));
    run.as_object_mut().unwrap().remove("summary");
    run["extra"] = json!(1);
    run["results"][0]["check_results"][0]["results"]["passed"] = json!("yes");
    run["results"][0]["check_results"][0]["evaluated_at"] = json!("yesterday");
    run["results"][0]["execution_context"]["extra"] = json!(2);
    let openapi =
        "openapi.yaml#/paths/~1evaluate/post/responses/200/content/application~1json/schema";
    let evaluated_at = "/results/0/check_results/0/evaluated_at";
    assert_eq!(
        violations("POST", "/evaluate", 200, &run),
        Some(vec![
            format!("at the top: \"summary\" is a required property ({openapi})"),
            format!("at {evaluated_at}: \"yesterday\" is not a \"date-time\" ({openapi})"),
            "at the top: \"summary\" is a required property (evaluation_run_result.json)".into(),
            format!(
                "at {evaluated_at}: \"yesterday\" is not a \"date-time\" (evaluation_run_result.json)"
            ),
            "at the top: Additional properties are not allowed ('extra' was unexpected) \
             (evaluation_run_result.json)"
                .into(),
            "at /evaluated_at: \"yesterday\" is not a \"date-time\" (check_result.json, \
             results[0].check_results[0])"
                .into(),
            "at /passed: \"yes\" is not of type \"boolean\" (exact_match.results.json, \
             results[0].check_results[0].results)"
                .into(),
            "at /results/0/execution_context: member `extra` is not allowed \
             (test_case_result.json)"
                .into(),
        ])
    );

    let missing = server.request("GET", "/evaluations/nope", &[], b"");
    assert_eq!(missing.status, 404);
    let error = missing.json();
    assert_eq!(
        violations("GET", "/evaluations/nope", 404, &error),
        Some(vec![])
    );
    let not_found = "openapi.yaml#/paths/~1evaluations~1{evaluation_id}/get/responses/404/content/\
                     application~1json/schema";
    assert_eq!(
        violations("GET", "/evaluations/nope", 404, &json!({"message": 1})),
        Some(vec![
            format!("at the top: \"error\" is a required property ({not_found})"),
            format!("at /message: 1 is not of type \"string\" ({not_found})"),
        ])
    );
    assert_eq!(
        violations("DELETE", "/evaluate", 405, &json!({"error": "x"})),
        Some(vec!["at the top: \"message\" is a required property \
             (openapi.yaml#/components/schemas/ErrorResponse)"
            .to_string()])
    );
}
