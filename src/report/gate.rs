//! The gates of a finished run and the exit code they give: `--fail-under` on each candidate's
//! score, the errored calls against `--max-errors` / `--max-error-rate` (none tolerated by
//! default), the calls that scored below `--pass-score` (each a failed JUnit test case), and
//! for `spec score`'s records their own verdicts, as `spec score` judged them.
//! The verdict is part of the summary (`gates`, `exit`, `exit_reason`), so a CI job reading the
//! JSON knows why the exit code is what it is.

use super::summary::{
    CandidateSummary, CompleteGate, ErrorGate, FailUnderGate, GateReport, Summary,
};
use crate::exit::{Exit, Verdict};
use crate::text::{Fixed4, Shortest};

/// The gates a run is judged by (`--fail-under`, `--max-errors`, `--max-error-rate`, and for
/// `summarize` and `merge` the calls absent from the shards read).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gates {
    /// Exit 1 when any candidate's score is below this.
    pub fail_under: Option<f64>,
    /// Errored calls tolerated (absolute).
    pub max_errors: Option<usize>,
    /// Errored calls tolerated, as a share of the calls that finished.
    pub max_error_rate: Option<f64>,
    /// Exit 1 when calls of the shards read have no line (an interrupted run): `summarize` and
    /// `merge` without `--allow-partial`, which refuse a missing shard outright.
    pub absent_calls_fail: bool,
}

impl Gates {
    /// Judge `summary` by these gates and by the `--pass-score` count its tally made, record
    /// the verdict in it (`gates`, `exit`, `exit_reason`) and return the exit code.
    /// `results_failed`: a results write failed (exit 4, whatever the gates say); an
    /// interrupted run exits 130.
    pub fn judge(&self, summary: &mut Summary, results_failed: bool) -> Exit {
        let calls = &summary.calls;
        let within_count = self.max_errors.is_none_or(|max| calls.errors <= max);
        let within_rate = self
            .max_error_rate
            .is_none_or(|rate| !above_rate(calls.errors, calls.total, rate));
        let limited = self.max_errors.is_some() || self.max_error_rate.is_some();
        let errors = ErrorGate {
            count: calls.errors,
            calls: calls.total,
            max_errors: self.max_errors,
            max_error_rate: self.max_error_rate,
            passed: if limited {
                within_count && within_rate
            } else {
                calls.errors == 0
            },
        };
        let fail_under = self.fail_under.map(|threshold| {
            let below: Vec<String> = summary
                .below(threshold)
                .into_iter()
                .map(|c| c.id.clone())
                .collect();
            FailUnderGate {
                threshold,
                passed: below.is_empty(),
                below,
                not_judged: summary
                    .not_judged()
                    .into_iter()
                    .map(|c| c.id.clone())
                    .collect(),
            }
        });
        let pass_score = summary.gates.pass_score.take();
        let verdicts = summary.gates.verdicts.take();
        let complete = summary
            .partial
            .as_ref()
            .filter(|partial| self.absent_calls_fail && partial.missing_shards.is_empty())
            .map(|partial| CompleteGate {
                missing_calls: partial.missing_calls,
                plan_calls: partial.plan_calls,
                passed: false,
            });
        let passed = complete.is_none()
            && errors.passed
            && fail_under.as_ref().is_none_or(|gate| gate.passed)
            && pass_score.as_ref().is_none_or(|gate| gate.passed)
            && verdicts.as_ref().is_none_or(|gate| gate.passed);
        let exit = if summary.interrupted {
            Exit::Interrupted
        } else if results_failed {
            Exit::Internal
        } else if summary.budget.as_ref().is_some_and(|budget| budget.stopped) {
            Exit::BudgetStopped
        } else if passed {
            Exit::Success
        } else {
            Exit::EvaluationFailed
        };
        let report = GateReport {
            errors,
            fail_under,
            pass_score,
            verdicts,
            complete,
        };
        summary.closing = Verdict::new(exit, reason(&report, summary, exit));
        summary.gates = report;
        exit
    }
}

/// Whether `errors` of `calls` is a share above `rate`. The share is a division, rounded once
/// to the float nearest it, as the rate written in decimal is: 57 of 100 is within 0.57, where
/// `rate * calls` (56.99999999999999) would not be.
fn above_rate(errors: usize, calls: usize, rate: f64) -> bool {
    calls > 0 && errors as f64 / calls as f64 > rate
}

