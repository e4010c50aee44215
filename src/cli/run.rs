//! Flags of `run` and `preflight`, and their resolution into a [`RunConfig`].

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Args, ValueEnum};

use crate::checks::{CustomCheck, Trust};
use crate::config::expand::expand;
use crate::config::{ExecConfig, RunConfig};
use crate::error::{bad_flag, invalid, Fatal, Problem};
use crate::evaluator::checks::ChecksSpec;
use crate::evaluator::command::SCRIPT_INTERPRETERS;
use crate::evaluator::http::{header_name_only, HttpSpec};
use crate::evaluator::judge::JudgeSpec;
use crate::evaluator::spec::SpecSpec;
use crate::evaluator::EvaluatorSpec;
use crate::input::CandidateSource;
use crate::input::Source;
use crate::llm::price::Pricing;
use crate::llm::EndpointSpec;
use crate::protocol::ScoreRange;
use crate::record::{shard_of, MAX_SHARDS};
use crate::runner::key::DeclaredInputs;
use crate::runner::Shard;
use crate::text::io_reason;

use super::results::CiArgs;
use super::values::{
    allowed_endpoints, command_spec, parse_allowed_check, parse_at_least, parse_between,
    parse_count, parse_custom_check, parse_seconds, MAX_TIMEOUT_SECONDS,
};

// The sections of `run --help` and `preflight --help`, in the order a run is put together.
const INPUTS: &str = "Inputs (candidates and examples)";
const EVAL: &str =
    "Evaluator (one of --evaluator-command, --evaluator-url, --judge-model, --checks, --spec)";
const JUDGE: &str = "Judge (--judge-model)";
const CHECKS: &str = "Checks and spec (--checks, --spec)";
const EXEC: &str = "Execution";
const OUTPUTS: &str = "Outputs";
const GATES: &str = "CI gates and JUnit";
const RESUME: &str = "Resume and cache";
const PROJECT_FILE: &str = "Project file (evalctl.toml: evaluator, dataset and run settings)";

/// Flags shared by `run` and `preflight`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("evaluator").multiple(false)
    .args(["evaluator_command", "evaluator_url", "judge_model", "checks", "spec"])))]
pub struct RunArgs {
    /// Candidate files: each file's whole text is one candidate, its id the path as given
    /// (`-` = stdin). With nothing given and stdin not a terminal, stdin is the candidate.
    #[arg(value_name = "CANDIDATE_FILE", conflicts_with_all = ["candidate", "candidates"])]
    pub candidate_files: Vec<String>,

    /// A candidate given inline (repeatable); ids cand-1, cand-2, ...
    #[arg(help_heading = INPUTS, long, value_name = "TEXT", conflicts_with = "candidates")]
    pub candidate: Vec<String>,

    /// A JSONL file of {"candidate": str, "id"?: str} lines (`-` = stdin); ids default to line-N.
    #[arg(help_heading = INPUTS, long, value_name = "FILE.jsonl")]
    pub candidates: Option<String>,

