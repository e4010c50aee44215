//! The nesting pre-scan of a YAML spec: collections nested deeper than [`MAX_DEPTH`] are
//! refused before the YAML parser sees the file. The parser's work grows with the square of the
//! depth of flow collections (`[...]`, `{...}`: a 160 KB file of `[` took 47 s), and it holds
//! every event of block collections in memory before its own nesting limit is checked (a line of
//! 200,000 `- ` took 150 MB, a few MB of them gigabytes).
//!
//! The scan follows YAML's lexical rules as far as they decide what a bracket or an entry is: a
//! `[` or `{` opens a collection where a node can start (or anywhere inside a flow collection),
//! and brackets inside quoted scalars, plain scalars of block context, block scalars (`|`, `>`)
//! and comments are text. Block nesting is told by indentation (a line's first node deeper than
//! the collections open around it opens one more) and by the compact entries of one line
//! (`- - x`, `? - x`); it may count fewer levels than the parser, and never more but for the
//! lines of a plain scalar continued each more deeply indented than the last (which no spec
//! writes 128 of). A document marker (`---`, `...`) starts afresh.

/// The deepest nesting of flow collections, and of block collections, a YAML spec may have (the
/// parser's own nesting limit).
pub const MAX_DEPTH: usize = 128;

/// The kind of collections that nest too deeply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nesting {
    /// `[...]`, `{...}`.
    Flow,
    /// Indented or compact (`- - x`) block collections.
    Block,
}

impl Nesting {
    /// How a message names them.
    pub fn describe(self) -> &'static str {
        match self {
            Nesting::Flow => "flow collections ([...], {...})",
            Nesting::Block => "block collections (indented, or `- - …` on one line)",
        }
    }
}

/// The 1-based line where the nesting of `text` first goes deeper than [`MAX_DEPTH`], and of
/// which collections, if it does.
pub fn too_deep_at(text: &[u8]) -> Option<(usize, Nesting)> {
    Scan {
        text,
        at: 0,
        line: 1,
        line_start: 0,
        depth: 0,
        block: Vec::new(),
    }
    .run()
}

