//! `--junit FILE.xml`: the run as JUnit XML, the report GitLab, Jenkins and most CI systems show
//! as test results. One `testsuite` per candidate and split, one `testcase` per call: a failed
//! call is an `<error>`, a score under `--pass-score` a `<failure>`, and so is a `spec score`
//! record that did not pass (and the run exits 1, see [`super::Gates`]). The evaluator's `reasoning` and `feedback` are in the failure and in the
//! case's `<system-out>`. Cases are ordered by candidate, split and example, so the file does not
//! depend on the order calls finished in. `--fail-under` adds a suite of one case per candidate,
//! failed where the gate fails it, so the report fails where the run does; a partial summary adds
//! a skipped case saying what is missing.

use std::collections::BTreeMap;
use std::path::Path;

use super::gate::{below_fail_under, not_judged as not_judged_by_fail_under};
use super::summary::{scored_below, verdict_failed, Summary};
use crate::error::{bad_flag, Fatal};
use crate::record::{CallRecord, Split};
use crate::text::counted;
use crate::text::{escape_chars, fold_lines, io_reason, markup_escape, Fixed4, Shortest};

/// The JUnit report, filled as calls finish.
pub struct Junit {
    candidate_ids: Vec<String>,
    pass_score: Option<f64>,
    /// Whether a record's own `passed: false` fails its case (`spec score`'s lines).
    gated_by_verdicts: bool,
    /// Each suite's cases by example index and repeat.
    suites: BTreeMap<Suite, BTreeMap<(usize, u32), Case>>,
}

/// A suite: candidate position, task model under `--generate`, split.
type Suite = (usize, Option<String>, u8);

struct Case {
    name: String,
    seconds: f64,
    score: f64,
    outcome: Outcome,
    /// `\nreasoning: ...` and `\nfeedback: ...`, from the evaluator's side information.
    details: String,
}

/// How `--fail-under` judged a candidate, as its test case says.
enum FailUnder {
    Met,
    Failed(String),
    /// No score in a partial summary: a skipped case.
    NotJudged(String),
}

/// The side-information keys whose text a test case shows: what the evaluator said about it.
const DETAILS: [&str; 2] = ["reasoning", "feedback"];

enum Outcome {
    Passed,
    /// `type` is `verdict` or `score`.
    Failed {
        kind: &'static str,
        message: String,
    },
    Errored {
        kind: &'static str,
        message: String,
    },
}

/// Write `junit` to `path` when the command was asked for a report (`--junit`), with the
/// `--fail-under` verdict of each of `summary`'s candidates and what the summary lacks when it
/// is partial, telling the user on stderr when that fails: `Ok` with the "wrote" line (none when
/// nothing was asked), `Err` when the write failed (the exit code then says so).
pub fn write_junit_if_asked(
    junit: Option<&Junit>,
    path: Option<&Path>,
    summary: &Summary,
    fail_under: Option<f64>,
    reporter: super::Reporter,
) -> Result<Option<String>, ()> {
    match (junit, path) {
        (Some(junit), Some(path)) => junit
            .write(path, summary, fail_under)
            .map(Some)
            .map_err(|error| reporter.diagnose(&error)),
        _ => Ok(None),
    }
}

