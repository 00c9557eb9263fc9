//! Aligned columns for a terminal, colored only when stdout is one.

use std::io::{self, IsTerminal, Write};

use tcp::{ConnectionSummary, DirectionSummary, Event};

use pipeline::Analysis;

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

fn colored() -> bool {
    // NO_COLOR counts only when set to something (no-color.org).
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    std::io::stdout().is_terminal() && !no_color
}

fn paint(text: &str, color: &str) -> String {
    if colored() {
        format!("{color}{text}{RESET}")
    } else {
        text.to_string()
    }
}

fn state_color(state: &str) -> &'static str {
    match state {
        "SF" | "S1" => GREEN,
        "S0" | "REJ" | "RSTOS0" | "SH" => RED,
        _ => YELLOW,
    }
}

pub fn connections(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    writeln!(
        out,
        "{:>5}  {:<45} {:<6} {:<12} {:>10} {:>13} {:>15} {:>9} {:>9} {:>9}",
        "id",
        "client → server",
        "state",
        "history",
        "duration",
        "packets c/s",
        "payload c/s",
        "retrans",
        "dup acks",
        "rtt ms"
    )?;
    for connection in &analysis.connections {
        connection_row(out, connection)?;
    }
    footer(
        out,
        analysis,
        analysis.connections.len() as u64,
        "connections",
    )
}

fn connection_row(out: &mut impl Write, c: &ConnectionSummary) -> io::Result<()> {
    let (c2s, s2c) = (&c.client_to_server, &c.server_to_client);
    let both = |pick: fn(&DirectionSummary) -> u64| format!("{}/{}", pick(c2s), pick(s2c));
    let rtt = [c2s.rtt.median_ms, s2c.rtt.median_ms]
        .into_iter()
        .flatten()
        .fold(None, |best: Option<f64>, v| {
            Some(best.map_or(v, |b| b.min(v)))
        });
    let endpoints = format!(
        "{} → {}{}",
        c.client,
        c.server,
        if c.roles_guessed { " ?" } else { "" }
    );
    let retransmissions = both(|d| d.retransmissions.total);
    writeln!(
        out,
        "{:>5}  {:<45} {} {:<12} {:>9.3}s {:>13} {:>15} {:>9} {:>9} {:>9}",
        c.id,
        endpoints,
        paint(&format!("{:<6}", c.state), state_color(c.state.as_str())),
        c.history,
        c.duration_ms / 1e3,
        both(|d| d.packets),
        both(|d| d.payload_bytes),
        if retransmissions == "0/0" {
            retransmissions
        } else {
            paint(&retransmissions, RED)
        },
        both(|d| d.duplicate_acks),
        rtt.map(|ms| format!("{ms:.2}"))
            .unwrap_or_else(|| "-".into()),
    )
}

/// Transactions listed in the table; the rest are in `--format csv` or `json`.
const SLOWEST_SHOWN: usize = 20;

pub fn transactions(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    writeln!(
        out,
        "{:<28} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "signature", "count", "min ms", "mean ms", "p50 ms", "p90 ms", "max ms"
    )?;
    for s in transactions::by_signature(&analysis.transactions) {
        durations_row(out, &s.signature, &s.durations)?;
    }
    let names = transactions::by_name(&analysis.transactions);
    if !names.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "{:>8} {:>10} {:>10} {:>10} {:>10} {:>10}  name",
            "count", "min ms", "mean ms", "p50 ms", "p90 ms", "max ms"
        )?;
        for s in names.iter().take(SLOWEST_SHOWN) {
            let d = &s.durations;
            writeln!(
                out,
                "{:>8} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2}  {}",
                d.count, d.min_ms, d.mean_ms, d.p50_ms, d.p90_ms, d.max_ms, s.name
            )?;
        }
    }
    let mut slowest: Vec<_> = analysis.transactions.iter().collect();
    slowest.sort_by(|a, b| b.duration_ms.total_cmp(&a.duration_ms));
    slowest.truncate(SLOWEST_SHOWN);
    writeln!(out)?;
    writeln!(
        out,
        "{:>6} {:>4}  {:<28} {:>11} {:>12} {:>12} {:>12} {:>8}  name",
        "conn",
        "#",
        "slowest transactions",
        "duration ms",
        "request ms",
        "server ms",
        "response ms",
        "retrans"
    )?;
    let shown = |value: Option<f64>| value.map_or("-".to_string(), |v| format!("{v:.2}"));
    for t in slowest {
        writeln!(
            out,
            "{:>6} {:>4}  {:<28} {:>11.2} {:>12.2} {:>12} {:>12} {:>8}  {}",
            t.connection,
            t.index,
            t.signature,
            t.duration_ms,
            t.request_transfer_ms,
            shown(t.server_think_ms),
            shown(t.response_transfer_ms),
            t.retransmissions,
            t.name.as_deref().unwrap_or("")
        )?;
    }
    where_the_time_goes(out, &analysis.transactions)?;
    footer(
        out,
        analysis,
        analysis.transactions.len() as u64,
        "transactions",
    )
}

