//! Where requests to an OpenAI-compatible API go and with which key: the `PROVIDER/MODEL` split,
//! the base URL (the base-URL flag, else `EVALCTL_JUDGE_BASE_URL`, else `OPENAI_BASE_URL` for
//! `openai`, else the provider's public default) and the API key (the key-env flag, else
//! `<PROVIDER>_API_KEY`). Each user of the client names its own flags ([`EndpointFlags`]).

use crate::secrets::{default_key_env, Secret};
use std::net::IpAddr;

use reqwest::Url;

use crate::error::bad_flag;

/// Providers with a default endpoint, as `(name, base URL)`. Any other provider needs a base URL.
pub const PROVIDERS: &[(&str, &str)] = &[
    ("openai", "https://api.openai.com/v1"),
    ("openrouter", "https://openrouter.ai/api/v1"),
    ("together", "https://api.together.xyz/v1"),
    ("groq", "https://api.groq.com/openai/v1"),
    ("fireworks", "https://api.fireworks.ai/inference/v1"),
    ("deepseek", "https://api.deepseek.com/v1"),
    ("mistral", "https://api.mistral.ai/v1"),
    ("xai", "https://api.x.ai/v1"),
    (
        "gemini",
        "https://generativelanguage.googleapis.com/v1beta/openai",
    ),
    ("anthropic", "https://api.anthropic.com/v1"),
    ("ollama", "http://localhost:11434/v1"),
    ("vllm", "http://localhost:8000/v1"),
    ("llamacpp", "http://localhost:8080/v1"),
    ("lmstudio", "http://localhost:1234/v1"),
    ("litellm", "http://localhost:4000/v1"),
];

/// The environment variable that overrides the base URL for every provider.
pub const BASE_URL_ENV: &str = "EVALCTL_JUDGE_BASE_URL";

/// The flags an endpoint is configured with, as messages name them.
#[derive(Debug, Clone, Copy)]
pub struct EndpointFlags {
    /// `--judge-model`.
    pub model: &'static str,
    /// `--judge-base-url`.
    pub base_url: &'static str,
    /// `--judge-api-key-env`.
    pub api_key_env: &'static str,
}

/// A model as its flags name it: `PROVIDER/MODEL`, the base URL when one is given and the
/// variable holding the key when one is named (else the provider's defaults, see [`Endpoint`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointSpec {
    /// `PROVIDER/MODEL`.
    pub model: String,
    /// The base-URL flag (`--judge-base-url`, `--base-url`, `--task-base-url`).
    pub base_url: Option<String>,
    /// The key-env flag (`--judge-api-key-env`, `--api-key-env`, `--task-api-key-env`).
    pub api_key_env: Option<String>,
}

impl EndpointSpec {
    /// The base URL its calls go to when it is not the provider's default (which the model's
    /// name tells): the flag's, else the one the environment gives ([`base_url_from_env`]).
    /// What call and completion keys cover, so results of one server are never another's.
    pub fn chosen_base_url(&self) -> Option<String> {
        let provider = self
            .model
            .split_once('/')
            .map_or("", |(provider, _)| provider);
        self.base_url.clone().or_else(|| {
            base_url_from_env(&provider.to_ascii_lowercase(), |name| {
                std::env::var(name).ok()
            })
            .map(|(_, url)| url)
        })
    }

    /// The endpoint and key these flags name, looked up in the process environment; `flags`
    /// name the flags in messages. Problems are bad input (exit 2).
    pub fn resolve(&self, flags: EndpointFlags) -> anyhow::Result<Endpoint> {
        Endpoint::resolve_for(
            flags,
            &self.model,
            self.base_url.as_deref(),
            self.api_key_env.as_deref(),
            |name| std::env::var(name).ok(),
        )
    }
}

/// The base URL the environment gives a call to `provider` (lower-cased) whose flags name none,
/// with the variable that gives it: `EVALCTL_JUDGE_BASE_URL`, else `OPENAI_BASE_URL` for
/// `openai`; `env` looks a variable up (an empty one counts as unset).
pub fn base_url_from_env(
    provider: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Option<(&'static str, String)> {
    let env_nonempty = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    env_nonempty(BASE_URL_ENV)
        .map(|url| (BASE_URL_ENV, url))
        .or_else(|| {
            (provider == "openai")
                .then(|| env_nonempty("OPENAI_BASE_URL"))
                .flatten()
                .map(|url| ("OPENAI_BASE_URL", url))
        })
}

/// The judge's flags.
pub const JUDGE_FLAGS: EndpointFlags = EndpointFlags {
    model: "--judge-model",
    base_url: "--judge-base-url",
    api_key_env: "--judge-api-key-env",
};

/// A resolved judge endpoint.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The provider, lower-cased (the part of `--judge-model` before the first `/`).
    pub provider: String,
    /// The model id sent to the API (everything after the first `/`).
    pub model: String,
    /// The base URL (ends before `/chat/completions`).
    pub base: Url,
    /// `{base}/chat/completions`, with the base's query string kept.
    pub chat_url: Url,
    /// The environment variable the key is read from.
    pub key_env: String,
    /// The key, when that variable is set and non-empty.
    pub key: Option<Secret>,
}

