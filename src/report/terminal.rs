//! What evalctl prints for people: its own paint, and every other character of the text shown
//! rather than obeyed ([`crate::text::visible`]), so the only escape sequences that reach a
//! terminal are the ones evalctl paints with.

use crate::text::visible;

/// Whether a stream, a terminal or not as `is_terminal` says, obeys escape sequences: a terminal
/// whose `TERM` is not `dumb` (a dumb one, such as an editor's shell buffer, prints them as
/// characters). Colour and the live progress bar are for such streams only.
pub fn obeys_escapes(is_terminal: bool) -> bool {
    is_terminal && std::env::var_os("TERM").is_none_or(|term| term != "dumb")
}

/// The styles evalctl paints with, when colour is on.
#[derive(Debug, Clone, Copy)]
pub enum Paint {
    /// Bold red: `error:`.
    Error,
    /// Yellow: `warning:`.
    Warning,
    /// Bold: table headers.
    Heading,
    /// Red: a table row that fails a gate (a candidate under `--fail-under`).
    Failing,
}

/// `text` in `style` when `color` is on, else as is; control characters in `text` are shown,
/// not obeyed.
fn paint(style: Paint, text: &str, color: bool) -> String {
    let code = match style {
        Paint::Error => "1;31",
        Paint::Warning => "33",
        Paint::Heading => "1",
        Paint::Failing => "31",
    };
    let text = visible(text);
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.into_owned()
    }
}

/// A text document in pieces, some of them painted: what a text renderer builds and
/// [`Styled::finish`] turns into the characters printed.
#[derive(Debug, Default)]
pub struct Styled {
    pieces: Vec<(Option<Paint>, String)>,
}

impl From<String> for Styled {
    /// A document of one unpainted piece.
    fn from(text: String) -> Styled {
        Styled {
            pieces: vec![(None, text)],
        }
    }
}

impl Styled {
    /// Add `text`, shown as is.
    pub fn push(&mut self, text: impl Into<String>) {
        self.pieces.push((None, text.into()));
    }

    /// Add `text`, painted in `style` when colour is on.
    pub fn push_painted(&mut self, style: Paint, text: impl Into<String>) {
        self.pieces.push((Some(style), text.into()));
    }

    /// Add every piece of `other`.
    pub fn append(&mut self, other: Styled) {
        self.pieces.extend(other.pieces);
    }

    /// The document as printed: every piece with its control characters shown, not obeyed,
    /// and the painted ones painted when `color` is on.
    pub fn finish(&self, color: bool) -> String {
        self.pieces
            .iter()
            .map(|(style, text)| match style {
                Some(style) => paint(*style, text, color),
                None => visible(text).into_owned(),
            })
            .collect()
    }
}
