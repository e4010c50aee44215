//! `${VAR}` in header values (`--header` and `evaluator.headers`): replaced by the environment
//! variable's value, so a secret such as a bearer token stays in the environment, out of the
//! file and out of argv (where other users of the machine can read it). `$$` is a literal `$`.

/// `text` with each `${NAME}` replaced by `lookup(NAME)` and each `$$` by `$`. Any other `$` is
/// kept. An unset (or empty) variable, an unclosed `${` or a name other than letters, digits and
/// `_` is the error message, which never repeats `text` (it may hold a secret).
pub fn expand(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('$') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
            continue;
        }
        let Some(after) = after.strip_prefix('{') else {
            out.push('$');
            rest = after;
            continue;
        };
        let end = after
            .find('}')
            .ok_or("an unclosed `${` (`$${` is a literal `${`)")?;
        let name = &after[..end];
        let valid = !name.is_empty()
            && !name.starts_with(|ch: char| ch.is_ascii_digit())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid {
            return Err(format!(
                "`${{{name}}}`: a variable name is letters, digits and `_`"
            ));
        }
        match lookup(name) {
            Some(value) if !value.is_empty() => out.push_str(&value),
            Some(_) => {
                return Err(format!(
                    "`${{{name}}}`: the environment variable {name} is empty"
                ))
            }
            None => {
                return Err(format!(
                    "`${{{name}}}`: the environment variable {name} is not set"
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".to_string()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn references_expand_and_missing_ones_are_named() {
        assert_eq!(expand("Bearer ${TOKEN}", env).unwrap(), "Bearer s3cret");
        assert_eq!(expand("${TOKEN}-${TOKEN}", env).unwrap(), "s3cret-s3cret");
        assert_eq!(expand("cost: $5", env).unwrap(), "cost: $5");
        assert_eq!(expand("$${TOKEN} $$5 $", env).unwrap(), "${TOKEN} $5 $");
        assert_eq!(
            expand("${NOPE}", env).unwrap_err(),
            "`${NOPE}`: the environment variable NOPE is not set"
        );
        assert_eq!(
            expand("${EMPTY}", env).unwrap_err(),
            "`${EMPTY}`: the environment variable EMPTY is empty"
        );
        assert_eq!(
            expand("sk-literal ${TOKEN", env).unwrap_err(),
            "an unclosed `${` (`$${` is a literal `${`)"
        );
        assert!(expand("${A B}", env).is_err());
        assert!(expand("${1A}", env).is_err());
    }
}
