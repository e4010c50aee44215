//! `evalctl tasks score` end to end: post-processing and every metric on the fixtures, the
//! per-task file, aggregates, stdin, missing, unknown and ignored outputs, empty and large
//! outputs files, bad outputs files and the `code_exec` runner's timeout, leftover processes,
//! early exits, environment and missing or unusable python3.

use crate::common;

use std::path::Path;

use crate::common::evalctl;
use predicates::prelude::*;
use serde_json::{json, Value};

const TASKS: &str = "fixtures/tasks/tasks.jsonl";
const OUTPUTS: &str = "fixtures/tasks/outputs.jsonl";

fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn write_jsonl(path: &Path, records: &[Value]) {
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn scores_every_fixture_task_with_its_rule_and_metric() {
    let dir = tempfile::tempdir().unwrap();
    let per_task = dir.path().join("per_task.jsonl");
    let out = evalctl()
        .args([
            "tasks",
            "score",
            TASKS,
            "--outputs",
            OUTPUTS,
            "--format",
            "json",
            "--output",
        ])
        .arg(&per_task)
        .assert()
        .success()
        .stderr("");
    // Reference values: sum_001 from sacrebleu 2.6.0, sum_002 from rouge-score 0.1.2.
    let expected = [
        ("arith_001", 1.0, "41"),
        ("arith_002", 2.0 / 3.0, "He has 12 apples."),
        ("mcq_001", 1.0, "B"),
        ("mcq_002", 0.0, "C"),
        ("code_001", 1.0, "def add(a, b):\n    return a + b"),
        (
            "code_002",
            2.0 / 3.0,
            "def is_even(n):\n    return n > 0 and n % 2 == 0",
        ),
        ("cls_001", 1.0, "positive"),
        ("cls_002", 1.0, "Science"),
        (
            "sum_001",
            0.6262844962765469,
            "The cat sat on the mat all afternoon, watching the birds.",
        ),
        (
            "sum_002",
            0.6250000000000001,
            "Heavy rain flooded the road on Monday.",
        ),
    ];
    let lines = read_lines(&per_task);
    assert_eq!(lines.len(), expected.len());
    for (line, (id, score, processed)) in lines.iter().zip(expected) {
        assert_eq!(line["task_id"], id);
        assert_eq!(line["status"], "scored");
        let actual = line["score"].as_f64().unwrap();
        assert!((actual - score).abs() < 1e-9, "{id}: {actual} != {score}");
        assert_eq!(line["processed_output"], processed, "{id}");
    }
    assert_eq!(
        lines[5]["assertions"],
        json!({"passed": 2, "total": 3, "first_failure": "assert is_even(0) is True: AssertionError"})
    );
    assert!(lines[0].get("assertions").is_none());

    let summary: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(summary["overall"]["tasks"], 10);
    assert_eq!(summary["overall"]["scored"], 10);
    assert_eq!(summary["overall"]["missing"], 0);
    let categories: Vec<&String> = summary["by_category"].as_object().unwrap().keys().collect();
    assert_eq!(
        categories,
        [
            "arithmetic",
            "mcq",
            "code_exec",
            "classification",
            "summary"
        ]
    );
    let metrics: Vec<&String> = summary["by_metric"].as_object().unwrap().keys().collect();
    assert_eq!(
        metrics,
        [
            "exact_match",
            "f1",
            "bleu_4",
            "rouge_l",
            "accuracy",
            "code_exec"
        ]
    );
    assert_eq!(summary["by_category"]["mcq"]["mean"], 0.5);
    assert_eq!(summary["by_metric"]["accuracy"]["mean"], 1.0);
    // The standard error of each mean (Python: statistics.stdev(scores) / sqrt(len(scores))),
    // null for a group of one task.
    let stderr = summary["overall"]["stderr"].as_f64().unwrap();
    assert!((stderr - 0.10105572703775585).abs() < 1e-15, "{stderr}");
    assert_eq!(summary["by_category"]["mcq"]["stderr"], 0.5);
    assert_eq!(summary["by_metric"]["accuracy"]["stderr"], 0.0);
    assert_eq!(summary["by_metric"]["bleu_4"]["stderr"], Value::Null);
    assert_eq!(summary["missing"], json!([]));
    assert_eq!(summary["unknown_outputs"], json!([]));
    assert_eq!(summary["ignored_outputs"], json!([]));
}

#[test]
fn text_summary_and_stdin_outputs() {
    evalctl()
        .args([
            "tasks",
            "score",
            TASKS,
            "--format",
            "text",
            "--outputs",
            "-",
        ])
        .write_stdin(std::fs::read(OUTPUTS).unwrap())
        .assert()
        .success()
        .stdout(
            "tasks fixtures/tasks/tasks.jsonl scored against outputs <stdin>

                    tasks  scored  missing     mean   stderr
  all                  10      10        0   0.7585   0.1011

by category
  arithmetic            2       2        0   0.8333   0.1667
  mcq                   2       2        0   0.5000   0.5000
  code_exec             2       2        0   0.8333   0.1667
  classification        2       2        0   1.0000   0.0000
  summary               2       2        0   0.6256   0.0006

by metric
  exact_match           2       2        0   0.5000   0.5000
  f1                    2       2        0   0.8333   0.1667
  bleu_4                1       1        0   0.6263        —
  rouge_l               1       1        0   0.6250        —
  accuracy              2       2        0   1.0000   0.0000
  code_exec             2       2        0   0.8333   0.1667

stderr = standard error of the mean over the tasks (— for a single task)
",
        );
}

#[test]
fn post_process_rules_strip_and_split_lines_as_python_does() {
    // arith_001 strips whitespace (U+001C..U+001F are Python whitespace); arith_002 takes the
    // first line (U+001D ends a line in Python).
    let dir = tempfile::tempdir().unwrap();
    let tasks: Vec<Value> = read_lines(Path::new(TASKS)).into_iter().take(2).collect();
    write_jsonl(&dir.path().join("tasks.jsonl"), &tasks);
    write_jsonl(
        &dir.path().join("outputs.jsonl"),
        &[
            json!({"task_id": "arith_001", "output": "\u{1c}41\u{1f}"}),
            json!({"task_id": "arith_002", "output": "\u{1d}\n12"}),
        ],
    );
    let out = evalctl()
        .current_dir(dir.path())
        .args([
            "tasks",
            "score",
            "tasks.jsonl",
            "--outputs",
            "outputs.jsonl",
        ])
        .args(["--format", "json"])
        .output()
        .unwrap();
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["overall"]["mean"], json!(1.0), "{summary}");
}

