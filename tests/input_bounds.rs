//! Inputs that would make evalctl's work grow without bound end in a named error instead: a
//! JSONPath whose worst case over its document is too large, deeply nested YAML, a fuzzy match of
//! very long strings, a regex pattern that compiles too large, or patterns that do together.

use serde_json::json;

use crate::common::Sandbox;
use crate::fep_support::{check, check_results, error_of};

/// `depth` arrays, each the only element of the one around it.
fn nested_array(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn a_jsonpath_that_multiplies_over_a_deep_document_is_a_jsonpath_error() {
    let nested: serde_json::Value = serde_json::from_str(&nested_array(120)).unwrap();
    // An output value is a string or an object (the FEP's schema): the array sits in one.
    let request = json!({
        "test_cases": [{"id": "a", "input": "q"}],
        "outputs": [{"value": {"a": nested}}],
        "checks": [check("exact_match", json!({"actual": "$..*..*..*..*", "expected": 1}))],
    });
    assert!(request.to_string().len() < 410, "a small request");
    let results = check_results(
        request["test_cases"][0].clone(),
        request["outputs"][0].clone(),
        vec![
            request["checks"][0].clone(),
            // The same document with a query of ordinary size still runs.
            check(
                "exact_match",
                json!({"actual": "$.output.value.a[0][0]", "expected": []}),
            ),
            check(
                "exact_match",
                json!({"actual": "$..*[0][0][0]", "expected": []}),
            ),
        ],
    );
    assert_eq!(
        error_of(&results[0]),
        (
            "jsonpath_error".to_string(),
            "argument `actual`: JSONPath `$..*..*..*..*` could visit more than 1,000,000 nodes \
             of this evaluation context (the limit for one query)"
                .to_string()
        )
    );
    assert_eq!(results[1]["status"], "completed", "{}", results[1]);
    assert_eq!(results[2]["status"], "completed", "{}", results[2]);
}

#[test]
fn a_jsonpath_comparison_search_or_length_counts_what_it_reads() {
    // 2,000 zeros compared with themselves once per element: 4 million comparisons; a 1 MB
    // text searched, or its characters counted, once per element.
    let results = check_results(
        json!({"id": "a", "input": "q", "arr": vec![0; 2_000], "big": "x".repeat(1_000_000)}),
        json!({"value": "x"}),
        vec![
            check(
                "exact_match",
                json!({"actual": "$.test_case.arr[?$.test_case.arr == $.test_case.arr]", "expected": 0}),
            ),
            check(
                "exact_match",
                json!({"actual": "$.test_case.arr[?search($.test_case.big, 'y')]", "expected": 0}),
            ),
            // Comparing each element with one value runs.
            check(
                "exact_match",
                json!({"actual": "$.test_case.arr[?@ == $.test_case.arr[0]]", "expected": 0}),
            ),
            check(
                "exact_match",
                json!({"actual": "$.test_case.arr[?length($.test_case.big) > 1]", "expected": 0}),
            ),
        ],
    );
    let refused = |path: &str| {
        (
            "jsonpath_error".to_string(),
            format!(
                "argument `actual`: JSONPath `{path}` could visit more than 1,000,000 nodes of \
                 this evaluation context (the limit for one query)"
            ),
        )
    };
    assert_eq!(
        error_of(&results[0]),
        refused("$.test_case.arr[?$.test_case.arr == $.test_case.arr]")
    );
    assert_eq!(
        error_of(&results[1]),
        refused("$.test_case.arr[?search($.test_case.big, 'y')]")
    );
    assert_eq!(results[2]["status"], "completed", "{}", results[2]);
    assert_eq!(results[2]["results"], json!({"passed": true}));
    assert_eq!(
        error_of(&results[3]),
        refused("$.test_case.arr[?length($.test_case.big) > 1]")
    );
}

#[test]
fn a_fuzzy_match_of_two_long_texts_is_an_error_naming_the_limit() {
    let results = check_results(
        json!({"id": "a", "input": "q", "expected": "b".repeat(100_000)}),
        json!({"value": "a".repeat(100_000)}),
        vec![
            check(
                "spec.fuzzy_match",
                json!({"actual": "$.output.value", "expected": "$.test_case.expected"}),
            ),
            check(
                "spec.rouge_score",
                json!({"actual": "w ".repeat(10_001), "expected": "v ".repeat(10_000)}),
            ),
        ],
    );
    assert_eq!(
        results[0]["error"],
        json!({"type": "validation_error", "recoverable": false, "message":
            "fuzzy_match input too large: the edit distance would compare 100000 × 100000 runes \
             (limit: 100,000,000 rune pairs)"})
    );
    assert_eq!(
        results[1]["error"],
        json!({"type": "validation_error", "recoverable": false, "message":
            "rouge_score input too large: rouge-l would compare 10001 × 10000 tokens \
             (limit: 100,000,000 token pairs)"})
    );
}

#[test]
fn regex_patterns_that_compile_too_large_are_validation_errors_naming_the_limit() {
    // 200 test cases, each with its own pattern whose compiled form is over the limit.
    let cases = 200;
    let test_cases: Vec<_> = (0..cases)
        .map(|n| {
            json!({"id": format!("t{n}"), "input": "q", "checks": [check("regex",
                json!({"text": "$.output.value", "pattern": format!("a{{100000}}#{n}")}))]})
        })
        .collect();
    let request = json!({
        "test_cases": test_cases,
        "outputs": vec![json!({"value": "w"}); cases],
        "checks": [],
    });
    let (document, code) = crate::fep_support::evaluate(&request);
    assert_eq!(code, 1);
    let results = document["results"].as_array().unwrap();
    assert_eq!(results.len(), cases);
    for result in results {
        assert_eq!(
            result["check_results"][0]["error"],
            json!({"type": "validation_error", "recoverable": false, "message":
                "arguments.pattern: the compiled pattern is larger than 1 MiB (the limit for one \
                 pattern)"})
        );
    }
}

#[test]
fn regex_patterns_that_compile_too_large_together_are_validation_errors_naming_the_limit() {
    // 70 distinct patterns each within the limit for one pattern, but near it: those past
    // 64 MiB in all are refused, the first ones run.
    let checks: Vec<_> = (0..70)
        .map(|n| {
            check(
                "regex",
                json!({"text": "$.output.value", "pattern": format!("\\w{{19}}q{n}")}),
            )
        })
        .collect();
    let request = json!({
        "test_cases": [{"id": "t", "input": "q"}],
        "outputs": [{"value": "w"}],
        "checks": checks,
    });
    let (document, code) = crate::fep_support::evaluate(&request);
    assert_eq!(code, 1);
    let results = document["results"][0]["check_results"].as_array().unwrap();
    let refused: Vec<usize> = (results.iter().enumerate())
        .filter(|(_, result)| result["status"] == "error")
        .map(|(index, _)| index)
        .collect();
    assert_eq!(refused, (62..70).collect::<Vec<_>>());
    assert_eq!(
        results[69]["error"],
        json!({"type": "validation_error", "recoverable": false, "message":
            "arguments.pattern: the patterns of this request or file compile to more than 64 MiB \
             in all (the limit for one document's patterns)"})
    );
}

#[test]
fn a_spec_regex_pattern_that_compiles_too_large_is_an_invalid_pattern() {
    let results = check_results(
        json!({"id": "a", "input": "q"}),
        json!({"value": "w"}),
        vec![check(
            "spec.regex_match",
            json!({"actual": "$.output.value", "expected": r"\p{L}{200}\p{L}{200}"}),
        )],
    );
    assert_eq!(
        results[0]["error"],
        json!({"type": "validation_error", "recoverable": false, "message":
            "invalid regex pattern: the compiled pattern is larger than 1 MiB (the limit for one \
             pattern)"})
    );
}

#[test]
fn a_json_schema_compiles_few_patterns_each_within_the_limit() {
    // Each `\p{L}{100}` compiled takes megabytes and a second: 150 of them in a 6 KB schema
    // held the server past --max-memory for minutes.
    let schema_of = |patterns: usize| {
        let all: Vec<_> = (0..patterns)
            .map(|n| json!({"pattern": format!(r"\p{{L}}{{100}}|x{n}")}))
            .collect();
        json!({"type": "string", "allOf": all}).to_string()
    };
    let with_keys = json!({"type": "object", "allOf": (0..31).map(|n| json!({"pattern": format!("x{n}")})).collect::<Vec<_>>(), "patternProperties": {"^a": {}, "^b": {}}});
    let results = check_results(
        json!({"id": "a", "input": "q"}),
        json!({"value": "w"}),
        [schema_of(150), schema_of(1), with_keys.to_string()]
            .into_iter()
            .map(|schema| {
                check(
                    "spec.json_schema",
                    json!({"actual": "\"x0\"", "expected": schema}),
                )
            })
            .collect(),
    );
    let errors: Vec<_> = results.iter().map(error_of).collect();
    assert_eq!(
        errors,
        [
            (
                "validation_error".to_string(),
                "parse JSON schema: the schema holds 150 patterns (pattern, patternProperties), \
                 more than the 32 one schema may hold"
                    .to_string()
            ),
            (
                "validation_error".to_string(),
                r#"parse JSON schema: "\\p{L}{100}|x0" is not a "regex""#.to_string()
            ),
            (
                "validation_error".to_string(),
                "parse JSON schema: the schema holds 33 patterns (pattern, patternProperties), \
                 more than the 32 one schema may hold"
                    .to_string()
            ),
        ]
    );
}

#[test]
fn a_json_schema_of_more_values_than_one_may_hold_is_refused_before_it_is_compiled() {
    // A 7.5 MB schema of 480,000 values compiled to 320 MB on a server of --max-memory 50 MB.
    let schema_of = |properties: usize| {
        let all: serde_json::Map<String, serde_json::Value> = (0..properties)
            .map(|n| (format!("p{n}"), json!({"type": "string"})))
            .collect();
        json!({"type": "object", "properties": all}).to_string()
    };
    // 3 + 2n values: 9,998 properties are 19,999 of them; one more is past the limit.
    let results = check_results(
        json!({"id": "a", "input": "q"}),
        json!({"value": "{}"}),
        [schema_of(9998), schema_of(9999)]
            .into_iter()
            .map(|schema| {
                check(
                    "spec.json_schema",
                    json!({"actual": "$.output.value", "expected": schema}),
                )
            })
            .collect(),
    );
    assert_eq!(results[0]["status"], "completed", "{}", results[0]);
    assert_eq!(
        error_of(&results[1]),
        (
            "validation_error".to_string(),
            "parse JSON schema: the schema holds more than 20000 JSON values, the most one schema \
             may hold"
                .to_string()
        )
    );
}

#[test]
fn a_json_schema_whose_validation_would_multiply_is_an_error_before_it_runs() {
    // 2 KB: each level of `$defs` is oneOf two branches that both reach the level below, so
    // validating a document nested 40 deep would take 2^40 steps (a depth of 20 took 20 s and
    // 1.2 GB).
    let bomb = |depth: usize| {
        let mut defs = serde_json::Map::new();
        defs.insert("d0".into(), json!({}));
        for level in 1..=depth {
            let below = json!({"$ref": format!("#/$defs/d{}", level - 1)});
            defs.insert(
                format!("d{level}"),
                json!({"oneOf": [{"items": below}, {"items": below, "minItems": 0}]}),
            );
        }
        json!({"$defs": defs, "$ref": format!("#/$defs/d{depth}")}).to_string()
    };
    // A schema that refers to itself where it stands would never end.
    let a_loop = json!({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}]}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"});
    // A usual schema over a large document is within the bound: 1 + 20,000 × (1 + 10) steps.
    let fields = "abcdefghij";
    let usual = json!({"type": "array", "items": {"type": "object", "properties":
        fields.chars().map(|name| (name.to_string(), json!({"type": "string"}))).collect::<serde_json::Map<_, _>>()}});
    let record: serde_json::Map<_, _> = fields
        .chars()
        .map(|name| (name.to_string(), json!("x")))
        .collect();
    let large = serde_json::to_string(&vec![record; 20_000]).unwrap();
    // Compiling `unevaluatedProperties` walks the references beside it anew: 12 levels of two
    // took 8 s to compile, under a member no document has.
    let mut defs = serde_json::Map::new();
    defs.insert("d0".into(), json!({}));
    for level in 1..=12 {
        let below = json!({"$ref": format!("#/$defs/d{}", level - 1)});
        defs.insert(
            format!("d{level}"),
            json!({"anyOf": [below, below], "unevaluatedProperties": false}),
        );
    }
    let compiled = json!({"$defs": defs, "properties": {"never": {"$ref": "#/$defs/d12"}}});
    let scanned = json!({"$defs": {"p": {"pattern": "a$"}},
        "allOf": vec![json!({"$ref": "#/$defs/p"}); 300]});
    let schema_check = |actual: &str, expected: String| {
        check(
            "spec.json_schema",
            json!({"actual": actual, "expected": expected}),
        )
    };
    let results = check_results(
        json!({"id": "a", "input": "q"}),
        json!({"value": nested_array(40), "large": large, "huge": "[1e400, 1e400]",
               "long": json!("b".repeat(64 << 10)).to_string(),
               "many": format!("[{}0]", "0,".repeat(250_000))}),
        vec![
            schema_check("$.output.value", bomb(40)),
            schema_check("$.output.value", a_loop.to_string()),
            schema_check("$.output.value", compiled.to_string()),
            // Numbers no float holds all hash alike and equal none: quadratic, and wrong.
            schema_check("$.output.huge", json!({"uniqueItems": true}).to_string()),
            // A pattern scans its text each time it is applied (20,000 times over 200 KB ran
            // for minutes).
            schema_check("$.output.long", scanned.to_string()),
            // Decoded, each value takes tens of bytes (4 million took 400 MB).
            schema_check("$.output.many", json!({}).to_string()),
            schema_check("$.output.large", usual.to_string()),
        ],
    );
    let errors: Vec<_> = results[..6].iter().map(error_of).collect();
    let too_many_steps = (
        "validation_error".to_string(),
        "validate JSON document: validating this document against the schema would take more \
         than 250000 steps (each subschema counted for each part of the document it applies to, \
         as often as oneOf, anyOf, allOf and $ref reach it)"
            .to_string(),
    );
    assert_eq!(
        errors,
        [
            too_many_steps.clone(),
            (
                "validation_error".to_string(),
                "validate JSON document: the schema's subschemas and the document nest deeper \
                 than 512 levels together, or a $ref leads back to where it stands without \
                 descending into the document"
                    .to_string()
            ),
            (
                "validation_error".to_string(),
                "parse JSON schema: compiling the schema's unevaluatedProperties and \
                 unevaluatedItems would walk more than 10000 subschemas (each walks the \
                 subschemas beside it, through every $ref)"
                    .to_string()
            ),
            (
                "validation_error".to_string(),
                "validate JSON document: the document holds a number beyond what a 64-bit float \
                 holds, which the validator cannot compare"
                    .to_string()
            ),
            too_many_steps.clone(),
            (
                "validation_error".to_string(),
                "parse actual JSON document: the document holds more than 250000 values (the \
                 limit)"
                    .to_string()
            ),
        ]
    );
    assert_eq!(results[6]["status"], "completed", "{}", results[6]);
    assert_eq!(results[6]["results"]["passed"], true, "{}", results[6]);
}

