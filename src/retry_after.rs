//! The `Retry-After` header (RFC 9110 §10.2.3): seconds or an HTTP date, as a wait in ms.
//!
//! The three date forms of RFC 9110 §5.6.7 are read: IMF-fixdate
//! (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form
//! (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).

const MS_PER_DAY: f64 = 86_400_000.0;
const SHORT_DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Milliseconds to wait, from a `Retry-After` value: delta-seconds (digits, surrounding
/// whitespace allowed, huge values saturate) or an HTTP date compared with `now_unix_ms`
/// (a past date gives `Some(0)`). `None` when the value is malformed.
pub fn parse(value: &str, now_unix_ms: f64) -> Option<f64> {
    let value = value.trim_ascii();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        let seconds = value.bytes().fold(0u64, |acc, b| {
            acc.saturating_mul(10).saturating_add(u64::from(b - b'0'))
        });
        return Some(seconds as f64 * 1000.0);
    }
    let wait = http_date(value.as_bytes(), now_unix_ms)? - now_unix_ms;
    // NaN (a NaN clock) counts as "now".
    Some(if wait > 0.0 { wait } else { 0.0 })
}

/// An HTTP date as Unix milliseconds.
fn http_date(s: &[u8], now_unix_ms: f64) -> Option<f64> {
    imf_fixdate(s)
        .or_else(|| rfc850(s, now_unix_ms))
        .or_else(|| asctime(s))
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn imf_fixdate(s: &[u8]) -> Option<f64> {
    let mut c = Cursor(s);
    c.pick(&SHORT_DAYS)?;
    c.lit(b", ")?;
    let day = c.digits(2)?;
    c.lit(b" ")?;
    let month = c.pick(&MONTHS)?;
    c.lit(b" ")?;
    let year = c.digits(4)?;
    c.lit(b" ")?;
    let time = c.time()?;
    c.lit(b" GMT")?;
    c.end()?;
    unix_ms(i64::from(year), month, day, time)
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`: a two-digit year more than 50 years ahead of now
/// is the most recent past year with those digits (RFC 9110 §5.6.7).
fn rfc850(s: &[u8], now_unix_ms: f64) -> Option<f64> {
    let mut c = Cursor(s);
    c.pick(&LONG_DAYS)?;
    c.lit(b", ")?;
    let day = c.digits(2)?;
    c.lit(b"-")?;
    let month = c.pick(&MONTHS)?;
    c.lit(b"-")?;
    let yy = i64::from(c.digits(2)?);
    c.lit(b" ")?;
    let time = c.time()?;
    c.lit(b" GMT")?;
    c.end()?;
    let days_now = (now_unix_ms / MS_PER_DAY).floor().clamp(-1e9, 1e9) as i64;
    let this_year = year_of(days_now);
    let mut year = this_year - this_year.rem_euclid(100) + yy;
    if year > this_year + 50 {
        year -= 100;
    } else if year <= this_year - 50 {
        year += 100;
    }
    unix_ms(year, month, day, time)
}

/// `Sun Nov  6 08:49:37 1994` (the day is two digits or a space and one digit).
fn asctime(s: &[u8]) -> Option<f64> {
    let mut c = Cursor(s);
    c.pick(&SHORT_DAYS)?;
    c.lit(b" ")?;
    let month = c.pick(&MONTHS)?;
    c.lit(b" ")?;
    let day = if c.lit(b" ").is_some() {
        c.digits(1)?
    } else {
        c.digits(2)?
    };
    c.lit(b" ")?;
    let time = c.time()?;
    c.lit(b" ")?;
    let year = c.digits(4)?;
    c.end()?;
    unix_ms(i64::from(year), month, day, time)
}

/// A reader over the header's bytes; each step returns `None` when the text does not match.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn lit(&mut self, text: &[u8]) -> Option<()> {
        self.0 = self.0.strip_prefix(text)?;
        Some(())
    }

    fn digits(&mut self, n: usize) -> Option<u32> {
        let (digits, rest) = self.0.split_at_checked(n)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.0 = rest;
        Some(
            digits
                .iter()
                .fold(0, |acc, d| acc * 10 + u32::from(d - b'0')),
        )
    }

    /// Which of `names` comes next (its index, from 1).
    fn pick(&mut self, names: &[&str]) -> Option<u32> {
        let (i, rest) = names
            .iter()
            .enumerate()
            .find_map(|(i, name)| Some((i, self.0.strip_prefix(name.as_bytes())?)))?;
        self.0 = rest;
        u32::try_from(i + 1).ok()
    }

    /// `HH:MM:SS` as seconds of the day (second 60 is a leap second).
    fn time(&mut self) -> Option<u32> {
        let h = self.digits(2)?;
        self.lit(b":")?;
        let m = self.digits(2)?;
        self.lit(b":")?;
        let s = self.digits(2)?;
        (h < 24 && m < 60 && s <= 60).then_some(h * 3600 + m * 60 + s)
    }

    fn end(&self) -> Option<()> {
        self.0.is_empty().then_some(())
    }
}

fn unix_ms(year: i64, month: u32, day: u32, seconds: u32) -> Option<f64> {
    if day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some((days as f64 * 86_400.0 + f64::from(seconds)) * 1000.0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's algorithm: eras of
/// 400 years, years starting in March so the leap day comes last).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let (month, day) = (i64::from(month), i64::from(day));
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The calendar year of a day counted from 1970-01-01 (inverse of [`days_from_civil`]).
fn year_of(days: i64) -> i64 {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Day 306 of a March-based year is 1 January: January and February belong to the next year.
    let january_or_february = day_of_year >= 306;
    era * 400 + year_of_era + i64::from(january_or_february)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// 1994-11-06T08:49:37Z, the RFC's example date.
    const RFC_EXAMPLE_MS: f64 = 784_111_777_000.0;

    #[test]
    fn delta_seconds() {
        assert_eq!(parse("120", 0.0), Some(120_000.0));
        assert_eq!(parse("0", 5.0), Some(0.0));
        assert_eq!(parse(" \t7 ", 0.0), Some(7_000.0));
        assert_eq!(parse("007", 0.0), Some(7_000.0));
    }

    #[test]
    fn huge_delta_saturates() {
        let huge = "9".repeat(400);
        assert_eq!(parse(&huge, 0.0), Some(u64::MAX as f64 * 1000.0));
    }

    #[test]
    fn malformed_values_are_none() {
        for bad in [
            "",
            " ",
            "-1",
            "1.5",
            "+3",
            "12a",
            "1 2",
            "soon",
            "Sun, 06 Nov 1994 08:49:37 UTC",
        ] {
            assert_eq!(parse(bad, 0.0), None, "{bad:?}");
        }
    }

    #[test]
    fn imf_fixdate() {
        assert_eq!(
            parse("Sun, 06 Nov 1994 08:49:37 GMT", 0.0),
            Some(RFC_EXAMPLE_MS)
        );
        let now = RFC_EXAMPLE_MS - 5_000.0;
        assert_eq!(parse("Sun, 06 Nov 1994 08:49:37 GMT", now), Some(5_000.0));
    }

    #[test]
    fn rfc850_date() {
        assert_eq!(
            parse("Sunday, 06-Nov-94 08:49:37 GMT", 0.0),
            Some(RFC_EXAMPLE_MS)
        );
    }

    #[test]
    fn rfc850_two_digit_year_at_most_50_years_ahead() {
        let jan_2025 = unix_ms(2025, 1, 1, 0).expect("valid date");
        // 75 → 2075 is exactly 50 years ahead: kept. 76 → 2076 is more: 1976 (in the past).
        let y2075 = unix_ms(2075, 1, 1, 0).expect("valid date");
        assert_eq!(
            parse("Tuesday, 01-Jan-75 00:00:00 GMT", jan_2025),
            Some(y2075 - jan_2025)
        );
        assert_eq!(
            parse("Thursday, 01-Jan-76 00:00:00 GMT", jan_2025),
            Some(0.0)
        );
        let y2030 = unix_ms(2030, 1, 1, 0).expect("valid date");
        assert_eq!(
            parse("Tuesday, 01-Jan-30 00:00:00 GMT", jan_2025),
            Some(y2030 - jan_2025)
        );
        // Late in a century, a small year is the next century.
        let y2101 = unix_ms(2101, 1, 1, 0).expect("valid date");
        let jan_2090 = unix_ms(2090, 1, 1, 0).expect("valid date");
        assert_eq!(
            parse("Saturday, 01-Jan-01 00:00:00 GMT", jan_2090),
            Some(y2101 - jan_2090)
        );
    }

    #[test]
    fn asctime_date() {
        assert_eq!(parse("Sun Nov  6 08:49:37 1994", 0.0), Some(RFC_EXAMPLE_MS));
        assert_eq!(parse("Sun Nov 06 08:49:37 1994", 0.0), Some(RFC_EXAMPLE_MS));
        assert_eq!(parse("Sun Nov 6 08:49:37 1994", 0.0), None);
    }

    #[test]
    fn past_dates_wait_zero() {
        assert_eq!(
            parse("Sun, 06 Nov 1994 08:49:37 GMT", RFC_EXAMPLE_MS + 1.0),
            Some(0.0)
        );
        assert_eq!(parse("Sun, 06 Nov 1994 08:49:37 GMT", f64::NAN), Some(0.0));
    }

    #[test]
    fn impossible_dates_are_none() {
        for bad in [
            "Sun, 31 Nov 1994 08:49:37 GMT",
            "Sun, 00 Nov 1994 08:49:37 GMT",
            "Sun, 29 Feb 1900 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:00 GMT",
            "Sun, 06 Nov 1994 08:49:61 GMT",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT x",
        ] {
            assert_eq!(parse(bad, 0.0), None, "{bad}");
        }
        assert!(parse("Tue, 29 Feb 2000 00:00:00 GMT", 0.0).is_some());
        assert!(parse("Sun, 06 Nov 1994 23:59:60 GMT", 0.0).is_some());
    }

    #[test]
    fn civil_days_match_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(9999, 12, 31), 2_932_896);
        assert_eq!(year_of(-1), 1969);
        assert_eq!(year_of(11_016), 2000);
    }

    proptest! {
        #[test]
        fn never_panics(s in ".{0,40}", now in any::<f64>()) {
            if let Some(ms) = parse(&s, now) {
                prop_assert!(ms >= 0.0);
            }
        }

        #[test]
        fn never_panics_near_valid_dates(
            s in "(Sun|Sunday|Feb)[ ,-]{0,2}[0-9 ]{0,3}[ -]?(Nov|Feb)?[ -]?[0-9]{0,4} ?[0-9:]{0,9} ?(GMT|[0-9]{4})?",
            now in any::<f64>(),
        ) {
            let _ = parse(&s, now);
        }

        #[test]
        fn days_and_years_round_trip(year in 0i64..=9999, month in 1u32..=12, day in 1u32..=28) {
            prop_assert_eq!(year_of(days_from_civil(year, month, day)), year);
            prop_assert_eq!(
                days_from_civil(year, month, day) + 1,
                days_from_civil(year, month, day + 1)
            );
        }
    }
}
