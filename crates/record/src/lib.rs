//! Each record declared once. `#[derive(Wire)]` writes a record's fields
//! to bytes and reads them back, in declaration order, to move an analysis
//! between the machines of a cluster; `#[derive(Columns)]` describes them
//! as a table's columns, with the names and nesting of the JSON the
//! command line writes. A field added to a record is in both without
//! another word.

// The derives name this crate by its path, from inside it too.
extern crate self as record;

mod columns;
mod wire;

pub use columns::{Cell, Column, Columns, Kind};
pub use record_derive::{Columns, Wire};
pub use wire::{take_bytes, Malformed, Wire};
