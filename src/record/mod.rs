//! The result record every scoring command writes: one `--output` line per call ([`CallRecord`],
//! `run`'s), the lines of `tasks score`, `tasks run --output` and `spec score` (their own members,
//! then the result-line members their meaning shares: [`ScoredLine`]), and the `run` member each
//! line carries ([`RunInfo`]). The runner writes them, the report layer reads them back
//! (`summarize`, `merge`, `compare`, `report`, `--junit`), and the vocabularies build their lines
//! with them, so it imports none of those.

mod line;
mod run;
mod scored;

pub use line::{CallRecord, GenerationInfo, Split};
pub use run::{
    completed_by, shard_of, EvaluatorInfo, RunIdentity, RunInfo, Splits, MAX_SHARDS, SPEC_SCORE,
};
pub use scored::{ScoredLine, ScoredRun, SharedMembers};
