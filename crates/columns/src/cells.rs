//! A batch's columns read cell by cell as text, for CSV and JSON lines.
//!
//! Scalars read the same in both: integers and timestamps as integers (a
//! timestamp is nanoseconds since the epoch, as its `_ns` name says),
//! floats in their shortest exact form, flags as `true` or `false`. Lists
//! and maps are written as JSON, in a CSV cell too.

use std::io::{self, Write};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, TimestampNanosecondType};
use arrow_array::{Array, BooleanArray, StringArray};
use arrow_schema::{DataType, TimeUnit};

/// One column, or a list's items, or a map's keys or values.
pub(crate) struct Column<'a> {
    array: &'a dyn Array,
    pub cells: Cells<'a>,
}

pub(crate) enum Cells<'a> {
    Int(&'a [i64]),
    Float(&'a [f64]),
    Flag(&'a BooleanArray),
    Text(&'a StringArray),
    List {
        offsets: &'a [i32],
        items: Box<Column<'a>>,
    },
    Map {
        offsets: &'a [i32],
        keys: Box<Column<'a>>,
        values: Box<Column<'a>>,
    },
    /// A struct's members, each with its name as a JSON key (quoted,
    /// escaped, and followed by a colon), made once for all rows.
    Group(Vec<(String, Column<'a>)>),
}

impl<'a> Column<'a> {
    /// A reader of `array`; an error for a type no table holds.
    pub fn of(array: &'a dyn Array) -> io::Result<Self> {
        let cells = match array.data_type() {
            DataType::Int64 => Cells::Int(array.as_primitive::<Int64Type>().values()),
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                Cells::Int(array.as_primitive::<TimestampNanosecondType>().values())
            }
            DataType::Float64 => Cells::Float(array.as_primitive::<Float64Type>().values()),
            DataType::Boolean => Cells::Flag(array.as_boolean()),
            DataType::Utf8 => Cells::Text(array.as_string::<i32>()),
            DataType::List(_) => {
                let list = array.as_list::<i32>();
                Cells::List {
                    offsets: list.value_offsets(),
                    items: Box::new(Column::of(list.values().as_ref())?),
                }
            }
            DataType::Map(..) => {
                let map = array.as_map();
                Cells::Map {
                    offsets: map.value_offsets(),
                    keys: Box::new(Column::of(map.keys().as_ref())?),
                    values: Box::new(Column::of(map.values().as_ref())?),
                }
            }
            DataType::Struct(fields) => {
                let group = array.as_struct();
                let members = fields
                    .iter()
                    .zip(group.columns())
                    .map(|(field, column)| Ok((json_key(field.name())?, Column::of(column)?)))
                    .collect::<io::Result<_>>()?;
                Cells::Group(members)
            }
            other => {
                return Err(io::Error::other(format!(
                    "a table column of type {other} has no text form"
                )))
            }
        };
        Ok(Column { array, cells })
    }

    /// Whether the cell is null; a float that is not finite has no JSON
    /// form and counts as null.
    pub fn is_null(&self, row: usize) -> bool {
        match self.cells {
            Cells::Float(values) => !values[row].is_finite() || self.array.is_null(row),
            _ => self.array.is_null(row),
        }
    }

    /// The cell as JSON: null, a number, a flag, a string, an array or an object.
    pub fn write_json(&self, out: &mut impl Write, row: usize) -> io::Result<()> {
        if self.is_null(row) {
            return out.write_all(b"null");
        }
        match &self.cells {
            Cells::Int(values) => write_serialized(out, &values[row]),
            Cells::Float(values) => write_serialized(out, &values[row]),
            Cells::Flag(flags) => out.write_all(if flags.value(row) { b"true" } else { b"false" }),
            Cells::Text(strings) => write_serialized(out, strings.value(row)),
            Cells::List { offsets, items } => {
                out.write_all(b"[")?;
                for (index, item) in range(offsets, row).enumerate() {
                    if index > 0 {
                        out.write_all(b",")?;
                    }
                    items.write_json(out, item)?;
                }
                out.write_all(b"]")
            }
            Cells::Map {
                offsets,
                keys,
                values,
            } => {
                out.write_all(b"{")?;
                for (index, entry) in range(offsets, row).enumerate() {
                    if index > 0 {
                        out.write_all(b",")?;
                    }
                    keys.write_json(out, entry)?;
                    out.write_all(b":")?;
                    values.write_json(out, entry)?;
                }
                out.write_all(b"}")
            }
            Cells::Group(members) => {
                out.write_all(b"{")?;
                for (index, (key, member)) in members.iter().enumerate() {
                    if index > 0 {
                        out.write_all(b",")?;
                    }
                    out.write_all(key.as_bytes())?;
                    member.write_json(out, row)?;
                }
                out.write_all(b"}")
            }
        }
    }
}

/// The positions of row `row`'s items in a list or map.
fn range(offsets: &[i32], row: usize) -> std::ops::Range<usize> {
    offsets[row] as usize..offsets[row + 1] as usize
}

/// `name` as a JSON object's key: quoted, escaped, and followed by a colon.
pub(crate) fn json_key(name: &str) -> io::Result<String> {
    Ok(format!("{}:", serde_json::to_string(name)?))
}

/// A number or a string as JSON (strings escaped).
fn write_serialized(
    out: &mut impl Write,
    value: &(impl serde::Serialize + ?Sized),
) -> io::Result<()> {
    serde_json::to_writer(out, value).map_err(io::Error::from)
}