    /// Command evaluator, run without a shell: payload on stdin, JSON on stdout. Takes several
    /// words (`bash eval.sh`) or one shell-quoted string (`"python3 eval.py --strict"`).
    #[arg(help_heading = EVAL, long, value_name = "CMD", num_args = 1.., action = clap::ArgAction::Set,
          visible_alias = "evaluator-cmd")]
    pub evaluator_command: Option<Vec<String>>,

    /// Working directory of the command evaluator.
    #[arg(help_heading = EVAL, long, value_name = "DIR")]
    pub evaluator_cwd: Option<PathBuf>,

    /// HTTP evaluator: the payload is POSTed as application/json; the body is the JSON result.
    #[arg(help_heading = EVAL, long, value_name = "URL")]
    pub evaluator_url: Option<String>,

    /// Extra HTTP header "Name: value" for the HTTP evaluator (repeatable). `${NAME}` in it is
    /// that environment variable's value, which keeps a token out of the command line: single-
    /// quote it, 'Authorization: Bearer ${EVAL_TOKEN}'. `$$` is a literal `$`.
    #[arg(help_heading = EVAL, long, value_name = "NAME: VALUE")]
    pub header: Vec<String>,

    /// LLM judge over an OpenAI-compatible chat API, as PROVIDER/MODEL (e.g. openai/gpt-4o-mini).
    #[arg(help_heading = JUDGE, long, value_name = "PROVIDER/MODEL")]
    pub judge_model: Option<String>,

    /// What the judge scores the candidate against (required with --judge-model).
    #[arg(help_heading = JUDGE, long, value_name = "TEXT")]
    pub objective: Option<String>,

    /// Judge rubric JSON: {"quality_dimensions": [{"name", "weight"}], "hard_constraints": [..]}.
    #[arg(help_heading = JUDGE, long, value_name = "FILE.json")]
    pub rubric: Option<PathBuf>,

    /// Judge API base URL (else EVALCTL_JUDGE_BASE_URL, else OPENAI_BASE_URL for openai, else the
    /// provider's default).
    #[arg(help_heading = JUDGE, long, value_name = "URL")]
    pub judge_base_url: Option<String>,

    /// Name of the environment variable holding the judge API key (default <PROVIDER>_API_KEY).
    #[arg(help_heading = JUDGE, long, value_name = "NAME")]
    pub judge_api_key_env: Option<String>,

    /// Judge sampling temperature [default: 0].
    #[arg(help_heading = JUDGE, long, value_name = "T", allow_negative_numbers = true)]
    pub judge_temperature: Option<f64>,

    /// Judge completion token limit.
    #[arg(help_heading = JUDGE, long, value_name = "N", allow_negative_numbers = true,
          value_parser = parse_at_least::<u32, 1>)]
    pub judge_max_tokens: Option<u32>,

    /// During preflight, send one real judge call (costs tokens).
    #[arg(help_heading = JUDGE, long, conflicts_with = "skip_preflight")]
    pub probe_judge: bool,

    /// Built-in checks: a JSON file {"checks": [FEP check objects]} (see docs/checks.md).
    #[arg(help_heading = CHECKS, long, value_name = "FILE.json")]
    pub checks: Option<PathBuf>,

    /// Declare a custom check type for --checks: NAME=COMMAND (the command gets a check's
    /// resolved arguments as JSON on stdin and prints its results object). Repeatable.
    #[arg(help_heading = CHECKS, long, value_name = "NAME=COMMAND", requires = "checks", value_parser = parse_custom_check)]
    pub custom_check: Vec<CustomCheck>,

    /// Run the command the --checks file declares for custom check type NAME in
    /// `custom_checks` (else its checks are validation errors and it never runs). Repeatable.
    #[arg(help_heading = CHECKS, long, value_name = "NAME", value_parser = parse_allowed_check)]
    pub allow_custom_check: Vec<String>,

    /// Let the extended checks (llm_judge, semantic_similarity) call this OpenAI-compatible
    /// endpoint, with the API key in environment variable KEY_ENV when given
    /// (OPENAI_API_KEY@https://api.openai.com/v1): a check names it in provider_config.base_url,
    /// or names none when it is the only one allowed. Any other such check is a validation
    /// error: a checks file spends no key unasked. Repeatable.
    #[arg(help_heading = CHECKS, long, value_name = "[KEY_ENV@]BASE_URL")]
    pub allow_endpoint: Vec<String>,

    /// Evaluation spec (a challenge-pack manifest or a bare spec, YAML or JSON): each call scores
    /// the candidate as a run's final output, the example as its case; see docs/spec.md.
    #[arg(help_heading = CHECKS, long, value_name = "FILE")]
    pub spec: Option<PathBuf>,

    /// With --spec: run the spec's LLM judges for every call (costs tokens); without it,
    /// judge-backed dimensions are unavailable.
    #[arg(help_heading = CHECKS, long)]
    pub live_judges: bool,

    /// Dataset JSONL: one call per candidate × example.
    #[arg(help_heading = INPUTS, long, value_name = "FILE.jsonl")]
    pub dataset: Option<PathBuf>,

    /// Validation set JSONL (requires --dataset): the candidate's score is the val mean.
    #[arg(help_heading = INPUTS, long, value_name = "FILE.jsonl")]
    pub valset: Option<PathBuf>,

    /// The model under optimisation, as metadata: payload key task_model and env var
    /// OPTIMIZE_ANYTHING_TASK_MODEL for command evaluators. With --generate, a model that
    /// answers each prompt (repeatable).
    #[arg(help_heading = INPUTS, long, value_name = "PROVIDER/MODEL")]
    pub task_model: Vec<String>,

    #[command(flatten)]
    pub generate: super::generate::GenerateArgs,

    /// Which scores are valid: unit = finite number in [0, 1]; any = any finite number.
    #[arg(help_heading = EVAL, long, value_enum, default_value_t = ScoreRangeArg::Unit)]
    pub score_range: ScoreRangeArg,

    /// Evaluator calls in flight (1 = strictly sequential, in order).
    #[arg(help_heading = EXEC, short = 'j', long, value_name = "N", default_value_t = 8,
          allow_negative_numbers = true, value_parser = parse_between::<u32, 1, 4096>)]
    pub concurrency: u32,

    /// Per-call time limit in seconds; a command evaluator past it is killed with its children.
    #[arg(help_heading = EXEC, long, value_name = "SECONDS", default_value = "30", allow_negative_numbers = true,
          value_parser = parse_seconds)]
    pub timeout: Duration,

    /// Retries for transport failures, HTTP 429 and 5xx (never for a bad score or non-zero exit).
    #[arg(help_heading = EXEC, long, value_name = "N", default_value_t = 2, allow_negative_numbers = true,
          value_parser = parse_count::<u32>)]
    pub retries: u32,

    /// Only the examples whose `id` is ID, in the dataset and the valset (repeatable); an id no
    /// example has is an error. With --limit, the first N of them.
    #[arg(help_heading = EXEC, long, value_name = "ID")]
    pub example: Vec<String>,

    /// Only the first N examples of each split (with --example, the first N picked).
    #[arg(help_heading = EXEC, long, value_name = "N", allow_negative_numbers = true,
          value_parser = parse_at_least::<usize, 1>)]
    pub limit: Option<usize>,

    /// Do not probe the evaluator before the run (inputs are still validated).
    #[arg(help_heading = EXEC, long)]
    pub skip_preflight: bool,

    /// Append one JSON result line per evaluator call to this file, as each call finishes.
    #[arg(help_heading = OUTPUTS, long, value_name = "FILE.jsonl")]
    pub output: Option<PathBuf>,

    /// At the end, write one self-contained HTML report of the run to this file (summary,
    /// charts, every call with its example); see `evalctl report`.
    #[arg(help_heading = OUTPUTS, long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,

    /// Exit 1 when any candidate's score is below X.
    #[arg(help_heading = GATES, long, value_name = "X", allow_negative_numbers = true)]
    pub fail_under: Option<f64>,

    /// Error limits, intervals and the JUnit report.
    #[command(flatten, next_help_heading = GATES)]
    pub ci: CiArgs,

    /// Make only shard K of N of the calls (K from 0 to N-1, as a Kubernetes Indexed Job's
    /// JOB_COMPLETION_INDEX): a deterministic split by call key; `evalctl merge` joins the
    /// shards' --output files into the unsharded run's summary.
    #[arg(help_heading = EXEC, long, value_name = "K/N", allow_hyphen_values = true,
          value_parser = parse_shard)]
    pub shard: Option<Shard>,

    /// When stderr is not a terminal (CI logs) or is a dumb one (TERM=dumb): a one-line progress
    /// heartbeat on stderr every SECONDS (0 = none).
    #[arg(help_heading = EXEC, long, value_name = "SECONDS", default_value = "30", allow_negative_numbers = true,
          value_parser = parse_heartbeat)]
    pub heartbeat: Duration,

    /// Continue the run whose journal is --output: calls with a successful line are not made
    /// again, errored ones are; new lines are appended and the summary covers the whole journal.
    #[arg(help_heading = RESUME, long, requires = "output")]
    pub resume: bool,

    /// Add this run to an --output file that holds lines of other runs (else refused): each
    /// line names its run, and summarize, merge and report take one run at a time (--run ID).
    #[arg(help_heading = OUTPUTS, long, requires = "output")]
    pub append_run: bool,

    /// With --resume: keep errored lines as they are instead of re-running their calls.
    #[arg(help_heading = RESUME, long, requires = "resume")]
    pub resume_keep_errors: bool,

    /// Make each call N times (each line gets its repeat index).
    #[arg(help_heading = EXEC, long, value_name = "N", allow_negative_numbers = true,
          value_parser = parse_between::<u32, 1, 10_000>)]
    pub repeat: Option<u32>,

    /// Keep every successful evaluator result in a cache and answer repeated calls from it
    /// (directory: --cache-dir, else EVALCTL_CACHE_DIR, else cache_dir in evalctl.toml, else
    /// $XDG_CACHE_HOME/evalctl, else ~/.cache/evalctl; see docs/cache.md).
    #[arg(help_heading = RESUME, long)]
    pub cache: bool,

    /// The cache directory of --cache.
    #[arg(help_heading = RESUME, long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// A file or directory that decides scores without being named on the evaluator's command
    /// line (a module the script imports, a prompt directory): its content joins every call's
    /// key, so editing it misses the cache and --resume. A directory's files count recursively.
    /// Repeatable.
    #[arg(help_heading = RESUME, long, value_name = "PATH")]
    pub cache_input: Vec<PathBuf>,

    /// Text that joins every call's key (a model or data version the key cannot see): change it
    /// to miss every cached result.
    #[arg(help_heading = RESUME, long, value_name = "TEXT")]
    pub cache_salt: Option<String>,

    #[command(flatten, next_help_heading = PROJECT_FILE)]
    pub config: super::config::ConfigArgs,

    /// `--evaluator-command` was typed on the command line (not set by evalctl.toml or
    /// `EVALCTL_EVALUATOR_COMMAND`), so words after it may be candidates it swallowed.
    #[arg(skip)]
    pub evaluator_command_typed: bool,

    /// The config file found in a parent directory whose evaluator was left out unread (it
    /// may not choose what runs), for the error of a run with no evaluator.
    #[arg(skip)]
    pub evaluator_left_out_of: Option<String>,

    /// The config file in use, which no file the run writes may be.
    #[arg(skip)]
    pub config_file: Option<PathBuf>,
}

