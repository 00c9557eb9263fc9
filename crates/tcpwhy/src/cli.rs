//! The command line: subcommands, flags that go anywhere on the line, the
//! selection they make, and exit codes.

use std::io::{self, Write};
use std::net::IpAddr;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use diagnose::Severity;

use crate::command_line;
use crate::connection;
use crate::html;
use crate::output::{self, connection::OneConnection, text, Format, Style};
use crate::progress::Progress;
use crate::signals::{self, EXIT_INTERRUPTED};
use crate::two_captures::{self, CompareArgs, DiffArgs};
use crate::units;
use pipeline::{self, Analysis, Instant, Network, Selection, Stages};

const EXAMPLES: &str = "\
Examples:
  tcpwhy trace.pcap                       ranked findings: why it is slow
  tcpwhy diagnose trace.pcap --format json
  tcpwhy connections trace.pcap --host 10.0.0.2 --port 443
  tcpwhy connection 59 trace.pcap         one connection: handshake, time, events, packets
  tcpwhy events trace.pcap --between 14:03:00 14:05:30
  tcpwhy transactions trace.pcap --format csv > transactions.csv
  tcpwhy timeline trace.pcap --tick 100ms --between +10s +70s
  tcpdump -i eth0 -w - | tcpwhy events - --format csv
  tcpwhy report trace.pcap -o report.html  one HTML file to open offline or send on
  tcpwhy compare client-side.pcap server-side.pcap   delay and loss between two points
  tcpwhy diff before.pcap after.pcap      what a change did to findings and response times
  tcpwhy diff before.pcap after.pcap --html diff.html   both runs over time on shared axes
  tcpwhy export ring-*.pcap -o tables/    one Parquet file per table (or --format csv|json)
  tcpwhy diagnose trace.pcap --fail-on warning   exit 1 on a warning or worse

Selection: --host, --port, --net and --connection may each be repeated (any
value matches); different kinds must all match. Connection ids stay those of
the whole capture. --between keeps the packets between two instants: a time
of day (14:03:07.25, UTC), an offset from the capture's start (+90s), or
seconds since the epoch (@1700000000.5). Flags may go anywhere on the line.

Exit codes:
  0  the capture was read to the end
  1  --fail-on SEVERITY was given and a finding at or above it was found
  2  bad usage, or input that cannot be read (the error names the file and
     byte offset; results read before bad data are printed, marked partial)
  3  partial but usable: the capture ends inside a record (cut off while
     written or copied); the results cover every whole record before it
  130  stopped by Ctrl-C or SIGTERM: the work stops within a second and
       the results so far are printed, marked partial; a file being
       written is abandoned and the one there kept (a second signal
       exits at once)";

#[derive(Parser)]
#[command(name = "tcpwhy", version, about = "Explains why TCP traffic in a packet capture is slow.", after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    global: GlobalArgs,
}

/// Flags every command takes, anywhere on the line.
#[derive(Args)]
struct GlobalArgs {
    /// No progress bar.
    #[arg(long, short, global = true)]
    quiet: bool,
    /// Output format (report writes HTML and takes none).
    #[arg(long, value_enum, global = true)]
    format: Option<FormatArg>,
    /// Instants as seconds since the epoch, not the time of day (UTC), in tables.
    #[arg(long, global = true)]
    epoch: bool,
    /// Memory the analysis may hold, such as 512M or 4G; past it, connections
    /// are counted without being listed, and the output says how many.
    #[arg(long = "memory", value_name = "SIZE", default_value = "1G", value_parser = units::size, global = true)]
    memory_bytes: u64,
    #[command(flatten)]
    select: SelectArgs,
}

