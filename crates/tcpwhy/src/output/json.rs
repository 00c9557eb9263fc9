//! JSON lines: one object per row of a table (connection, transaction,
//! event, tick, finding, connection ledger) with every field of its schema,
//! the per-signature figures, then an `end` object.

use std::io::{self, Write};

use arrow_array::RecordBatch;
use serde::Serialize;
use tcp::{ConnectionSummary, Event};
use transactions::Transaction;

use super::batches;
use columns::csv::Chosen;

use pipeline::{Analysis, Counts, RateLimit};

#[derive(Serialize)]
struct Line<'a, T> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    body: &'a T,
}

#[derive(Serialize)]
struct End<'a> {
    connections: usize,
    transactions: usize,
    findings: usize,
    /// The first frame's time: where every offset starts, as Wireshark's relative time does.
    start_ns: Option<i64>,
    #[serde(flatten)]
    counts: &'a Counts,
    /// True when an error or a signal stopped the read: everything above is what came before it.
    partial: bool,
    /// The error was the input ending inside a record: the results are usable.
    cut_short: bool,
    error: Option<String>,
    /// What the memory budget left out of the lists.
    trimmed: &'a tcp::Trimmed,
    memory_budget_bytes: u64,
    /// Handshakes that never completed, per server: the ten most attempted.
    unanswered_syns: &'a [tcp::UnansweredSyns],
    /// What to know to trust the results (the table's footer says the same).
    notes: Vec<String>,
}

pub fn line<T: Serialize>(out: &mut dyn Write, kind: &'static str, body: &T) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &Line { kind, body })?;
    out.write_all(b"\n")
}

/// Writes the rows of a table as lines of type `kind`, from the batches
/// `batch` makes: the `chosen` fields only, when there is a choice.
fn table_lines<T: Sync>(
    out: &mut dyn Write,
    kind: &str,
    chosen: Option<&Chosen>,
    rows: &[T],
    batch: impl Fn(&[T]) -> Result<RecordBatch, columns::Error> + Sync,
) -> io::Result<()> {
    batches::write(out, rows, batch, |bytes, batch| match chosen {
        Some(chosen) => chosen.write_json_lines(bytes, batch, Some(kind)),
        None => columns::json::write_lines(bytes, batch, Some(kind)),
    })
}

pub fn connections(
    out: &mut dyn Write,
    analysis: &Analysis,
    chosen: Option<&Chosen>,
) -> io::Result<()> {
    connection_lines(out, &analysis.connections, &analysis.rate_limits, chosen)?;
    end(out, analysis)
}

/// One `connection` line each, with what limits each direction's rate,
/// found in `rate_limits`: the `chosen` fields only, when there is a choice.
pub fn connection_lines(
    out: &mut dyn Write,
    connections: &[ConnectionSummary],
    rate_limits: &[RateLimit],
    chosen: Option<&Chosen>,
) -> io::Result<()> {
    table_lines(out, "connection", chosen, connections, |connections| {
        columns::batch::connections(connections, rate_limits)
    })
}

/// One `transaction` line each: the `chosen` fields only, when there is a choice.
pub fn transaction_lines(
    out: &mut dyn Write,
    transactions: &[Transaction],
    chosen: Option<&Chosen>,
) -> io::Result<()> {
    table_lines(
        out,
        "transaction",
        chosen,
        transactions,
        columns::batch::transactions,
    )
}

/// The transactions; without a choice of fields, their per-signature and
/// per-name figures and each connection's ledger too.
pub fn transactions(
    out: &mut dyn Write,
    analysis: &Analysis,
    chosen: Option<&Chosen>,
) -> io::Result<()> {
    transaction_lines(out, &analysis.transactions, chosen)?;
    if chosen.is_some() {
        return end(out, analysis);
    }
    for signature in transactions::by_signature(&analysis.transactions) {
        line(out, "signature", &signature)?;
    }
    for name in transactions::by_name(&analysis.transactions) {
        line(out, "name", &name)?;
    }
    table_lines(
        out,
        "connection_ledger",
        None,
        &analysis.ledgers,
        columns::batch::ledger,
    )?;
    end(out, analysis)
}

pub fn findings(
    out: &mut dyn Write,
    analysis: &Analysis,
    chosen: Option<&Chosen>,
) -> io::Result<()> {
    table_lines(
        out,
        "finding",
        chosen,
        &analysis.findings,
        columns::batch::findings,
    )?;
    end(out, analysis)
}

pub fn timeline(
    out: &mut dyn Write,
    analysis: &Analysis,
    chosen: Option<&Chosen>,
) -> io::Result<()> {
    table_lines(
        out,
        "tick",
        chosen,
        &analysis.ticks,
        columns::batch::timeline,
    )?;
    end(out, analysis)
}

pub fn event_lines(
    out: &mut dyn Write,
    events: &[Event],
    chosen: Option<&Chosen>,
) -> io::Result<()> {
    table_lines(out, "event", chosen, events, columns::batch::events)
}

pub fn end(out: &mut dyn Write, analysis: &Analysis) -> io::Result<()> {
    let end = End {
        connections: analysis.connections.len(),
        transactions: analysis.transactions.len(),
        findings: analysis.findings.len(),
        start_ns: analysis.first_ns,
        counts: &analysis.counts,
        partial: analysis.error.is_some() || super::interrupted(analysis),
        cut_short: analysis.error.as_ref().is_some_and(|error| error.cut_short),
        error: match &analysis.error {
            Some(error) => Some(error.to_string()),
            None if super::interrupted(analysis) => Some("stopped by a signal".into()),
            None => None,
        },
        trimmed: &analysis.trimmed,
        memory_budget_bytes: analysis.memory_budget_bytes,
        unanswered_syns: &analysis.unanswered_syns[..analysis.unanswered_syns.len().min(10)],
        notes: super::notes::sentences(analysis),
    };
    line(out, "end", &end)
}
