//! `tcpwhy connection ID`: one connection in the terminal. Its handshake,
//! where its time went, its figures each way, its analysis events and a
//! ladder of its first packets, all from what the `tcp` stage made of them.

use std::io::{self, Write};

use decode::Flags;
use serde::Serialize;
use tcp::{ConnectionSummary, Direction, DirectionSummary, Event, SegmentView, SynOptions};
use transactions::Transaction;

use super::table::{self, paint};
use super::text::{duration_ms, fixed, paragraph, plural, Clock, Columns};
use super::{json, Format, Style};
use pipeline::Analysis;

/// Width of the ladder's arrow column, flags included.
const ARROW_WIDTH: usize = 26;
/// A pause between packets this long, or four round trips if longer, is
/// marked in the ladder as idle.
const IDLE_MS: f64 = 200.0;

/// What was gathered of one connection in a pass.
pub struct OneConnection<'a> {
    pub analysis: &'a Analysis,
    pub connection: &'a ConnectionSummary,
    /// Its first packets, in order.
    pub packets: &'a [SegmentView],
    pub packets_seen: u64,
    /// Its analysis events, the first of them.
    pub events: &'a [Event],
    pub events_seen: u64,
}

pub fn write(out: &mut dyn Write, style: &Style, one: &OneConnection) -> io::Result<()> {
    match style.format {
        Format::Table => write_table(out, style, one),
        Format::Json => write_json(out, one),
        Format::Csv => write_csv(out, one),
    }
}

fn write_table(mut out: &mut dyn Write, style: &Style, one: &OneConnection) -> io::Result<()> {
    let clock = style.clock(one.analysis);
    let c = one.connection;
    heading(out, &clock, c)?;
    handshake(out, &clock, c)?;
    time_split(out, style, &connection_transactions(one))?;
    directions(out, c)?;
    events(out, &clock, one)?;
    ladder(out, &clock, one)?;
    writeln!(out)?;
    table::footer(&mut out, one.analysis, one.packets_seen, "packet")
}

fn connection_transactions<'a>(one: &OneConnection<'a>) -> Vec<&'a Transaction> {
    one.analysis
        .transactions
        .iter()
        .filter(|t| t.connection == one.connection.id)
        .collect()
}

fn heading(out: &mut dyn Write, clock: &Clock, c: &ConnectionSummary) -> io::Result<()> {
    let guessed = if c.roles_guessed {
        " (no SYN seen: roles guessed from the ports)"
    } else {
        ""
    };
    writeln!(
        out,
        "Connection {}: {} → {}{guessed}",
        c.id, c.client, c.server
    )?;
    let closed = match (c.close.by, c.close.frame) {
        (Some(by), Some(frame)) => format!("closed by the {by} ({}, frame {frame})", c.close.how),
        _ if c.close.how == tcp::CloseHow::Open => "still open at the end".to_string(),
        _ => format!("closed ({})", c.close.how),
    };
    writeln!(out, "  state {}, history {}, {closed}", c.state, c.history)?;
    writeln!(
        out,
        "  from {} (frame {}) to {} (frame {}): {}",
        clock.both(c.first_ns),
        c.first_frame,
        clock.both(c.last_ns),
        c.last_frame,
        duration_ms(c.duration_ms)
    )
}

fn options_text(options: &SynOptions) -> String {
    let mut parts = Vec::new();
    parts.push(
        options
            .mss
            .map_or("no MSS".to_string(), |mss| format!("MSS {mss}")),
    );
    parts.push(
        options
            .window_scale
            .map_or("no window scaling".to_string(), |scale| {
                format!("window scale {scale}")
            }),
    );
    parts.push(
        if options.sack_permitted {
            "SACK"
        } else {
            "no SACK"
        }
        .to_string(),
    );
    parts.push(
        if options.timestamps {
            "timestamps"
        } else {
            "no timestamps"
        }
        .to_string(),
    );
    parts.join(", ")
}

