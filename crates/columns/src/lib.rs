//! The analysis as Arrow tables: connections, transactions, events, the
//! timeline, findings and the time ledger, each with the typed schema of
//! [`schema`]. The command line's CSV and JSON lines, the export, the
//! Python package and Spark all take their tables from here, so every path
//! hands out the same columns.

pub mod batch;
mod cells;
pub mod csv;
pub mod files;
pub mod ipc;
pub mod json;
mod parquet;
mod rows;
pub mod schema;
pub mod segments;

use std::fmt;
use std::path::PathBuf;

use arrow_array::RecordBatch;

use capture::CaptureError;
use pipeline::{Analysis, ReadProgress, Stages};
use tcp::Event;

/// Every table of one analysis.
pub struct Tables {
    pub connections: RecordBatch,
    pub transactions: RecordBatch,
    pub events: RecordBatch,
    pub timeline: RecordBatch,
    pub findings: RecordBatch,
    pub ledger: RecordBatch,
}

/// Why the tables could not be made.
#[derive(Debug)]
pub enum Error {
    /// A file could not be read to its end: its message names the file and byte offset.
    Capture(CaptureError),
    /// A signal stopped the read before the end.
    Interrupted,
    /// The results did not fit their schema.
    Arrow(String),
    /// An output file or directory could not be written.
    Output(PathBuf, std::io::Error),
    /// A table could not be written to its file.
    Table {
        table: &'static str,
        path: PathBuf,
        reason: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Capture(error) => error.fmt(f),
            Error::Interrupted => f.write_str("stopped by a signal before the end of the input"),
            Error::Arrow(message) => write!(f, "building the tables: {message}"),
            Error::Output(path, error) => write!(f, "{}: {error}", path.display()),
            Error::Table {
                table,
                path,
                reason,
            } => write!(
                f,
                "{}: writing the {table} table: {reason}; no table was written",
                path.display()
            ),
        }
    }
}

impl std::error::Error for Error {}

/// `settings` (the memory budget and what else the caller sets) with every
/// stage on, as `tcpwhy diagnose`, `connections`, `transactions` and
/// `timeline` (with the tick chosen from the capture) each run them.
pub fn all_stages(settings: Stages) -> Stages {
    Stages {
        transactions: true,
        timeline: Some(None),
        diagnose: true,
        events: true,
        ..settings
    }
}

/// Reads the files once (merged by time, as the command line does) and
/// returns every table; a file that cannot be read to its end is an error.
pub fn analyze(
    paths: &[String],
    settings: Stages,
    progress: impl ReadProgress,
) -> Result<Tables, Error> {
    let mut events = Vec::new();
    let analysis = pipeline::analyze(paths, all_stages(settings), progress, |event| {
        events.push(*event)
    })
    .map_err(Error::Capture)?;
    if let Some(error) = analysis.error {
        return Err(Error::Capture(error));
    }
    if analysis.interrupted {
        return Err(Error::Interrupted);
    }
    Tables::of(&analysis, &events)
}

/// Reads the files once (merged by time) and returns every table with the
/// errors of the files that could not be read to their end, whose frames
/// before the error count; an error when no file could, unless the first
/// given ends inside a record (the command line's results before it).
pub fn analyze_files(
    paths: &[String],
    settings: Stages,
    progress: impl ReadProgress,
) -> Result<(Tables, Vec<CaptureError>), Error> {
    let mut events = Vec::new();
    let analysis = pipeline::analyze(paths, all_stages(settings), progress, |event| {
        events.push(*event)
    })
    .map_err(Error::Capture)?;
    if analysis.interrupted {
        return Err(Error::Interrupted);
    }
    let failures = analysis.failures();
    // As the command line does: a capture that ends inside a record gives
    // the results before it; any other error, with no file read whole, is an error.
    if failures.len() == paths.len() {
        if let Some(error) = analysis.error.as_ref().filter(|error| !error.cut_short) {
            return Err(Error::Capture(error.clone()));
        }
    }
    Ok((Tables::of(&analysis, &events)?, failures))
}

impl Tables {
    /// The tables of a finished analysis and the events it raised, each
    /// built on a thread of its own: they only read the analysis.
    pub fn of(analysis: &Analysis, events: &[Event]) -> Result<Tables, Error> {
        std::thread::scope(|scope| {
            let transactions = scope.spawn(|| batch::transactions(&analysis.transactions));
            let connections =
                scope.spawn(|| batch::connections(&analysis.connections, &analysis.rate_limits));
            let events = scope.spawn(|| batch::events(events));
            let ledger = scope.spawn(|| batch::ledger(&analysis.ledgers));
            let timeline = batch::timeline(&analysis.ticks);
            let findings = batch::findings(&analysis.findings);
            Ok(Tables {
                connections: joined(connections)?,
                transactions: joined(transactions)?,
                events: joined(events)?,
                timeline: timeline?,
                findings: findings?,
                ledger: joined(ledger)?,
            })
        })
    }

    /// Each table with its name, in a fixed order.
    pub fn named(&self) -> [(&'static str, &RecordBatch); 6] {
        [
            ("connections", &self.connections),
            ("transactions", &self.transactions),
            ("events", &self.events),
            ("timeline", &self.timeline),
            ("findings", &self.findings),
            ("ledger", &self.ledger),
        ]
    }
}

/// What a scoped thread returned; its panic, if it panicked, goes on in the caller.
pub(crate) fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
