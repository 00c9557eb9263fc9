//! CSV: one table per command, a header naming every field of the table's
//! schema (nested fields with dotted names), then one line per row.

use std::io::{self, Write};

use arrow_array::RecordBatch;
use arrow_schema::FieldRef;
use tcp::Event;

use pipeline::Analysis;

use super::batches;
use columns::csv::Chosen;
use columns::schema;

/// Writes the header of a table of `fields`, then its rows from the batches
/// `batch` makes: the `chosen` columns only, when there is a choice.
fn table<T: Sync>(
    out: &mut dyn Write,
    fields: &[FieldRef],
    chosen: Option<&Chosen>,
    rows: &[T],
    batch: impl Fn(&[T]) -> Result<RecordBatch, columns::Error> + Sync,
) -> io::Result<()> {
    header(out, fields, chosen)?;
    batches::write(out, rows, batch, |bytes, batch| {
        columns::csv::write_chosen_rows(bytes, batch, chosen)
    })
}

fn header(out: &mut dyn Write, fields: &[FieldRef], chosen: Option<&Chosen>) -> io::Result<()> {
    match chosen {
        Some(chosen) => chosen.write_header(out),
        None => columns::csv::write_header(out, fields),
    }
}

pub fn connections(
    out: &mut dyn Write,
    analysis: &Analysis,
    chosen: Option<&Chosen>,
) -> io::Result<()> {
    table(
        out,
        &schema::connections(),
        chosen,
        &analysis.connections,
        |connections| columns::batch::connections(connections, &analysis.rate_limits),
    )
}

pub fn transactions(
    out: &mut dyn Write,
    analysis: &Analysis,
    chosen: Option<&Chosen>,
) -> io::Result<()> {
    table(
        out,
        &schema::transactions(),
        chosen,
        &analysis.transactions,
        columns::batch::transactions,
    )
}

/// The findings, the first ranked first.
pub fn findings(
    out: &mut dyn Write,
    analysis: &Analysis,
    chosen: Option<&Chosen>,
) -> io::Result<()> {
    table(
        out,
        &schema::findings(),
        chosen,
        &analysis.findings,
        columns::batch::findings,
    )
}

pub fn timeline(
    out: &mut dyn Write,
    analysis: &Analysis,
    chosen: Option<&Chosen>,
) -> io::Result<()> {
    table(
        out,
        &schema::timeline(),
        chosen,
        &analysis.ticks,
        columns::batch::timeline,
    )
}

pub fn event_header(out: &mut dyn Write, chosen: Option<&Chosen>) -> io::Result<()> {
    header(out, &schema::events(), chosen)
}

/// The rows of these events, without the header.
pub fn event_rows(
    out: &mut dyn Write,
    events: &[Event],
    chosen: Option<&Chosen>,
) -> io::Result<()> {
    batches::write(out, events, columns::batch::events, |bytes, batch| {
        columns::csv::write_chosen_rows(bytes, batch, chosen)
    })
}