#[derive(Args)]
#[command(next_help_heading = "Selection")]
struct SelectArgs {
    /// Only connections to or from this address.
    #[arg(long, value_name = "IP", global = true)]
    host: Vec<IpAddr>,
    /// Only connections with this port at either end.
    #[arg(long, global = true)]
    port: Vec<u16>,
    /// Only connections with an end in this network, such as 10.1.0.0/16.
    #[arg(long, value_name = "CIDR", global = true)]
    net: Vec<Network>,
    /// Only these connections (ids from `tcpwhy connections`); comma-separated or repeated.
    #[arg(long, value_name = "ID", value_delimiter = ',', global = true)]
    connection: Vec<u64>,
    /// Only the packets from T1 to T2 (14:03:07.25 UTC, +90s from the start, or @EPOCH).
    #[arg(long, num_args = 2, value_names = ["T1", "T2"], value_parser = units::instant, global = true)]
    between: Vec<Instant>,
}

impl SelectArgs {
    fn selection(&self) -> Selection {
        Selection {
            hosts: self.host.clone(),
            ports: self.port.clone(),
            networks: self.net.clone(),
            connections: self.connection.clone(),
            between: match self.between.as_slice() {
                [from, to] => Some((*from, *to)),
                _ => None,
            },
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Why it is slow: ranked findings with cost, evidence, fix and what-if
    /// (what `tcpwhy FILE` runs).
    Diagnose(DiagnoseArgs),
    /// One row per TCP connection: handshake, state, and per-direction counters.
    Connections(FilesArg),
    /// One connection: its handshake, where its time went, its events and
    /// its first packets as a ladder.
    Connection(ConnectionArgs),
    /// Every analysis event (retransmission, duplicate_ack, zero_window, ...) with its frame.
    Events(FilesArg),
    /// Request/response transactions with server and client think time, and
    /// duration statistics per transaction signature.
    Transactions(FilesArg),
    /// Per-tick series: packets, throughput, retransmissions, lost segments,
    /// duplicate ACKs, zero windows, new and failed connections, transactions.
    Timeline(TimelineArgs),
    /// One self-contained HTML file: findings, interactive charts, connection
    /// and transaction tables, and packet detail of the connections that matter.
    Report(ReportArgs),
    /// The same traffic captured at two points: packets matched across the
    /// captures, clock offset, delay and loss between the points, packets
    /// either capture dropped, and which point is nearer which host.
    Compare(CompareArgs),
    /// The same workload before and after a change: findings gone, new or
    /// changed in cost, and response time per transaction type.
    Diff(DiffArgs),
    /// Every table (connections, transactions, events, timeline, findings,
    /// ledger) as one file each: typed Parquet (the default) for pandas,
    /// DuckDB or Spark, or CSV or JSON lines with the same fields.
    Export(ExportArgs),
}

#[derive(Args)]
struct ExportArgs {
    #[command(flatten)]
    input: FilesArg,
    /// The directory to write the tables into (created if needed).
    #[arg(long, short, value_name = "DIR")]
    output: std::path::PathBuf,
}

#[derive(Args)]
struct FilesArg {
    /// pcap or pcapng files, plain, .gz or .zst; several are merged by time; - reads stdin.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
}

#[derive(Args)]
struct DiagnoseArgs {
    #[command(flatten)]
    input: FilesArg,
    #[command(flatten)]
    fail_on: FailOnArg,
}

#[derive(Args)]
struct ConnectionArgs {
    /// The connection's id, as `tcpwhy connections` and the findings give it.
    id: u64,
    #[command(flatten)]
    input: FilesArg,
    /// Packets shown in the ladder, from the connection's first.
    #[arg(long, default_value_t = 50, value_name = "COUNT")]
    packets: usize,
}

#[derive(Args)]
struct TimelineArgs {
    #[command(flatten)]
    input: FilesArg,
    /// Tick size with its unit, such as 100ms, 1s or 1m; chosen from the capture's length when absent.
    #[arg(long, value_parser = units::duration_ns, value_name = "DURATION")]
    tick: Option<i64>,
}

#[derive(Args)]
struct ReportArgs {
    #[command(flatten)]
    input: FilesArg,
    /// The HTML file to write (replaced atomically; never one of the inputs).
    #[arg(long, short, value_name = "REPORT.html")]
    output: std::path::PathBuf,
    /// Also give this connection packet detail; repeatable.
    #[arg(long, value_name = "ID")]
    detail: Vec<u64>,
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
    /// Whether these findings reach the threshold.
    fn reached(&self, findings: &[diagnose::Finding]) -> bool {
        let threshold = match self.fail_on {
            None => return false,
            Some(SeverityArg::Info) => Severity::Info,
            Some(SeverityArg::Warning) => Severity::Warning,
            Some(SeverityArg::Critical) => Severity::Critical,
        };
        findings.iter().any(|f| f.severity >= threshold)
    }
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum FormatArg {
    Table,
    Json,
    Csv,
    /// Only for `export`, whose default it is.
    Parquet,
}

impl From<FormatArg> for Format {
    fn from(format: FormatArg) -> Self {
        match format {
            FormatArg::Table | FormatArg::Parquet => Format::Table,
            FormatArg::Json => Format::Json,
            FormatArg::Csv => Format::Csv,
        }
    }
}

const EXIT_FINDING: u8 = 1;
const EXIT_BAD_INPUT: u8 = 2;
const EXIT_PARTIAL: u8 = 3;
/// Stdout is line-buffered; results are written in larger pieces.
const OUTPUT_BUFFER: usize = 1 << 16;

pub fn run() -> ExitCode {
    let args = match command_line::arguments(std::env::args_os().collect()) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("tcpwhy: {message}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let cli = match Cli::try_parse_from(args) {
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
    // Comparing two captures cannot stop part way: a signal ends it at once.
    let stops_part_way = !matches!(cli.command, Command::Compare(_) | Command::Diff(_));
    signals::install(stops_part_way);
    let outcome = match &cli.command {
        Command::Diagnose(args) => diagnose(&cli.global, args),
        Command::Connections(input) => {
            // What limits each bulk flow is read from the ledgers the transactions build.
            let stages = Stages {
                transactions: true,
                ..Stages::default()
            };
            tabulate(&cli.global, input, stages, output::connections)
        }
        Command::Connection(args) => one_connection(&cli.global, args),
        Command::Events(input) => events(&cli.global, input),
        Command::Transactions(input) => {
            let stages = Stages {
                transactions: true,
                ..Stages::default()
            };
            tabulate(&cli.global, input, stages, output::transactions)
        }
        Command::Timeline(args) => {
            let stages = Stages {
                timeline: Some(args.tick),
                ..Stages::default()
            };
            tabulate(&cli.global, &args.input, stages, output::timeline)
        }
        Command::Report(args) => html_report(&cli.global, args),
        Command::Compare(args) => two_captures::compare(args, cli.global.style().format),
        Command::Diff(args) => two_captures::diff(args, cli.global.style().format),
        Command::Export(args) => Ok(export(&cli.global, args)),
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

impl GlobalArgs {
    fn style(&self) -> Style {
        Style {
            format: self.format.map_or(Format::Table, Format::from),
            epoch: self.epoch,
            width: text::terminal_width(),
        }
    }

    fn progress(&self, files: &[String]) -> Progress {
        let total = files
            .iter()
            .map(|path| std::fs::metadata(path).ok().map(|m| m.len()))
            .sum::<Option<u64>>();
        Progress::new(total, self.quiet)
    }

    /// `stages` over the traffic the flags select, within the memory budget.
    fn selecting(&self, stages: Stages) -> Stages {
        Stages {
            selection: self.select.selection(),
            memory_bytes: Some(self.memory_bytes),
            ..stages
        }
    }
}

/// Runs the pipeline and writes its results with `write`.
fn tabulate(
    global: &GlobalArgs,
    input: &FilesArg,
    stages: Stages,
    write: output::Writer,
) -> io::Result<ExitCode> {
    tabulate_then(global, input, stages, write, |_| false)
}

/// [`tabulate`], exiting 1 when `reached` says the findings cross `--fail-on`.
fn tabulate_then(
    global: &GlobalArgs,
    input: &FilesArg,
    stages: Stages,
    write: output::Writer,
    reached: impl FnOnce(&Analysis) -> bool,
) -> io::Result<ExitCode> {
    let progress = global.progress(&input.files);
    let analysis = match pipeline::analyze(&input.files, global.selecting(stages), progress, |_| {})
    {
        Ok(analysis) => analysis,
        Err(error) => return Ok(bad_input(&error)),
    };
    if let Some(tick_ns) = analysis.tick_too_fine {
        eprintln!(
            "tcpwhy: --tick is too fine for this capture: it would need more than {} ticks; \
             the smallest tick that fits is {}",
            timeline::MAX_BINS,
            units::duration_text(tick_ns)
        );
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let mut out = io::BufWriter::with_capacity(OUTPUT_BUFFER, io::stdout().lock());
    let style = global.style();
    write(&mut out, &style, &analysis)?;
    out.flush()?;
    if style.format == Format::Csv {
        print_notes(&analysis);
    }
    let code = exit_code(&analysis, reached(&analysis));
    // The process ends next: freeing every summary one by one would only cost time.
    std::mem::forget(analysis);
    Ok(code)
}

fn diagnose(global: &GlobalArgs, args: &DiagnoseArgs) -> io::Result<ExitCode> {
    let stages = Stages {
        diagnose: true,
        ..Stages::default()
    };
    tabulate_then(global, &args.input, stages, output::findings, |analysis| {
        args.fail_on.reached(&analysis.findings)
    })
}

fn one_connection(global: &GlobalArgs, args: &ConnectionArgs) -> io::Result<ExitCode> {
    let files = &args.input.files;
    let stages = global.selecting(Stages::default());
    let gathered =
        match connection::gather(files, args.id, args.packets, stages, global.progress(files)) {
            Ok(gathered) => gathered,
            Err(error) => return Ok(bad_input(&error)),
        };
    let analysis = &gathered.analysis;
    let Some(found) = analysis.connections.iter().find(|c| c.id == args.id) else {
        let selected = if global.select.selection() == Selection::default() {
            ""
        } else {
            " among the selected traffic"
        };
        eprintln!(
            "tcpwhy: connection {} is not in {}{selected}; `tcpwhy connections` lists the ids",
            args.id,
            files.join(", ")
        );
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    };
    let one = OneConnection {
        analysis,
        connection: found,
        packets: &gathered.packets,
        packets_seen: gathered.packets_seen,
        events: &gathered.events,
        events_seen: gathered.events_seen,
    };
    let mut out = io::BufWriter::with_capacity(OUTPUT_BUFFER, io::stdout().lock());
    output::connection::write(&mut out, &global.style(), &one)?;
    out.flush()?;
    Ok(exit_code(analysis, false))
}

fn events(global: &GlobalArgs, input: &FilesArg) -> io::Result<ExitCode> {
    let mut out = io::BufWriter::with_capacity(OUTPUT_BUFFER, io::stdout().lock());
    // Live input: each event goes out as it is decided.
    let streamed = input.files.iter().any(|file| file == "-");
    let writer = std::cell::RefCell::new(output::EventWriter::new(global.style(), streamed));
    let mut write_error = None;
    let result = pipeline::analyze_observed(
        &input.files,
        global.selecting(Stages::default()),
        global.progress(&input.files),
        |event| {
            if write_error.is_none() {
                write_error = writer.borrow_mut().write(&mut out, event).err();
            }
            if streamed && write_error.is_none() {
                write_error = out.flush().err();
            }
        },
        |view| writer.borrow_mut().starts_at(view.timestamp_ns),
    );
    if let Some(error) = write_error {
        return Err(error);
    }
    let analysis = match result {
        Ok(analysis) => analysis,
        Err(error) => return Ok(bad_input(&error)),
    };
    writer.borrow_mut().finish(&mut out, &analysis)?;
    out.flush()?;
    if global.style().format == Format::Csv {
        print_notes(&analysis);
    }
    Ok(exit_code(&analysis, false))
}

fn html_report(global: &GlobalArgs, args: &ReportArgs) -> io::Result<ExitCode> {
    if global.format.is_some() {
        eprintln!("tcpwhy: report writes HTML; --format applies to the other commands");
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let files = &args.input.files;
    let progress = || global.progress(files);
    let stages = global.selecting(Stages::default());
    Ok(
        match html::write_report(files, &args.output, &args.detail, stages, progress) {
            Ok(written) => {
                let analysis = &written.analysis;
                print_notes(analysis);
                let code = if written.partial || !output::interrupted(analysis) {
                    exit_code(analysis, args.fail_on.reached(&analysis.findings))
                } else {
                    eprintln!("tcpwhy: stopped by a signal once the report was written whole");
                    ExitCode::from(EXIT_INTERRUPTED)
                };
                if let Some((path, bytes)) = &written.file {
                    let kept = written.kept.as_ref().map_or(String::new(), |kept| {
                        format!("; {}, already there, was kept", kept.display())
                    });
                    let size = units::size_text(*bytes);
                    eprintln!("tcpwhy: wrote {} ({size}){kept}", path.display());
                }
                code
            }
            Err(html::Failure::BadInput(error)) => bad_input(&error),
            Err(html::Failure::Output(message)) => {
                eprintln!("tcpwhy: {message}");
                ExitCode::from(EXIT_BAD_INPUT)
            }
            Err(html::Failure::Interrupted(message)) => {
                eprintln!("tcpwhy: {message}");
                ExitCode::from(EXIT_INTERRUPTED)
            }
        },
    )
}

fn export(global: &GlobalArgs, args: &ExportArgs) -> ExitCode {
    let format = match global.format {
        None | Some(FormatArg::Parquet) => columns::files::Format::Parquet,
        Some(FormatArg::Csv) => columns::files::Format::Csv,
        Some(FormatArg::Json) => columns::files::Format::Json,
        Some(FormatArg::Table) => {
            eprintln!("tcpwhy: export writes files: --format parquet, csv or json");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let files = &args.input.files;
    let stages = global.selecting(Stages::default());
    match crate::export::tables(files, &args.output, format, stages, global.progress(files)) {
        Ok(written) => {
            eprintln!(
                "tcpwhy: wrote {} ({} in {})",
                args.output.display(),
                units::size_text(written.bytes),
                text::plural(written.files.len() as u64, "file")
            );
            ExitCode::SUCCESS
        }
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

fn bad_input(error: &capture::CaptureError) -> ExitCode {
    eprintln!("tcpwhy: {error}");
    ExitCode::from(EXIT_BAD_INPUT)
}

/// The analysis's notes on stderr, where the output format has no place for them.
fn print_notes(analysis: &Analysis) {
    for note in output::notes::sentences(analysis) {
        eprintln!("tcpwhy: note: {note}");
    }
}

/// The exit code once the results are written, with the one line on stderr
/// that says why when the read stopped early: 2 for bad data, 130 for a
/// signal, else 1 when the findings reached `--fail-on`, else 3 for a
/// capture cut short.
fn exit_code(analysis: &Analysis, fail_on_reached: bool) -> ExitCode {
    if output::interrupted(analysis) {
        if let Some(reason) = output::partial_reason(analysis) {
            eprintln!("tcpwhy: {reason}: the results are partial");
        }
        return ExitCode::from(EXIT_INTERRUPTED);
    }
    for other in &analysis.other_failures {
        eprintln!("tcpwhy: {other}: the other files were read on");
    }
    if let Some(error) = &analysis.error {
        if !error.cut_short {
            return bad_input(error);
        }
        eprintln!(
            "tcpwhy: warning: {error}: the capture ends inside a record; the results \
             cover the {} before it",
            text::plural(analysis.counts.frames, "frame")
        );
    }
    if fail_on_reached {
        ExitCode::from(EXIT_FINDING)
    } else if analysis.error.is_some() {
        ExitCode::from(EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    }
}
