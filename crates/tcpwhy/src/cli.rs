//! The command line: subcommands, flags, exit codes.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use diagnose::Severity;

use crate::html;
use crate::output::{self, Format};
use crate::progress::Progress;
use pipeline::{self, Analysis, Stages};

const EXAMPLES: &str = "\
Examples:
  tcpwhy trace.pcap                       ranked findings: why it is slow
  tcpwhy diagnose trace.pcap --format json
  tcpwhy connections trace.pcap
  tcpwhy connections ring-*.pcapng.gz --format json | jq .
  tcpwhy transactions trace.pcap --format csv > transactions.csv
  tcpwhy timeline trace.pcap --tick 100ms
  tcpdump -i eth0 -w - | tcpwhy events - --format csv
  tcpwhy report trace.pcap -o report.html  one HTML file to open offline or send on
  tcpwhy export ring-*.pcap --format parquet -o tables/   one Parquet file per table
  tcpwhy diagnose trace.pcap --fail-on warning   exit 1 on a warning or worse

Exit codes:
  0  the capture was read to the end
  1  --fail-on SEVERITY was given and a finding at or above it was found
  2  bad input (the error names the file and byte offset) or bad usage
  130  stopped by Ctrl-C or SIGTERM: the results printed are partial
       (a second signal exits at once)";

#[derive(Parser)]
#[command(name = "tcpwhy", version, about = "Explains why TCP traffic in a packet capture is slow.", after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Why it is slow: ranked findings with cost, evidence, fix and what-if
    /// (what `tcpwhy FILE` runs).
    Diagnose(DiagnoseArgs),
    /// One row per TCP connection: handshake, state, and per-direction counters.
    Connections(InputArgs),
    /// Every analysis event (retransmission, duplicate_ack, zero_window, ...) with its frame.
    Events(InputArgs),
    /// Request/response transactions with server and client think time, and
    /// duration statistics per transaction signature.
    Transactions(InputArgs),
    /// Per-tick series: packets, throughput, retransmissions, lost segments,
    /// duplicate ACKs, zero windows, new and failed connections, transactions.
    Timeline(TimelineArgs),
    /// One self-contained HTML file: findings, interactive charts, connection
    /// and transaction tables, and packet detail of the connections that matter.
    Report(ReportArgs),
    /// Every table (connections, transactions, events, timeline, findings,
    /// ledger) as one typed Parquet file each, for pandas, DuckDB or Spark.
    Export(ExportArgs),
}

#[derive(Args)]
struct ExportArgs {
    /// pcap or pcapng files, plain, .gz or .zst; several are merged by time; - reads stdin.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
    #[arg(long, value_enum, default_value_t = ExportFormat::Parquet)]
    format: ExportFormat,
    /// The directory to write the tables into (created if needed).
    #[arg(long, short, value_name = "DIR")]
    output: std::path::PathBuf,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    memory: MemoryArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExportFormat {
    Parquet,
}

#[derive(Args)]
struct DiagnoseArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    fail_on: FailOnArg,
}

#[derive(Args)]
struct FailOnArg {
    /// Exit 1 when a finding of this severity or worse is found.
    #[arg(long, value_enum, value_name = "SEVERITY")]
    fail_on: Option<SeverityArg>,
}

#[derive(Clone, Copy, ValueEnum)]
enum SeverityArg {
    Info,
    Warning,
    Critical,
}

impl FailOnArg {
    /// The exit code for these findings: 1 when one is at or above the threshold.
    fn exit_code(&self, findings: &[diagnose::Finding]) -> ExitCode {
        let threshold = match self.fail_on {
            None => return ExitCode::SUCCESS,
            Some(SeverityArg::Info) => Severity::Info,
            Some(SeverityArg::Warning) => Severity::Warning,
            Some(SeverityArg::Critical) => Severity::Critical,
        };
        if findings.iter().any(|f| f.severity >= threshold) {
            ExitCode::from(EXIT_FINDING)
        } else {
            ExitCode::SUCCESS
        }
    }
}

