//! Small text helpers every message shares: JSON type names, text and one-line excerpts with
//! control characters shown rather than obeyed, clipping, I/O reasons without Rust's "(os error N)",
//! durations and byte counts as people write them, limits with their thousands separated, and
//! character escapes.

use std::borrow::Cow;
use std::time::Duration;

use serde_json::Value;

/// `text` with each character that `escape` maps to `Some(replacement)` replaced (an empty
/// replacement drops it) and every other character kept: the one loop behind the XML, HTML and
/// script escapes of the reports.
pub fn escape_chars(text: &str, escape: impl Fn(char) -> Option<&'static str>) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match escape(c) {
            Some(replacement) => escaped.push_str(replacement),
            None => escaped.push(c),
        }
    }
    escaped
}

/// The escape of a character that is markup in XML and HTML alike (`&`, `<`, `>`, `"`); the
/// apostrophe, which the two escape differently, is left to the caller.
pub fn markup_escape(c: char) -> Option<&'static str> {
    match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' => Some("&quot;"),
        _ => None,
    }
}

/// The JSON type name of `value`, for messages.
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `text` on one line: each line break becomes ` ⏎ `, so an excerpt of an evaluator's output
/// cannot break one-line messages; tabs become spaces and other control characters are shown
/// as [`visible`] shows them.
pub fn one_line(text: &str) -> String {
    visible(&fold_lines(text).replace('\t', " ")).into_owned()
}

/// `text` with each line break shown as ` ⏎ `, so that an id cannot break the one-line message
/// it is named in (a failed call, a regression, a JUnit test case's name): a line feed, a
/// carriage return (`\r\n` is one break), a vertical tab, a form feed, NEL, and the Unicode
/// line and paragraph separators; a break at the very end is dropped. What else it holds is
/// left to the output's own escaping.
pub fn fold_lines(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    let mut pieces: Vec<&str> = text
        .split([
            '\n', '\r', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}',
        ])
        .collect();
    if pieces.len() > 1 && pieces.last() == Some(&"") {
        pieces.pop();
    }
    pieces.join(" ⏎ ")
}

/// `text` with every control character other than line feed and tab, and every bidirectional
/// embedding, override or isolate, shown as its Rust escape (`\u{1b}`, `\r`, `\u{202e}`), not
/// obeyed: text evalctl did not write itself (an evaluator's reason, an id from a results file)
/// cannot move the cursor, clear or retitle a terminal, or make the text around it read in
/// another order.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.contains(obeyed_by_terminals) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for ch in text.chars() {
        if obeyed_by_terminals(ch) {
            out.extend(ch.escape_default());
        } else {
            out.push(ch);
        }
    }
    Cow::Owned(out)
}

/// Whether a terminal acts on `ch` rather than showing it: a control character other than line
/// feed and tab, or one that reorders the text around it.
fn obeyed_by_terminals(ch: char) -> bool {
    (ch.is_control() && ch != '\n' && ch != '\t')
        || matches!(ch, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `1 win`, `3 wins`: a count and its noun.
pub fn counted(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// A score, mean or difference as the reports print it: four decimals (`0.8123`, with `{:+}`
/// `+0.0412`), or four in scientific notation from 10^12 on (`1.0000e300`), where four decimals
/// would print every digit of a huge `--score-range any` score.
pub struct Fixed4(pub f64);

impl std::fmt::Display for Fixed4 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Fixed4(value) = *self;
        // A value that rounds to zero is shown as zero, not `-0.0000`.
        let value = if value.abs() < 0.00005 { 0.0 } else { value };
        match (value.abs() >= 1e12, f.sign_plus()) {
            (false, false) => write!(f, "{value:.4}"),
            (false, true) => write!(f, "{value:+.4}"),
            (true, false) => write!(f, "{value:.4e}"),
            (true, true) => write!(f, "{value:+.4e}"),
        }
    }
}

/// A threshold or raw score as the user would write it: its shortest form (`0.8`), or scientific
/// notation from 10^12 on (`2e300`), where the shortest form would print every digit.
pub struct Shortest(pub f64);

impl std::fmt::Display for Shortest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Shortest(value) = *self;
        if value.abs() >= 1e12 {
            write!(f, "{value:e}")
        } else {
            write!(f, "{value}")
        }
    }
}

/// How much of a name or id a client sent an error message repeats, in characters: enough to
/// recognise it, not so much that the message outgrows what a client reads (a gRPC status
/// travels in a header).
pub const ECHOED: usize = 100;

/// At most `max` characters of `text`, with an ellipsis when cut.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// At most the last `max` characters of `text`, with an ellipsis when cut (the end of a log says
/// what went wrong).
pub fn clip_tail(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let cut = text
        .char_indices()
        .nth(count - max)
        .map_or(0, |(index, _)| index);
    format!("…{}", &text[cut..])
}

/// An I/O error's reason without Rust's "(os error N)" suffix.
pub fn io_reason(err: &std::io::Error) -> String {
    strip_os_error(&err.to_string())
}

