//! Text made safe for the page: JSON that cannot close its `<script>` element, and text for an
//! HTML element or a quoted attribute.

use crate::text::{escape_chars, markup_escape};

/// JSON text that is safe inside a `<script>` element: `<` (which could start `</script>` or
/// `<!--`), `>` and `&` as `\u` escapes, and the two line separators JavaScript once treated as
/// newlines. Outside strings JSON has none of these characters, so the value is unchanged.
pub(super) fn script_safe_json(json: &str) -> String {
    escape_chars(json, |c| match c {
        '<' => Some("\\u003c"),
        '>' => Some("\\u003e"),
        '&' => Some("\\u0026"),
        '\u{2028}' => Some("\\u2028"),
        '\u{2029}' => Some("\\u2029"),
        _ => None,
    })
}

/// Text for an HTML element or a quoted attribute, its control characters (but line breaks and
/// tabs) and bidirectional overrides shown as escapes (`\u{0}`, `\u{202e}`), as on a terminal:
/// a NUL is no HTML, and an override would make the text around it read in another order.
pub(super) fn escape_text(text: &str) -> String {
    let shown: Vec<_> = text.split('\r').map(crate::text::visible).collect();
    escape_chars(&shown.join("\r"), |c| match c {
        '\'' => Some("&#39;"),
        c => markup_escape(c),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn json_cannot_close_its_script_element() {
        let json = serde_json::to_string(&serde_json::json!({"t": "</script><!--&\u{2028}"}))
            .expect("serialises");
        let safe = script_safe_json(&json);
        assert!(!safe.contains('<') && !safe.contains('>') && !safe.contains('&'));
        let back: Value = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back["t"], "</script><!--&\u{2028}");
    }

    #[test]
    fn titles_are_text() {
        assert_eq!(
            escape_text("<b>\"x\" & 'y'"),
            "&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;"
        );
    }

    #[test]
    fn control_characters_and_overrides_are_shown_and_line_breaks_kept() {
        assert_eq!(
            escape_text("nul\0byte \u{1b}]0;T\u{7} \u{202e}evil\r\n\tend"),
            "nul\\u{0}byte \\u{1b}]0;T\\u{7} \\u{202e}evil\r\n\tend"
        );
    }
}
