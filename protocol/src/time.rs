//! Times as people read them: the one calendar conversion the daemon, the CLI and the man pages
//! use (UTC, proleptic Gregorian, from Unix time). Traces keep milliseconds; these render them.

/// The UTC calendar date of `unix_seconds` as (year, month, day), by Howard Hinnant's
/// days-from-civil inverse.
fn civil(unix_seconds: i64) -> (i64, i64, i64) {
    let z = unix_seconds.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// `YYYY-MM-DD` (UTC) of a Unix time in seconds: the form a man page's `.TH` takes.
pub fn date(unix_seconds: i64) -> String {
    let (year, month, day) = civil(unix_seconds);
    format!("{year:04}-{month:02}-{day:02}")
}

/// `YYYY-MM-DD HH:MM:SS UTC` of milliseconds since the Unix epoch, as traces and checkpoints
/// record times: the turn log, `talos trace` and `talos checkpoints` show times so.
pub fn utc(ms: u64) -> String {
    let secs = i64::try_from(ms / 1000).unwrap_or(i64::MAX);
    let rest = secs.rem_euclid(86_400);
    format!(
        "{} {:02}:{:02}:{:02} UTC",
        date(secs),
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves the calendar against known instants: the epoch, a leap day, a century that is
    /// not a leap year, a year's last second, and a day before the epoch.
    #[test]
    fn known_instants_render_in_utc() {
        for (ms, expected) in [
            (0, "1970-01-01 00:00:00 UTC"),
            (951_782_400_000, "2000-02-29 00:00:00 UTC"),
            (4_107_542_400_000, "2100-03-01 00:00:00 UTC"),
            (1_798_761_599_000, "2026-12-31 23:59:59 UTC"),
            (1_796_156_659_999, "2026-12-01 20:24:19 UTC"),
        ] {
            assert_eq!(utc(ms), expected, "{ms}");
        }
        assert_eq!(date(-86_400), "1969-12-31");
    }
}
