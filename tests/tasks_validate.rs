//! `evalctl tasks validate` end to end: the clean and the bad fixture, both report formats,
//! `--allow-bad-tasks`, file-level problems, field names that need quoting, and the clean
//! fixture's coverage of every category, metric and post-process rule.

use crate::common::evalctl;
use serde_json::Value;

const GOOD: &str = "fixtures/tasks/tasks.jsonl";
const BAD: &str = "fixtures/tasks/tasks_bad.jsonl";

/// Every rule the validator knows, as documented in docs/tasks.md.
const RULES: [&str; 18] = [
    "bad_json",
    "bad_type",
    "missing_field",
    "unknown_field",
    "bad_task_id",
    "duplicate_task_id",
    "bad_category",
    "bad_prompt",
    "prompt_trailing_whitespace",
    "embedded_few_shot",
    "bad_targets",
    "bad_metric",
    "bad_post_process",
    "illegal_metric_for_category",
    "bad_mcq_target",
    "bad_few_shot",
    "too_many_few_shot",
    "bad_metadata",
];

#[test]
fn the_clean_fixture_validates() {
    evalctl()
        .args(["tasks", "validate", GOOD, "--format", "text"])
        .assert()
        .success()
        .stdout("")
        .stderr(format!("{GOOD}: 10 valid tasks, 0 errors\n"));
    let out = evalctl()
        .args(["tasks", "validate", GOOD, "--format", "json"])
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout).trim(),
        "[]"
    );
}

#[test]
fn the_bad_fixture_trips_every_rule_once_per_line() {
    let bad_lines = std::fs::read_to_string(BAD)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .count();
    let out = evalctl()
        .args(["tasks", "validate", BAD, "--format", "text"])
        .assert()
        .code(2)
        .stderr(format!("{BAD}: 0 valid tasks, {bad_lines} errors\n"));
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), bad_lines, "{stdout}");
    assert_eq!(lines.len(), RULES.len());
    for (index, (line, rule)) in lines.iter().zip(RULES).enumerate() {
        // FILE:LINE: [task ID, field F: ]rule: detail (task and field only when known)
        let rest = line
            .strip_prefix(&format!("{BAD}:{}: ", index + 1))
            .unwrap_or_else(|| panic!("FILE:LINE: in {line}"));
        let after_location = if rest.starts_with("task ") || rest.starts_with("field ") {
            rest.split_once(": ").map_or("", |(_, after)| after)
        } else {
            rest
        };
        assert!(after_location.starts_with(&format!("{rule}: ")), "{line}");
    }
    assert_eq!(
        lines[5],
        format!(
            "{BAD}:6: task missing_post_process, field task_id: duplicate_task_id: \
             \"missing_post_process\" was already used on line 3"
        )
    );
    assert_eq!(
        lines[4],
        format!(
            "{BAD}:5: field task_id: bad_task_id: \"task id with spaces\" does not match \
             [A-Za-z0-9_-]+"
        )
    );
    assert!(lines[0].starts_with(&format!("{BAD}:1: bad_json: invalid JSON")));
}

#[test]
fn json_report_is_an_array_of_error_objects() {
    let out = evalctl()
        .args(["tasks", "validate", BAD, "--format", "json"])
        .assert()
        .code(2);
    let errors: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let errors = errors.as_array().unwrap();
    assert_eq!(errors.len(), RULES.len());
    let rules: Vec<&str> = errors.iter().map(|e| e["rule"].as_str().unwrap()).collect();
    assert_eq!(rules, RULES);
    let first = errors[0].as_object().unwrap();
    let keys: Vec<&str> = first.keys().map(String::as_str).collect();
    assert_eq!(keys, ["line", "task_id", "rule", "field", "detail"]);
    assert_eq!(first["task_id"], Value::Null);
    assert_eq!(first["field"], Value::Null);
    assert_eq!(errors[15]["field"], "few_shot_examples[0].completion");
    assert_eq!(errors[15]["task_id"], "bad_few_shot");
    assert_eq!(errors[15]["line"], 16);
}