impl Endpoint {
    /// Resolve `--judge-model`, `--judge-base-url` and `--judge-api-key-env` against the
    /// environment (`env` looks a variable up). Problems are bad input (exit 2).
    pub fn resolve(
        judge_model: &str,
        base_url: Option<&str>,
        api_key_env: Option<&str>,
        env: impl Fn(&str) -> Option<String>,
    ) -> anyhow::Result<Endpoint> {
        Endpoint::resolve_for(JUDGE_FLAGS, judge_model, base_url, api_key_env, env)
    }

    /// [`Endpoint::resolve`] for a client configured with other `flags` (`tasks run --model`).
    pub fn resolve_for(
        flags: EndpointFlags,
        judge_model: &str,
        base_url: Option<&str>,
        api_key_env: Option<&str>,
        env: impl Fn(&str) -> Option<String>,
    ) -> anyhow::Result<Endpoint> {
        let (provider, model) = judge_model
            .split_once('/')
            .filter(|(provider, model)| !provider.trim().is_empty() && !model.trim().is_empty())
            .ok_or_else(|| {
                bad_flag(
                    flags.model,
                    format!("{judge_model:?}: expected PROVIDER/MODEL, e.g. openai/gpt-4o-mini"),
                )
            })?;
        let provider_lower = provider.to_ascii_lowercase();
        let env_nonempty = |name: &str| env(name).filter(|value| !value.trim().is_empty());

        let (source, url) = if let Some(url) = base_url {
            (flags.base_url.to_string(), url.to_string())
        } else if let Some((variable, url)) = base_url_from_env(&provider_lower, &env) {
            (variable.to_string(), url)
        } else if let Some((_, url)) = PROVIDERS.iter().find(|(name, _)| *name == provider_lower) {
            (format!("the {provider_lower} default"), url.to_string())
        } else {
            let known: Vec<&str> = PROVIDERS.iter().map(|(name, _)| *name).collect();
            return Err(bad_flag(
                flags.model,
                format!(
                    "{judge_model:?}: provider {provider:?} has no default endpoint; pass \
                     {} URL or set {BASE_URL_ENV} (providers with a default: {})",
                    flags.base_url,
                    known.join(", ")
                ),
            ));
        };
        let base = parse_base_url(&url).map_err(|reason| {
            let shown = crate::transport::shown_url(&url);
            bad_flag(&source, format!("{shown:?}: {reason}"))
        })?;
        let chat_url = url_for(&base, "chat/completions");

        let key_env = match api_key_env {
            Some(name) => {
                if name.is_empty() || name.contains(['=', '\0']) {
                    return Err(bad_flag(
                        flags.api_key_env,
                        format!("{name:?}: not a valid environment variable name"),
                    ));
                }
                name.to_string()
            }
            None => default_key_env(provider),
        };
        let key = env_nonempty(&key_env).map(|key| Secret::new(key.trim().to_string()));
        // A user or password in the URL goes as `Authorization: Basic`, in place of the key.
        if key.is_some() && (!base.username().is_empty() || base.password().is_some()) {
            return Err(bad_flag(
                &source,
                format!(
                    "{}: the URL names a user or password, which would be sent in place of the \
                     API key in {key_env}: leave them out of the URL",
                    crate::transport::display_url(&base)
                ),
            ));
        }
        Ok(Endpoint {
            provider: provider_lower,
            model: model.to_string(),
            base,
            chat_url,
            key_env,
            key,
        })
    }

    /// The request field that carries `--judge-max-tokens`: OpenAI's own API wants
    /// `max_completion_tokens` (its o-series and gpt-5 models reject `max_tokens`); every other
    /// provider gets the classic `max_tokens`.
    pub fn max_tokens_field(&self) -> &'static str {
        if self.provider == "openai" {
            "max_completion_tokens"
        } else {
            "max_tokens"
        }
    }

    /// `{base}/{path}`, with the base's query kept.
    pub fn url_for(&self, path: &str) -> Url {
        url_for(&self.base, path)
    }

    /// Why no request can go out: the endpoint is remote and has no key. `flags` name the way
    /// out.
    pub fn missing_key(&self, flags: EndpointFlags) -> Option<String> {
        (self.key.is_none() && !self.is_local()).then(|| {
            format!(
                "no API key: {} is not set (export it, or name another variable with {}; only \
                 a local {} works without a key)",
                self.key_env, flags.api_key_env, flags.base_url
            )
        })
    }

    /// Whether the base URL points at this machine (`localhost`, `127.x.x.x`, `::1`), where a
    /// server usually needs no key.
    pub fn is_local(&self) -> bool {
        let Some(host) = self.base.host_str() else {
            return false;
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        host.eq_ignore_ascii_case("localhost")
            || host.to_ascii_lowercase().ends_with(".localhost")
            || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }
}

