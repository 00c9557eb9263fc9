//! `tcpwhy export`: every table of the analysis as files, one per table.

use std::path::Path;

use crate::progress::Progress;

/// Analyses the files and writes each table as Parquet into `directory`.
/// On bad input nothing is written, and the error names the file and byte offset.
pub fn parquet(
    files: &[String],
    directory: &Path,
    memory_bytes: u64,
    progress: Progress,
) -> Result<(), columns::Error> {
    let tables = columns::analyze(files, Some(memory_bytes), progress)?;
    columns::parquet::write(&tables, directory)?;
    Ok(())
}
