//! Value parsers several commands' flags share.

/// A whole number of 0 or more (`--retries`, `--max-errors`).
pub(super) fn parse_count<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("'{text}' is not a whole number of 0 or more"))
}

/// `--custom-check NAME=COMMAND`.
pub fn parse_custom_check(value: &str) -> Result<crate::checks::CustomCheck, String> {
    crate::checks::custom::parse_flag(value)
}
