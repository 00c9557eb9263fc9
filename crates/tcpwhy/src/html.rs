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
//! existing file's permissions and owner but no setuid or setgid bit (a
//! symbolic link is followed, not replaced); standard output (`-o -`), a
//! character device or a FIFO is written directly. A signal during the
//! write abandons it and keeps the file that was there. A report cut short
//! by a signal says so, and is written beside a file already at its path
//! (`report.partial.html`), not over it.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
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
    /// A signal came while the report was written; the file there was kept.
    Interrupted(String),
}

/// A report written: the analysis behind it, for the exit code, and where
/// it went with its size (none for standard output).
pub struct Written {
    pub analysis: Analysis,
    pub file: Option<(PathBuf, u64)>,
    /// The file kept at the path asked for, when a partial report went beside it.
    pub kept: Option<PathBuf>,
    /// The report says it is partial.
    pub partial: bool,
}

/// Analyzes the traffic `stages` selects in `files` and writes the report
/// to `output`.
pub fn write_report(
    files: &[String],
    output: &Path,
    asked: &[u64],
    stages: Stages,
    progress: impl Fn() -> Progress,
) -> Result<Written, Failure> {
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
        start_ns: analysis.first_ns,
        connections: &analysis.connections,
        transactions: &analysis.transactions,
        ticks: &analysis.ticks,
        findings: &analysis.findings,
        details: &details.collected,
        detail_command: detail_command(files, output),
        partial: partial_reason(&analysis, details.cut),
    };
    let asked_for = destination.path().map(Path::to_path_buf);
    let destination = if report.partial.is_some() {
        destination.beside_an_earlier_file()
    } else {
        destination
    };
    let moved = destination.path() != asked_for.as_deref();
    let size = destination
        .write(|mut out| report::write(&mut out, &report))
        .map_err(|error| match error {
            Stopped::BySignal => Failure::Interrupted(format!(
                "stopped by a signal while writing {}: the file there was kept",
                output.display()
            )),
            Stopped::ByError(error) => Failure::Output(format!("{}: {error}", output.display())),
        })?;
    let shown = if moved {
        destination.path()
    } else {
        Some(output)
    };
    Ok(Written {
        file: shown
            .filter(|_| destination.path().is_some())
            .map(|path| (path.to_path_buf(), size)),
        kept: moved.then(|| output.to_path_buf()),
        partial: report.partial.is_some(),
        analysis,
    })
}

/// Why the report covers only part of the capture, when it does.
fn partial_reason(analysis: &Analysis, details_cut: bool) -> Option<String> {
    let reason = crate::output::partial_reason(analysis);
    if reason.is_some() || !details_cut {
        return reason;
    }
    Some(
        "stopped by a signal while the packets of the connections shown in detail \
         were collected: their detail is missing or cut short"
            .to_string(),
    )
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
    destination.write(write).map_err(|stopped| match stopped {
        Stopped::BySignal => failed("stopped by a signal; the file there was kept".into()),
        Stopped::ByError(error) => failed(error.to_string()),
    })?;
    Ok(())
}

/// The packets collected of the connections to detail, and whether a
/// signal cut their collection short.
struct Details {
    collected: Vec<ConnectionDetail>,
    cut: bool,
}

fn analyze_with_detail(
    files: &[String],
    asked: &[u64],
    stages: Stages,
    progress: impl Fn() -> Progress,
) -> Result<(Analysis, Details), Failure> {
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
            |view, _| collector.observe(view),
        )
        .map_err(Failure::BadInput)?;
        let collected = collector.finish();
        return Ok((
            analysis,
            Details {
                collected,
                cut: false,
            },
        ));
    }
    let analysis =
        pipeline::analyze(files, stages, progress(), |_| {}).map_err(Failure::BadInput)?;
    let unusable = analysis
        .error
        .as_ref()
        .is_some_and(|error| !error.cut_short);
    if unusable || analysis.interrupted {
        let none = Details {
            collected: Vec::new(),
            cut: false,
        };
        return Ok((analysis, none));
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
            numbers_only: true,
            ..Stages::default()
        },
        progress(),
        |_| {},
        |view, _| collector.observe(view),
    )
    .map_err(Failure::BadInput)?;
    if let Some(error) = again.error.filter(|error| !error.cut_short) {
        return Err(Failure::BadInput(error));
    }
    let details = Details {
        collected: collector.finish(),
        cut: again.interrupted,
    };
    Ok((analysis, details))
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