fn handshake(out: &mut dyn Write, clock: &Clock, c: &ConnectionSummary) -> io::Result<()> {
    writeln!(out, "\nHandshake")?;
    let h = &c.handshake;
    let Some(syn) = h.syn_ns else {
        return writeln!(
            out,
            "  not captured: the capture starts mid-connection; sequence numbers count from \
             the first segment seen each way"
        );
    };
    let mut steps = Columns::new(&["", "", ""], &[false, false, true]);
    steps.push(vec!["  SYN".into(), clock.both(syn), String::new()]);
    for retry in &h.syn_retries_ns {
        steps.push(vec![
            "  SYN again".into(),
            clock.both(*retry),
            after_the_syn(syn, *retry),
        ]);
    }
    let unlisted = h.syn_retries - h.syn_retries_ns.len() as u64;
    if unlisted > 0 {
        let times = format!("{unlisted} more times");
        steps.push(vec!["  SYN again".into(), times, String::new()]);
    }
    for (name, at) in [("  SYN-ACK", h.syn_ack_ns), ("  ACK", h.ack_ns)] {
        match at {
            Some(at) => steps.push(vec![name.into(), clock.both(at), after_the_syn(syn, at)]),
            None => steps.push(vec![name.into(), "not seen".into(), String::new()]),
        }
    }
    for line in steps.lines(|_, _, cell| cell).iter().skip(1) {
        writeln!(out, "{line}")?;
    }
    if let (Some(to_server), Some(to_client)) = (h.rtt_to_server_ms, h.rtt_to_client_ms) {
        writeln!(
            out,
            "  round trip from the capture point: {} to the server, {} to the client",
            duration_ms(to_server),
            duration_ms(to_client)
        )?;
    }
    for (side, options) in [("client", &h.client_options), ("server", &h.server_options)] {
        if let Some(options) = options {
            writeln!(out, "  {side} offers {}", options_text(options))?;
        }
    }
    if h.syn_ack_retries > 0 {
        writeln!(
            out,
            "  the server sent its SYN-ACK {} again",
            plural(h.syn_ack_retries, "time")
        )?;
    }
    Ok(())
}

/// Where the connection's transaction time went: its time ledger, part by part.
fn time_split(out: &mut dyn Write, style: &Style, transactions: &[&Transaction]) -> io::Result<()> {
    writeln!(
        out,
        "\nWhere the time went ({})",
        plural(transactions.len() as u64, "transaction")
    )?;
    if transactions.is_empty() {
        return writeln!(out, "  no transaction: no payload was exchanged");
    }
    let mut sum = transactions::Ledger::default();
    for t in transactions {
        sum.add(&t.ledger);
    }
    let total = sum.total_ms().max(f64::MIN_POSITIVE);
    let parts: Vec<String> = sum
        .parts()
        .map(|(part, ms)| {
            format!(
                "{} {} ({}%)",
                part.as_str().replace('_', " "),
                duration_ms(ms),
                fixed(100.0 * ms / total, 0)
            )
        })
        .collect();
    writeln!(
        out,
        "{}",
        paragraph("  ", &parts.join(", "), 2, style.width)
    )?;
    for t in transactions.iter().filter(|t| t.failure.is_some()) {
        let failure = t.failure.map(|f| f.describe()).unwrap_or_default();
        let line = format!(
            "  transaction {} failed: {failure} (frame {})",
            t.index,
            t.failure.map_or(0, |f| f.frame)
        );
        writeln!(out, "{}", paint(&line, table::RED))?;
    }
    Ok(())
}

