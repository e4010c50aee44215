//! `code_exec` targets through `evalctl tasks score`: a target that parses as a Python expression
//! is asserted, statements run as they are, and what the code prints (even without a trailing
//! newline) has no say in whether an assertion completed.

use crate::common::{succeeded, Sandbox};
use serde_json::{json, Value};

/// Score one `code_exec` task with `targets` against `code`; the per-task line.
fn score(sandbox: &Sandbox, code: &str, targets: &[&str]) -> Value {
    let task = json!({"task_id": "t", "category": "code_exec", "prompt": "Write square.",
                      "targets": targets, "metric_name": "code_exec", "post_process": "none"});
    sandbox.write("tasks.jsonl", format!("{task}\n"));
    sandbox.write(
        "outputs.jsonl",
        format!("{}\n", json!({"task_id": "t", "output": code})),
    );
    let _ = std::fs::remove_file(sandbox.join("per_task.jsonl"));
    succeeded(sandbox.evalctl().args([
        "tasks",
        "score",
        "tasks.jsonl",
        "--outputs",
        "outputs.jsonl",
        "--format",
        "json",
        "--output",
        "per_task.jsonl",
    ]));
    sandbox.jsonl("per_task.jsonl").remove(0)
}

const SQUARE: &str = "def square(x):\n    return x * x";

#[test]
fn an_expression_target_is_asserted() {
    let sandbox = Sandbox::new();
    let line = score(&sandbox, SQUARE, &["square(5) == 26"]);
    assert_eq!(line["score"], 0.0, "{line}");
    assert_eq!(
        line["assertions"]["first_failure"],
        "square(5) == 26: AssertionError"
    );
    let line = score(
        &sandbox,
        SQUARE,
        &[
            "square(5) == 25",
            "(square(2),\n square(3)) == (4, 9)  # both",
        ],
    );
    assert_eq!(line["score"], 1.0, "{line}");
    let line = score(&sandbox, SQUARE, &["square(0)", "[]", "missing(1)"]);
    assert_eq!(line["score"], 0.0, "falsy or failing expressions: {line}");
    assert_eq!(
        line["assertions"]["first_failure"],
        "square(0): AssertionError"
    );
}

#[test]
fn statement_targets_run_as_they_are() {
    let sandbox = Sandbox::new();
    let line = score(
        &sandbox,
        SQUARE,
        &[
            "assert square(5) == 25",
            "result = square(3)\nassert result == 9",
            "assert square(5) == 26",
        ],
    );
    assert_eq!(line["assertions"]["passed"], 2, "{line}");
    assert_eq!(
        line["assertions"]["first_failure"],
        "assert square(5) == 26: AssertionError"
    );
    // A statement with no assertion in it passes when it runs without raising.
    let line = score(&sandbox, SQUARE, &["value = square(5)"]);
    assert_eq!(line["score"], 1.0, "{line}");
    // Code that shadows the builtins the runner uses is still checked.
    let shadowing = format!("{SQUARE}\ndef eval(x):\n    return True\nopen = None");
    let line = score(
        &sandbox,
        &shadowing,
        &["square(5) == 26", "square(5) == 25"],
    );
    assert_eq!(line["assertions"]["passed"], 1, "{line}");
}

#[test]
fn printing_without_a_trailing_newline_does_not_fail_a_passing_assertion() {
    let sandbox = Sandbox::new();
    for code in [
        "import sys\nsys.stdout.write('no newline')\ndef square(x):\n    return x * x",
        "print('partial', end='', flush=True)\ndef square(x):\n    return x * x",
        "import sys\nsys.stdout.close()\ndef square(x):\n    return x * x",
    ] {
        let line = score(
            &sandbox,
            code,
            &["square(5) == 25", "assert square(2) == 4"],
        );
        assert_eq!(line["score"], 1.0, "{code}: {line}");
    }
    // Exiting early still fails, whatever was printed before.
    let line = score(
        &sandbox,
        "print('ok', end='')\nimport os\nos._exit(0)",
        &["True"],
    );
    assert_eq!(line["score"], 0.0, "{line}");
}