/// `--score-range` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScoreRangeArg {
    /// A finite number in [0, 1].
    Unit,
    /// Any finite number.
    Any,
}

/// A number of seconds of 0 or more (`--heartbeat`).
fn parse_heartbeat(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|seconds| (0.0..=MAX_TIMEOUT_SECONDS).contains(seconds))
        .map(Duration::from_secs_f64)
        .ok_or_else(|| format!("'{text}' is not a number of seconds (0 = no heartbeat)"))
}

/// `K/N` with 0 <= K < N <= [`MAX_SHARDS`] (`--shard`).
fn parse_shard(text: &str) -> Result<Shard, String> {
    match shard_of(text) {
        Some((index, count)) => Ok(Shard { index, count }),
        None => Err(format!(
            "'{text}' is not K/N with 0 <= K < N <= {MAX_SHARDS} (shards are numbered from 0: \
             0/3, 1/3, 2/3)"
        )),
    }
}

impl RunArgs {
    /// Resolve the flags into a typed config. For `preflight`, no candidate is needed: with none
    /// given, stdin is not read (the probe uses its own sentinel candidate).
    pub fn into_config(self, preflight: bool) -> anyhow::Result<RunConfig> {
        self.check_evaluator_flags()?;
        let mut candidate_files = self.candidate_files;
        let evaluator = if let Some(words) = self.evaluator_command {
            let argv = resolve_command_words(words, &mut candidate_files)?;
            EvaluatorSpec::Command(command_spec(argv, self.evaluator_cwd, "--evaluator-cwd")?)
        } else if let Some(url) = self.evaluator_url {
            EvaluatorSpec::Http(HttpSpec::new(url, &expand_headers(&self.header)?)?)
        } else if let Some(model) = self.judge_model {
            EvaluatorSpec::Judge(JudgeSpec {
                endpoint: EndpointSpec {
                    model,
                    base_url: self.judge_base_url,
                    api_key_env: self.judge_api_key_env,
                },
                objective: self.objective.unwrap_or_default(),
                rubric: self.rubric,
                temperature: self.judge_temperature.unwrap_or(0.0),
                max_tokens: self.judge_max_tokens,
                probe: self.probe_judge,
            })
        } else if let Some(path) = self.checks {
            EvaluatorSpec::Checks(ChecksSpec {
                path,
                trust: Trust {
                    custom: self.custom_check,
                    commands: self.allow_custom_check,
                    endpoints: allowed_endpoints(&self.allow_endpoint)?,
                },
            })
        } else if let Some(path) = self.spec {
            EvaluatorSpec::Spec(SpecSpec {
                path,
                live_judges: self.live_judges,
                judge_base_url: self.judge_base_url,
            })
        } else {
            // The input files are not read without an evaluator, but one that is missing is
            // worth knowing now too.
            let named = [&self.dataset, &self.valset]
                .into_iter()
                .flatten()
                .map(PathBuf::as_path)
                .chain(self.candidates.iter().map(std::path::Path::new))
                .chain(candidate_files.iter().map(std::path::Path::new));
            let missing = named
                .filter(|path| path.as_os_str() != "-")
                .filter_map(|path| {
                    let err = std::fs::metadata(path).err()?;
                    Some(Problem::new(
                        path.display().to_string(),
                        format!("cannot read: {}", io_reason(&err)),
                    ))
                });
            const FLAGS: &str =
                "--evaluator-command, --evaluator-url, --judge-model, --checks or --spec";
            let no_evaluator = Problem::new(
                if preflight { "preflight" } else { "run" },
                match &self.evaluator_left_out_of {
                    Some(file) => format!(
                        "no evaluator: {file} sets one, but it was found in a parent directory \
                         and may not choose what runs: pass --config {file} if you trust it, or \
                         pass one of {FLAGS}"
                    ),
                    None => format!(
                        "no evaluator: pass one of {FLAGS}, or set one in the [evaluator] \
                         section of evalctl.toml (evalctl init writes a starter)"
                    ),
                },
            );
            return Err(Fatal::Invalid([no_evaluator].into_iter().chain(missing).collect()).into());
        };
        // How the values go together: every such problem at once.
        let mut problems: Vec<Problem> = Vec::new();
        if self.valset.is_some() && self.dataset.is_none() {
            problems.push(Problem::new(
                "--valset",
                "needs a dataset: pass --dataset FILE.jsonl (or set run.dataset in evalctl.toml)",
            ));
        }
        let with_files = |flag: &str| {
            (!candidate_files.is_empty()).then(|| {
                Problem::new(
                    flag,
                    format!(
                        "cannot be combined with candidate files ({})",
                        candidate_files.join(", ")
                    ),
                )
            })
        };
        let candidates = if let Some(file) = self.candidates {
            problems.extend(with_files("--candidates"));
            CandidateSource::Jsonl(Source::from_arg(&file))
        } else if !self.candidate.is_empty() {
            problems.extend(with_files("--candidate"));
            CandidateSource::Texts(self.candidate)
        } else if !candidate_files.is_empty() {
            CandidateSource::Files(candidate_files)
        } else if preflight {
            CandidateSource::None
        } else if !std::io::stdin().is_terminal() {
            CandidateSource::Stdin
        } else {
            let missing = Err(no_candidate(&evaluator, self.evaluator_command_typed));
            noted(missing, CandidateSource::None, &mut problems)?
        };

        let score_range = match self.score_range {
            ScoreRangeArg::Unit => ScoreRange::Unit,
            ScoreRangeArg::Any => ScoreRange::Any,
        };
        let fail_under = unit_threshold("--fail-under", self.fail_under, score_range);
        let fail_under = noted(fail_under, None, &mut problems)?;
        let pass_score = unit_threshold("--pass-score", self.ci.pass_score, score_range);
        let pass_score = noted(pass_score, None, &mut problems)?;

        // An empty model would reach evaluators as `task_model: ""`, and empty their
        // OPTIMIZE_ANYTHING_TASK_MODEL.
        let empty_model = self.task_model.iter().any(|model| model.trim().is_empty());
        if empty_model {
            problems.push(Problem::new("--task-model", "must not be empty"));
        }
        let generating = self.generate.generate;
        // The models are checked further only when none is empty (`--task-model=` twice is no
        // model given twice).
        let spec = match empty_model {
            true => Ok((None, Pricing::default())),
            false => (self.generate).into_spec(&self.task_model, evaluator.judge_model()),
        };
        let (generate, pricing) = noted(spec, (None, Pricing::default()), &mut problems)?;
        if generating && self.dataset.is_none() {
            problems.push(Problem::new(
                "--generate",
                "needs a dataset: each candidate is rendered for each example (pass --dataset \
                 FILE.jsonl, or set run.dataset in evalctl.toml)",
            ));
        }
        if !problems.is_empty() {
            return Err(invalid(problems));
        }
        Ok(RunConfig {
            candidates,
            evaluator,
            dataset: self.dataset,
            valset: self.valset,
            task_model: match generate {
                Some(_) => None,
                None => self.task_model.into_iter().next(),
            },
            generate,
            pricing,
            score_range,
            exec: ExecConfig {
                concurrency: self.concurrency as usize,
                timeout: self.timeout,
                retries: self.retries,
                examples: crate::input::ExampleSelection {
                    ids: self.example.into_iter().collect(),
                    limit: self.limit,
                },
                skip_preflight: self.skip_preflight,
            },
            output: self.output,
            report: self.report,
            gates: self.ci.gates(fail_under),
            seed: self.ci.seed,
            junit: self.ci.junit,
            pass_score,
            shard: self.shard,
            heartbeat: (!self.heartbeat.is_zero()).then_some(self.heartbeat),
            resume: self.resume,
            resume_keep_errors: self.resume_keep_errors,
            append_run: self.append_run,
            repeat: self.repeat,
            cache_dir: crate::store::cache_dir(self.cache, self.cache_dir)?,
            config_file: self.config_file,
            declared: DeclaredInputs {
                paths: self.cache_input,
                salt: self.cache_salt,
            },
        })
    }
}

