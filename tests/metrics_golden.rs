//! The text metrics agree with the reference implementations (SQuAD v1.1, sacrebleu,
//! rouge-score) on every pair of the committed golden file, to 1e-9 — called directly and through
//! `evalctl tasks score` — and every score evalctl gives lies in [0, 1] (sacrebleu itself reports
//! a few ulps above 1 for identical sentences; evalctl clamps).

use crate::common;

use evalctl::scoring::{bleu_4, max_over, rouge_l, squad_f1};
use serde_json::{json, Value};

const GOLDEN: &str = include_str!("golden/metrics_golden.jsonl");
const TOLERANCE: f64 = 1e-9;

/// A metric on (output, reference).
type Metric = fn(&str, &str) -> f64;

const METRICS: [&str; 3] = ["f1", "bleu_4", "rouge_l"];

/// The golden records, parsed.
fn golden() -> Vec<Value> {
    GOLDEN
        .lines()
        .map(|line| serde_json::from_str(line).expect("golden lines are JSON"))
        .collect()
}

#[test]
fn every_golden_pair_matches_the_reference_scores() {
    let metrics: [Metric; 3] = [squad_f1, bleu_4, rouge_l];
    let mut pairs = 0;
    let mut mismatches = Vec::new();
    for (index, record) in golden().iter().enumerate() {
        let output = record["output"].as_str().expect("output is a string");
        let targets: Vec<&str> = record["targets"]
            .as_array()
            .expect("targets is an array")
            .iter()
            .map(|target| target.as_str().expect("targets are strings"))
            .collect();
        for (name, metric) in METRICS.into_iter().zip(metrics) {
            let expected = record[name].as_f64().expect("scores are numbers");
            let actual = max_over(metric, output, &targets);
            if !(0.0..=1.0).contains(&actual) {
                mismatches.push(format!(
                    "line {}: {name}({output:?}, {targets:?}) = {actual}, outside [0, 1]",
                    index + 1
                ));
            }
            if (actual - expected).abs() > TOLERANCE {
                mismatches.push(format!(
                    "line {}: {name}({output:?}, {targets:?}) = {actual}, reference {expected}",
                    index + 1
                ));
            }
        }
        pairs += 1;
    }
    assert!(pairs >= 200, "the golden file holds only {pairs} pairs");
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn the_binary_scores_every_golden_pair_like_the_references() {
    let golden = golden();
    let dir = tempfile::tempdir().unwrap();
    let mut tasks = String::new();
    let mut outputs = String::new();
    let mut expected = Vec::new();
    for (index, record) in golden.iter().enumerate() {
        for metric in METRICS {
            let task_id = format!("g{index}_{metric}");
            let task = json!({"task_id": task_id, "category": "summary", "prompt": "Summarise.",
                              "targets": record["targets"], "metric_name": metric,
                              "post_process": "none"});
            tasks.push_str(&format!("{task}\n"));
            let output = json!({"task_id": task_id, "output": record["output"]});
            outputs.push_str(&format!("{output}\n"));
            expected.push((
                task_id,
                record[metric].as_f64().expect("scores are numbers"),
            ));
        }
    }
    let tasks_path = dir.path().join("tasks.jsonl");
    let outputs_path = dir.path().join("outputs.jsonl");
    let per_task = dir.path().join("per_task.jsonl");
    std::fs::write(&tasks_path, tasks).unwrap();
    std::fs::write(&outputs_path, outputs).unwrap();
    common::evalctl()
        .args(["tasks", "score", "--format", "json"])
        .arg(&tasks_path)
        .arg("--outputs")
        .arg(&outputs_path)
        .arg("--output")
        .arg(&per_task)
        .assert()
        .success();
    let lines: Vec<Value> = std::fs::read_to_string(&per_task)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), expected.len());
    let mismatches: Vec<String> = lines
        .iter()
        .zip(&expected)
        .filter_map(|(line, (task_id, reference))| {
            assert_eq!(&line["task_id"], task_id);
            let actual = line["score"].as_f64().expect("every task is scored");
            let in_range = (0.0..=1.0).contains(&actual);
            (!in_range || (actual - reference).abs() > TOLERANCE)
                .then(|| format!("{task_id}: evalctl {actual}, reference {reference}"))
        })
        .collect();
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