struct Scan<'a> {
    text: &'a [u8],
    at: usize,
    line: usize,
    /// Where the current line starts.
    line_start: usize,
    /// How many flow collections are open at the cursor.
    depth: usize,
    /// The columns of the block collections open at the cursor, outermost first.
    block: Vec<usize>,
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

    /// A node (or a `-`/`?` entry) of block context starts at `column`: the first of its line
    /// (`first_on_line`), or an entry right after another on its line (`after_entry`). Whether
    /// block collections now nest too deeply.
    fn block_node(&mut self, column: usize, first_on_line: bool, after_entry: bool) -> bool {
        if first_on_line {
            while self.block.last().is_some_and(|&open| open > column) {
                self.block.pop();
            }
            if self.block.last().is_none_or(|&open| open < column) {
                self.block.push(column);
            }
        } else if after_entry {
            self.block.push(column);
        }
        self.block.len() > MAX_DEPTH
    }

    fn run(mut self) -> Option<(usize, Nesting)> {
        // Whether the next byte that is not blank starts a token (a node, an indicator).
        let mut at_token = true;
        // Whether the cursor is inside a plain scalar.
        let mut plain = false;
        // The column of the last node or `-`/`?` entry started on this line (a block scalar's
        // lines are indented deeper than it).
        let mut node_column = 0;
        // Whether a token has started on this line, and whether the last one is a `-`/`?` entry.
        let mut line_has_token = false;
        let mut last_is_entry = false;
        while let Some(byte) = self.peek(0) {
            let column = self.at - self.line_start;
            let after_blank = column == 0 || Self::blank_or_end(Some(self.text[self.at - 1]));
            let flow = self.depth > 0;
            // A document marker (`---`, `...`) at the start of a line: a node may follow it.
            let rest = &self.text[self.at..];
            if column == 0
                && (rest.starts_with(b"---") || rest.starts_with(b"..."))
                && Self::blank_or_end(rest.get(3).copied())
            {
                (self.depth, at_token, plain) = (0, true, false);
                self.block.clear();
                (0..3).for_each(|_| self.advance());
                continue;
            }
            let starts_token =
                at_token && !plain && !matches!(byte, b'\n' | b' ' | b'\t' | b'\r' | b'#' | b':');
            if !flow && starts_token {
                let entry = matches!(byte, b'-' | b'?') && Self::blank_or_end(self.peek(1));
                if self.block_node(column, !line_has_token, entry && last_is_entry) {
                    return Some((self.line, Nesting::Block));
                }
                (line_has_token, last_is_entry) = (true, entry);
            }
            match byte {
                b'\n' => {
                    at_token = true;
                    plain = false;
                    node_column = 0;
                    line_has_token = false;
                    last_is_entry = false;
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
                    if self.depth > MAX_DEPTH {
                        return Some((self.line, Nesting::Flow));
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
        let limit = MAX_DEPTH;
        assert_eq!(too_deep_at(deep("[", "]", limit).as_bytes()), None);
        assert_eq!(
            too_deep_at(deep("[", "]", limit + 1).as_bytes()),
            Some((1, Nesting::Flow))
        );
        let text = format!("name: s\nvalidators: {}\n", deep("{a: ", "}", limit + 1));
        assert_eq!(too_deep_at(text.as_bytes()), Some((2, Nesting::Flow)));
        let text = format!("a:\n  - !!seq &x {}", deep("[\n", "]", limit + 1));
        assert_eq!(
            too_deep_at(text.as_bytes()),
            Some((limit + 2, Nesting::Flow))
        );
        // Inside a flow collection, quoted text does not hide the brackets after it.
        let text = format!("a: [\"]]\", 'it''s]', {}]", deep("[", "]", limit));
        assert_eq!(too_deep_at(text.as_bytes()), Some((1, Nesting::Flow)));
        // After a document marker, a node may start on its line.
        let text = format!("--- {}\n", deep("[", "]", limit + 1));
        assert_eq!(too_deep_at(text.as_bytes()), Some((1, Nesting::Flow)));
        let text = format!("a: 1\n...\n--- {}\n", deep("[", "]", limit + 1));
        assert_eq!(too_deep_at(text.as_bytes()), Some((3, Nesting::Flow)));
        assert_eq!(too_deep_at(b"--- [a]\nb: c\n---\n- [x]\n"), None);
    }

    #[test]
    fn brackets_in_text_are_not_nesting() {
        let brackets = "[".repeat(MAX_DEPTH + 1);
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
    fn block_nesting_deeper_than_the_limit_is_found_on_its_line() {
        let compact = |depth: usize| format!("name: s\nvalidators:\n{}x\n", "- ".repeat(depth));
        // The mapping and the entries' sequences but the first, which the scan does not tell
        // from the mapping it is the value of (both stand at column 0).
        assert_eq!(too_deep_at(compact(MAX_DEPTH).as_bytes()), None);
        assert_eq!(
            too_deep_at(compact(MAX_DEPTH + 1).as_bytes()),
            Some((3, Nesting::Block))
        );
        let indented = |depth: usize| -> String {
            (0..depth)
                .map(|level| format!("{}k{level}:\n", " ".repeat(level)))
                .collect()
        };
        assert_eq!(too_deep_at(indented(MAX_DEPTH).as_bytes()), None);
        assert_eq!(
            too_deep_at(indented(MAX_DEPTH + 1).as_bytes()),
            Some((MAX_DEPTH + 1, Nesting::Block))
        );
    }

    #[test]
    fn entries_that_do_not_nest_are_not_counted() {
        let list: String = (0..1000)
            .map(|n| format!("- {n}\n- [x]\n- k: v\n  j: w\n"))
            .collect();
        let wrapped: String = (0..200)
            .map(|n| format!("k{n}:\n  - a\n  - b: |\n      - - - - text\n    c: 'x'\n"))
            .collect();
        for text in [list, wrapped] {
            assert_eq!(too_deep_at(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn a_block_scalar_ends_where_its_parent_continues() {
        let text = format!("- k: |\n    text\n  j: {}", deep("[", "]", MAX_DEPTH + 1));
        assert_eq!(too_deep_at(text.as_bytes()), Some((3, Nesting::Flow)));
    }
}
