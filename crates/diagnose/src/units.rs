//! Durations, sizes and rates as every command and page writes them, three
//! significant figures in the unit that reads best: `850 µs`, `42.0 ms`,
//! `3.21 s`, `119.3 s`; `64.0 kB`; `69.6 kbit/s`. A figure in a title and
//! the same figure on its cost line read the same.

/// A duration given in milliseconds.
pub fn duration(ms: f64) -> String {
    let magnitude = ms.abs();
    if magnitude < 5e-4 {
        "0 ms".into()
    } else if magnitude >= 9_999.5 {
        format!("{:.1} s", ms / 1e3)
    } else if magnitude >= 999.95 {
        format!("{:.2} s", ms / 1e3)
    } else if magnitude >= 0.9995 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.0} µs", ms * 1e3)
    }
}

/// A change in duration, with its sign: `+1.20 s`, `-35 µs`, `0 ms`.
pub fn duration_change(ms: f64) -> String {
    let text = duration(ms);
    if ms >= 5e-4 {
        format!("+{text}")
    } else {
        text
    }
}

/// A size: `640 bytes`, `64.0 kB`, `1.2 MB`.
pub fn bytes(n: u64) -> String {
    let units = [(1e9, "GB"), (1e6, "MB"), (1e3, "kB")];
    match units.iter().find(|(scale, _)| n as f64 >= *scale) {
        Some((scale, unit)) => format!("{:.1} {unit}", n as f64 / scale),
        None if n == 1 => "1 byte".into(),
        None => format!("{n} bytes"),
    }
}

/// A rate given in bytes per second, in bits per second as links are rated.
pub fn rate(bytes_per_s: f64) -> String {
    let bits = bytes_per_s * 8.0;
    let units = [(1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")];
    match units.iter().find(|(scale, _)| bits >= *scale) {
        Some((scale, unit)) => format!("{:.1} {unit}", bits / scale),
        None => format!("{bits:.0} bit/s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_keep_three_figures_in_the_unit_that_reads_best() {
        assert_eq!(duration(0.035), "35 µs");
        assert_eq!(duration(0.9999), "1.0 ms");
        assert_eq!(duration(23.04), "23.0 ms");
        assert_eq!(duration(999.96), "1.00 s");
        assert_eq!(duration(1692.736), "1.69 s");
        assert_eq!(duration(119_350.0), "119.3 s");
        assert_eq!(duration(461_765.9), "461.8 s");
        assert_eq!(duration(0.0), "0 ms");
        assert_eq!(duration(-12.34), "-12.3 ms");
        assert_eq!(duration_change(1200.0), "+1.20 s");
        assert_eq!(duration_change(-0.035), "-35 µs");
    }

    #[test]
    fn sizes_and_rates_read_in_their_units() {
        assert_eq!(bytes(1), "1 byte");
        assert_eq!(bytes(640), "640 bytes");
        assert_eq!(bytes(64_000), "64.0 kB");
        assert_eq!(rate(8_700.0), "69.6 kbit/s");
        assert_eq!(rate(12.5), "100 bit/s");
        assert_eq!(rate(125_000_000.0), "1.0 Gbit/s");
    }
}
