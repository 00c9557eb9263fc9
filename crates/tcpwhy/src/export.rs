//! `tcpwhy export`: every table of the analysis as files, one per table.

use std::path::Path;

use columns::files::Format;
use pipeline::Stages;

use crate::progress::Progress;

/// Analyses the files and writes each table into `directory` in `format`.
/// On bad input nothing is written, and the error names the file and byte offset.
pub fn tables(
    files: &[String],
    directory: &Path,
    format: Format,
    stages: Stages,
    progress: Progress,
) -> Result<(), columns::Error> {
    let tables = columns::analyze(files, stages, progress)?;
    columns::files::write(&tables, directory, format)?;
    Ok(())
}
