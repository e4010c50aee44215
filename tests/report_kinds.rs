//! `evalctl report` over the other result files it reads: `tasks score --output` lines and
//! `spec score` evaluation records, each produced by the real binary from the repository's
//! fixtures. The page's embedded data names the file's kind and holds one row per result.

use std::path::Path;

use crate::common::{evalctl, Sandbox};
use serde_json::Value;

/// The JSON the page renders from (`<script type="application/json" id="report-data">`).
pub(crate) fn report_data(page: &Path) -> Value {
    let html = std::fs::read_to_string(page).expect("the report is written");
    let start_tag = r#"<script type="application/json" id="report-data">"#;
    let start = html.find(start_tag).expect("the page embeds its data") + start_tag.len();
    let end = start
        + html[start..]
            .find("</script>")
            .expect("the data script ends");
    serde_json::from_str(&html[start..end]).expect("the embedded data is JSON")
}

fn fixture(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .display()
        .to_string()
}

fn report_of(results: &Path, page: &Path) -> Value {
    evalctl()
        .args(["report", &results.display().to_string(), "-o"])
        .arg(page)
        .args(["--format", "json"])
        .assert()
        .success();
    report_data(page)
}

#[test]
fn tasks_score_output_becomes_one_row_per_task() {
    let sandbox = Sandbox::new();
    let results = sandbox.path().join("tasks-results.jsonl");
    evalctl()
        .args(["tasks", "score", &fixture("fixtures/tasks/tasks.jsonl")])
        .args(["--outputs", &fixture("fixtures/tasks/outputs.jsonl")])
        .arg("--output")
        .arg(&results)
        .args(["--format", "json"])
        .assert()
        .success();
    let data = report_of(&results, &sandbox.path().join("tasks.html"));
    assert_eq!(data["sources"][0]["kind"], "tasks");
    assert_eq!(data["rows"].as_array().map(Vec::len), Some(10));
}

#[test]
fn spec_score_records_become_one_row_per_run() {
    let sandbox = Sandbox::new();
    let records = sandbox.path().join("records.jsonl");
    evalctl()
        .args(["spec", "score", &fixture("fixtures/spec/pack.yaml")])
        .arg(fixture("fixtures/spec/runs.jsonl"))
        .arg("--output")
        .arg(&records)
        .args(["--format", "json"])
        .assert()
        .code(1); // one of the two recorded runs fails its gate
    let data = report_of(&records, &sandbox.path().join("spec.html"));
    assert_eq!(data["sources"][0]["kind"], "spec");
    assert_eq!(data["rows"].as_array().map(Vec::len), Some(2));
}

#[test]
fn a_run_results_file_names_the_evaluator_its_lines_carry() {
    let sandbox = Sandbox::new();
    let results = sandbox.path().join("results.jsonl");
    let run = evalctl()
        .args(["run", "--checks", &fixture("fixtures/checks/capitals.json")])
        .args(["--candidate", "Paris", "--output"])
        .arg(&results)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(results.exists(), "{}", String::from_utf8_lossy(&run.stderr));
    let data = report_of(&results, &sandbox.path().join("run.html"));
    assert_eq!(data["sources"][0]["kind"], "run");
    assert_eq!(
        data["sources"][0]["evaluator"],
        serde_json::json!({"kind": "checks", "target": fixture("fixtures/checks/capitals.json")})
    );
    assert_eq!(data["sources"][0]["elapsed_ms"], Value::Null);
}

#[test]
fn two_executions_of_one_run_are_two_sources_their_shards_joined_by_execution() {
    // The same command run twice (a judge that answers otherwise the second time) writes lines
    // of the same run fingerprint: each execution is a source, whatever the order of its files.
    let sandbox = Sandbox::new();
    let examples: String = (0..40).map(|i| format!("{{\"id\": \"e{i}\"}}\n")).collect();
    sandbox.write("d.jsonl", examples);
    sandbox.write(
        "eval.sh",
        "cat >/dev/null\necho \"{\\\"score\\\": $SCORE}\"\n",
    );
    for (execution, score) in [("a", "1"), ("b", "0.25")] {
        for shard in ["0/2", "1/2"] {
            let output = format!("{execution}-{}.jsonl", &shard[..1]);
            sandbox
                .evalctl()
                .args([
                    "run",
                    "--dataset",
                    "d.jsonl",
                    "--evaluator-command",
                    "sh eval.sh",
                ])
                .args(["--candidate", "p", "--skip-preflight", "--format", "json"])
                .args(["--shard", shard, "--output", &output])
                .env("SCORE", score)
                .assert()
                .success();
        }
    }
    let sources = |files: &[&str]| -> Vec<(String, f64)> {
        sandbox
            .evalctl()
            .arg("report")
            .args(files)
            .args(["-o", "r.html", "--format", "text"])
            .assert()
            .success();
        let data = report_data(&sandbox.path().join("r.html"));
        (data["sources"].as_array().unwrap().iter())
            .map(|source| {
                let score = &source["summary"]["candidates"][0]["score"];
                (
                    source["name"].as_str().unwrap().to_string(),
                    score.as_f64().unwrap(),
                )
            })
            .collect()
    };
    let named = |name: &str, score: f64| (name.to_string(), score);
    assert_eq!(
        sources(&["a-0.jsonl", "b-0.jsonl", "a-1.jsonl", "b-1.jsonl"]),
        [
            named("a-0.jsonl + a-1.jsonl", 1.0),
            named("b-0.jsonl + b-1.jsonl", 0.25)
        ]
    );
    // A file that holds both shards of one execution, given first.
    let joined = sandbox.read("a-0.jsonl") + &sandbox.read("a-1.jsonl");
    sandbox.write("a.jsonl", joined);
    assert_eq!(
        sources(&["a.jsonl", "b-0.jsonl", "b-1.jsonl"]),
        [named("a.jsonl", 1.0), named("b-0.jsonl + b-1.jsonl", 0.25)]
    );
}