/// One line: all transaction time by where it went.
fn where_the_time_goes(
    out: &mut impl Write,
    transactions: &[transactions::Transaction],
) -> io::Result<()> {
    let mut sum = transactions::Latency::default();
    for t in transactions {
        sum.add(&t.latency);
    }
    let total = sum.total_ms().max(f64::MIN_POSITIVE);
    let parts: Vec<String> = sum
        .parts()
        .iter()
        .map(|(part, ms)| format!("{part} {ms:.1} ms ({:.0}%)", 100.0 * ms / total))
        .collect();
    writeln!(out, "\nwhere the time goes: {}", parts.join(", "))
}

fn durations_row(
    out: &mut impl Write,
    signature: &str,
    d: &transactions::Durations,
) -> io::Result<()> {
    writeln!(
        out,
        "{signature:<28} {:>8} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2}",
        d.count, d.min_ms, d.mean_ms, d.p50_ms, d.p90_ms, d.max_ms
    )
}

fn severity_color(severity: diagnose::Severity) -> &'static str {
    match severity {
        diagnose::Severity::Critical => RED,
        diagnose::Severity::Warning => YELLOW,
        diagnose::Severity::Info => DIM,
    }
}

pub fn findings(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    if analysis.findings.is_empty() {
        writeln!(out, "{}", paint("No finding.", GREEN))?;
    }
    for (rank, f) in analysis.findings.iter().enumerate() {
        let label = paint(
            &format!("[{}]", f.severity.as_str()),
            severity_color(f.severity),
        );
        writeln!(out, "{}. {label} {}", rank + 1, f.title)?;
        writeln!(
            out,
            "   cost {:.3} s ({:.0}% of the time at stake), {} connections, {} transactions",
            f.cost_ms / 1e3,
            100.0 * f.share,
            f.connections,
            f.transactions
        )?;
        let frames: Vec<String> = f.frames.iter().map(u64::to_string).collect();
        let example = f
            .example_connection
            .map_or(String::new(), |c| format!("connection {c}; "));
        let frames = if frames.is_empty() {
            String::new()
        } else {
            format!("frames {}; ", frames.join(", "))
        };
        writeln!(
            out,
            "   evidence: {example}{frames}Wireshark: {}",
            f.wireshark_filter
        )?;
        if let Some(why) = &f.suspected {
            writeln!(out, "   suspected: {why}")?;
        }
        writeln!(out, "   why: {}", f.explanation)?;
        writeln!(out, "   fix: {}", f.fix)?;
        writeln!(out, "   what-if: {}", f.what_if)?;
        writeln!(out)?;
    }
    footer(out, analysis, analysis.findings.len() as u64, "findings")
}

pub fn timeline(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    writeln!(
        out,
        "{:>12} {:>9} {:>10} {:>8} {:>6} {:>8} {:>8} {:>6} {:>6} {:>8} {:>8} {:>6} {:>8}",
        "time s",
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
    let origin = analysis.ticks.first().map_or(0, |t| t.start_ns);
    for t in &analysis.ticks {
        writeln!(
            out,
            "{:>12.3} {:>9} {:>10.3} {:>8} {:>6} {:>8} {:>8} {:>6} {:>6} {:>8} {:>8} {:>6} {:>8}",
            (t.start_ns - origin) as f64 / 1e9,
            t.packets,
            t.throughput_bps / 1e6,
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
    footer(out, analysis, analysis.ticks.len() as u64, "ticks")
}

pub fn event(out: &mut impl Write, e: &Event, first: bool) -> io::Result<()> {
    if first {
        writeln!(
            out,
            "{:>8}  {:>14}  {:>6}  {:<17} {:<24} {:>10} {:>10} {:>6} {:>9}",
            "frame", "time", "conn", "direction", "kind", "seq", "ack", "len", "window"
        )?;
    }
    let seconds = e.timestamp_ns as f64 / 1e9;
    writeln!(
        out,
        "{:>8}  {:>14.6}  {:>6}  {:<17} {:<24} {:>10} {:>10} {:>6} {:>9}",
        e.frame,
        seconds,
        e.connection,
        e.direction.as_str(),
        e.kind.as_str(),
        e.seq,
        e.ack,
        e.len,
        e.window
    )
}

pub fn footer(out: &mut impl Write, analysis: &Analysis, rows: u64, what: &str) -> io::Result<()> {
    let counts = &analysis.counts;
    let line = format!(
        "{rows} {what}; {} frames, {} TCP segments",
        counts.frames, counts.tcp_segments
    );
    writeln!(out, "{}", paint(&line, DIM))?;
    if let Some(error) = &analysis.error {
        writeln!(
            out,
            "{}",
            paint(&format!("partial: the read stopped at {error}"), RED)
        )?;
    } else if analysis.interrupted {
        let line = format!(
            "partial: stopped by a signal after {} frames",
            counts.frames
        );
        writeln!(out, "{}", paint(&line, RED))?;
    }
    for note in analysis.notes() {
        writeln!(out, "{}", paint(&format!("note: {note}"), DIM))?;
    }
    Ok(())
}
