//! Flags of `evalctl tasks validate|render|score`, turned into the typed configs of
//! [`crate::tasks`].

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Args, Subcommand, ValueEnum};

use super::config::ConfigArgs;
use super::values::{command_spec, parse_seconds};
use super::values::{parse_at_least, parse_between, parse_count};
use crate::commands;
use crate::error::bad_flag;
use crate::exit::Exit;
use crate::generate::model::{ModelSpec, Sampling};
use crate::generate::tasks_run::RunTasksConfig;
use crate::input::Source;
use crate::llm::{Api, EndpointSpec};
use crate::report::Reporter;
use crate::sandbox::Isolation;
use crate::tasks::{CodeExecSettings, RenderConfig, ScoreConfig, ValidateConfig};

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
        #[arg(long, value_name = "SECONDS", default_value = "10", allow_negative_numbers = true,
              value_parser = parse_seconds)]
        code_timeout: Duration,
        /// Run code_exec assertions without the sandbox, with your rights, where the kernel
        /// refuses to build one. Only for code you trust.
        #[arg(long, env = "EVALCTL_UNSAFE_CODE_EXEC", hide_env_values = true)]
        unsafe_code_exec: bool,
    },
    /// Run a task suite against a model: validate, render, generate, post-process, score.
    ///
    /// The model is --model PROVIDER/MODEL (an OpenAI-compatible API, the judge's key and
    /// base-URL rules) or --model-command CMD ({"task_id", "prompt", "sampling"} as JSON on stdin,
    /// the completion on stdout). Scores as `tasks score` does. Exit 0 when every task was
    /// generated and scored, 1 when a generation failed (the task scores 0), 2 on invalid input
    /// (any invalid task, unless --allow-bad-tasks), 3 when the model cannot be used.
    Run(Box<TasksRunArgs>),
}

/// Flags of `evalctl tasks run`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("model_choice").multiple(false).args(["model", "model_command"])))]
pub struct TasksRunArgs {
    /// The tasks JSONL file.
    file: PathBuf,
    /// The model, as PROVIDER/MODEL (e.g. openai/gpt-4o-mini), over an OpenAI-compatible API.
    #[arg(long, value_name = "PROVIDER/MODEL")]
    model: Option<String>,
    /// A command that generates: the rendered prompt as JSON on stdin, the completion on stdout.
    /// One string, split by shell-word rules (no shell runs).
    #[arg(long, value_name = "CMD")]
    model_command: Option<String>,
    /// Working directory of --model-command.
    #[arg(long, value_name = "DIR")]
    model_cwd: Option<PathBuf>,
    /// Which API --model speaks: chat (chat completions) or completions (base models).
    #[arg(long, value_enum, default_value_t = ApiArg::Chat)]
    api: ApiArg,
    /// API base URL of --model (else EVALCTL_JUDGE_BASE_URL, else OPENAI_BASE_URL for openai,
    /// else the provider's default).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Name of the environment variable holding the API key (default <PROVIDER>_API_KEY).
    #[arg(long, value_name = "NAME")]
    api_key_env: Option<String>,
    /// Sampling temperature.
    #[arg(
        long,
        value_name = "T",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    temperature: f64,
    /// Completion token limit.
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = parse_at_least::<u32, 1>)]
    max_tokens: Option<u32>,
    /// A stop sequence (repeatable).
    #[arg(long, value_name = "TEXT")]
    stop: Vec<String>,
    /// Completions in flight.
    #[arg(short = 'j', long, value_name = "N", default_value_t = 8,
          allow_negative_numbers = true, value_parser = parse_between::<u32, 1, 4096>)]
    concurrency: u32,
    /// Time limit of one completion, in seconds; a model command past it is killed with its
    /// children.
    #[arg(long, value_name = "SECONDS", default_value = "60", allow_negative_numbers = true,
          value_parser = parse_seconds)]
    timeout: Duration,
    /// Retries for transport failures, timeouts of the API, HTTP 429 and 5xx.
    #[arg(long, value_name = "N", default_value_t = 2, allow_negative_numbers = true,
          value_parser = parse_count::<u32>)]
    retries: u32,
    /// Only the first N valid tasks.
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = parse_at_least::<usize, 1>)]
    limit: Option<usize>,
    /// Write the completions as {"task_id", "output"} lines (what `tasks score --outputs` reads).
    #[arg(long, value_name = "FILE.jsonl")]
    save_outputs: Option<PathBuf>,
    /// Write one JSON score line per task to this file.
    #[arg(long, value_name = "FILE.jsonl")]
    output: Option<PathBuf>,
    /// Continue the run whose journal is --save-outputs: tasks with a saved completion (same
    /// model, sampling and prompt) are not generated again; new completions are appended and
    /// the summary covers every task.
    #[arg(long, requires = "save_outputs")]
    resume: bool,
    /// Keep every completion in a cache and answer prompts the model was already given from it
    /// (directory: --cache-dir, else EVALCTL_CACHE_DIR, else cache_dir in evalctl.toml, else
    /// $XDG_CACHE_HOME/evalctl, else ~/.cache/evalctl; see docs/cache.md).
    #[arg(long)]
    cache: bool,
    /// The cache directory of --cache.
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Run the valid tasks even when others are invalid (reported on stderr).
    #[arg(long)]
    allow_bad_tasks: bool,
    /// Time limit of each code_exec assertion, in seconds.
    #[arg(long, value_name = "SECONDS", default_value = "10", allow_negative_numbers = true,
          value_parser = parse_seconds)]
    code_timeout: Duration,
    /// Run code_exec assertions without the sandbox, with your rights, where the kernel refuses
    /// to build one. Only for code you trust.
    #[arg(long)]
    unsafe_code_exec: bool,
    #[command(flatten)]
    config: ConfigArgs,
}

