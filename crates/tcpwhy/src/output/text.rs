//! Text for people: instants, numbers and counts written one way in every
//! command, columns sized to what they hold, paragraphs wrapped to the
//! terminal.

use std::io::IsTerminal;

/// Lines never wrap narrower than this, however narrow the terminal says it is.
const NARROWEST: usize = 40;

/// How instants are written: the time of day (UTC) or seconds since the
/// epoch, and the offset from the capture's first packet.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start_ns: i64,
    epoch: bool,
}

impl Clock {
    /// A clock for a capture whose first packet came at `start_ns`.
    pub fn new(start_ns: Option<i64>, epoch: bool) -> Self {
        Clock {
            start_ns: start_ns.unwrap_or(0),
            epoch,
        }
    }

    pub fn start_ns(&self) -> i64 {
        self.start_ns
    }

    /// The header of the instant column.
    pub fn heading(&self) -> &'static str {
        if self.epoch {
            "epoch s"
        } else {
            "time (UTC)"
        }
    }

    /// `15:55:11.960617`, or `1236095711.960617` with `--epoch`.
    pub fn at(&self, ns: i64) -> String {
        let micros = ns.div_euclid(1000);
        let fraction = micros.rem_euclid(1_000_000);
        if self.epoch {
            return format!("{}.{fraction:06}", micros.div_euclid(1_000_000));
        }
        let seconds = capture::time_of_day_ns(ns) / 1_000_000_000;
        format!(
            "{:02}:{:02}:{:02}.{fraction:06}",
            seconds / 3600,
            seconds / 60 % 60,
            seconds % 60
        )
    }

    /// `+1.204117`: seconds after the capture's first packet.
    pub fn offset(&self, ns: i64) -> String {
        let micros = (ns - self.start_ns) / 1000;
        let sign = if micros < 0 { "-" } else { "+" };
        let micros = micros.abs();
        format!("{sign}{}.{:06}", micros / 1_000_000, micros % 1_000_000)
    }

    /// The width of [`Clock::both`] up to `latest_ns`, for a column that
    /// must be sized before its rows are known.
    pub fn width_until(&self, latest_ns: i64) -> usize {
        self.both(latest_ns.max(self.start_ns)).chars().count()
    }

    /// Both, as one cell: `15:55:11.960617 +1.204117`.
    pub fn both(&self, ns: i64) -> String {
        format!("{} {}", self.at(ns), self.offset(ns))
    }
}

/// `value` with `decimals` decimals, never `-0.000`.
pub fn fixed(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

/// A duration in milliseconds, in the unit that reads best: `850 µs`, `36.2 ms`, `4.21 s`.
pub fn duration_ms(ms: f64) -> String {
    diagnose::units::duration(ms)
}

/// A part of the latency split as people read it: `network`, `TCP waits`.
pub fn part_name(part: &str) -> &str {
    match part {
        "tcp_waits" => "TCP waits",
        other => other,
    }
}

/// `1 connection`, `2 connections`, `0 connections`.
pub fn plural(count: impl Into<u64>, noun: &str) -> String {
    match count.into() {
        1 => format!("1 {noun}"),
        count => format!("{count} {noun}s"),
    }
}

/// The width paragraphs wrap to: the terminal's, when stdout is one; none
/// when piped (a script reads whole lines).
pub fn terminal_width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    let (_, columns) = console::Term::stdout().size_checked()?;
    Some(usize::from(columns).max(NARROWEST))
}

/// `text` after `lead` (as `   why: `), its words wrapped to `width` with
/// later lines indented as far as `indent`; one line when there is no width.
pub fn paragraph(lead: &str, text: &str, indent: usize, width: Option<usize>) -> String {
    let Some(width) = width else {
        return format!("{lead}{text}");
    };
    let mut out = lead.to_string();
    let mut column = lead.chars().count();
    let mut line_empty = true;
    for word in text.split_whitespace() {
        let len = word.chars().count();
        if !line_empty && column + 1 + len > width {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            column = indent;
            line_empty = true;
        }
        if !line_empty {
            out.push(' ');
            column += 1;
        }
        out.push_str(word);
        column += len;
        line_empty = false;
    }
    out
}

/// Rows of cells printed in columns as wide as their widest cell; `right`
/// says which columns are numbers, aligned right.
pub struct Columns {
    rows: Vec<Vec<String>>,
    right: Vec<bool>,
}

impl Columns {
    pub fn new(headings: &[&str], right: &[bool]) -> Self {
        Columns {
            rows: vec![headings.iter().map(|h| h.to_string()).collect()],
            right: right.to_vec(),
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// The lines, heading first; `paint` colors a cell after it is padded
    /// (row index from 1 for data rows, column index).
    pub fn lines(&self, paint: impl Fn(usize, usize, String) -> String) -> Vec<String> {
        let columns = self.right.len();
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .map(|row| row.get(c).map_or(0, |cell| cell.chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        self.rows
            .iter()
            .enumerate()
            .map(|(r, row)| {
                let cells: Vec<String> = row
                    .iter()
                    .enumerate()
                    .map(|(c, cell)| {
                        let padded = if self.right[c] {
                            format!("{cell:>width$}", width = widths[c])
                        } else if c + 1 == columns {
                            cell.clone()
                        } else {
                            format!("{cell:<width$}", width = widths[c])
                        };
                        if r == 0 {
                            padded
                        } else {
                            paint(r, c, padded)
                        }
                    })
                    .collect();
                cells.join("  ").trim_end().to_string()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_negative_zero_and_units_that_read() {
        assert_eq!(fixed(-0.0001, 3), "0.000");
        assert_eq!(fixed(-1.5, 1), "-1.5");
        assert_eq!(duration_ms(-0.0000001), "0 ms");
        assert_eq!(duration_ms(0.85), "850 µs");
        assert_eq!(duration_ms(4210.0), "4.21 s");
        assert_eq!(plural(1u64, "connection"), "1 connection");
        assert_eq!(plural(0u64, "connection"), "0 connections");
    }

    #[test]
    fn instants_read_as_time_of_day_or_epoch_with_the_offset_from_the_start() {
        let start = 1_236_095_711_960_617_000;
        let clock = Clock::new(Some(start), false);
        assert_eq!(
            clock.both(start + 1_204_117_000),
            "15:55:13.164734 +1.204117"
        );
        let epoch = Clock::new(Some(start), true);
        assert_eq!(epoch.at(start), "1236095711.960617");
    }

    #[test]
    fn paragraphs_wrap_under_their_lead_and_stay_whole_without_a_width() {
        let text = "one two three four five six seven";
        assert_eq!(
            paragraph("   why: ", text, 8, None),
            format!("   why: {text}")
        );
        let wrapped = paragraph("   why: ", text, 8, Some(22));
        assert_eq!(
            wrapped,
            "   why: one two three\n        four five six\n        seven"
        );
        assert!(wrapped.lines().all(|line| line.chars().count() <= 22));
    }

    #[test]
    fn columns_fit_their_widest_cell() {
        let mut table = Columns::new(&["id", "client"], &[true, false]);
        table.push(vec!["1".into(), "[2001:db8:1:2::1002]:35023".into()]);
        table.push(vec!["10".into(), "10.0.0.1:1".into()]);
        let lines = table.lines(|_, _, cell| cell);
        assert_eq!(lines[0], "id  client");
        assert_eq!(lines[1], " 1  [2001:db8:1:2::1002]:35023");
        assert_eq!(lines[2], "10  10.0.0.1:1");
    }
}
