//! Durations and instants as they are typed on the command line: a
//! duration always has its unit (`250ms`, `1.5m`); an instant is a time of
//! day (`14:03:07.25`, UTC), an offset from the capture's start (`+90s`) or
//! seconds since the epoch (`@1700000000.5`); and sizes, as typed and as shown.

use pipeline::Instant;

const UNITS: [(&str, f64); 6] = [
    ("ns", 1.0),
    ("us", 1e3),
    ("ms", 1e6),
    ("s", 1e9),
    ("m", 60e9),
    ("h", 3600e9),
];

/// "250ms", "1s", "5m", "1h" as nanoseconds; a bare number is refused.
pub fn duration_ns(text: &str) -> Result<i64, String> {
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration such as 100ms or 1s"))?;
    let Some(&(_, scale)) = UNITS.iter().find(|(name, _)| *name == unit) else {
        return Err(if unit.is_empty() {
            format!("{text:?} needs a unit (ns, us, ms, s, m or h), such as {text}s or {text}ms")
        } else {
            format!("{text:?}: unknown unit {unit:?} (ns, us, ms, s, m or h)")
        });
    };
    let nanos = value * scale;
    if !(1.0..=1e15).contains(&nanos) {
        return Err(format!("{text:?} is out of range"));
    }
    Ok(nanos as i64)
}

/// "512M", "4G", "1.5GiB", "100000000" (bytes) as bytes; powers of 1024.
pub fn size(text: &str) -> Result<u64, String> {
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: f64 = match unit
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 1.0,
        "K" => 1024.0,
        "M" => 1024.0 * 1024.0,
        "G" => 1024.0 * 1024.0 * 1024.0,
        "T" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("unknown unit {unit:?} (K, M, G, T)")),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| "not a size such as 512M or 4G".to_string())?;
    let bytes = value * scale;
    if !(bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err("out of range".into());
    }
    Ok(bytes as u64)
}

/// Nanoseconds as the shortest of 250ms, 2s, 5m, 1h, 20us that --tick reads back.
/// A file's size for a person: "812 bytes", "10.5 MB", "1.6 GB" (powers of 1000).
pub fn size_text(bytes: u64) -> String {
    diagnose::units::bytes(bytes)
}

pub fn duration_text(ns: i64) -> String {
    let units = [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
    ];
    for (scale, unit) in units {
        if ns >= scale && ns % scale == 0 {
            return format!("{}{unit}", ns / scale);
        }
    }
    format!("{ns}ns")
}

/// An instant: `14:03:07.25`, `+90s`, or `@1700000000.5`.
pub fn instant(text: &str) -> Result<Instant, String> {
    if let Some(offset) = text.strip_prefix('+') {
        return duration_ns(offset)
            .or_else(|error| if offset == "0" { Ok(0) } else { Err(error) })
            .map(Instant::FromStart);
    }
    if let Some(seconds) = text.strip_prefix('@') {
        let seconds: f64 = seconds.parse().map_err(|_| {
            format!("{text:?}: @ takes seconds since the epoch, such as @1700000000.5")
        })?;
        return Ok(Instant::Epoch((seconds * 1e9).round() as i64));
    }
    time_of_day_ns(text).map(Instant::TimeOfDay).ok_or_else(|| {
        format!(
            "{text:?} is not an instant: give a time of day (14:03:07.25, UTC), an offset \
             from the start (+90s) or epoch seconds (@1700000000.5)"
        )
    })
}

/// `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fraction` as nanoseconds after midnight.
fn time_of_day_ns(text: &str) -> Option<i64> {
    let mut parts = text.split(':');
    let hours: i64 = parts.next()?.parse().ok()?;
    let minutes: i64 = parts.next()?.parse().ok()?;
    let seconds: f64 = parts.next().map_or(Some(0.0), |s| s.parse().ok())?;
    let valid = parts.next().is_none()
        && (0..24).contains(&hours)
        && (0..60).contains(&minutes)
        && (0.0..60.0).contains(&seconds);
    valid.then(|| (hours * 3600 + minutes * 60) * 1_000_000_000 + (seconds * 1e9).round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_their_units() {
        assert_eq!(size("512M"), Ok(512 << 20));
        assert_eq!(size("4G"), Ok(4 << 30));
        assert_eq!(size("1.5GiB"), Ok(3 << 29));
        assert_eq!(size("1000"), Ok(1000));
        assert!(size("5 furlongs").is_err());
        assert!(size("0").is_err());
    }

    #[test]
    fn durations_are_written_as_they_are_read() {
        assert_eq!(duration_text(250_000_000), "250ms");
        assert_eq!(
            duration_ns(&duration_text(90_000_000_000)),
            Ok(90_000_000_000)
        );
    }

    #[test]
    fn durations_need_their_units() {
        assert_eq!(duration_ns("250ms"), Ok(250_000_000));
        assert_eq!(duration_ns("1.5m"), Ok(90_000_000_000));
        let bare = duration_ns("7").unwrap_err();
        assert!(bare.contains("needs a unit"), "{bare}");
        assert!(duration_ns("5 parsecs").is_err());
        assert!(duration_ns("0s").is_err());
    }

    #[test]
    fn instants_read_three_ways() {
        assert_eq!(instant("+90s"), Ok(Instant::FromStart(90_000_000_000)));
        assert_eq!(instant("+0"), Ok(Instant::FromStart(0)));
        assert_eq!(
            instant("@1700000000.5"),
            Ok(Instant::Epoch(1_700_000_000_500_000_000))
        );
        assert_eq!(
            instant("14:03:07.25"),
            Ok(Instant::TimeOfDay(50_587_250_000_000))
        );
        assert_eq!(instant("14:03"), Ok(Instant::TimeOfDay(50_580_000_000_000)));
        assert!(instant("25:00").is_err());
        assert!(instant("+7").is_err());
        assert!(instant("yesterday").is_err());
    }
}
