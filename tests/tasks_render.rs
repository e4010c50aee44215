//! `evalctl tasks render` end to end: few-shot examples in front of the prompt, one JSON line per
//! valid task, and what happens with invalid records.

use crate::common::evalctl;
use predicates::prelude::*;
use serde_json::Value;

#[test]
fn renders_one_line_per_task_with_few_shot_first() {
    let out = evalctl()
        .args(["tasks", "render", "fixtures/tasks/tasks.jsonl"])
        .assert()
        .success()
        .stderr("");
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 10);
    assert_eq!(
        stdout.lines().next().unwrap(),
        r#"{"task_id":"arith_001","prompt":"Question: 2 + 2\nAnswer: 4\n\nQuestion: 10 + 5\nAnswer: 15\n\nCompute the result. Question: 17 + 24\nAnswer:"}"#
    );
    assert_eq!(lines[1]["task_id"], "arith_002");
    assert_eq!(
        lines[1]["prompt"],
        "Tom has 7 apples and buys 5 more. How many apples does he have?"
    );
}

#[test]
fn invalid_records_stop_rendering_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.jsonl");
    let good = std::fs::read_to_string("fixtures/tasks/tasks.jsonl").unwrap();
    let first = good.lines().next().unwrap();
    std::fs::write(&path, format!("{first}\n[1]\n")).unwrap();
    evalctl()
        .args(["tasks", "render", "--format", "text"])
        .arg(&path)
        .assert()
        .code(2)
        .stdout("")
        .stderr(format!(
            "error: {path}:2: bad_type: expected a JSON object, found array\n\
             error: {path}: 1 task-spec error; fix it (see `evalctl tasks validate`) or pass \
             --allow-bad-tasks to skip it\n",
            path = path.display()
        ));
    evalctl()
        .args(["tasks", "render", "--allow-bad-tasks"])
        .arg(&path)
        .assert()
        .success()
        .stdout(
            predicate::str::starts_with(r#"{"task_id":"arith_001""#)
                .and(predicate::function(|out: &str| out.lines().count() == 1)),
        )
        .stderr(format!(
            "warning: skipped: {}:2: bad_type: expected a JSON object, found array\n",
            path.display()
        ));
}

#[test]
fn skipping_every_record_warns_that_nothing_was_rendered() {
    // One warning per error `tasks validate` lists, then that nothing is left.
    let validated = evalctl()
        .args([
            "tasks",
            "validate",
            "--format",
            "text",
            "fixtures/tasks/tasks_bad.jsonl",
        ])
        .assert()
        .code(2);
    let errors = String::from_utf8_lossy(&validated.get_output().stdout).into_owned();
    assert_eq!(errors.lines().count(), 18, "{errors}");
    let expected: String = errors
        .lines()
        .map(|line| format!("warning: skipped: {line}\n"))
        .chain(["warning: fixtures/tasks/tasks_bad.jsonl: no valid tasks to render\n".into()])
        .collect();
    evalctl()
        .args([
            "tasks",
            "render",
            "--allow-bad-tasks",
            "fixtures/tasks/tasks_bad.jsonl",
        ])
        .assert()
        .success()
        .stdout("")
        .stderr(expected);
}
