//! Flags of `evalctl tasks validate|render|score`, turned into the typed configs of
//! [`crate::tasks`].

use std::path::PathBuf;
use std::time::Duration;

use clap::Subcommand;

use crate::error::bad_flag;
use crate::exit::Exit;
use crate::input::Source;
use crate::report::Reporter;
use crate::tasks::{self, RenderConfig, ScoreConfig, ValidateConfig};

/// `evalctl tasks ...`
#[derive(Debug, Subcommand)]
pub enum TasksCommand {
    /// Strictly validate a task-spec JSONL file; report every error.
    ///
    /// Each error is one line `FILE:LINE: task_id: rule: field: detail` on stdout (or a JSON array
    /// with --format json); a tally goes to stderr. Exit 0 when clean, 2 on any error.
    Validate {
        /// The tasks JSONL file.
        file: PathBuf,
        /// Exit 0 even when some tasks are invalid (errors are still reported).
        #[arg(long)]
        allow_bad_tasks: bool,
    },
    /// Render each valid task's few-shot prompt as one JSON line {"task_id", "prompt"}.
    Render {
        /// The tasks JSONL file.
        file: PathBuf,
        /// Render the valid tasks even when others are invalid (reported on stderr).
        #[arg(long)]
        allow_bad_tasks: bool,
    },
    /// Post-process and score model outputs against each task's targets.
    ///
    /// Exit 0 when every task was scored, 1 when a task has no output or an output names no task,
    /// 2 on invalid input.
    Score {
        /// The tasks JSONL file.
        file: PathBuf,
        /// Model outputs JSONL ({"task_id", "output"} per line; `-` = stdin).
        #[arg(long, value_name = "OUTPUTS.jsonl")]
        outputs: String,
        /// Write one JSON line per task to this file.
        #[arg(long, value_name = "FILE.jsonl")]
        output: Option<PathBuf>,
        /// Score the valid tasks even when others are invalid (reported on stderr).
        #[arg(long)]
        allow_bad_tasks: bool,
        /// Time limit of each code_exec assertion, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
        code_timeout: f64,
    },
}

impl TasksCommand {
    /// Run the subcommand.
    pub fn execute(self, reporter: Reporter) -> anyhow::Result<Exit> {
        match self {
            TasksCommand::Validate {
                file,
                allow_bad_tasks,
            } => tasks::validate(
                &ValidateConfig {
                    file,
                    allow_bad_tasks,
                },
                reporter,
            ),
            TasksCommand::Render {
                file,
                allow_bad_tasks,
            } => tasks::render(
                &RenderConfig {
                    file,
                    allow_bad_tasks,
                },
                reporter,
            ),
            TasksCommand::Score {
                file,
                outputs,
                output,
                allow_bad_tasks,
                code_timeout,
            } => {
                let code_timeout = Duration::try_from_secs_f64(code_timeout)
                    .ok()
                    .filter(|timeout| !timeout.is_zero())
                    .ok_or_else(|| {
                        bad_flag(
                            "--code-timeout",
                            format!("must be a positive number of seconds, got {code_timeout}"),
                        )
                    })?;
                let outputs = Source::from_arg(&outputs);
                tasks::score(
                    &ScoreConfig {
                        file,
                        outputs,
                        output,
                        allow_bad_tasks,
                        code_timeout,
                    },
                    reporter,
                )
            }
        }
    }
}
