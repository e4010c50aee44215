//! LaTeX-ish normalisation: the answer extracted when asked, `$…$` and `\boxed` stripped,
//! commands and radicals rewritten into the grammar's plain notation.

use super::settings::MathConfig;
use crate::scoring::normalize::collapse_whitespace;

/// Replacements applied one after another over the whole text, in this order (so `,` is gone
/// before `\,` is looked for, as in the reference).
const REPLACEMENTS: &[(&str, &str)] = &[
    ("\r\n", "\n"),
    ("\n", " "),
    (",", ""),
    ("−", "-"),
    ("–", "-"),
    ("×", "*"),
    ("·", "*"),
    ("÷", "/"),
    ("\\left", ""),
    ("\\right", ""),
    ("\\cdot", "*"),
    ("\\times", "*"),
    ("\\!", ""),
    ("\\,", ""),
    ("\\;", ""),
    ("\\:", ""),
];

/// Strip outer `$$…$$` / `$…$` pairs.
fn strip_dollars(text: &str) -> &str {
    let mut current = text.trim();
    loop {
        let inner = if current.len() >= 4 && current.starts_with("$$") && current.ends_with("$$") {
            &current[2..current.len() - 2]
        } else if current.len() >= 2 && current.starts_with('$') && current.ends_with('$') {
            &current[1..current.len() - 1]
        } else {
            return current;
        };
        current = inner.trim();
    }
}

/// The index of the first non-space byte at or after `start`.
fn skip_spaces(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let mut index = start;
    while index < bytes.len()
        && matches!(
            bytes[index],
            b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'
        )
    {
        index += 1;
    }
    index
}

/// The balanced `open … close` group starting at byte `start`: (content, end after `close`).
fn balanced_group(text: &str, start: usize, open: u8, close: u8) -> Result<(&str, usize), String> {
    let bytes = text.as_bytes();
    if bytes.get(start) != Some(&open) {
        return Err(format!("expected '{}' at offset {start}", open as char));
    }
    let mut depth = 0usize;
    for (index, byte) in bytes.iter().enumerate().skip(start) {
        if *byte == open {
            depth += 1;
        } else if *byte == close {
            depth -= 1;
            if depth == 0 {
                return Ok((&text[start + 1..index], index + 1));
            }
        }
    }
    Err(format!(
        "unbalanced '{}' '{}' group",
        open as char, close as char
    ))
}

/// A brace group after optional spaces, or `missing` when there is no `{`.
fn required_braces<'a>(
    text: &'a str,
    start: usize,
    missing: &str,
) -> Result<(&'a str, usize), String> {
    let open = skip_spaces(text, start);
    if text.as_bytes().get(open) != Some(&b'{') {
        return Err(missing.to_string());
    }
    balanced_group(text, open, b'{', b'}')
}

/// Rewrite every occurrence of `command`, leftmost first, until none is left.
fn rewrite_command(
    text: String,
    command: &str,
    rewrite: impl Fn(&str, usize) -> Result<(String, usize), String>,
) -> Result<String, String> {
    let mut current = text;
    while let Some(position) = current.find(command) {
        let (replacement, end) = rewrite(&current, position + command.len())?;
        current = format!("{}{}{}", &current[..position], replacement, &current[end..]);
    }
    Ok(current)
}

/// The Unicode `√`: before `(`, `{` or nothing it becomes `sqrt`; otherwise it wraps the run of
/// characters up to white space or one of `+-*/^(){}`.
fn rewrite_radical(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(position) = rest.find('√') {
        out.push_str(&rest[..position]);
        let after = &rest[position + '√'.len_utf8()..];
        let trimmed = after.trim_start();
        let run_end = trimmed
            .find(|ch: char| ch.is_whitespace() || "+-*/^(){}".contains(ch))
            .unwrap_or(trimmed.len());
        if trimmed.starts_with(['(', '{']) || run_end == 0 {
            out.push_str("sqrt");
            rest = after;
        } else {
            out.push_str(&format!("sqrt({})", &trimmed[..run_end]));
            rest = &trimmed[run_end..];
        }
    }
    out.push_str(rest);
    out
}

pub(super) fn normalize_expression(text: &str, config: &MathConfig) -> Result<String, String> {
    let mut current = text.trim();
    if config.extract_answer == Some(true) {
        let delimiter = config
            .answer_delimiter
            .as_deref()
            .map(str::trim)
            .filter(|delimiter| !delimiter.is_empty())
            .unwrap_or("####");
        if let Some(position) = current.rfind(delimiter) {
            current = &current[position + delimiter.len()..];
        }
        current = current.trim();
    }
    let mut replaced = strip_dollars(current).to_string();
    for (from, to) in REPLACEMENTS {
        if replaced.contains(from) {
            replaced = replaced.replace(from, to);
        }
    }
    let boxed = rewrite_command(replaced.trim().to_string(), "\\boxed", |text, after| {
        let (inner, end) = required_braces(text, after, "\\boxed must be followed by braces")?;
        Ok((format!("({inner})"), end))
    })?;
    let fractions = rewrite_command(boxed, "\\frac", |text, after| {
        let (numerator, middle) =
            required_braces(text, after, "\\frac must have a numerator group")?;
        let (denominator, end) =
            required_braces(text, middle, "\\frac must have a denominator group")?;
        Ok((format!("(({numerator})/({denominator}))"), end))
    })?;
    let roots = rewrite_command(fractions, "\\sqrt", |text, after| {
        let mut position = skip_spaces(text, after);
        let mut degree = "";
        if text.as_bytes().get(position) == Some(&b'[') {
            let (index, end) = balanced_group(text, position, b'[', b']')?;
            degree = index;
            position = end;
        }
        let (radicand, end) = required_braces(text, position, "\\sqrt must have a radicand group")?;
        if degree.trim().is_empty() {
            Ok((format!("sqrt({radicand})"), end))
        } else {
            Ok((format!("((({radicand})^(1/({degree}))))"), end))
        }
    })?;
    let braces = rewrite_radical(&roots).replace('{', "(").replace('}', ")");
    let normalized = collapse_whitespace(&braces).trim().to_string();
    if normalized.is_empty() {
        return Err("expression is empty".to_string());
    }
    Ok(normalized)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_examples() {
        let config = MathConfig::default();
        let normalized = |text: &str| normalize_expression(text, &config).unwrap_or_default();
        assert_eq!(normalized("√2"), "sqrt(2)");
        assert_eq!(normalized("$$\\frac{1}{2}$$"), "((1)/(2))");
        assert_eq!(normalized("\\sqrt[3]{8}"), "(((8)^(1/(3))))");
        assert_eq!(normalized("1,000 \\cdot 2"), "1000 * 2");
        assert!(normalize_expression("\\boxed 4", &config).is_err());
    }
}
