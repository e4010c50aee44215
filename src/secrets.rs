//! Secrets (API keys, HTTP header values) and their removal from everything evalctl reports:
//! error messages, excerpts of server replies, and side information.
//!
//! A server may echo what it was sent; redaction is applied to its text before any excerpt is cut
//! from it (a cut through a secret would leave a piece that no later pass recognises), and again
//! to every attempt an adapter returns.

use std::fmt;
use std::sync::Mutex;

use serde_json::{Map, Value};

use crate::protocol::Attempt;

/// The environment variable a provider's API key is read from unless another is named:
/// `<PROVIDER>_API_KEY`, the provider upper-cased, other characters than letters and digits as `_`.
pub fn default_key_env(provider: &str) -> String {
    let stem: String = provider
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() {
                ch.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{stem}_API_KEY")
}

/// The environment variables the command line named as holding secrets this process keeps for
/// others: the `serve --token-env` token and the keys `--allow-endpoint KEY_ENV@URL` lends.
static HELD_ENV: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Count environment variable `name` among those holding a secret this process keeps for others
/// (see [`held_env`]).
pub fn hold_env(name: &str) {
    let mut held = HELD_ENV
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if !held.iter().any(|known| known == name) {
        held.push(name.to_string());
    }
}

/// The environment variables holding secrets this process keeps for others: a custom check's
/// command does not get them (a command a request declares could send them anywhere).
pub fn held_env() -> Vec<String> {
    HELD_ENV
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()
}

/// Whether environment variable `name` says it holds a secret (`OPENAI_API_KEY`, `GH_TOKEN`,
/// `DB_PASSWORD`, `AWS_SECRET_ACCESS_KEY`).
fn names_a_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"]
        .iter()
        .any(|word| name.contains(word))
}

/// What a secret is replaced by.
pub const REDACTED: &str = "[redacted]";

/// Secrets shorter than this are not redacted from a server's reply (see
/// [`Secrets::redact_bytes`]): real keys are far longer.
const MIN_REPLY_SECRET: usize = 8;

/// The fewest characters of a secret's start or end that [`Secrets::redact`] redacts where a
/// text shows them without the rest (a server that echoes a key masked, `sk-CANARY-b8-7f****`).
/// Shorter pieces, such as a provider's prefix shared by every key (`sk-proj-`) or the last four
/// characters servers show on purpose, say little of a key; secrets shorter than twice this are
/// only redacted whole.
const MIN_SECRET_PIECE: usize = 12;

/// `text` with every start or end of `secret` of at least [`MIN_SECRET_PIECE`] characters that
/// it shows replaced by [`REDACTED`], the longest first.
fn redact_pieces(mut text: String, secret: &str) -> String {
    let chars = secret.chars().count();
    if chars < 2 * MIN_SECRET_PIECE {
        return text;
    }
    let bounds: Vec<usize> = (secret.char_indices().map(|(at, _)| at))
        .chain([secret.len()])
        .collect();
    // Each piece contains the shortest one: when that is absent, so are the longer ones.
    let (first, last) = (bounds[MIN_SECRET_PIECE], bounds[chars - MIN_SECRET_PIECE]);
    if text.contains(&secret[..first]) {
        for &end in bounds[MIN_SECRET_PIECE..chars].iter().rev() {
            if text.contains(&secret[..end]) {
                text = text.replace(&secret[..end], REDACTED);
            }
        }
    }
    if text.contains(&secret[last..]) {
        for &start in &bounds[1..=chars - MIN_SECRET_PIECE] {
            if text.contains(&secret[start..]) {
                text = text.replace(&secret[start..], REDACTED);
            }
        }
    }
    text
}

/// The fewest characters a secret has for [`encoded_forms`] to be redacted too (a shorter one's
/// upper-case or hex could be an ordinary word or number).
const MIN_ENCODED_SECRET: usize = 16;

