//! The check catalogue of one run (FEP 0.0.1, section 2.3): each JSONPath compiled once, the
//! custom check types known, where extended checks may send requests, and the custom check types
//! a request or checks file declared that the command line refuses.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use super::args::PathCache;
use super::custom::{self, CustomCheck, CustomChecks};
use super::extended::EndpointPolicy;
use super::trust::Declarations;
use crate::input::strict::JsonProblem as Problem;
use crate::patterns::DocumentPatterns;

/// What one run's checks are prepared with: each JSONPath compiled once, the custom check types
/// declared, where extended checks may send requests, and which commands a request may declare.
#[derive(Debug, Default)]
pub struct Catalog {
    /// The run's compiled JSONPaths.
    pub paths: PathCache,
    /// The custom check types known (the command line's, then the file's or request's).
    pub custom: CustomChecks,
    /// Where extended checks may send requests, with which keys.
    pub endpoints: EndpointPolicy,
    /// What becomes of a request's or checks file's `custom_checks`.
    pub declarations: Declarations,
    /// The custom check types a request or checks file declared that the command line does not
    /// allow: their checks are `validation_error`s, their commands never run.
    pub refused: BTreeSet<String>,
    /// The patterns the checks compiled before the run, capped in size together.
    pub patterns: DocumentPatterns,
}

impl Catalog {
    /// A catalog for a local command: any key, the given custom checks, declarations allowed.
    pub fn with_custom(custom: impl IntoIterator<Item = CustomCheck>) -> Catalog {
        Catalog {
            custom: custom
                .into_iter()
                .map(|check| (check.name.clone(), Arc::new(check)))
                .collect(),
            ..Catalog::default()
        }
    }

    /// Add a document's `custom_checks` declarations (located under `.custom_checks`); those
    /// the command line does not allow are declared but refused.
    pub fn declare(&mut self, declarations: &Value) -> Vec<Problem> {
        let Declarations::AllowedByName(allowed) = &self.declarations else {
            return vec![Problem::new(
                ".custom_checks",
                "this server runs only the custom checks its operator declared \
                 (evalctl serve --custom-check NAME=COMMAND)",
            )];
        };
        let before: BTreeSet<String> = self.custom.keys().cloned().collect();
        let problems = custom::declare(declarations, &mut self.custom);
        let declared: Vec<String> = self
            .custom
            .keys()
            .filter(|name| !before.contains(*name) && !allowed.contains(name))
            .cloned()
            .collect();
        self.refused.extend(declared);
        problems
    }
}