#[test]
fn allow_bad_tasks_still_reports_but_exits_zero() {
    let strict = evalctl()
        .args(["tasks", "validate", BAD, "--format", "json"])
        .assert()
        .code(2);
    let allowed = evalctl()
        .args(["tasks", "validate", BAD, "--allow-bad-tasks"])
        .assert()
        .success();
    // The same report, every error listed.
    assert_eq!(
        allowed.get_output().stdout,
        strict.get_output().stdout,
        "{}",
        String::from_utf8_lossy(&allowed.get_output().stdout)
    );
}

#[test]
fn a_record_that_gives_a_field_twice_is_bad_json_naming_the_field() {
    // Read as JSON readers read it, the last value would win: an mcq task with target A would be
    // scored as the summary task the second `category` and `targets` make of it.
    let good = std::fs::read_to_string(GOOD).unwrap();
    let first = good.lines().next().unwrap();
    let twice = format!(
        "{},\"category\":\"summary\"}}\n",
        first.trim_end().strip_suffix('}').unwrap()
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("twice.jsonl");
    std::fs::write(&path, format!("{first}\n{twice}")).unwrap();
    // Refused at the repeated key's closing quote, before its value.
    let column = twice.trim_end().chars().count() - ":\"summary\"}".len();
    evalctl()
        .args(["tasks", "validate", "--format", "text"])
        .arg(&path)
        .assert()
        .code(2)
        .stdout(format!(
            "{}:2: bad_json: the key `category` is given twice in one object (the second by \
             column {column}): keep one\n",
            path.display()
        ))
        .stderr(format!("{}: 1 valid task, 1 error\n", path.display()));
}

#[test]
fn a_prompt_ending_in_what_python_strips_ends_with_whitespace() {
    // U+001F is whitespace to Python's `str.strip()`, as the post-process rules read it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(
        &path,
        "{\"task_id\":\"t1\",\"category\":\"arithmetic\",\"prompt\":\"What is 2 + 2?\\u001f\",\
         \"targets\":[\"4\"],\"metric_name\":\"exact_match\",\"post_process\":\"none\"}\n",
    )
    .unwrap();
    evalctl()
        .args(["tasks", "validate", "--format", "text"])
        .arg(&path)
        .assert()
        .code(2)
        .stdout(format!(
            "{}:1: task t1, field prompt: prompt_trailing_whitespace: the prompt ends with \
             whitespace\n",
            path.display()
        ));
}

#[test]
fn file_level_problems_name_the_path() {
    evalctl()
        .args([
            "tasks",
            "validate",
            "--format",
            "text",
            "no/such/tasks.jsonl",
        ])
        .assert()
        .code(2)
        .stdout("")
        .stderr("error: no/such/tasks.jsonl: cannot read: No such file or directory\n");
    evalctl()
        .args(["tasks", "validate", "fixtures/tasks"])
        .assert()
        .code(2)
        .stderr("error: fixtures/tasks: is a directory, not a file\n");
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    for (bytes, holds) in [("", "is empty"), ("\n  \n", "holds only blank lines")] {
        std::fs::write(&empty, bytes).unwrap();
        evalctl()
            .args(["tasks", "validate"])
            .arg(&empty)
            .assert()
            .code(2)
            .stderr(format!(
                "error: {}: no tasks (the file {holds})\n",
                empty.display()
            ));
    }
}

#[test]
fn invalid_utf8_blank_lines_and_crlf() {
    let good = std::fs::read_to_string(GOOD).unwrap();
    let first = good.lines().next().unwrap();
    let mut bytes = format!("\u{feff}{first}\r\n\n").into_bytes();
    bytes.extend_from_slice(b"{\"task_id\": \"caf\xe9\"}\n");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.jsonl");
    std::fs::write(&path, bytes).unwrap();
    evalctl()
        .args(["tasks", "validate", "--format", "text"])
        .arg(&path)
        .assert()
        .code(2)
        .stdout(format!(
            "{}:3: bad_json: invalid UTF-8 (bad byte at column 17)\n",
            path.display()
        ))
        .stderr(format!("{}: 1 valid task, 1 error\n", path.display()));
}