impl RunArgs {
    /// Reject flags that belong to an evaluator other than the chosen one (they would be ignored).
    fn check_evaluator_flags(&self) -> anyhow::Result<()> {
        let command = self.evaluator_command.is_some();
        let url = self.evaluator_url.is_some();
        let judge = self.judge_model.is_some();
        let spec = self.spec.is_some();
        let live_judges = spec && self.live_judges;
        let checks = self.checks.is_some();
        let scoped = [
            (
                self.evaluator_cwd.is_some(),
                "--evaluator-cwd",
                command,
                "--evaluator-command",
            ),
            (!self.header.is_empty(), "--header", url, "--evaluator-url"),
            (
                self.objective.is_some(),
                "--objective",
                judge,
                "--judge-model",
            ),
            (self.rubric.is_some(), "--rubric", judge, "--judge-model"),
            (
                self.judge_base_url.is_some(),
                "--judge-base-url",
                judge || live_judges,
                "--judge-model or --spec --live-judges",
            ),
            (self.live_judges, "--live-judges", spec, "--spec"),
            (
                self.judge_api_key_env.is_some(),
                "--judge-api-key-env",
                judge,
                "--judge-model",
            ),
            (
                self.judge_temperature.is_some(),
                "--judge-temperature",
                judge,
                "--judge-model",
            ),
            (
                self.judge_max_tokens.is_some(),
                "--judge-max-tokens",
                judge,
                "--judge-model",
            ),
            (self.probe_judge, "--probe-judge", judge, "--judge-model"),
            (
                !self.allow_custom_check.is_empty(),
                "--allow-custom-check",
                checks,
                "--checks",
            ),
            (
                !self.allow_endpoint.is_empty(),
                "--allow-endpoint",
                checks,
                "--checks",
            ),
        ];
        if let Some((_, flag, _, owner)) = scoped
            .iter()
            .find(|(given, _, applies, _)| *given && !applies)
        {
            return Err(bad_flag(flag, format!("only applies to {owner}")));
        }
        if judge && self.objective.is_none() {
            return Err(bad_flag(
                "--judge-model",
                "needs --objective TEXT: what the judge scores candidates against",
            ));
        }
        Ok(())
    }
}

