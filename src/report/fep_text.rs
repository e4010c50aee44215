//! `fep evaluate --format text`: an EvaluationRunResult summarised for people — how many checks
//! passed, failed or errored, by check type, and which test cases did not pass. The JSON document
//! (`--format json`, the default off a terminal) is the protocol's answer; this is read at a
//! glance.

use std::collections::BTreeMap;

use serde_json::Value;

use super::text::aligned;

/// The most test cases listed under "not passed"; the rest are counted.
const LISTED: usize = 20;

/// How one check type's results came out.
#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    /// Completed without a verdict (a score only, e.g. `semantic_similarity` with no threshold).
    scored: usize,
    errors: usize,
    skipped: usize,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.scored += other.scored;
        self.errors += other.errors;
        self.skipped += other.skipped;
    }

    fn row(&self, label: &str) -> Vec<String> {
        [
            label.to_string(),
            self.passed.to_string(),
            self.failed.to_string(),
            self.scored.to_string(),
            self.errors.to_string(),
            self.skipped.to_string(),
        ]
        .to_vec()
    }
}

/// The text summary of the EvaluationRunResult `document`; `None` when it is not one whole
/// document (a run cut short).
pub fn render(document: &[u8], color: bool) -> Option<String> {
    let run: Value = serde_json::from_slice(document).ok()?;
    let cases = run.get("results")?.as_array()?;
    let mut by_type: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut not_passed = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        let mut outcomes = Vec::new();
        for check in case["check_results"].as_array().into_iter().flatten() {
            let check_type = check["check_type"].as_str().unwrap_or("?");
            let tally = by_type.entry(check_type).or_default();
            match (
                check["status"].as_str(),
                check["results"]["passed"].as_bool(),
            ) {
                (Some("completed"), Some(true)) => tally.passed += 1,
                (Some("completed"), Some(false)) => {
                    tally.failed += 1;
                    outcomes.push(format!("{check_type} failed"));
                }
                (Some("completed"), None) => tally.scored += 1,
                (Some("skip"), _) => tally.skipped += 1,
                _ => {
                    tally.errors += 1;
                    let error = &check["error"];
                    outcomes.push(format!(
                        "{check_type} {}: {}",
                        error["type"].as_str().unwrap_or("error"),
                        error["message"].as_str().unwrap_or("-")
                    ));
                }
            }
        }
        if !outcomes.is_empty() {
            let id = case["execution_context"]["test_case"]["id"]
                .as_str()
                .map_or_else(|| format!("#{}", index + 1), str::to_string);
            not_passed.push(format!("  {id}: {}", outcomes.join("; ")));
        }
    }
    let mut total = Tally::default();
    by_type.values().for_each(|tally| total.add(tally));

    let mut out = format!(
        "evaluation {}   status: {}\ntest cases: {}   checks: {} passed, {} failed, {} error{}\n\n",
        run["evaluation_id"].as_str().unwrap_or("-"),
        run["status"].as_str().unwrap_or("-"),
        cases.len(),
        total.passed,
        total.failed,
        total.errors,
        if total.errors == 1 { "" } else { "s" },
    );
    let header = [
        "check type",
        "passed",
        "failed",
        "scored",
        "errors",
        "skipped",
    ]
    .map(str::to_string)
    .to_vec();
    let mut rows = vec![header];
    rows.extend(
        by_type
            .iter()
            .map(|(check_type, tally)| tally.row(check_type)),
    );
    if by_type.len() > 1 {
        rows.push(total.row("all"));
    }
    out.push_str(&aligned(&rows, color));
    if !not_passed.is_empty() {
        out.push_str(&format!("\nnot passed ({}):\n", not_passed.len()));
        for line in not_passed.iter().take(LISTED) {
            out.push_str(line);
            out.push('\n');
        }
        if not_passed.len() > LISTED {
            out.push_str(&format!("  … and {} more\n", not_passed.len() - LISTED));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, passed: bool) -> Value {
        serde_json::json!({
            "execution_context": {"test_case": {"id": id}},
            "check_results": [
                {"check_type": "exact_match", "status": "completed", "results": {"passed": passed}},
                {"check_type": "semantic_similarity", "status": "completed", "results": {"score": 0.5}}
            ]
        })
    }

    #[test]
    fn lists_the_first_twenty_cases_not_passed_and_counts_the_rest() {
        let cases: Vec<Value> = (0..25).map(|i| case(&format!("c{i}"), i == 0)).collect();
        let document =
            serde_json::json!({"evaluation_id": "e", "status": "completed", "results": cases});
        let text = render(document.to_string().as_bytes(), false).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "test cases: 25   checks: 1 passed, 24 failed, 0 errors"
        );
        assert_eq!(
            lines[4],
            "exact_match          1       24      0       0       0"
        );
        assert_eq!(
            lines[5],
            "semantic_similarity  0       0       25      0       0"
        );
        assert_eq!(lines[8], "not passed (24):");
        assert_eq!(lines[9], "  c1: exact_match failed");
        assert_eq!(lines[28], "  c20: exact_match failed");
        assert_eq!(lines[29], "  … and 4 more");
        assert_eq!(lines.len(), 30);
    }

    #[test]
    fn a_run_cut_short_is_not_summarised() {
        assert_eq!(
            render(b"{\"evaluation_id\":\"e\",\"results\":[", false),
            None
        );
    }
}
