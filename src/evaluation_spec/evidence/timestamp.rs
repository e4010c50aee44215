//! The RFC 3339 instants of run events: read from the run record, written back as the reference
//! writes them.

use serde::de::{self, Deserializer};
use serde::Deserialize;

use crate::calendar::{civil_from_days, days_from_civil};

/// An RFC 3339 instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timestamp {
    /// Nanoseconds since the Unix epoch, UTC.
    pub nanos: i128,
}

impl Timestamp {
    /// The instant in RFC 3339 UTC with the fraction's trailing zeros dropped, as the reference
    /// writes times (`2026-03-16T09:00:02.5Z`).
    pub fn rfc3339(self) -> String {
        let seconds = self.nanos.div_euclid(1_000_000_000) as i64;
        let fraction = self.nanos.rem_euclid(1_000_000_000);
        let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
        let of_day = seconds.rem_euclid(86_400);
        let mut text = String::with_capacity(32);
        if (0..=9999).contains(&year) {
            push_digits(&mut text, year, 4);
        } else {
            text.push_str(&format!("{year:04}"));
        }
        for (separator, value) in [
            ('-', i64::from(month)),
            ('-', i64::from(day)),
            ('T', of_day / 3600),
            (':', of_day / 60 % 60),
            (':', of_day % 60),
        ] {
            text.push(separator);
            push_digits(&mut text, value, 2);
        }
        if fraction > 0 {
            let mut digits = String::with_capacity(9);
            push_digits(&mut digits, fraction as i64, 9);
            text.push('.');
            text.push_str(digits.trim_end_matches('0'));
        }
        text.push('Z');
        text
    }
}

/// Append `value` (not negative, below 10^width) with `width` digits, zero-padded.
fn push_digits(text: &mut String, value: i64, width: u32) {
    for place in (0..width).rev() {
        let digit = (value / 10_i64.pow(place) % 10) as u8;
        text.push(char::from(b'0' + digit));
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TimestampVisitor;

        impl de::Visitor<'_> for TimestampVisitor {
            type Value = Timestamp;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an RFC 3339 timestamp string")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Timestamp, E> {
                parse_rfc3339(text)
                    .map(|nanos| Timestamp { nanos })
                    .ok_or_else(|| E::custom(format!("invalid RFC 3339 timestamp {text:?}")))
            }
        }

        deserializer.deserialize_str(TimestampVisitor)
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM)` as nanoseconds since the epoch.
fn parse_rfc3339(text: &str) -> Option<i128> {
    let bytes = text.as_bytes();
    // The decimal number in `bytes[range]` (a few digits and nothing else).
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        bytes.get(range)?.iter().try_fold(0, |value: i64, byte| {
            byte.is_ascii_digit()
                .then(|| value * 10 + i64::from(byte - b'0'))
        })
    };
    if bytes.len() < 20
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return None;
    }
    if !matches!(bytes[10], b'T' | b't' | b' ') {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut fraction_nanos: i128 = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let kept = &fraction.as_bytes()[..digits.min(9)];
        let value = kept
            .iter()
            .fold(0, |value: i128, byte| value * 10 + i128::from(byte - b'0'));
        fraction_nanos = value * 10_i128.pow(9 - kept.len() as u32);
        rest = &fraction[digits..];
    }
    let offset_seconds: i64 = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (h, m) = rest[1..].split_once(':')?;
            if h.len() != 2 || m.len() != 2 {
                return None;
            }
            sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60)
        }
    };
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        - offset_seconds;
    Some(i128::from(seconds) * 1_000_000_000 + fraction_nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_are_written_as_the_reference_writes_them() {
        let write = |text: &str| parse_rfc3339(text).map(|nanos| Timestamp { nanos }.rfc3339());
        for (read, written) in [
            ("2026-03-16T09:00:04.380Z", "2026-03-16T09:00:04.38Z"),
            (
                "0001-01-01T00:00:00.000000001Z",
                "0001-01-01T00:00:00.000000001Z",
            ),
            ("1999-12-31T23:59:59-00:30", "2000-01-01T00:29:59Z"),
        ] {
            assert_eq!(write(read).as_deref(), Some(written), "{read}");
        }
        assert_eq!(
            Timestamp { nanos: -1 }.rfc3339(),
            "1969-12-31T23:59:59.999999999Z"
        );
        let before_year_zero = Timestamp {
            nanos: -62_200_000_000 * 1_000_000_000,
        };
        assert_eq!(before_year_zero.rfc3339(), "-002-12-17T14:13:20Z");
    }
}
