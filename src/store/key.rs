//! The key of one call, under which the journal (`--output`, `--resume`) and the cache keep its
//! result. What goes into it is `crate::runner::key`'s.

use std::fmt;

/// The key of one call: 32 bytes of SHA-256, written as 64 lowercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallKey(pub(crate) [u8; 32]);

impl CallKey {
    /// The key a line's 64-hex-digit `key` names, or `None` when it is not one.
    pub fn parse(hex: &str) -> Option<CallKey> {
        if hex.len() != 64 {
            return None;
        }
        let mut bytes = [0u8; 32];
        for (byte, pair) in bytes.iter_mut().zip(hex.as_bytes().chunks(2)) {
            let pair = std::str::from_utf8(pair).ok()?;
            *byte = u8::from_str_radix(pair, 16).ok()?;
        }
        Some(CallKey(bytes))
    }

    /// The raw 32 bytes (the cache's primary key).
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for CallKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}
