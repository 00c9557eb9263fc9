//! Aligned columns for a terminal, colored only when stdout is one. Instants
//! read as the time of day (UTC) and the offset from the capture's first
//! packet in every table; paragraphs wrap to the terminal's width.

use std::io::{self, IsTerminal, Write};
use std::sync::OnceLock;

use tcp::{ConnState, ConnectionSummary, DirectionSummary, Event};

use super::text::{duration_ms, fixed, paragraph, plural, Clock, Columns};
use super::Style;
use pipeline::{Analysis, Counts};

pub const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";
/// Under this share of the frames, TCP is little enough to say what else the capture holds.
const LITTLE_TCP: f64 = 0.1;

/// When the terminal output is colored.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ColorChoice {
    /// When stdout is a terminal and NO_COLOR is not set.
    Auto,
    Always,
    Never,
}

static COLORED: OnceLock<bool> = OnceLock::new();

/// Colors the output as `choice` says, from now on; the first choice holds.
pub fn choose_color(choice: ColorChoice) {
    let _ = COLORED.set(match choice {
        ColorChoice::Auto => colored_when_auto(),
        ColorChoice::Always => true,
        ColorChoice::Never => false,
    });
}

fn colored() -> bool {
    *COLORED.get_or_init(colored_when_auto)
}

fn colored_when_auto() -> bool {
    // NO_COLOR counts only when set to something (no-color.org).
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    std::io::stdout().is_terminal() && !no_color
}

pub fn paint(text: &str, color: &str) -> String {
    if colored() {
        format!("{color}{text}{RESET}")
    } else {
        text.to_string()
    }
}

fn state_color(state: ConnState) -> &'static str {
    match state {
        ConnState::SF | ConnState::S1 => GREEN,
        ConnState::S0 | ConnState::REJ | ConnState::RSTOS0 | ConnState::SH => RED,
        _ => YELLOW,
    }
}

/// `client → server`, with ` ?` when the roles were guessed.
fn endpoints(c: &ConnectionSummary) -> String {
    let guessed = if c.roles_guessed { " ?" } else { "" };
    format!("{} → {}{guessed}", c.client, c.server)
}

pub fn connections(out: &mut impl Write, analysis: &Analysis, style: &Style) -> io::Result<()> {
    let clock = style.clock(analysis);
    let width = |text: &dyn Fn(&ConnectionSummary) -> String, heading: &str| {
        analysis
            .connections
            .iter()
            .map(|c| text(c).chars().count())
            .chain([heading.chars().count()])
            .max()
            .unwrap_or(0)
    };
    let id_width = width(&|c| c.id.to_string(), "id");
    let endpoints_width = width(&endpoints, "client → server");
    let history_width = width(&|c| c.history.clone(), "history");
    let latest = analysis.connections.iter().map(|c| c.first_ns).max();
    let start_width = clock.width_until(latest.unwrap_or_default());
    writeln!(
        out,
        "{:>id_width$}  {:<start_width$}  {:<endpoints_width$}  {:<6}  {:<history_width$}  {:>9}  {:>13}  {:>15}  {:>9}  {:>9}  {:>9}",
        "id",
        format!("start: {}", clock.heading()),
        "client → server",
        "state",
        "history",
        "duration",
        "packets c/s",
        "payload c/s",
        "retrans",
        "dup acks",
        "path rtt"
    )?;
    for c in &analysis.connections {
        let (c2s, s2c) = (&c.client_to_server, &c.server_to_client);
        let both = |pick: fn(&DirectionSummary) -> u64| format!("{}/{}", pick(c2s), pick(s2c));
        let retransmissions = both(|d| d.retransmissions.total);
        let retransmissions = if retransmissions == "0/0" {
            retransmissions
        } else {
            paint(&format!("{retransmissions:>9}"), RED)
        };
        writeln!(
            out,
            "{:>id_width$}  {:<start_width$}  {:<endpoints_width$}  {}  {:<history_width$}  {:>9}  {:>13}  {:>15}  {:>9}  {:>9}  {:>9}",
            c.id,
            clock.both(c.first_ns),
            endpoints(c),
            paint(&format!("{:<6}", c.state.as_str()), state_color(c.state)),
            c.history,
            duration_ms(c.duration_ms),
            both(|d| d.packets),
            both(|d| d.payload_bytes),
            retransmissions,
            both(|d| d.duplicate_acks),
            c.rtt()
                .known_round_trip_ms()
                .map_or_else(|| "-".into(), duration_ms),
        )?;
    }
    footer(
        out,
        analysis,
        analysis.connections.len() as u64,
        "connection",
    )
}

