//! Inputs of `run` and `preflight`: the line-numbered JSONL reader, candidates, dataset and valset.
//!
//! Every problem in every input is collected in one pass and reported together before anything
//! runs (exit 2).

mod candidates;
pub mod json_lines;
pub mod json_scan;
mod jsonl;
mod objects_only;
mod selection;
mod source;
mod stream;
pub mod strict;
mod unique_json;

use std::path::Path;

pub use candidates::{Candidate, CandidateSource};
use jsonl::read_jsonl;
pub use jsonl::{json_reason, jsonl_lines, parse_object_line, repeated_ids, Record};
pub use objects_only::ObjectsOnly;
pub use selection::ExampleSelection;
pub use source::{
    document_json_reason, json_error_what, link_target, not_a_directory, read_input_file,
    same_file, second_value_starts_line, Source,
};
pub use stream::JsonlStream;
pub use unique_json::{
    decode_unique, decode_unique_map, parse_unique, parse_unique_str, repeated_key_error,
    repeated_key_reason, repeated_key_reason_at, says_repeated_key, UniqueValue,
};

use crate::error::{invalid, Problem};

/// Everything loaded and validated for one run.
#[derive(Debug)]
pub struct Inputs {
    /// The candidates, in the order given.
    pub candidates: Vec<Candidate>,
    /// The dataset records, when `--dataset` was given.
    pub dataset: Option<Vec<Record>>,
    /// The valset records, when `--valset` was given.
    pub valset: Option<Vec<Record>>,
}

/// Load and validate the candidates, dataset and valset, and that every `--example` id of
/// `selection` names an example of them, reporting all problems at once. The dataset and valset
/// are read on their own threads, beside the candidates.
pub fn load_inputs(
    candidates: &CandidateSource,
    dataset: Option<&Path>,
    valset: Option<&Path>,
    selection: &ExampleSelection,
) -> anyhow::Result<Inputs> {
    let split_paths = [dataset, valset];
    let read_split = |path: Option<&Path>, flag: &str| {
        path.map(|path| match path.to_str() {
            Some("-") => Err(vec![Problem::new(
                flag,
                "'-' is not a file: a split is read from a file, not stdin (candidates can come \
                 from stdin)",
            )]),
            _ => read_jsonl(path),
        })
    };
    let (candidates, dataset, valset, mut problems) = std::thread::scope(|scope| {
        let dataset = scope.spawn(|| read_split(dataset, "--dataset"));
        let valset = scope.spawn(|| read_split(valset, "--valset"));
        let mut problems = Vec::new();
        let candidates = candidates::load(candidates, &mut problems);
        let joined = |handle: std::thread::ScopedJoinHandle<'_, _>| {
            handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        };
        (candidates, joined(dataset), joined(valset), problems)
    });
    // One file given as both --dataset and --valset, however it is named, has its problems said
    // once, under the name --dataset gives it.
    let valset = match split_paths {
        [Some(named), Some(again)] if named != again && same_file(named, again) => {
            valset.map(|split| {
                split.map_err(|problems| {
                    let (named, again) = (named.display().to_string(), again.display().to_string());
                    problems
                        .into_iter()
                        .map(|problem| Problem {
                            source: if problem.source == again {
                                named.clone()
                            } else {
                                problem.source
                            },
                            ..problem
                        })
                        .collect()
                })
            })
        }
        _ => valset,
    };
    let mut said: std::collections::HashSet<Problem> = problems.iter().cloned().collect();
    let mut keep_records = |split: Option<Result<Vec<Record>, Vec<Problem>>>| {
        split.map(|result| {
            result.unwrap_or_else(|split_problems| {
                for problem in split_problems {
                    if said.insert(problem.clone()) {
                        problems.push(problem);
                    }
                }
                Vec::new()
            })
        })
    };
    let dataset = keep_records(dataset);
    let valset = keep_records(valset);
    if problems.is_empty() {
        let splits = [dataset.as_deref(), valset.as_deref()];
        problems.extend(selection.problems(splits, split_paths));
    }
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    Ok(Inputs {
        candidates,
        dataset,
        valset,
    })
}
