//! The built-in checks adapter (`--checks FILE.json`): FEP checks evaluated in process.

use std::path::Path;
use std::sync::Arc;

use super::Evaluator;

/// Load and validate the checks file and build the evaluator.
pub fn build(_path: &Path) -> anyhow::Result<Arc<dyn Evaluator>> {
    Err(crate::error::bad_input(
        "error: --checks is not implemented yet",
    ))
}
