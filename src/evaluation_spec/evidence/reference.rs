//! The evidence references validation accepts at load time (the evidence-reference table of
//! `docs/spec.md`, "Validators"), and the message for one it refuses.

/// Whether `reference` is an evidence reference validation accepts (the evidence-reference table
/// of `docs/spec.md`, "Validators"). `tool_calls` is not one: it is only a `tool_call_assertion`
/// target.
pub fn is_supported_reference(reference: &str) -> bool {
    match reference {
        "final_output"
        | "run.final_output"
        | "challenge_input"
        | "case.payload"
        | "transcript.full"
        | "transcript.from_mismatch"
        | "turn.expectations" => return true,
        _ => {}
    }
    for prefix in [
        "case.payload.",
        "case.inputs.",
        "case.expectations.",
        "artifact.",
    ] {
        if let Some(path) = reference.strip_prefix(prefix) {
            let path = path.trim();
            return !path.is_empty() && path.split('.').all(|segment| !segment.trim().is_empty());
        }
    }
    if let Some(key) = reference.strip_prefix("file:") {
        return !key.trim().is_empty();
    }
    if reference.starts_with("literal:") {
        return true;
    }
    if let Some(count) = reference.strip_prefix("transcript.last_n:") {
        return count.trim().parse::<i64>().is_ok_and(|n| n > 0);
    }
    false
}

/// The fixed evidence references, the ones a misspelt reference is compared with.
const FIXED_REFERENCES: &[&str] = &[
    "final_output",
    "run.final_output",
    "challenge_input",
    "case.payload",
    "transcript.full",
    "transcript.from_mismatch",
    "turn.expectations",
];

/// Every form of evidence reference, as `spec validate` lists them.
const REFERENCE_FORMS: &str = "final_output, run.final_output, challenge_input, \
    case.payload[.PATH], case.inputs.KEY[.PATH], case.expectations.KEY[.PATH], \
    artifact.KEY[.PATH], file:KEY, literal:TEXT, transcript.full, transcript.last_n:N, \
    transcript.from_mismatch, turn.expectations";

/// What is wrong with `reference`, which [`is_supported_reference`] refused: `must be a supported
/// evidence reference (did you mean `final_output`? supported: …)`.
pub fn unsupported_reference(reference: &str) -> String {
    let hint = crate::input::strict::hint(
        reference.trim(),
        FIXED_REFERENCES.iter().copied(),
        &format!("supported: {REFERENCE_FORMS}"),
    );
    format!("must be a supported evidence reference {hint}")
}
