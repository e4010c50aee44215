//! The evaluation-spec validators: one registry of the 21 validator types, their load-time config
//! checks and their comparisons over resolved evidence.
