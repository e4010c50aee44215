//! `fep evaluate --format text`: an EvaluationRunResult summarised for people — how many checks
//! passed, failed or errored, by check type, and which test cases did not pass. The JSON document
//! (`--format json`, the default off a terminal) is the protocol's answer; this is read at a
//! glance.

use std::collections::BTreeMap;

use serde_json::Value;

use super::terminal::Styled;
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

/// An EvaluationRunResult tallied as it is written, a line at a time, in the layout the writer
/// gives a document (its opening members on the first line, one test case result a line, its
/// closing members on the last), so that a run of any size is summarised in constant memory.
#[derive(Default)]
pub struct FepSummary {
    /// The line being written.
    line: Vec<u8>,
    /// Whether the opening line has been read.
    opened: bool,
    evaluation_id: Option<String>,
    status: Option<String>,
    cases: usize,
    by_type: BTreeMap<String, Tally>,
    /// The first [`LISTED`] test cases that did not pass, and how many did not.
    not_passed: Vec<String>,
    not_passed_count: usize,
}

impl std::io::Write for FepSummary {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut rest = bytes;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            self.line.extend_from_slice(&rest[..end]);
            let line = std::mem::take(&mut self.line);
            self.read_line(&line);
            self.line = line;
            self.line.clear();
            rest = &rest[end + 1..];
        }
        self.line.extend_from_slice(rest);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl FepSummary {
    /// Take in one whole line of the document.
    fn read_line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b",").unwrap_or(line);
        if !self.opened {
            // `{"evaluation_id":…,"results":[` closed into a document of its own.
            self.opened = true;
            let opening: Option<Value> = serde_json::from_slice(&[line, b"]}"].concat()).ok();
            self.evaluation_id = opening
                .as_ref()
                .and_then(|opening| opening["evaluation_id"].as_str())
                .map(str::to_string);
        } else if let Some(closing) = line.strip_prefix(b"],") {
            let closing: Option<Value> = serde_json::from_slice(&[b"{", closing].concat()).ok();
            let closing = closing.as_ref();
            self.status = closing
                .and_then(|closing| closing["status"].as_str())
                .map(str::to_string);
            debug_assert_eq!(
                closing.and_then(|closing| closing["summary"]["total_test_cases"].as_u64()),
                Some(self.cases as u64),
                "every test case result of the document was read"
            );
        } else if let Ok(case) = serde_json::from_slice::<Value>(line) {
            self.cases += 1;
            self.add_case(&case);
        }
    }

    /// Tally one test case result.
    fn add_case(&mut self, case: &Value) {
        let mut outcomes = Vec::new();
        for check in case["check_results"].as_array().into_iter().flatten() {
            let check_type = check["check_type"].as_str().unwrap_or("?");
            let tally = match self.by_type.get_mut(check_type) {
                Some(tally) => tally,
                None => self.by_type.entry(check_type.to_string()).or_default(),
            };
            match (
                check["status"].as_str(),
                crate::checks::result::passed_in(&check["results"]),
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
        if outcomes.is_empty() {
            return;
        }
        self.not_passed_count += 1;
        if self.not_passed.len() < LISTED {
            let id = case["execution_context"]["test_case"]["id"]
                .as_str()
                .map_or_else(|| format!("#{}", self.cases), crate::text::fold_lines);
            self.not_passed
                .push(format!("  {id}: {}", outcomes.join("; ")));
        }
    }

    /// The summary of what was written: the run's id and status, the checks' outcomes by type,
    /// and the test cases that did not pass.
    pub fn render(&self, color: bool) -> String {
        let mut total = Tally::default();
        self.by_type.values().for_each(|tally| total.add(tally));
        let out = format!(
            "evaluation {}   status: {}\ntest cases: {}   checks: {} passed, {} failed, {} error{}\n\n",
            self.evaluation_id.as_deref().unwrap_or("-"),
            self.status.as_deref().unwrap_or("-"),
            self.cases,
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
            self.by_type
                .iter()
                .map(|(check_type, tally)| tally.row(check_type)),
        );
        if self.by_type.len() > 1 {
            rows.push(total.row("all"));
        }
        let mut doc = Styled::default();
        doc.push(out);
        doc.append(aligned(&rows, |_| None));
        let mut out = String::new();
        if self.not_passed_count > 0 {
            out.push_str(&format!("\nnot passed ({}):\n", self.not_passed_count));
            for line in &self.not_passed {
                out.push_str(line);
                out.push('\n');
            }
            if self.not_passed_count > LISTED {
                out.push_str(&format!(
                    "  … and {} more\n",
                    self.not_passed_count - LISTED
                ));
            }
        }
        doc.push(out);
        doc.finish(color)
    }
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

    /// The document as `fep::writer::RunWriter` lays it out (shortened), written in pieces that
    /// split its lines.
    fn summarised(cases: &[Value], status: &str) -> FepSummary {
        let results: Vec<String> = cases.iter().map(|case| format!("\n{case}")).collect();
        let document = format!(
            "{{\"evaluation_id\":\"e\",\"results\":[{}\n],\"status\":\"{status}\",\
             \"summary\":{{\"total_test_cases\":{}}}}}\n",
            results.join(","),
            cases.len()
        );
        let mut summary = FepSummary::default();
        for piece in document.as_bytes().chunks(7) {
            std::io::Write::write_all(&mut summary, piece).unwrap();
        }
        summary
    }

    #[test]
    fn lists_the_first_twenty_cases_not_passed_and_counts_the_rest() {
        let cases: Vec<Value> = (0..25).map(|i| case(&format!("c{i}"), i == 0)).collect();
        let text = summarised(&cases, "completed").render(false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "evaluation e   status: completed");
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
    fn a_run_without_test_cases_is_summarised() {
        let text = summarised(&[], "skip").render(false);
        assert!(text.starts_with("evaluation e   status: skip\ntest cases: 0   checks: 0 passed"));
    }
}
