//! Everything a run reports: the per-call result records and their `--output` file, the summary
//! (text or JSON), and the progress display. Only this layer prints run results.

/// `eprintln!` that cannot panic: when stderr is closed or full, the diagnostic is lost, not the
/// run (its exit code still tells the outcome). Only the report layer has it.
macro_rules! diag {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod compare;
mod document;
pub mod fep_text;
mod gate;
pub mod html;
mod junit;
mod markdown;
pub mod merge;
mod own_files;
mod preflight;
mod progress;
mod results_file;
mod runs;
mod spool;
mod stdout;
mod summary;
mod terminal;
mod text;

pub use crate::interval::DEFAULT_SEED;
pub use crate::text::counted;
pub use document::{print, print_json, print_json_line, Document};
pub use gate::Gates;
pub use junit::{write_junit_if_asked, Junit};
pub use markdown::{append_step_summary, append_to_step_summary};
pub use own_files::{check_distinct, check_read_once};
pub use preflight::{PreflightReport, ProbeAnswer};
pub use progress::Progress;
pub use results_file::ResultsFile;
pub use runs::{Partial, Selection};
pub use spool::Spool;
pub use stdout::{print_stdout, stdout_error, stdout_until_closed, JsonVisible};
pub use summary::{below, BudgetReport, Diagnostics, Summary, Tally, Usage, VerdictGate};
pub use terminal::{Paint, Styled};
pub use text::tokens_of;

use std::io::IsTerminal;

use crate::error::Fatal;

/// How a report is printed on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A table for people.
    Text,
    /// One JSON document for programs.
    Json,
}

/// When to colour (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorWhen {
    /// On a terminal, unless NO_COLOR is set (non-empty) or TERM is `dumb`.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// How one command reports, resolved once from `--format` and `--color`: the format of its
/// stdout document, and whether each stream is painted (each judged on its own, so a table
/// redirected to a file carries no colour codes while errors on a terminal still do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reporter {
    /// The stdout document's format: the explicit choice, else text on a terminal and JSON
    /// otherwise — the same default for every command.
    pub format: Format,
    /// Whether stdout's text is painted.
    pub color_stdout: bool,
    /// Whether stderr's diagnostics are painted.
    pub color_stderr: bool,
    /// `--format markdown`: commands with a Markdown report (run, summarize, merge, compare) print it;
    /// the others print text (`format` is then text) after a warning.
    pub markdown: bool,
    /// Whether stdout and stderr are both terminals: a person reads them as one.
    pub one_screen: bool,
    /// stdout is NDJSON (`fep evaluate --stream`): a failure document is one line of it.
    pub ndjson: bool,
}

impl Reporter {
    /// Resolve `format` and `color` for this process's streams.
    pub fn new(format: Option<Format>, color: ColorWhen) -> Reporter {
        let stdout_terminal = std::io::stdout().is_terminal();
        let stderr_terminal = std::io::stderr().is_terminal();
        let painted = |is_terminal: bool| match color {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => {
                terminal::obeys_escapes(is_terminal)
                    && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
            }
        };
        Reporter {
            format: format.unwrap_or(if stdout_terminal {
                Format::Text
            } else {
                Format::Json
            }),
            color_stdout: painted(stdout_terminal),
            color_stderr: painted(stderr_terminal),
            markdown: false,
            one_screen: stdout_terminal && stderr_terminal,
            ndjson: false,
        }
    }

    /// This reporter for a command whose stdout is NDJSON whatever `--format` says: a failure
    /// is one JSON line there.
    pub fn ndjson(self) -> Reporter {
        Reporter {
            format: Format::Json,
            color_stdout: false,
            ndjson: true,
            ..self
        }
    }

    /// This reporter asked for Markdown (`--format markdown`): text for commands without a
    /// Markdown report.
    pub fn markdown(self) -> Reporter {
        Reporter {
            format: Format::Text,
            color_stdout: false,
            markdown: true,
            ..self
        }
    }

