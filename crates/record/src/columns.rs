//! A record's fields as a table's columns: what each holds and whether it
//! may be null, from which each output's schema (Arrow, Parquet, CSV, JSON
//! lines, Python, Spark) is made.

use std::collections::BTreeMap;

/// What a column holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A signed 64-bit integer: counters, frames, sizes.
    Int,
    Float,
    Flag,
    Text,
    /// Nanoseconds since the epoch, in UTC.
    Time,
    /// Values of one kind, none of them null.
    List(Box<Kind>),
    /// Columns nested under one name, as the JSON nests them.
    Group(Vec<Column>),
    /// Names to figures, as `{"stall_ms": 200.0}`.
    Figures,
}

impl Kind {
    /// Nanoseconds since the epoch read as times: the integer itself, or
    /// each of a list of them.
    pub fn as_time(self) -> Kind {
        match self {
            Kind::Int => Kind::Time,
            Kind::List(item) => Kind::List(Box::new(item.as_time())),
            other => other,
        }
    }
}

/// One column: its name, what it holds, and whether it may be null.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
    pub nullable: bool,
}

/// A record whose fields are a table's columns.
pub trait Columns {
    fn columns() -> Vec<Column>;
}

/// A value that fills one column.
pub trait Cell {
    fn kind() -> Kind;
    /// Whether the column may hold null: only where the value is optional.
    fn nullable() -> bool {
        false
    }
}

macro_rules! cells {
    ($kind:ident: $($type:ty),*) => {$(
        impl Cell for $type {
            fn kind() -> Kind {
                Kind::$kind
            }
        }
    )*};
}

// Counters are signed 64-bit integers in every table, which every reader
// (pandas, DuckDB, Spark) takes without conversion.
cells!(Int: u8, u16, u32, u64, i64);
cells!(Float: f64);
cells!(Flag: bool);
cells!(Text: String);

impl<T: Cell> Cell for Option<T> {
    fn kind() -> Kind {
        T::kind()
    }
    fn nullable() -> bool {
        true
    }
}

impl<T: Cell> Cell for Vec<T> {
    fn kind() -> Kind {
        Kind::List(Box::new(T::kind()))
    }
}

impl Cell for BTreeMap<&'static str, f64> {
    fn kind() -> Kind {
        Kind::Figures
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Columns;

    #[derive(Columns)]
    #[allow(dead_code)]
    enum Side {
        Client,
        Server,
    }

    #[derive(Columns, serde::Serialize)]
    #[allow(dead_code)]
    struct Inner {
        #[serde(rename(serialize = "count"), default)]
        count: u64,
        #[serde(skip)]
        scratch: Vec<u8>,
    }

    #[derive(Columns)]
    #[allow(dead_code)]
    struct Row {
        #[column(time)]
        at_ns: i64,
        #[column(time)]
        retries_ns: Vec<i64>,
        span_ns: i64,
        by: Option<Side>,
        inner: Option<Inner>,
        #[column(text)]
        address: (u8, u8),
    }

    #[test]
    fn a_records_columns_follow_its_fields_and_their_attributes() {
        let column = |name, kind, nullable| Column {
            name,
            kind,
            nullable,
        };
        let inner = vec![column("count", Kind::Int, false)];
        assert_eq!(
            Row::columns(),
            vec![
                column("at_ns", Kind::Time, false),
                column("retries_ns", Kind::List(Box::new(Kind::Time)), false),
                column("span_ns", Kind::Int, false),
                column("by", Kind::Text, true),
                column("inner", Kind::Group(inner), true),
                column("address", Kind::Text, false),
            ]
        );
    }
}
