//! The reference's stringification of JSON evidence values, so resolved values compare and print as
//! they do there: numbers as Go's `%v` of a float64, objects and arrays as compact JSON with sorted
//! keys, numbers inside them in Go's JSON float format. Everything passes through f64, as the
//! reference decodes numbers. Go's HTML escaping (`<` as `\u003c`) is a Go artefact evalctl does
//! not copy (docs/spec.md, "Where evalctl departs from the reference").

use serde_json::{Map, Value};

/// The significant digits of a finite, non-zero `x` — the shortest round-trip ones, or `Some(N)`
/// of them rounded — without trailing zeros, and the position of the decimal point relative to
/// them (`0.0125` → ("125", -1); `1500` → ("15", 4)).
fn significant_digits(x: f64, precision: Option<usize>) -> (String, i32) {
    let scientific = match precision {
        None => format!("{:e}", x.abs()),
        Some(digits) => format!("{:.*e}", digits.max(1) - 1, x.abs()),
    };
    // ok: `{:e}` always writes a mantissa, an `e` and an integer exponent.
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let mut digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    digits.truncate(digits.trim_end_matches('0').len().max(1));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    (digits, exponent + 1)
}

/// `digits` with the decimal point at `point`, in plain decimal notation.
fn plain(digits: &str, point: i32) -> String {
    let len = digits.len() as i32;
    if point <= 0 {
        format!("0.{}{}", "0".repeat((-point) as usize), digits)
    } else if point >= len {
        format!("{}{}", digits, "0".repeat((point - len) as usize))
    } else {
        let (whole, fraction) = digits.split_at(point as usize);
        format!("{whole}.{fraction}")
    }
}

/// `d.ddde±XX` with at least `min_exponent_digits` exponent digits.
fn exponential(digits: &str, point: i32, min_exponent_digits: usize) -> String {
    let exponent = point - 1;
    let (first, rest) = digits.split_at(1);
    let mantissa = if rest.is_empty() {
        first.to_string()
    } else {
        format!("{first}.{rest}")
    };
    let sign = if exponent < 0 { '-' } else { '+' };
    format!(
        "{mantissa}e{sign}{:0width$}",
        exponent.abs(),
        width = min_exponent_digits
    )
}

/// `x`'s sign, then its `digits` with the decimal point at `point`: in exponent form with at
/// least `Some(N)` exponent digits, or plain with `None`.
fn signed(x: f64, digits: &str, point: i32, exponent_digits: Option<usize>) -> String {
    let body = match exponent_digits {
        Some(width) => exponential(digits, point, width),
        None => plain(digits, point),
    };
    if x < 0.0 {
        format!("-{body}")
    } else {
        body
    }
}

/// Go's text of a NaN or an infinity (`NaN`, `+Inf`, `-Inf`); `None` for a finite `x`.
pub(crate) fn non_finite(x: f64) -> Option<String> {
    if x.is_nan() {
        Some("NaN".to_string())
    } else if x.is_infinite() {
        Some(if x > 0.0 { "+Inf" } else { "-Inf" }.to_string())
    } else {
        None
    }
}