/// `--api` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApiArg {
    /// Chat completions: the prompt as one user message.
    Chat,
    /// Text completions: the prompt as is (base models).
    Completions,
}

/// The words of a model command (`--model-command`, `--task-model-command`): one string split
/// by shell-word rules; a quoting mistake or an empty command is a usage error naming `flag`.
pub(super) fn model_command_words(flag: &str, command: &str) -> anyhow::Result<Vec<String>> {
    let argv = shell_words::split(command)
        .map_err(|err| bad_flag(flag, format!("{command:?}: cannot split into words: {err}")))?;
    if argv.first().is_none_or(String::is_empty) {
        return Err(bad_flag(flag, "is empty"));
    }
    Ok(argv)
}

impl TasksRunArgs {
    /// Resolve the flags into the typed config.
    fn into_config(self) -> anyhow::Result<RunTasksConfig> {
        let model = match (self.model, self.model_command) {
            (Some(model), None) => ModelSpec::Api {
                endpoint: EndpointSpec {
                    model,
                    base_url: self.base_url,
                    api_key_env: self.api_key_env,
                },
                api: match self.api {
                    ApiArg::Chat => Api::Chat,
                    ApiArg::Completions => Api::Completions,
                },
            },
            (None, Some(command)) => {
                let argv = model_command_words("--model-command", &command)?;
                ModelSpec::Command(command_spec(argv, self.model_cwd, "--model-cwd")?)
            }
            _ => {
                return Err(bad_flag(
                    "tasks run",
                    "no model: pass --model PROVIDER/MODEL or --model-command CMD, or set \
                     tasks.model or tasks.model_command in evalctl.toml",
                ))
            }
        };
        if !self.temperature.is_finite() || self.temperature < 0.0 {
            return Err(bad_flag(
                "--temperature",
                format!("{}: must be a finite number >= 0", self.temperature),
            ));
        }
        Ok(RunTasksConfig {
            file: self.file,
            model,
            sampling: Sampling {
                temperature: self.temperature,
                max_tokens: self.max_tokens,
                stop: self.stop,
            },
            concurrency: self.concurrency as usize,
            timeout: self.timeout,
            retries: self.retries,
            limit: self.limit,
            save_outputs: self.save_outputs,
            output: self.output,
            resume: self.resume,
            cache_dir: crate::store::cache_dir(self.cache, self.cache_dir)?,
            allow_bad_tasks: self.allow_bad_tasks,
            code: CodeExecSettings {
                timeout: self.code_timeout,
                isolation: isolation(self.unsafe_code_exec),
            },
        })
    }
}

impl TasksCommand {
    /// Run the subcommand.
    pub fn execute(self, reporter: Reporter) -> anyhow::Result<Exit> {
        match self {
            TasksCommand::Validate {
                file,
                allow_bad_tasks,
            } => commands::tasks::validate(
                &ValidateConfig {
                    file,
                    allow_bad_tasks,
                },
                reporter,
            ),
            TasksCommand::Render {
                file,
                allow_bad_tasks,
            } => commands::tasks::render(
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
                unsafe_code_exec,
            } => {
                let outputs = Source::from_arg(&outputs);
                commands::tasks::score(
                    &ScoreConfig {
                        file,
                        outputs,
                        output,
                        allow_bad_tasks,
                        code: CodeExecSettings {
                            timeout: code_timeout,
                            isolation: isolation(unsafe_code_exec),
                        },
                    },
                    reporter,
                )
            }
            TasksCommand::Run(args) => commands::tasks::run(&args.into_config()?, reporter),
        }
    }
}

/// The isolation `--unsafe-code-exec` chooses.
fn isolation(unsafe_code_exec: bool) -> Isolation {
    if unsafe_code_exec {
        Isolation::None
    } else {
        Isolation::Namespaces
    }
}
