//! The `evalctl preflight` report: what was validated and how the evaluator answered, as one text
//! line or a JSON document.

use serde::Serialize;

use super::{print_stdout, print_text, EvaluatorInfo, Format};

/// What a passed preflight checked.
#[derive(Debug, Clone, Serialize)]
pub struct PreflightReport {
    /// Always true (a failed preflight prints [`super::print_failure`]'s document instead).
    pub ok: bool,
    /// Which evaluator was checked.
    pub evaluator: EvaluatorInfo,
    /// Candidates loaded.
    pub candidates: usize,
    /// Dataset records, when a dataset was given.
    pub dataset_records: Option<usize>,
    /// Valset records, when a valset was given.
    pub valset_records: Option<usize>,
    /// The probe's answer; null when no probe was sent.
    pub probe: Option<ProbeAnswer>,
    /// How preflight messages name the evaluator (text format only).
    #[serde(skip)]
    pub description: String,
}

/// The score the evaluator gave the probe.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ProbeAnswer {
    /// The validated score.
    pub score: f64,
}

/// Print a passed preflight's report in `format`.
pub fn print_preflight(report: &PreflightReport, format: Format) -> anyhow::Result<()> {
    match format {
        Format::Json => print_stdout(&format!("{}\n", serde_json::to_string_pretty(report)?)),
        Format::Text => {
            let mut line = format!("preflight ok: {} candidate(s)", report.candidates);
            if let Some(n) = report.dataset_records {
                line.push_str(&format!(", dataset {n} records"));
            }
            if let Some(n) = report.valset_records {
                line.push_str(&format!(", valset {n} records"));
            }
            line.push_str(&match report.probe {
                Some(answer) => format!(
                    "; {} answered the probe with score {}\n",
                    report.description, answer.score
                ),
                None => format!("; {} set up (no probe sent)\n", report.description),
            });
            print_text(&line)
        }
    }
}