/// Go's `%g` (precision `None` = shortest round-trip, which is also Go's `%v` of a float64) or
/// `%.Ng` (`Some(N)` significant digits). Exponent form when the decimal exponent is < -4 or ≥ the
/// precision (Go's `strconv` decides on a fixed 6 in shortest mode: `1e+06`, `1.234567e+06`, but
/// `999999`; an exponent threshold of 21 is Go's JSON encoder's, not `%v`'s).
pub fn go_g(x: f64, precision: Option<usize>) -> String {
    if let Some(text) = non_finite(x) {
        return text;
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let (digits, point) = significant_digits(x, precision);
    let exponent = point - 1;
    let limit = match precision {
        None => 6,
        Some(wanted) => {
            let count = digits.len() as i32;
            if wanted as i32 > count && count >= point {
                count
            } else {
                wanted as i32
            }
        }
    };
    let exponent_digits = (exponent < -4 || exponent >= limit).then_some(2);
    signed(x, &digits, point, exponent_digits)
}

/// Go's `encoding/json` float format: plain digits unless |x| < 1e-6 or ≥ 1e21.
fn json_number(x: f64) -> String {
    if !x.is_finite() {
        return "null".to_string();
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let (digits, point) = significant_digits(x, None);
    let exponent_digits = (x.abs() < 1e-6 || x.abs() >= 1e21).then_some(1);
    signed(x, &digits, point, exponent_digits)
}

/// A JSON string literal as Go's encoder writes it, without its HTML escaping.
pub fn json_string(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Compact JSON with sorted object keys, as Go marshals a decoded `any`.
pub fn go_json(value: &Value) -> String {
    let mut out = String::new();
    write_go_json(value, &mut out);
    out
}

fn write_go_json(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&json_number(n.as_f64().unwrap_or(f64::NAN))),
        Value::String(s) => json_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(key, out);
                out.push(':');
                write_go_json(item, out);
            }
            out.push('}');
        }
    }
}

/// A member of a small object: a linear scan beats hashing the key for the few members event
/// payloads have.
pub fn member<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    if map.len() <= 16 {
        map.iter()
            .find(|(name, _)| *name == key)
            .map(|(_, value)| value)
    } else {
        map.get(key)
    }
}

/// Loose string extraction: a string is itself; an object yields the first of its `value`,
/// `content`, `text`, `answer` members that extracts; a one-element array its element's.
pub fn loose_string(value: &Value) -> Option<&str> {
    match value {
        Value::String(text) => Some(text),
        Value::Object(map) => ["value", "content", "text", "answer"]
            .iter()
            .find_map(|key| member(map, key).and_then(loose_string)),
        Value::Array(items) if items.len() == 1 => loose_string(&items[0]),
        _ => None,
    }
}

/// A JSON evidence value as a string: its loose string, `true`/`false`, a number as `%v`,
/// `null`, or Go-style compact JSON.
pub fn stringify(value: &Value) -> String {
    if let Some(text) = loose_string(value) {
        return text.to_string();
    }
    match value {
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_g(n.as_f64().unwrap_or(f64::NAN), None),
        Value::Null => "null".to_string(),
        other => go_json(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_print_like_go() {
        assert_eq!(go_g(42.0, None), "42");
        assert_eq!(go_g(0.1, None), "0.1");
        assert_eq!(go_g(1e21, None), "1e+21");
        assert_eq!(go_g(1e-5, None), "1e-05");
        assert_eq!(go_g(123456.5, None), "123456.5");
        assert_eq!(go_g(999999.0, None), "999999");
        assert_eq!(go_g(1e6, None), "1e+06");
        assert_eq!(go_g(1234567.0, None), "1.234567e+06");
        assert_eq!(go_g(-0.0001, None), "-0.0001");
        assert_eq!(json_number(1e-7), "1e-7");
        assert_eq!(json_number(2.5), "2.5");
        assert_eq!(go_g(0.0, None), "0");
        assert_eq!(go_g(-99999.0, None), "-99999");
        assert_eq!(go_g(f64::INFINITY, None), "+Inf");
    }

    #[test]
    fn precision_g_matches_go() {
        assert_eq!(go_g(0.5, Some(10)), "0.5");
        assert_eq!(go_g(1e-6, Some(10)), "1e-06");
        assert_eq!(go_g(1.0 / 3.0, Some(10)), "0.3333333333");
        assert_eq!(go_g(100.0, Some(10)), "100");
        assert_eq!(go_g(12345678901.0, Some(10)), "1.23456789e+10");
    }

    #[test]
    fn objects_sort_keys_and_leave_html_as_it_is() {
        let value = json!({"b": [1, 2.5], "a": "<x & y>\u{2028}"});
        assert_eq!(
            stringify(&value),
            "{\"a\":\"<x & y>\u{2028}\",\"b\":[1,2.5]}"
        );
        assert_eq!(
            stringify(&json!({"text": "t", "value": {"answer": "v"}})),
            "v"
        );
    }
}
