//! Each table's rows as one Arrow batch of its schema: what every output
//! (Parquet, CSV, JSON lines, Python, Spark) is written from. A caller with
//! many rows may make a batch of each slice of them.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{FieldRef, Schema};
use serde::Serialize;

use diagnose::Finding;
use pipeline::RateLimit;
use tcp::{ConnectionSummary, Event};
use timeline::Tick;
use transactions::{ConnectionLedger, Transaction};

use crate::{rows, schema, Error};

/// The connections, each with what limits its rate, found in `rate_limits`
/// (every connection's, or any that hold these connections'). The summaries
/// are serialized as they are and the rate limits beside them: a row
/// flattening both would be serialized as a map, field name by field name.
pub fn connections(
    connections: &[ConnectionSummary],
    rate_limits: &[RateLimit],
) -> Result<RecordBatch, Error> {
    let summaries = batch(schema::connection_summaries(), connections)?;
    let rate_limits = batch(
        vec![schema::rate_limit()],
        &rows::rate_limits(connections, rate_limits),
    )?;
    side_by_side(&summaries, &rate_limits)
}

/// The columns of `left`, then those of `right`, of the same rows.
fn side_by_side(left: &RecordBatch, right: &RecordBatch) -> Result<RecordBatch, Error> {
    let (left_schema, right_schema) = (left.schema(), right.schema());
    let fields: Vec<FieldRef> = left_schema
        .fields()
        .iter()
        .chain(right_schema.fields())
        .cloned()
        .collect();
    let columns = left
        .columns()
        .iter()
        .chain(right.columns())
        .cloned()
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|error| Error::Arrow(error.to_string()))
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