#[test]
fn an_output_line_that_gives_a_member_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("outputs.jsonl"),
        "{\"task_id\": \"arith_001\", \"output\": \"41\", \"output\": \"99\"}\n",
    )
    .unwrap();
    let tasks = std::fs::canonicalize(TASKS).unwrap();
    evalctl()
        .current_dir(dir.path())
        .args(["tasks", "score"])
        .arg(&tasks)
        .args(["--outputs", "outputs.jsonl", "--format", "text"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: outputs.jsonl:1: the key `output` is given twice in one object (the second \
             by column 49): keep one\n",
        );
}

#[test]
fn missing_and_unknown_outputs_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let outputs = dir.path().join("outputs.jsonl");
    write_jsonl(
        &outputs,
        &[
            json!({"task_id": "arith_001", "output": "41"}),
            json!({"task_id": "nope", "output": "?"}),
            json!({"task_id": "cls_001", "output": "positive", "model": "m"}),
        ],
    );
    let per_task = dir.path().join("per_task.jsonl");
    let out = evalctl()
        .args(["tasks", "score", TASKS, "--format", "json", "--outputs"])
        .arg(&outputs)
        .arg("--output")
        .arg(&per_task)
        .assert()
        .code(1)
        .stderr(format!(
            "warning: 8 of 10 tasks have no output and score 0: arith_002, mcq_001, mcq_002, \
             code_001, code_002, cls_002, sum_001, sum_002\n\
             warning: {}:2: no task has id \"nope\"\n",
            outputs.display()
        ));
    let summary: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(summary["overall"]["scored"], 2);
    assert_eq!(summary["overall"]["missing"], 8);
    assert_eq!(summary["overall"]["mean"], 0.2);
    assert_eq!(summary["missing"].as_array().unwrap().len(), 8);
    assert_eq!(
        summary["unknown_outputs"],
        json!([{"line": 2, "task_id": "nope"}])
    );
    let lines = read_lines(&per_task);
    assert_eq!(lines.len(), 10);
    assert_eq!(lines[1]["status"], "missing");
    assert_eq!(lines[1]["score"], Value::Null);
    assert_eq!(lines[1]["processed_output"], Value::Null);
}

