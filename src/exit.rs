//! Exit codes with documented meanings: "the evaluation failed" is not "the tool broke".

/// The process exit status, as docs/output.md's table defines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Every call succeeded and every gate passed.
    Success = 0,
    /// The run finished, but a call errored or a gate (`--fail-under`, `--pass-score`) failed.
    EvaluationFailed = 1,
    /// Bad usage or invalid input files; nothing was evaluated.
    BadInput = 2,
    /// The evaluator failed preflight; nothing was evaluated.
    PreflightFailed = 3,
    /// evalctl itself failed after evaluation began (a results write, a full disk, an internal
    /// error); what finished is kept.
    Internal = 4,
    /// `--max-cost` stopped the run: what finished was written and summarised, and `--resume`
    /// continues it.
    BudgetStopped = 5,
    /// Interrupted (SIGINT, SIGTERM or SIGHUP): results so far were flushed and summarised.
    Interrupted = 130,
}

/// The exit code a command ends with and why, the end of every summary document: `exit` and
/// `exit_reason` in JSON, the closing line `exit 1: 2 of 10 calls failed` in text.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Verdict {
    /// The exit code.
    pub exit: u8,
    /// Why, in one line.
    pub exit_reason: String,
}

impl Verdict {
    /// `exit` for `reason`.
    pub fn new(exit: Exit, reason: String) -> Verdict {
        let mut verdict = Verdict {
            exit: exit as u8,
            exit_reason: String::new(),
        };
        verdict.set_reason(&reason);
        verdict
    }

    /// Say why, on one line: a line break that an id or a file name named in it holds is shown
    /// as ` ⏎ `, so that no part of the reason stands on a line of its own, as a closing line
    /// (`exit 0: ...`) would.
    pub fn set_reason(&mut self, reason: &str) {
        self.exit_reason = crate::text::fold_lines(reason);
    }

    /// The closing line: `exit 1: 2 of 10 calls failed`.
    pub fn line(&self) -> String {
        format!("exit {}: {}", self.exit, self.exit_reason)
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit as u8)
    }
}
