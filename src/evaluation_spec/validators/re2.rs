//! RE2's meaning of a pattern where the `regex` crate's differs (evaluation-spec §2.2 compiles
//! patterns as RE2, as Go's `regexp` does): the Perl classes `\d`, `\s`, `\w` and the word
//! boundaries `\b`, `\B` are ASCII-only there (`\d` does not match `٣`, `\w` does not match `é`),
//! and a repeat count above 1000 is an error. The pattern is rewritten with the ASCII classes
//! spelled out before the `regex` crate compiles it; everything else means the same in both.

/// The largest repeat count RE2 takes (`a{1000}`; `a{1001}` does not compile).
const MAX_REPEAT: u32 = 1000;

/// `pattern` with RE2's ASCII Perl classes and word boundaries written out for the `regex` crate,
/// or RE2's refusal of a repeat count above [`MAX_REPEAT`].
pub fn translate(pattern: &str) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.char_indices().peekable();
    // Nesting of character classes (`[a[b]]`); inside one, `{` is no repeat and `]` may close it.
    let mut class_depth = 0usize;
    while let Some((at, ch)) = chars.next() {
        match ch {
            '\\' => {
                let Some((_, escaped)) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let replaced = match escaped {
                    'd' => Some("[0-9]"),
                    'D' => Some("[^0-9]"),
                    'w' => Some("[0-9A-Za-z_]"),
                    'W' => Some("[^0-9A-Za-z_]"),
                    's' => Some("[\\t\\n\\f\\r ]"),
                    'S' => Some("[^\\t\\n\\f\\r ]"),
                    'b' if class_depth == 0 => Some("(?-u:\\b)"),
                    'B' if class_depth == 0 => Some("(?-u:\\B)"),
                    _ => None,
                };
                match replaced {
                    Some(ascii) => out.push_str(ascii),
                    None => {
                        out.push('\\');
                        out.push(escaped);
                    }
                }
            }
            '[' => {
                class_depth += 1;
                out.push('[');
                // A `]` (after an optional `^`) right after the opening bracket is a literal.
                if let Some((_, '^')) = chars.peek() {
                    out.push('^');
                    chars.next();
                }
                if let Some((_, ']')) = chars.peek() {
                    out.push(']');
                    chars.next();
                }
            }
            ']' if class_depth > 0 => {
                class_depth -= 1;
                out.push(']');
            }
            '{' if class_depth == 0 => {
                if let Some(count) = repeat_count(&pattern[at..]).filter(|&n| n > MAX_REPEAT) {
                    let end = pattern[at..]
                        .find('}')
                        .map_or(pattern.len(), |end| at + end + 1);
                    return Err(format!(
                        "invalid repeat count: `{}` (RE2 allows at most {MAX_REPEAT}, counted \
                         {count})",
                        &pattern[at..end]
                    ));
                }
                out.push('{');
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

/// The largest count of the repeat `{m}`, `{m,}` or `{m,n}` that `text` starts with; `None`
/// when it starts with no repeat (a `{` RE2 takes literally).
fn repeat_count(text: &str) -> Option<u32> {
    let inside = text.strip_prefix('{')?.split('}').next()?;
    if inside.len() == text.len() - 1 {
        return None;
    }
    let (low, high) = inside.split_once(',').unwrap_or((inside, inside));
    let number = |digits: &str| -> Option<u32> {
        (!digits.is_empty() && digits.bytes().all(|byte| byte.is_ascii_digit()))
            .then(|| digits.parse().unwrap_or(u32::MAX))
    };
    let low = number(low)?;
    let high = if high.is_empty() { low } else { number(high)? };
    Some(low.max(high))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perl_classes_and_word_boundaries_are_ascii_as_in_re2() {
        assert_eq!(translate(r"^\d+$").unwrap(), "^[0-9]+$");
        assert_eq!(translate(r"a\sb\W").unwrap(), r"a[\t\n\f\r ]b[^0-9A-Za-z_]");
        assert_eq!(translate(r"é\b").unwrap(), r"é(?-u:\b)");
        // Inside a class, a class nests; escaped backslashes and other escapes stay.
        assert_eq!(translate(r"[\dx]").unwrap(), "[[0-9]x]");
        assert_eq!(translate(r"\\d\.\p{Greek}").unwrap(), r"\\d\.\p{Greek}");
        assert_eq!(translate(r"[]\d]").unwrap(), "[][0-9]]");
    }

    #[test]
    fn a_repeat_count_above_1000_is_refused() {
        assert_eq!(
            translate("a{1000}b{2,1000}c{3,}").unwrap(),
            "a{1000}b{2,1000}c{3,}"
        );
        assert_eq!(
            translate("a{2,1001}"),
            Err("invalid repeat count: `{2,1001}` (RE2 allows at most 1000, counted 1001)".into())
        );
        // A brace that makes no repeat is a literal, as in a class.
        assert_eq!(translate("a{x}[{5000}]").unwrap(), "a{x}[{5000}]");
    }
}
