//! `tcpwhy compare` and `tcpwhy diff`: two captures side by side.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde::Serialize;

#[derive(Args)]
pub struct CompareArgs {
    /// The capture taken at the first point.
    #[arg(value_name = "A")]
    a: String,
    /// The capture of the same traffic taken at the second point.
    #[arg(value_name = "B")]
    b: String,
    #[command(flatten)]
    format: ResultFormat,
}

#[derive(Args)]
pub struct DiffArgs {
    /// The capture taken before the change.
    #[arg(value_name = "BEFORE")]
    before: String,
    /// The capture of the same workload taken after it.
    #[arg(value_name = "AFTER")]
    after: String,
    /// Also write one self-contained HTML page with both runs: their
    /// throughput, window and retransmissions on shared axes, each
    /// finding's change and the response times by transaction type.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    #[command(flatten)]
    format: ResultFormat,
}

/// One result, not rows: text or one JSON object.
#[derive(Args)]
struct ResultFormat {
    /// Output format.
    #[arg(
        long = "format",
        value_enum,
        default_value = "table",
        value_name = "FORMAT"
    )]
    value: ResultFormatArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum ResultFormatArg {
    Table,
    Json,
}

pub fn compare(args: &CompareArgs) -> io::Result<ExitCode> {
    write(compare::compare(&args.a, &args.b), args.format.value)
}

pub fn diff(args: &DiffArgs) -> io::Result<ExitCode> {
    let result = compare::diff::diff(&args.before, &args.after);
    if let (Ok(diff), Some(output)) = (&result, &args.html) {
        let files = [args.before.clone(), args.after.clone()];
        let written = crate::html::write_page(&files, output, |mut out| {
            report::write_diff(&mut out, &files, diff)
        });
        if let Err(reason) = written {
            eprintln!("tcpwhy: {reason}");
            return Ok(ExitCode::from(2));
        }
    }
    write(result, args.format.value)
}

/// Writes the result as text or one JSON object; a capture that cannot be
/// read is a line on stderr naming the file and byte offset, and exit code 2.
fn write<T: std::fmt::Display + Serialize>(
    result: Result<T, capture::CaptureError>,
    format: ResultFormatArg,
) -> io::Result<ExitCode> {
    let result = match result {
        Ok(result) => result,
        Err(error) => {
            eprintln!("tcpwhy: {error}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut out = io::stdout().lock();
    match format {
        ResultFormatArg::Json => {
            serde_json::to_writer(&mut out, &result).map_err(io::Error::other)?;
            writeln!(out)?;
        }
        ResultFormatArg::Table => write!(out, "{result}")?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