#[test]
fn an_unknown_task_id_with_a_line_break_is_listed_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let outputs = dir.path().join("outputs.jsonl");
    write_jsonl(
        &outputs,
        &[json!({"task_id": "nope\n  outputs.jsonl:9: arith_001", "output": "?"})],
    );
    let out = evalctl()
        .args(["tasks", "score", TASKS, "--format", "text", "--outputs"])
        .arg(&outputs)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let listed = stdout
        .split_once("outputs naming no task:\n")
        .map(|(_, list)| list);
    assert_eq!(
        listed,
        Some(
            format!(
                "  {}:1: nope ⏎   outputs.jsonl:9: arith_001\n",
                outputs.display()
            )
            .as_str()
        ),
        "{stdout}"
    );
}

#[test]
fn an_output_for_a_skipped_invalid_task_is_ignored_not_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    let mut text = std::fs::read_to_string(TASKS).unwrap();
    text.push_str(
        &json!({"task_id": "broken_001", "category": "poetry", "prompt": "Rhyme.",
                "targets": ["x"], "metric_name": "exact_match", "post_process": "none"})
        .to_string(),
    );
    text.push('\n');
    std::fs::write(&tasks, text).unwrap();
    let outputs = dir.path().join("outputs.jsonl");
    let mut text = std::fs::read_to_string(OUTPUTS).unwrap();
    text.push_str("{\"task_id\": \"broken_001\", \"output\": \"x\"}\n");
    std::fs::write(&outputs, text).unwrap();
    let shown = outputs.display().to_string();
    let out = evalctl()
        .args(["tasks", "score", "--allow-bad-tasks", "--format", "json"])
        .arg(&tasks)
        .arg("--outputs")
        .arg(&outputs)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            ":11: task broken_001, field category: bad_category: ",
        ))
        .stderr(predicate::str::contains(format!(
            "warning: {shown}:11: output for invalid task \"broken_001\" ignored\n"
        )))
        .stderr(predicate::str::contains("no task has id").not());
    let summary: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(summary["overall"]["scored"], 10);
    assert_eq!(summary["unknown_outputs"], json!([]));
    assert_eq!(
        summary["ignored_outputs"],
        json!([{"line": 11, "task_id": "broken_001"}])
    );
    evalctl()
        .args(["tasks", "score", "--allow-bad-tasks", "--format", "text"])
        .arg(&tasks)
        .arg("--outputs")
        .arg(&outputs)
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "\noutputs for invalid tasks (ignored):\n  {shown}:11: broken_001\n"
        )));
}

#[test]
fn per_task_output_appends_and_never_truncates() {
    let dir = tempfile::tempdir().unwrap();
    let per_task = dir.path().join("per_task.jsonl");
    // An earlier result line (of whichever command): appended to, never replaced.
    let earlier = json!({"candidate_id": "earlier", "split": "single", "example_index": null,
                         "example_line": null, "score": 1.0, "error": null});
    std::fs::write(&per_task, format!("{earlier}\n")).unwrap();
    for _ in 0..2 {
        evalctl()
            .args(["tasks", "score", TASKS, "--outputs", OUTPUTS, "--output"])
            .arg(&per_task)
            .assert()
            .success();
    }
    let lines = read_lines(&per_task);
    assert_eq!(lines.len(), 21, "the earlier line and 10 per run");
    assert_eq!(lines[0], earlier);
    assert_eq!(lines[1]["task_id"], lines[11]["task_id"]);
}

