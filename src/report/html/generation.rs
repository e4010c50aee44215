//! The answers of `run --generate` in the HTML report: the candidate × task model matrix of each
//! run's summary, and every example's answers beside their scores. Both are plain HTML made here,
//! every text from the data escaped, so they read without JavaScript; a report whose results
//! carry no task model has neither, and its page is byte for byte what it was without them.

use std::fmt::Write as _;

use serde_json::Value;

use super::data::{Report, Row, SourceData};
use super::escape::escape_text;
use super::matrix::Matrix;
use crate::report::summary::CandidateSummary;
use crate::report::text::{dollars, mean};
use crate::text::{counted, Fixed4};

/// The style the two sections add to the page's (only when they are there).
pub(super) const STYLE: &str = include_str!("generation.css");

/// The matrix and answer sections of `report`, or nothing when no source has task models.
pub(super) fn sections(report: &Report) -> String {
    let matrices: Vec<(usize, &Matrix)> = report
        .sources
        .iter()
        .enumerate()
        .filter_map(|(index, source)| source.matrix.as_ref().map(|matrix| (index, matrix)))
        .collect();
    if matrices.is_empty() {
        return String::new();
    }
    let mut html = String::new();
    html.push_str(
        "  <section id=\"matrix\" aria-labelledby=\"matrix-heading\">\n    \
         <h2 id=\"matrix-heading\">Candidates × task models</h2>\n    \
         <p class=\"muted\">Each cell: the mean score of the candidate's answers from the task \
         model (failed calls count as 0) ± the half-width of its 95% interval, then its calls and \
         failed calls, and its pass rate, pass@k and cost when the run has them.</p>\n",
    );
    for (source, matrix) in &matrices {
        if report.sources.len() > 1 {
            let name = escape_text(&report.sources[*source].name);
            let _ = writeln!(html, "    <h3>{name}</h3>");
        }
        matrix_table(&mut html, *source, matrix);
    }
    html.push_str("  </section>\n");
    answers(&mut html, report, &matrices);
    html
}

/// One run's matrix: a row per candidate, a column per task model.
fn matrix_table(html: &mut String, source: usize, matrix: &Matrix) {
    let models = matrix.task_models();
    let _ = write!(
        html,
        "    <div class=\"table-wrap\"><table class=\"matrix\" data-source=\"{source}\">\n    \
         <thead><tr><th>candidate</th>"
    );
    for model in &models {
        let _ = write!(html, "<th class=\"num\">{}</th>", escape_text(model));
    }
    html.push_str("</tr></thead>\n    <tbody>\n");
    for candidate in matrix.candidates() {
        let _ = write!(
            html,
            "    <tr><td class=\"cand\">{}</td>",
            escape_text(candidate)
        );
        for model in &models {
            match matrix.cell(candidate, model) {
                Some(pair) => cell(html, pair),
                None => html.push_str("<td class=\"num muted\">—</td>"),
            }
        }
        html.push_str("</tr>\n");
    }
    html.push_str("    </tbody></table></div>\n");
}

/// A matrix cell: the pair's score, then its calls, failed calls, pass rate, pass@k and cost
/// (those the summary has).
fn cell(html: &mut String, pair: &CandidateSummary) {
    let scored = [&pair.val, &pair.train, &pair.single]
        .into_iter()
        .find_map(Option::as_ref);
    let score = scored.map_or_else(|| "—".to_string(), mean);
    let mut details = Vec::new();
    if let Some(aggregate) = scored {
        details.push(format!(
            "{} calls, {} failed",
            aggregate.n, aggregate.errors
        ));
    }
    if let Some(rate) = pair.pass_rate {
        details.push(format!("pass rate {:.1}%", rate * 100.0));
    }
    if let Some(pass) = &pair.pass_at_k {
        let number =
            |value: Option<f64>| value.map_or_else(|| "—".into(), |v| Fixed4(v).to_string());
        details.push(format!(
            "pass@1 {}, pass@{} {}",
            number(pass.pass_at_1),
            pass.k,
            number(pass.pass_at_k)
        ));
    }
    if let Some(cost) = pair.generation.and_then(|spend| spend.cost_usd) {
        details.push(format!("cost {}", dollars(cost)));
    }
    let _ = write!(
        html,
        "<td class=\"num\" data-score=\"{}\">{}<div class=\"muted\">{}</div></td>",
        pair.score
            .map_or_else(|| "null".to_string(), |s| s.to_string()),
        escape_text(&score),
        escape_text(&details.join(" · "))
    );
}

/// One `<details>` per example of every source with a matrix: the example record (when known),
/// then each candidate × task model's answer beside its score and the evaluator's reasoning.
fn answers(html: &mut String, report: &Report, matrices: &[(usize, &Matrix)]) {
    html.push_str(
        "  <section id=\"answers\" aria-labelledby=\"answers-heading\">\n    \
         <h2 id=\"answers-heading\">Answers</h2>\n    \
         <p class=\"muted\">Each example's answers, one per candidate × task model (and repeat), \
         beside their scores; open an example to read them.</p>\n",
    );
    let ordered: Vec<&(usize, Row)> = report
        .example_order()
        .into_iter()
        .filter(|(series, _)| {
            let source = report.series[*series].source;
            matrices.iter().any(|(with, _)| *with == source)
        })
        .collect();
    let repeats = ordered.iter().any(|(_, row)| row.repeat.is_some());
    let reasoning = ordered.iter().any(|(_, row)| reasoning_of(row).is_some());
    let example_of = |(series, row): &(usize, Row)| {
        (
            report.series[*series].source,
            row.split.clone(),
            row.example_index,
        )
    };
    for group in ordered.chunk_by(|a, b| example_of(a) == example_of(b)) {
        // Series are made candidate by candidate, task model by task model.
        let mut group = group.to_vec();
        group.sort_by_key(|(series, row)| (*series, row.repeat));
        example(html, report, &group, repeats, reasoning);
    }
    html.push_str("  </section>\n");
}

