//! RE2's meaning of a pattern where the `regex` crate's differs (evaluation-spec §2.2 compiles
//! patterns as RE2, as Go's `regexp` does): the Perl classes `\d`, `\s`, `\w` and the word
//! boundaries `\b`, `\B` are ASCII-only there (`\d` does not match `٣`, `\w` does not match `é`);
//! `\Q…\E` quotes a literal text; a `{` that starts no repeat (`a{,2}`) is a literal; and a
//! repeat count above 1000, a repeat of a repeat (`a**`) and a flag RE2 lacks (`(?x)`) are
//! errors. The pattern is rewritten in the `regex` crate's terms before it compiles it;
//! everything else means the same in both.

/// The largest repeat count RE2 takes (`a{1000}`; `a{1001}` does not compile).
const MAX_REPEAT: u32 = 1000;

/// The flags RE2 takes in `(?flags)` and `(?flags:…)`.
const RE2_FLAGS: &str = "imsU";

/// Where the pattern stands after a repeat: RE2 takes one `?` (lazy) after a repeat operator,
/// and refuses any other repeat there.
#[derive(Clone, Copy, PartialEq)]
enum AfterRepeat {
    No,
    Operator,
    Lazy,
}

/// `pattern` in the `regex` crate's terms with RE2's meaning, or RE2's refusal of it (a repeat
/// count above [`MAX_REPEAT`], a repeat of a repeat, a flag RE2 lacks).
pub fn translate(pattern: &str) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.char_indices().peekable();
    // Nesting of character classes (`[a[b]]`); inside one, `{` is no repeat and `]` may close it.
    let mut class_depth = 0usize;
    // The start of the repeat the last character ended, while no other has followed it.
    let mut after_repeat = (AfterRepeat::No, 0usize);
    // Just past the last group's opening (an unescaped `(`): a `?` there is no repeat.
    let mut group_opened = None;
    while let Some((at, ch)) = chars.next() {
        let outside_class = class_depth == 0;
        // A repeat operator here, and where it ends.
        let repeat_end = match ch {
            '*' | '+' | '?' if outside_class => Some(at + 1),
            '{' if outside_class => repeat_count(&pattern[at..]).map(|_| {
                pattern[at..]
                    .find('}')
                    .map_or(pattern.len(), |end| at + end + 1)
            }),
            _ => None,
        };
        if let Some(end) = repeat_end {
            let (state, start) = after_repeat;
            match state {
                AfterRepeat::Operator if ch == '?' => {
                    after_repeat = (AfterRepeat::Lazy, start);
                    out.push('?');
                    continue;
                }
                AfterRepeat::Operator | AfterRepeat::Lazy => {
                    return Err(format!(
                        "invalid nested repetition operator: `{}`",
                        &pattern[start..end]
                    ));
                }
                AfterRepeat::No => {}
            }
            // `(?` opens a group's flags or name, not a repeat.
            after_repeat = if ch == '?' && group_opened == Some(at) {
                (AfterRepeat::No, 0)
            } else {
                (AfterRepeat::Operator, at)
            };
        } else {
            after_repeat = (AfterRepeat::No, 0);
        }
        match ch {
            '\\' => {
                let Some((_, escaped)) = chars.next() else {
                    out.push('\\');
                    break;
                };
                if escaped == 'Q' && outside_class {
                    // A literal text up to `\E`, or to the end.
                    let rest = &pattern[at + 2..];
                    let (literal, skipped) = match rest.find("\\E") {
                        Some(end) => (&rest[..end], end + 2),
                        None => (rest, rest.len()),
                    };
                    out.push_str(&regex::escape(literal));
                    while chars
                        .peek()
                        .is_some_and(|(next, _)| *next < at + 2 + skipped)
                    {
                        chars.next();
                    }
                    continue;
                }
                if matches!(escaped, 'p' | 'P' | 'x')
                    && chars.peek().is_some_and(|(_, c)| *c == '{')
                {
                    // `\p{Greek}`, `\x{263a}`: the braces belong to the escape.
                    out.push('\\');
                    out.push(escaped);
                    for (_, inside) in chars.by_ref() {
                        out.push(inside);
                        if inside == '}' {
                            break;
                        }
                    }
                    continue;
                }
                let replaced = match escaped {
                    'd' => Some("[0-9]"),
                    'D' => Some("[^0-9]"),
                    'w' => Some("[0-9A-Za-z_]"),
                    'W' => Some("[^0-9A-Za-z_]"),
                    's' => Some("[\\t\\n\\f\\r ]"),
                    'S' => Some("[^\\t\\n\\f\\r ]"),
                    'b' if outside_class => Some("(?-u:\\b)"),
                    'B' if outside_class => Some("(?-u:\\B)"),
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
            '(' if outside_class => {
                group_opened = Some(at + 1);
                // Flags RE2 knows only: `(?x)` and `(?u:…)` do not compile there.
                if let Some(after) = pattern[at..].strip_prefix("(?") {
                    let flags: String = after
                        .chars()
                        .take_while(|flag| flag.is_ascii_alphabetic() || *flag == '-')
                        .collect();
                    let closed = after[flags.len()..].starts_with([')', ':']);
                    if closed
                        && flags
                            .chars()
                            .any(|flag| flag != '-' && !RE2_FLAGS.contains(flag))
                    {
                        return Err(format!("invalid or unsupported Perl syntax: `(?{flags}`"));
                    }
                }
                out.push('(');
            }
            '{' if outside_class => match repeat_count(&pattern[at..]) {
                Some(count) if count > MAX_REPEAT => {
                    let end = pattern[at..]
                        .find('}')
                        .map_or(pattern.len(), |end| at + end + 1);
                    return Err(format!(
                        "invalid repeat count: `{}` (RE2 allows at most {MAX_REPEAT}, counted \
                         {count})",
                        &pattern[at..end]
                    ));
                }
                Some(_) => {
                    // The whole repeat at once, so that what follows it is after a repeat.
                    let end = repeat_end.unwrap_or(pattern.len());
                    out.push_str(&pattern[at..end]);
                    while chars.peek().is_some_and(|(next, _)| *next < end) {
                        chars.next();
                    }
                }
                // A brace that starts no repeat is a literal to RE2, an error to the crate.
                None => out.push_str("\\{"),
            },
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
    // RE2 reads no leading zero (`{02}` is literal text).
    let number = |digits: &str| -> Option<u32> {
        (!digits.is_empty()
            && digits.bytes().all(|byte| byte.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0')))
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
        assert_eq!(translate("a{x}[{5000}]").unwrap(), "a\\{x}[{5000}]");
    }

    /// Whether the translation of `pattern` matches `text`.
    fn matches(pattern: &str, text: &str) -> bool {
        regex::Regex::new(&translate(pattern).unwrap())
            .unwrap()
            .is_match(text)
    }

    #[test]
    fn quoted_text_and_braces_of_no_repeat_are_literals() {
        assert!(matches(r"^a\Q.*+\Eb$", "a.*+b"));
        assert!(!matches(r"^a\Q.*+\Eb$", "axxb"));
        assert!(matches(r"^\Q(x", "(xyz"), "quoted to the end");
        assert!(matches(r"^a{,2}$", "a{,2}"));
        assert!(matches(r"^a{x}}$", "a{x}}"));
        assert!(matches(r"^a{2}$", "aa"));
        // RE2 reads no leading zero in a count.
        assert!(matches(r"^a{02}$", "a{02}"));
        assert!(!matches(r"^a{02}$", "aa"));
        assert!(matches(r"^a{0,2}$", "aa"));
    }

    #[test]
    fn a_repeat_of_a_repeat_and_flags_re2_lacks_are_refused() {
        for (pattern, repeat) in [
            ("a**", "**"),
            ("a+*", "+*"),
            ("a*?+", "*?+"),
            ("a{2}*", "{2}*"),
            ("a?{3}", "?{3}"),
            (r"\(?*", "?*"),
        ] {
            assert_eq!(
                translate(pattern),
                Err(format!("invalid nested repetition operator: `{repeat}`")),
                "{pattern}"
            );
        }
        for lazy in [
            "a*?",
            "a+?b??",
            "a{2,3}?",
            "(?i)a",
            "(?:a)*",
            "(?P<n>a)+",
            r"a\**",
        ] {
            assert!(translate(lazy).is_ok(), "{lazy}");
        }
        assert_eq!(
            translate("(?x) a b"),
            Err("invalid or unsupported Perl syntax: `(?x`".into())
        );
        assert_eq!(
            translate("(?is-U:a)").unwrap(),
            "(?is-U:a)",
            "RE2's own flags"
        );
    }
}
