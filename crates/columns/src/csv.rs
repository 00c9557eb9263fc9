//! A table as CSV: a header, then one row per row of the table. Nested
//! fields are flattened into one column each, named by their path
//! (`client_to_server.retransmissions.total`); a list or a map is one cell
//! holding it as JSON (`[3,7]`, `{"stall_ms":200.0}`). A null is an empty
//! cell, and so is every field within a null struct. Timestamps are
//! nanoseconds since the epoch, as their `_ns` names say.

use std::io::{self, Write};

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field};

use crate::cells::{json_key, Cells, Column};

/// The columns of a table of these fields, nested names joined with dots.
pub fn column_names(fields: &[impl AsRef<Field>]) -> Vec<String> {
    let mut names = Vec::new();
    for field in fields {
        flattened_names(field.as_ref(), "", &mut names);
    }
    names
}

fn flattened_names(field: &Field, prefix: &str, names: &mut Vec<String>) {
    let name = format!("{prefix}{}", field.name());
    match field.data_type() {
        DataType::Struct(members) => {
            for member in members {
                flattened_names(member, &format!("{name}."), names);
            }
        }
        _ => names.push(name),
    }
}

/// Writes the header line of a table of these fields.
pub fn write_header(
    out: &mut (impl Write + ?Sized),
    fields: &[impl AsRef<Field>],
) -> io::Result<()> {
    header_line(out, &column_names(fields))
}

/// A header line naming these columns.
fn header_line(out: &mut (impl Write + ?Sized), names: &[String]) -> io::Result<()> {
    let names: Vec<String> = names.iter().map(|name| quoted(name).into_owned()).collect();
    writeln!(out, "{}", names.join(","))
}

/// Writes one line per row of `batch`, without the header.
pub fn write_rows(out: &mut impl Write, batch: &RecordBatch) -> io::Result<()> {
    write_chosen_rows(out, batch, None)
}

/// Writes one line per row of `batch` with the `chosen` columns only, in
/// their order (every column without a choice), without the header.
pub fn write_chosen_rows(
    out: &mut impl Write,
    batch: &RecordBatch,
    chosen: Option<&Chosen>,
) -> io::Result<()> {
    let columns = columns_of(batch)?;
    let cells = leaves(&columns);
    let cells: Vec<&Cell> = match chosen {
        Some(chosen) => chosen.leaves.iter().map(|&leaf| &cells[leaf]).collect(),
        None => cells.iter().collect(),
    };
    let mut nested = Vec::new();
    for row in 0..batch.num_rows() {
        for (index, cell) in cells.iter().enumerate() {
            if index > 0 {
                out.write_all(b",")?;
            }
            cell.write(out, row, &mut nested)?;
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Some of a table's columns, named as the CSV header names them: a column
/// (`client_to_server.retransmissions.total`), or a group of them by the
/// path they share (`client_to_server.retransmissions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    /// The columns' names, in the order chosen.
    pub names: Vec<String>,
    /// Where each lies among the table's columns.
    leaves: Vec<usize>,
}

impl Chosen {
    /// The columns of a table of `fields` that `wanted` names, in the order
    /// named; an error naming what matches none.
    pub fn of(fields: &[impl AsRef<Field>], wanted: &[String]) -> Result<Chosen, String> {
        let columns = column_names(fields);
        let mut chosen = Chosen {
            names: Vec::new(),
            leaves: Vec::new(),
        };
        for name in wanted {
            let group = format!("{name}.");
            let matching: Vec<usize> = (0..columns.len())
                .filter(|&at| columns[at] == *name || columns[at].starts_with(&group))
                .collect();
            if matching.is_empty() {
                return Err(format!(
                    "no field {name:?} in this table; its fields are the CSV header's: {}",
                    columns.join(",")
                ));
            }
            for at in matching {
                chosen.names.push(columns[at].clone());
                chosen.leaves.push(at);
            }
        }
        Ok(chosen)
    }

    /// Writes the header line of the chosen columns.
    pub fn write_header(&self, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
        header_line(out, &self.names)
    }

    /// Writes each row of `batch` as one JSON line holding the chosen
    /// columns, each by its dotted name; with a `kind`, each object opens
    /// with `"type":kind`, as the command line's lines do.
    pub fn write_json_lines(
        &self,
        out: &mut impl Write,
        batch: &RecordBatch,
        kind: Option<&str>,
    ) -> io::Result<()> {
        let columns = columns_of(batch)?;
        let cells = leaves(&columns);
        let keys = self
            .names
            .iter()
            .map(|name| json_key(name))
            .collect::<io::Result<Vec<_>>>()?;
        let opening = match kind {
            Some(kind) => format!("{{\"type\":{}", serde_json::to_string(kind)?),
            None => "{".to_owned(),
        };
        for row in 0..batch.num_rows() {
            out.write_all(opening.as_bytes())?;
            for (index, (key, &leaf)) in keys.iter().zip(&self.leaves).enumerate() {
                if index > 0 || kind.is_some() {
                    out.write_all(b",")?;
                }
                out.write_all(key.as_bytes())?;
                cells[leaf].write_json(out, row)?;
            }
            out.write_all(b"}\n")?;
        }
        Ok(())
    }
}

/// The columns of `batch`, read for writing.
fn columns_of(batch: &RecordBatch) -> io::Result<Vec<Column<'_>>> {
    batch
        .columns()
        .iter()
        .map(|column| Column::of(column.as_ref()))
        .collect()
}

/// The CSV columns of these columns, in the header's order.
fn leaves<'a, 'b>(columns: &'b [Column<'a>]) -> Vec<Cell<'a, 'b>> {
    let mut cells = Vec::new();
    for column in columns {
        flattened_cells(column, &[], &mut cells);
    }
    cells
}