#[test]
fn a_deeply_nested_yaml_spec_is_refused_before_it_is_parsed() {
    let sandbox = Sandbox::new();
    // About 160 KB: a validators list nested 80,000 levels deep.
    let spec = format!("name: s\nvalidators: {}\n", nested_array(80_000));
    sandbox.write("spec.yaml", &spec);
    sandbox
        .evalctl()
        .args(["spec", "validate", "spec.yaml", "--format", "text"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: spec.yaml:2: manifest could not be decoded: flow collections ([...], {...}) \
             nest deeper than 128 levels (the limit)\n",
        );
    // The parser holds every event of block nesting in memory before its own limit stops it.
    let spec = format!("name: s\nvalidators:\n{}x\n", "- ".repeat(80_000));
    sandbox.write("block.yaml", &spec);
    sandbox
        .evalctl()
        .args(["spec", "validate", "block.yaml", "--format", "text"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: block.yaml:3: manifest could not be decoded: block collections (indented, or \
             `- - …` on one line) nest deeper than 128 levels (the limit)\n",
        );
}

#[test]
fn deeply_nested_json_is_an_error_naming_the_file_and_line() {
    let sandbox = Sandbox::new();
    let deep = nested_array(200);
    sandbox.write(
        "request.json",
        format!(
            "{{\"test_cases\": [{{\"id\": \"a\", \"input\": \"q\"}}],\n\"outputs\": [{{\"value\": \
             {deep}}}], \"checks\": []}}"
        ),
    );
    sandbox
        .evalctl()
        .args(["fep", "evaluate", "--format", "text", "request.json"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: request.json: invalid JSON: arrays and objects nest deeper than 127 levels (the limit) at line 2, column 147\n",
        );
    sandbox.write("results.jsonl", format!("{{\"a\": {deep}}}\n"));
    sandbox
        .evalctl()
        .args(["summarize", "--format", "text", "results.jsonl"])
        .assert()
        .code(2)
        .stdout("")
        .stderr("error: results.jsonl:1: invalid JSON: arrays and objects nest deeper than 127 levels (the limit) at column 133\n");
}

#[test]
fn a_contains_check_with_too_much_to_search_is_a_validation_error_naming_the_limit() {
    // 20,000 phrases, each searched for in 50,001 bytes of text: 1,000,020,000 bytes.
    let phrases = vec!["zz"; 20_000];
    let results = check_results(
        json!({"id": "a", "input": "q"}),
        json!({"value": format!("{}z", "ab".repeat(25_000))}),
        vec![
            check(
                "contains",
                json!({"text": "$.output.value", "phrases": phrases}),
            ),
            check(
                "contains",
                json!({"text": "$.output.value", "phrases": ["ab", "z"]}),
            ),
        ],
    );
    assert_eq!(
        results[0]["error"],
        json!({"type": "validation_error", "recoverable": false, "message":
            "argument `phrases`: searching 20000 phrases in 50001 bytes of text could scan more \
             than 1,000,000,000 bytes (the limit for one check)"})
    );
    assert_eq!(results[1]["results"], json!({"passed": true}));
}