/// The forms a server that echoes `secret` altered may show it in, for a secret of at least
/// [`MIN_ENCODED_SECRET`] characters: upper- and lower-case, hex (both cases), and base64 (the
/// standard and the URL-safe alphabet) wherever it starts in the encoded text (`Bearer KEY`
/// encoded whole): for each of the three places a secret can start in a base64 group, the
/// characters that its bytes alone decide.
fn encoded_forms(secret: &str) -> Vec<String> {
    if secret.chars().count() < MIN_ENCODED_SECRET {
        return Vec::new();
    }
    let bytes = secret.as_bytes();
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    let mut forms = vec![
        secret.to_uppercase(),
        secret.to_lowercase(),
        hex.to_uppercase(),
        hex,
    ];
    for skipped in 0..3 {
        let whole_groups = (bytes.len() - skipped) / 3 * 3;
        let encoded = base64(&bytes[skipped..skipped + whole_groups]);
        forms.push(encoded.replace('+', "-").replace('/', "_"));
        forms.push(encoded);
    }
    forms.retain(|form| form != secret);
    forms
}

/// `escaped` (a secret as a JSON string holds it) with every character beyond ASCII written as
/// `\uXXXX` escapes (UTF-16, lower-case hex), as Python's `json.dumps` writes it by default.
fn ascii_escaped(escaped: &str) -> String {
    let mut units = [0u16; 2];
    escaped
        .chars()
        .map(|ch| match ch.is_ascii() {
            true => ch.to_string(),
            false => (ch.encode_utf16(&mut units).iter())
                .map(|unit| format!("\\u{unit:04x}"))
                .collect(),
        })
        .collect()
}

/// `bytes` with [`redact_pieces`] applied when they are text that shows a piece of `secret`'s
/// start or end (whole secrets are redacted before).
fn redact_pieces_in_bytes(bytes: Vec<u8>, secret: &str) -> Vec<u8> {
    let chars = secret.chars().count();
    if chars < 2 * MIN_SECRET_PIECE {
        return bytes;
    }
    let (first, last) = match (
        secret.char_indices().nth(MIN_SECRET_PIECE),
        secret.char_indices().nth(chars - MIN_SECRET_PIECE),
    ) {
        (Some((first, _)), Some((last, _))) => (first, last),
        _ => return bytes,
    };
    let shows = |piece: &str| memchr::memmem::find(&bytes, piece.as_bytes()).is_some();
    if !shows(&secret[..first]) && !shows(&secret[last..]) {
        return bytes;
    }
    match String::from_utf8(bytes) {
        Ok(text) => redact_pieces(text, secret).into_bytes(),
        Err(not_text) => not_text.into_bytes(),
    }
}

/// Every string of `value`, member names included.
fn json_strings(value: &Value) -> Box<dyn Iterator<Item = &str> + '_> {
    match value {
        Value::String(text) => Box::new(std::iter::once(text.as_str())),
        Value::Array(items) => Box::new(items.iter().flat_map(json_strings)),
        Value::Object(map) => {
            Box::new(map.iter().flat_map(|(name, value)| {
                std::iter::once(name.as_str()).chain(json_strings(value))
            }))
        }
        _ => Box::new(std::iter::empty()),
    }
}

/// How many levels of JSON held in JSON strings are read for a secret spelled with escapes (a
/// reply, the model's content in it, a JSON document in that content).
const NESTED_JSON: u8 = 2;

/// Header values and their parts shorter than this are not redacted (redacting `1` or `gzip`
/// everywhere would garble messages without protecting anything).
const MIN_SECRET_PART: usize = 6;

/// `bytes` in standard base64 (with padding), as HTTP Basic credentials are sent.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let word = chunk.iter().enumerate().fold(0u32, |word, (index, byte)| {
            word | u32::from(*byte) << (16 - 8 * index)
        });
        for index in 0..4 {
            if index <= chunk.len() {
                out.push(char::from(
                    ALPHABET[(word >> (18 - 6 * index) & 63) as usize],
                ));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One secret value (an API key). Its `Debug` form never shows it.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    /// Wrap `value`.
    pub fn new(value: String) -> Secret {
        Secret(value)
    }

    /// The value itself, for the request header that carries it only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({REDACTED})")
    }
}

/// The secrets one evaluator sends. Its `Debug` form never shows them.
#[derive(Clone, Default)]
pub struct Secrets {
    /// Every form of every secret that is redacted whole, longest first.
    forms: Vec<String>,
    /// The secrets as given, whose start or end pieces are redacted too (not their encoded
    /// forms: 12 hex digits are 6 bytes, a prefix every key of a provider shares).
    given: Vec<String>,
}

