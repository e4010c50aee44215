//! The text metrics agree with the reference implementations (SQuAD v1.1, sacrebleu,
//! rouge-score) on every pair of the committed golden file, to 1e-9.

use evalctl::metrics::{bleu_4, max_over, rouge_l, squad_f1};
use serde_json::Value;

const GOLDEN: &str = include_str!("golden/metrics_golden.jsonl");
const TOLERANCE: f64 = 1e-9;

/// A metric on (output, reference).
type Metric = fn(&str, &str) -> f64;

#[test]
fn every_golden_pair_matches_the_reference_scores() {
    let metrics: [(&str, Metric); 3] = [("f1", squad_f1), ("bleu_4", bleu_4), ("rouge_l", rouge_l)];
    let mut pairs = 0;
    let mut mismatches = Vec::new();
    for (index, line) in GOLDEN.lines().enumerate() {
        let record: Value = serde_json::from_str(line).expect("golden lines are JSON");
        let output = record["output"].as_str().expect("output is a string");
        let targets: Vec<&str> = record["targets"]
            .as_array()
            .expect("targets is an array")
            .iter()
            .map(|target| target.as_str().expect("targets are strings"))
            .collect();
        for (name, metric) in metrics {
            let expected = record[name].as_f64().expect("scores are numbers");
            let actual = max_over(metric, output, &targets);
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
