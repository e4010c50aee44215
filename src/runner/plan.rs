//! The plan: which calls a run makes, in order (candidate × split × example).

use serde::Serialize;

use crate::input::Inputs;

/// Which examples a call belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// No dataset: one call per candidate.
    Single,
    /// A dataset example.
    Train,
    /// A valset example.
    Val,
}

/// One call of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedCall {
    /// Index into `Inputs::candidates`.
    pub candidate: usize,
    /// Which split the example comes from.
    pub split: Split,
    /// Index of the example within its split (`None` for single calls).
    pub example: Option<usize>,
}

/// Every call, in the order a sequential run makes them: for each candidate, its dataset
/// examples, then its valset examples (or one single call). `limit` keeps the first N of each split.
pub fn plan_calls(inputs: &Inputs, limit: Option<usize>) -> Vec<PlannedCall> {
    let count = |records: &Option<Vec<crate::input::Record>>| {
        records
            .as_ref()
            .map(|records| limit.map_or(records.len(), |limit| records.len().min(limit)))
    };
    let train = count(&inputs.dataset);
    let val = count(&inputs.valset);
    let mut plan = Vec::new();
    for candidate in 0..inputs.candidates.len() {
        match train {
            None => plan.push(PlannedCall {
                candidate,
                split: Split::Single,
                example: None,
            }),
            Some(train) => {
                let examples = |split, n| {
                    (0..n).map(move |index| PlannedCall {
                        candidate,
                        split,
                        example: Some(index),
                    })
                };
                plan.extend(examples(Split::Train, train));
                plan.extend(examples(Split::Val, val.unwrap_or(0)));
            }
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Candidate, Record};

    fn records(n: usize) -> Option<Vec<Record>> {
        Some(
            (0..n)
                .map(|i| Record::from_value(i + 1, serde_json::json!({})))
                .collect(),
        )
    }

    fn inputs(
        candidates: usize,
        dataset: Option<Vec<Record>>,
        valset: Option<Vec<Record>>,
    ) -> Inputs {
        let candidates = (0..candidates)
            .map(|i| Candidate {
                id: format!("c{i}"),
                text: String::new(),
            })
            .collect();
        Inputs {
            candidates,
            dataset,
            valset,
        }
    }

    #[test]
    fn single_mode_is_one_call_per_candidate() {
        let plan = plan_calls(&inputs(2, None, None), None);
        assert_eq!(plan.len(), 2);
        assert!(plan
            .iter()
            .all(|call| call.split == Split::Single && call.example.is_none()));
    }

    #[test]
    fn generalization_mode_orders_train_then_val_and_limits_each() {
        let plan = plan_calls(&inputs(2, records(3), records(2)), Some(2));
        let splits: Vec<_> = plan
            .iter()
            .map(|call| (call.candidate, call.split, call.example))
            .collect();
        assert_eq!(
            splits,
            vec![
                (0, Split::Train, Some(0)),
                (0, Split::Train, Some(1)),
                (0, Split::Val, Some(0)),
                (0, Split::Val, Some(1)),
                (1, Split::Train, Some(0)),
                (1, Split::Train, Some(1)),
                (1, Split::Val, Some(0)),
                (1, Split::Val, Some(1)),
            ]
        );
    }
}