impl Junit {
    /// Check, before any work, that `path` can be written: its directory exists and it is not
    /// a directory.
    pub fn check_writable(path: &Path) -> anyhow::Result<()> {
        if path.is_dir() {
            return Err(bad_flag(
                "--junit",
                format!("{}: is a directory, not a file", path.display()),
            ));
        }
        // A link is written through: the directory that counts is its target's.
        let target = crate::input::link_target(path);
        let target = target.as_deref().unwrap_or(path);
        match target.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            Some(dir) if !dir.is_dir() => Err(bad_flag(
                "--junit",
                format!("{}: no directory {}", path.display(), dir.display()),
            )),
            _ => Ok(()),
        }
    }

    /// An empty report over `candidate_ids` (in order); a score under `pass_score` fails.
    pub fn new(candidate_ids: Vec<String>, pass_score: Option<f64>) -> Junit {
        Junit {
            candidate_ids,
            pass_score,
            gated_by_verdicts: false,
            suites: BTreeMap::new(),
        }
    }

    /// With `gated`, a record's own `passed: false` fails its case, as it fails the run
    /// (`spec score`'s lines, see [`crate::record::RunInfo::gated_by_verdicts`]).
    pub fn gated_by_verdicts(mut self, gated: bool) -> Junit {
        self.gated_by_verdicts = gated;
        self
    }

    /// Add one finished call.
    pub fn add(&mut self, record: &CallRecord) {
        let candidate = self
            .candidate_ids
            .iter()
            .position(|id| *id == record.candidate_id)
            .unwrap_or(usize::MAX);
        let split = match record.split {
            Split::Single => 0,
            Split::Train => 1,
            Split::Val => 2,
        };
        let outcome = match (&record.error, self.pass_score) {
            (Some(error), _) => Outcome::Errored {
                kind: error.kind.as_str(),
                message: error.message.clone(),
            },
            (None, _) if self.gated_by_verdicts && verdict_failed(record) => Outcome::Failed {
                kind: "verdict",
                message: match record
                    .side_info
                    .get("overall_reason")
                    .and_then(|r| r.as_str())
                {
                    Some(reason) => format!("the run did not pass: {reason}"),
                    None => "the run did not pass".to_string(),
                },
            },
            (None, Some(pass)) if scored_below(record, pass) => Outcome::Failed {
                kind: "score",
                message: format!(
                    "score {} is below --pass-score {}",
                    Shortest(record.score),
                    Shortest(pass)
                ),
            },
            _ => Outcome::Passed,
        };
        let suite = (candidate, record.task_model.clone(), split);
        self.suites.entry(suite).or_default().insert(
            (
                record.example_index.unwrap_or(0),
                record.repeat.unwrap_or(0),
            ),
            Case {
                name: record.call_label(),
                seconds: seconds(record.latency_ms),
                score: record.score,
                outcome,
                details: DETAILS
                    .iter()
                    .filter_map(|&key| {
                        let value = record.side_info.get(key)?;
                        Some(match value.as_str() {
                            Some(text) => format!("\n{key}: {text}"),
                            None => format!("\n{key}: {value}"),
                        })
                    })
                    .collect(),
            },
        );
    }

    /// The report as a JUnit XML document, and its test cases, failures, errors and skipped
    /// cases; `fail_under` judges `summary`'s candidates in a suite of their own, and what a
    /// partial summary lacks of the run's plan is a skipped case of its own suite, so CI shows
    /// both.
    fn render(&self, summary: &Summary, fail_under: Option<f64>) -> (String, [usize; 4]) {
        let mut suites = String::new();
        let (mut tests, mut failures, mut errors, mut skipped, mut seconds) = (0, 0, 0, 0, 0.0);
        for ((candidate, task_model, split), examples) in &self.suites {
            let cases: Vec<&Case> = examples.values().collect();
            let failed = cases
                .iter()
                .filter(|case| matches!(case.outcome, Outcome::Failed { .. }))
                .count();
            let errored = cases
                .iter()
                .filter(|case| matches!(case.outcome, Outcome::Errored { .. }))
                .count();
            let time: f64 = cases.iter().map(|case| case.seconds).sum();
            let id = self
                .candidate_ids
                .get(*candidate)
                .map_or("?", String::as_str);
            // Under `--generate`, a suite per candidate × task model, named as calls are (a line
            // break folded, as in the name of each of its cases).
            let id = fold_lines(id);
            let id = match task_model {
                Some(model) => format!("{id} with {model}"),
                None => id,
            };
            let id = id.as_str();
            let split = ["single", "train", "val"][usize::from(*split)];
            suites.push_str(&format!(
                "  <testsuite name=\"{} {split}\" tests=\"{}\" failures=\"{failed}\" \
                 errors=\"{errored}\" skipped=\"0\" time=\"{time:.3}\">\n",
                attribute(id),
                cases.len(),
            ));
            for case in cases.iter() {
                suites.push_str(&format!(
                    "    <testcase name=\"{}\" classname=\"{}.{split}\" time=\"{:.3}\">\n",
                    attribute(&case.name),
                    attribute(id),
                    case.seconds
                ));
                let details = escape(&case.details);
                let mut out = format!("score: {}", case.score);
                match &case.outcome {
                    Outcome::Passed => {}
                    Outcome::Failed { kind, message } => suites.push_str(&format!(
                        "      <failure message=\"{}\" type=\"{kind}\">{}{details}</failure>\n",
                        attribute(message),
                        escape(message)
                    )),
                    Outcome::Errored { kind, message } => {
                        suites.push_str(&format!(
                            "      <error message=\"{}\" type=\"{kind}\">{}{details}</error>\n",
                            attribute(message),
                            escape(message)
                        ));
                        out.push_str(&format!("\nerror: {kind}: {message}"));
                    }
                }
                suites.push_str(&format!(
                    "      <system-out>{}{details}</system-out>\n    </testcase>\n",
                    escape(&out)
                ));
            }
            suites.push_str("  </testsuite>\n");
            tests += cases.len();
            failures += failed;
            errors += errored;
            seconds += time;
        }
        if let Some(threshold) = fail_under {
            let not_judged = summary.not_judged();
            let cases: Vec<(String, FailUnder, String)> = summary
                .candidates
                .iter()
                .map(|candidate| {
                    let outcome = if summary.fails_under(candidate, threshold) {
                        FailUnder::Failed(below_fail_under(candidate, threshold))
                    } else if not_judged.iter().any(|c| std::ptr::eq(*c, candidate)) {
                        FailUnder::NotJudged(not_judged_by_fail_under(candidate, threshold))
                    } else {
                        FailUnder::Met
                    };
                    let score = candidate.score.map_or("score: none".to_string(), |score| {
                        format!("score: {}", Fixed4(score))
                    });
                    (candidate.row_name(), outcome, score)
                })
                .collect();
            let count = |keep: fn(&FailUnder) -> bool| {
                cases.iter().filter(|(_, outcome, _)| keep(outcome)).count()
            };
            let failed = count(|outcome| matches!(outcome, FailUnder::Failed(_)));
            let not_run = count(|outcome| matches!(outcome, FailUnder::NotJudged(_)));
            suites.push_str(&format!(
                "  <testsuite name=\"--fail-under {}\" tests=\"{}\" failures=\"{failed}\" \
                 errors=\"0\" skipped=\"{not_run}\" time=\"0.000\">\n",
                Shortest(threshold),
                cases.len()
            ));
            for (name, outcome, score) in &cases {
                suites.push_str(&format!(
                    "    <testcase name=\"{}\" classname=\"fail-under\" time=\"0.000\">\n",
                    attribute(name)
                ));
                match outcome {
                    FailUnder::Failed(message) => suites.push_str(&format!(
                        "      <failure message=\"{}\" type=\"fail-under\">{}</failure>\n",
                        attribute(message),
                        escape(message)
                    )),
                    FailUnder::NotJudged(message) => suites.push_str(&format!(
                        "      <skipped message=\"{}\"/>\n",
                        attribute(message)
                    )),
                    FailUnder::Met => {}
                }
                suites.push_str(&format!(
                    "      <system-out>{score}</system-out>\n    </testcase>\n"
                ));
            }
            suites.push_str("  </testsuite>\n");
            tests += cases.len();
            failures += failed;
            skipped += not_run;
        }
        if let Some(partial) = &summary.partial {
            let description = &partial.description;
            suites.push_str(&format!(
                "  <testsuite name=\"partial\" tests=\"1\" failures=\"0\" errors=\"0\" \
                 skipped=\"1\" time=\"0.000\">\n    <testcase name=\"missing calls\" \
                 classname=\"partial\" time=\"0.000\">\n      <skipped message=\"{0}\"/>\n    \
                 </testcase>\n  </testsuite>\n",
                attribute(&format!("partial: {description}"))
            ));
            tests += 1;
            skipped += 1;
        }
        let document = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"evalctl\" \
             tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{seconds:.3}\">\n\
             {suites}</testsuites>\n"
        );
        (document, [tests, failures, errors, skipped])
    }

    /// Write the report to `path`, replacing it atomically and readable by its owner only, and
    /// return the line that tells the user so: `wrote junit.xml: 8 test cases (2 failures, 1
    /// error)`, and `, 1 skipped` for a partial summary's case. A failure is evalctl's own
    /// (exit 4) and leaves an earlier report as it was.
    pub fn write(
        &self,
        path: &Path,
        summary: &Summary,
        fail_under: Option<f64>,
    ) -> anyhow::Result<String> {
        let (document, [tests, failures, errors, skipped]) = self.render(summary, fail_under);
        crate::owner_only::replace(path, document.as_bytes()).map_err(|err| {
            Fatal::Internal(format!(
                "{}: writing the JUnit report failed: {}",
                path.display(),
                io_reason(&err)
            ))
        })?;
        Ok(format!(
            "wrote {}: {} ({}, {}{})",
            path.display(),
            counted(tests, "test case", "test cases"),
            counted(failures, "failure", "failures"),
            counted(errors, "error", "errors"),
            if skipped > 0 {
                format!(", {skipped} skipped")
            } else {
                String::new()
            }
        ))
    }
}

