//! Flags of `evalctl tasks validate|render|score`.

use std::path::PathBuf;

use clap::Subcommand;

use super::FormatArg;
use crate::exit::Exit;

/// `evalctl tasks ...`
#[derive(Debug, Subcommand)]
pub enum TasksCommand {
    /// Strictly validate a task-spec JSONL file; report every error.
    Validate {
        /// The tasks JSONL file.
        file: PathBuf,
        /// Report format.
        #[arg(long, value_enum, default_value_t = FormatArg::Text)]
        format: FormatArg,
        /// Exit 0 even when some tasks are invalid (errors are still reported).
        #[arg(long)]
        allow_bad_tasks: bool,
    },
    /// Render each valid task's few-shot prompt as one JSON line {"task_id", "prompt"}.
    Render {
        /// The tasks JSONL file.
        file: PathBuf,
    },
    /// Post-process and score model outputs against each task's targets.
    Score {
        /// The tasks JSONL file.
        file: PathBuf,
        /// Model outputs JSONL ({"task_id", "output"} per line; `-` = stdin).
        #[arg(long, value_name = "OUTPUTS.jsonl")]
        outputs: String,
        /// Write one JSON line per task to this file.
        #[arg(long, value_name = "FILE.jsonl")]
        output: Option<PathBuf>,
        /// Report format.
        #[arg(long, value_enum, default_value_t = FormatArg::Text)]
        format: FormatArg,
    },
}

impl TasksCommand {
    /// Run the subcommand.
    pub fn execute(self) -> anyhow::Result<Exit> {
        anyhow::bail!("`evalctl tasks` is not implemented yet")
    }
}