/// Transactions listed in the table; the rest are in `--format csv` or `json`.
const SLOWEST_SHOWN: usize = 20;

fn durations_cells(d: &transactions::Durations) -> Vec<String> {
    let ms = |value: f64| fixed(value, 2);
    vec![
        d.count.to_string(),
        ms(d.min_ms),
        ms(d.mean_ms),
        ms(d.p50_ms),
        ms(d.p90_ms),
        ms(d.max_ms),
    ]
}

const DURATION_HEADINGS: [&str; 6] = ["count", "min ms", "mean ms", "p50 ms", "p90 ms", "max ms"];

fn write_lines(out: &mut impl Write, table: &Columns) -> io::Result<()> {
    for line in table.lines(|_, _, cell| cell) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

pub fn transactions(out: &mut impl Write, analysis: &Analysis, style: &Style) -> io::Result<()> {
    let clock = style.clock(analysis);
    let mut signatures = Columns::new(
        &[&["signature"][..], &DURATION_HEADINGS].concat(),
        &[false, true, true, true, true, true, true],
    );
    for s in transactions::by_signature(&analysis.transactions) {
        signatures.push([vec![s.signature.clone()], durations_cells(&s.durations)].concat());
    }
    write_lines(out, &signatures)?;
    let names = transactions::by_name(&analysis.transactions);
    if !names.is_empty() {
        let mut table = Columns::new(
            &[&DURATION_HEADINGS[..], &["name"]].concat(),
            &[true, true, true, true, true, true, false],
        );
        for s in names.iter().take(SLOWEST_SHOWN) {
            table.push([durations_cells(&s.durations), vec![s.name.clone()]].concat());
        }
        writeln!(out)?;
        write_lines(out, &table)?;
    }
    let mut slowest: Vec<_> = analysis.transactions.iter().collect();
    let duration = |t: &transactions::Transaction| t.duration_ms.unwrap_or(f64::NEG_INFINITY);
    slowest.sort_by(|a, b| duration(b).total_cmp(&duration(a)));
    slowest.truncate(SLOWEST_SHOWN);
    let mut table = Columns::new(
        &[
            "conn",
            "#",
            &format!("start: {}", clock.heading()),
            "slowest transactions",
            "duration ms",
            "request ms",
            "server ms",
            "response ms",
            "retrans",
            "name",
        ],
        &[
            true, true, false, false, true, true, true, true, true, false,
        ],
    );
    let shown = |value: Option<f64>| value.map_or("-".to_string(), |v| fixed(v, 2));
    for t in slowest {
        table.push(vec![
            t.connection.to_string(),
            t.index.to_string(),
            clock.both(t.request_start_ns),
            t.signature.clone(),
            shown(t.duration_ms),
            shown(t.request_transfer_ms),
            shown(t.server_think_ms),
            shown(t.response_transfer_ms),
            t.retransmissions.to_string(),
            t.name.clone().unwrap_or_default(),
        ]);
    }
    writeln!(out)?;
    write_lines(out, &table)?;
    where_the_time_goes(out, &analysis.transactions)?;
    failures(out, &analysis.transactions)?;
    footer(
        out,
        analysis,
        analysis.transactions.len() as u64,
        "transaction",
    )
}

/// One line: all transaction time by where it went.
fn where_the_time_goes(
    out: &mut impl Write,
    transactions: &[transactions::Transaction],
) -> io::Result<()> {
    if transactions.is_empty() {
        return Ok(());
    }
    let mut sum = transactions::Latency::default();
    for t in transactions {
        sum.add(&t.latency);
    }
    let total = sum.total_ms().max(f64::MIN_POSITIVE);
    let parts: Vec<String> = sum
        .parts()
        .iter()
        .map(|(part, ms)| {
            format!(
                "{} {} ({}%)",
                super::text::part_name(part),
                duration_ms(*ms),
                fixed(100.0 * ms / total, 0)
            )
        })
        .collect();
    writeln!(out, "\nwhere the time goes: {}", parts.join(", "))
}

/// One line when transactions failed: how many, and how.
fn failures(out: &mut impl Write, transactions: &[transactions::Transaction]) -> io::Result<()> {
    let mut kinds: Vec<(String, u64)> = Vec::new();
    for failure in transactions.iter().filter_map(|t| t.failure) {
        let what = failure.describe();
        match kinds.iter_mut().find(|(known, _)| *known == what) {
            Some((_, count)) => *count += 1,
            None => kinds.push((what, 1)),
        }
    }
    if kinds.is_empty() {
        return Ok(());
    }
    let failed: u64 = kinds.iter().map(|(_, count)| count).sum();
    let parts: Vec<String> = kinds
        .iter()
        .map(|(what, count)| format!("{what} on {count}"))
        .collect();
    let line = format!(
        "failed: {failed} of {}: {}",
        plural(transactions.len() as u64, "transaction"),
        parts.join(", ")
    );
    writeln!(out, "{}", paint(&line, RED))
}

fn severity_color(severity: diagnose::Severity) -> &'static str {
    match severity {
        diagnose::Severity::Critical => RED,
        diagnose::Severity::Warning => YELLOW,
        diagnose::Severity::Info => DIM,
    }
}

