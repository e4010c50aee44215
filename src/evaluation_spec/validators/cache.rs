//! A one-entry cache for things compiled from evidence strings (regexes, JSON schemas): packs
//! usually take the pattern or schema from a literal, so it is compiled once, not once per run.

use std::sync::{Arc, Mutex};

/// The source text, and what compiling it gave.
type Slot<T> = Option<(String, Result<Arc<T>, String>)>;

/// The last value compiled, keyed by its source text.
#[derive(Debug)]
pub(super) struct LastCompiled<T>(Mutex<Slot<T>>);

impl<T> Default for LastCompiled<T> {
    fn default() -> Self {
        LastCompiled(Mutex::new(None))
    }
}

impl<T> LastCompiled<T> {
    /// The compiled `source`, from the cache when it was the last one compiled.
    pub(super) fn get(
        &self,
        source: &str,
        compile: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<Arc<T>, String> {
        let mut slot = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((cached, compiled)) = slot.as_ref() {
            if cached == source {
                return compiled.clone();
            }
        }
        let compiled = compile(source).map(Arc::new);
        *slot = Some((source.to_string(), compiled.clone()));
        compiled
    }
}