    /// The closing line of a failed stdout document (`exit 1: ...`) once more on stderr, for a CI
    /// log whose stdout is JSON or went to a file; not when the text document that ends with it
    /// is on the same screen.
    pub fn repeat_verdict(&self, line: impl std::fmt::Display) {
        if !(self.one_screen && self.format == Format::Text && !self.markdown) {
            self.note(line);
        }
    }

    /// `warning: MESSAGE` on stderr, the prefix painted.
    pub fn warning(&self, message: impl std::fmt::Display) {
        self.say(Some((Paint::Warning, "warning")), message);
    }

    /// `failed: MESSAGE` on stderr, the prefix painted like an error: a failed call, which
    /// makes the run exit 1 but does not stop it.
    pub fn failure(&self, message: impl std::fmt::Display) {
        self.say(Some((Paint::Error, "failed")), message);
    }

    /// A plain diagnostic line on stderr (a tally, a note on how far a run got).
    pub fn note(&self, message: impl std::fmt::Display) {
        self.say(None, message);
    }

    /// Report the error that ended a command: every line `error: ...` on stderr (the prefix
    /// painted on each), and with JSON output the failure document on stdout, so a program
    /// reading stdout always gets one JSON document.
    pub fn error(&self, error: &anyhow::Error) {
        self.diagnose(error);
        if self.format == Format::Json {
            let exit = Fatal::exit_of(error) as u8;
            let _ = print_failure(&Fatal::messages(error), exit, self.ndjson);
        }
    }

    /// An error on stderr only, every line `error: ...`: for a failure the command carries on
    /// from (a results write), whose stdout document still follows.
    /// An interruption is not an error: its lines carry no prefix.
    pub fn diagnose(&self, error: &anyhow::Error) {
        let interrupted = matches!(error.downcast_ref(), Some(Fatal::Interrupted(_)));
        let prefix = (!interrupted).then_some((Paint::Error, "error"));
        for message in Fatal::messages(error) {
            self.say(prefix, message);
        }
    }

    /// Every line evalctl writes on stderr: `PREFIX: MESSAGE` (the prefix painted) or the bare
    /// message, its control characters shown rather than obeyed (a message quotes evaluators,
    /// files and servers).
    fn say(&self, prefix: Option<(Paint, &str)>, message: impl std::fmt::Display) {
        let mut line = Styled::default();
        if let Some((style, word)) = prefix {
            line.push_painted(style, word);
            line.push(": ");
        }
        line.push(message.to_string());
        diag!("{}", line.finish(self.color_stderr));
    }

    /// The same as [`Reporter::error`] for a failure that is not an error value (an
    /// interruption before any result): `message` on stderr without a prefix, as every
    /// interruption is said, and the JSON failure document with `exit`.
    pub fn stopped(&self, message: &str, exit: crate::exit::Exit) {
        self.say(None, message);
        if self.format == Format::Json {
            let _ = print_failure(&[message.to_string()], exit as u8, self.ndjson);
        }
    }
}

/// Print `{"ok": false, "exit", "errors"}` on stdout: what a command prints instead of its
/// normal JSON document when it fails; on one line where stdout is NDJSON.
pub fn print_failure(errors: &[String], exit: u8, ndjson: bool) -> anyhow::Result<()> {
    let failure = serde_json::json!({"ok": false, "exit": exit, "errors": errors});
    match ndjson {
        true => print_json_line(&failure),
        false => print_json(&failure),
    }
}

/// The run summary: a table, JSON, or Markdown.
impl Document for Summary {
    fn text(&self) -> Styled {
        text::render(self)
    }

    fn markdown(&self) -> Option<String> {
        Some(markdown::render(self))
    }
}

/// Tell the user, on stderr, which report files were written: `written` holds each one's line
/// (`wrote junit.xml: ...`), or nothing when it was not asked for or could not be written.
pub fn print_written(written: &[Option<String>], reporter: Reporter) {
    for line in written.iter().flatten() {
        reporter.note(line);
    }
}

/// Tell the user, on stderr, why a judged run failed its gates (`exit 1: ...`), for CI logs
/// whose stdout is JSON or a file ([`Reporter::repeat_verdict`]).
pub fn print_gate_verdict(summary: &Summary, reporter: Reporter) {
    if summary.closing.exit == crate::exit::Exit::EvaluationFailed as u8 {
        reporter.repeat_verdict(summary.closing.line());
    }
}

