//! A table as a Parquet file, compressed with Snappy.

use std::fs::File;

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

/// Writes the batch to `file`; an error is said in words, for the caller
/// to name the table and file.
pub fn write(batch: &RecordBatch, file: File) -> Result<(), String> {
    let properties = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let parquet_error = |error: parquet::errors::ParquetError| error.to_string();
    let mut writer =
        ArrowWriter::try_new(file, batch.schema(), Some(properties)).map_err(parquet_error)?;
    writer.write(batch).map_err(parquet_error)?;
    writer.close().map_err(parquet_error)?;
    Ok(())
}
