//! JSON lines: one object per connection or event, then an `end` object.

use std::io::{self, Write};

use columns::{ConnectionRow, LedgerRow};
use serde::Serialize;
use tcp::{ConnectionSummary, Event};
use transactions::ConnectionLedger;

use pipeline::{Analysis, Counts};

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

pub fn line<T: Serialize>(out: &mut impl Write, kind: &'static str, body: &T) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &Line { kind, body })?;
    out.write_all(b"\n")
}

/// Connections per serializing thread: large outputs use both cores.
const CONNECTIONS_PER_THREAD: usize = 10_000;

pub fn connections(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = analysis
        .connections
        .len()
        .div_ceil(threads)
        .max(CONNECTIONS_PER_THREAD);
    let serialized: Vec<io::Result<Vec<u8>>> = std::thread::scope(|scope| {
        let workers: Vec<_> = analysis
            .connections
            .chunks(chunk)
            .map(|connections| scope.spawn(move || serialize(connections, &analysis.ledgers)))
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("serializer panicked"))
            .collect()
    });
    for bytes in serialized {
        out.write_all(&bytes?)?;
    }
    end(out, analysis)
}

fn serialize(
    connections: &[ConnectionSummary],
    ledgers: &[ConnectionLedger],
) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(connections.len() * 1536);
    for c in connections {
        connection(&mut bytes, c, ConnectionLedger::of(ledgers, c.id))?;
    }
    Ok(bytes)
}

/// One `connection` line, with what limits each direction's rate.
pub fn connection(
    out: &mut impl Write,
    connection: &ConnectionSummary,
    ledger: Option<&ConnectionLedger>,
) -> io::Result<()> {
    line(out, "connection", &ConnectionRow::of(connection, ledger))
}

pub fn transactions(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    for transaction in &analysis.transactions {
        line(out, "transaction", transaction)?;
    }
    for signature in transactions::by_signature(&analysis.transactions) {
        line(out, "signature", &signature)?;
    }
    for name in transactions::by_name(&analysis.transactions) {
        line(out, "name", &name)?;
    }
    for ledger in &analysis.ledgers {
        line(out, "connection_ledger", &LedgerRow::of(ledger))?;
    }
    end(out, analysis)
}

pub fn findings(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    for finding in &analysis.findings {
        line(out, "finding", finding)?;
    }
    end(out, analysis)
}

pub fn timeline(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    for tick in &analysis.ticks {
        line(out, "tick", tick)?;
    }
    end(out, analysis)
}

pub fn event(out: &mut impl Write, event: &Event) -> io::Result<()> {
    line(out, "event", event)
}

pub fn end(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    let end = End {
        connections: analysis.connections.len(),
        transactions: analysis.transactions.len(),
        findings: analysis.findings.len(),
        counts: &analysis.counts,
        partial: analysis.error.is_some() || analysis.interrupted,
        cut_short: analysis.error.as_ref().is_some_and(|error| error.cut_short),
        error: match &analysis.error {
            Some(error) => Some(error.to_string()),
            None if analysis.interrupted => Some("stopped by a signal".into()),
            None => None,
        },
        trimmed: &analysis.trimmed,
        memory_budget_bytes: analysis.memory_budget_bytes,
        unanswered_syns: &analysis.unanswered_syns[..analysis.unanswered_syns.len().min(10)],
        notes: analysis.notes(),
    };
    line(out, "end", &end)
}
