//! Flags of `evalctl spec validate|score`, turned into the typed configs of [`crate::spec`].

use clap::Subcommand;

use crate::exit::Exit;
use crate::input::Source;
use crate::report::Reporter;
use crate::spec::command::{self, ValidateConfig};

/// `evalctl spec ...`
#[derive(Debug, Subcommand)]
pub enum SpecCommand {
    /// Strictly validate an evaluation spec: a challenge-pack manifest (its `evaluation_spec`) or
    /// a bare spec, in YAML or JSON. Every problem is reported at once as `FILE[:LINE]: <field
    /// path> <message>`. Exit 0 valid, 2 invalid.
    Validate {
        /// The spec or manifest file (`-` = stdin; YAML unless it is `.json` or starts with `{`).
        file: String,
        /// Print the normalised spec as JSON on stdout instead of the report.
        #[arg(long)]
        print: bool,
    },
}

impl SpecCommand {
    /// Run the subcommand.
    pub fn execute(self, reporter: Reporter) -> anyhow::Result<Exit> {
        match self {
            SpecCommand::Validate { file, print } => command::validate(
                &ValidateConfig {
                    file: Source::from_arg(&file),
                    print,
                },
                reporter,
            ),
        }
    }
}