/// A word for a POSIX shell: as it is when it holds nothing special, else
/// quoted. A name holding a NUL byte, which no file name can, is dropped.
fn shell_quoted(word: &str) -> String {
    shlex::try_quote(word).map_or_else(|_| String::new(), |quoted| quoted.into_owned())
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

/// Why a write did not complete.
enum Stopped {
    BySignal,
    ByError(io::Error),
}

impl From<io::Error> for Stopped {
    fn from(error: io::Error) -> Self {
        let by_signal = error
            .get_ref()
            .is_some_and(|inner| inner.is::<StoppedBySignal>());
        if by_signal {
            Stopped::BySignal
        } else {
            Stopped::ByError(error)
        }
    }
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

    /// For a partial report: a file already at the path is kept, and the
    /// report goes beside it (`report.html` → `report.partial.html`).
    fn beside_an_earlier_file(self) -> Destination {
        match self {
            Destination::File {
                path,
                existing: Some(_),
            } => {
                let beside = partial_name(&path);
                let existing = fs::metadata(&beside).ok().filter(Metadata::is_file);
                Destination::File {
                    path: beside,
                    existing,
                }
            }
            other => other,
        }
    }

    /// The file written, for a regular file.
    fn path(&self) -> Option<&Path> {
        match self {
            Destination::File { path, .. } | Destination::Device(path) => Some(path),
            Destination::Stdout => None,
        }
    }

    /// Writes the report with `write`; returns the bytes written.
    fn write(&self, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<u64, Stopped> {
        match self {
            Destination::Stdout => {
                let mut out = Counted::new(BufWriter::with_capacity(1 << 20, io::stdout().lock()));
                write(&mut out)?;
                out.flush()?;
                Ok(out.bytes)
            }
            Destination::Device(path) => {
                let file = open_for_a_reader(path)?;
                let mut out = Counted::new(BufWriter::with_capacity(1 << 20, file));
                write(&mut out)?;
                out.flush()?;
                Ok(out.bytes)
            }
            Destination::File { path, existing } => {
                write_atomically(path, existing.as_ref(), write)
            }
        }
    }
}

/// `report.html` → `report.partial.html`; `report` → `report.partial`.
fn partial_name(path: &Path) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(extension) => format!("{stem}.partial.{}", extension.to_string_lossy()),
        None => format!("{stem}.partial"),
    };
    path.with_file_name(name)
}

/// Opens a FIFO or device for writing. A FIFO's open waits for a reader;
/// it waits on a thread of its own, so that a signal ends the wait.
fn open_for_a_reader(path: &Path) -> Result<File, Stopped> {
    let (opened, open) = std::sync::mpsc::channel();
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = opened.send(OpenOptions::new().write(true).open(path));
    });
    loop {
        if pipeline::stop_requested() {
            return Err(Stopped::BySignal);
        }
        if let Ok(file) = open.recv_timeout(std::time::Duration::from_millis(50)) {
            return Ok(file?);
        }
    }
}

/// A writer that counts the bytes it takes.
struct Counted<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Counted<W> {
    fn new(inner: W) -> Self {
        Counted { inner, bytes: 0 }
    }
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(bytes)?;
        self.bytes += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
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
/// see the old file or the whole new one, with the old one's permissions
/// (less setuid and setgid) and owner, and a failure or a signal leaves
/// nothing behind. Returns the bytes written.
fn write_atomically(
    path: &Path,
    existing: Option<&Metadata>,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<u64, Stopped> {
    let temporary = tempfile::Builder::new()
        .prefix(".tcpwhy-")
        .suffix(".tmp")
        .tempfile_in(directory_of(path))?;
    signals::writing(Some(temporary.path()));
    let result = (|| -> Result<u64, Stopped> {
        if let Some(existing) = existing {
            keep_owner(temporary.as_file(), existing)?;
            let permissions = fs::Permissions::from_mode(existing.mode() & PERMISSION_BITS);
            temporary.as_file().set_permissions(permissions)?;
        }
        let mut out = Counted::new(BufWriter::with_capacity(
            1 << 20,
            StopsOnSignal::new(temporary.as_file()),
        ));
        write(&mut out)?;
        out.flush()?;
        temporary.as_file().sync_all()?;
        Ok(out.bytes)
    })();
    let persisted = result.and_then(|bytes| {
        temporary
            .persist(path)
            .map_err(|error| Stopped::ByError(error.error))?;
        Ok(bytes)
    });
    signals::writing(None);
    persisted
}

/// Read, write and execute for owner, group and others: what a replaced
/// file keeps. A setuid or setgid bit is not kept: the report is no program.
const PERMISSION_BITS: u32 = 0o777;

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
struct StopsOnSignal<'a> {
    file: &'a File,
    signals_before: usize,
}

impl<'a> StopsOnSignal<'a> {
    fn new(file: &'a File) -> Self {
        StopsOnSignal {
            file,
            signals_before: signals::received(),
        }
    }
}

impl Write for StopsOnSignal<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if signals::received() > self.signals_before {
            // Not ErrorKind::Interrupted, which write_all would retry.
            return Err(io::Error::other(StoppedBySignal));
        }
        self.file.write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// What a write stopped by a signal fails with.
#[derive(Debug)]
struct StoppedBySignal;

impl std::fmt::Display for StoppedBySignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped by a signal")
    }
}

impl std::error::Error for StoppedBySignal {}

#[cfg(test)]
mod tests {
    use super::{shell_quoted, write_atomically, Stopped};

    #[test]
    fn a_signal_during_the_write_keeps_the_file_there() {
        let dir = std::env::temp_dir().join(format!("tcpwhy-signalled-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("report.html");
        std::fs::write(&path, "the report before").unwrap();
        let existing = std::fs::metadata(&path).unwrap();
        crate::signals::install(true);
        let written = write_atomically(&path, Some(&existing), |out| {
            out.write_all(b"<!DOCTYPE html>")?;
            // Safety: raise only sends this process a signal its handler takes.
            unsafe { libc::raise(libc::SIGINT) };
            while crate::signals::received() == 0 {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            out.write_all(&[b'x'; 1 << 21])
        });
        assert!(matches!(written, Err(Stopped::BySignal)));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "the report before");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "a temporary file was left"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn words_with_shell_syntax_are_quoted() {
        assert_eq!(shell_quoted("trace.pcap"), "trace.pcap");
        // The shell reads each quoted word back as it was, running nothing.
        for word in [
            "my cap $(touch x).pcap",
            "it's",
            "",
            "a\"b`c`",
            "two\nlines",
            "*.pcap",
        ] {
            let script = format!("printf %s {}", shell_quoted(word));
            let output = std::process::Command::new("sh")
                .args(["-c", &script])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&output.stdout), word, "{script}");
        }
    }
}