/// `--header` values (flags and `evaluator.headers`) with each `${NAME}` replaced by that
/// environment variable's value, so a token need not be in argv: `--header 'Authorization:
/// Bearer ${EVAL_TOKEN}'`. A problem names the header, never its value.
/// Every header's problem is reported at once.
fn expand_headers(headers: &[String]) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    let expanded: Vec<String> = headers
        .iter()
        .filter_map(|header| {
            // The shape is checked as typed: a value from a variable is never shown.
            let Some((name, value)) = header.split_once(':') else {
                problems.push(Problem::new(
                    "--header",
                    format!("{:?}: expected \"Name: value\"", header_name_only(header)),
                ));
                return None;
            };
            if name.contains("${") {
                problems.push(Problem::new(
                    "--header",
                    format!(
                        "{:?}: a header's name is written as it is, not from a variable",
                        name.trim()
                    ),
                ));
                return None;
            }
            expand(value, |variable| std::env::var(variable).ok())
                .map(|value| format!("{name}:{value}"))
                .map_err(|reason| {
                    problems.push(Problem::new(
                        "--header",
                        format!("{}: {reason}", name.trim()),
                    ));
                })
                .ok()
        })
        .collect();
    if problems.is_empty() {
        Ok(expanded)
    } else {
        Err(invalid(problems))
    }
}

