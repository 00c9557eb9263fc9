//! `tcpwhy report`: the full analysis, packet detail of the connections worth
//! a closer look, and one HTML file written atomically. A capture cut off
//! inside its last record still gets its report, marked partial.
//!
//! Files are read twice: once for the analysis, which says which connections
//! to detail, then once more collecting those connections' packets. Standard
//! input cannot be read twice, so it is read once, detailing the connections
//! asked for and the first ones seen.
//!
//! Where the report goes is checked before the analysis starts. A regular
//! file is written beside its final name and renamed into place, keeping an
//! existing file's mode and owner (a symbolic link is followed, not
//! replaced); standard output (`-o -`), a character device or a FIFO is
//! written directly. A signal during the write removes the temporary file.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use capture::CaptureError;
use report::detail::MAX_CONNECTIONS;
use report::{Collector, ConnectionDetail, Report};

use crate::progress::Progress;
use crate::signals;
use pipeline::{self, Analysis, Stages};

/// Why no report was written.
pub enum Failure {
    /// The capture could not be read to the end.
    BadInput(CaptureError),
    /// The output would overwrite an input, or could not be written.
    Output(String),
}

/// Analyzes the traffic `stages` selects in `files` and writes the report
/// to `output`; the analysis is returned for the exit code.
pub fn write_report(
    files: &[String],
    output: &Path,
    asked: &[u64],
    stages: Stages,
    progress: impl Fn() -> Progress,
) -> Result<Analysis, Failure> {
    refuse_overwriting_an_input(files, output).map_err(Failure::Output)?;
    let destination = Destination::of(output)
        .map_err(|reason| Failure::Output(format!("{}: {reason}", output.display())))?;
    let (analysis, details) = analyze_with_detail(files, asked, stages, progress)?;
    if let Some(error) = analysis.error.as_ref().filter(|error| !error.cut_short) {
        return Err(Failure::BadInput(error.clone()));
    }
    let report = Report {
        files,
        frames: analysis.counts.frames,
        connections: &analysis.connections,
        transactions: &analysis.transactions,
        ticks: &analysis.ticks,
        findings: &analysis.findings,
        details: &details,
        detail_command: detail_command(files, output),
        partial: crate::output::partial_reason(&analysis),
    };
    destination
        .write(|mut out| report::write(&mut out, &report))
        .map_err(|error| Failure::Output(format!("{}: {error}", output.display())))?;
    Ok(analysis)
}

/// Writes a page made by `write` to `output`, as a report is written: never
/// over one of `inputs`, and whole or not at all.
pub fn write_page(
    inputs: &[String],
    output: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), String> {
    let failed = |reason: String| format!("{}: {reason}", output.display());
    refuse_overwriting_an_input(inputs, output)?;
    let destination = Destination::of(output).map_err(failed)?;
    destination
        .write(write)
        .map_err(|error| failed(error.to_string()))
}

fn analyze_with_detail(
    files: &[String],
    asked: &[u64],
    stages: Stages,
    progress: impl Fn() -> Progress,
) -> Result<(Analysis, Vec<ConnectionDetail>), Failure> {
    let memory_bytes = stages.memory_bytes;
    let stages = Stages {
        transactions: true,
        timeline: Some(None),
        diagnose: true,
        ..stages
    };
    if files.iter().any(|file| file == "-") {
        let wanted: Vec<u64> = asked
            .iter()
            .copied()
            .chain(0..MAX_CONNECTIONS as u64)
            .collect();
        let mut collector = Collector::for_connections(&wanted);
        let analysis = pipeline::analyze_observed(
            files,
            stages,
            progress(),
            |_| {},
            |view| collector.observe(view),
        )
        .map_err(Failure::BadInput)?;
        return Ok((analysis, collector.finish()));
    }
    let analysis =
        pipeline::analyze(files, stages, progress(), |_| {}).map_err(Failure::BadInput)?;
    let unusable = analysis
        .error
        .as_ref()
        .is_some_and(|error| !error.cut_short);
    if unusable || analysis.interrupted {
        return Ok((analysis, Vec::new()));
    }
    let chosen = report::connections_to_detail(
        &analysis.connections,
        &analysis.transactions,
        &analysis.findings,
        asked,
        MAX_CONNECTIONS,
    );
    let mut collector = Collector::for_connections(&chosen);
    let again = pipeline::analyze_observed(
        files,
        Stages {
            memory_bytes,
            ..Stages::default()
        },
        progress(),
        |_| {},
        |view| collector.observe(view),
    )
    .map_err(Failure::BadInput)?;
    match again.error {
        Some(error) if !error.cut_short => Err(Failure::BadInput(error)),
        _ => Ok((analysis, collector.finish())),
    }
}

fn refuse_overwriting_an_input(files: &[String], output: &Path) -> Result<(), String> {
    let Ok(target) = output.canonicalize() else {
        return Ok(());
    };
    for file in files {
        if Path::new(file)
            .canonicalize()
            .is_ok_and(|input| input == target)
        {
            return Err(format!(
                "{}: is an input file; choose another output path",
                output.display()
            ));
        }
    }
    Ok(())
}