/// One CSV column: a field that is not a struct, and the structs it is in.
struct Cell<'a, 'b> {
    column: &'b Column<'a>,
    within: Vec<&'b Column<'a>>,
}

fn flattened_cells<'a, 'b>(
    column: &'b Column<'a>,
    within: &[&'b Column<'a>],
    cells: &mut Vec<Cell<'a, 'b>>,
) {
    match &column.cells {
        Cells::Group(members) => {
            let mut within = within.to_vec();
            within.push(column);
            for (_, member) in members {
                flattened_cells(member, &within, cells);
            }
        }
        _ => cells.push(Cell {
            column,
            within: within.to_vec(),
        }),
    }
}

impl Cell<'_, '_> {
    /// Writes the cell of `row` as a JSON value: null within a null group.
    fn write_json(&self, out: &mut impl Write, row: usize) -> io::Result<()> {
        if self.within.iter().any(|group| group.is_null(row)) {
            return out.write_all(b"null");
        }
        self.column.write_json(out, row)
    }

    /// Writes the cell of `row`; `nested` is room to write a list or map in.
    fn write(&self, out: &mut impl Write, row: usize, nested: &mut Vec<u8>) -> io::Result<()> {
        let column = self.column;
        if column.is_null(row) || self.within.iter().any(|group| group.is_null(row)) {
            return Ok(());
        }
        match &column.cells {
            Cells::Text(strings) => out.write_all(quoted(strings.value(row)).as_bytes()),
            Cells::Int(_) | Cells::Float(_) | Cells::Flag(_) => column.write_json(out, row),
            Cells::List { .. } | Cells::Map { .. } | Cells::Group(_) => {
                nested.clear();
                column.write_json(nested, row)?;
                let json = std::str::from_utf8(nested).map_err(io::Error::other)?;
                out.write_all(quoted(json).as_bytes())
            }
        }
    }
}

/// The text as one CSV cell: in quotes, quotes doubled, when it holds a
/// comma, a quote or a line break.
fn quoted(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\"")).into()
    } else {
        text.into()
    }
}
