//! `provider_config` and `model_config` of the extended checks, validated as data (nothing is
//! resolved or sent here: `evaluator::check_calls` does that).
//!
//! `provider_config` (every member optional): `provider_name` (default `openai`), `base_url`
//! (default as for `--judge-model`), `api_key` as `"${NAME}"` or `api_key_env` as `NAME` (default
//! `<PROVIDER>_API_KEY`; a key itself is refused: it would sit in a file or a request), `timeout`
//! in seconds (default 30) and `max_retries` (default 2). `model_config` needs `model`; its other
//! members are sent as they are in the request body (`temperature`, `dimensions`, ...).

use std::time::Duration;

use serde_json::{Map, Value};

use crate::input::strict;
use crate::secrets::default_key_env;

/// The members `provider_config` may hold.
const PROVIDER_KEYS: [&str; 6] = [
    "provider_name",
    "base_url",
    "api_key",
    "api_key_env",
    "timeout",
    "max_retries",
];

/// Which environment variables a check may name as its key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum KeyPolicy {
    /// Any (a local command: the user's own environment).
    #[default]
    Any,
    /// Only these (`evalctl serve --allow-key-env NAME`: a client must not read the server's
    /// environment, nor send its keys to a `base_url` of its choosing).
    Only(Vec<String>),
}

/// A provider as the check's arguments describe it.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    /// `provider_name`, lower-cased.
    pub provider: String,
    /// `base_url`, when given.
    pub base_url: Option<String>,
    /// The environment variable the key is read from, when given (else `<PROVIDER>_API_KEY`).
    pub key_env: Option<String>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Extra attempts after a retryable failure.
    pub max_retries: u32,
    /// `model_config`: `model` and the parameters sent with it.
    pub model_config: Map<String, Value>,
}

impl ProviderSettings {
    /// Validate `provider_config` and `model_config`; `reserved` are body members
    /// `model_config` must not set (the check sets them). Each problem names its member.
    pub fn parse(
        provider_config: Option<&Value>,
        model_config: Option<&Value>,
        reserved: &[&str],
        keys: &KeyPolicy,
    ) -> Result<ProviderSettings, Vec<String>> {
        let mut problems = Vec::new();
        let empty = Map::new();
        let config = provider_config.and_then(Value::as_object).unwrap_or(&empty);
        problems.extend(
            strict::unknown_keys(config, &PROVIDER_KEYS).map(|(key, reason)| {
                format!("provider_config.{}: {reason}", strict::key_name(key))
            }),
        );
        let mut text = |key: &str| match config.get(key) {
            None => None,
            Some(Value::String(text)) if !text.trim().is_empty() => Some(text.trim().to_string()),
            Some(other) => {
                problems.push(format!(
                    "provider_config.{key}: {}",
                    strict::wrong_type("a non-empty string", other)
                ));
                None
            }
        };
        let provider = text("provider_name").map_or("openai".into(), |name| name.to_lowercase());
        let base_url = text("base_url");
        let (api_key, api_key_env) = (text("api_key"), text("api_key_env"));
        let key_env = key_env(api_key, api_key_env, &mut problems);
        let timeout = match config.get("timeout") {
            None => 30.0,
            Some(value) => match value.as_f64().filter(|secs| *secs > 0.0 && *secs <= 3600.0) {
                Some(secs) => secs,
                None => {
                    problems.push(format!(
                        "provider_config.timeout: expected a number of seconds above 0 and at \
                         most 3600, found {value}"
                    ));
                    30.0
                }
            },
        };
        let max_retries = match config.get("max_retries") {
            None => 2,
            Some(value) => match value.as_u64().filter(|retries| *retries <= 10) {
                Some(retries) => retries as u32,
                None => {
                    problems.push(format!(
                        "provider_config.max_retries: expected a whole number from 0 to 10, \
                         found {value}"
                    ));
                    2
                }
            },
        };
        let model_config = model_parameters(model_config, reserved, &mut problems);
        if let KeyPolicy::Only(allowed) = keys {
            let name = key_env
                .clone()
                .unwrap_or_else(|| default_key_env(&provider));
            if !allowed.contains(&name) {
                problems.push(format!(
                    "provider_config.api_key: this server does not lend the key in `{name}` \
                     (its operator allows it with `evalctl serve --allow-key-env {name}`)"
                ));
            }
        }
        if problems.is_empty() {
            Ok(ProviderSettings {
                provider,
                base_url,
                key_env,
                timeout: Duration::from_secs_f64(timeout),
                max_retries,
                model_config,
            })
        } else {
            Err(problems)
        }
    }