#[test]
fn bad_outputs_files_are_rejected_with_every_problem() {
    let dir = tempfile::tempdir().unwrap();
    let outputs = dir.path().join("outputs.jsonl");
    std::fs::write(
        &outputs,
        b"{\"task_id\": \"arith_001\", \"output\": 41}\n\
          {\"output\": \"x\"}\n\
          [1]\n\
          {\"task_id\": 4}\n\
          {\"task_id\": \"mcq_001\", \"output\": \"B\"}\n\
          {\"task_id\": \"mcq_001\", \"output\": \"B\"}\n\
          {bad\n\
          \n\
          {\"task_id\": \"arith_002\", \"output\": \"12\"}\n\
          \n\
          \xff\n\
          {\"task_id\": \"mcq_001\", \"output\": \"C\"}\n\
          {\"task_id\": \"arith_001\", \"output\": \"41\"}\n",
    )
    .unwrap();
    let shown = outputs.display().to_string();
    evalctl()
        .args(["tasks", "score", TASKS, "--format", "text", "--outputs"])
        .arg(&outputs)
        .assert()
        .code(2)
        .stdout("")
        .stderr(format!(
            "error: {shown}:1: output: expected a string, found number\n\
             error: {shown}:2: missing required key `task_id`\n\
             error: {shown}:3: expected a JSON object, found array\n\
             error: {shown}:4: task_id: expected a string, found number\n\
             error: {shown}:4: missing required key `output`\n\
             error: {shown}:6: task \"mcq_001\" already has an output on line 5\n\
             error: {shown}:7: invalid JSON: key must be a string at column 2\n\
             error: {shown}:11: invalid UTF-8 (bad byte at column 1)\n\
             error: {shown}:12: task \"mcq_001\" already has an output on line 5\n\
             error: {shown}:13: task \"arith_001\" already has an output on line 1\n"
        ));
    evalctl()
        .args(["tasks", "score", TASKS, "--outputs", "missing.jsonl"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.jsonl: cannot read"));
    evalctl()
        .args([
            "tasks",
            "score",
            "fixtures/tasks/tasks_bad.jsonl",
            "--outputs",
            OUTPUTS,
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("18 task-spec errors"));
}

#[test]
fn an_empty_outputs_file_leaves_every_task_missing() {
    let dir = tempfile::tempdir().unwrap();
    let outputs = dir.path().join("outputs.jsonl");
    std::fs::write(&outputs, "\n  \n").unwrap();
    let out = evalctl()
        .args(["tasks", "score", TASKS, "--format", "json", "--outputs"])
        .arg(&outputs)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "warning: 10 of 10 tasks have no output and score 0: arith_001, arith_002",
        ))
        .stderr(predicate::str::contains("no records").not());
    let summary: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(summary["overall"]["missing"], 10);
    assert_eq!(summary["overall"]["mean"], 0.0);
    evalctl()
        .args([
            "tasks",
            "score",
            TASKS,
            "--format",
            "text",
            "--outputs",
            "-",
        ])
        .write_stdin("")
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "  all                  10       0       10",
        ));
}

#[test]
fn outputs_have_no_record_cap() {
    const COUNT: usize = 10_001;
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    let outputs = dir.path().join("outputs.jsonl");
    let mut task_lines = String::new();
    let mut output_lines = String::new();
    for index in 0..COUNT {
        let task = json!({"task_id": format!("t{index}"), "category": "arithmetic",
                          "prompt": "1+1", "targets": ["2"], "metric_name": "exact_match",
                          "post_process": "none"});
        task_lines.push_str(&format!("{task}\n"));
        let output = json!({"task_id": format!("t{index}"), "output": "2"});
        output_lines.push_str(&format!("{output}\n"));
    }
    std::fs::write(&tasks, task_lines).unwrap();
    std::fs::write(&outputs, output_lines).unwrap();
    let out = evalctl()
        .args(["tasks", "score", "--format", "json"])
        .arg(&tasks)
        .arg("--outputs")
        .arg(&outputs)
        .assert()
        .success()
        .stderr("");
    let summary: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(summary["overall"]["scored"], COUNT);
    assert_eq!(summary["overall"]["mean"], 1.0);
}

fn code_task_files(dir: &Path, output: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let tasks = dir.join("tasks.jsonl");
    write_jsonl(
        &tasks,
        &[
            json!({"task_id": "loop", "category": "code_exec", "prompt": "Write f.",
                 "targets": ["assert f() == 1", "assert True"], "metric_name": "code_exec",
                 "post_process": "extract_code_block"}),
        ],
    );
    let outputs = dir.join("outputs.jsonl");
    write_jsonl(&outputs, &[json!({"task_id": "loop", "output": output})]);
    (tasks, outputs)
}