impl Secrets {
    /// The given secrets (empty ones dropped), longest first so a secret containing another is
    /// redacted whole.
    /// Each is also redacted as it appears inside a JSON string (a server echoing it in JSON
    /// escapes `"` and `\`, and some escape `/` as `\/` too).
    /// A secret of at least [`MIN_ENCODED_SECRET`] characters is also redacted encoded as a
    /// server may echo it ([`encoded_forms`]).
    pub fn new(values: impl IntoIterator<Item = String>) -> Secrets {
        let mut given: Vec<String> = values
            .into_iter()
            .filter(|value| !value.is_empty())
            .collect();
        given.sort_by_key(|value| std::cmp::Reverse(value.len()));
        given.dedup();
        let mut forms: Vec<String> = (given.iter().cloned())
            .flat_map(|value| {
                let quoted = serde_json::to_string(&value).unwrap_or_default();
                let escaped = quoted[1..quoted.len().saturating_sub(1).max(1)].to_string();
                let slashes_escaped = escaped.replace('/', "\\/");
                let ascii_escaped = ascii_escaped(&escaped);
                let encoded = encoded_forms(&value);
                [value, escaped, slashes_escaped, ascii_escaped]
                    .into_iter()
                    .chain(encoded)
            })
            .filter(|value| !value.is_empty())
            .collect();
        forms.sort_by_key(|value| std::cmp::Reverse(value.len()));
        forms.dedup();
        Secrets { forms, given }
    }

    /// The secrets of this process's environment, for what a command prints before anyone else
    /// sees it (a custom check's results and errors, which `serve` answers to its clients and
    /// stores): the values of the variables [`held_env`] names and of those whose names say
    /// they hold one, when at least [`MIN_REPLY_SECRET`] characters long.
    pub fn of_environment() -> Secrets {
        let held = held_env();
        Secrets::new(std::env::vars_os().filter_map(|(name, value)| {
            let (name, value) = (name.to_str()?, value.into_string().ok()?);
            let secret = held.iter().any(|known| known == name) || names_a_secret(name);
            (secret && value.trim().len() >= MIN_REPLY_SECRET).then(|| value.trim().to_string())
        }))
    }