/// Turn the values of `--evaluator-command` into an argv.
///
/// One value is the single-string form, split by POSIX shell-word rules (no shell runs). A first
/// value that splits into several words is the single-string form too, and the values after it
/// are candidate files (clap cannot tell where `--evaluator-command "sh eval.sh" prompt.txt`
/// ends). Several single-word values are the multi-word form. In the multi-word form, for
/// `INTERPRETER SCRIPT` commands (bash, sh, zsh, python, python3, node, ruby, perl), the words
/// after the script are candidate files, so `--evaluator-command bash eval.sh prompt.txt` scores
/// `prompt.txt`; arguments for the script go inside the single-string form.
fn resolve_command_words(
    mut words: Vec<String>,
    candidate_files: &mut Vec<String>,
) -> anyhow::Result<Vec<String>> {
    let split = |single: &str| {
        shell_words::split(single).map_err(|err| {
            bad_flag(
                "--evaluator-command",
                format!("{single:?}: cannot split into words: {err}"),
            )
        })
    };
    // A quoting mistake in the first value is a usage error in either form.
    let first = split(&words[0])?;
    let argv = if words.len() == 1 {
        first
    } else if first.len() > 1 {
        let trailing = words.split_off(1);
        candidate_files.splice(0..0, trailing);
        first
    } else {
        split_interpreter_candidates(words, candidate_files)
    };
    if argv.is_empty() || argv[0].is_empty() {
        return Err(bad_flag("--evaluator-command", "is empty"));
    }
    Ok(argv)
}

