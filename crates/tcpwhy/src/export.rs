//! `tcpwhy export`: every table of the analysis as files, one per table.

use std::path::Path;

use pipeline::Stages;

use crate::progress::Progress;

/// Analyses the files and writes each table as Parquet into `directory`.
/// On bad input nothing is written, and the error names the file and byte offset.
pub fn parquet(
    files: &[String],
    directory: &Path,
    memory_bytes: u64,
    progress: Progress,
) -> Result<(), columns::Error> {
    let settings = Stages {
        memory_bytes: Some(memory_bytes),
        ..Stages::default()
    };
    let tables = columns::analyze(files, settings, progress)?;
    columns::parquet::write(&tables, directory)?;
    Ok(())
}
