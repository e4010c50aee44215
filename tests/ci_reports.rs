//! CI reports through the binary: `--junit FILE.xml` (suites per candidate and split, an
//! errored call an `<error>`, a score under `--pass-score` a `<failure>`, markup escaped),
//! `--format markdown`, and the Markdown summary appended to `$GITHUB_STEP_SUMMARY`.

use crate::common::*;
use serde_json::json;

/// Scores the example's `s`; exits 1 when it has none.
const EVAL: &str = "p=$(cat)\ns=$(printf '%s' \"$p\" | sed -n 's/.*\"s\":\\([0-9.]*\\).*/\\1/p')\n\
                    [ -n \"$s\" ] || { echo 'no s' >&2; exit 1; }\nprintf '{\"score\": %s}' \"$s\"\n";

fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    let lines = [json!({"s": 1}), json!({"s": 0.2}), json!({"x": "<&>"})];
    let text: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
    sb.write("d.jsonl", text.join("\n") + "\n");
    sb.write("v.jsonl", "{\"s\":0.9}\n");
    sb
}

fn run(sb: &Sandbox, extra: &[&str]) -> std::process::Output {
    sb.evalctl()
        .args([
            "run",
            "--evaluator-command",
            "sh eval.sh",
            "--skip-preflight",
        ])
        .args([
            "--candidate",
            "a",
            "--candidate",
            "b\"<",
            "--dataset",
            "d.jsonl",
        ])
        .args(["--valset", "v.jsonl", "-j", "4"])
        .args(extra)
        .output()
        .unwrap()
}

/// The JUnit file `report.xml` with every `time="..."` masked.
pub(crate) fn junit(sb: &Sandbox) -> String {
    let text = sb.read("report.xml");
    let mut masked = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("time=\"") {
        masked.push_str(&rest[..at + 6]);
        rest = &rest[at + 6..];
        let end = rest.find('"').unwrap();
        assert!(rest[..end].parse::<f64>().is_ok(), "{text}");
        masked.push('T');
        rest = &rest[end..];
    }
    masked + rest
}

#[test]
fn junit_has_a_suite_per_candidate_and_split_and_a_case_per_call() {
    let sb = sandbox();
    let out = run(
        &sb,
        &[
            "--format",
            "json",
            "--junit",
            "report.xml",
            "--pass-score",
            "0.5",
        ],
    );
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    let suite = |id: &str, class: &str| {
        format!(
            "  <testsuite name=\"{id} train\" tests=\"3\" failures=\"1\" errors=\"1\" skipped=\"0\" time=\"T\">
    <testcase name=\"{id} train #0 (line 1)\" classname=\"{class}.train\" time=\"T\">
      <system-out>score: 1</system-out>
    </testcase>
    <testcase name=\"{id} train #1 (line 2)\" classname=\"{class}.train\" time=\"T\">
      <failure message=\"score 0.2 is below --pass-score 0.5\" type=\"score\">score 0.2 is below --pass-score 0.5</failure>
      <system-out>score: 0.2</system-out>
    </testcase>
    <testcase name=\"{id} train #2 (line 3)\" classname=\"{class}.train\" time=\"T\">
      <error message=\"command exited with code 1; stderr: no s\" type=\"exit_status\">command exited with code 1; stderr: no s</error>
      <system-out>score: 0
error: exit_status: command exited with code 1; stderr: no s</system-out>
    </testcase>
  </testsuite>
  <testsuite name=\"{id} val\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\" time=\"T\">
    <testcase name=\"{id} val #0 (line 1)\" classname=\"{class}.val\" time=\"T\">
      <system-out>score: 0.9</system-out>
    </testcase>
  </testsuite>
"
        )
    };
    let expected = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"evalctl\" tests=\"8\" \
         failures=\"2\" errors=\"2\" time=\"T\">\n{}{}</testsuites>\n",
        suite("cand-1", "cand-1"),
        suite("cand-2", "cand-2")
    );
    assert_eq!(junit(&sb), expected);
}

#[test]
fn markdown_summary_on_stdout_and_in_the_step_summary() {
    let sb = sandbox();
    sb.write("step.md", "earlier\n");
    let out = sb
        .evalctl()
        .args([
            "run",
            "--format",
            "markdown",
            "--evaluator-command",
            "sh eval.sh",
        ])
        .args([
            "--skip-preflight",
            "--candidate",
            "a",
            "--dataset",
            "d.jsonl",
        ])
        .args(["--max-errors", "1"])
        .env("GITHUB_STEP_SUMMARY", sb.join("step.md"))
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    let markdown = stdout_text(&out);
    let (head, tail) = markdown.split_once("\nEvaluator: ").unwrap();
    assert_eq!(
        head,
        "### evalctl: ✅ passed (exit 0)\n\n1 of 3 calls failed, within --max-errors 1\n\n\
         | candidate | score | train mean | n / errors |\n|---|---|---|---|\n\
         | cand-1 | 0.4000 ± 0.5000 | 0.4000 ± 0.5000 | 3 / 1 |\n"
    );
    assert!(tail.starts_with("command sh eval.sh · score range unit · 3 calls (2 ok, 1 error) · "));
    assert_eq!(sb.read("step.md"), format!("earlier\n{markdown}\n"));
}

#[test]
fn commands_without_markdown_say_so_and_print_text() {
    let sb = sandbox();
    let out = sb
        .evalctl()
        .args([
            "preflight",
            "--format",
            "markdown",
            "--evaluator-command",
            "sh eval.sh",
        ])
        .args(["--dataset", "d.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out),
        "warning: --format markdown: only run, summarize, merge and compare print Markdown; \
         this command prints text\n"
    );
    assert!(stdout_text(&out).starts_with("preflight ok: "));
}

#[test]
fn an_unwritable_junit_path_is_bad_input() {
    let sb = sandbox();
    let out = run(&sb, &["--format", "json", "--junit", "no/such/dir/r.xml"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        "error: --junit: no/such/dir/r.xml: no directory no/such/dir\n"
    );
}
