//! `--format markdown`: the run summary as a Markdown table fit for a pull-request comment, and
//! the same summary appended to `$GITHUB_STEP_SUMMARY` when GitHub Actions sets it; the table,
//! escape and verdict helpers `compare`'s Markdown comparison is built with. Every string a
//! report quotes goes through [`literal`]: Markdown output carries no markup but evalctl's own.

use std::io::Write;

use super::summary::Summary;
use super::text::{
    best, budget, call_outcomes, cost, elapsed, flaky, judge_cost, notes, quoted_candidates, table,
    task_model_tokens, tokens,
};
use super::Reporter;

/// Render `summary` as Markdown: a heading with the verdict, the reason, the table, the notes.
pub fn render(summary: &Summary) -> String {
    let mut out = format!(
        "### evalctl: {} (exit {})\n\n{}\n\n",
        verdict(summary.closing.exit),
        summary.closing.exit,
        literal(&summary.closing.exit_reason)
    );
    out.push_str(&rows_table(&table(summary)));
    let calls = &summary.calls;
    out.push_str(&format!(
        "\nEvaluator: {} {} · score range {} · {} ({}) · elapsed: {}{}{}{}{}\n",
        literal(&summary.evaluator.kind),
        literal(&summary.evaluator.target),
        summary.score_range.as_str(),
        crate::text::counted(calls.total, "call", "calls"),
        call_outcomes(calls),
        elapsed(summary),
        tokens(summary).map_or_else(String::new, |tokens| format!(" · tokens: {tokens}")),
        task_model_tokens(summary).map_or_else(String::new, |tokens| format!(
            " · task model tokens: {tokens}"
        )),
        judge_cost(summary).map_or_else(String::new, |cost| format!(
            " · judge cost: {}",
            literal(&cost)
        )),
        cost(summary).map_or_else(String::new, |cost| format!(" · cost: {}", literal(&cost))),
    ));
    let quoted = quoted_candidates(summary);
    if !quoted.is_empty() {
        let quoted: Vec<String> = quoted.iter().map(|line| literal(line)).collect();
        out.push_str(&format!("\n{}\n", quoted.join("  \n")));
    }
    if let Some(best) = best(summary) {
        out.push_str(&format!("\n{}\n", literal(&best)));
    }
    for line in flaky(summary) {
        out.push_str(&format!("\n{}\n", literal(&line)));
    }
    if let Some(budget) = budget(summary) {
        out.push_str(&format!("\n**Budget:** {}\n", literal(&budget)));
    }
    if let Some(partial) = &summary.partial {
        out.push_str(&format!(
            "\n**Partial:** {}\n",
            literal(&partial.description)
        ));
    }
    for note in notes(summary) {
        out.push_str(&format!("\n_{}_\n", literal(note)));
    }
    out
}

/// The heading's verdict for exit code `exit`.
pub(super) fn verdict(exit: u8) -> &'static str {
    match exit {
        0 => "✅ passed",
        5 => "⏸️ stopped by the budget",
        130 => "⚠️ interrupted",
        _ => "❌ failed",
    }
}

/// `rows` (header first) as a Markdown table, every cell [`literal`].
pub(super) fn rows_table(rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    for (index, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row.iter().map(|text| literal(text)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
        if index == 0 {
            out.push_str(&format!("|{}\n", "---|".repeat(row.len())));
        }
    }
    out
}

/// `text` as literal Markdown text, the one escape every string in a Markdown report goes
/// through (ids, file names, commands, messages), fit for a table cell, a heading or a line of
/// prose: the characters Markdown, GitHub or HTML would act on are backslash-escaped (so
/// `<script>` stays text, `|` stays in its cell, `` ` `` opens no code span, `@name` pings
/// no one, and a `#` that would start or close a heading is text), line breaks become spaces
/// and other control characters are shown, not obeyed.
pub(super) fn literal(text: &str) -> String {
    let one_line = text.replace("\r\n", " ").replace(['\n', '\r'], " ");
    let shown = crate::text::visible(&one_line);
    // A heading's closing sequence: the `#`s (and spaces) the text ends with.
    let closing = shown.trim_end_matches(['#', ' ']).len();
    let mut out = String::with_capacity(shown.len() + 8);
    for (at, ch) in shown.char_indices() {
        let special = match ch {
            '#' => at == 0 || at >= closing,
            // GitHub links a bare `https://…` or `www.…`: an escaped `:` or `.` is not one.
            ':' => shown[at..].starts_with("://"),
            '.' => ends_with_www_word(&shown[..at]),
            _ => matches!(
                ch,
                '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '|' | '~' | '$' | '@'
            ),
        };
        if special {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// Whether `text` ends with the word `www` (GitHub's Markdown links `www.` after a word's start).
fn ends_with_www_word(text: &str) -> bool {
    let Some(before) = text
        .len()
        .checked_sub(3)
        .filter(|&start| text.is_char_boundary(start) && text[start..].eq_ignore_ascii_case("www"))
        .map(|start| &text[..start])
    else {
        return false;
    };
    !before
        .chars()
        .next_back()
        .is_some_and(char::is_alphanumeric)
}

/// When `GITHUB_STEP_SUMMARY` names a file (GitHub Actions sets it), append the Markdown summary
/// to it, whatever `--format` says. A failure is a warning: the job's own output is intact.
pub fn append_step_summary(summary: &Summary, reporter: Reporter) {
    if std::env::var_os("GITHUB_STEP_SUMMARY").is_some_and(|path| !path.is_empty()) {
        append_to_step_summary(&render(summary), reporter);
    }
}

/// Append `markdown` to the file `GITHUB_STEP_SUMMARY` names, if any (a failure is a warning).
pub fn append_to_step_summary(markdown: &str, reporter: Reporter) {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|path| !path.is_empty()) else {
        return;
    };
    let written = crate::owner_only::file_options()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(format!("{markdown}\n").as_bytes()));
    if let Err(err) = written {
        reporter.warning(format!(
            "GITHUB_STEP_SUMMARY: cannot append to {}: {}",
            std::path::Path::new(&path).display(),
            crate::text::io_reason(&err)
        ));
    }
}