/// `message` without Rust's " (os error N)" suffix (and anything after it).
pub fn strip_os_error(message: &str) -> String {
    message
        .find(" (os error")
        .map_or(message, |cut| &message[..cut])
        .to_string()
}

/// A duration as people write it in flags and messages: `0.3s`, `30s`, `2.25s`, to the
/// millisecond (a wait until a clock time is `1.889s`, not `1.8889235260000001s`); one shorter
/// than that, to the microsecond.
pub fn seconds(duration: Duration) -> String {
    let millis = (duration.as_micros() + 500) / 1000;
    if millis == 0 {
        return format!("{}s", duration.as_micros() as f64 / 1e6);
    }
    format!("{}s", millis as f64 / 1e3)
}

/// A duration in milliseconds, to the microsecond (no float noise such as `239.77047000000002`).
pub fn milliseconds(duration: std::time::Duration) -> f64 {
    duration.as_micros() as f64 / 1000.0
}

/// A byte count as people read it: `840 B`, `12.3 kB`, `4.1 MB`, `2.7 GB`.
pub fn size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.1} kB", bytes as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", bytes as f64 / 1e6),
        _ => format!("{:.1} GB", bytes as f64 / 1e9),
    }
}

/// `number` with its thousands separated by commas (`1,000,000`), as limits are written.
pub fn thousands(number: u64) -> String {
    let digits = number.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_in_scientific_notation_from_ten_to_the_twelfth_on() {
        let fixed = |value: f64| (format!("{}", Fixed4(value)), format!("{:+}", Fixed4(value)));
        assert_eq!(fixed(0.8123456), ("0.8123".into(), "+0.8123".into()));
        assert_eq!(fixed(-0.25), ("-0.2500".into(), "-0.2500".into()));
        assert_eq!(
            fixed(999e9),
            ("999000000000.0000".into(), "+999000000000.0000".into())
        );
        assert_eq!(fixed(1e300), ("1.0000e300".into(), "+1.0000e300".into()));
        assert_eq!(fixed(-1.5e12), ("-1.5000e12".into(), "-1.5000e12".into()));
        assert_eq!(fixed(f64::INFINITY).0, "inf");
        // What rounds to zero has no sign of its own.
        assert_eq!(fixed(-0.00001), ("0.0000".into(), "+0.0000".into()));
        assert_eq!(fixed(-0.0), ("0.0000".into(), "+0.0000".into()));
        let shortest = |value: f64| Shortest(value).to_string();
        assert_eq!(
            [
                shortest(0.8),
                shortest(5.0),
                shortest(2e300),
                shortest(-3e15)
            ],
            ["0.8", "5", "2e300", "-3e15"]
        );
    }

    #[test]
    fn one_line_folds_lines_and_shows_control_characters() {
        assert_eq!(one_line("a\nb\tc\u{1b}[2J"), "a ⏎ b c\\u{1b}[2J");
        assert_eq!(
            [
                "a\r\nb\rc\u{b}d\u{c}e\u{85}f\u{2028}g\u{2029}h\n",
                "a\n\n",
                "",
                "\n"
            ]
            .map(fold_lines),
            ["a ⏎ b ⏎ c ⏎ d ⏎ e ⏎ f ⏎ g ⏎ h", "a ⏎ ", "", ""]
        );
        assert_eq!(
            [0.3, 30.0, 2.25, 1.8889235260000001, 0.0004, 0.0]
                .map(|secs| seconds(Duration::from_secs_f64(secs))),
            ["0.3s", "30s", "2.25s", "1.889s", "0.0004s", "0s"]
        );
    }

    #[test]
    fn visible_keeps_line_feeds_and_tabs_and_shows_other_controls() {
        assert_eq!(
            visible("a\n\tb\u{1b}]0;t\u{7}\r\u{9b}\u{7f}é"),
            "a\n\tb\\u{1b}]0;t\\u{7}\\r\\u{9b}\\u{7f}é"
        );
        assert!(matches!(visible("plain ⏎ text"), Cow::Borrowed(_)));
    }

    #[test]
    fn visible_shows_what_would_reorder_the_text_around_it() {
        assert_eq!(
            visible("id \u{202e}txt.exe\u{2066}x\u{2069} \u{200f}"),
            "id \\u{202e}txt.exe\\u{2066}x\\u{2069} \u{200f}"
        );
    }

    #[test]
    fn clipping_keeps_the_head_or_the_tail() {
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip_tail("abcdef", 3), "…def");
        assert_eq!(clip_tail("éé", 3), "éé");
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(100_000_000), "100,000,000");
    }

    #[test]
    fn os_error_suffixes_and_durations() {
        assert_eq!(
            strip_os_error("No such file or directory (os error 2)"),
            "No such file or directory"
        );
        assert_eq!(seconds(Duration::from_millis(300)), "0.3s");
        assert_eq!(seconds(Duration::from_secs(30)), "30s");
    }
}
