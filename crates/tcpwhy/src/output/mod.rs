//! Writes results as a terminal table, JSON lines or CSV.
//!
//! The JSON shape is documented in docs/formats.md and kept stable: one object per
//! line, each with a `type` (`connection`, `event`, `transaction`,
//! `signature`, `tick`, `finding`, `packet`, then one `end`). The rows of
//! CSV and of the JSON lines of a table hold the fields of that table's
//! schema (`columns::schema`), rendered from the same Arrow batches as the
//! Parquet export.

mod batches;
pub mod connection;
mod csv;
mod json;
pub mod notes;
pub mod table;
pub mod text;

use std::io::{self, Write};

use columns::csv::Chosen;
use tcp::Event;

use pipeline::Analysis;
use text::Clock;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
}

/// How results are written: the format, how instants read, the width
/// paragraphs wrap to (none when piped), and the columns CSV and JSON keep.
#[derive(Clone)]
pub struct Style {
    pub format: Format,
    /// Instants as seconds since the epoch instead of the time of day.
    pub epoch: bool,
    pub width: Option<usize>,
    /// Only these fields of the table's rows, in CSV and JSON.
    pub chosen: Option<Chosen>,
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
        Format::Json => json::connections(out, analysis, style.chosen.as_ref()),
        Format::Csv => csv::connections(out, analysis, style.chosen.as_ref()),
    }
}

/// Writes the transactions and their per-signature statistics.
pub fn transactions(mut out: &mut dyn Write, style: &Style, analysis: &Analysis) -> io::Result<()> {
    match style.format {
        Format::Table => table::transactions(&mut out, analysis, style),
        Format::Json => json::transactions(out, analysis, style.chosen.as_ref()),
        Format::Csv => csv::transactions(out, analysis, style.chosen.as_ref()),
    }
}

/// Writes the ranked findings.
pub fn findings(mut out: &mut dyn Write, style: &Style, analysis: &Analysis) -> io::Result<()> {
    match style.format {
        Format::Table => table::findings(&mut out, analysis, style),
        Format::Json => json::findings(out, analysis, style.chosen.as_ref()),
        Format::Csv => csv::findings(out, analysis, style.chosen.as_ref()),
    }
}

/// Writes one row per tick of the timeline.
pub fn timeline(mut out: &mut dyn Write, style: &Style, analysis: &Analysis) -> io::Result<()> {
    match style.format {
        Format::Table => table::timeline(&mut out, analysis, style),
        Format::Json => json::timeline(out, analysis, style.chosen.as_ref()),
        Format::Csv => csv::timeline(out, analysis, style.chosen.as_ref()),
    }
}

/// Says that the results are partial, and why, when the read stopped early.
pub fn partial_note(analysis: &Analysis) -> Option<String> {
    partial_reason(analysis).map(|reason| format!("partial: {reason}"))
}

/// Whether a signal stopped the work, before the analysis was over or
/// since, while its results are written.
pub fn interrupted(analysis: &Analysis) -> bool {
    analysis.interrupted || pipeline::stop_requested()
}

/// Why the results cover only part of the capture, when they do.
pub fn partial_reason(analysis: &Analysis) -> Option<String> {
    let Some(error) = analysis.error.as_ref() else {
        return interrupted(analysis).then(|| stopped_reason(analysis));
    };
    Some(if error.cut_short {
        format!(
            "{} ends inside a record{}; the results cover the {} before it",
            error.path,
            error.position(),
            text::plural(analysis.counts.frames, "frame")
        )
    } else {
        format!("the read stopped at {error}")
    })
}

fn stopped_reason(analysis: &Analysis) -> String {
    let frames = text::plural(analysis.counts.frames, "frame");
    if analysis.undiagnosed {
        format!("stopped by a signal after {frames}, before the diagnosis was done")
    } else {
        format!("stopped by a signal after {frames}")
    }
}

/// Events rendered together when not streamed: written in batches, not one by one.
const EVENTS_PER_BATCH: usize = 4096;

/// Streams events as they are raised, then closes the output.
pub struct EventWriter {
    style: Style,
    /// Each event goes out as it is raised, not with the next batch.
    live: bool,
    written: u64,
    pending: Vec<Event>,
    start_ns: Option<i64>,
}

impl EventWriter {
    pub fn new(style: Style, live: bool) -> Self {
        EventWriter {
            style,
            live,
            written: 0,
            pending: Vec::new(),
            start_ns: None,
        }
    }

    /// The capture's first packet came at `start_ns`: offsets count from it.
    pub fn starts_at(&mut self, start_ns: i64) {
        self.start_ns.get_or_insert(start_ns);
    }

    pub fn write(&mut self, out: &mut impl Write, event: &Event) -> io::Result<()> {
        if self.style.format == Format::Table {
            let clock = Clock::new(self.start_ns, self.style.epoch);
            self.written += 1;
            return table::event(out, event, self.written == 1, &clock);
        }
        self.pending.push(*event);
        if self.live || self.pending.len() >= EVENTS_PER_BATCH {
            self.write_pending(out)?;
        }
        Ok(())
    }

    fn write_pending(&mut self, out: &mut impl Write) -> io::Result<()> {
        let chosen = self.style.chosen.as_ref();
        if self.style.format == Format::Csv && self.written == 0 {
            csv::event_header(out, chosen)?;
        }
        match self.style.format {
            Format::Json => json::event_lines(out, &self.pending, chosen)?,
            _ => csv::event_rows(out, &self.pending, chosen)?,
        }
        self.written += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }

    pub fn finish(&mut self, out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
        match self.style.format {
            Format::Table => table::footer(out, analysis, self.written, "event"),
            Format::Json => {
                self.write_pending(out)?;
                json::end(out, analysis)
            }
            Format::Csv => self.write_pending(out),
        }
    }
}