fn directions(out: &mut dyn Write, c: &ConnectionSummary) -> io::Result<()> {
    writeln!(out)?;
    type Row = (&'static str, fn(&DirectionSummary) -> String);
    let rows: [Row; 11] = [
        ("packets", |d| d.packets.to_string()),
        ("payload bytes", |d| d.payload_bytes.to_string()),
        ("retransmissions", |d| {
            let r = &d.retransmissions;
            format!("{} ({} timeout, {} fast)", r.total, r.timeout, r.fast)
        }),
        ("out of order", |d| d.out_of_order.to_string()),
        ("lost segments", |d| d.lost_segments.to_string()),
        ("duplicate ACKs", |d| d.duplicate_acks.to_string()),
        ("zero windows", |d| d.zero_windows.to_string()),
        ("window", |d| format!("{} – {}", d.window.min, d.window.max)),
        ("most in flight", |d| d.max_bytes_in_flight.to_string()),
        ("RTT median", |d| {
            d.rtt.median_ms.map_or("-".into(), duration_ms)
        }),
        ("longest idle", |d| duration_ms(d.max_idle_ms)),
    ];
    let mut table = Columns::new(
        &["", "client → server", "server → client"],
        &[false, true, true],
    );
    for (name, value) in rows {
        table.push(vec![
            format!("  {name}"),
            value(&c.client_to_server),
            value(&c.server_to_client),
        ]);
    }
    for line in table.lines(|_, _, cell| cell) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

fn events(out: &mut dyn Write, clock: &Clock, one: &OneConnection) -> io::Result<()> {
    writeln!(out, "\nEvents ({})", one.events_seen)?;
    if one.events.is_empty() {
        return writeln!(out, "  none");
    }
    let mut table = Columns::new(
        &[
            "  frame",
            clock.heading(),
            "direction",
            "kind",
            "seq",
            "ack",
            "len",
            "window",
        ],
        &[true, false, false, false, true, true, true, true],
    );
    for e in one.events {
        table.push(vec![
            format!("  {}", e.frame),
            clock.both(e.timestamp_ns),
            e.direction.as_str().into(),
            e.kind.as_str().into(),
            e.seq.to_string(),
            e.ack.to_string(),
            e.len.to_string(),
            e.window.to_string(),
        ]);
    }
    for line in table.lines(|_, _, cell| cell) {
        writeln!(out, "{line}")?;
    }
    if one.events_seen > one.events.len() as u64 {
        writeln!(
            out,
            "  … the first {} of {}: tcpwhy events --connection {} shows them all",
            one.events.len(),
            one.events_seen,
            one.connection.id
        )?;
    }
    Ok(())
}

/// `SYN ACK`, `PSH ACK`, `FIN ACK`, `RST`.
pub fn flags_text(flags: Flags) -> String {
    let names = [
        (Flags::SYN, "SYN"),
        (Flags::FIN, "FIN"),
        (Flags::RST, "RST"),
        (Flags::PSH, "PSH"),
        (Flags::ACK, "ACK"),
        (Flags::URG, "URG"),
        (Flags::ECE, "ECE"),
        (Flags::CWR, "CWR"),
    ];
    let set: Vec<&str> = names
        .iter()
        .filter(|(bit, _)| flags.has(*bit))
        .map(|(_, name)| *name)
        .collect();
    set.join(" ")
}

/// An arrow across the capture point with the flags at the sender's end:
/// `SYN ─────────>` from the client, `<───────── SYN ACK` from the server.
fn arrow(view: &SegmentView) -> String {
    let flags = flags_text(view.flags);
    let line = "─".repeat(ARROW_WIDTH.saturating_sub(flags.chars().count() + 2).max(2));
    match view.direction {
        Direction::ClientToServer => format!("{flags} {line}>"),
        Direction::ServerToClient => format!("<{line} {flags}"),
    }
}

fn analysis_text(view: &SegmentView) -> String {
    let kinds: Vec<&str> = view.events.kinds().map(|kind| kind.as_str()).collect();
    kinds.join(", ")
}

fn ladder(out: &mut dyn Write, clock: &Clock, one: &OneConnection) -> io::Result<()> {
    let shown = one.packets.len() as u64;
    let which = if shown < one.packets_seen {
        format!("the first {shown} of {}", one.packets_seen)
    } else {
        plural(shown, "packet")
    };
    writeln!(
        out,
        "\nPackets ({which}): client on the left, server on the right; seq and ack relative"
    )?;
    let idle_ms = IDLE_MS.max(4.0 * one.connection.rtt().round_trip_ms());
    let mut table = Columns::new(
        &[
            "  frame",
            clock.heading(),
            "client             server",
            "seq",
            "ack",
            "len",
            "window",
            "in flight",
            "analysis",
        ],
        &[true, false, false, true, true, true, true, true, false],
    );
    let mut idle_before = Vec::new();
    let mut previous_ns: Option<i64> = None;
    for view in one.packets {
        let gap_ms = previous_ns.map_or(0.0, |at| (view.timestamp_ns - at) as f64 / 1e6);
        idle_before.push((gap_ms >= idle_ms).then_some(gap_ms));
        previous_ns = Some(view.timestamp_ns);
        table.push(vec![
            format!("  {}", view.frame),
            clock.both(view.timestamp_ns),
            arrow(view),
            view.seq.to_string(),
            view.ack.to_string(),
            view.len.to_string(),
            view.window.to_string(),
            view.in_flight.map_or("-".into(), |bytes| bytes.to_string()),
            analysis_text(view),
        ]);
    }
    let lines = table.lines(|_, column, cell| match column {
        8 if !cell.trim().is_empty() => paint(&cell, table::RED),
        _ => cell,
    });
    writeln!(out, "{}", lines[0])?;
    for (line, idle) in lines[1..].iter().zip(idle_before) {
        if let Some(gap_ms) = idle {
            writeln!(out, "        ⋮  {} idle", duration_ms(gap_ms))?;
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// One packet as a JSON line.
#[derive(Serialize)]
struct PacketLine {
    frame: u64,
    timestamp_ns: i64,
    connection: u64,
    direction: Direction,
    seq: u32,
    ack: u32,
    len: u32,
    flags: String,
    window: u64,
    in_flight: Option<u64>,
    analysis: Vec<&'static str>,
    rtt_sample_ms: Option<f64>,
}

impl PacketLine {
    fn of(view: &SegmentView) -> Self {
        PacketLine {
            frame: view.frame,
            timestamp_ns: view.timestamp_ns,
            connection: view.connection,
            direction: view.direction,
            seq: view.seq,
            ack: view.ack,
            len: view.len,
            flags: flags_text(view.flags),
            window: view.window,
            in_flight: view.in_flight,
            analysis: view.events.kinds().map(|kind| kind.as_str()).collect(),
            rtt_sample_ms: view.rtt_sample_ns.map(|ns| ns as f64 / 1e6),
        }
    }
}

fn write_json(out: &mut dyn Write, one: &OneConnection) -> io::Result<()> {
    json::connection_lines(
        out,
        std::slice::from_ref(one.connection),
        &one.analysis.rate_limits,
        None,
    )?;
    let transactions: Vec<Transaction> =
        connection_transactions(one).into_iter().cloned().collect();
    json::transaction_lines(out, &transactions, None)?;
    json::event_lines(out, one.events, None)?;
    for view in one.packets {
        json::line(out, "packet", &PacketLine::of(view))?;
    }
    json::end(out, one.analysis)
}

fn write_csv(out: &mut dyn Write, one: &OneConnection) -> io::Result<()> {
    writeln!(
        out,
        "frame,timestamp_ns,direction,seq,ack,len,flags,window,in_flight,analysis"
    )?;
    for view in one.packets {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{}",
            view.frame,
            view.timestamp_ns,
            view.direction.as_str(),
            view.seq,
            view.ack,
            view.len,
            flags_text(view.flags),
            view.window,
            view.in_flight
                .map(|bytes| bytes.to_string())
                .unwrap_or_default(),
            analysis_text(view).replace(", ", " ")
        )?;
    }
    Ok(())
}

/// How long after the SYN a step came; none across a step back of the clock.
fn after_the_syn(syn_ns: i64, at_ns: i64) -> String {
    match decode::elapsed_ms(syn_ns, at_ns) {
        Some(ms) => format!("{} after the SYN", duration_ms(ms)),
        None => "before the SYN: the clock stepped back".into(),
    }
}
