//! Evidence references and their resolution against one run (design page §3): the reference
//! forms accepted at load time, the run record (challenge inputs and events), the evidence built
//! from the ordered events, and the resolution of a reference to a string, "missing" or an error.

/// Whether `reference` is an evidence reference validation accepts (§3.1). `tool_calls` is not
/// one: it is only a `tool_call_assertion` target.
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
