//! `provider_config` and `model_config` of the extended checks, validated as data (nothing is
//! resolved or sent here: `evaluator::check_calls` does that).
//!
//! `provider_config` (every member optional): `provider_name` (default `openai`), `base_url`
//! (one the command line allows; no user, password or query: credentials belong in the
//! environment), `api_key` as `"${NAME}"` or `api_key_env` as `NAME` (default
//! `<PROVIDER>_API_KEY`; a key itself is refused: it would sit in a file or a request), `timeout`
//! in seconds (default 30, at most 600) and `max_retries` (default 2, at most 5). `model_config`
//! needs `model`; its other members are sent as they are in the request body (`temperature`,
//! `dimensions`, ...).
//!
//! A check calls only an endpoint the user allows ([`EndpointPolicy`]: `--allow-endpoint`),
//! with the one key allowed for it: a check that names no endpoint, the one endpoint allowed.

use std::time::Duration;

use reqwest::Url;
use serde_json::{Map, Value};

use crate::input::strict;
use crate::secrets::default_key_env;

/// The provider of a check that names none.
const DEFAULT_PROVIDER: &str = "openai";

/// The members `provider_config` may hold.
const PROVIDER_KEYS: [&str; 6] = [
    "provider_name",
    "base_url",
    "api_key",
    "api_key_env",
    "timeout",
    "max_retries",
];

/// Where checks may send requests, and with which keys. A check's `provider_config` comes from
/// a request or checks file, which is not the user: it must not read the user's environment or
/// send the user's keys to a place of its choosing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointPolicy {
    /// A local command (`fep evaluate`, `run --checks`): only the endpoints its command line
    /// allows (`--allow-endpoint`), each with the key allowed for it. Not the user's defaults
    /// (`OPENAI_API_KEY` to the OpenAI endpoint): a file or request must not spend the user's
    /// key unasked.
    Local(Vec<AllowedEndpoint>),
    /// Only these endpoints (`evalctl serve --allow-endpoint`): a client must not read the
    /// server's environment, send its keys to a place of its choosing, or make it call others.
    Only(Vec<AllowedEndpoint>),
}

impl Default for EndpointPolicy {
    /// A local command that allows no endpoint.
    fn default() -> Self {
        EndpointPolicy::Local(Vec::new())
    }
}

