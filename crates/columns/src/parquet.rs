//! Each table as a Parquet file in a directory: `connections.parquet`,
//! `transactions.parquet`, and so on. Each file is written under a temporary
//! name and renamed once complete, so a reader never sees half a file.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::{Error, Tables};

/// Writes every table into `directory`, creating it if needed; returns the files written.
pub fn write(tables: &Tables, directory: &Path) -> Result<Vec<PathBuf>, Error> {
    fs::create_dir_all(directory).map_err(|error| output_error(directory, error))?;
    let mut written = Vec::new();
    for (name, batch) in tables.named() {
        let path = directory.join(format!("{name}.parquet"));
        write_file(batch, &path)?;
        written.push(path);
    }
    Ok(written)
}

fn write_file(batch: &RecordBatch, path: &Path) -> Result<(), Error> {
    let partial = path.with_extension("parquet.partial");
    let written = write_batch(batch, &partial)
        .and_then(|()| fs::rename(&partial, path).map_err(|error| output_error(path, error)));
    if written.is_err() {
        let _ = fs::remove_file(&partial);
    }
    written
}

fn output_error(path: &Path, error: std::io::Error) -> Error {
    Error::Output(path.to_owned(), error)
}

fn write_batch(batch: &RecordBatch, path: &Path) -> Result<(), Error> {
    let properties = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let parquet_error = |error: parquet::errors::ParquetError| Error::Arrow(error.to_string());
    let file = File::create(path).map_err(|error| output_error(path, error))?;
    let mut writer =
        ArrowWriter::try_new(file, batch.schema(), Some(properties)).map_err(parquet_error)?;
    writer.write(batch).map_err(parquet_error)?;
    writer.close().map_err(parquet_error)?;
    Ok(())
}
