//! Command-line definitions (clap) and their conversion into typed configs.
//!
//! No other module sees clap types: each subcommand's arguments are turned into the config type the
//! library module that does the work defines. Usage errors are reported here, from clap's own
//! parse; only the global `--format` and `--color` are also found by a scan of the words, so that
//! they apply wherever they are placed (see [`global_flags`]).

mod cache;
mod config;
mod fep;
mod generate;
mod report;
mod results;
mod run;
mod serve;
mod spec;
mod tasks;
mod values;

use clap::{FromArgMatches, Parser, Subcommand, ValueEnum};

use crate::evaluator::command::SCRIPT_INTERPRETERS;
use crate::exit::Exit;
use crate::report::{ColorWhen, Format, Reporter};

pub use cache::CacheCommand;
pub use config::ConfigCommand;
pub use fep::FepCommand;
pub use report::ReportArgs;
pub use results::{CompareArgs, MergeArgs};
pub use run::RunArgs;
pub use serve::ServeArgs;
pub use spec::SpecCommand;
pub use tasks::TasksCommand;

/// evalctl — score candidates (prompts, answers, any text) with command, HTTP, LLM-judge or
/// built-in evaluators over JSONL datasets.
#[derive(Debug, Parser)]
#[command(
    name = "evalctl",
    version,
    about,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// When to use colour, judged for stdout and stderr each (auto: a terminal, NO_COLOR unset).
    #[arg(long, global = true, help_heading = "Global", value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// Report format on stdout (default: text on a terminal, json otherwise). With json, every
    /// outcome is one JSON document, failures included.
    #[arg(long, global = true, help_heading = "Global", value_enum)]
    pub format: Option<FormatArg>,

    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Score one or more candidates with one evaluator, optionally once per dataset / valset example.
    ///
    /// The evaluator, the dataset and most settings below can also come from evalctl.toml (in
    /// the working directory or its nearest parent; `evalctl init` writes a starter, `evalctl
    /// config show run` shows what applies and where it came from). Flags and EVALCTL_*
    /// variables win over the file.
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// Validate every input and probe the evaluator once; scores nothing. Takes `run`'s flags.
    ///
    /// A run's command line is checked by changing its first word. Preflight uses the inputs,
    /// the evaluator and its flags, --score-range, --timeout, --retries and --task-model; it
    /// checks that --output, --report and --junit could be written, but writes none of them;
    /// the other flags (--limit, --repeat, --shard, --resume, --append-run, the CI gates, the
    /// cache) are accepted and ignored.
    Preflight(RunArgs),
    /// Task specs: strict validation, few-shot rendering, scoring model outputs.
    #[command(subcommand)]
    Tasks(TasksCommand),
    /// The Flexible Evaluation Protocol (FEP) EVALUATE interface.
    #[command(subcommand)]
    Fep(FepCommand),
    /// Evaluation specs (challenge packs' `evaluation_spec`): strict validation, scoring runs.
    #[command(subcommand)]
    Spec(SpecCommand),
    /// The evaluator-result cache of `run --cache`.
    #[command(subcommand)]
    Cache(CacheCommand),
    /// Summarize a run from its results files (`run --output`, `tasks score|run --output` or
    /// `spec score`'s records; several: the shards of one run): the summary, gates and reports
    /// `run` prints.
    Summarize(MergeArgs),
    /// Summarize a sharded run from its shards' results files (`run --shard K/N --output`), as
    /// if it had run unsharded; summarize given the same files does the same.
    Merge(MergeArgs),
    /// The project file evalctl.toml: the resolved settings and where each came from.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Write a commented starter evalctl.toml in the working directory (never overwrites one).
    Init,
    /// Results files to one self-contained HTML report: summary, charts, every example.
    Report(ReportArgs),
    /// Serve the FEP REST API and gRPC service (evaluations stored in SQLite).
    Serve(ServeArgs),
    /// Two runs' results paired call by call (or task by task, run by run): per-candidate mean
    /// difference with a 95% interval, wins / ties / losses, the largest regressions.
    Compare(CompareArgs),
}

