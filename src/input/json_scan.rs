//! A scan of JSON text for where values start and end; it checks only what it needs to find
//! them (the parts are parsed by serde_json afterwards, or only located). FEP splits a large
//! request with it to parse the parts on the worker pool (`crate::fep::document`), and problems
//! in one-document inputs find their line with it ([`super::json_lines`]).

use std::ops::Range;

/// Deeper than this, a split's parts are not scanned (serde_json stops at 128 levels; an element
/// parsed alone would have two more to go): see [`Scan::parts_of`].
pub const MAX_DEPTH: usize = 100;

/// A scan of JSON text for where values start and end.
pub struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Values nested deeper than this are not passed.
    max_depth: usize,
}

impl<'a> Scan<'a> {
    /// A scan of `bytes` from its start, passing values however deeply nested (brackets are
    /// counted, not recursed into).
    pub fn new(bytes: &'a [u8]) -> Scan<'a> {
        Scan {
            bytes,
            at: 0,
            max_depth: usize::MAX,
        }
    }

    /// A scan of `bytes` for parts that serde_json will parse alone: a value nested deeper than
    /// [`MAX_DEPTH`] is not passed, so that the whole is parsed at once and gets serde_json's
    /// own error.
    pub fn parts_of(bytes: &'a [u8]) -> Scan<'a> {
        Scan {
            max_depth: MAX_DEPTH,
            ..Scan::new(bytes)
        }
    }

    /// Where the scan is: the offset of the next byte.
    pub fn at(&self) -> usize {
        self.at
    }

    /// The elements of the array that starts here.
    pub fn elements(&mut self) -> Option<Vec<Range<usize>>> {
        self.expect(b'[')?;
        self.skip_whitespace();
        let mut elements = Vec::new();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Some(elements);
        }
        loop {
            let start = self.at;
            self.value()?;
            elements.push(start..self.at);
            self.skip_whitespace();
            match self.next()? {
                b',' => self.skip_whitespace(),
                b']' => return Some(elements),
                _ => return None,
            }
        }
    }

    /// Pass the value that starts here: a string, an object or array (brackets counted, not
    /// matched), or a scalar (up to the next delimiter).
    pub fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => {
                            depth += 1;
                            if depth > self.max_depth {
                                return None;
                            }
                        }
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            b',' | b']' | b'}' | b':' => None,
            _ => {
                let start = self.at;
                while let Some(byte) = self.peek() {
                    if matches!(byte, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.at += 1;
                }
                (self.at > start).then_some(())
            }
        }
    }

    /// Pass the string that starts here; its span, quotes included.
    pub fn string(&mut self) -> Option<Range<usize>> {
        let start = self.at;
        self.expect(b'"')?;
        loop {
            let rest = self.bytes.get(self.at..)?;
            let stop = rest
                .iter()
                .position(|&byte| byte == b'"' || byte == b'\\')?;
            self.at += stop;
            if self.next()? == b'"' {
                return Some(start..self.at);
            }
            // An escape: the next byte is part of it, whatever it is.
            self.next()?;
        }
    }

    pub fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    pub fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    pub fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    pub fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }
}
