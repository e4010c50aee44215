//! The page: the template filled with the style, the script, the data (escaped so that no text
//! in it can close its `<script>` element) and the Content-Security-Policy that allows only them.

use base64::Engine as _;
use serde::Serialize;

use super::data::{Report, Row};
use super::escape::{escape_text, script_safe_json};
use super::generation;

const TEMPLATE: &str = include_str!("template.html");
const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

/// The columns of each row in the data, in order (the page reads them by these names).
const COLUMNS: [&str; 15] = [
    "series",
    "split",
    "example_index",
    "example_line",
    "label",
    "score",
    "error_kind",
    "error_message",
    "side_info",
    "attempts",
    "latency_ms",
    "passed",
    "repeat",
    "cached",
    "example_id",
];

struct RowData<'a>(usize, &'a Row);

impl Serialize for RowData<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let RowData(series, row) = self;
        let (kind, message) = row
            .error
            .as_ref()
            .map(|(kind, message)| (kind.as_str(), message.as_str()))
            .unzip();
        (
            series,
            &row.split,
            row.example_index,
            row.example_line,
            &row.label,
            row.score,
            kind,
            message,
            &row.side_info,
            row.attempts,
            row.latency_ms,
            row.passed,
            row.repeat,
            row.cached,
            &row.example_id,
        )
            .serialize(serializer)
    }
}

impl Report {
    /// The whole page: the template filled with the style, the script, the data and the
    /// Content-Security-Policy that allows only them.
    pub fn render(&self, title: &str) -> anyhow::Result<String> {
        let rows: Vec<RowData> = self
            .example_order()
            .into_iter()
            .map(|(series, row)| RowData(*series, row))
            .collect();
        let data = serde_json::json!({
            "title": title,
            "generator": concat!("evalctl ", env!("CARGO_PKG_VERSION")),
            "sources": self.sources,
            "series": self.series,
            "columns": COLUMNS,
            "rows": rows,
        });
        // The answers of `run --generate`, and their style, only when there are some.
        let generation = generation::sections(self);
        let style = if generation.is_empty() {
            STYLE.to_string()
        } else {
            format!("{STYLE}{}", generation::STYLE)
        };
        let policy = format!(
            "default-src 'none'; script-src '{}'; style-src '{}'; img-src data:; \
             base-uri 'none'; form-action 'none'",
            sha256_source(SCRIPT),
            sha256_source(&style)
        );
        Ok(fill(
            TEMPLATE,
            &[
                ("{{CSP}}", &escape_text(&policy)),
                ("{{TITLE}}", &escape_text(title)),
                ("{{STYLE}}", &style),
                ("{{GENERATION}}", &generation),
                (
                    "{{DATA}}",
                    &script_safe_json(&serde_json::to_string(&data)?),
                ),
                ("{{SCRIPT}}", SCRIPT),
            ],
        ))
    }
}

/// `template` with every placeholder replaced, in one pass from the start (a value is never
/// searched for placeholders, so data cannot inject one).
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut page =
        String::with_capacity(template.len() + values.iter().map(|v| v.1.len()).sum::<usize>());
    let mut rest = template;
    while let Some((at, (placeholder, value))) = values
        .iter()
        .filter_map(|pair| rest.find(pair.0).map(|at| (at, pair)))
        .min_by_key(|(at, _)| *at)
    {
        page.push_str(&rest[..at]);
        page.push_str(value);
        rest = &rest[at + placeholder.len()..];
    }
    page.push_str(rest);
    page
}

/// A CSP source allowing exactly the inline element whose content is `content`.
fn sha256_source(content: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, content.as_bytes());
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_and_values_are_not_searched() {
        let filled = fill("a{{X}}b{{Y}}c", &[("{{X}}", "{{Y}}"), ("{{Y}}", "y")]);
        assert_eq!(filled, "a{{Y}}byc");
    }

    #[test]
    fn the_embedded_script_and_style_cannot_end_their_elements_early() {
        assert!(!SCRIPT.to_ascii_lowercase().contains("</script"));
        assert!(!STYLE.to_ascii_lowercase().contains("</style"));
        assert!(!generation::STYLE.to_ascii_lowercase().contains("</style"));
        for placeholder in [
            "{{CSP}}",
            "{{TITLE}}",
            "{{STYLE}}",
            "{{DATA}}",
            "{{SCRIPT}}",
            "{{GENERATION}}",
        ] {
            assert!(TEMPLATE.contains(placeholder), "{placeholder}");
        }
    }
}
