//! Each table as a file in a directory: `connections.parquet`,
//! `transactions.parquet`, and so on, or `.csv` or `.jsonl`. Each file is
//! written under a temporary name and renamed once complete, so a reader
//! never sees half a file.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;

use crate::{csv, json, parquet, Error, Tables};

/// How the tables are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Parquet,
    /// A header, then one line per row; nested fields flattened with dotted names.
    Csv,
    /// JSON lines: one object per row, nested as the schema nests.
    Json,
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::Parquet => "parquet",
            Format::Csv => "csv",
            Format::Json => "jsonl",
        }
    }
}

/// Writes every table into `directory`, creating it if needed; returns the files written.
pub fn write(tables: &Tables, directory: &Path, format: Format) -> Result<Vec<PathBuf>, Error> {
    fs::create_dir_all(directory).map_err(|error| output_error(directory, error))?;
    let mut written = Vec::new();
    for (name, batch) in tables.named() {
        let path = directory.join(format!("{name}.{}", format.extension()));
        write_file(batch, &path, format)?;
        written.push(path);
    }
    Ok(written)
}

fn write_file(batch: &RecordBatch, path: &Path, format: Format) -> Result<(), Error> {
    let partial = path.with_extension(format!("{}.partial", format.extension()));
    let written = write_table(batch, &partial, format)
        .and_then(|()| fs::rename(&partial, path).map_err(|error| output_error(path, error)));
    if written.is_err() {
        let _ = fs::remove_file(&partial);
    }
    written
}

fn write_table(batch: &RecordBatch, path: &Path, format: Format) -> Result<(), Error> {
    let file = File::create(path).map_err(|error| output_error(path, error))?;
    match format {
        Format::Parquet => parquet::write(batch, file),
        Format::Csv => write_text(file, path, |out| {
            csv::write_header(out, batch.schema().fields())?;
            csv::write_rows(out, batch)
        }),
        Format::Json => write_text(file, path, |out| json::write_lines(out, batch, None)),
    }
}

fn write_text(
    file: File,
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> Result<(), Error> {
    let mut out = BufWriter::new(file);
    write(&mut out)
        .and_then(|()| out.flush())
        .map_err(|error| output_error(path, error))
}

fn output_error(path: &Path, error: io::Error) -> Error {
    Error::Output(path.to_owned(), error)
}