/// The one-line reason for `exit`, as the text summary's last line and the JSON's
/// `exit_reason` say it: `2 of 10 calls failed (more than --max-errors 1); candidate b scored
/// 0.4000, below --fail-under 0.5; 3 of 10 calls scored below --pass-score 0.75`.
fn reason(report: &GateReport, summary: &Summary, exit: Exit) -> String {
    let mut parts = Vec::new();
    match exit {
        Exit::Interrupted => {
            parts.push("interrupted; the summary covers the calls that finished".into())
        }
        Exit::Internal => {
            parts.push("a results or report file could not be written (see stderr)".into())
        }
        Exit::BudgetStopped => {
            if let Some(budget) = &summary.budget {
                parts.push(format!(
                    "stopped by --max-cost {}: {} not made ({})",
                    budget.max_cost_usd,
                    crate::text::counted(budget.calls_not_made, "call", "calls"),
                    budget.way_on()
                ))
            }
        }
        _ => {}
    }
    if let (Some(gate), Some(partial)) = (&report.complete, &summary.partial) {
        parts.push(format!(
            "{} of {} calls absent{}: the run did not finish ({}; --allow-partial summarizes \
             what is there)",
            gate.missing_calls,
            gate.plan_calls,
            partial.absent_from(),
            partial.completed_by
        ));
    }
    let errors = &report.errors;
    // Each limit given, and whether the errored calls exceed it.
    let limits = [
        errors
            .max_errors
            .map(|max| (format!("--max-errors {max}"), errors.count > max)),
        errors.max_error_rate.map(|rate| {
            let exceeded = above_rate(errors.count, errors.calls, rate);
            (format!("--max-error-rate {rate}"), exceeded)
        }),
    ];
    let named = |exceeded: bool| {
        limits
            .iter()
            .flatten()
            .filter(|(_, over)| *over == exceeded)
            .map(|(limit, _)| limit.as_str())
            .collect::<Vec<_>>()
    };
    let (over, within) = (named(true), named(false));
    let failed = format!("{} of {} calls failed", errors.count, errors.calls);
    parts.push(match (errors.passed, errors.count) {
        (true, 0) => match errors.calls {
            0 => "no call finished".to_string(),
            1 => "the call succeeded".to_string(),
            calls => format!("all {calls} calls succeeded"),
        },
        (true, _) => format!("{failed}, within {}", within.join(" and ")),
        (false, _) if over.is_empty() => failed,
        (false, _) => {
            let allow = if over.len() == 1 { "allows" } else { "allow" };
            let mut part = format!("{failed}, more than {} {allow}", over.join(" and "));
            if !within.is_empty() {
                part.push_str(&format!(" (within {})", within.join(" and ")));
            }
            part
        }
    });
    if let Some(gate) = &report.fail_under {
        let threshold = gate.threshold;
        if gate.passed {
            parts.push(format!(
                "no candidate below --fail-under {}",
                Shortest(threshold)
            ));
        }
        for candidate in summary
            .candidates
            .iter()
            .filter(|c| gate.below.contains(&c.id))
        {
            parts.push(format!(
                "{} {}",
                candidate_named(&candidate.id),
                below_fail_under(candidate, threshold)
            ));
        }
        for candidate in summary.not_judged() {
            parts.push(format!(
                "{} {}",
                candidate_named(&candidate.id),
                not_judged(candidate, threshold)
            ));
        }
    }
    if let Some(gate) = &report.pass_score {
        parts.push(match gate.below {
            0 => format!(
                "no call scored below --pass-score {}",
                Shortest(gate.threshold)
            ),
            below => format!(
                "{below} of {} calls scored below --pass-score {}",
                gate.calls,
                Shortest(gate.threshold)
            ),
        });
    }
    // As `spec score` words it; a run with no verdict is an errored call too, counted above.
    if let Some(gate) = report.verdicts.as_ref().filter(|gate| !gate.passed) {
        parts.push(crate::evaluation_spec::did_not_pass(
            gate.failed,
            gate.runs,
            gate.without_verdict,
        ));
    }
    parts.join("; ")
}

/// Why `candidate` fails `--fail-under threshold`: `scored 0.4000, below --fail-under 0.5`, or
/// `candidate ID`, or the id alone when it says so itself (`candidate 2 (no line read)`, the
/// name of a candidate whose lines were not read).
fn candidate_named(id: &str) -> String {
    match id.starts_with("candidate ") {
        true => id.to_string(),
        false => format!("candidate {id}"),
    }
}

/// `has no score (no call finished), below --fail-under 0.5` (the exit reason and the JUnit
/// report say it alike).
pub(super) fn below_fail_under(candidate: &CandidateSummary, threshold: f64) -> String {
    match candidate.score {
        Some(score) => format!(
            "scored {}, below --fail-under {}",
            Fixed4(score),
            Shortest(threshold)
        ),
        None => format!(
            "has no score (no {}call finished), below --fail-under {}",
            scoring_split(candidate),
            Shortest(threshold)
        ),
    }
}

/// Why `candidate` is not judged by `--fail-under threshold` in a partial summary: `has no val
/// score among the calls read: not judged by --fail-under 0.5` (the exit reason and the JUnit
/// report say it alike).
pub(super) fn not_judged(candidate: &CandidateSummary, threshold: f64) -> String {
    format!(
        "has no {}score among the calls read: not judged by --fail-under {}",
        scoring_split(candidate),
        Shortest(threshold)
    )
}

/// `val ` when a valset scores the candidate, else nothing: the split its score is the mean of.
fn scoring_split(candidate: &CandidateSummary) -> &'static str {
    if candidate.val.is_some() {
        "val "
    } else {
        ""
    }
}