#[test]
fn code_exec_assertions_run_under_a_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (tasks, outputs) = code_task_files(
        dir.path(),
        "```python\ndef f():\n    while True:\n        pass\n```",
    );
    let per_task = dir.path().join("per_task.jsonl");
    evalctl()
        .args([
            "tasks",
            "score",
            // Long enough for the passing assertion's python3 to start on a loaded machine.
            "--code-timeout",
            "2",
            "--format",
            "json",
        ])
        .arg(&tasks)
        .arg("--outputs")
        .arg(&outputs)
        .arg("--output")
        .arg(&per_task)
        .assert()
        .success();
    let line = &read_lines(&per_task)[0];
    assert_eq!(line["score"], 0.5);
    assert_eq!(
        line["assertions"]["first_failure"],
        "assert f() == 1: timed out after 2s"
    );
}

/// Score one `loop` task (targets `assert f() == 1`, `assert True`) against `output`; the per-task
/// line.
fn score_code(dir: &Path, output: &str, env: &[(&str, &str)]) -> Value {
    let (tasks, outputs) = code_task_files(dir, output);
    let per_task = dir.join("per_task.jsonl");
    // --output appends: start each score from an empty file.
    let _ = std::fs::remove_file(&per_task);
    evalctl()
        .envs(env.iter().copied())
        .args(["tasks", "score", "--format", "json"])
        .arg(&tasks)
        .arg("--outputs")
        .arg(&outputs)
        .arg("--output")
        .arg(&per_task)
        .assert()
        .success();
    read_lines(&per_task).remove(0)
}

#[test]
fn code_exec_code_cannot_force_a_pass_by_exiting_early() {
    let dir = tempfile::tempdir().unwrap();
    for exit in ["import os\nos._exit(0)", "import sys\nsys.exit(0)"] {
        let output = format!("def f():\n    return 2\n{exit}");
        let line = score_code(dir.path(), &output, &[]);
        assert_eq!(line["score"], 0.0, "{exit}");
        assert_eq!(line["assertions"]["passed"], 0);
        assert_eq!(
            line["assertions"]["first_failure"],
            "assert f() == 1: the script exited 0 without completing its assertion \
             (did the code exit early?)"
        );
    }
    // Output of its own does not get in the way of an honest pass.
    let line = score_code(dir.path(), "print('hi')\ndef f():\n    return 1", &[]);
    assert_eq!(line["score"], 1.0);
}

#[test]
fn code_exec_failure_quotes_a_long_target_on_one_clipped_line() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("values = [\n{}]\nassert values == []", "1, ".repeat(100));
    let tasks = dir.path().join("tasks.jsonl");
    write_jsonl(
        &tasks,
        &[
            json!({"task_id": "long", "category": "code_exec", "prompt": "Write f.",
                 "targets": [long], "metric_name": "code_exec", "post_process": "none"}),
        ],
    );
    let outputs = dir.path().join("outputs.jsonl");
    write_jsonl(&outputs, &[json!({"task_id": "long", "output": "pass"})]);
    let per_task = dir.path().join("per_task.jsonl");
    evalctl()
        .args(["tasks", "score", "--format", "json"])
        .arg(&tasks)
        .arg("--outputs")
        .arg(&outputs)
        .arg("--output")
        .arg(&per_task)
        .assert()
        .success();
    let line = &read_lines(&per_task)[0];
    let quoted = format!("values = [ ⏎ {}", "1, ".repeat(100));
    let clipped: String = quoted.chars().take(200).collect();
    assert_eq!(
        line["assertions"]["first_failure"],
        format!("{clipped}…: AssertionError")
    );
}

#[test]
fn code_exec_code_does_not_see_evalctl_environment() {
    let dir = tempfile::tempdir().unwrap();
    let output = "import os\n\
                  def f():\n    \
                  return 0 if 'EVALCTL_TEST_API_KEY' in os.environ else 1";
    let line = score_code(dir.path(), output, &[("EVALCTL_TEST_API_KEY", "sk-secret")]);
    assert_eq!(line["score"], 1.0, "{line}");
    // The allowlist still passes PATH and friends through.
    let output = "import os\ndef f():\n    return 1 if os.environ.get('LANG') == 'C.UTF-8' else 0";
    let line = score_code(dir.path(), output, &[("LANG", "C.UTF-8")]);
    assert_eq!(line["score"], 1.0, "{line}");
}

