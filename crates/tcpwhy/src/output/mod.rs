//! Writes results as a terminal table, JSON lines or CSV.
//!
//! The JSON shape is documented in README.md and kept stable: one object per
//! line, each with a `type` (`connection`, `event`, `transaction`,
//! `signature`, `tick`, `finding`, then one `end`).

mod csv;
mod json;
mod table;

use std::io::{self, Write};

use tcp::Event;

use pipeline::Analysis;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
}

/// Writes every connection of the analysis in `format`.
pub fn connections(mut out: &mut dyn Write, format: Format, analysis: &Analysis) -> io::Result<()> {
    match format {
        Format::Table => table::connections(&mut out, analysis),
        Format::Json => json::connections(&mut out, analysis),
        Format::Csv => csv::connections(&mut out, analysis),
    }
}

/// Writes the transactions and their per-signature statistics in `format`.
pub fn transactions(
    mut out: &mut dyn Write,
    format: Format,
    analysis: &Analysis,
) -> io::Result<()> {
    match format {
        Format::Table => table::transactions(&mut out, analysis),
        Format::Json => json::transactions(&mut out, analysis),
        Format::Csv => csv::transactions(&mut out, analysis),
    }
}

/// Writes the ranked findings in `format`.
pub fn findings(mut out: &mut dyn Write, format: Format, analysis: &Analysis) -> io::Result<()> {
    match format {
        Format::Table => table::findings(&mut out, analysis),
        Format::Json => json::findings(&mut out, analysis),
        Format::Csv => csv::findings(&mut out, analysis),
    }
}

/// Writes one row per tick of the timeline in `format`.
pub fn timeline(mut out: &mut dyn Write, format: Format, analysis: &Analysis) -> io::Result<()> {
    match format {
        Format::Table => table::timeline(&mut out, analysis),
        Format::Json => json::timeline(&mut out, analysis),
        Format::Csv => csv::timeline(&mut out, analysis),
    }
}

/// Streams events as they are raised, then closes the output.
pub struct EventWriter {
    format: Format,
    written: u64,
}

impl EventWriter {
    pub fn new(format: Format) -> Self {
        EventWriter { format, written: 0 }
    }

    pub fn write(&mut self, out: &mut impl Write, event: &Event) -> io::Result<()> {
        let first = self.written == 0;
        self.written += 1;
        match self.format {
            Format::Table => table::event(out, event, first),
            Format::Json => json::event(out, event),
            Format::Csv => csv::event(out, event, first),
        }
    }

    pub fn finish(&self, out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
        match self.format {
            Format::Table => table::footer(out, analysis, self.written, "events"),
            Format::Json => json::end(out, analysis),
            Format::Csv if self.written == 0 => csv::event_header(out),
            Format::Csv => Ok(()),
        }
    }
}
