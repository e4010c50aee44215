//! Flags of `evalctl fep evaluate`.

use std::path::PathBuf;

use clap::Subcommand;

use crate::exit::Exit;

/// `evalctl fep ...`
#[derive(Debug, Subcommand)]
pub enum FepCommand {
    /// EvaluationRequest in (file or `-` for stdin), EvaluationRunResult out on stdout.
    Evaluate {
        /// The EvaluationRequest JSON file (`-` = stdin).
        request: Option<String>,
        /// Streaming mode: test cases JSONL (line i pairs with line i of --outputs).
        #[arg(long, value_name = "FILE.jsonl", requires_all = ["outputs", "checks"], conflicts_with = "request")]
        test_cases: Option<PathBuf>,
        /// Streaming mode: outputs JSONL.
        #[arg(long, value_name = "FILE.jsonl", requires = "test_cases")]
        outputs: Option<PathBuf>,
        /// Streaming mode: checks JSON file {"checks": [...]}.
        #[arg(long, value_name = "FILE.json", requires = "test_cases")]
        checks: Option<PathBuf>,
    },
}

impl FepCommand {
    /// Run the subcommand.
    pub fn execute(self) -> anyhow::Result<Exit> {
        anyhow::bail!("`evalctl fep` is not implemented yet")
    }
}
