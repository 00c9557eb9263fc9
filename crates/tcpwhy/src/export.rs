//! `tcpwhy export`: every table of the analysis as files, one per table.

use std::path::Path;

use pipeline::Stages;

use crate::progress::Progress;

/// Analyses the files and writes each table as Parquet into `directory`.
/// On bad input nothing is written, and the error names the file and byte offset.
pub fn parquet(
    files: &[String],
    directory: &Path,
    stages: Stages,
    progress: Progress,
) -> Result<(), columns::Error> {
    let tables = columns::analyze(files, stages, progress)?;
    columns::parquet::write(&tables, directory)?;
    Ok(())
}
