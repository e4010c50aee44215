//! Every command's stdout document goes through [`Document`]: one value that serialises as the
//! JSON document programs read and renders as the text people read. Text is built as [`Styled`]
//! pieces, so every command paints the same way (table headers bold, when stdout's colour is on)
//! and shows, rather than obeys, the control characters of what it quotes. The documents that
//! have a Markdown form (the run summary, `compare`) give it for `--format markdown`. What streams
//! as it is produced (result lines, `fep evaluate`'s EvaluationRunResult, `tasks render`'s
//! prompts) is written as it comes instead, through the same closed-pipe-tolerant stdout.

use serde::Serialize;

use std::io::Write;

use super::stdout::{print_stdout, stdout_error, stdout_until_closed, JsonVisible};
use super::terminal::Styled;
use super::{Format, Reporter};

/// A command's stdout document.
pub trait Document: Serialize {
    /// The text form.
    fn text(&self) -> Styled;

    /// The Markdown form, for the documents that have one.
    fn markdown(&self) -> Option<String> {
        None
    }
}

/// Print `document` on stdout in `reporter`'s format: Markdown when asked for and the document
/// has it, else the pretty-printed JSON document or the text (painted when stdout's colour is on).
pub fn print(document: &impl Document, reporter: Reporter) -> anyhow::Result<()> {
    if reporter.markdown {
        if let Some(markdown) = document.markdown() {
            return print_stdout(&markdown);
        }
    }
    match reporter.format {
        Format::Json => print_json(document),
        Format::Text => print_stdout(&document.text().finish(reporter.color_stdout)),
    }
}

/// The `spec score` summary: its scorecard table.
impl Document for crate::evaluation_spec::summary::ScoreSummary {
    fn text(&self) -> Styled {
        Styled::from(self.to_text())
    }
}

/// Print `value` as one pretty-printed JSON document and a newline, the characters a terminal
/// would obey escaped.
pub fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    write_json(serde_json::to_vec_pretty(value)?)
}

/// Print `value` as one line of JSON, the characters a terminal would obey escaped.
pub fn print_json_line(value: &impl Serialize) -> anyhow::Result<()> {
    write_json(serde_json::to_vec(value)?)
}

/// Write `json` and a newline to stdout, the characters a terminal would obey escaped.
fn write_json(mut json: Vec<u8>) -> anyhow::Result<()> {
    json.push(b'\n');
    let mut stdout = JsonVisible::new(stdout_until_closed());
    stdout
        .write_all(&json)
        .and_then(|()| stdout.flush())
        .map_err(|err| stdout_error(&err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Tally {
        passed: u32,
    }

    impl Document for Tally {
        fn text(&self) -> Styled {
            let mut text = Styled::default();
            text.push(format!("passed: {}\x1b[2J\n", self.passed));
            text
        }
    }

    #[test]
    fn text_shows_control_characters_instead_of_obeying_them() {
        assert_eq!(
            Tally { passed: 3 }.text().finish(true),
            "passed: 3\\u{1b}[2J\n"
        );
    }
}