/// `{base}/{path}`, with the base's query kept.
fn url_for(base: &Url, path: &str) -> Url {
    let mut url = base.clone();
    url.set_path(&format!("{}/{path}", base.path().trim_end_matches('/')));
    url
}

fn parse_base_url(url: &str) -> Result<Url, String> {
    let parsed = Url::parse(url.trim()).map_err(|err| err.to_string())?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("the scheme must be http or https".into());
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err("the URL has no host".into());
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(
        model: &str,
        base: Option<&str>,
        key_env: Option<&str>,
        vars: &[(&str, &str)],
    ) -> anyhow::Result<Endpoint> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Endpoint::resolve(model, base, key_env, |name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn splits_at_the_first_slash() {
        let endpoint = resolve("openrouter/anthropic/claude-3.5-sonnet", None, None, &[]).unwrap();
        assert_eq!(endpoint.model, "anthropic/claude-3.5-sonnet");
        assert_eq!(
            endpoint.chat_url.as_str(),
            "https://openrouter.ai/api/v1/chat/completions"
        );
        assert_eq!(endpoint.key_env, "OPENROUTER_API_KEY");
        for bad in ["gpt-4o", "/gpt-4o", "openai/", " /x"] {
            assert!(resolve(bad, None, None, &[]).is_err(), "{bad}");
        }
    }

    #[test]
    fn base_url_precedence() {
        let chat = |model, base, vars: &[(&str, &str)]| {
            resolve(model, base, None, vars)
                .unwrap()
                .chat_url
                .to_string()
        };
        let vars = [
            ("EVALCTL_JUDGE_BASE_URL", "http://a.example/v1/"),
            ("OPENAI_BASE_URL", "http://b.example/v1"),
        ];
        assert_eq!(
            chat("openai/m", Some("http://c.example/x?api-version=1"), &vars),
            "http://c.example/x/chat/completions?api-version=1"
        );
        assert_eq!(
            chat("openai/m", None, &vars),
            "http://a.example/v1/chat/completions"
        );
        assert_eq!(
            chat("openai/m", None, &vars[1..]),
            "http://b.example/v1/chat/completions"
        );
        assert_eq!(
            chat("groq/m", None, &vars[1..]),
            "https://api.groq.com/openai/v1/chat/completions"
        );
        assert!(resolve("acme/m", None, None, &[]).is_err());
        assert!(resolve("acme/m", Some("ftp://x"), None, &[]).is_err());
        assert!(resolve("acme/m", Some("not a url"), None, &[]).is_err());
    }

    #[test]
    fn key_lookup_and_locality() {
        let endpoint = resolve("my-llm/m", Some("http://127.0.0.1:9/v1"), None, &[]).unwrap();
        assert_eq!(endpoint.key_env, "MY_LLM_API_KEY");
        assert!(endpoint.key.is_none());
        assert!(endpoint.is_local());
        let endpoint = resolve(
            "openai/m",
            Some("http://[::1]:8000/v1"),
            Some("MY_KEY"),
            &[("MY_KEY", "sk-1")],
        )
        .unwrap();
        assert_eq!(endpoint.key.as_ref().map(Secret::expose), Some("sk-1"));
        assert!(endpoint.is_local());
        assert!(!format!("{endpoint:?}").contains("sk-1"));
        let remote = resolve("openai/m", None, None, &[("OPENAI_API_KEY", " ")]).unwrap();
        assert!(remote.key.is_none());
        assert!(!remote.is_local());
        assert!(resolve("openai/m", None, Some("A=B"), &[]).is_err());
    }

    #[test]
    fn max_tokens_field_by_provider() {
        let field = |model| resolve(model, Some("http://127.0.0.1:9/v1"), None, &[]).unwrap();
        assert_eq!(
            field("OpenAI/o3-mini").max_tokens_field(),
            "max_completion_tokens"
        );
        assert_eq!(
            field("openrouter/openai/o3").max_tokens_field(),
            "max_tokens"
        );
        assert_eq!(field("ollama/llama3").max_tokens_field(), "max_tokens");
    }
}