impl EndpointPolicy {
    /// Settle where a check with `settings` sends its requests and which key it sends, or say
    /// why it may not: `(at, reason)`, `at` relative to the check's `arguments`. The reason
    /// names the key's variable, never its value, and of a URL the check names only its origin.
    pub fn admit(&self, settings: &mut ProviderSettings) -> Result<(), (String, String)> {
        // A provider other than the default picks which of the user's keys is sent
        // (`<PROVIDER>_API_KEY`, to wherever the user's base URL points): as if it named it. A
        // check that names its `base_url` gets the key allowed there, whatever its provider.
        let by_provider = matches!(settings.key, KeySource::ProviderDefault)
            && settings.provider != DEFAULT_PROVIDER
            && settings.base_url.is_none()
            && matches!(self, EndpointPolicy::Local(_));
        let provider_key = by_provider.then(|| default_key_env(&settings.provider));
        let named_key = match &settings.key {
            KeySource::Env(name) => Some(name.as_str()),
            KeySource::ProviderDefault | KeySource::None => provider_key.as_deref(),
        };
        let named_at = if by_provider {
            "provider_config.provider_name"
        } else {
            "provider_config.api_key"
        };
        let (allowed, local) = match self {
            EndpointPolicy::Local(allowed) => (allowed, true),
            EndpointPolicy::Only(allowed) => (allowed, false),
        };
        let refused = match allowed_endpoint(allowed, settings.base_url.as_deref(), named_key) {
            Ok(endpoint) => {
                settings.base_url = Some(endpoint.base_url.clone());
                settings.key = endpoint
                    .key_env
                    .clone()
                    .map_or(KeySource::None, KeySource::Env);
                return Ok(());
            }
            Err(refused) => refused,
        };
        let listed = || {
            let urls: Vec<&str> = allowed
                .iter()
                .map(|endpoint| endpoint.base_url.as_str())
                .collect();
            match (urls.is_empty(), local) {
                (false, _) => urls.join(", "),
                (true, true) => "none".to_string(),
                (true, false) => {
                    "none: its operator allows them with `evalctl serve --allow-endpoint`"
                        .to_string()
                }
            }
        };
        let lent = |endpoint: &AllowedEndpoint| {
            endpoint
                .key_env
                .as_deref()
                .map_or("none".to_string(), |lent| format!("`{lent}`"))
        };
        Err(match (refused, local) {
            (Refused::Endpoint, false) => (
                "provider_config.base_url".into(),
                format!(
                    "this server calls only the endpoints its operator allows ({})",
                    listed()
                ),
            ),
            (Refused::Key { named, endpoint }, false) => (
                "provider_config.api_key".into(),
                format!(
                    "this server does not lend the key in `{named}` for {} (leave the key out: \
                     the server uses {})",
                    endpoint.base_url,
                    lent(endpoint)
                ),
            ),
            (Refused::Endpoint, true) => match settings.base_url.as_deref() {
                Some(url) => (
                    "provider_config.base_url".into(),
                    format!(
                        "{} is not allowed: evalctl calls an endpoint that a request or checks \
                         file names only when the command line allows it (--allow-endpoint \
                         [KEY_ENV@]BASE_URL; allowed: {})",
                        origin(url),
                        listed()
                    ),
                ),
                None => match named_key {
                    Some(name) => (
                        named_at.into(),
                        format!(
                            "the key in `{name}` is not allowed: evalctl sends a key that a \
                             request or checks file names only to an endpoint the command line \
                             allows for it (--allow-endpoint {name}@BASE_URL; allowed: {})",
                            listed(),
                        ),
                    ),
                    None if allowed.is_empty() => (
                        "provider_config.base_url".into(),
                        "names no endpoint, and the command line allows none: a request or \
                         checks file calls a model, with your key, only where the command line \
                         allows it (--allow-endpoint [KEY_ENV@]BASE_URL, such as \
                         --allow-endpoint OPENAI_API_KEY@https://api.openai.com/v1)"
                            .to_string(),
                    ),
                    None => (
                        "provider_config.base_url".into(),
                        format!(
                            "names no endpoint, and the command line allows several: name one \
                             (allowed: {})",
                            listed()
                        ),
                    ),
                },
            },
            (Refused::Key { named, endpoint }, true) => (
                named_at.into(),
                format!(
                    "the key in `{named}` is not allowed for {}: the command line allows {} \
                     there (--allow-endpoint {named}@{} would allow it)",
                    endpoint.base_url,
                    lent(endpoint),
                    endpoint.base_url
                ),
            ),
        })
    }
}

/// Why [`allowed_endpoint`] found no endpoint for a check.
enum Refused<'a> {
    /// Its `base_url` (or, when it names none, the one endpoint) is not allowed.
    Endpoint,
    /// The endpoint is allowed, but not with the key the check names.
    Key {
        named: &'a str,
        endpoint: &'a AllowedEndpoint,
    },
}

/// A URL's scheme, host and port: all a message needs of a URL a file names (its path may carry
/// a token).
fn origin(url: &str) -> String {
    Url::parse(url).map_or_else(
        |_| "the base_url".to_string(),
        |url| url.origin().ascii_serialization(),
    )
}

/// An endpoint the operator allows, with the key lent for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedEndpoint {
    /// The base URL, without a trailing `/`.
    pub base_url: String,
    /// The environment variable holding its key; `None`: requests go without one.
    pub key_env: Option<String>,
}

impl AllowedEndpoint {
    /// The warning for an endpoint allowed with a key the environment does not hold: the calls
    /// there send none (a local endpoint's), or cannot be made (a remote one's).
    pub fn unset_key(&self) -> Option<String> {
        let name = self.key_env.as_deref()?;
        let set = std::env::var_os(name).is_some_and(|value| !value.is_empty());
        (!set).then(|| {
            format!(
                "--allow-endpoint {name}@{}: {name} is not set, so no key is sent there",
                origin(&self.base_url)
            )
        })
    }

    /// Count its key among the secrets this process keeps for others: no custom check's
    /// command gets it or shows it (see [`crate::secrets::held_env`]).
    pub fn hold_key(&self) {
        if let Some(name) = &self.key_env {
            crate::secrets::hold_env(name);
        }
    }