/// The command that details a connection, less its id, safe to paste into a
/// shell whatever the file names hold.
fn detail_command(files: &[String], output: &Path) -> String {
    let mut words = vec!["tcpwhy".to_string(), "report".to_string()];
    words.extend(files.iter().map(|file| shell_quoted(file)));
    words.push("-o".into());
    words.push(shell_quoted(&output.to_string_lossy()));
    words.push("--detail".into());
    words.join(" ")
}

/// A word for a POSIX shell: as it is when it holds nothing special, else in
/// single quotes (inside which only a single quote needs escaping).
fn shell_quoted(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Where the report goes.
enum Destination {
    /// `-o -`.
    Stdout,
    /// A character device or a FIFO, written in place.
    Device(PathBuf),
    /// A regular file (through any symbolic links), new or replaced.
    File {
        path: PathBuf,
        existing: Option<Metadata>,
    },
}

impl Destination {
    /// What `output` names, and whether a report can go there.
    fn of(output: &Path) -> Result<Destination, String> {
        if output.as_os_str() == "-" {
            return Ok(Destination::Stdout);
        }
        match fs::metadata(output) {
            Ok(meta) if meta.is_dir() => Err("is a directory".into()),
            Ok(meta) if meta.file_type().is_char_device() || meta.file_type().is_fifo() => {
                Ok(Destination::Device(output.to_path_buf()))
            }
            Ok(meta) if meta.is_file() => {
                let path = output.canonicalize().map_err(|e| e.to_string())?;
                writable_directory(&path)?;
                Ok(Destination::File {
                    path,
                    existing: Some(meta),
                })
            }
            Ok(_) => Err("is not a regular file, a FIFO or a character device".into()),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                if fs::symlink_metadata(output).is_ok() {
                    return Err("is a symbolic link to nothing".into());
                }
                writable_directory(output)?;
                Ok(Destination::File {
                    path: output.to_path_buf(),
                    existing: None,
                })
            }
            Err(error) => Err(error.to_string()),
        }
    }

    /// Writes the report with `write`.
    fn write(&self, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
        match self {
            Destination::Stdout => {
                let mut out = BufWriter::with_capacity(1 << 20, io::stdout().lock());
                write(&mut out)?;
                out.flush()
            }
            Destination::Device(path) => {
                let mut out =
                    BufWriter::with_capacity(1 << 20, OpenOptions::new().write(true).open(path)?);
                write(&mut out)?;
                out.flush()
            }
            Destination::File { path, existing } => {
                write_atomically(path, existing.as_ref(), write)
            }
        }
    }
}

/// The directory that will hold `path` exists and takes new files.
fn writable_directory(path: &Path) -> Result<(), String> {
    let directory = directory_of(path);
    if !directory.is_dir() {
        return Err(format!("no directory {}", directory.display()));
    }
    let name = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(
        directory.as_os_str(),
    ))
    .map_err(|e| e.to_string())?;
    // Safety: `name` is a valid C string for the call's duration.
    if unsafe { libc::access(name.as_ptr(), libc::W_OK) } != 0 {
        return Err(format!(
            "cannot write in {}: {}",
            directory.display(),
            io::Error::last_os_error()
        ));
    }
    Ok(())
}

fn directory_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Writes to a new file beside `path`, then renames it over `path`: readers
/// see the old file or the whole new one, with the old one's mode and owner,
/// and a failure or a signal leaves nothing behind.
fn write_atomically(
    path: &Path,
    existing: Option<&Metadata>,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    // Short whatever the final name: any name that fits, this fits beside it.
    let temporary = directory_of(path).join(format!(".tcpwhy-{}.tmp", std::process::id()));
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)?;
    signals::writing(Some(&temporary));
    let result = (|| {
        if let Some(existing) = existing {
            file.set_permissions(existing.permissions())?;
            keep_owner(&file, existing)?;
        }
        let mut out = BufWriter::with_capacity(1 << 20, StopsOnSignal::new(file));
        write(&mut out)?;
        out.flush()?;
        out.into_inner()?.file.sync_all()?;
        fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    signals::writing(None);
    result
}

/// Gives the new file the old one's owner, where that is not who writes it.
fn keep_owner(file: &File, existing: &Metadata) -> io::Result<()> {
    let mine = file.metadata()?;
    if (mine.uid(), mine.gid()) == (existing.uid(), existing.gid()) {
        return Ok(());
    }
    std::os::unix::fs::fchown(file, Some(existing.uid()), Some(existing.gid()))
}

/// A file that refuses further writes once a signal comes, so a report
/// being written is abandoned (and its temporary file removed).
struct StopsOnSignal {
    file: File,
    signals_before: usize,
}

impl StopsOnSignal {
    fn new(file: File) -> Self {
        StopsOnSignal {
            file,
            signals_before: signals::received(),
        }
    }
}

impl Write for StopsOnSignal {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if signals::received() > self.signals_before {
            // Not ErrorKind::Interrupted, which write_all would retry.
            return Err(io::Error::other("stopped by a signal"));
        }
        self.file.write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::shell_quoted;

    #[test]
    fn words_with_shell_syntax_are_quoted() {
        assert_eq!(shell_quoted("trace.pcap"), "trace.pcap");
        assert_eq!(
            shell_quoted("my cap $(touch x).pcap"),
            "'my cap $(touch x).pcap'"
        );
        assert_eq!(shell_quoted("it's"), r"'it'\''s'");
        assert_eq!(shell_quoted(""), "''");
    }
}