    /// The secrets in values sent with requests (HTTP header values, URL passwords and query
    /// values): each whole value and each of its white-space separated parts (the token of
    /// `Bearer TOKEN`), when at least [`MIN_SECRET_PART`] characters long.
    pub fn sent_values<'a>(values: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        values
            .into_iter()
            .flat_map(|value| {
                let value = value.trim();
                std::iter::once(value).chain(value.split_whitespace())
            })
            .filter(|part| part.len() >= MIN_SECRET_PART)
            .map(str::to_string)
            .collect()
    }

    /// Whether there is no secret (nothing sent was one).
    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// `text` with every form of every secret replaced by [`REDACTED`], and every piece of at
    /// least [`MIN_SECRET_PIECE`] characters of a secret's start or end (the longest first).
    pub fn redact(&self, text: &str) -> String {
        // Every whole form first: a piece of one secret may be part of another's form.
        let whole = (self.forms.iter()).fold(text.to_string(), |text, secret| {
            text.replace(secret.as_str(), REDACTED)
        });
        (self.given.iter()).fold(whole, |text, secret| redact_pieces(text, secret))
    }

    /// [`Secrets::redact`], and where `text` is JSON (up to `depth` levels down) that spells a
    /// secret with escapes, that JSON written anew with it redacted.
    fn redact_text(&self, text: &str, depth: u8) -> String {
        let redacted = self.redact(text);
        if depth == 0 || !redacted.contains("\\u") {
            return redacted;
        }
        match serde_json::from_str::<Value>(&redacted) {
            Ok(value) if json_strings(&value).any(|inner| self.spelled_in(inner, depth - 1)) => {
                let value = self.redact_value_within(value, depth - 1);
                serde_json::to_string(&value).unwrap_or(redacted)
            }
            _ => redacted,
        }
    }

    fn redact_value_within(&self, value: Value, depth: u8) -> Value {
        match value {
            Value::String(text) => Value::String(self.redact_text(&text, depth)),
            Value::Array(items) => Value::Array(
                (items.into_iter())
                    .map(|item| self.redact_value_within(item, depth))
                    .collect(),
            ),
            Value::Object(map) => Value::Object(
                (map.into_iter())
                    .map(|(name, value)| {
                        (self.redact(&name), self.redact_value_within(value, depth))
                    })
                    .collect(),
            ),
            other => other,
        }
    }

    /// `bytes` (a server's reply, not necessarily text) with every secret of at least
    /// [`MIN_REPLY_SECRET`] characters replaced by [`REDACTED`] (a shorter one, such as a
    /// local server's dummy key `x`, would garble the reply without protecting anything); a
    /// secret inside a JSON string leaves it a valid JSON string. A JSON reply with escapes is
    /// also read, so that a secret it spells with them (`\u002b` for `+`) is found in its text:
    /// then the reply is written anew with it redacted.
    pub fn redact_bytes(&self, mut bytes: Vec<u8>) -> Vec<u8> {
        let secrets: Vec<&str> = (self.forms.iter())
            .map(String::as_str)
            .filter(|secret| secret.len() >= MIN_REPLY_SECRET)
            .collect();
        if secrets.is_empty() {
            return bytes;
        }
        for secret in &secrets {
            let secret = secret.as_bytes();
            if memchr::memmem::find(&bytes, secret).is_none() {
                continue;
            }
            let mut redacted = Vec::with_capacity(bytes.len());
            let mut rest = bytes.as_slice();
            while let Some(at) = memchr::memmem::find(rest, secret) {
                redacted.extend_from_slice(&rest[..at]);
                redacted.extend_from_slice(REDACTED.as_bytes());
                rest = &rest[at + secret.len()..];
            }
            redacted.extend_from_slice(rest);
            bytes = redacted;
        }
        // Then the pieces of the secrets as given: a piece of one may be part of another's form.
        for secret in self
            .given
            .iter()
            .filter(|secret| secret.len() >= MIN_REPLY_SECRET)
        {
            bytes = redact_pieces_in_bytes(bytes, secret);
        }
        if memchr::memmem::find(&bytes, b"\\u").is_some() {
            if let Ok(value) = serde_json::from_slice::<Value>(&bytes) {
                let kept = Secrets {
                    forms: secrets.iter().map(|secret| secret.to_string()).collect(),
                    given: (self.given.iter())
                        .filter(|secret| secret.len() >= MIN_REPLY_SECRET)
                        .cloned()
                        .collect(),
                };
                if json_strings(&value).any(|text| kept.spelled_in(text, NESTED_JSON)) {
                    return serde_json::to_vec(&kept.redact_value(value)).unwrap_or(bytes);
                }
            }
        }
        bytes
    }

    /// Whether `text` holds a secret, or (up to `depth` levels down) is JSON whose strings
    /// spell one with `\uXXXX` escapes: a model's reply whose content is JSON in a JSON string.
    fn spelled_in(&self, text: &str, depth: u8) -> bool {
        self.forms
            .iter()
            .any(|secret| text.contains(secret.as_str()))
            || (depth > 0
                && text.contains("\\u")
                && serde_json::from_str::<Value>(text).is_ok_and(|value| {
                    json_strings(&value).any(|inner| self.spelled_in(inner, depth - 1))
                }))
    }

    /// `attempt` with every secret removed from its error message and side information.
    pub fn scrub(&self, mut attempt: Attempt) -> Attempt {
        if self.forms.is_empty() {
            return attempt;
        }
        if let Err(error) = &mut attempt.score {
            error.message = self.redact(&error.message);
        }
        attempt.side_info = self.redact_map(std::mem::take(&mut attempt.side_info));
        attempt
    }

    fn redact_map(&self, map: Map<String, Value>) -> Map<String, Value> {
        map.into_iter()
            .map(|(name, value)| (self.redact(&name), self.redact_value(value)))
            .collect()
    }

    /// Every string of `value`, member names included, with every secret replaced by
    /// [`REDACTED`] (also where a string holds JSON that spells one with escapes).
    pub fn redact_value(&self, value: Value) -> Value {
        self.redact_value_within(value, NESTED_JSON)
    }
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secrets({} {REDACTED})", self.given.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{CallError, ErrorKind};

    #[test]
    fn a_secret_beyond_ascii_is_redacted_as_python_escapes_it_too() {
        let secrets = Secrets::new(["pässwörd-0123456789".to_string()]);
        assert_eq!(
            secrets.redact(r#"{"why": "p\u00e4ssw\u00f6rd-0123456789"} then pässwörd-0123456789"#),
            r#"{"why": "[redacted]"} then [redacted]"#
        );
    }

    #[test]
    fn header_values_and_their_tokens_are_redacted() {
        let secrets = Secrets::new(Secrets::sent_values(["Bearer tok-123456", "1"]));
        assert_eq!(
            secrets.redact("got Bearer tok-123456 then tok-123456, score 1"),
            "got [redacted] then [redacted], score 1"
        );
        assert_eq!(
            Secrets::new(Secrets::sent_values(["Bearer ab"])).redact("ab Bearer ab"),
            "ab [redacted]"
        );
    }

    #[test]
    fn a_long_secret_shown_in_part_is_redacted_and_a_short_piece_is_not() {
        let secrets = Secrets::new(["sk-CANARY-b8-7f3a9d-0123456789".to_string()]);
        // A server that echoes the key masked shows its start, or its end.
        assert_eq!(
            secrets.redact("Incorrect API key provided: sk-CANARY-b8-7f****"),
            "Incorrect API key provided: [redacted]****"
        );
        assert_eq!(
            secrets.redact("key ****7f3a9d-0123456789 refused"),
            "key ****[redacted] refused"
        );
        // Fewer characters of it (a provider's prefix, the last four) are not redacted.
        assert_eq!(secrets.redact("sk-CANARY-b …6789"), "sk-CANARY-b …6789");
        // A short secret is only redacted whole.
        let short = Secrets::new(["tok-1234567890".to_string()]);
        assert_eq!(
            short.redact("tok-12345678 tok-1234567890"),
            "tok-12345678 [redacted]"
        );
    }

    #[test]
    fn a_secret_echoed_encoded_or_in_part_is_redacted_in_text_and_in_replies() {
        let key = "sk-CANARY-k3y-0123456789abcdef";
        let secrets = Secrets::new([key.to_string()]);
        let hex: String = key.bytes().map(|byte| format!("{byte:02x}")).collect();
        // Each echo, and how much of it may stay: at most a base64 group's worth at each end
        // (the encoding of the text beside the key, and of the key's first or last bytes).
        let echoes = [
            (base64(key.as_bytes()), 8),
            (base64(format!("Bearer {key}").as_bytes()), 16),
            (
                base64(format!("x:{key}").as_bytes())
                    .replace('+', "-")
                    .replace('/', "_"),
                8,
            ),
            (hex.clone(), 0),
            (hex.to_uppercase(), 0),
            (key.to_uppercase(), 0),
            (key[..key.len() - 1].to_string(), 0),
        ];
        for (echo, may_stay) in echoes {
            let text = format!("ECHO[{echo}]");
            for shown in [
                secrets.redact(&text),
                String::from_utf8(secrets.redact_bytes(text.clone().into_bytes())).unwrap(),
            ] {
                assert!(
                    shown.starts_with("ECHO[") && shown.contains(REDACTED),
                    "{shown}"
                );
                let left = shown.replace(REDACTED, "").len() - "ECHO[]".len();
                assert!(left <= may_stay, "{echo} -> {shown}");
            }
        }
        // An encoded form is redacted whole only: 12 hex digits of a key's start are 6 bytes
        // (`sk-pro`), which the hex of ordinary text holds too.
        assert_eq!(
            secrets.redact("hexdump: 7461736b2d43414e4152592d6b3379"),
            "hexdump: 7461736b2d43414e4152592d6b3379"
        );
        assert_eq!(
            String::from_utf8(secrets.redact_bytes(b"x 736b2d43414e4152592d6b3379 y".to_vec()))
                .unwrap(),
            "x 736b2d43414e4152592d6b3379 y"
        );
        // A short secret's encodings are not looked for (they could be ordinary text).
        assert_eq!(
            Secrets::new(["abcdef12".to_string()]).redact("ABCDEF12"),
            "ABCDEF12"
        );
    }

    #[test]
    fn scrub_cleans_messages_and_side_info_keys_and_values() {
        let secrets = Secrets::new(["s3cr3t".to_string()]);
        let mut attempt = Attempt::failed(CallError::new(
            ErrorKind::HttpStatus,
            "HTTP 401: bad key s3cr3t",
        ));
        attempt.side_info =
            serde_json::from_str(r#"{"echo": ["s3cr3t", {"s3cr3t": 1}], "n": 2}"#).unwrap();
        let attempt = secrets.scrub(attempt);
        assert_eq!(
            attempt.score.unwrap_err().message,
            "HTTP 401: bad key [redacted]"
        );
        assert_eq!(
            Value::Object(attempt.side_info).to_string(),
            r#"{"echo":["[redacted]",{"[redacted]":1}],"n":2}"#
        );
        assert!(!format!("{secrets:?}").contains("s3cr3t"));
    }

    #[test]
    fn a_reply_echoing_a_secret_is_redacted_and_stays_json() {
        let secrets = Secrets::new([r#"sk-"KEY"123456"#.to_string()]);
        let reply = serde_json::json!({"model": "m Bearer sk-\"KEY\"123456", "n": [1]})
            .to_string()
            .into_bytes();
        let redacted = secrets.redact_bytes(reply);
        assert_eq!(
            serde_json::from_slice::<Value>(&redacted).unwrap(),
            serde_json::json!({"model": "m Bearer [redacted]", "n": [1]})
        );
        assert_eq!(
            secrets.redact_bytes(b"\xff no secret".to_vec()),
            b"\xff no secret"
        );
        // Spelled with an escape, as .NET writes `+`.
        let secrets = Secrets::new(["sk-ab+cd123456".to_string()]);
        let reply = br#"{"echo": "key sk-ab\u002bcd123456", "n": 1.5}"#.to_vec();
        assert_eq!(
            serde_json::from_slice::<Value>(&secrets.redact_bytes(reply)).unwrap(),
            serde_json::json!({"echo": "key [redacted]", "n": 1.5})
        );
        // A dummy key of a local server is no secret to take out of a reply.
        let dummy = Secrets::new(["x".to_string()]);
        let reply = br#"{"text": "x"}"#.to_vec();
        assert_eq!(dummy.redact_bytes(reply.clone()), reply);
    }

    #[test]
    fn base64_matches_the_standard_alphabet() {
        assert_eq!(base64(b"user:PWSECRET13"), "dXNlcjpQV1NFQ1JFVDEz");
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(base64(b""), "");
    }

    #[test]
    fn secrets_are_also_redacted_as_json_escapes_them() {
        let secrets = Secrets::new([r#"HS"EC\RET9"#.to_string()]);
        let echoed = serde_json::json!({"x-api-key": r#"HS"EC\RET9"#}).to_string();
        assert_eq!(secrets.redact(&echoed), r#"{"x-api-key":"[redacted]"}"#);
        // PHP's json_encode, among others, escapes `/` too.
        let secrets = Secrets::new(["sk-ab/cd+ef==".to_string()]);
        assert_eq!(
            secrets.redact(r#"{"error":"bad key sk-ab\/cd+ef=="}"#),
            r#"{"error":"bad key [redacted]"}"#
        );
    }

    #[test]
    fn a_secret_spelled_with_escapes_inside_json_in_a_json_string_is_redacted() {
        // A model's reply whose content is JSON, echoing the key as `\uXXXX` escapes.
        let key = "sk-FAKE-abcdef123456";
        let spelled: String = key
            .chars()
            .map(|c| format!("\\u{:04x}", c as u32))
            .collect();
        let content = format!(r#"{{"passed": true, "reason": "k={spelled}"}}"#);
        let reply = serde_json::json!({"choices": [{"message": {"content": content}}]});
        let secrets = Secrets::new([key.to_string()]);
        let redacted = secrets.redact_bytes(reply.to_string().into_bytes());
        let reply: Value = serde_json::from_slice(&redacted).unwrap();
        let content = reply["choices"][0]["message"]["content"].as_str().unwrap();
        let content: Value = serde_json::from_str(content).unwrap();
        assert_eq!(content["reason"], "k=[redacted]");
        assert_eq!(content["passed"], true);
        // A reply without the secret is left byte for byte.
        let clean =
            serde_json::json!({"choices": [{"message": {"content": "{\"a\": \"\\u0041\"}"}}]})
                .to_string();
        assert_eq!(
            secrets.redact_bytes(clean.clone().into_bytes()),
            clean.into_bytes()
        );
    }
}