/// What a finding costs: its time and share, or, for a failure, how many failed.
fn cost_line(f: &diagnose::Finding) -> String {
    let touched = format!(
        "{}, {}",
        plural(f.connections, "connection"),
        plural(f.transactions, "transaction")
    );
    if f.is_failure() {
        format!("a failure, not slowness: {touched} failed")
    } else if fixed(f.cost_ms, 1) == "0.0" {
        format!("no time of its own; {touched}")
    } else {
        let share = if f.kind.is_own_pace() {
            "its own pace, not time anyone waited for".to_string()
        } else {
            format!("{}% of the time at stake", fixed(100.0 * f.share, 0))
        };
        format!(
            "cost {}{} ({share}){}, {touched}",
            duration_ms(f.cost_ms),
            by_the_clock(f),
            per_action(f)
        )
    }
}

/// ` summed, 1.03 s by the clock`: where waits ran at once, the time they
/// took together, once.
fn by_the_clock(f: &diagnose::Finding) -> String {
    match f.figures.get("wall_clock_ms") {
        Some(&wall) if duration_ms(wall) != duration_ms(f.cost_ms) => {
            format!(" summed, {} by the clock", duration_ms(wall))
        }
        _ => String::new(),
    }
}

/// `; 212 ms per action over 40 actions`: what a person waited each time;
/// `; 16 µs per action, 3.69 s at most, over 3 actions` when the costliest
/// action waited longer than the typical one.
fn per_action(f: &diagnose::Finding) -> String {
    let figure = |name| f.figures.get(name).copied();
    let (Some(typical), Some(actions)) = (figure("per_action_ms"), figure("actions")) else {
        return String::new();
    };
    if actions < 1.0 {
        return String::new();
    }
    let typical = duration_ms(typical);
    let at_most = match figure("worst_action_ms").map(duration_ms) {
        Some(worst) if worst != typical => format!(", {worst} at most,"),
        _ => String::new(),
    };
    format!(
        "; {typical} per action{at_most} over {}",
        plural(actions as u64, "action")
    )
}

pub fn findings(out: &mut impl Write, analysis: &Analysis, style: &Style) -> io::Result<()> {
    if analysis.findings.is_empty() {
        // Without TCP, a note under the table says so, and what there was.
        writeln!(out, "{}", paint("No finding.", GREEN))?;
    }
    let width = style.width;
    for (rank, f) in analysis.findings.iter().enumerate() {
        let label = format!("{}. [{}] ", rank + 1, f.severity.as_str());
        let indent = label.chars().count();
        let title = paragraph(&label, &f.title, indent, width);
        let colored_label = paint(
            &format!("[{}]", f.severity.as_str()),
            severity_color(f.severity),
        );
        writeln!(
            out,
            "{}",
            title.replacen(&format!("[{}]", f.severity.as_str()), &colored_label, 1)
        )?;
        writeln!(out, "{}", paragraph("   ", &cost_line(f), 3, width))?;
        let mut evidence = Vec::new();
        if let Some(c) = f.example_connection {
            evidence.push(format!("connection {c}"));
        }
        if !f.frames.is_empty() {
            let frames: Vec<String> = f.frames.iter().map(u64::to_string).collect();
            let noun = if frames.len() == 1 { "frame" } else { "frames" };
            evidence.push(format!("{noun} {}", frames.join(", ")));
        }
        // A filter is copied whole into Wireshark: it is never wrapped.
        let lines = [
            ("evidence: ", evidence.join("; "), width),
            ("Wireshark: ", f.wireshark_filter.clone(), None),
            (
                "suspected: ",
                f.suspected.clone().unwrap_or_default(),
                width,
            ),
            ("why: ", f.explanation.clone(), width),
            ("fix: ", f.fix.clone(), width),
            ("what-if: ", f.what_if.clone(), width),
        ];
        for (lead, text, width) in lines.iter().filter(|(_, text, _)| !text.is_empty()) {
            let lead = format!("   {lead}");
            let indent = lead.chars().count();
            writeln!(out, "{}", paragraph(&lead, text, indent, *width))?;
        }
        writeln!(out)?;
    }
    footer(out, analysis, analysis.findings.len() as u64, "finding")
}

