//! The task-spec vocabulary: the typed task record and the closed sets of categories, metric names
//! and post-process rules, each with its wire name.

/// Declares a closed vocabulary: an enum, its wire names, `ALL`, `name()`, `parse()`, `names()`
/// and serialisation as the wire name.
macro_rules! vocabulary {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $wire:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)+
        }

        impl $name {
            /// Every value, in the order the spec lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The name used in task files and reports.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)+
                }
            }

            /// The value with this wire name, if any.
            pub fn parse(name: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|value| value.name() == name)
            }

            /// The wire names, comma-separated, for messages.
            pub fn names() -> String {
                $name::ALL.iter().map(|value| value.name()).collect::<Vec<_>>().join(", ")
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.name())
            }
        }
    };
}

vocabulary! {
    /// What kind of task a record is; it constrains the legal metrics.
    Category {
        /// Arithmetic word problems.
        Arithmetic => "arithmetic",
        /// Multiple choice with a single-letter answer A–E.
        Mcq => "mcq",
        /// Code generation checked by running assertions.
        CodeExec => "code_exec",
        /// Labelling.
        Classification => "classification",
        /// Free-text summarisation.
        Summary => "summary",
    }
}

vocabulary! {
    /// How a post-processed output is scored against the targets.
    MetricName {
        /// Equality with any target.
        ExactMatch => "exact_match",
        /// SQuAD v1.1 token F1, best target.
        F1 => "f1",
        /// sacrebleu sentence BLEU / 100, best target.
        Bleu4 => "bleu_4",
        /// rouge-score ROUGE-L F-measure, best target.
        RougeL => "rouge_l",
        /// Equality with any target (the MCQ / classification name).
        Accuracy => "accuracy",
        /// Fraction of target assertions that pass when run with python3.
        CodeExec => "code_exec",
    }
}

vocabulary! {
    /// The single deterministic rule applied to a model output before scoring.
    PostProcess {
        /// Unchanged.
        None => "none",
        /// Leading and trailing whitespace removed.
        StripWhitespace => "strip_whitespace",
        /// Lowercased.
        Lower => "lower",
        /// The first A–E standing alone, else the first A–E anywhere, else empty.
        ExtractLetter => "extract_letter",
        /// The body of the first fenced code block, else the text itself.
        ExtractCodeBlock => "extract_code_block",
        /// The first non-empty line, trimmed.
        ExtractFirstLine => "extract_first_line",
    }
}

impl Category {
    /// The metrics a task of this category may use.
    pub fn legal_metrics(self) -> &'static [MetricName] {
        use MetricName::*;
        match self {
            Category::Arithmetic => &[ExactMatch, F1],
            Category::Mcq => &[ExactMatch, Accuracy],
            Category::CodeExec => &[CodeExec],
            Category::Classification => &[ExactMatch, Accuracy, F1],
            Category::Summary => &[ExactMatch, F1, Bleu4, RougeL],
        }
    }
}

/// One few-shot example, rendered as `prompt + " " + completion`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FewShotExample {
    /// The example's prompt.
    pub prompt: String,
    /// The example's answer.
    pub completion: String,
}

/// A task record that passed validation.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Unique id, `[A-Za-z0-9_-]+`.
    pub task_id: String,
    /// The category.
    pub category: Category,
    /// The task prompt, without few-shot examples.
    pub prompt: String,
    /// The acceptable answers (or, for `code_exec`, the assertions).
    pub targets: Vec<String>,
    /// The metric.
    pub metric: MetricName,
    /// The post-process rule.
    pub post_process: PostProcess,
    /// Few-shot examples, rendered in front of the prompt.
    pub few_shot_examples: Vec<FewShotExample>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabularies_round_trip() {
        for category in Category::ALL {
            assert_eq!(Category::parse(category.name()), Some(*category));
        }
        assert_eq!(MetricName::parse("bleu_4"), Some(MetricName::Bleu4));
        assert_eq!(PostProcess::parse("Lower"), None);
        assert_eq!(
            Category::names(),
            "arithmetic, mcq, code_exec, classification, summary"
        );
    }
}
