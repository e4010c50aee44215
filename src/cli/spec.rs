//! Flags of `evalctl spec validate|score`, turned into the typed configs of [`crate::commands::spec`].

use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};

use super::values::parse_count;

use crate::commands::spec::{self as command, JudgeSource, ScoreConfig, ValidateConfig};
use crate::exit::Exit;
use crate::input::Source;
use crate::report::Reporter;

/// `evalctl spec ...`
#[derive(Debug, Subcommand)]
pub enum SpecCommand {
    /// Strictly validate an evaluation spec: a challenge-pack manifest (its `evaluation_spec`) or
    /// a bare spec, in YAML or JSON. Every problem is reported at once as `FILE[:LINE]: <field
    /// path> <message>`. Exit 0 valid, 2 invalid.
    Validate {
        /// The spec or manifest file (`-` = stdin; YAML unless it is `.json` or starts with `{`).
        file: String,
        /// Print the normalised spec as JSON on stdout instead of the report.
        #[arg(long)]
        print: bool,
    },
    /// Score recorded runs: one evaluation record per run, then a summary.
    ///
    /// RUNS is JSONL, one run record per line: {"id"?, "challenge_inputs": [...], "events":
    /// [...], "llm_judge_results"?: [...], "human_preference_score"?: x}. Records go to --output
    /// (appended; the summary then goes to stdout) or, without it, as JSONL to stdout (the summary
    /// to stderr); nothing is written unless every line is a run record. Exit 0 when every run
    /// passed, 1 when a run failed or has no verdict, 2 on invalid input.
    Score {
        /// The spec or manifest file (YAML or JSON).
        spec: String,
        /// The runs JSONL (`-` = stdin).
        runs: String,
        /// Append one evaluation record per run to this file.
        #[arg(long, value_name = "FILE.jsonl")]
        output: Option<PathBuf>,
        /// Where LLM-judge results come from: the run records, or evalctl running the spec's
        /// judges itself over OpenAI-compatible APIs (keys from <PROVIDER>_API_KEY).
        #[arg(long, value_enum, default_value_t = JudgesArg::Recorded)]
        judges: JudgesArg,
        /// Live judges: one endpoint for every judge model (else EVALCTL_JUDGE_BASE_URL, else
        /// each provider's default).
        #[arg(
            long,
            value_name = "URL",
            env = "EVALCTL_JUDGE_BASE_URL",
            hide_env_values = true
        )]
        judge_base_url: Option<String>,
        /// Live judges: retries of a judge call on 429, 5xx and timeouts.
        #[arg(long, value_name = "N", default_value_t = 2, allow_negative_numbers = true,
              value_parser = parse_count::<u32>)]
        retries: u32,
    },
}

/// `--judges` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum JudgesArg {
    /// The run records' `llm_judge_results`.
    Recorded,
    /// Run the spec's judges live.
    Live,
}

impl SpecCommand {
    /// Run the subcommand.
    pub fn execute(self, reporter: Reporter) -> anyhow::Result<Exit> {
        match self {
            SpecCommand::Validate { file, print } => command::validate(
                &ValidateConfig {
                    file: Source::from_arg(&file),
                    print,
                },
                reporter,
            ),
            SpecCommand::Score {
                spec,
                runs,
                output,
                judges,
                judge_base_url,
                retries,
            } => {
                if spec == "-" && runs == "-" {
                    return Err(crate::error::bad_flag(
                        "spec score",
                        "the spec and the runs cannot both be read from stdin (-)",
                    ));
                }
                command::score(
                    &ScoreConfig {
                        spec: Source::from_arg(&spec),
                        runs: Source::from_arg(&runs),
                        output,
                        judges: match judges {
                            JudgesArg::Recorded => JudgeSource::Recorded,
                            JudgesArg::Live => JudgeSource::Live,
                        },
                        judge_base_url,
                        retries,
                    },
                    reporter,
                )
            }
        }
    }
}