/// Tell the user, on stderr, what `--resume` found in the journal at `path`: a torn last line it
/// cut off, lines of another configuration it ignores, and how many of the `planned` calls it
/// already answers.
pub fn print_resumed(
    path: &std::path::Path,
    resumed: &crate::runner::resume::Resumed,
    planned: usize,
    reporter: Reporter,
) {
    let path = path.display();
    if let Some(torn) = resumed.torn {
        reporter.warning(format!(
            "{path}:{}: the last line was cut short by an interrupted run ({}); removed it",
            torn.line,
            counted(torn.bytes as usize, "byte", "bytes")
        ));
    }
    if resumed.foreign > 0 {
        reporter.warning(format!(
            "{path}: ignoring {} of other runs (another configuration: a different evaluator, \
             inputs, candidates, score range or task model)",
            counted(resumed.foreign, "line", "lines")
        ));
    }
    if resumed.other_tasks > 0 {
        reporter.warning(format!(
            "{path}: ignoring {} of tasks this run does not have (past --limit, or no longer in \
             the task file)",
            counted(resumed.other_tasks, "saved output", "saved outputs")
        ));
    }
    if resumed.refused_scores > 0 {
        let one = resumed.refused_scores == 1;
        let lines = if one {
            "that line is"
        } else {
            "those lines are"
        };
        let calls = match resumed.refused_calls_remade {
            0 if one => "its call has another line".to_string(),
            0 => "their calls have other lines".to_string(),
            remade if remade == resumed.refused_scores && one => "making its call again".into(),
            remade if remade == resumed.refused_scores => "making their calls again".into(),
            remade => format!("making {} again", counted(remade, "call", "calls")),
        };
        reporter.warning(format!(
            "{path}: ignoring {} of this run with a score its --score-range refuses (edited by \
             hand?): {calls}; summarize, merge and report refuse the file until {lines} \
             corrected or removed",
            counted(resumed.refused_scores, "line", "lines"),
        ));
    }
    if resumed.misplaced > 0 {
        reporter.warning(format!(
            "{path}: {} of this run {} another split, example, candidate or repeat than \
             {} call (edited by hand?): counted where {} call is",
            counted(resumed.misplaced, "line", "lines"),
            if resumed.misplaced == 1 {
                "names"
            } else {
                "name"
            },
            if resumed.misplaced == 1 {
                "its"
            } else {
                "their"
            },
            if resumed.misplaced == 1 {
                "its"
            } else {
                "each"
            },
        ));
    }
    reporter.note(format!(
        "resuming {path}: {} of {planned} calls already done, {} to make",
        resumed.done,
        planned - resumed.done
    ));
}

/// Tell the user, on stderr, that Ctrl-C stopped dispatch and how long the `in_flight` calls
/// get to finish.
pub fn print_stopping(in_flight: usize, grace: std::time::Duration, reporter: Reporter) {
    reporter.note(format!(
        "interrupted: no new calls; waiting up to {}s for the {in_flight} in flight \
         (Ctrl-C again stops them now)",
        grace.as_secs()
    ));
}

/// Tell the user, on stderr, which calls in flight an interrupted run stopped, and why; and
/// where the answers their task models had given are kept (the results file `kept_in`).
pub fn print_stopped(
    stopped: crate::runner::Stopped,
    grace: std::time::Duration,
    kept_in: Option<&str>,
    reporter: Reporter,
) {
    let (calls, were) = match stopped.calls {
        1 => ("the 1 call".to_string(), "was"),
        n => (format!("the {n} calls"), "were"),
    };
    let answers = match (stopped.answered, kept_in) {
        (0, _) => String::new(),
        (answered, Some(file)) => format!(
            "; the task model had answered {answered} of them: the answers are kept in {file}, \
             and --resume scores them"
        ),
        (answered, None) => format!(
            "; the task model had answered {answered} of them: without --output, the answers \
             are not kept"
        ),
    };
    let stopped_calls = match stopped.cause {
        crate::runner::StopCause::Signal { again: true } => {
            format!("interrupted again: stopped {calls} in flight")
        }
        crate::runner::StopCause::Signal { again: false } => {
            format!("interrupted: stopped {calls} in flight")
        }
        crate::runner::StopCause::GraceEnded => format!(
            "interrupted: {calls} in flight did not finish within {}s and {were} stopped",
            grace.as_secs()
        ),
    };
    reporter.note(format!("{stopped_calls}{answers}"));
}

