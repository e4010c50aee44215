//! The candidate × task model matrix of a run's summary (`run --generate`): its pairs in the
//! run's order, and the cell of each pair.

use crate::report::summary::CandidateSummary;

/// A run's summary rows of candidate × task model pairs, in its order: what the matrix shows.
#[derive(Debug, Clone)]
pub(super) struct Matrix {
    pairs: Vec<CandidateSummary>,
}

impl Matrix {
    /// The pairs among a summary's rows, candidates in the run's `order` (a results file's
    /// summary lists them as their first calls completed), or `None` when it has none (a run
    /// without task models).
    pub(super) fn of(candidates: &[CandidateSummary], order: &[&str]) -> Option<Matrix> {
        let mut pairs: Vec<CandidateSummary> = candidates
            .iter()
            .filter(|row| row.task_model.is_some())
            .cloned()
            .collect();
        pairs.sort_by_key(|pair| order.iter().position(|id| *id == pair.id));
        (!pairs.is_empty()).then_some(Matrix { pairs })
    }

    /// Distinct values in first-seen order.
    fn distinct<'a>(values: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
        let mut seen: Vec<&str> = Vec::new();
        for value in values {
            if !seen.contains(&value) {
                seen.push(value);
            }
        }
        seen
    }

    pub(super) fn candidates(&self) -> Vec<&str> {
        Matrix::distinct(self.pairs.iter().map(|pair| pair.id.as_str()))
    }

    pub(super) fn task_models(&self) -> Vec<&str> {
        Matrix::distinct(
            self.pairs
                .iter()
                .filter_map(|pair| pair.task_model.as_deref()),
        )
    }

    pub(super) fn cell(&self, candidate: &str, task_model: &str) -> Option<&CandidateSummary> {
        self.pairs
            .iter()
            .find(|pair| pair.id == candidate && pair.task_model.as_deref() == Some(task_model))
    }
}
