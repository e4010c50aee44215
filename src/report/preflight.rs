//! The `evalctl preflight` report: what was validated and how the evaluator answered, as one text
//! line or a JSON document.

use serde::Serialize;

use super::{Document, Styled};
use crate::record::EvaluatorInfo;

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
    /// Dataset examples the run would use (`--example` and `--limit` pick them), when a dataset
    /// was given.
    pub dataset_used: Option<usize>,
    /// Valset examples the run would use, when a valset was given.
    pub valset_used: Option<usize>,
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

/// A passed preflight: one line of text, or the JSON document.
impl Document for PreflightReport {
    fn text(&self) -> Styled {
        let mut line = format!("preflight ok: {} candidate(s)", self.candidates);
        let splits = [
            ("dataset", self.dataset_records, self.dataset_used),
            ("valset", self.valset_records, self.valset_used),
        ];
        for (split, records, used) in splits {
            let Some(records) = records else { continue };
            line.push_str(&format!(", {split} {records} records"));
            if let Some(used) = used.filter(|&used| used != records) {
                line.push_str(&format!(" ({used} used)"));
            }
        }
        line.push_str(&match self.probe {
            Some(answer) => format!(
                "; {} answered the probe with score {}\n",
                self.description, answer.score
            ),
            None => format!("; {} set up (no probe sent)\n", self.description),
        });
        Styled::from(line)
    }
}