/// Tell the user, on stderr, how far an interrupted run got.
pub fn print_interrupted(finished: usize, planned: usize, reporter: Reporter) {
    reporter.note(format!(
        "interrupted: {finished} of {planned} calls finished; the summary covers them"
    ));
}

/// Tell the user, on stderr, that a signal came while the summary and reports were written: they
/// are complete, and the run ends as interrupted (exit 130).
pub fn print_interrupted_while_writing(reporter: Reporter) {
    reporter.note("interrupted while the summary and reports were written: they are complete");
}

/// Tell the user, on stderr, which model APIs answered 429 Too Many Requests to this process's
/// calls, how many of those were waited out and sent again, and how long that took: the calls
/// are counted right either way, but a slow run or a failed attempt has its cause named.
pub fn print_rate_limits(reporter: Reporter) {
    for limited in crate::llm::pacer::rate_limited() {
        let crate::llm::pacer::RateLimited {
            url,
            model,
            requests,
            too_many,
            waited_out,
            waited,
            not_sent,
        } = limited;
        let mut outcomes = Vec::new();
        if waited_out > 0 {
            outcomes.push(format!(
                "{waited_out} waited out and sent again ({} of waiting, summed over the calls)",
                crate::text::seconds(waited)
            ));
        }
        match too_many.saturating_sub(waited_out) {
            0 => {}
            1 => outcomes.push("1 counted as a failed attempt".to_string()),
            failed => outcomes.push(format!("{failed} counted as failed attempts")),
        }
        let not_sent = match not_sent {
            0 => String::new(),
            n => format!(
                "; {} not sent, as the pause it asked for was longer than their calls could wait",
                crate::text::counted(n as usize, "request", "requests")
            ),
        };
        reporter.note(format!(
            "rate limited: {model} at {url} answered {too_many} of {requests} requests with 429 \
             Too Many Requests: {}{not_sent}",
            outcomes.join(", ")
        ));
    }
}

/// Tell the user, on stderr, about the first failed calls and the built-in checks that errored.
/// `calls` is how many calls finished; `kept_in` says where every call can be read in full: the
/// `--output` file, the results files read, or nowhere.
pub fn print_diagnostics(
    diagnostics: &Diagnostics,
    calls: usize,
    kept_in: Option<&str>,
    reporter: Reporter,
) {
    for failure in &diagnostics.failures {
        reporter.failure(failure);
    }
    if diagnostics.more_failures > 0 {
        let more = diagnostics.more_failures;
        reporter.failure(match kept_in {
            Some(place) => format!("… and {more} more failed calls (every call is in {place})"),
            None => format!(
                "… and {more} more failed calls (pass --output FILE.jsonl to keep every call)"
            ),
        });
    }
    for (model, calls) in &diagnostics.usage_missing {
        reporter.warning(format!(
            "{model}'s API reported no token usage for {}: their tokens and cost are not counted",
            crate::text::counted(*calls, "call", "calls")
        ));
    }
    for (model, calls) in &diagnostics.cut_short {
        reporter.warning(format!(
            "{model} stopped at its token limit in {}: the answers scored may be cut short \
             (--task-max-tokens raises the limit)",
            crate::text::counted(*calls, "call", "calls")
        ));
    }
    for (check, errored) in &diagnostics.errored_checks {
        reporter.warning(format!(
            "check {check} errored in {errored} of {} calls and counted as failed (see side_info.check_results{})",
            calls,
            kept_in.map_or(String::new(), |place| format!(" in {place}"))
        ));
    }
}