    /// `[KEY_ENV@]BASE_URL` (`OPENAI_API_KEY@https://api.openai.com/v1`).
    pub fn parse(value: &str) -> Result<AllowedEndpoint, String> {
        let (key_env, url) = match value.split_once('@') {
            Some((name, url)) if !name.contains(':') => (Some(name.to_string()), url),
            _ => (None, value),
        };
        if let Some(name) = key_env.as_deref().filter(|name| !is_env_name(name)) {
            return Err(format!("{name:?} is not an environment variable name"));
        }
        Ok(AllowedEndpoint {
            base_url: checked_base_url(url)?,
            key_env,
        })
    }
}

/// Where a check's key comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// This environment variable.
    Env(String),
    /// `<PROVIDER>_API_KEY`.
    ProviderDefault,
    /// No key is sent.
    None,
}

/// A provider as the check's arguments describe it.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    /// `provider_name`, lower-cased.
    pub provider: String,
    /// `base_url` (without a trailing `/`), when given or set by the policy.
    pub base_url: Option<String>,
    /// Where the key comes from.
    pub key: KeySource,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Extra attempts after a retryable failure.
    pub max_retries: u32,
    /// `model_config`: `model` and the parameters sent with it.
    pub model_config: Map<String, Value>,
}

impl ProviderSettings {
    /// Validate `provider_config` and `model_config`; `reserved` are body members
    /// `model_config` must not set (the check sets them). Each problem names its member. Where
    /// the check may call is the [`EndpointPolicy`]'s to settle.
    pub fn parse(
        provider_config: Option<&Value>,
        model_config: Option<&Value>,
        reserved: &[&str],
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
        let provider =
            text("provider_name").map_or(DEFAULT_PROVIDER.into(), |name| name.to_lowercase());
        let base_url = text("base_url");
        let (api_key, api_key_env) = (text("api_key"), text("api_key_env"));
        if !provider
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '-'))
        {
            problems.push(
                "provider_config.provider_name: letters, digits, `_` and `-` only".to_string(),
            );
        }
        let base_url = base_url.and_then(|url| {
            checked_base_url(&url)
                .map_err(|reason| problems.push(format!("provider_config.base_url: {reason}")))
                .ok()
        });
        let key_env = named_key_env(api_key, api_key_env, &mut problems);
        let timeout = match config.get("timeout") {
            None => 30.0,
            Some(value) => match value.as_f64().filter(|secs| *secs > 0.0 && *secs <= 600.0) {
                Some(secs) => secs,
                None => {
                    problems.push(format!(
                        "provider_config.timeout: expected a number of seconds above 0 and at \
                         most 600, found {value}"
                    ));
                    30.0
                }
            },
        };
        let max_retries = match config.get("max_retries") {
            None => 2,
            Some(value) => match value.as_u64().filter(|retries| *retries <= 5) {
                Some(retries) => retries as u32,
                None => {
                    problems.push(format!(
                        "provider_config.max_retries: expected a whole number from 0 to 5, \
                         found {value}"
                    ));
                    2
                }
            },
        };
        let model_config = model_parameters(model_config, reserved, &mut problems);
        let key = key_env.map_or(KeySource::ProviderDefault, KeySource::Env);
        if problems.is_empty() {
            Ok(ProviderSettings {
                provider,
                base_url,
                key,
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
fn named_key_env(
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
            // Never echoed: it may be a key pasted in the wrong place.
            problems.push(
                "provider_config.api_key_env: not an environment variable name (letters, \
                 digits and `_`)"
                    .to_string(),
            );
        }
        valid
    });
    if referenced.is_some() && named.is_some() {
        problems.push("provider_config: give `api_key` or `api_key_env`, not both".to_string());
    }
    referenced.or(named)
}

/// The allowed endpoint a check calls (the one rule of `--allow-endpoint`): the one its
/// `base_url` names (or the only one allowed), whose key must be the one the check names, if any.
fn allowed_endpoint<'a>(
    allowed: &'a [AllowedEndpoint],
    base_url: Option<&str>,
    key_env: Option<&'a str>,
) -> Result<&'a AllowedEndpoint, Refused<'a>> {
    let endpoint = match base_url {
        Some(url) => allowed.iter().find(|endpoint| endpoint.base_url == url),
        None if allowed.len() == 1 => allowed.first(),
        None => None,
    }
    .ok_or(Refused::Endpoint)?;
    match (key_env, endpoint.key_env.as_deref()) {
        (Some(named), lent) if Some(named) != lent => Err(Refused::Key { named, endpoint }),
        _ => Ok(endpoint),
    }
}

