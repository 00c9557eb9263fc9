//! `tcpwhy export`: every table of the analysis as files, one per table,
//! written all or nothing.

use std::path::Path;

use columns::files::{Format, Staging, Written};
use pipeline::Stages;

use crate::progress::Progress;
use crate::signals;

/// Analyses the files and writes each table into `directory` in `format`.
/// On bad input or a signal nothing is written, and an error names the
/// file and byte offset, or the table and file.
pub fn tables(
    files: &[String],
    directory: &Path,
    format: Format,
    stages: Stages,
    progress: Progress,
) -> Result<Written, columns::Error> {
    let tables = columns::analyze(files, stages, progress)?;
    let staging = Staging::new(directory)?;
    signals::writing(Some(staging.path()));
    let written = staging
        .write(&tables, format, &pipeline::stop_requested)
        .and_then(|names| staging.publish(&names));
    signals::writing(None);
    written
}