fn split_interpreter_candidates(
    mut words: Vec<String>,
    candidate_files: &mut Vec<String>,
) -> Vec<String> {
    let program = std::path::Path::new(&words[0])
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    if words.len() > 2 && SCRIPT_INTERPRETERS.contains(&program.as_str()) {
        let trailing = words.split_off(2);
        candidate_files.splice(0..0, trailing);
    }
    words
}

/// The problem when `run` is given no candidate on a terminal. When every word after a typed
/// `--evaluator-command` went to the evaluator (`pyhton3 eval.py cand.txt`), say where the
/// candidate went, and name the command when it is not an executable on PATH.
fn no_candidate(evaluator: &EvaluatorSpec, typed: bool) -> anyhow::Error {
    let mut message = "no candidate given: pass candidate files, --candidate TEXT, \
                       --candidates FILE.jsonl, or pipe the candidate on stdin"
        .to_string();
    if let EvaluatorSpec::Command(spec) = evaluator {
        if typed && spec.argv.len() > 1 {
            message.push_str(&format!(
                ". Every word after --evaluator-command was taken for the evaluator ({}): put \
                 candidate files before --evaluator-command, or quote the command",
                shell_words::join(&spec.argv)
            ));
        }
        if !crate::evaluator::command::on_path(&spec.argv[0]) {
            message.push_str(&format!(
                ". Note: {:?} is not an executable on PATH",
                spec.argv[0]
            ));
        }
    }
    bad_flag("run", message)
}

/// `result`'s value; or, for bad input, `fallback` with the problems added to `problems`, so that
/// the other checks still run (any other error stands).
fn noted<T>(
    result: anyhow::Result<T>,
    fallback: T,
    problems: &mut Vec<Problem>,
) -> anyhow::Result<T> {
    match result.map_err(|err| err.downcast::<Fatal>()) {
        Ok(value) => Ok(value),
        Err(Ok(Fatal::Invalid(found))) => {
            problems.extend(found);
            Ok(fallback)
        }
        Err(Ok(other)) => Err(other.into()),
        Err(Err(other)) => Err(other),
    }
}

/// A gate's threshold (`--fail-under`, `--pass-score`): a finite number, and under the unit
/// score range one in [0, 1], since a score can be nothing else.
fn unit_threshold(
    flag: &str,
    value: Option<f64>,
    score_range: ScoreRange,
) -> anyhow::Result<Option<f64>> {
    match value {
        Some(x) if !x.is_finite() => Err(bad_flag(flag, "must be a finite number")),
        Some(x) if score_range == ScoreRange::Unit && !(0.0..=1.0).contains(&x) => Err(bad_flag(
            flag,
            format!(
                "{x} is outside the unit score range [0, 1], so the gate could never {}; pass \
                 --score-range any for scores outside [0, 1]",
                if x > 1.0 { "pass" } else { "fail" }
            ),
        )),
        other => Ok(other),
    }
}