/// One example's `<details>`: its answers in candidate, task model and repeat order.
fn example(
    html: &mut String,
    report: &Report,
    group: &[&(usize, Row)],
    repeats: bool,
    reasoning: bool,
) {
    let (series, first) = group[0];
    let source = &report.sources[report.series[*series].source];
    let failed = group.iter().filter(|(_, row)| row.error.is_some()).count();
    let mut title = format!("{} {}", first.split, example_label(first));
    if report.sources.len() > 1 {
        title = format!("{}: {title}", source.name);
    }
    let answered = if failed > 0 {
        format!("{} ({failed} failed)", answers_counted(group.len()))
    } else {
        answers_counted(group.len())
    };
    let _ = writeln!(
        html,
        "    <details class=\"example\" data-source=\"{}\" data-split=\"{}\" data-example=\"{}\">\
         <summary>{} <span class=\"muted\">{}</span></summary>",
        report.series[*series].source,
        escape_text(&first.split),
        first
            .example_index
            .map_or_else(String::new, |index| index.to_string()),
        escape_text(&title),
        escape_text(&answered)
    );
    if let Some(record) = example_record(source, first) {
        let text = serde_json::to_string_pretty(record).unwrap_or_default();
        let _ = writeln!(
            html,
            "    <h4>example</h4><pre>{}</pre>",
            escape_text(&text)
        );
    }
    html.push_str("    <div class=\"table-wrap\"><table class=\"answers\"><thead><tr><th>candidate</th><th>task model</th>");
    if repeats {
        html.push_str("<th class=\"num\">repeat</th>");
    }
    html.push_str("<th class=\"num\">score</th><th>answer</th>");
    if reasoning {
        html.push_str("<th>reasoning</th>");
    }
    html.push_str("</tr></thead>\n    <tbody>\n");
    for (series, row) in group {
        answer_row(html, &report.series[*series].id, row, repeats, reasoning);
    }
    html.push_str("    </tbody></table></div></details>\n");
}

/// One answer's row: who answered, its score (or the error), the answer, and the reasoning.
fn answer_row(html: &mut String, candidate: &str, row: &Row, repeats: bool, reasoning: bool) {
    let _ = write!(
        html,
        "    <tr{}><td class=\"cand\">{}</td><td>{}</td>",
        if row.error.is_some() {
            " class=\"failed\""
        } else {
            ""
        },
        escape_text(candidate),
        escape_text(row.task_model.as_deref().unwrap_or("—"))
    );
    if repeats {
        let repeat = row
            .repeat
            .map_or_else(|| "—".to_string(), |r| r.to_string());
        let _ = write!(html, "<td class=\"num\">{repeat}</td>");
    }
    let score = match (&row.error, row.score) {
        (Some((kind, _)), _) => format!("<span class=\"pill\">{}</span>", escape_text(kind)),
        (None, Some(score)) => Fixed4(score).to_string(),
        (None, None) => "—".to_string(),
    };
    let _ = write!(html, "<td class=\"num\">{score}</td><td class=\"answer\">");
    match &row.output {
        Some(output) => {
            let _ = write!(html, "<pre>{}</pre>", escape_text(output));
        }
        None => html.push_str("<span class=\"muted\">no answer</span>"),
    }
    if let Some((kind, message)) = &row.error {
        let _ = write!(
            html,
            "<pre class=\"error\">{}: {}</pre>",
            escape_text(kind),
            escape_text(message)
        );
    }
    html.push_str("</td>");
    if reasoning {
        match reasoning_of(row) {
            Some(text) => {
                let _ = write!(html, "<td><pre>{}</pre></td>", escape_text(&text));
            }
            None => html.push_str("<td class=\"muted\">—</td>"),
        }
    }
    html.push_str("</tr>\n");
}

/// The evaluator's reasoning (`side_info.reasoning`): a string as is, anything else as JSON.
fn reasoning_of(row: &Row) -> Option<String> {
    match row.side_info.get("reasoning")? {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        other => Some(other.to_string()),
    }
}

/// `fr (line 1)`, `#2 (line 3)`: the example's id (or index) and line.
fn example_label(row: &Row) -> String {
    let example = match (&row.example_id, row.example_index) {
        (Some(id), _) => id.clone(),
        (None, Some(index)) => format!("#{index}"),
        (None, None) => "the single call".to_string(),
    };
    match row.example_line {
        Some(line) => format!("{example} (line {line})"),
        None => example,
    }
}

fn answers_counted(count: usize) -> String {
    counted(count, "answer", "answers")
}

/// The example record of `row`, when its source knows its examples (`run --report`).
fn example_record<'a>(source: &'a SourceData, row: &Row) -> Option<&'a Value> {
    let examples = source.examples.as_ref()?;
    let split = match row.split.as_str() {
        "train" => &examples.train,
        "val" => &examples.val,
        _ => return None,
    };
    split.get(row.example_index?)
}
