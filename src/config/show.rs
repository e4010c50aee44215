//! `evalctl config show`: the resolved settings of a command, each with its value (secrets
//! masked) and where it came from, as a text table or one JSON document.

use serde::Serialize;

use crate::secrets::REDACTED;
use crate::transport::{display_url, shown_url};

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A flag on the command line (`--concurrency`).
    Flag(String),
    /// An environment variable (`EVALCTL_CONCURRENCY`).
    Env(String),
    /// The config file, at a line.
    File {
        /// The file as shown.
        file: String,
        /// The line of the key.
        line: usize,
    },
    /// The flag's default.
    Default,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Flag(flag) => write!(f, "flag {flag}"),
            Origin::Env(name) => write!(f, "env {name}"),
            Origin::File { file, line } => write!(f, "{file}:{line}"),
            Origin::Default => f.write_str("default"),
        }
    }
}

impl Serialize for Origin {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One setting of the command.
#[derive(Debug, Clone, Serialize)]
pub struct Setting {
    /// Its `evalctl.toml` key.
    pub key: &'static str,
    /// Its flag (`--concurrency`).
    pub flag: String,
    /// Its values (none when unset), secrets masked.
    pub value: Vec<String>,
    /// Where the value came from.
    pub origin: Origin,
}

/// Everything `config show` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Shown {
    /// The config file in use, if any.
    pub config_file: Option<String>,
    /// The command the settings are for (`run`, `tasks run`).
    pub command: String,
    /// Every setting the file could hold for the command.
    pub settings: Vec<Setting>,
}

/// A header with its value masked, `Name: [redacted]`: any header value may be a credential.
pub fn mask_header(header: &str) -> String {
    match header.split_once(':') {
        Some((name, _)) => format!("{name}: {REDACTED}"),
        None => REDACTED.to_string(),
    }
}

/// The value of the setting `key` as shown: a URL setting's (`evaluator.url`, `*base_url`)
/// without user info or query, whatever it holds (one that does not parse may carry a password
/// too); any other value the same way when it is an http(s) URL.
pub fn mask_value(key: &str, text: &str) -> String {
    if key.ends_with("url") {
        return shown_url(text);
    }
    match reqwest::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => display_url(&url),
        _ => text.to_string(),
    }
}

/// The text table: the file, then one `key  value  origin` row per setting.
pub fn text(shown: &Shown) -> String {
    let value = |setting: &Setting| match setting.value.as_slice() {
        [] => "-".to_string(),
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    let key_width = shown
        .settings
        .iter()
        .map(|s| s.key.len())
        .max()
        .unwrap_or(0);
    let value_width = shown
        .settings
        .iter()
        .map(|s| value(s).chars().count())
        .max()
        .unwrap_or(0)
        .min(48);
    let mut out = format!(
        "{} settings, config file: {}\n\n",
        shown.command,
        shown.config_file.as_deref().unwrap_or("none")
    );
    for setting in &shown.settings {
        let origin = match (&setting.origin, setting.value.is_empty()) {
            (Origin::Default, true) => "unset".to_string(),
            (origin, _) => origin.to_string(),
        };
        out.push_str(&format!(
            "{:<key_width$}  {:<value_width$}  {origin}\n",
            setting.key,
            value(setting),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked() {
        assert_eq!(
            mask_header("Authorization: Bearer sk-123456789"),
            "Authorization: [redacted]"
        );
        assert_eq!(mask_header("X-Id: 42"), "X-Id: [redacted]");
        assert_eq!(
            mask_value("run.dataset", "https://u:pw@example.com/v1?key=abc"),
            "https://example.com/v1?…"
        );
        assert_eq!(mask_value("evaluator.command", "sh eval.sh"), "sh eval.sh");
        assert_eq!(mask_value("evaluator.objective", "Right?"), "Right?");
        for (url, shown) in [
            ("http://u:pw@[bad/v1", "http://[bad/v1"),
            ("ftp://u:pw@host/v1?key=k", "ftp://host/v1?…"),
            ("u:pw@host/x", "u:host/x"),
        ] {
            assert_eq!(mask_value("evaluator.judge_base_url", url), shown);
        }
    }
}
