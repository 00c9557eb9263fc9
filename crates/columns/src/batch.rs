//! Each table's rows as one Arrow batch of its schema: what every output
//! (Parquet, CSV, JSON lines, Python, Spark) is written from. A caller with
//! many rows may make a batch of each slice of them.

use arrow_array::RecordBatch;
use arrow_schema::FieldRef;
use serde::Serialize;

use diagnose::Finding;
use tcp::{ConnectionSummary, Event};
use timeline::Tick;
use transactions::{ConnectionLedger, Transaction};

use crate::{rows, schema, Error};

/// The connections, each with what limits its rate, read from `ledgers`
/// (every connection's, or any that hold these connections').
pub fn connections(
    connections: &[ConnectionSummary],
    ledgers: &[ConnectionLedger],
) -> Result<RecordBatch, Error> {
    batch(
        schema::connections(),
        &rows::connections(connections, ledgers),
    )
}

pub fn transactions(transactions: &[Transaction]) -> Result<RecordBatch, Error> {
    batch(schema::transactions(), transactions)
}

pub fn events(events: &[Event]) -> Result<RecordBatch, Error> {
    batch(schema::events(), events)
}

pub fn timeline(ticks: &[Tick]) -> Result<RecordBatch, Error> {
    batch(schema::timeline(), ticks)
}

pub fn findings(findings: &[Finding]) -> Result<RecordBatch, Error> {
    batch(schema::findings(), findings)
}

/// Each connection's ledger, its transactions' summed.
pub fn ledger(ledgers: &[ConnectionLedger]) -> Result<RecordBatch, Error> {
    batch(schema::ledger(), &rows::ledgers(ledgers))
}

fn batch<T: Serialize>(fields: Vec<FieldRef>, rows: &[T]) -> Result<RecordBatch, Error> {
    serde_arrow::to_record_batch(&fields, &rows).map_err(|error| Error::Arrow(error.to_string()))
}
