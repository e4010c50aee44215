//! `--token-env NAME`: bearer-token authentication. The token is read once from the environment,
//! compared in constant time, and never printed.

use crate::error::bad_flag;

/// Below this length a token draws a warning at start (16 random bytes are 128 bits).
const MIN_TOKEN_BYTES: usize = 16;

/// The token requests must carry (`Authorization: Bearer TOKEN`, or `X-API-Key: TOKEN`).
pub struct Token(Vec<u8>);

impl Token {
    /// The token in environment variable `name` (named by `--token-env`).
    pub fn from_env(name: &str) -> anyhow::Result<Token> {
        let token = match std::env::var_os(name) {
            Some(value) if !value.is_empty() => value.into_encoded_bytes(),
            _ => {
                return Err(bad_flag(
                    "--token-env",
                    format!("the environment variable {name} is not set or is empty"),
                ))
            }
        };
        // A header value loses its leading and trailing white space, and holds no control
        // character: such a token could never be sent, and every client would be refused.
        let edge_space = token.first().is_some_and(u8::is_ascii_whitespace)
            || token.last().is_some_and(u8::is_ascii_whitespace);
        if edge_space || token.iter().any(|&byte| byte < b' ' || byte == 0x7f) {
            return Err(bad_flag(
                "--token-env",
                format!(
                    "the token in {name} starts or ends with white space or holds a control \
                     character, which no HTTP header carries: no client could send it"
                ),
            ));
        }
        Ok(Token(token))
    }

    /// A warning when the token is short enough to be guessed: anyone who guesses it can run
    /// evaluations (and reach the endpoints `--allow-endpoint` opens) on this machine.
    pub fn weakness(&self, name: &str) -> Option<String> {
        (self.0.len() < MIN_TOKEN_BYTES).then(|| {
            format!(
                "the token in {name} is {} bytes long: a token shorter than {MIN_TOKEN_BYTES} \
                 bytes can be guessed; use a long random one (such as `openssl rand -hex 32`)",
                self.0.len()
            )
        })
    }

    /// Whether the request's `authorization` / `x-api-key` header values carry the token.
    pub fn accepts(&self, authorization: Option<&[u8]>, api_key: Option<&[u8]>) -> bool {
        let bearer = authorization.and_then(|value| {
            let scheme = value.get(..7)?;
            scheme
                .eq_ignore_ascii_case(b"bearer ")
                .then(|| value[7..].trim_ascii())
        });
        [bearer, api_key]
            .into_iter()
            .flatten()
            .any(|given| constant_time_eq(&self.0, given))
    }
}

/// `expected == given` in a time that depends only on `expected`'s length.
fn constant_time_eq(expected: &[u8], given: &[u8]) -> bool {
    let mut difference = expected.len() ^ given.len();
    for (index, byte) in expected.iter().enumerate() {
        difference |= usize::from(byte ^ given.get(index).copied().unwrap_or(!byte));
    }
    difference == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_token_is_accepted() {
        let token = Token(b"s3cret".to_vec());
        assert!(token.accepts(Some(b"Bearer s3cret"), None));
        assert!(token.accepts(Some(b"bearer s3cret"), None));
        assert!(token.accepts(None, Some(b"s3cret")));
        for wrong in [
            &b"Bearer s3cre"[..],
            b"Bearer s3cret!",
            b"Basic s3cret",
            b"Bearer",
            b"",
        ] {
            assert!(!token.accepts(Some(wrong), None), "{wrong:?}");
        }
        assert!(!token.accepts(None, None));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(constant_time_eq(b"", b""));
    }
}
