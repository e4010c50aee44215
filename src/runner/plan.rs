//! The plan: which calls a run makes, in order (candidate × split × example × repeat), each
//! with its [`CallKey`].

use super::key::KeyContext;
use crate::input::{ExampleSelection, Inputs, Record};
use crate::record::Split;
use crate::store::CallKey;

/// One call of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedCall {
    /// Index into `Inputs::candidates`.
    pub candidate: usize,
    /// Which split the example comes from.
    pub split: Split,
    /// Index of the example within its split (`None` for single calls).
    pub example: Option<usize>,
    /// The repeat index under `--repeat` (0-based), else `None`.
    pub repeat: Option<u32>,
    /// `--generate`: which task model answers before the call is scored, else `None`.
    pub task_model: Option<usize>,
    /// The call's key (journal, resume, cache).
    pub key: CallKey,
}

impl Inputs {
    /// The records of `split` (`None` for single calls, or a split not given).
    pub fn split_records(&self, split: Split) -> Option<&[Record]> {
        match split {
            Split::Train => self.dataset.as_deref(),
            Split::Val => self.valset.as_deref(),
            Split::Single => None,
        }
    }
}

/// Every call, in the order a sequential run makes them: for each candidate, its dataset
/// examples, then its valset examples (or one single call), each `repeat` times in a row when
/// `--repeat` is given. `selection` says which examples of each split (`--example`, `--limit`).
pub fn plan_calls(
    inputs: &Inputs,
    selection: &ExampleSelection,
    repeat: Option<u32>,
    keys: &KeyContext,
) -> Vec<PlannedCall> {
    let used = |split| {
        let records = inputs.split_records(split).unwrap_or_default();
        selection
            .used(records)
            .map(move |(index, _)| (split, Some(index)))
    };
    let splits: Vec<(Split, Option<usize>)> = match inputs.dataset {
        None => vec![(Split::Single, None)],
        Some(_) => used(Split::Train).chain(used(Split::Val)).collect(),
    };
    let repeats: Vec<Option<u32>> = match repeat {
        None => vec![None],
        Some(n) => (0..n).map(Some).collect(),
    };
    let mut plan = Vec::with_capacity(inputs.candidates.len() * splits.len() * repeats.len());
    for (candidate, candidate_text) in inputs.candidates.iter().enumerate() {
        for &(split, example) in &splits {
            let example_text = example.and_then(|index| {
                let record = &inputs.split_records(split)?[index];
                Some((index, record))
            });
            for &repeat in &repeats {
                plan.push(PlannedCall {
                    candidate,
                    split,
                    example,
                    repeat,
                    task_model: None,
                    key: keys.call_key(&candidate_text.text, split, example_text, repeat),
                });
            }
        }
    }
    plan
}

/// The plan of `run --generate`: [`plan_calls`] once per task model (`keys` has each model's
/// key context, in order), ordered candidate × task model × example × repeat.
pub fn plan_generation(
    inputs: &Inputs,
    selection: &ExampleSelection,
    repeat: Option<u32>,
    keys: &[KeyContext],
) -> Vec<PlannedCall> {
    let mut plan: Vec<PlannedCall> = keys
        .iter()
        .enumerate()
        .flat_map(|(model, keys)| {
            plan_calls(inputs, selection, repeat, keys)
                .into_iter()
                .map(move |call| PlannedCall {
                    task_model: Some(model),
                    ..call
                })
        })
        .collect();
    // Stable: within a candidate, the models keep their order and each its examples'.
    plan.sort_by_key(|call| call.candidate);
    plan
}

/// `--shard K/N`: shard K (0-based) of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, from 0 to `count - 1`.
    pub index: u64,
    /// How many shards.
    pub count: u64,
}

impl std::fmt::Display for Shard {
    /// `K/N`, as `--shard` takes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Keep the calls of `plan` that belong to this shard: those whose key, read as a number,
    /// is `index` modulo `count`. Keys depend only on the inputs and the evaluator, so every
    /// shard of one run splits the same plan the same way, and the shards together make it
    /// exactly once.
    pub fn keep(self, plan: &mut Vec<PlannedCall>) {
        plan.retain(|call| {
            let hex = call.key.to_string();
            // ok: a key is 64 hex digits, so its first 16 are a u64.
            let number = u64::from_str_radix(&hex[..16], 16).unwrap_or(0);
            number % self.count == self.index
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Candidate, Record};

    fn records(n: usize) -> Option<Vec<Record>> {
        Some(
            (0..n)
                .map(|i| Record::from_value(i + 1, serde_json::json!({"id": i})))
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
                numbered: false,
            })
            .collect();
        Inputs {
            candidates,
            dataset,
            valset,
        }
    }

    fn every() -> ExampleSelection {
        ExampleSelection::default()
    }

    fn first(limit: usize) -> ExampleSelection {
        ExampleSelection {
            limit: Some(limit),
            ..ExampleSelection::default()
        }
    }

    fn keys() -> KeyContext {
        let url = crate::evaluator::http::HttpSpec::new("http://127.0.0.1:1/".into(), &[]).unwrap();
        let evaluator = crate::evaluator::EvaluatorSpec::Http(url);
        KeyContext::new(
            &evaluator,
            crate::protocol::ScoreRange::Unit,
            None,
            &crate::runner::key::DeclaredInputs::default(),
        )
        .unwrap()
    }

    #[test]
    fn single_mode_is_one_call_per_candidate() {
        let plan = plan_calls(&inputs(2, None, None), &every(), None, &keys());
        assert_eq!(plan.len(), 2);
        assert!(plan
            .iter()
            .all(|call| call.split == Split::Single && call.example.is_none()));
    }

    #[test]
    fn generalization_mode_orders_train_then_val_and_limits_each() {
        let plan = plan_calls(&inputs(2, records(3), records(2)), &first(2), None, &keys());
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

    #[test]
    fn examples_picked_by_id_keep_their_index_and_key_in_each_split() {
        let picked = ExampleSelection {
            ids: ["1".to_string(), "2".to_string()].into(),
            limit: None,
        };
        let inputs = inputs(1, records(3), records(2));
        let plan = plan_calls(&inputs, &picked, None, &keys());
        let splits: Vec<_> = plan.iter().map(|call| (call.split, call.example)).collect();
        assert_eq!(
            splits,
            vec![
                (Split::Train, Some(1)),
                (Split::Train, Some(2)),
                (Split::Val, Some(1)),
            ]
        );
        // The same calls as in the plan of every example: the cache answers them.
        let everything = plan_calls(&inputs, &every(), None, &keys());
        assert!(plan.iter().all(|call| everything.contains(call)));
    }

    #[test]
    fn repeats_follow_each_other_with_their_own_keys() {
        let plan = plan_calls(&inputs(1, records(2), None), &every(), Some(3), &keys());
        let repeats: Vec<_> = plan
            .iter()
            .map(|call| (call.example, call.repeat))
            .collect();
        assert_eq!(
            repeats,
            vec![
                (Some(0), Some(0)),
                (Some(0), Some(1)),
                (Some(0), Some(2)),
                (Some(1), Some(0)),
                (Some(1), Some(1)),
                (Some(1), Some(2)),
            ]
        );
        let keys: std::collections::HashSet<_> = plan.iter().map(|call| call.key).collect();
        assert_eq!(keys.len(), plan.len());
    }
}
