//! Digests of tagged fields: each field written as a tag byte, its length and its bytes, so no two
//! different inputs hash alike by running into each other. Call keys (`runner::key`), run
//! fingerprints, the digests of a scoring command's lines (`record`) and `tasks run`'s completion
//! keys are all made this way.

use sha2::{Digest, Sha256};

use crate::store::CallKey;

/// The fields of a digest, each written as a tag byte, a length and the bytes.
pub(crate) struct Fields(Sha256);

impl Fields {
    pub(crate) fn new(domain: &str) -> Fields {
        let mut fields = Fields(Sha256::new());
        fields.add(b'D', domain.as_bytes());
        fields
    }

    pub(crate) fn add(&mut self, tag: u8, bytes: &[u8]) -> &mut Fields {
        self.0.update([tag]);
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    pub(crate) fn add_optional(&mut self, tag: u8, bytes: Option<&[u8]>) -> &mut Fields {
        match bytes {
            Some(bytes) => self.add(tag, bytes),
            None => self.add(tag.to_ascii_lowercase(), &[]),
        }
    }

    pub(crate) fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }

    /// The key these fields make.
    pub(crate) fn key(self) -> CallKey {
        CallKey(self.finish())
    }
}

/// The first 8 bytes of `digest` as 16 lowercase hex digits.
pub(crate) fn short_hex(digest: &[u8]) -> String {
    digest[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}