#[derive(Args)]
struct ReportArgs {
    /// pcap or pcapng files, plain, .gz or .zst; several are merged by time; - reads stdin.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
    /// The HTML file to write (replaced atomically; never one of the inputs).
    #[arg(long, short, value_name = "REPORT.html")]
    output: std::path::PathBuf,
    /// Also give this connection (an id from the connections table) packet detail; repeatable.
    #[arg(long, value_name = "ID")]
    connection: Vec<u64>,
    #[command(flatten)]
    fail_on: FailOnArg,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    memory: MemoryArg,
}

#[derive(Args)]
struct TimelineArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Tick size, such as 100ms, 1s or 1m; chosen from the capture's length when absent.
    #[arg(long)]
    tick: Option<String>,
}

#[derive(Args)]
struct InputArgs {
    /// pcap or pcapng files, plain, .gz or .zst; several are merged by time; - reads stdin.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    format: FormatArg,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    memory: MemoryArg,
}

#[derive(Args)]
struct MemoryArg {
    /// Memory the analysis may hold, such as 512M or 4G; past it, connections
    /// are counted without being listed, and the output says how many.
    #[arg(long = "memory", value_name = "SIZE", default_value = "1G", value_parser = parse_size)]
    bytes: u64,
}

impl MemoryArg {
    fn apply(&self, stages: Stages) -> Stages {
        Stages {
            memory_bytes: Some(self.bytes),
            ..stages
        }
    }
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum FormatArg {
    Table,
    Json,
    Csv,
}

impl From<FormatArg> for Format {
    fn from(format: FormatArg) -> Self {
        match format {
            FormatArg::Table => Format::Table,
            FormatArg::Json => Format::Json,
            FormatArg::Csv => Format::Csv,
        }
    }
}

const EXIT_FINDING: u8 = 1;
const EXIT_BAD_INPUT: u8 = 2;
/// 128 + SIGINT, as a shell reports a command ended by Ctrl-C.
const EXIT_INTERRUPTED: u8 = 130;
/// Stdout is line-buffered; results are written in larger pieces.
const OUTPUT_BUFFER: usize = 1 << 16;

/// Subcommand names; anything else first on the line is a file to diagnose.
const COMMANDS: [&str; 8] = [
    "diagnose",
    "connections",
    "events",
    "transactions",
    "timeline",
    "report",
    "export",
    "help",
];

/// `tcpwhy [FLAGS] FILE…` means `tcpwhy diagnose [FLAGS] FILE…`.
fn arguments() -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let given: Vec<&str> = args.iter().skip(1).filter_map(|a| a.to_str()).collect();
    let asks_for_help = given
        .first()
        .is_none_or(|first| ["-h", "--help", "-V", "--version"].contains(first));
    let first_word = given.iter().find(|a| **a == "-" || !a.starts_with('-'));
    let names_a_command = first_word.is_some_and(|word| COMMANDS.contains(word));
    if !asks_for_help && !names_a_command {
        args.insert(1, "diagnose".into());
    }
    args
}

