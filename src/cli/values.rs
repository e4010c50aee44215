//! Value parsers several commands' flags share.

use std::path::PathBuf;

use crate::checks::AllowedEndpoint;
use crate::error::bad_flag;
use crate::evaluator::command::CommandSpec;

/// A whole number of 0 or more (`--retries`, `--max-errors`).
pub(super) fn parse_count<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("'{text}' is not a whole number of 0 or more"))
}

/// A bootstrap seed (`--seed`): any whole number a 64-bit unsigned integer holds.
pub(super) fn parse_seed(text: &str) -> Result<u64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("must be a whole number between 0 and {}", u64::MAX))
}

/// A whole number from `MIN` to `MAX` (`-j`, `--repeat`, `--max-concurrent`), said in words: the
/// flag takes negative numbers as its value, so `-1` reaches this reason instead of being read as
/// an unknown flag.
pub(super) fn parse_between<T: TryFrom<u64>, const MIN: u64, const MAX: u64>(
    text: &str,
) -> Result<T, String> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|number| (MIN..=MAX).contains(number))
        .and_then(|number| T::try_from(number).ok())
        .ok_or_else(|| format!("must be a whole number between {MIN} and {MAX}"))
}

/// A whole number of at least `MIN` (`--limit`, `--max-tokens`, `--retain`), said in words.
pub(super) fn parse_at_least<T: TryFrom<u64>, const MIN: u64>(text: &str) -> Result<T, String> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|number| *number >= MIN)
        .and_then(|number| T::try_from(number).ok())
        .ok_or_else(|| format!("must be a whole number of at least {MIN}"))
}

/// A command and the directory it runs in (`--evaluator-cwd`, `--model-cwd`, named by
/// `cwd_flag`), which must exist.
pub(super) fn command_spec(
    argv: Vec<String>,
    cwd: Option<PathBuf>,
    cwd_flag: &str,
) -> anyhow::Result<CommandSpec> {
    if let Some((dir, reason)) = cwd
        .as_ref()
        .and_then(|dir| Some((dir, crate::input::not_a_directory(dir)?)))
    {
        return Err(bad_flag(cwd_flag, format!("{}: {reason}", dir.display())));
    }
    Ok(CommandSpec { argv, cwd })
}

/// `--custom-check NAME=COMMAND`.
pub fn parse_custom_check(value: &str) -> Result<crate::checks::CustomCheck, String> {
    crate::checks::custom::parse_flag(value)
}

/// `--allow-custom-check NAME`.
pub fn parse_allowed_check(value: &str) -> Result<String, String> {
    crate::checks::custom::parse_allowed(value)
}

/// `--allow-endpoint [KEY_ENV@]BASE_URL` values. Parsed here, not by clap, whose error would
/// repeat the value (a URL may carry a password).
pub fn allowed_endpoints(values: &[String]) -> anyhow::Result<Vec<AllowedEndpoint>> {
    values
        .iter()
        .map(|value| {
            AllowedEndpoint::parse(value).map_err(|reason| bad_flag("--allow-endpoint", reason))
        })
        .collect()
}

/// The longest `--timeout` accepted: a day.
pub(super) const MAX_TIMEOUT_SECONDS: f64 = 86_400.0;

/// A number of seconds from 0.001 to a day (`--timeout` and the other time limits).
pub(super) fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number of seconds"))?;
    if !(0.001..=MAX_TIMEOUT_SECONDS).contains(&seconds) {
        return Err(format!(
            "'{text}' must be between 0.001 and {MAX_TIMEOUT_SECONDS} seconds"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}
