//! Task specs (`evalctl tasks validate|render|score|run`): the frozen JSONL task contract, its
//! strict validator, few-shot rendering, the post-process rules and task scoring with the shared
//! text metrics of [`crate::scoring`] and the `code_exec` sandbox. `tasks run`'s generation lives
//! in the generation layer (`src/generate/tasks_run/`). What users rely on is documented in
//! `docs/tasks.md`.

pub(crate) mod code_exec;
mod postprocess;
pub(crate) mod render;
pub(crate) mod rules;
pub(crate) mod score;
pub(crate) mod spec;
pub(crate) mod validate;

use std::path::PathBuf;
use std::time::Duration;

pub use spec::{Category, MetricName, PostProcess};

/// `evalctl tasks validate`.
#[derive(Debug, Clone)]
pub struct ValidateConfig {
    /// The tasks JSONL file.
    pub file: PathBuf,
    /// Exit 0 even when some records are invalid.
    pub allow_bad_tasks: bool,
}

/// `evalctl tasks render`.
#[derive(Debug, Clone)]
pub struct RenderConfig {
    /// The tasks JSONL file.
    pub file: PathBuf,
    /// Render the valid tasks even when others are invalid (they are reported on stderr).
    pub allow_bad_tasks: bool,
}

/// `evalctl tasks score`.
#[derive(Debug, Clone)]
pub struct ScoreConfig {
    /// The tasks JSONL file.
    pub file: PathBuf,
    /// The model outputs, `{"task_id", "output"}` per line.
    pub outputs: crate::input::Source,
    /// Where to write one result line per task, if anywhere.
    pub output: Option<PathBuf>,
    /// Score the valid tasks even when others are invalid (they are reported on stderr).
    pub allow_bad_tasks: bool,
    /// How `code_exec` assertion scripts run.
    pub code: CodeExecSettings,
}

/// How `code_exec` assertion scripts run: each under a time limit, in the sandbox unless the user
/// gave up isolation (`--unsafe-code-exec`).
#[derive(Debug, Clone, Copy)]
pub struct CodeExecSettings {
    /// The time limit of each script.
    pub timeout: Duration,
    /// In the sandbox, or not.
    pub isolation: crate::sandbox::Isolation,
}
