//! Flags of `evalctl fep evaluate`, turned into a [`FepConfig`].

use std::path::PathBuf;

use clap::Subcommand;

use super::values::{allowed_endpoints, parse_allowed_check, parse_between, parse_custom_check};
use crate::checks::{CustomCheck, Trust};
use crate::commands;
use crate::evaluator::check_calls::DEFAULT_CONCURRENCY;
use crate::exit::Exit;
use crate::fep::{Checking, FepConfig, Layout};
use crate::input::Source;
use crate::report::Reporter;

/// `evalctl fep ...`
#[derive(Debug, Subcommand)]
pub enum FepCommand {
    /// EvaluationRequest in (file or `-` for stdin), EvaluationRunResult out on stdout.
    ///
    /// With `--format text` (the default on a terminal) stdout gets a summary instead: checks
    /// passed, failed and errored by type, and the test cases that did not pass. `--stream`
    /// always writes NDJSON.
    ///
    /// Exit 0 when every check ran (passed or not), 1 when a check errored, 2 on an invalid
    /// request (every problem is listed with its JSON location; nothing is evaluated).
    #[command(override_usage = "evalctl fep evaluate [OPTIONS] <REQUEST>\n       \
                                evalctl fep evaluate [OPTIONS] --test-cases <FILE.jsonl> \
                                --outputs <FILE.jsonl> --checks <FILE.json>")]
    Evaluate {
        /// The EvaluationRequest JSON file (`-` = stdin).
        #[arg(required_unless_present = "test_cases")]
        request: Option<String>,
        /// Streaming mode: test cases JSONL (record i pairs with record i of --outputs).
        #[arg(long, value_name = "FILE.jsonl", requires_all = ["outputs", "checks"], conflicts_with = "request")]
        test_cases: Option<String>,
        /// Streaming mode: outputs JSONL.
        #[arg(
            long,
            value_name = "FILE.jsonl",
            requires = "test_cases",
            conflicts_with = "request"
        )]
        outputs: Option<String>,
        /// Streaming mode: checks JSON file {"checks": [...]}, shared by every test case.
        #[arg(
            long,
            value_name = "FILE.json",
            requires = "test_cases",
            conflicts_with = "request"
        )]
        checks: Option<PathBuf>,
        /// NDJSON on stdout: one test case result per line, in order, then a line with the run's
        /// evaluation_id, timestamps, status and summary (written once the input has been read
        /// and the calls of checks that call out answered; `serve` streams each line as its test
        /// case completes).
        #[arg(long)]
        stream: bool,
        /// Declare a custom check type: NAME=COMMAND (the command gets a check's resolved
        /// arguments as JSON on stdin and prints its results object). Repeatable.
        #[arg(long, value_name = "NAME=COMMAND", value_parser = parse_custom_check)]
        custom_check: Vec<CustomCheck>,
        /// Run the command the request or checks file declares for custom check type NAME in
        /// `custom_checks` (else its checks are validation errors and it never runs).
        /// Repeatable.
        #[arg(long, value_name = "NAME", value_parser = parse_allowed_check)]
        allow_custom_check: Vec<String>,
        /// Let the extended checks (llm_judge, semantic_similarity) call this OpenAI-compatible
        /// endpoint, with the API key in environment variable KEY_ENV when given
        /// (OPENAI_API_KEY@https://api.openai.com/v1): a check names it in
        /// provider_config.base_url, or names none when it is the only one allowed. Any other
        /// such check is a validation error: a request spends no key unasked. Repeatable.
        #[arg(long, value_name = "[KEY_ENV@]BASE_URL")]
        allow_endpoint: Vec<String>,
        /// Calls of checks that call out (semantic_similarity, llm_judge, custom) made at once.
        #[arg(short = 'j', long, value_name = "N", default_value_t = DEFAULT_CONCURRENCY as u32,
              allow_negative_numbers = true, value_parser = parse_between::<u32, 1, 4096>)]
        concurrency: u32,
    },
}

impl FepCommand {
    /// `--stream`: stdout is NDJSON, whatever `--format` says, a failure included.
    pub fn writes_ndjson(&self) -> bool {
        matches!(self, FepCommand::Evaluate { stream: true, .. })
    }

    /// Run the subcommand.
    pub fn execute(self, reporter: Reporter) -> anyhow::Result<Exit> {
        let FepCommand::Evaluate {
            stream,
            ref custom_check,
            ref allow_custom_check,
            ref allow_endpoint,
            concurrency,
            ..
        } = self;
        let layout = if stream {
            Layout::Lines
        } else {
            Layout::Document
        };
        let checking = Checking {
            trust: Trust {
                custom: custom_check.clone(),
                commands: allow_custom_check.clone(),
                endpoints: allowed_endpoints(allow_endpoint)?,
            },
            concurrency: concurrency as usize,
        };
        commands::fep::evaluate(&self.into_config()?, &checking, layout, reporter)
    }

    fn into_config(self) -> anyhow::Result<FepConfig> {
        let FepCommand::Evaluate {
            request,
            test_cases,
            outputs,
            checks,
            ..
        } = self;
        Ok(match (request, test_cases, outputs, checks) {
            (_, Some(test_cases), Some(outputs), Some(checks)) => {
                if test_cases == "-" && outputs == "-" {
                    return Err(crate::error::bad_flag(
                        "--test-cases",
                        "--test-cases and --outputs cannot both read stdin (-)",
                    ));
                }
                FepConfig::Stream {
                    test_cases: Source::from_arg(&test_cases),
                    outputs: Source::from_arg(&outputs),
                    checks,
                }
            }
            // clap requires the request unless the three streaming flags are given.
            (request, ..) => {
                FepConfig::Request(Source::from_arg(request.as_deref().unwrap_or("-")))
            }
        })
    }
}