/// A check's or the operator's base URL: http(s), without user, password, query or fragment
/// (credentials belong in the environment), without a trailing `/`. The URL is not repeated in
/// the reason: it may carry a credential.
fn checked_base_url(url: &str) -> Result<String, String> {
    let parsed = Url::parse(url.trim()).map_err(|err| format!("not a valid URL ({err})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("must be an http:// or https:// URL".to_string());
    }
    if !parsed.username().is_empty() || parsed.password().is_some() || parsed.query().is_some() {
        return Err(
            "must not carry a user, password or query (a key belongs in an environment \
             variable)"
                .to_string(),
        );
    }
    if parsed.fragment().is_some() {
        return Err("must not have a #fragment".to_string());
    }
    Ok(parsed.as_str().trim_end_matches('/').to_string())
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

    fn parse(provider: Value) -> Result<ProviderSettings, Vec<String>> {
        ProviderSettings::parse(Some(&provider), Some(&json!({"model": "m"})), &["input"])
    }

    /// `provider` admitted by `policy`: the settings, or the refusal's reason.
    fn admit(provider: Value, policy: &EndpointPolicy) -> Result<ProviderSettings, String> {
        let mut settings = parse(provider).unwrap();
        policy
            .admit(&mut settings)
            .map(|()| settings)
            .map_err(|(at, reason)| format!("{at}: {reason}"))
    }

    #[test]
    fn keys_are_named_never_written() {
        let settings = parse(json!({"api_key": "${MY_KEY}", "timeout": 5})).unwrap();
        assert_eq!(settings.key, KeySource::Env("MY_KEY".into()));
        assert_eq!(settings.timeout, Duration::from_secs(5));
        for provider in [
            json!({"api_key": "sk-secret1"}),
            json!({"api_key_env": "sk-secret1"}),
            json!({"base_url": "https://u:sk-secret1@api.example/v1"}),
            json!({"base_url": "https://api.example/v1?key=sk-secret1"}),
        ] {
            let problems = parse(provider).unwrap_err();
            assert!(!problems[0].contains("sk-secret1"), "{problems:?}");
        }
    }

    #[test]
    fn a_server_calls_only_the_endpoints_it_allows_with_their_keys() {
        let only = EndpointPolicy::Only(vec![
            AllowedEndpoint::parse("OPENAI_API_KEY@https://api.openai.com/v1/").unwrap(),
            AllowedEndpoint::parse("http://127.0.0.1:8000/v1").unwrap(),
        ]);
        let openai = admit(json!({"base_url": "https://api.openai.com/v1"}), &only).unwrap();
        assert_eq!(openai.key, KeySource::Env("OPENAI_API_KEY".into()));
        let local = admit(json!({"base_url": "http://127.0.0.1:8000/v1"}), &only).unwrap();
        assert_eq!(local.key, KeySource::None);
        let foreign = admit(json!({"base_url": "https://evil.example/v1"}), &only).unwrap_err();
        assert!(foreign.contains("calls only the endpoints its operator allows"));
        assert!(
            admit(json!({}), &only).is_err(),
            "two endpoints: one must be named"
        );
        let stolen = admit(
            json!({"base_url": "http://127.0.0.1:8000/v1", "api_key_env": "OPENAI_API_KEY"}),
            &only,
        )
        .unwrap_err();
        assert!(stolen.contains("does not lend the key in `OPENAI_API_KEY`"));
        assert!(AllowedEndpoint::parse("1X@https://a.example/v1").is_err());
    }

    #[test]
    fn a_local_command_calls_only_the_endpoints_it_allows() {
        let none = EndpointPolicy::default();
        // A check that names nothing would spend the user's key at the user's endpoint.
        assert_eq!(
            admit(json!({"provider_name": "OpenAI"}), &none).unwrap_err(),
            "provider_config.base_url: names no endpoint, and the command line allows none: a \
             request or checks file calls a model, with your key, only where the command line \
             allows it (--allow-endpoint [KEY_ENV@]BASE_URL, such as --allow-endpoint \
             OPENAI_API_KEY@https://api.openai.com/v1)"
        );
        let openai = EndpointPolicy::Local(vec![AllowedEndpoint::parse(
            "OPENAI_API_KEY@https://api.openai.com/v1",
        )
        .unwrap()]);
        let defaults = admit(json!({}), &openai).unwrap();
        assert_eq!(
            (defaults.base_url.as_deref(), defaults.key),
            (
                Some("https://api.openai.com/v1"),
                KeySource::Env("OPENAI_API_KEY".into())
            )
        );
        let two = EndpointPolicy::Local(vec![
            AllowedEndpoint::parse("OPENAI_API_KEY@https://api.openai.com/v1").unwrap(),
            AllowedEndpoint::parse("http://127.0.0.1:9/v1").unwrap(),
        ]);
        assert_eq!(
            admit(json!({}), &two).unwrap_err(),
            "provider_config.base_url: names no endpoint, and the command line allows several: \
             name one (allowed: https://api.openai.com/v1, http://127.0.0.1:9/v1)"
        );
        // Another provider picks which key is sent: it needs the command line's say-so.
        assert_eq!(
            admit(json!({"provider_name": "dd"}), &none).unwrap_err(),
            "provider_config.provider_name: the key in `DD_API_KEY` is not allowed: evalctl \
             sends a key that a request or checks file names only to an endpoint the command \
             line allows for it (--allow-endpoint DD_API_KEY@BASE_URL; allowed: none)"
        );
        let groq = EndpointPolicy::Local(vec![AllowedEndpoint::parse(
            "GROQ_API_KEY@https://api.groq.com/openai/v1",
        )
        .unwrap()]);
        let allowed = admit(json!({"provider_name": "groq"}), &groq).unwrap();
        let local = EndpointPolicy::Local(vec![
            AllowedEndpoint::parse("http://127.0.0.1:9/v1").unwrap()
        ]);
        let named = admit(
            json!({"provider_name": "vllm", "base_url": "http://127.0.0.1:9/v1"}),
            &local,
        )
        .unwrap();
        assert_eq!(named.key, KeySource::None, "the endpoint's key, none");
        assert_eq!(
            (allowed.base_url.as_deref(), allowed.key),
            (
                Some("https://api.groq.com/openai/v1"),
                KeySource::Env("GROQ_API_KEY".into())
            )
        );
        assert_eq!(
            admit(
                json!({"base_url": "http://127.0.0.1:9/v1/tok3n", "api_key_env": "GITHUB_TOKEN"}),
                &none
            )
            .unwrap_err(),
            "provider_config.base_url: http://127.0.0.1:9 is not allowed: evalctl calls an \
             endpoint that a request or checks file names only when the command line allows it \
             (--allow-endpoint [KEY_ENV@]BASE_URL; allowed: none)"
        );
        assert_eq!(
            admit(json!({"api_key_env": "GITHUB_TOKEN"}), &none).unwrap_err(),
            "provider_config.api_key: the key in `GITHUB_TOKEN` is not allowed: evalctl sends a \
             key that a request or checks file names only to an endpoint the command line \
             allows for it (--allow-endpoint GITHUB_TOKEN@BASE_URL; allowed: none)"
        );
        let keyless = EndpointPolicy::Local(vec![
            AllowedEndpoint::parse("http://127.0.0.1:9/v1").unwrap()
        ]);
        assert_eq!(
            admit(
                json!({"base_url": "http://127.0.0.1:9/v1", "api_key_env": "GITHUB_TOKEN"}),
                &keyless
            )
            .unwrap_err(),
            "provider_config.api_key: the key in `GITHUB_TOKEN` is not allowed for \
             http://127.0.0.1:9/v1: the command line allows none there (--allow-endpoint \
             GITHUB_TOKEN@http://127.0.0.1:9/v1 would allow it)"
        );
        let allowed = admit(json!({"base_url": "http://127.0.0.1:9/v1"}), &keyless).unwrap();
        assert_eq!(allowed.key, KeySource::None, "the default key is not sent");
    }

    #[test]
    fn every_problem_is_named() {
        let problems = ProviderSettings::parse(
            Some(&json!({"timeout": 0, "max_retries": -1, "region": "x", "provider_name": "a/b"})),
            Some(&json!({"temperature": 0, "input": "x"})),
            &["input"],
        )
        .unwrap_err();
        assert_eq!(problems.len(), 6, "{problems:?}");
    }
}