    /// The model named in `model_config`.
    pub fn model(&self) -> &str {
        self.model_config
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

/// The environment variable named by `api_key` (`"${NAME}"`) or `api_key_env` (`NAME`).
fn key_env(
    api_key: Option<String>,
    api_key_env: Option<String>,
    problems: &mut Vec<String>,
) -> Option<String> {
    let referenced = api_key.and_then(|reference| {
        let name = reference
            .strip_prefix("${")
            .and_then(|rest| rest.strip_suffix('}'))
            .filter(|name| is_env_name(name));
        if name.is_none() {
            // Never echoed: it may be the key itself.
            problems.push(
                "provider_config.api_key: must name an environment variable as \"${NAME}\" \
                 (a key written into a request or checks file is refused)"
                    .to_string(),
            );
        }
        name.map(str::to_string)
    });
    let named = api_key_env.filter(|name| {
        let valid = is_env_name(name);
        if !valid {
            problems.push(format!(
                "provider_config.api_key_env: {name:?} is not an environment variable name"
            ));
        }
        valid
    });
    if referenced.is_some() && named.is_some() {
        problems.push("provider_config: give `api_key` or `api_key_env`, not both".to_string());
    }
    referenced.or(named)
}

fn is_env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|ch: char| ch.is_ascii_digit())
        && name
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// `model_config` as the body members to send: `model` a non-empty string, none of `reserved`.
fn model_parameters(
    model_config: Option<&Value>,
    reserved: &[&str],
    problems: &mut Vec<String>,
) -> Map<String, Value> {
    let Some(config) = model_config.and_then(Value::as_object) else {
        problems.push("model_config: missing (it names the `model`)".to_string());
        return Map::new();
    };
    match config.get("model") {
        Some(Value::String(model)) if !model.trim().is_empty() => {}
        Some(other) => problems.push(format!(
            "model_config.model: {}",
            strict::wrong_type("a non-empty string", other)
        )),
        None => problems.push("model_config.model: missing".to_string()),
    }
    for key in config.keys() {
        if reserved.contains(&key.as_str()) {
            problems.push(format!(
                "model_config.{}: set by the check itself",
                strict::key_name(key)
            ));
        }
    }
    config.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(provider: Value, keys: &KeyPolicy) -> Result<ProviderSettings, Vec<String>> {
        ProviderSettings::parse(
            Some(&provider),
            Some(&json!({"model": "m"})),
            &["input"],
            keys,
        )
    }

    #[test]
    fn keys_are_named_never_written() {
        let settings = parse(
            json!({"api_key": "${MY_KEY}", "timeout": 5}),
            &KeyPolicy::Any,
        )
        .unwrap();
        assert_eq!(settings.key_env.as_deref(), Some("MY_KEY"));
        assert_eq!(settings.timeout, Duration::from_secs(5));
        let problems = parse(json!({"api_key": "sk-secret"}), &KeyPolicy::Any).unwrap_err();
        assert!(problems[0].contains("must name an environment variable"));
        assert!(!problems[0].contains("sk-secret"));
    }

    #[test]
    fn a_server_lends_only_the_keys_it_allows() {
        let only = KeyPolicy::Only(vec!["OPENAI_API_KEY".into()]);
        assert!(parse(json!({}), &only).is_ok());
        let problems = parse(json!({"api_key_env": "AWS_SECRET"}), &only).unwrap_err();
        assert!(problems[0].contains("does not lend the key in `AWS_SECRET`"));
    }

    #[test]
    fn every_problem_is_named() {
        let problems = ProviderSettings::parse(
            Some(&json!({"timeout": 0, "max_retries": -1, "region": "x"})),
            Some(&json!({"temperature": 0, "input": "x"})),
            &["input"],
            &KeyPolicy::Any,
        )
        .unwrap_err();
        assert_eq!(problems.len(), 5, "{problems:?}");
    }
}
