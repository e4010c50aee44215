//! UTC timestamps in ISO 8601 (`2025-06-26T19:04:23.123Z`) for check results and FEP runs,
//! formatted without allocating and without a date-time dependency, and the clock of one test
//! case's checks.

use std::fmt;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::{Serialize, Serializer};

use crate::calendar::civil_from_days;

/// A moment, shown as a UTC ISO 8601 date-time with millisecond precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp(SystemTime);

impl Timestamp {
    /// The current time.
    pub fn now() -> Self {
        Timestamp(SystemTime::now())
    }
}

/// The clock of one test case: one wall-clock reading, the `evaluated_at` of each of its checks
/// (they run within microseconds of each other), and one monotonic reading per check for its
/// `execution_time_ms`, each check's time running from the end of the previous one.
#[derive(Debug)]
pub struct CaseClock {
    at: Timestamp,
    lap_start: Instant,
}

impl CaseClock {
    /// Read the clocks at the start of a test case.
    pub fn start() -> Self {
        CaseClock {
            at: Timestamp::now(),
            lap_start: Instant::now(),
        }
    }

    /// When the test case's checks ran.
    pub fn at(&self) -> Timestamp {
        self.at
    }

    /// Milliseconds since the previous lap (or the start); the next lap starts now.
    pub fn lap_ms(&mut self) -> f64 {
        let now = Instant::now();
        let elapsed = now.duration_since(self.lap_start);
        self.lap_start = now;
        elapsed.as_secs_f64() * 1000.0
    }
}

impl Timestamp {
    /// The ISO 8601 text, written into a fixed buffer (this runs for every check result).
    fn render(&self) -> [u8; 24] {
        // Times before 1970 do not occur on a working clock; they show as the epoch.
        let since_epoch = self.0.duration_since(UNIX_EPOCH).unwrap_or_default();
        let seconds = since_epoch.as_secs();
        let (year, month, day) = civil_from_days((seconds / 86_400) as i64);
        let of_day = seconds % 86_400;
        let mut text = *b"0000-00-00T00:00:00.000Z";
        let mut put = |at: usize, width: usize, mut number: u64| {
            for index in (at..at + width).rev() {
                text[index] = b'0' + (number % 10) as u8;
                number /= 10;
            }
        };
        put(0, 4, year.clamp(0, 9999) as u64);
        put(5, 2, u64::from(month));
        put(8, 2, u64::from(day));
        put(11, 2, of_day / 3600);
        put(14, 2, of_day % 3600 / 60);
        put(17, 2, of_day % 60);
        put(20, 3, u64::from(since_epoch.subsec_millis()));
        text
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.render();
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = self.render();
        let text = std::str::from_utf8(&text).map_err(serde::ser::Error::custom)?;
        serializer.serialize_str(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(seconds: u64, millis: u64) -> String {
        Timestamp(UNIX_EPOCH + Duration::from_secs(seconds) + Duration::from_millis(millis))
            .to_string()
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(at(1_750_964_663, 999), "2025-06-26T19:04:23.999Z");
        assert_eq!(at(4_107_542_399, 0), "2100-02-28T23:59:59.000Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
    }

    #[test]
    fn serializes_as_a_json_string() {
        let json = serde_json::to_string(&Timestamp(UNIX_EPOCH)).unwrap();
        assert_eq!(json, "\"1970-01-01T00:00:00.000Z\"");
    }
}
