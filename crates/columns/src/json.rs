//! A table as JSON lines: one object per row, every field of the schema
//! present (null where the table holds null), nested where the schema nests.
//! Timestamps are nanoseconds since the epoch, as their `_ns` names say.

use std::io::{self, Write};

use arrow_array::RecordBatch;

use crate::cells::{json_key, Column};

/// Writes each row of `batch` as one line; with a `kind`, each object
/// opens with `"type":kind`, as the command line's lines do.
pub fn write_lines(
    out: &mut impl Write,
    batch: &RecordBatch,
    kind: Option<&str>,
) -> io::Result<()> {
    let schema = batch.schema();
    let columns = batch
        .columns()
        .iter()
        .map(|column| Column::of(column.as_ref()))
        .collect::<io::Result<Vec<_>>>()?;
    let opening = match kind {
        Some(kind) => format!("{{\"type\":{},", serde_json::to_string(kind)?),
        None => "{".to_owned(),
    };
    let names = schema
        .fields()
        .iter()
        .map(|field| json_key(field.name()))
        .collect::<io::Result<Vec<_>>>()?;
    for row in 0..batch.num_rows() {
        out.write_all(opening.as_bytes())?;
        for (index, (name, column)) in names.iter().zip(&columns).enumerate() {
            if index > 0 {
                out.write_all(b",")?;
            }
            out.write_all(name.as_bytes())?;
            column.write_json(out, row)?;
        }
        out.write_all(b"}\n")?;
    }
    Ok(())
}
