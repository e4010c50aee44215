//! Inputs of `run` and `preflight`: the line-numbered JSONL reader, candidates, dataset and valset.
//!
//! Every problem in every input is collected in one pass and reported together before anything
//! runs (exit 2).

mod candidates;
mod jsonl;

use std::io::Read;
use std::path::Path;

pub use candidates::Candidate;
pub use jsonl::{
    io_reason, json_reason, jsonl_lines, read_input_file, read_jsonl, read_jsonl_bytes,
    scan_jsonl_objects, Record, MAX_RECORDS,
};

use crate::config::RunConfig;
use crate::error::bad_input;

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

/// Load and validate every input named by `config`, reporting all problems at once.
pub fn load_inputs(config: &RunConfig) -> anyhow::Result<Inputs> {
    let mut problems = Vec::new();
    let candidates = candidates::load(&config.candidates, &mut problems);
    let mut load_split = |path: &Option<std::path::PathBuf>| {
        path.as_deref().map(|path: &Path| match read_jsonl(path) {
            Ok(records) => records,
            Err(mut file_problems) => {
                problems.append(&mut file_problems);
                Vec::new()
            }
        })
    };
    let dataset = load_split(&config.dataset);
    let valset = load_split(&config.valset);
    if !problems.is_empty() {
        return Err(bad_input(problems.join("\n")));
    }
    Ok(Inputs {
        candidates,
        dataset,
        valset,
    })
}

/// All of standard input, or the problem `<stdin>: cannot read: <reason>`.
pub fn read_stdin() -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .map(|_| bytes)
        .map_err(|err| format!("<stdin>: cannot read: {}", io_reason(&err)))
}