pub fn run() -> ExitCode {
    crate::signals::install();
    let cli = match Cli::try_parse_from(arguments()) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() {
                ExitCode::from(EXIT_BAD_INPUT)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let outcome = match cli.command {
        Command::Diagnose(args) => diagnose(&args),
        Command::Connections(input) => connections(&input),
        Command::Events(input) => events(&input),
        Command::Transactions(input) => transactions(&input),
        Command::Timeline(args) => timeline(&args),
        Command::Report(args) => Ok(html_report(&args)),
        Command::Export(args) => Ok(export(&args)),
    };
    match outcome {
        Ok(code) => code,
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tcpwhy: {error}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

fn progress_for(input: &InputArgs) -> Progress {
    progress_over(&input.files, input.quiet)
}

fn progress_over(files: &[String], quiet: bool) -> Progress {
    let total = files
        .iter()
        .map(|path| std::fs::metadata(path).ok().map(|m| m.len()))
        .sum::<Option<u64>>();
    Progress::new(total, quiet)
}

/// Runs the pipeline and writes its results with `write`.
fn report(
    input: &InputArgs,
    stages: Stages,
    write: fn(&mut dyn Write, Format, &Analysis) -> io::Result<()>,
) -> io::Result<ExitCode> {
    report_then(input, stages, write, |_| ExitCode::SUCCESS)
}

/// [`report`], with the exit code of a complete read chosen by `exit_code`.
fn report_then(
    input: &InputArgs,
    stages: Stages,
    write: fn(&mut dyn Write, Format, &Analysis) -> io::Result<()>,
    exit_code: impl FnOnce(&Analysis) -> ExitCode,
) -> io::Result<ExitCode> {
    let stages = input.memory.apply(stages);
    let analysis = match pipeline::analyze(&input.files, stages, progress_for(input), |_| {}) {
        Ok(analysis) => analysis,
        Err(error) => return Ok(bad_input(&error)),
    };
    if let Some(tick_ns) = analysis.tick_too_fine {
        eprintln!(
            "tcpwhy: --tick is too fine for this capture: it would need more than {} ticks; \
             the smallest tick that fits is {}",
            timeline::MAX_BINS,
            duration_text(tick_ns)
        );
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let mut out = io::BufWriter::with_capacity(OUTPUT_BUFFER, io::stdout().lock());
    write(&mut out, input.format.into(), &analysis)?;
    out.flush()?;
    if input.format == FormatArg::Csv {
        print_notes(&analysis);
    }
    let code = match finish(&analysis) {
        Some(code) => code,
        None => exit_code(&analysis),
    };
    // The process ends next: freeing every summary one by one would only cost time.
    std::mem::forget(analysis);
    Ok(code)
}

fn diagnose(args: &DiagnoseArgs) -> io::Result<ExitCode> {
    let stages = Stages {
        diagnose: true,
        ..Stages::default()
    };
    report_then(&args.input, stages, output::findings, |analysis| {
        args.fail_on.exit_code(&analysis.findings)
    })
}

fn html_report(args: &ReportArgs) -> ExitCode {
    let progress = || progress_over(&args.files, args.quiet);
    let memory_bytes = args.memory.bytes;
    match html::write_report(
        &args.files,
        &args.output,
        &args.connection,
        memory_bytes,
        progress,
    ) {
        Ok(analysis) => {
            print_notes(&analysis);
            finish(&analysis).unwrap_or_else(|| args.fail_on.exit_code(&analysis.findings))
        }
        Err(html::Failure::BadInput(error)) => bad_input(&error),
        Err(html::Failure::Output(message)) => {
            eprintln!("tcpwhy: {message}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

fn export(args: &ExportArgs) -> ExitCode {
    let progress = progress_over(&args.files, args.quiet);
    let written = match args.format {
        ExportFormat::Parquet => {
            crate::export::parquet(&args.files, &args.output, args.memory.bytes, progress)
        }
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tcpwhy: {error}");
            let interrupted = matches!(error, columns::Error::Interrupted);
            ExitCode::from(if interrupted {
                EXIT_INTERRUPTED
            } else {
                EXIT_BAD_INPUT
            })
        }
    }
}

fn connections(input: &InputArgs) -> io::Result<ExitCode> {
    // What limits each bulk flow is read from the ledgers the transactions build.
    let stages = Stages {
        transactions: true,
        ..Stages::default()
    };
    report(input, stages, output::connections)
}

fn transactions(input: &InputArgs) -> io::Result<ExitCode> {
    let stages = Stages {
        transactions: true,
        ..Stages::default()
    };
    report(input, stages, output::transactions)
}

fn timeline(args: &TimelineArgs) -> io::Result<ExitCode> {
    let tick = match args.tick.as_deref().map(parse_duration_ns).transpose() {
        Ok(tick) => tick,
        Err(message) => {
            eprintln!("tcpwhy: --tick {message}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
    };
    let stages = Stages {
        timeline: Some(tick),
        ..Stages::default()
    };
    report(&args.input, stages, output::timeline)
}

/// "512M", "4G", "1.5GiB", "100000000" (bytes) as bytes; powers of 1024.
fn parse_size(text: &str) -> Result<u64, String> {
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: f64 = match unit
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 1.0,
        "K" => 1024.0,
        "M" => 1024.0 * 1024.0,
        "G" => 1024.0 * 1024.0 * 1024.0,
        "T" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("unknown unit {unit:?} (K, M, G, T)")),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| "not a size such as 512M or 4G".to_string())?;
    let bytes = value * scale;
    if !(bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err("out of range".into());
    }
    Ok(bytes as u64)
}

/// "250ms", "1s", "5m", "1h" (or plain seconds) as nanoseconds.
fn parse_duration_ns(text: &str) -> Result<i64, String> {
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "" | "s" => 1e9,
        "m" => 60e9,
        "h" => 3600e9,
        _ => {
            return Err(format!(
                "{text:?}: unknown unit {unit:?} (ns, us, ms, s, m, h)"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration such as 100ms or 1s"))?;
    let nanos = value * scale;
    if !(1.0..=1e15).contains(&nanos) {
        return Err(format!("{text:?} is out of range"));
    }
    Ok(nanos as i64)
}

fn events(input: &InputArgs) -> io::Result<ExitCode> {
    let format: Format = input.format.into();
    let mut out = io::BufWriter::with_capacity(OUTPUT_BUFFER, io::stdout().lock());
    let mut writer = output::EventWriter::new(format);
    let mut write_error = None;
    // Live input: each event goes out as it is decided.
    let streamed = input.files.iter().any(|file| file == "-");
    let result = pipeline::analyze(
        &input.files,
        input.memory.apply(Stages::default()),
        progress_for(input),
        |event| {
            if write_error.is_none() {
                write_error = writer.write(&mut out, event).err();
            }
            if streamed && write_error.is_none() {
                write_error = out.flush().err();
            }
        },
    );
    if let Some(error) = write_error {
        return Err(error);
    }
    let analysis = match result {
        Ok(analysis) => analysis,
        Err(error) => return Ok(bad_input(&error)),
    };
    writer.finish(&mut out, &analysis)?;
    out.flush()?;
    if input.format == FormatArg::Csv {
        print_notes(&analysis);
    }
    Ok(finish(&analysis).unwrap_or(ExitCode::SUCCESS))
}

fn bad_input(error: &capture::CaptureError) -> ExitCode {
    eprintln!("tcpwhy: {error}");
    ExitCode::from(EXIT_BAD_INPUT)
}

/// When the read stopped early, the line that says why and the exit code:
/// 2 for bad input, 130 for a signal; the results shown are partial.
fn finish(analysis: &Analysis) -> Option<ExitCode> {
    if let Some(error) = &analysis.error {
        return Some(bad_input(error));
    }
    if analysis.interrupted {
        eprintln!(
            "tcpwhy: stopped by a signal after {} frames: the results are partial",
            analysis.counts.frames
        );
        return Some(ExitCode::from(EXIT_INTERRUPTED));
    }
    None
}

/// The analysis's notes on stderr, where the output format has no place for them.
fn print_notes(analysis: &Analysis) {
    for note in analysis.notes() {
        eprintln!("tcpwhy: note: {note}");
    }
}

/// Nanoseconds as the shortest of 250ms, 2s, 5m, 1h, 20us that --tick reads back.
fn duration_text(ns: i64) -> String {
    let units = [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
    ];
    for (scale, unit) in units {
        if ns >= scale && ns % scale == 0 {
            return format!("{}{unit}", ns / scale);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::{parse_duration_ns, parse_size};

    #[test]
    fn sizes_read_with_their_units() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("5 furlongs").is_err());
        assert!(parse_size("0").is_err());
    }

    #[test]
    fn durations_read_with_their_units() {
        assert_eq!(parse_duration_ns("250ms"), Ok(250_000_000));
        assert_eq!(parse_duration_ns("2"), Ok(2_000_000_000));
        assert_eq!(parse_duration_ns("1.5m"), Ok(90_000_000_000));
        assert!(parse_duration_ns("5 parsecs").is_err());
        assert!(parse_duration_ns("0s").is_err());
    }
}