#[test]
fn odd_field_names_are_quoted_in_text_lines() {
    let record = serde_json::json!({
        "task_id": "odd", "category": "arithmetic", "prompt": "1+1", "targets": ["2"],
        "metric_name": "exact_match", "post_process": "none", "a\nb: c": 1,
        "few_shot_examples": [{"prompt": "2+2", "completion": "4", "x y": "z"}]
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.jsonl");
    std::fs::write(&path, format!("{record}\n")).unwrap();
    let shown = path.display();
    evalctl()
        .args(["tasks", "validate", "--format", "text"])
        .arg(&path)
        .assert()
        .code(2)
        .stdout(format!(
            "{shown}:1: task odd, field \"a\\nb: c\": unknown_field: unknown key `\"a\\nb: c\"` \
             (expected one of task_id, category, prompt, targets, metric_name, post_process, \
             few_shot_examples, metadata)\n\
             {shown}:1: task odd, field \"few_shot_examples[0].x y\": bad_few_shot: unknown key \
             `\"x y\"` (expected one of prompt, completion)\n"
        ));
    // JSON reports carry the field as a plain string: JSON already escapes it.
    let out = evalctl()
        .args(["tasks", "validate", "--format", "json"])
        .arg(&path)
        .assert()
        .code(2);
    let errors: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(errors[0]["field"], "a\nb: c");
}

#[test]
fn the_clean_fixture_covers_every_category_metric_and_rule() {
    use evalctl::tasks::{Category, MetricName, PostProcess};
    use std::collections::BTreeMap;
    let records: Vec<Value> = std::fs::read_to_string(GOOD)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let count = |field: &str| {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for record in &records {
            let name = record[field].as_str().unwrap().to_string();
            *counts.entry(name).or_default() += 1;
        }
        counts
    };
    let categories = count("category");
    let expected: BTreeMap<String, usize> = Category::ALL
        .iter()
        .map(|category| (category.name().to_string(), 2))
        .collect();
    assert_eq!(categories, expected, "exactly two tasks per category");
    let metrics = count("metric_name");
    for metric in MetricName::ALL {
        assert!(
            metrics.contains_key(metric.name()),
            "{} unused",
            metric.name()
        );
    }
    assert_eq!(metrics.len(), MetricName::ALL.len(), "{metrics:?}");
    let rules = count("post_process");
    for rule in PostProcess::ALL {
        assert!(rules.contains_key(rule.name()), "{} unused", rule.name());
    }
    assert_eq!(rules.len(), PostProcess::ALL.len(), "{rules:?}");
}

#[test]
fn a_marker_inside_a_snake_case_name_is_no_few_shot_block() {
    // `var_q:` and `my_example:` do not start a word; `Q:` twice does.
    let task = |id: &str, prompt: &str| {
        serde_json::json!({
            "task_id": id, "category": "arithmetic", "prompt": prompt, "targets": ["2"],
            "metric_name": "exact_match", "post_process": "none", "few_shot_examples": []
        })
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.jsonl");
    let lines = [
        task("names", "see var_q: 1 and my_example: 2"),
        task("block", "Q: 1+1\nA: 2\nQ: 2+2"),
    ];
    std::fs::write(&path, format!("{}\n{}\n", lines[0], lines[1])).unwrap();
    let shown = path.display();
    evalctl()
        .args(["tasks", "validate", "--format", "text"])
        .arg(&path)
        .assert()
        .code(2)
        .stdout(format!(
            "{shown}:2: task block, field prompt: embedded_few_shot: the prompt holds 2 \
             question:/q:/example: markers, a few-shot block; move the examples to \
             few_shot_examples\n"
        ));
}