#[test]
fn a_missing_python3_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let (tasks, outputs) = code_task_files(dir.path(), "def f():\n    return 1");
    let empty_path = dir.path().join("empty-bin");
    std::fs::create_dir(&empty_path).unwrap();
    evalctl()
        .env("PATH", &empty_path)
        .args(["tasks", "score", "--format", "text"])
        .arg(&tasks)
        .arg("--outputs")
        .arg(&outputs)
        .assert()
        .code(2)
        .stdout("")
        .stderr("error: python3: code_exec tasks run their assertions with it, but it was not found on PATH\n");
}

#[test]
fn an_unusable_python3_is_a_clear_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (tasks, outputs) = code_task_files(dir.path(), "def f():\n    return 1");
    let shim_dir = dir.path().join("shim-bin");
    std::fs::create_dir(&shim_dir).unwrap();
    let shim = shim_dir.join("python3");
    std::fs::write(&shim, "#!/bin/sh\nexit 127\n").unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    evalctl()
        .env("PATH", &shim_dir)
        .args(["tasks", "score", "--format", "text"])
        .arg(&tasks)
        .arg("--outputs")
        .arg(&outputs)
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: python3: code_exec tasks run their assertions with it, but it is unusable \
             (asked where it is installed, it failed with exit status: 127)\n",
        );
}

#[test]
fn a_bad_code_timeout_is_rejected_naming_the_range() {
    for timeout in ["0", "1e20", "-1"] {
        evalctl()
            .args(["tasks", "score", TASKS, "--outputs", OUTPUTS])
            .args(["--code-timeout", timeout, "--format", "text"])
            .assert()
            .code(2)
            .stderr(format!(
                "error: invalid value '{timeout}' for '--code-timeout <SECONDS>': '{timeout}' \
                 must be between 0.001 and 86400 seconds\n\nFor more information, try \
                 '--help'.\n"
            ));
    }
}

#[test]
fn a_signal_stops_code_exec_kills_the_script_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    // The code hangs; evalctl is signalled once its interpreter runs.
    let output = "```python\nimport time\ntime.sleep(300)\ndef f():\n    return 1\n```";
    let (tasks, outputs) = code_task_files(dir.path(), output);
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let (out, script_pid) = stopped_once_code_runs(
        common::evalctl_process()
            .args([
                "tasks",
                "score",
                "--code-timeout",
                "100",
                "--format",
                "json",
            ])
            .arg(&tasks)
            .arg("--outputs")
            .arg(&outputs)
            .env("TMPDIR", &tmp),
    );
    let stderr = common::stderr_text(&out);
    assert_eq!(common::code(&out), 130, "{stderr}");
    assert!(
        stderr.contains("interrupted: 0 of 1 tasks scored"),
        "{stderr}"
    );
    let summary: Value =
        serde_json::from_slice(&out.stdout).expect("a JSON summary of what was scored");
    assert_eq!(summary["interrupted"], true);
    // The script was killed with evalctl's sandbox launcher; the kernel ends it at once.
    assert!(
        common::wait_until(std::time::Duration::from_secs(30), || {
            !common::process_alive(script_pid)
        }),
        "the script survived"
    );
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "temporary files left behind"
    );
}

/// Run `command` (evalctl scoring `code_exec` tasks) to its end, sent SIGTERM once an assertion
/// script runs; the script's pid is returned with what evalctl printed.
fn stopped_once_code_runs(command: &mut std::process::Command) -> (std::process::Output, u32) {
    let child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut script_pid = None;
    assert!(
        common::wait_until(std::time::Duration::from_secs(30), || {
            script_pid = python_descendant(child.id());
            script_pid.is_some()
        }),
        "the script never started"
    );
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    (out, script_pid.unwrap())
}

