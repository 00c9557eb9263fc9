//! The command line: subcommands, flags that go anywhere on the line, the
//! selection they make, and exit codes.

use std::io::{self, Write};
use std::net::IpAddr;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

use arrow_schema::FieldRef;
use columns::csv::Chosen;
use columns::schema;
use diagnose::Severity;

use crate::command_line;
use crate::connection;
use crate::html;
use crate::output::{self, connection::OneConnection, table::ColorChoice, text, Format, Style};
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
}

#[derive(Clone, Copy, ValueEnum)]
enum ColorArg {
    Auto,
    Always,
    Never,
}

impl From<ColorArg> for ColorChoice {
    fn from(color: ColorArg) -> Self {
        match color {
            ColorArg::Auto => ColorChoice::Auto,
            ColorArg::Always => ColorChoice::Always,
            ColorArg::Never => ColorChoice::Never,
        }
    }
}

/// The definition of the command line: its commands and their flags.
pub fn definition() -> clap::Command {
    Cli::command()
}

/// What every command that analyses captures takes: the files, the
/// traffic to keep from them and the memory to keep it in.
#[derive(Args)]
struct Reading {
    #[command(flatten)]
    input: FilesArg,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    /// Memory the analysis may hold, such as 512M or 4G; past it, connections
    /// are counted without being listed, and the output says how many.
    #[arg(long = "memory", value_name = "SIZE", default_value = "1G", value_parser = units::size)]
    memory_bytes: u64,
    /// Threads to analyse the connections on (one more reads the files, and
    /// the diagnosis after the read runs on two); the result is the same
    /// for any number. Standard input, a selection of traffic, `events` and
    /// `connection` run on one.
    #[arg(long, value_name = "N", default_value_t = cores(), value_parser = clap::value_parser!(u16).range(1..))]
    threads: u16,
    #[command(flatten)]
    select: SelectArgs,
}

/// The cores this process may run on.
fn cores() -> u16 {
    std::thread::available_parallelism()
        .map_or(1, |cores| cores.get().min(usize::from(u16::MAX)) as u16)
}

#[derive(Args)]
#[command(next_help_heading = "Selection")]
struct SelectArgs {
    /// Only connections to or from this address.
    #[arg(long, value_name = "IP")]
    host: Vec<IpAddr>,
    /// Only connections with this port at either end.
    #[arg(long)]
    port: Vec<u16>,
    /// Only connections with an end in this network, such as 10.1.0.0/16.
    #[arg(long, value_name = "CIDR")]
    net: Vec<Network>,
    /// Only these connections (ids from `tcpwhy connections`); comma-separated or repeated.
    #[arg(long, value_name = "ID", value_delimiter = ',')]
    connection: Vec<u64>,
    /// Only the packets from T1 to T2 (14:03:07.25 UTC, +90s from the start, or @EPOCH).
    #[arg(long, num_args = 2, value_names = ["T1", "T2"], value_parser = units::instant)]
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

/// How a command that prints rows writes them.
#[derive(Args)]
struct TableStyle {
    #[command(flatten)]
    format: RowsFormat,
    /// Instants as seconds since the epoch, not the time of day (UTC), in
    /// the text tables (JSON and CSV give nanoseconds since the epoch).
    #[arg(long)]
    epoch: bool,
}

#[derive(Args)]
struct RowsFormat {
    /// Output format.
    #[arg(
        long = "format",
        value_enum,
        default_value = "table",
        value_name = "FORMAT"
    )]
    value: RowsFormatArg,
    /// When to color the text: auto colors it when stdout is a terminal and
    /// NO_COLOR is not set.
    #[arg(long, value_enum, default_value = "auto", value_name = "WHEN")]
    color: ColorArg,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum RowsFormatArg {
    Table,
    Json,
    Csv,
}

