//! Number formats the reference's reason texts use (Go's `%g`, `%.Ng`, `%.4f`), so reasons match
//! the reference byte for byte.

/// Go's `%g` (precision `None` = shortest round-trip) or `%.Ng` (`Some(N)` significant digits).
pub(super) fn go_g(value: f64, precision: Option<usize>) -> String {
    if value.is_nan() {
        return "NaN".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    let scientific = match precision {
        None => format!("{value:e}"),
        Some(digits) => format!("{:.*e}", digits.max(1) - 1, value),
    };
    // ok: `{:e}` always writes a mantissa, an `e` and an integer exponent.
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa
        .chars()
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .trim_end_matches('0')
        .to_string();
    let digits = if digits.is_empty() {
        "0".to_string()
    } else {
        digits
    };
    let decimal_point = exponent + 1; // digits before the point
    let limit = match precision {
        None => 6,
        Some(digits_wanted) => {
            let count = digits.len() as i32;
            if digits_wanted as i32 > count && count >= decimal_point {
                count
            } else {
                digits_wanted as i32
            }
        }
    };
    let sign = if negative { "-" } else { "" };
    if value == 0.0 {
        return format!("{sign}0");
    }
    if exponent < -4 || exponent >= limit {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{first}{point}{rest}e{exp_sign}{:02}", exponent.abs());
    }
    if decimal_point <= 0 {
        let zeros = "0".repeat((-decimal_point) as usize);
        format!("{sign}0.{zeros}{digits}")
    } else if decimal_point as usize >= digits.len() {
        let zeros = "0".repeat(decimal_point as usize - digits.len());
        format!("{sign}{digits}{zeros}")
    } else {
        let (whole, fraction) = digits.split_at(decimal_point as usize);
        format!("{sign}{whole}.{fraction}")
    }
}

/// Go's `%.4f`.
pub(super) fn go_f4(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    format!("{value:.4}")
}

/// Go's `%v` of a string slice: `[a b c]`.
pub(super) fn go_list(items: &[String]) -> String {
    format!("[{}]", items.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortest_g_matches_go() {
        assert_eq!(go_g(42.0, None), "42");
        assert_eq!(go_g(0.1, None), "0.1");
        assert_eq!(go_g(123456.0, None), "123456");
        assert_eq!(go_g(1234567.0, None), "1.234567e+06");
        assert_eq!(go_g(1e-5, None), "1e-05");
        assert_eq!(go_g(0.0001, None), "0.0001");
        assert_eq!(go_g(-99999.0, None), "-99999");
        assert_eq!(go_g(0.0, None), "0");
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
    fn fixed_and_lists() {
        assert_eq!(go_f4(0.4), "0.4000");
        assert_eq!(go_list(&["a".into(), "b".into()]), "[a b]");
    }
}