/// A call's `latency_ms` as the seconds of a `time` attribute: never negative (the schema
/// Jenkins validates against allows digits and a point only), whatever a results file says.
fn seconds(latency_ms: f64) -> f64 {
    if latency_ms > 0.0 {
        latency_ms / 1000.0
    } else {
        0.0
    }
}

/// `text` safe inside an XML attribute or element: markup characters escaped, and characters
/// XML 1.0 forbids (control characters other than tab, newline and carriage return, U+FFFE and
/// U+FFFF) shown as their Rust escapes (`\u{1}`), so that two ids differing only in them keep
/// different names.
fn escape(text: &str) -> String {
    let forbidden = |c: char| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{FFFE}' || c == '\u{FFFF}'
    };
    let shown: std::borrow::Cow<str> = match text.contains(forbidden) {
        true => text
            .chars()
            .map(|c| match forbidden(c) {
                true => c.escape_unicode().to_string(),
                false => c.to_string(),
            })
            .collect(),
        false => text.into(),
    };
    escape_chars(&shown, |c| match c {
        '\'' => Some("&apos;"),
        c => markup_escape(c),
    })
}

/// `text` safe inside an XML attribute, as [`escape`] makes it, with tab, line feed and carriage
/// return written as character references: an XML parser turns them into spaces otherwise.
fn attribute(text: &str) -> String {
    escape(text)
        .replace('\t', "&#9;")
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_never_negative() {
        assert_eq!(seconds(1500.0), 1.5);
        for ms in [-5.0, -0.0, f64::NAN] {
            assert_eq!(format!("{:.3}", seconds(ms)), "0.000");
        }
    }

    #[test]
    fn escape_covers_markup_and_shows_forbidden_characters_as_escapes() {
        assert_eq!(
            escape("a<b>&\"c'\u{1}\n\u{ffff}"),
            "a&lt;b&gt;&amp;&quot;c&apos;\\u{1}\n\\u{ffff}"
        );
        assert_eq!(attribute("a\tb\nc\r<"), "a&#9;b&#10;c&#13;&lt;");
    }
}