impl From<RowsFormatArg> for Format {
    fn from(format: RowsFormatArg) -> Self {
        match format {
            RowsFormatArg::Table => Format::Table,
            RowsFormatArg::Json => Format::Json,
            RowsFormatArg::Csv => Format::Csv,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Why it is slow: ranked findings with cost, evidence, fix and what-if
    /// (what `tcpwhy FILE` runs).
    Diagnose(DiagnoseArgs),
    /// One row per TCP connection: handshake, state, and per-direction counters.
    Connections(RowsArgs),
    /// One connection: its handshake, where its time went, its events and
    /// its first packets as a ladder.
    Connection(ConnectionArgs),
    /// Every analysis event (retransmission, duplicate_ack, zero_window, ...) with its frame.
    Events(RowsArgs),
    /// Request/response transactions with server and client think time, and
    /// duration statistics per transaction signature.
    Transactions(RowsArgs),
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
    /// A completion script for the shell, on stdout: `tcpwhy completions bash
    /// > /etc/bash_completion.d/tcpwhy`.
    Completions(CompletionsArgs),
    /// A manual page, in roff, on stdout: `tcpwhy man > tcpwhy.1; man -l tcpwhy.1`,
    /// or one command's: `tcpwhy man diagnose > tcpwhy-diagnose.1`.
    Man(ManArgs),
}

#[derive(Args)]
struct ManArgs {
    /// The command whose page to write; the page of tcpwhy itself when absent.
    #[arg(value_name = "COMMAND")]
    command: Option<String>,
}

impl Command {
    /// How the command writes rows, if it writes any.
    fn rows_format(&self) -> Option<&RowsFormat> {
        match self {
            Command::Diagnose(args) => Some(&args.format),
            Command::Connections(args) | Command::Events(args) | Command::Transactions(args) => {
                Some(&args.style.format)
            }
            Command::Connection(args) => Some(&args.style.format),
            Command::Timeline(args) => Some(&args.rows.style.format),
            _ => None,
        }
    }
}

#[derive(Args)]
struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

#[derive(Args)]
struct ExportArgs {
    /// The directory to write the tables into (created if needed).
    #[arg(long, short, value_name = "DIR")]
    output: std::path::PathBuf,
    /// The files' format.
    #[arg(long, value_enum, default_value = "parquet", value_name = "FORMAT")]
    format: FileFormatArg,
    #[command(flatten)]
    reading: Reading,
}

#[derive(Clone, Copy, ValueEnum)]
enum FileFormatArg {
    Parquet,
    Csv,
    Json,
}

#[derive(Args)]
struct FilesArg {
    /// pcap or pcapng files, plain, .gz or .zst; several are merged by time; - reads stdin.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
}

#[derive(Args)]
struct RowsArgs {
    #[command(flatten)]
    style: TableStyle,
    #[command(flatten)]
    fields: FieldsArg,
    #[command(flatten)]
    reading: Reading,
}

#[derive(Args)]
struct FieldsArg {
    /// Only these fields in CSV and JSON, in this order: the CSV header's
    /// dotted names (client_to_server.retransmissions.total), or the path a
    /// group of them shares (client_to_server); comma-separated or repeated.
    #[arg(long, value_name = "FIELD", value_delimiter = ',')]
    fields: Vec<String>,
}

impl FieldsArg {
    /// The fields chosen of a table of `schema`, written as `format`; none
    /// without a choice, or why the choice cannot be made.
    fn chosen(&self, schema: &[FieldRef], format: Format) -> Result<Option<Chosen>, String> {
        if self.fields.is_empty() {
            return Ok(None);
        }
        if format == Format::Table {
            return Err(
                "--fields chooses the fields of CSV and JSON; add --format csv or json".into(),
            );
        }
        Chosen::of(schema, &self.fields).map(Some)
    }
}

#[derive(Args)]
struct DiagnoseArgs {
    #[command(flatten)]
    format: RowsFormat,
    #[command(flatten)]
    fields: FieldsArg,
    #[command(flatten)]
    fail_on: FailOnArg,
    #[command(flatten)]
    reading: Reading,
}

#[derive(Args)]
struct ConnectionArgs {
    /// The connection's id, as `tcpwhy connections` and the findings give it.
    id: u64,
    #[command(flatten)]
    style: TableStyle,
    /// Packets shown in the ladder, from the connection's first.
    #[arg(long, default_value_t = 50, value_name = "COUNT")]
    packets: usize,
    #[command(flatten)]
    reading: Reading,
}

#[derive(Args)]
struct TimelineArgs {
    /// Tick size with its unit, such as 100ms, 1s or 1m; chosen from the capture's length when absent.
    #[arg(long, value_parser = units::duration_ns, value_name = "DURATION")]
    tick: Option<i64>,
    #[command(flatten)]
    rows: RowsArgs,
}

#[derive(Args)]
struct ReportArgs {
    /// The HTML file to write (replaced atomically; never one of the inputs).
    #[arg(long, short, value_name = "REPORT.html")]
    output: std::path::PathBuf,
    /// Also give this connection packet detail; repeatable.
    #[arg(long, value_name = "ID")]
    detail: Vec<u64>,
    #[command(flatten)]
    fail_on: FailOnArg,
    #[command(flatten)]
    reading: Reading,
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

const EXIT_FINDING: u8 = 1;
const EXIT_BAD_INPUT: u8 = 2;
const EXIT_PARTIAL: u8 = 3;
/// Stdout is line-buffered; results are written in larger pieces.
const OUTPUT_BUFFER: usize = 1 << 16;

pub fn run() -> ExitCode {
    let args = match command_line::arguments(std::env::args_os().collect(), &definition()) {
        Ok(args) => args,
        Err(message) => return refused(&message),
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
    if let Some(format) = cli.command.rows_format() {
        output::table::choose_color(format.color.into());
    }
    // Comparing two captures cannot stop part way: a signal ends it at once.
    let stops_part_way = !matches!(cli.command, Command::Compare(_) | Command::Diff(_));
    signals::install(stops_part_way);
    let outcome = match &cli.command {
        Command::Diagnose(args) => diagnose(args),
        Command::Connections(args) => {
            // What limits each bulk flow is read from the ledgers the transactions build.
            let stages = Stages {
                transactions: true,
                ..Stages::default()
            };
            tabulate(args, &schema::connections(), stages, output::connections)
        }
        Command::Connection(args) => one_connection(args),
        Command::Events(args) => events(args),
        Command::Transactions(args) => {
            let stages = Stages {
                transactions: true,
                ..Stages::default()
            };
            tabulate(args, &schema::transactions(), stages, output::transactions)
        }
        Command::Timeline(args) => {
            let stages = Stages {
                timeline: Some(args.tick),
                ..Stages::default()
            };
            tabulate(&args.rows, &schema::timeline(), stages, output::timeline)
        }
        Command::Report(args) => html_report(args),
        Command::Compare(args) => two_captures::compare(args),
        Command::Diff(args) => two_captures::diff(args),
        Command::Export(args) => Ok(export(args)),
        Command::Completions(args) => completions(args.shell),
        Command::Man(args) => manual(args.command.as_deref()),
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

/// Writes the shell's completion script for every command and flag.
fn completions(shell: clap_complete::Shell) -> io::Result<ExitCode> {
    let mut out = io::stdout().lock();
    clap_complete::generate(shell, &mut definition(), "tcpwhy", &mut out);
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Writes the manual page of tcpwhy, or of one of its commands.
fn manual(command: Option<&str>) -> io::Result<ExitCode> {
    let tcpwhy = definition();
    let page = match command {
        None => tcpwhy,
        Some(name) => match tcpwhy.find_subcommand(name) {
            Some(sub) => sub
                .clone()
                .name(format!("tcpwhy-{name}"))
                .version(env!("CARGO_PKG_VERSION")),
            None => return Ok(refused(&format!("{name:?} is not a command of tcpwhy"))),
        },
    };
    let mut out = io::stdout().lock();
    clap_mangen::Man::new(page).render(&mut out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

impl Reading {
    fn files(&self) -> &[String] {
        &self.input.files
    }

    fn progress(&self) -> Progress {
        let total = self
            .files()
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
            shards: usize::from(self.threads),
            ..stages
        }
    }
}

impl RowsFormat {
    fn style(&self) -> Style {
        Style {
            format: self.value.into(),
            epoch: false,
            width: text::terminal_width(),
            chosen: None,
        }
    }
}

impl TableStyle {
    /// The style asked for, or why the flags do not go together.
    fn style(&self) -> Result<Style, String> {
        if self.epoch && self.format.value != RowsFormatArg::Table {
            return Err(
                "--epoch changes the text tables; JSON and CSV give instants in nanoseconds \
                 since the epoch"
                    .into(),
            );
        }
        Ok(Style {
            epoch: self.epoch,
            ..self.format.style()
        })
    }
}

impl RowsArgs {
    /// The style asked for, for a table of `schema`, or why the flags do not go together.
    fn style(&self, schema: &[FieldRef]) -> Result<Style, String> {
        let style = self.style.style()?;
        let chosen = self.fields.chosen(schema, style.format)?;
        Ok(Style { chosen, ..style })
    }
}

/// Runs the pipeline and writes its results with `write`, a table of `schema`.
fn tabulate(
    args: &RowsArgs,
    schema: &[FieldRef],
    stages: Stages,
    write: output::Writer,
) -> io::Result<ExitCode> {
    let style = match args.style(schema) {
        Ok(style) => style,
        Err(message) => return Ok(refused(&message)),
    };
    tabulate_then(&args.reading, style, stages, write, |_| false)
}

/// [`tabulate`], exiting 1 when `reached` says the findings cross `--fail-on`.
fn tabulate_then(
    reading: &Reading,
    style: Style,
    stages: Stages,
    write: output::Writer,
    reached: impl FnOnce(&Analysis) -> bool,
) -> io::Result<ExitCode> {
    let progress = reading.progress();
    let stages = reading.selecting(stages);
    let analysis = match pipeline::analyze(reading.files(), stages, progress, |_| {}) {
        Ok(analysis) => analysis,
        Err(error) => return Ok(bad_input(&error)),
    };
    if let Some(tick_ns) = analysis.tick_too_fine {
        return Ok(refused(&format!(
            "--tick is too fine for this capture: it would need more than {} ticks; \
             the smallest tick that fits is {}",
            timeline::MAX_BINS,
            units::duration_text(tick_ns)
        )));
    }
    let mut out = io::BufWriter::with_capacity(OUTPUT_BUFFER, io::stdout().lock());
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

fn diagnose(args: &DiagnoseArgs) -> io::Result<ExitCode> {
    let stages = Stages {
        diagnose: true,
        ..Stages::default()
    };
    let style = args.format.style();
    let style = match args.fields.chosen(&schema::findings(), style.format) {
        Ok(chosen) => Style { chosen, ..style },
        Err(message) => return Ok(refused(&message)),
    };
    tabulate_then(&args.reading, style, stages, output::findings, |analysis| {
        args.fail_on.reached(&analysis.findings)
    })
}

fn one_connection(args: &ConnectionArgs) -> io::Result<ExitCode> {
    let style = match args.style.style() {
        Ok(style) => style,
        Err(message) => return Ok(refused(&message)),
    };
    let reading = &args.reading;
    let files = reading.files();
    let stages = reading.selecting(Stages::default());
    let progress = reading.progress();
    let gathered = match connection::gather(files, args.id, args.packets, stages, progress) {
        Ok(gathered) => gathered,
        Err(error) => return Ok(bad_input(&error)),
    };
    let analysis = &gathered.analysis;
    let Some(found) = analysis.connections.iter().find(|c| c.id == args.id) else {
        let selected = if reading.select.selection() == Selection::default() {
            ""
        } else {
            " among the selected traffic"
        };
        return Ok(refused(&format!(
            "connection {} is not in {}{selected}; `tcpwhy connections` lists the ids",
            args.id,
            files.join(", ")
        )));
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
    output::connection::write(&mut out, &style, &one)?;
    out.flush()?;
    Ok(exit_code(analysis, false))
}

fn events(args: &RowsArgs) -> io::Result<ExitCode> {
    let style = match args.style(&schema::events()) {
        Ok(style) => style,
        Err(message) => return Ok(refused(&message)),
    };
    let reading = &args.reading;
    let mut out = io::BufWriter::with_capacity(OUTPUT_BUFFER, io::stdout().lock());
    // Live input: each event goes out as it is decided.
    let streamed = reading.files().iter().any(|file| file == "-");
    let format = style.format;
    let writer = std::cell::RefCell::new(output::EventWriter::new(style, streamed));
    let mut write_error = None;
    let result = pipeline::analyze_observed(
        reading.files(),
        reading.selecting(Stages::default()),
        reading.progress(),
        |event| {
            if write_error.is_none() {
                write_error = writer.borrow_mut().write(&mut out, event).err();
            }
            if streamed && write_error.is_none() {
                write_error = out.flush().err();
            }
        },
        |view, read| {
            let start = read.first_frame_ns.unwrap_or(view.timestamp_ns);
            writer.borrow_mut().starts_at(start)
        },
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
    if format == Format::Csv {
        print_notes(&analysis);
    }
    Ok(exit_code(&analysis, false))
}

fn html_report(args: &ReportArgs) -> io::Result<ExitCode> {
    let reading = &args.reading;
    let files = reading.files();
    let progress = || reading.progress();
    let stages = reading.selecting(Stages::default());
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
            Err(html::Failure::Output(message)) => refused(&message),
            Err(html::Failure::Interrupted(message)) => {
                eprintln!("tcpwhy: {message}");
                ExitCode::from(EXIT_INTERRUPTED)
            }
        },
    )
}

fn export(args: &ExportArgs) -> ExitCode {
    let format = match args.format {
        FileFormatArg::Parquet => columns::files::Format::Parquet,
        FileFormatArg::Csv => columns::files::Format::Csv,
        FileFormatArg::Json => columns::files::Format::Json,
    };
    let reading = &args.reading;
    let stages = reading.selecting(Stages::default());
    let progress = reading.progress();
    match crate::export::tables(reading.files(), &args.output, format, stages, progress) {
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

/// One line on stderr for a request that cannot be carried out, and exit 2.
fn refused(message: &str) -> ExitCode {
    eprintln!("tcpwhy: {message}");
    ExitCode::from(EXIT_BAD_INPUT)
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
