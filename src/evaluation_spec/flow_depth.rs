//! The nesting pre-scan of a YAML spec: flow collections (`[...]`, `{...}`) nested deeper than
//! [`MAX_FLOW_DEPTH`] are refused before the YAML parser sees the file. The parser's work grows
//! with the square of that depth (a 160 KB file of `[` took 47 s), while it stays linear in
//! block nesting, which its own limit of 128 levels stops early.
//!
//! The scan follows YAML's lexical rules as far as they decide what a bracket is: a `[` or `{`
//! opens a collection where a node can start (or anywhere inside a flow collection), and
//! brackets inside quoted scalars, plain scalars of block context, block scalars (`|`, `>`) and
//! comments are text.

/// The deepest flow nesting a YAML spec may have (the parser's own nesting limit).
pub const MAX_FLOW_DEPTH: usize = 128;

/// The 1-based line where the flow nesting of `text` first goes deeper than
/// [`MAX_FLOW_DEPTH`], if it does.
pub fn too_deep_at(text: &[u8]) -> Option<usize> {
    Scan {
        text,
        at: 0,
        line: 1,
        line_start: 0,
        depth: 0,
    }
    .run()
}

struct Scan<'a> {
    text: &'a [u8],
    at: usize,
    line: usize,
    /// Where the current line starts.
    line_start: usize,
    depth: usize,
}

