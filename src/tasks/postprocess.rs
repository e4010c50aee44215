//! The post-process rules: one deterministic, stateless normalisation of a model output before
//! its metric sees it, with Python's `str` semantics, as the reference's.

use super::spec::PostProcess;
use crate::scoring::pytext;

impl PostProcess {
    /// Apply this rule to a model output.
    pub fn apply(self, output: &str) -> String {
        match self {
            PostProcess::None => output.to_string(),
            PostProcess::StripWhitespace => pytext::strip(output).to_string(),
            PostProcess::Lower => output.to_lowercase(),
            PostProcess::ExtractLetter => {
                extract_letter(output).map(String::from).unwrap_or_default()
            }
            PostProcess::ExtractCodeBlock => extract_code_block(output).to_string(),
            PostProcess::ExtractFirstLine => pytext::lines(output)
                .map(pytext::strip)
                .find(|line| !line.is_empty())
                .unwrap_or_default()
                .to_string(),
        }
    }
}

fn is_choice(c: char) -> bool {
    ('A'..='E').contains(&c)
}

/// The first A–E with no letter or digit on either side, else the first A–E anywhere.
fn extract_letter(output: &str) -> Option<char> {
    let chars: Vec<char> = output.chars().collect();
    let alone = |i: usize| {
        let apart = |c: Option<&char>| !c.is_some_and(|c| c.is_alphanumeric());
        apart(i.checked_sub(1).and_then(|j| chars.get(j))) && apart(chars.get(i + 1))
    };
    (0..chars.len())
        .find(|&i| is_choice(chars[i]) && alone(i))
        .or_else(|| chars.iter().position(|&c| is_choice(c)))
        .map(|i| chars[i])
}

/// The body of the first fenced block: after the opening ``` and its language tag up to the
/// closing ``` (or the end of the text), without the newline before the closing fence. The text
/// itself when it has no fence.
fn extract_code_block(output: &str) -> &str {
    const FENCE: &str = "```";
    let Some(open) = output.find(FENCE) else {
        return output;
    };
    let after = &output[open + FENCE.len()..];
    // A language tag is one word on the fence line; anything else there is already code.
    let body = match after.split_once('\n') {
        Some((tag, rest)) if !tag.trim().contains(char::is_whitespace) && !tag.contains(FENCE) => {
            rest
        }
        _ => after,
    };
    let body = body.find(FENCE).map_or(body, |close| &body[..close]);
    body.strip_suffix('\n')
        .map(|body| body.strip_suffix('\r').unwrap_or(body))
        .unwrap_or(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts that `rule` turns each input into its expected output.
    fn assert_applies(rule: PostProcess, cases: &[(&str, &str)]) {
        for (input, expected) in cases {
            assert_eq!(rule.apply(input), *expected, "{rule:?} on {input:?}");
        }
    }

    #[test]
    fn simple_rules() {
        assert_applies(PostProcess::None, &[(" X \n", " X \n")]);
        // Python's whitespace: U+001C..U+001F too.
        assert_applies(
            PostProcess::StripWhitespace,
            &[("\u{a0} 41\n\t", "41"), ("\u{1c}41\u{1f}", "41")],
        );
        assert_applies(PostProcess::Lower, &[("ÀB Straße", "àb straße")]);
        assert_applies(
            PostProcess::ExtractFirstLine,
            &[
                ("\n  \n  first one \nsecond", "first one"),
                (" \n\n", ""),
                ("only\r\nnext", "only"),
                // Python's line ends: U+001D and U+2028 too.
                ("\u{1d}\n41", "41"),
                ("one\u{2028}two", "one"),
            ],
        );
    }

    #[test]
    fn extract_letter_prefers_a_standalone_letter() {
        assert_applies(
            PostProcess::ExtractLetter,
            &[
                ("Answer: (C)", "C"),
                ("The answer is B.", "B"),
                ("ABSOLUTELY", "A"),
                ("I think D", "D"),
                ("Bad E1 answer", "B"),
                ("none here, f g h", ""),
                ("", ""),
                ("é C", "C"),
            ],
        );
    }

    #[test]
    fn extract_code_block_takes_the_first_fence() {
        assert_applies(
            PostProcess::ExtractCodeBlock,
            &[
                (
                    "Here:\n```python\ndef f():\n    return 1\n```\nmore ```x```",
                    "def f():\n    return 1",
                ),
                ("```\nx = 1\n```", "x = 1"),
                ("```\r\nx = 1\r\n```", "x = 1"),
                ("```x = 1```", "x = 1"),
                ("```py\nunclosed = True\n", "unclosed = True"),
                ("no fence at all", "no fence at all"),
                ("", ""),
            ],
        );
    }
}
