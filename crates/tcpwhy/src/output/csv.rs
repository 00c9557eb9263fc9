//! CSV: a header row, then one row per connection or event.

use std::io::{self, Write};

use tcp::{ConnectionSummary, DirectionSummary, Event};

use pipeline::Analysis;

const CONNECTION_COLUMNS: &str = "id,client,server,roles_guessed,state,history,close_by,close_how,\
first_frame,last_frame,first_ns,last_ns,duration_ms,syn_retries,rtt_to_server_ms,rtt_to_client_ms";

const DIRECTION_COLUMNS: [&str; 22] = [
    "packets",
    "wire_bytes",
    "payload_bytes",
    "unique_payload_bytes",
    "retransmissions",
    "retransmissions_timeout",
    "retransmissions_fast",
    "retransmissions_spurious",
    "out_of_order",
    "lost_segments",
    "ack_lost_segments",
    "duplicate_acks",
    "zero_windows",
    "zero_window_probes",
    "window_full",
    "window_min",
    "window_max",
    "max_bytes_in_flight",
    "rtt_samples",
    "rtt_min_ms",
    "rtt_median_ms",
    "rtt_max_ms",
];

const EVENT_COLUMNS: &str = "frame,timestamp_ns,connection,direction,kind,seq,ack,len,window,value";

pub fn connections(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    write!(out, "{CONNECTION_COLUMNS}")?;
    for prefix in ["c2s", "s2c"] {
        for column in DIRECTION_COLUMNS {
            write!(out, ",{prefix}_{column}")?;
        }
    }
    writeln!(out)?;
    for connection in &analysis.connections {
        connection_row(out, connection)?;
    }
    Ok(())
}

fn optional(value: Option<f64>) -> String {
    value.map(|v| format!("{v:.3}")).unwrap_or_default()
}

fn connection_row(out: &mut impl Write, c: &ConnectionSummary) -> io::Result<()> {
    write!(
        out,
        "{},{},{},{},{},{},{},{},{},{},{},{},{:.3},{},{},{}",
        c.id,
        c.client,
        c.server,
        c.roles_guessed,
        c.state,
        c.history,
        c.close.by.map_or("", tcp::Role::as_str),
        c.close.how,
        c.first_frame,
        c.last_frame,
        c.first_ns,
        c.last_ns,
        c.duration_ms,
        c.handshake.syn_retries_ns.len(),
        optional(c.handshake.rtt_to_server_ms),
        optional(c.handshake.rtt_to_client_ms),
    )?;
    for direction in [&c.client_to_server, &c.server_to_client] {
        direction_cells(out, direction)?;
    }
    writeln!(out)
}

fn direction_cells(out: &mut impl Write, d: &DirectionSummary) -> io::Result<()> {
    let r = &d.retransmissions;
    write!(
        out,
        ",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
        d.packets,
        d.wire_bytes,
        d.payload_bytes,
        d.unique_payload_bytes,
        r.total,
        r.timeout,
        r.fast,
        r.spurious,
        d.out_of_order,
        d.lost_segments,
        d.ack_lost_segments,
        d.duplicate_acks,
        d.zero_windows,
        d.zero_window_probes,
        d.window_full,
        d.window.min,
        d.window.max,
        d.max_bytes_in_flight,
        d.rtt.samples,
        optional(d.rtt.min_ms),
        optional(d.rtt.median_ms),
        optional(d.rtt.max_ms),
    )
}

const TRANSACTION_COLUMNS: &str = "connection,index,signature,request_start_ns,request_end_ns,\
response_start_ns,response_end_ns,duration_ms,request_transfer_ms,server_think_ms,\
response_transfer_ms,client_think_ms,request_bytes,response_bytes,request_packets,\
response_packets,retransmissions,network_ms,server_ms,client_ms,tcp_wait_ms,failure";

pub fn transactions(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    let ledger_columns: Vec<String> = transactions::Part::ALL
        .iter()
        .map(|part| format!("ledger.{}_ms", part.as_str()))
        .collect();
    writeln!(
        out,
        "{TRANSACTION_COLUMNS},{},name",
        ledger_columns.join(",")
    )?;
    let cell = |value: Option<i64>| value.map(|v| v.to_string()).unwrap_or_default();
    for t in &analysis.transactions {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{:.3},{:.3},{},{},{},{},{},{},{},{},{:.3},{:.3},{:.3},{:.3},{},{},{}",
            t.connection,
            t.index,
            t.signature,
            t.request_start_ns,
            t.request_end_ns,
            cell(t.response_start_ns),
            cell(t.response_end_ns),
            t.duration_ms,
            t.request_transfer_ms,
            optional(t.server_think_ms),
            optional(t.response_transfer_ms),
            optional(t.client_think_ms),
            t.request_bytes,
            t.response_bytes,
            t.request_packets,
            t.response_packets,
            t.retransmissions,
            t.latency.network_ms,
            t.latency.server_ms,
            t.latency.client_ms,
            t.latency.tcp_wait_ms,
            t.failure.map(|f| quoted(&f.describe())).unwrap_or_default(),
            ledger_cells(&t.ledger),
            quoted(t.name.as_deref().unwrap_or_default()),
        )?;
    }
    Ok(())
}

const FINDING_COLUMNS: &str = "rank,kind,severity,cost_ms,share,connections,transactions,\
example_connection,wireshark_filter,title";

/// The ledger's parts, each part's milliseconds in its own cell.
fn ledger_cells(ledger: &transactions::Ledger) -> String {
    let cells: Vec<String> = transactions::Part::ALL
        .iter()
        .map(|&part| format!("{:.3}", ledger.get(part)))
        .collect();
    cells.join(",")
}

/// Quotes a CSV cell that holds commas or quotes.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

pub fn findings(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    writeln!(out, "{FINDING_COLUMNS}")?;
    for (rank, f) in analysis.findings.iter().enumerate() {
        writeln!(
            out,
            "{},{},{},{:.3},{:.4},{},{},{},{},{}",
            rank + 1,
            f.kind,
            f.severity.as_str(),
            f.cost_ms,
            f.share,
            f.connections,
            f.transactions,
            f.example_connection
                .map(|c| c.to_string())
                .unwrap_or_default(),
            quoted(&f.wireshark_filter),
            quoted(&f.title)
        )?;
    }
    Ok(())
}

const TICK_COLUMNS: &str = "start_ns,packets,bytes,payload_bytes,throughput_bps,retransmissions,\
lost_segments,duplicate_acks,zero_windows,new_connections,failed_connections,\
transactions_started,transactions_completed,connections_open,transactions_in_progress";

pub fn timeline(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    writeln!(out, "{TICK_COLUMNS}")?;
    for t in &analysis.ticks {
        writeln!(
            out,
            "{},{},{},{},{:.0},{},{},{},{},{},{},{},{},{},{}",
            t.start_ns,
            t.packets,
            t.bytes,
            t.payload_bytes,
            t.throughput_bps,
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
    Ok(())
}

pub fn event_header(out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{EVENT_COLUMNS}")
}

pub fn event(out: &mut impl Write, e: &Event, first: bool) -> io::Result<()> {
    if first {
        event_header(out)?;
    }
    writeln!(
        out,
        "{},{},{},{},{},{},{},{},{},{}",
        e.frame,
        e.timestamp_ns,
        e.connection,
        e.direction.as_str(),
        e.kind.as_str(),
        e.seq,
        e.ack,
        e.len,
        e.window,
        e.value
    )
}