impl Scan<'_> {
    fn peek(&self, offset: usize) -> Option<u8> {
        self.text.get(self.at + offset).copied()
    }

    fn blank_or_end(byte: Option<u8>) -> bool {
        matches!(byte, None | Some(b' ' | b'\t' | b'\r' | b'\n'))
    }

    fn flow_indicator(byte: Option<u8>) -> bool {
        matches!(byte, Some(b',' | b'[' | b']' | b'{' | b'}'))
    }

    /// Step over the byte at the cursor, counting lines.
    fn advance(&mut self) {
        if self.peek(0) == Some(b'\n') {
            self.line += 1;
            self.line_start = self.at + 1;
        }
        self.at += 1;
    }

    /// Step to the end of the line (the line break is left for the caller).
    fn skip_line(&mut self) {
        while !matches!(self.peek(0), None | Some(b'\n')) {
            self.at += 1;
        }
    }

    /// Step over a quoted scalar starting at the cursor: `''` is a quote inside single quotes,
    /// a backslash escapes the next byte inside double quotes.
    fn skip_quoted(&mut self) {
        let quote = self.text[self.at];
        self.advance();
        while let Some(byte) = self.peek(0) {
            if byte == quote {
                if quote == b'\'' && self.peek(1) == Some(b'\'') {
                    self.advance();
                    self.advance();
                    continue;
                }
                self.advance();
                return;
            }
            if byte == b'\\' && quote == b'"' {
                self.advance();
            }
            self.advance();
        }
    }

    /// Step over a block scalar whose header is at the cursor: the rest of its line, then every
    /// line that is blank or indented deeper than `parent`.
    fn skip_block_scalar(&mut self, parent: usize) {
        self.skip_line();
        while self.peek(0) == Some(b'\n') {
            let next = self.at + 1;
            let indent = self.text[next..]
                .iter()
                .take_while(|byte| **byte == b' ')
                .count();
            let blank = matches!(
                self.text.get(next + indent),
                None | Some(b'\n' | b'\r' | b'\t')
            );
            if !blank && indent <= parent {
                return;
            }
            self.advance();
            self.skip_line();
        }
    }

    fn run(mut self) -> Option<usize> {
        // Whether the next byte that is not blank starts a token (a node, an indicator).
        let mut at_token = true;
        // Whether the cursor is inside a plain scalar.
        let mut plain = false;
        // The column of the last node or `-`/`?` entry started on this line (a block scalar's
        // lines are indented deeper than it).
        let mut node_column = 0;
        while let Some(byte) = self.peek(0) {
            let column = self.at - self.line_start;
            let after_blank = column == 0 || Self::blank_or_end(Some(self.text[self.at - 1]));
            let flow = self.depth > 0;
            match byte {
                b'\n' => {
                    at_token = true;
                    plain = false;
                    node_column = 0;
                    self.advance();
                }
                b' ' | b'\t' | b'\r' => self.advance(),
                b'#' if after_blank => self.skip_line(),
                b':' if Self::blank_or_end(self.peek(1))
                    || (flow && (!plain || Self::flow_indicator(self.peek(1)))) =>
                {
                    at_token = true;
                    plain = false;
                    self.advance();
                }
                b',' | b'[' | b']' | b'{' | b'}' if flow => {
                    plain = false;
                    at_token = byte != b']' && byte != b'}';
                    if byte == b'[' || byte == b'{' {
                        self.depth += 1;
                    } else if byte == b']' || byte == b'}' {
                        self.depth -= 1;
                    }
                    if self.depth > MAX_FLOW_DEPTH {
                        return Some(self.line);
                    }
                    self.advance();
                }
                _ if plain || !at_token => self.advance(),
                b'[' | b'{' => {
                    self.depth = 1;
                    at_token = true;
                    self.advance();
                }
                b'\'' | b'"' => {
                    node_column = column;
                    at_token = false;
                    self.skip_quoted();
                }
                b'-' | b'?' if Self::blank_or_end(self.peek(1)) => {
                    node_column = column;
                    self.advance();
                }
                b'!' | b'&' | b'*' => {
                    // A tag or an anchor comes before its node; an alias is the node.
                    at_token = byte != b'*';
                    while !(Self::blank_or_end(self.peek(0))
                        || (flow && Self::flow_indicator(self.peek(0))))
                    {
                        self.advance();
                    }
                }
                b'|' | b'>' if !flow => self.skip_block_scalar(node_column),
                _ => {
                    node_column = column;
                    plain = true;
                    at_token = false;
                    self.advance();
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep(open: &str, close: &str, depth: usize) -> String {
        format!("{}{}", open.repeat(depth), close.repeat(depth))
    }

    #[test]
    fn flow_nesting_deeper_than_the_limit_is_found_on_its_line() {
        let limit = MAX_FLOW_DEPTH;
        assert_eq!(too_deep_at(deep("[", "]", limit).as_bytes()), None);
        assert_eq!(too_deep_at(deep("[", "]", limit + 1).as_bytes()), Some(1));
        let text = format!("name: s\nvalidators: {}\n", deep("{a: ", "}", limit + 1));
        assert_eq!(too_deep_at(text.as_bytes()), Some(2));
        let text = format!("a:\n  - !!seq &x {}", deep("[\n", "]", limit + 1));
        assert_eq!(too_deep_at(text.as_bytes()), Some(limit + 2));
        // Inside a flow collection, quoted text does not hide the brackets after it.
        let text = format!("a: [\"]]\", 'it''s]', {}]", deep("[", "]", limit));
        assert_eq!(too_deep_at(text.as_bytes()), Some(1));
    }

    #[test]
    fn brackets_in_text_are_not_nesting() {
        let brackets = "[".repeat(MAX_FLOW_DEPTH + 1);
        for text in [
            format!("a: \"{brackets}\"\n"),
            format!("a: '{brackets}'\n"),
            format!("a: x{brackets}\n"),
            format!("a: it's {brackets}\nb: [1, 2]\n"),
            format!("# {brackets}\na: 1\n"),
            format!("a: 1 # {brackets}\n"),
            format!("a: |\n  {brackets}\n\n  {brackets}\nb: [1]\n"),
            format!("- k: >-\n   {brackets}\n- [x]\n"),
            format!("a: [\"{brackets}\", '{brackets}', b]\n"),
        ] {
            assert_eq!(too_deep_at(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn a_block_scalar_ends_where_its_parent_continues() {
        let text = format!(
            "- k: |\n    text\n  j: {}",
            deep("[", "]", MAX_FLOW_DEPTH + 1)
        );
        assert_eq!(too_deep_at(text.as_bytes()), Some(3));
    }
}