#[test]
fn the_scores_of_an_interrupted_scoring_are_read_back_as_a_partial_run() {
    let dir = tempfile::tempdir().unwrap();
    // `sum` is scored; the code of `loop` hangs until evalctl is stopped.
    let (tasks, outputs) = code_task_files(
        dir.path(),
        "```python\nimport time\ntime.sleep(300)\ndef f():\n    return 1\n```",
    );
    let sum = json!({"task_id": "sum", "category": "arithmetic", "prompt": "1+1=",
                     "targets": ["2"], "metric_name": "exact_match", "post_process": "none"});
    let code_task = std::fs::read_to_string(&tasks).unwrap();
    std::fs::write(&tasks, format!("{sum}\n{code_task}")).unwrap();
    let code_output = std::fs::read_to_string(&outputs).unwrap();
    let sum_output = json!({"task_id": "sum", "output": "2"});
    std::fs::write(&outputs, format!("{sum_output}\n{code_output}")).unwrap();
    let scores = dir.path().join("scores.jsonl");
    // One worker scores the tasks in order: `sum` is scored before the script of `loop` runs.
    let (out, _) = stopped_once_code_runs(
        common::evalctl_process()
            .args(["tasks", "score", "--format", "json"])
            .arg(&tasks)
            .arg("--outputs")
            .arg(&outputs)
            .arg("--output")
            .arg(&scores)
            .env("EVALCTL_INTERNAL_FEP_WORKERS", "1"),
    );
    assert_eq!(common::code(&out), 130, "{}", common::stderr_text(&out));
    let lines = read_lines(&scores);
    let run = &lines[0]["run"];
    assert_eq!(
        (lines.len(), &run["shard_calls"], &run["plan_calls"]),
        (1, &json!(1), &json!(2))
    );
    let summarized = evalctl()
        .args(["summarize", "--format", "json"])
        .arg(&scores)
        .output()
        .unwrap();
    assert_eq!(common::code(&summarized), 1);
    let summary: Value = serde_json::from_slice(&summarized.stdout).unwrap();
    assert_eq!(
        (&summary["partial"], &summary["exit_reason"]),
        (
            &json!({"missing_calls": 1, "plan_calls": 2, "missing_shards": [],
                    "description": "1 of 2 calls absent"}),
            &json!(
                "1 of 2 calls absent: the run did not finish (scoring again to a new --output \
                    completes it; --allow-partial summarizes what is there); the call succeeded"
            )
        )
    );
}

/// A `python3 -I -` process (an assertion script, not the sandbox's first probe) among the
/// descendants of `pid`, if one runs.
fn python_descendant(pid: u32) -> Option<u32> {
    let children = |pid: u32| -> Vec<u32> {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return Vec::new();
        };
        tasks
            .flatten()
            .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
            .flat_map(|text| {
                text.split_whitespace()
                    .filter_map(|pid| pid.parse().ok())
                    .collect::<Vec<u32>>()
            })
            .collect()
    };
    let mut pending = children(pid);
    while let Some(pid) = pending.pop() {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if cmdline.ends_with(b"-I\0-S\0-\0") {
            return Some(pid);
        }
        pending.extend(children(pid));
    }
    None
}

#[test]
fn an_outputs_file_given_as_the_task_file_is_one_problem_naming_the_order() {
    let out = evalctl()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tasks",
            "score",
            OUTPUTS,
            "--outputs",
            TASKS,
            "--format",
            "text",
        ])
        .output()
        .unwrap();
    assert_eq!(common::code(&out), 2);
    let stderr = common::stderr_text(&out);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[0],
        "error: fixtures/tasks/outputs.jsonl: not a task file: every line holds an `output`, as \
         a `tasks score --outputs` file does (the task file comes first)"
    );
    // Then the outputs file's own problems: the tasks hold no `output`.
    assert_eq!(
        lines[1..],
        (1..=10)
            .map(|line| format!("error: {TASKS}:{line}: missing required key `output`"))
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_group_of_no_task_has_no_mean() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let out = evalctl()
        .args([
            "tasks",
            "score",
            "fixtures/tasks/tasks_bad.jsonl",
            "--outputs",
        ])
        .arg(&empty)
        .args(["--allow-bad-tasks", "--format", "json"])
        .output()
        .unwrap();
    let summary: Value = serde_json::from_slice(&out.stdout).expect("a JSON summary");
    assert_eq!(
        summary["overall"],
        json!({"tasks": 0, "scored": 0, "missing": 0, "mean": null, "stderr": null})
    );
}
