//! The Arrow schema of each table, from the columns its records declare
//! (`record::Columns`): field for field the JSON the command line writes,
//! the same names, nested where the JSON nests.
//!
//! Times in nanoseconds since the epoch are UTC timestamps; durations stay
//! milliseconds as floats; counters are signed 64-bit integers, which every
//! reader (pandas, DuckDB, Spark) takes without conversion. A field is
//! nullable exactly where the JSON may hold null or leave it out.

use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef, Fields, TimeUnit};
use record::{Cell, Column, Columns, Kind};

use diagnose::Finding;
use tcp::{ConnectionSummary, Event};
use timeline::Tick;
use transactions::{ConnectionLedger, Latency, Transaction};

use crate::rows::RateLimitRow;

/// One row per connection, with what limits each direction's rate.
pub fn connections() -> Vec<FieldRef> {
    let mut fields = connection_summaries();
    fields.push(rate_limit());
    fields
}

/// A connection's fields but what limits its rate.
pub(crate) fn connection_summaries() -> Vec<FieldRef> {
    fields::<ConnectionSummary>()
}

/// What limits a connection's rate, each way.
pub(crate) fn rate_limit() -> FieldRef {
    let [rate_limit] = <[FieldRef; 1]>::try_from(fields::<RateLimitRow>()).expect("one column");
    rate_limit
}

/// One row per analysis event.
pub fn events() -> Vec<FieldRef> {
    fields::<Event>()
}

/// One row per request/response transaction.
pub fn transactions() -> Vec<FieldRef> {
    fields::<Transaction>()
}

/// One row per connection with transactions: their ledgers summed, and
/// where that time went.
pub fn ledger() -> Vec<FieldRef> {
    let mut fields = fields::<ConnectionLedger>();
    fields.push(arrow_field(&Column {
        name: "latency",
        kind: Latency::kind(),
        nullable: false,
    }));
    fields
}

/// One row per tick of the timeline.
pub fn timeline() -> Vec<FieldRef> {
    fields::<Tick>()
}

/// One row per finding, the costliest first.
pub fn findings() -> Vec<FieldRef> {
    fields::<Finding>()
}

fn fields<T: Columns>() -> Vec<FieldRef> {
    T::columns().iter().map(arrow_field).collect()
}

fn arrow_field(column: &Column) -> FieldRef {
    Arc::new(Field::new(
        column.name,
        data_type(&column.kind),
        column.nullable,
    ))
}

fn data_type(kind: &Kind) -> DataType {
    match kind {
        Kind::Int => DataType::Int64,
        Kind::Float => DataType::Float64,
        Kind::Flag => DataType::Boolean,
        Kind::Text => DataType::Utf8,
        Kind::Time => DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        Kind::List(item) => {
            let item = Field::new("element", data_type(item), false);
            DataType::List(Arc::new(item))
        }
        Kind::Group(columns) => DataType::Struct(columns.iter().map(arrow_field).collect()),
        Kind::Figures => {
            let entry = Fields::from(vec![
                Field::new("key", DataType::Utf8, false),
                Field::new("value", DataType::Float64, false),
            ]);
            let entries = Field::new("entries", DataType::Struct(entry), false);
            DataType::Map(Arc::new(entries), false)
        }
    }
}
