//! Which examples of each split a run uses: `--example ID` keeps only the examples with those
//! ids, `--limit N` the first N (of those, with both). The plan, the run's digests and the
//! `--generate` template check all ask this one rule.

use std::collections::BTreeSet;
use std::path::Path;

use super::strict::did_you_mean;
use super::Record;
use crate::error::Problem;

/// `--example` and `--limit`: which examples of the dataset and of the valset a run uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExampleSelection {
    /// `--example ID` (repeatable): only the examples whose `id` is one of these; empty, every
    /// example.
    pub ids: BTreeSet<String>,
    /// `--limit N`: only the first N examples of each split (after `ids`).
    pub limit: Option<usize>,
}

impl ExampleSelection {
    /// Whether examples are picked by id (which the run's digests then also record by index).
    pub fn by_id(&self) -> bool {
        !self.ids.is_empty()
    }

    /// The examples of a split (`records`) the run uses, each with its index in the split, in
    /// file order.
    pub fn used<'a>(
        &'a self,
        records: &'a [Record],
    ) -> impl Iterator<Item = (usize, &'a Record)> + 'a {
        records
            .iter()
            .enumerate()
            .filter(|(_, record)| {
                !self.by_id() || record.id().is_some_and(|id| self.ids.contains(&id))
            })
            .take(self.limit.unwrap_or(usize::MAX))
    }

    /// A problem for each `--example` id that no example of `splits` (the dataset and the
    /// valset, when given; `paths` names their files) has, or for the flag itself when there is
    /// no split to pick from or no example has an id.
    pub fn problems(
        &self,
        splits: [Option<&[Record]>; 2],
        paths: [Option<&Path>; 2],
    ) -> Vec<Problem> {
        if !self.by_id() {
            return Vec::new();
        }
        let files: Vec<String> = paths
            .into_iter()
            .flatten()
            .map(|path| path.display().to_string())
            .collect();
        let files = files.join(" or ");
        if files.is_empty() {
            return vec![Problem::new(
                "--example",
                "picks examples of --dataset and --valset, and neither was given",
            )];
        }
        let known: BTreeSet<String> = splits
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(Record::id)
            .collect();
        if known.is_empty() {
            return vec![Problem::new(
                "--example",
                format!("no example of {files} has an `id` (a string or a number) to pick it by"),
            )];
        }
        self.ids
            .iter()
            .filter(|id| !known.contains(*id))
            .map(|id| {
                let near = did_you_mean(id, known.iter().map(String::as_str));
                Problem::new(
                    "--example",
                    format!("no example of {files} has the id {id:?}{near}"),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(ids: &[&str]) -> Vec<Record> {
        ids.iter()
            .enumerate()
            .map(|(index, id)| Record::from_value(index + 1, serde_json::json!({"id": id})))
            .collect()
    }

    fn selection(ids: &[&str], limit: Option<usize>) -> ExampleSelection {
        ExampleSelection {
            ids: ids.iter().map(|id| id.to_string()).collect(),
            limit,
        }
    }

    fn used(selection: &ExampleSelection, records: &[Record]) -> Vec<usize> {
        selection.used(records).map(|(index, _)| index).collect()
    }

    #[test]
    fn ids_pick_examples_in_file_order_and_the_limit_counts_what_they_picked() {
        let split = records(&["a", "b", "c", "d"]);
        assert_eq!(used(&selection(&[], None), &split), [0, 1, 2, 3]);
        assert_eq!(used(&selection(&[], Some(2)), &split), [0, 1]);
        assert_eq!(used(&selection(&["d", "b"], None), &split), [1, 3]);
        assert_eq!(used(&selection(&["d", "b", "c"], Some(2)), &split), [1, 2]);
    }

    #[test]
    fn an_id_no_split_has_is_a_problem_with_a_suggestion() {
        let (train, val) = (records(&["a", "b1"]), records(&["v"]));
        let pick = selection(&["v", "zz", "a", "b2"], None);
        let paths = [Some(Path::new("t.jsonl")), Some(Path::new("v.jsonl"))];
        let messages = |problems: Vec<Problem>| -> Vec<String> {
            problems.iter().map(ToString::to_string).collect()
        };
        assert_eq!(
            messages(pick.problems([Some(&train), Some(&val)], paths)),
            [
                "--example: no example of t.jsonl or v.jsonl has the id \"b2\" (did you mean `b1`?)",
                "--example: no example of t.jsonl or v.jsonl has the id \"zz\"",
            ]
        );
        let anonymous = vec![Record::from_value(1, serde_json::json!({"q": 1}))];
        assert_eq!(
            messages(pick.problems([Some(&anonymous), None], [paths[0], None])),
            ["--example: no example of t.jsonl has an `id` (a string or a number) to pick it by"]
        );
        assert_eq!(
            messages(pick.problems([None, None], [None, None])),
            ["--example: picks examples of --dataset and --valset, and neither was given"]
        );
        assert!(selection(&[], None)
            .problems([None, None], [None, None])
            .is_empty());
    }
}