pub fn timeline(out: &mut impl Write, analysis: &Analysis, style: &Style) -> io::Result<()> {
    let clock = style.clock(analysis);
    let latest = analysis.ticks.last().map(|t| t.start_ns);
    let time_width = clock.width_until(latest.unwrap_or_default());
    writeln!(
        out,
        "{:<time_width$} {:>9} {:>10} {:>8} {:>6} {:>8} {:>8} {:>6} {:>6} {:>8} {:>8} {:>6} {:>8}",
        clock.heading(),
        "packets",
        "Mbit/s",
        "retrans",
        "lost",
        "dup acks",
        "zero win",
        "conns",
        "failed",
        "tx start",
        "tx done",
        "open",
        "tx busy"
    )?;
    for t in &analysis.ticks {
        writeln!(
            out,
            "{:<time_width$} {:>9} {:>10} {:>8} {:>6} {:>8} {:>8} {:>6} {:>6} {:>8} {:>8} {:>6} {:>8}",
            clock.both(t.start_ns),
            t.packets,
            fixed(t.throughput_bps / 1e6, 3),
            t.retransmissions,
            t.lost_segments,
            t.duplicate_acks,
            t.zero_windows,
            t.new_connections,
            t.failed_connections,
            t.transactions_started,
            t.transactions_completed,
            t.connections_open,
            t.transactions_in_progress
        )?;
    }
    footer(out, analysis, analysis.ticks.len() as u64, "tick")
}

/// Room for offsets up to this many seconds before the events' time column widens.
const EVENT_OFFSET_ROOM_NS: i64 = 999_000_000_000;

pub fn event(out: &mut impl Write, e: &Event, first: bool, clock: &Clock) -> io::Result<()> {
    let time_width = clock.width_until(clock.start_ns() + EVENT_OFFSET_ROOM_NS);
    if first {
        writeln!(
            out,
            "{:>8}  {:<time_width$}  {:>6}  {:<17} {:<24} {:>10} {:>10} {:>6} {:>10}",
            "frame",
            clock.heading(),
            "conn",
            "direction",
            "kind",
            "seq",
            "ack",
            "len",
            "window"
        )?;
    }
    writeln!(
        out,
        "{:>8}  {:<time_width$}  {:>6}  {:<17} {:<24} {:>10} {:>10} {:>6} {:>10}",
        e.frame,
        clock.both(e.timestamp_ns),
        e.connection,
        e.direction.as_str(),
        e.kind.as_str(),
        e.seq,
        e.ack,
        e.len,
        e.window
    )
}

/// What a capture with little TCP holds besides; one without any says so
/// in its notes.
pub fn other_traffic_note(counts: &Counts) -> Option<String> {
    let other = &counts.other_traffic;
    let little = (counts.tcp_segments as f64) < LITTLE_TCP * counts.frames as f64;
    if counts.tcp_segments == 0 || !little {
        return None;
    }
    let parts = super::notes::other_traffic(other);
    let holds = if parts.is_empty() {
        String::new()
    } else {
        format!(" They hold {}.", parts.join(", "))
    };
    Some(format!(
        "Little TCP: {} of {}.{holds} tcpwhy diagnoses TCP.",
        plural(counts.tcp_segments, "TCP segment"),
        plural(counts.frames, "frame")
    ))
}

/// The count line under a table, the note on other traffic, and whether the read was partial.
pub fn footer(out: &mut impl Write, analysis: &Analysis, rows: u64, noun: &str) -> io::Result<()> {
    let counts = &analysis.counts;
    let mut line = format!(
        "{}; {}, {}",
        plural(rows, noun),
        plural(counts.frames, "frame"),
        plural(counts.tcp_segments, "TCP segment")
    );
    if counts.selected_segments != counts.tcp_segments {
        line += &format!(", {} selected", counts.selected_segments);
    }
    writeln!(out, "{}", paint(&line, DIM))?;
    if let Some(note) = other_traffic_note(counts) {
        writeln!(out, "{}", paint(&note, YELLOW))?;
    }
    if let Some(text) = super::partial_note(analysis) {
        writeln!(out, "{}", paint(&text, RED))?;
    }
    for note in super::notes::sentences(analysis) {
        writeln!(out, "{}", paint(&format!("note: {note}"), DIM))?;
    }
    Ok(())
}