/// The examples at the end of `run --help`.
const RUN_EXAMPLES: &str = "Examples:
  evalctl run --dataset qa.jsonl --evaluator-command \"python3 eval.py\" prompts/cot.txt
  evalctl run --valset val.jsonl --dataset train.jsonl --checks checks.json --candidates c.jsonl
  evalctl run prompts/*.txt --output results.jsonl --junit junit.xml --fail-under 0.7";

/// `--color` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour where the stream is a terminal and NO_COLOR is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// `--format` values shared by every command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// A human-readable table.
    Text,
    /// One JSON document.
    Json,
    /// A Markdown summary fit for a pull-request comment (run, summarize, merge,
    /// compare; other commands print text).
    Markdown,
}

/// The reporter for `--format` and `--color`.
fn reporter(format: Option<FormatArg>, color: ColorChoice) -> Reporter {
    let format_of = |format| match format {
        FormatArg::Text | FormatArg::Markdown => Format::Text,
        FormatArg::Json => Format::Json,
    };
    let reporter = Reporter::new(format.map(format_of), color.into());
    if format == Some(FormatArg::Markdown) {
        reporter.markdown()
    } else {
        reporter
    }
}

impl From<ColorChoice> for ColorWhen {
    fn from(choice: ColorChoice) -> Self {
        match choice {
            ColorChoice::Auto => ColorWhen::Auto,
            ColorChoice::Always => ColorWhen::Always,
            ColorChoice::Never => ColorWhen::Never,
        }
    }
}

/// Parse the command line into the command to run and how it reports. A usage error, `--help`
/// or `--version` has been printed when this returns the exit code instead.
/// The settings `evalctl.toml` holds for the command become its flags' defaults (flags and
/// `EVALCTL_*` variables win); a problem with the file is reported here (exit 2).
pub fn parse() -> Result<(Command, Reporter, config::Provenance), std::process::ExitCode> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match config::command()
        .try_get_matches_from(&args)
        .and_then(|matches| Cli::from_arg_matches(&matches))
    {
        Err(error) if config::the_file_may_give(&error) => {}
        Err(error) => return Err(usage_error(error)),
        Ok(_) => {}
    }
    let (format, color) = global_flags(&args);
    let reporter = reporter(format, color);
    let resolved = match config::resolve(&args) {
        Ok(resolved) => resolved,
        Err(config::Failure::Usage(error)) => return Err(usage_error(error)),
        Err(config::Failure::Config(error)) => {
            reporter.error(&error);
            return Err(crate::error::Fatal::exit_of(&error).into());
        }
    };
    let mut cli = Cli::from_arg_matches(&resolved.matches).map_err(usage_error)?;
    if let Command::Run(args) | Command::Preflight(args) = &mut cli.command {
        args.evaluator_command_typed = resolved.matches.subcommand().is_some_and(|(_, sub)| {
            sub.value_source("evaluator_command") == Some(clap::parser::ValueSource::CommandLine)
        });
        args.config_file = (resolved.file.iter())
            .map(|file| std::path::PathBuf::from(&file.display))
            .next();
        args.evaluator_left_out_of = (resolved.file.iter())
            .find(|file| file.left_out_an_evaluator())
            .map(|file| file.display.clone());
    }
    resolved.tell_about_the_file(reporter);
    if reporter.markdown
        && !matches!(
            cli.command,
            Command::Run(_) | Command::Summarize(_) | Command::Merge(_) | Command::Compare(_)
        )
    {
        reporter.warning(
            "--format markdown: only run, summarize, merge and compare print Markdown; this \
             command prints text",
        );
    }
    Ok((cli.command, reporter, config::Provenance::of(&resolved)))
}

/// The global `--format` and `--color` of `args`, wherever they are placed: after `config show
/// COMMAND` (whose words clap keeps for the command shown) and after a word clap stopped at with
/// a usage error too, so the failure is reported as asked. Words after a bare `--` are
/// operands; the last flag of each wins; a value clap rejects is left to clap's error.
fn global_flags(args: &[std::ffi::OsString]) -> (Option<FormatArg>, ColorChoice) {
    let mut format = None;
    let mut color = ColorChoice::Auto;
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .map_while(|word| word.to_str())
        .take_while(|word| *word != "--")
        .collect();
    for (at, word) in words.iter().enumerate() {
        let (flag, value) = match word.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (*word, words.get(at + 1).copied()),
        };
        let Some(value) = value else { continue };
        match flag {
            "--format" => format = FormatArg::from_str(value, false).ok().or(format),
            "--color" => color = ColorChoice::from_str(value, false).unwrap_or(color),
            _ => {}
        }
    }
    (format, color)
}

/// What a lenient second parse (clap's `ignore_errors`) learns of a command line clap rejected:
/// how to report, and the values `--evaluator-command` took.
struct Lenient {
    reporter: Reporter,
    evaluator_words: Option<Vec<String>>,
}

fn lenient_parse() -> Lenient {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let matches = config::command()
        .ignore_errors(true)
        .try_get_matches_from(&args)
        .ok();
    let (format, color) = global_flags(&args);
    let evaluator_words = matches.as_ref().and_then(|m| {
        let (_, sub) = m.subcommand()?;
        let words = sub.try_get_many::<String>("evaluator_command").ok()??;
        Some(words.cloned().collect())
    });
    let reporter = reporter(format, color);
    Lenient {
        reporter: match asks_for_ndjson(&args) {
            true => reporter.ndjson(),
            false => reporter,
        },
        evaluator_words,
    }
}

/// Whether a command line clap rejected is `fep evaluate` with `--stream` (given once or more,
/// `--stream=true`), whose stdout is NDJSON: a usage error's document too. Read from its words,
/// wherever the error stopped clap.
fn asks_for_ndjson(args: &[std::ffi::OsString]) -> bool {
    let words: Vec<&str> = (args.iter().skip(1))
        .map_while(|word| word.to_str())
        .take_while(|word| *word != "--")
        .collect();
    let evaluate = words.windows(2).any(|pair| pair == ["fep", "evaluate"]);
    evaluate && (words.iter()).any(|word| *word == "--stream" || *word == "--stream=true")
}

/// Print a clap error and return its exit code (2 for usage errors, 0 for --help/--version).
/// With JSON output (`--format json`, or stdout not a terminal) a usage error is also one JSON
/// failure document on stdout. An unknown
/// option that clap has no suggestion for, given after `--evaluator-command`, is almost always an
/// evaluator argument: the hint says how to pass it, instead of clap's `-- --flag` tip, which
/// does not apply.
fn usage_error(error: clap::Error) -> std::process::ExitCode {
    use clap::error::{ContextKind, ErrorKind};
    if error.kind() == ErrorKind::DisplayVersion {
        // `evalctl run -V` too: the version is the tool's (clap names the subcommand,
        // `evalctl-run 0.1.0`).
        let version = format!("evalctl {}\n", env!("CARGO_PKG_VERSION"));
        return match crate::report::print_stdout(&version) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(_) => std::process::ExitCode::from(Exit::Internal as u8),
        };
    }
    if !error.use_stderr() {
        // --help: its output is the document.
        let _ = error.print();
        return std::process::ExitCode::from(error.exit_code() as u8);
    }
    let lenient = lenient_parse();
    let rendered = error.render().to_string();
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand
    ) {
        // `evalctl`, `evalctl spec`: the help or the list of commands (on stderr), and a reason
        // rather than the command's description in the JSON document.
        if lenient.reporter.format == Format::Json {
            let command = rendered
                .lines()
                .find_map(|line| line.strip_prefix("Usage: "))
                .and_then(|usage| usage.split(" [OPTIONS]").next())
                .unwrap_or("evalctl");
            let reason = format!("no command given: `{command} --help` lists the commands");
            let _ = crate::report::print_failure(&[reason], Exit::BadInput as u8, false);
        }
        let _ = error.print();
        return Exit::BadInput.into();
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(variable) = config::variable_at_fault(&error, &args) {
        // `EVALCTL_CONCURRENCY=abc`, `EVALCTL_RESUME=true` without `--output`: the variable is
        // what to fix, not a flag never typed.
        lenient.reporter.error(&variable);
        return Exit::BadInput.into();
    }
    if lenient.reporter.format == Format::Json {
        let reason = [clap_reason(&error)];
        let _ =
            crate::report::print_failure(&reason, Exit::BadInput as u8, lenient.reporter.ndjson);
    }
    let unknown = error
        .get(ContextKind::InvalidArg)
        .map(|value| value.to_string());
    let suggested = error.get(ContextKind::SuggestedArg).is_some();
    match (error.kind(), lenient.evaluator_words, unknown) {
        (ErrorKind::UnknownArgument, Some(words), Some(unknown))
            if !suggested || interpreter_option(&words, &unknown) =>
        {
            // `python3 -u eval.py`: an interpreter's option comes before its script, which
            // clap never reached; the hint keeps the script (the word after the option) too.
            let interpreter = lone_interpreter(&words);
            let script = std::env::args()
                .skip_while(|arg| *arg != unknown)
                .nth(1)
                .filter(|next| interpreter && !next.starts_with('-'));
            // clap's `-- --flag` tip does not apply; its similar flag of evalctl may
            // (`--data` for `--dataset`), so it stays beside the hint.
            let shown: Vec<&str> = rendered
                .lines()
                .filter(|line| suggested || !line.trim_start().starts_with("tip:"))
                .collect();
            lenient
                .reporter
                .note(shown.join("\n").replace("\n\n\n", "\n\n").trim_end());
            // The first value may itself be a quoted command (`"python3 eval.py" --lenient`):
            // its words, as the run splits them; the values after a quoted command are
            // candidate files, not the evaluator's.
            let first = shell_words::split(&words[0]).unwrap_or_else(|_| vec![words[0].clone()]);
            let rest = if first.len() > 1 {
                &[][..]
            } else {
                &words[1..]
            };
            let command = shell_words::join(
                first
                    .iter()
                    .chain(rest)
                    .chain([&unknown])
                    .chain(script.as_ref()),
            );
            lenient.reporter.note(format!(
                "hint: {}: --evaluator-command {}",
                if suggested {
                    format!("if {unknown} is meant for the evaluator, quote the command")
                } else {
                    "evaluator arguments that start with '-' go inside one quoted string".into()
                },
                quoted_for_shell(&command)
            ));
        }
        _ => {
            let _ = error.print();
        }
    }
    Exit::BadInput.into()
}

/// `command` as one word of a POSIX shell, to be copied: in double quotes when nothing in it
/// is special there (`"sh -c 'cat >/dev/null'"`), else in single quotes.
fn quoted_for_shell(command: &str) -> String {
    if command.contains(['"', '$', '`', '\\', '!']) {
        shell_words::quote(command).into_owned()
    } else {
        format!("\"{command}\"")
    }
}

/// Whether `--evaluator-command` took one word, an interpreter (`python3`, `node`, ...).
fn lone_interpreter(words: &[String]) -> bool {
    words.len() == 1 && SCRIPT_INTERPRETERS.contains(&words[0].as_str())
}

/// Whether `unknown` comes right after an interpreter that `--evaluator-command` took alone
/// (`--evaluator-command node --inspect eval.js`): no script has been named yet, so it is the
/// interpreter's option, even when evalctl has a flag like it (`--spec`).
fn interpreter_option(words: &[String], unknown: &str) -> bool {
    if !lone_interpreter(words) {
        return false;
    }
    let args: Vec<String> = std::env::args().collect();
    args.iter().enumerate().any(|(at, arg)| {
        let taken = match arg.as_str() {
            "--evaluator-command" | "--evaluator-cmd" => words.len() + 1,
            arg if arg.starts_with("--evaluator-command=")
                || arg.starts_with("--evaluator-cmd=") =>
            {
                words.len()
            }
            _ => return false,
        };
        args.get(at + taken).is_some_and(|next| next == unknown)
    })
}

/// The reason of a clap usage error, on one line: its first paragraph (a missing-arguments error
/// lists them on the lines after its first; the usage and tips follow a blank line).
fn clap_reason(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    let reason: Vec<&str> = rendered
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .map(str::trim)
        .collect();
    let reason = reason.join(" ");
    reason
        .strip_prefix("error: ")
        .unwrap_or(&reason)
        .to_string()
}

/// Parse `args` (for the tests of this module).
#[cfg(test)]
fn parse_from(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    use clap::CommandFactory;

    #[test]
    fn clap_definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn format_is_global() {
        let cli = parse_from(&[
            "evalctl", "tasks", "validate", "t.jsonl", "--format", "json",
        ])
        .expect("parses");
        assert_eq!(cli.format, Some(FormatArg::Json));
    }

    #[test]
    fn global_flags_are_found_wherever_placed() {
        let scan = |words: &[&str]| {
            let args: Vec<std::ffi::OsString> = words.iter().map(Into::into).collect();
            global_flags(&args)
        };
        assert_eq!(
            scan(&["evalctl", "config", "show", "run", "-j", "2", "--format", "text"]),
            (Some(FormatArg::Text), ColorChoice::Auto)
        );
        assert_eq!(
            scan(&[
                "evalctl",
                "--format=json",
                "run",
                "--color",
                "never",
                "--format",
                "text"
            ]),
            (Some(FormatArg::Text), ColorChoice::Never)
        );
        assert_eq!(
            scan(&["evalctl", "run", "--format", "xml", "--", "--format", "json"]),
            (None, ColorChoice::Auto)
        );
    }
}
