//! The rules of the validators and the post-execution checks their `file:` targets name.

use std::collections::HashSet;

use super::problems::{blank, check_key, Problems};
use crate::evaluation_spec::evidence::{is_supported_reference, unsupported_reference};
use crate::evaluation_spec::model::SpecDefinition;
use crate::evaluation_spec::validators;
use crate::input::strict;

/// The validators' and post-execution checks' rules, then every `file:` target against the
/// checks; returns the validator keys.
pub(super) fn validate(spec: &SpecDefinition, problems: &mut Problems) -> HashSet<String> {
    let validator_keys = validate_validators(spec, problems);
    let check_keys = validate_post_execution_checks(spec, problems);
    validate_file_targets(spec, &check_keys, problems);
    validator_keys
}

fn validate_validators(spec: &SpecDefinition, problems: &mut Problems) -> HashSet<String> {
    let mut keys = HashSet::new();
    for (i, validator) in spec.validators.iter().enumerate() {
        let path = format!("evaluation_spec.validators[{i}]");
        let kind = validator.kind.as_str();
        check_key(&validator.key, &path, &mut keys, problems);
        if !validators::is_known_type(kind) {
            problems.add(
                format!("{path}.type"),
                format!(
                    "is not a supported validator type {}",
                    strict::hint(
                        kind,
                        validators::VALIDATOR_TYPES.iter().copied(),
                        &format!("supported: {}", validators::VALIDATOR_TYPES.join(", "))
                    )
                ),
            );
        }
        for problem in validators::check_config(kind, validator.config.as_ref()) {
            problems.add(format!("{path}.config{}", problem.at), problem.message);
        }
        let target = validator.target.trim();
        if target.is_empty() {
            problems.add(format!("{path}.target"), "is required");
        } else if kind == "tool_call_assertion" {
            if target != "tool_calls" {
                problems.add(
                    format!("{path}.target"),
                    "must be \"tool_calls\" for tool_call_assertion validators",
                );
            }
        } else if !is_supported_reference(&validator.target) {
            problems.add(
                format!("{path}.target"),
                unsupported_reference(&validator.target),
            );
        }
        let expected_from = validator.expected_from.trim();
        if validators::needs_expected(kind) {
            if expected_from.is_empty() {
                problems.add(format!("{path}.expected_from"), "is required");
            } else if !is_supported_reference(&validator.expected_from) {
                problems.add(
                    format!("{path}.expected_from"),
                    unsupported_reference(&validator.expected_from),
                );
            }
        } else if validators::forbids_expected(kind) && !expected_from.is_empty() {
            problems.add(
                format!("{path}.expected_from"),
                format!("must be omitted for {kind} validators"),
            );
        }
        if validators::needs_file_target(kind)
            && !target.is_empty()
            && !validator.target.starts_with("file:")
        {
            problems.add(
                format!("{path}.target"),
                "must use file: prefix for file validators",
            );
        }
        let check_key = validator
            .target
            .strip_prefix("file:")
            .unwrap_or(&validator.target);
        if kind == "code_execution" {
            match spec
                .post_execution_checks
                .iter()
                .find(|check| check.key == check_key)
            {
                None => problems.add(
                    format!("{path}.target"),
                    format!("references unknown post_execution_check key {check_key:?}"),
                ),
                Some(check) if check.kind != "file_capture" => problems.add(
                    format!("{path}.target"),
                    "must reference a file_capture post_execution_check",
                ),
                Some(_) => {}
            }
        }
        if kind == "postcondition"
            && validator.target.starts_with("file:")
            && spec.post_execution_checks.is_empty()
        {
            problems.add(
                format!("{path}.target"),
                format!("references unknown post_execution_check key {check_key:?}"),
            );
        }
    }
    keys
}

fn validate_post_execution_checks(
    spec: &SpecDefinition,
    problems: &mut Problems,
) -> HashSet<String> {
    let mut keys = HashSet::new();
    for (i, check) in spec.post_execution_checks.iter().enumerate() {
        let path = format!("evaluation_spec.post_execution_checks[{i}]");
        check_key(&check.key, &path, &mut keys, problems);
        if !matches!(check.kind.as_str(), "file_capture" | "directory_listing") {
            problems.add(
                format!("{path}.type"),
                "must be file_capture or directory_listing",
            );
        }
        if blank(&check.path) {
            problems.add(format!("{path}.path"), "is required");
        }
        problems.at_least_zero(check.max_size_bytes, format!("{path}.max_size_bytes"));
    }
    keys
}

/// With any post-execution check declared, every `file:` target must name one.
fn validate_file_targets(
    spec: &SpecDefinition,
    check_keys: &HashSet<String>,
    problems: &mut Problems,
) {
    if check_keys.is_empty() {
        return;
    }
    for (i, validator) in spec.validators.iter().enumerate() {
        if let Some(key) = validator.target.strip_prefix("file:") {
            if !check_keys.contains(key) {
                problems.add(
                    format!("evaluation_spec.validators[{i}].target"),
                    format!("references unknown post_execution_check key {key:?}"),
                );
            }
        }
    }
}
