//! CSV: one table per command, a header naming every field of the table's
//! schema (nested fields with dotted names), then one line per row.

use std::io::{self, Write};

use arrow_array::RecordBatch;
use arrow_schema::FieldRef;
use tcp::Event;

use pipeline::Analysis;

use super::batches;
use columns::schema;

/// Writes the header of a table of `fields`, then its rows from the batches `batch` makes.
fn table<T: Sync>(
    out: &mut dyn Write,
    fields: &[FieldRef],
    rows: &[T],
    batch: impl Fn(&[T]) -> Result<RecordBatch, columns::Error> + Sync,
) -> io::Result<()> {
    columns::csv::write_header(out, fields)?;
    batches::write(out, rows, batch, |bytes, batch| {
        columns::csv::write_rows(bytes, batch)
    })
}

pub fn connections(out: &mut dyn Write, analysis: &Analysis) -> io::Result<()> {
    table(
        out,
        &schema::connections(),
        &analysis.connections,
        |connections| columns::batch::connections(connections, &analysis.rate_limits),
    )
}

pub fn transactions(out: &mut dyn Write, analysis: &Analysis) -> io::Result<()> {
    table(
        out,
        &schema::transactions(),
        &analysis.transactions,
        columns::batch::transactions,
    )
}

/// The findings, the first ranked first.
pub fn findings(out: &mut dyn Write, analysis: &Analysis) -> io::Result<()> {
    table(
        out,
        &schema::findings(),
        &analysis.findings,
        columns::batch::findings,
    )
}

pub fn timeline(out: &mut dyn Write, analysis: &Analysis) -> io::Result<()> {
    table(
        out,
        &schema::timeline(),
        &analysis.ticks,
        columns::batch::timeline,
    )
}

pub fn event_header(out: &mut dyn Write) -> io::Result<()> {
    columns::csv::write_header(out, &schema::events())
}

/// The rows of these events, without the header.
pub fn event_rows(out: &mut dyn Write, events: &[Event]) -> io::Result<()> {
    batches::write(out, events, columns::batch::events, |bytes, batch| {
        columns::csv::write_rows(bytes, batch)
    })
}
