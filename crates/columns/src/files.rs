//! Each table as a file in a directory: `connections.parquet`,
//! `transactions.parquet`, and so on, or `.csv` or `.jsonl`. The tables are
//! written all or nothing: into a temporary directory first ([`Staging`]),
//! which takes the directory's place, or whose files take their places in
//! it, only once every table is complete.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use tempfile::TempDir;

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

/// What was written: the files, and their bytes in all.
#[derive(Debug)]
pub struct Written {
    pub files: Vec<PathBuf>,
    pub bytes: u64,
}

/// A temporary directory the tables are written into, on the file system
/// of the directory they are for. Dropped before [`Staging::publish`], it
/// is removed with all it holds.
pub struct Staging {
    temporary: TempDir,
    directory: PathBuf,
    /// The directory existed: the files move into it one by one, after
    /// all of them are written. Else the temporary directory becomes it.
    existed: bool,
}

impl Staging {
    /// A temporary directory for tables meant for `directory`: inside it
    /// when it exists, else beside it (creating its parents).
    pub fn new(directory: &Path) -> Result<Staging, Error> {
        let failed = |error: io::Error| Error::Output(directory.to_owned(), error);
        let existed = match fs::metadata(directory) {
            Ok(meta) if meta.is_dir() => true,
            Ok(_) => {
                let error = io::Error::new(io::ErrorKind::NotADirectory, "not a directory");
                return Err(failed(error));
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => false,
            Err(error) => return Err(failed(error)),
        };
        let parent = directory
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let within = if existed { directory } else { parent };
        if !existed {
            fs::create_dir_all(within).map_err(|error| Error::Output(within.to_owned(), error))?;
        }
        let temporary = tempfile::Builder::new()
            .prefix(".tcpwhy-tables-")
            .tempdir_in(within)
            .map_err(|error| Error::Output(within.to_owned(), error))?;
        Ok(Staging {
            temporary,
            directory: directory.to_owned(),
            existed,
        })
    }

    /// The temporary directory, to remove if the process is ended before
    /// it is published.
    pub fn path(&self) -> &Path {
        self.temporary.path()
    }

    /// Writes every table into the temporary directory, each on a thread
    /// of its own, checking `stop` before each and once all are written: a
    /// stop asked for before the end is an error, and no table is handed
    /// on to publish. Of several failures, the first table's is told.
    pub fn write(
        &self,
        tables: &Tables,
        format: Format,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<Vec<String>, Error> {
        let names = std::thread::scope(|scope| {
            let writes: Vec<_> = tables
                .named()
                .into_iter()
                .map(|(table, batch)| {
                    scope.spawn(move || self.write_one(table, batch, format, stop))
                })
                .collect();
            writes
                .into_iter()
                .map(crate::joined)
                .collect::<Result<_, _>>()
        })?;
        if stop() {
            return Err(Error::Interrupted);
        }
        Ok(names)
    }

    fn write_one(
        &self,
        table: &'static str,
        batch: &RecordBatch,
        format: Format,
        stop: &dyn Fn() -> bool,
    ) -> Result<String, Error> {
        if stop() {
            return Err(Error::Interrupted);
        }
        let name = format!("{table}.{}", format.extension());
        write_table(batch, &self.path().join(&name), format).map_err(|reason| Error::Table {
            table,
            path: self.directory.join(&name),
            reason,
        })?;
        Ok(name)
    }

    /// Puts the files `names` in their directory: the temporary directory
    /// takes its place, or, when it existed, each file is renamed into it.
    pub fn publish(self, names: &[String]) -> Result<Written, Error> {
        let files: Vec<PathBuf> = names.iter().map(|name| self.directory.join(name)).collect();
        let bytes = names
            .iter()
            .filter_map(|name| fs::metadata(self.path().join(name)).ok())
            .map(|meta| meta.len())
            .sum();
        let moved = if self.existed {
            names.iter().zip(&files).try_for_each(|(name, file)| {
                fs::rename(self.path().join(name), file)
                    .map_err(|error| Error::Output(file.clone(), error))
            })
        } else {
            let temporary = self.temporary.keep();
            fs::rename(&temporary, &self.directory).map_err(|error| {
                let _ = fs::remove_dir_all(&temporary);
                Error::Output(self.directory.clone(), error)
            })
        };
        moved?;
        Ok(Written { files, bytes })
    }
}

fn write_table(batch: &RecordBatch, path: &Path, format: Format) -> Result<(), String> {
    let file = File::create(path).map_err(|error| error.to_string())?;
    match format {
        Format::Parquet => parquet::write(batch, file),
        Format::Csv => write_text(file, |out| {
            csv::write_header(out, batch.schema().fields())?;
            csv::write_rows(out, batch)
        }),
        Format::Json => write_text(file, |out| json::write_lines(out, batch, None)),
    }
}

fn write_text(
    file: File,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> Result<(), String> {
    let mut out = BufWriter::new(file);
    write(&mut out)
        .and_then(|()| out.flush())
        .map_err(|error| error.to_string())
}
