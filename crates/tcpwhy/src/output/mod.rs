//! Writes results as a terminal table, JSON lines or CSV.
//!
//! The JSON shape is documented in README.md and kept stable: one object per
//! line, each with a `type` (`connection`, `event`, `transaction`,
//! `signature`, `tick`, `finding`, `packet`, then one `end`).

pub mod connection;
mod csv;
mod json;
pub mod table;
pub mod text;

use std::io::{self, Write};

use tcp::Event;

use pipeline::Analysis;
use text::Clock;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
}

/// How results are written: the format, how instants read, and the width
/// paragraphs wrap to (none when piped).
#[derive(Clone, Copy)]
pub struct Style {
    pub format: Format,
    /// Instants as seconds since the epoch instead of the time of day.
    pub epoch: bool,
    pub width: Option<usize>,
}

impl Style {
    pub fn clock(&self, analysis: &Analysis) -> Clock {
        Clock::new(analysis.first_ns, self.epoch)
    }
}

/// A results writer of one command.
pub type Writer = fn(&mut dyn Write, &Style, &Analysis) -> io::Result<()>;

/// Writes every connection of the analysis.
pub fn connections(mut out: &mut dyn Write, style: &Style, analysis: &Analysis) -> io::Result<()> {
    match style.format {
        Format::Table => table::connections(&mut out, analysis, style),
        Format::Json => json::connections(&mut out, analysis),
        Format::Csv => csv::connections(&mut out, analysis),
    }
}

/// Writes the transactions and their per-signature statistics.
pub fn transactions(mut out: &mut dyn Write, style: &Style, analysis: &Analysis) -> io::Result<()> {
    match style.format {
        Format::Table => table::transactions(&mut out, analysis, style),
        Format::Json => json::transactions(&mut out, analysis),
        Format::Csv => csv::transactions(&mut out, analysis),
    }
}

/// Writes the ranked findings.
pub fn findings(mut out: &mut dyn Write, style: &Style, analysis: &Analysis) -> io::Result<()> {
    match style.format {
        Format::Table => table::findings(&mut out, analysis, style),
        Format::Json => json::findings(&mut out, analysis),
        Format::Csv => csv::findings(&mut out, analysis),
    }
}

/// Writes one row per tick of the timeline.
pub fn timeline(mut out: &mut dyn Write, style: &Style, analysis: &Analysis) -> io::Result<()> {
    match style.format {
        Format::Table => table::timeline(&mut out, analysis, style),
        Format::Json => json::timeline(&mut out, analysis),
        Format::Csv => csv::timeline(&mut out, analysis),
    }
}

/// Says that the results are partial, and why, when the read stopped early.
pub fn partial_note(analysis: &Analysis) -> Option<String> {
    partial_reason(analysis).map(|reason| format!("partial: {reason}"))
}

/// Why the read stopped early, when it did.
pub fn partial_reason(analysis: &Analysis) -> Option<String> {
    let Some(error) = analysis.error.as_ref() else {
        return analysis.interrupted.then(|| {
            format!(
                "stopped by a signal after {}",
                text::plural(analysis.counts.frames, "frame")
            )
        });
    };
    Some(if error.cut_short {
        format!(
            "{} ends inside a record at byte {}; the results cover the {} before it",
            error.path,
            error.offset,
            text::plural(analysis.counts.frames, "frame")
        )
    } else {
        format!("the read stopped at {error}")
    })
}

/// Streams events as they are raised, then closes the output.
pub struct EventWriter {
    style: Style,
    written: u64,
    start_ns: Option<i64>,
}

impl EventWriter {
    pub fn new(style: Style) -> Self {
        EventWriter {
            style,
            written: 0,
            start_ns: None,
        }
    }

    /// The capture's first packet came at `start_ns`: offsets count from it.
    pub fn starts_at(&mut self, start_ns: i64) {
        self.start_ns.get_or_insert(start_ns);
    }

    pub fn write(&mut self, out: &mut impl Write, event: &Event) -> io::Result<()> {
        let first = self.written == 0;
        self.written += 1;
        match self.style.format {
            Format::Table => {
                let clock = Clock::new(self.start_ns, self.style.epoch);
                table::event(out, event, first, &clock)
            }
            Format::Json => json::event(out, event),
            Format::Csv => csv::event(out, event, first),
        }
    }

    pub fn finish(&self, out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
        match self.style.format {
            Format::Table => table::footer(out, analysis, self.written, "event"),
            Format::Json => json::end(out, analysis),
            Format::Csv if self.written == 0 => csv::event_header(out),
            Format::Csv => Ok(()),
        }
    }
}
