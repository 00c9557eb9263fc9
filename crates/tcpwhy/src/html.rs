//! `tcpwhy report`: the full analysis, packet detail of the connections worth
//! a closer look, and one HTML file written atomically. A capture cut off
//! inside its last record still gets its report, marked partial.
//!
//! Files are read twice: once for the analysis, which says which connections
//! to detail, then once more collecting those connections' packets. Standard
//! input cannot be read twice, so it is read once, detailing the connections
//! asked for and the first ones seen.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::Path;

use capture::CaptureError;
use report::detail::MAX_CONNECTIONS;
use report::{Collector, ConnectionDetail, Report};

use crate::progress::Progress;
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
    refuse_overwriting_an_input(files, output)?;
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
        detail_command: format!(
            "tcpwhy report {} -o {} --detail",
            files.join(" "),
            output.display()
        ),
        partial: crate::output::partial_reason(&analysis),
    };
    write_atomically(output, |out| report::write(out, &report))
        .map_err(|error| Failure::Output(format!("{}: {error}", output.display())))?;
    Ok(analysis)
}

fn analyze_with_detail(
    files: &[String],
    asked: &[u64],
    stages: Stages,
    progress: impl Fn() -> Progress,
) -> Result<(Analysis, Vec<ConnectionDetail>), Failure> {
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
    if analysis
        .error
        .as_ref()
        .is_some_and(|error| !error.cut_short)
    {
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
        Stages::default(),
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

fn refuse_overwriting_an_input(files: &[String], output: &Path) -> Result<(), Failure> {
    let Ok(target) = output.canonicalize() else {
        return Ok(());
    };
    for file in files {
        if Path::new(file)
            .canonicalize()
            .is_ok_and(|input| input == target)
        {
            return Err(Failure::Output(format!(
                "{}: is an input file; choose another -o path",
                output.display()
            )));
        }
    }
    Ok(())
}

/// Writes to a new file beside `path`, then renames it over `path`: readers
/// see the old file or the whole new one, and a failure leaves nothing behind.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    let directory = path.parent().filter(|p| !p.as_os_str().is_empty());
    let temporary = directory.unwrap_or(Path::new(".")).join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)?;
    let result = (|| {
        let mut out = BufWriter::with_capacity(1 << 20, file);
        write(&mut out)?;
        out.flush()?;
        out.into_inner()?.sync_all()?;
        fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}
