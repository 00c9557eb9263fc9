//! One function per cause. Each returns the finding it sees, if any; the
//! severity and share are filled in by the caller.

use tcp::{ConnectionSummary, DirectionSummary, EventKind};

use crate::{Finding, Inputs, Severity};

/// Linux delays an ACK at least 40 ms, Windows up to 200 ms.
const DELAYED_ACK_BAND_MS: std::ops::RangeInclusive<f64> = 36.0..=250.0;
/// A message this small fits a few segments: a long transfer means it waited.
const SMALL_MESSAGE_BYTES: u64 = 16 * 1024;
/// Transfers shorter than this are too short to be window-limited.
const BULK_BYTES: u64 = 256 * 1024;
/// A connection with this many turns over a round trip this long is chatty.
const CHATTY_TURNS: u64 = 10;
const CHATTY_RTT_MS: f64 = 5.0;
/// A server pause at least this long, and ten times the usual, is a stall.
const STALL_MS: f64 = 100.0;
/// Segments smaller than this on average are tiny.
const TINY_SEGMENT_BYTES: u64 = 100;

pub fn run(inputs: &Inputs) -> Vec<Finding> {
    [
        setup_failures(inputs),
        server_think_time(inputs),
        split_message(inputs, Side::Client),
        split_message(inputs, Side::Server),
        receive_window(inputs),
        zero_window(inputs),
        packet_loss(inputs),
        chattiness(inputs),
        periodic_stalls(inputs),
        small_writes(inputs),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn finding(kind: &'static str, title: String, cost_ms: f64) -> Finding {
    Finding {
        kind,
        severity: Severity::Info,
        title,
        cost_ms,
        share: 0.0,
        connections: 0,
        transactions: 0,
        example_connection: None,
        frames: Vec::new(),
        wireshark_filter: String::new(),
        explanation: String::new(),
        fix: String::new(),
        what_if: String::new(),
        suspected: None,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The connection's round trip at the capture point: the handshake's, else data-to-ACK.
fn rtt_ms(connection: &ConnectionSummary) -> f64 {
    let handshake = &connection.handshake;
    match (handshake.rtt_to_server_ms, handshake.rtt_to_client_ms) {
        (Some(server), Some(client)) => server + client,
        _ => [&connection.client_to_server, &connection.server_to_client]
            .iter()
            .filter_map(|d| d.rtt.median_ms)
            .fold(0.0, f64::max),
    }
}

fn setup_failures(inputs: &Inputs) -> Option<Finding> {
    let retried: Vec<&ConnectionSummary> = inputs
        .connections
        .iter()
        .filter(|c| !c.handshake.syn_retries_ns.is_empty())
        .collect();
    let unanswered = inputs
        .connections
        .iter()
        .filter(|c| c.state == "S0")
        .count();
    let refused = inputs
        .connections
        .iter()
        .filter(|c| c.state == "REJ")
        .count();
    if retried.is_empty() && refused == 0 {
        return None;
    }
    let waits: Vec<f64> = retried.iter().map(|c| setup_wait_ms(c)).collect();
    let cost: f64 = waits.iter().sum();
    let most_retried = retried
        .iter()
        .max_by_key(|c| c.handshake.syn_retries_ns.len());
    let intervals = most_retried.map_or(String::new(), |c| retry_offsets(c));
    let mut found = finding(
        "connection_setup_failure",
        format!(
            "{} connection attempts waited for SYN retries (after {intervals} s); \
             {unanswered} never answered, {refused} refused",
            retried.len()
        ),
        cost,
    );
    found.connections = (retried.len() + refused) as u64;
    found.example_connection = most_retried.map(|c| c.id);
    found.frames = inputs.evidence.frames(&[EventKind::SynRetransmission]);
    found.wireshark_filter =
        "tcp.flags.syn == 1 && tcp.flags.ack == 0 && tcp.analysis.retransmission".into();
    found.explanation = "The client's SYNs went unanswered, so it waited a retransmission \
        timeout (1 s, then doubling) before each new try. SYNs are lost when the server's \
        listen queue is full, a firewall or load balancer drops them, or SNAT runs out of ports."
        .into();
    found.fix = "Check the server's listen backlog (ss -lnt: Recv-Q against Send-Q) and raise \
        it with the application's backlog and net.core.somaxconn; look for SYN drops on \
        firewalls and load balancers, and for SNAT port exhaustion."
        .into();
    found.what_if = format!(
        "Answered at once, these connections would open in one round trip instead of a median \
         {:.1} s.",
        median(waits) / 1e3
    );
    Some(found)
}

/// SYN to SYN-ACK for an answered connection; first to last packet otherwise.
fn setup_wait_ms(connection: &ConnectionSummary) -> f64 {
    let handshake = &connection.handshake;
    let syn = handshake.syn_ns.unwrap_or(connection.first_ns);
    let end = handshake.syn_ack_ns.unwrap_or(connection.last_ns);
    (end - syn) as f64 / 1e6
}

fn retry_offsets(connection: &ConnectionSummary) -> String {
    let syn = connection.handshake.syn_ns.unwrap_or(connection.first_ns);
    let offsets: Vec<String> = connection
        .handshake
        .syn_retries_ns
        .iter()
        .map(|at| format!("{:.0}", (at - syn) as f64 / 1e9))
        .collect();
    offsets.join(", ")
}

/// The round trip from the capture point to the server and back: zero when
/// the capture was taken at the server.
fn server_side_rtt_ms(inputs: &Inputs, connection: u64) -> f64 {
    connection_by_id(inputs, connection)
        .and_then(|c| c.handshake.rtt_to_server_ms)
        .unwrap_or(0.0)
}

fn connection_by_id<'a>(inputs: &Inputs<'a>, id: u64) -> Option<&'a ConnectionSummary> {
    // Connections are listed by id; the lookup falls back to a search if not.
    let direct = inputs.connections.get(id as usize).filter(|c| c.id == id);
    direct.or_else(|| inputs.connections.iter().find(|c| c.id == id))
}

fn server_think_time(inputs: &Inputs) -> Option<Finding> {
    let thinks: Vec<f64> = inputs
        .transactions
        .iter()
        .filter_map(|t| {
            let think = t.server_think_ms? - server_side_rtt_ms(inputs, t.connection);
            Some(think.max(0.0))
        })
        .collect();
    let total_think: f64 = thinks.iter().sum();
    let total: f64 = inputs.transactions.iter().map(|t| t.duration_ms).sum();
    let typical = median(thinks.clone());
    if thinks.is_empty() || total_think < 0.3 * total || typical < 10.0 {
        return None;
    }
    let durations = median(inputs.transactions.iter().map(|t| t.duration_ms).collect());
    let mut found = finding(
        "server_think_time",
        format!(
            "The server takes {typical:.1} ms to answer (median of {} requests): {:.0}% of \
             transaction time",
            thinks.len(),
            100.0 * total_think / total
        ),
        total_think,
    );
    found.transactions = thinks.len() as u64;
    found.connections = distinct_connections(inputs.transactions.iter().map(|t| t.connection));
    found.example_connection = inputs.transactions.first().map(|t| t.connection);
    found.wireshark_filter = "tcp.len > 0".into();
    found.explanation = "Between the last byte of each request and the first byte of its \
        response, less the round trip to the server, the network is idle: the time is spent \
        inside the server."
        .into();
    found.fix = "Profile the server application and what it calls (databases, back ends); \
        the network and TCP are not what makes these requests slow."
        .into();
    found.what_if = format!(
        "With instant answers the median transaction would take {:.1} ms instead of {durations:.1} ms.",
        (durations - typical).max(0.0)
    );
    Some(found)
}

fn distinct_connections(ids: impl Iterator<Item = u64>) -> u64 {
    let mut ids: Vec<u64> = ids.collect();
    ids.sort_unstable();
    ids.dedup();
    ids.len() as u64
}

#[derive(Clone, Copy)]
enum Side {
    Client,
    Server,
}

/// A small message sent in pieces whose transfer sits in the delayed-ACK
/// band: the later piece waited for the ACK of the first (Nagle meets
/// delayed ACK).
fn split_message(inputs: &Inputs, side: Side) -> Option<Finding> {
    let rtt_of = |connection: u64| connection_by_id(inputs, connection).map_or(0.0, rtt_ms);
    let stalls: Vec<(u64, f64)> = inputs
        .transactions
        .iter()
        .filter_map(|t| {
            let (packets, bytes, transfer) = match side {
                Side::Client => (
                    t.request_packets,
                    t.request_bytes,
                    Some(t.request_transfer_ms),
                ),
                Side::Server => (t.response_packets, t.response_bytes, t.response_transfer_ms),
            };
            let transfer = transfer?;
            let rtt = rtt_of(t.connection);
            let stalled = packets >= 2
                && bytes <= SMALL_MESSAGE_BYTES
                && DELAYED_ACK_BAND_MS.contains(&transfer)
                && transfer > 5.0 * rtt;
            stalled.then_some((t.connection, transfer - rtt))
        })
        .collect();
    if stalls.len() < 2 {
        return None;
    }
    let waits: Vec<f64> = stalls.iter().map(|&(_, wait)| wait).collect();
    let typical = median(waits.clone());
    let (kind, sender, receiver, what) = match side {
        Side::Client => ("nagle_delayed_ack", "client", "server", "requests"),
        Side::Server => ("delayed_ack", "server", "client", "responses"),
    };
    let mut found = finding(
        kind,
        format!(
            "{} {what} stalled {typical:.0} ms mid-message: the {sender} waited for the \
             {receiver}'s delayed ACK",
            stalls.len()
        ),
        waits.iter().sum(),
    );
    found.transactions = stalls.len() as u64;
    found.connections = distinct_connections(stalls.iter().map(|&(c, _)| c));
    found.example_connection = stalls.first().map(|&(c, _)| c);
    found.wireshark_filter = format!(
        "tcp.stream == {} && tcp.len > 0",
        found.example_connection.unwrap_or(0)
    );
    found.explanation = format!(
        "The {sender} writes each message in more than one piece. Nagle's algorithm holds a \
         small piece until the previous one is acknowledged, and the {receiver} delays that \
         ACK ({typical:.0} ms here) hoping to piggyback it on data."
    );
    found.fix = format!(
        "Set TCP_NODELAY on the {sender}'s socket or write each message in one call; or have \
         the {receiver} acknowledge at once (TcpAckFrequency=1 on Windows, TCP_QUICKACK on Linux)."
    );
    found.what_if = format!("Each of these {what} would be about {typical:.0} ms faster.");
    found.suspected = Some(
        "inferred from each message's transfer time, which sits in the delayed-ACK range".into(),
    );
    Some(found)
}

fn receive_window(inputs: &Inputs) -> Option<Finding> {
    let limited: Vec<(&ConnectionSummary, &DirectionSummary, u64, f64)> = inputs
        .connections
        .iter()
        .flat_map(|c| {
            [
                (c, &c.client_to_server, &c.server_to_client),
                (c, &c.server_to_client, &c.client_to_server),
            ]
        })
        .filter_map(|(c, data, receiver)| {
            let window = receiver.window.max;
            let rtt = rtt_ms(c);
            let rate = data.unique_payload_bytes as f64 / (c.duration_ms / 1e3).max(1e-9);
            let cap = window as f64 / (rtt / 1e3).max(1e-9);
            let pinned = data.unique_payload_bytes >= BULK_BYTES
                && rtt > 0.0
                && data.max_bytes_in_flight as f64 >= 0.8 * window as f64
                && rate <= 1.25 * cap;
            pinned.then_some((c, data, window, rtt))
        })
        .collect();
    let &(connection, data, window, rtt) = limited.first()?;
    let rate = data.unique_payload_bytes as f64 / (connection.duration_ms / 1e3);
    let cost: f64 = limited.iter().map(|(c, ..)| c.duration_ms / 2.0).sum();
    let scaling_off = [
        connection.handshake.client_options,
        connection.handshake.server_options,
    ]
    .iter()
    .flatten()
    .any(|options| options.window_scale.is_none());
    let mut found = finding(
        "receive_window_limited",
        format!(
            "Throughput pinned at {:.2} MB/s by a {:.1} kB receive window over a {rtt:.1} ms \
             round trip (window / RTT)",
            rate / 1e6,
            window as f64 / 1e3
        ),
        cost,
    );
    found.connections = limited.len() as u64;
    found.example_connection = Some(connection.id);
    found.frames = inputs.evidence.frames(&[EventKind::WindowFull]);
    found.wireshark_filter = format!(
        "tcp.stream == {} && tcp.analysis.window_full",
        connection.id
    );
    found.explanation = format!(
        "The sender keeps a full window in flight ({} bytes at most) and then waits for ACKs: \
         the receiver's advertised window, not the link, sets the rate.{}",
        data.max_bytes_in_flight,
        if scaling_off {
            " Window scaling is off: a SYN lacked the window-scale option, so the window cannot exceed 64 kB."
        } else {
            ""
        }
    );
    found.fix = format!(
        "Give the receiver a receive buffer of at least the bandwidth-delay product (link rate × \
         {rtt:.1} ms, for 1 Gbit/s {:.0} kB), and keep window scaling on at both ends and in \
         every middlebox.",
        1e9 / 8.0 * rtt / 1e3 / 1e3
    );
    found.what_if = format!(
        "Each doubling of the window doubles the rate until the link is full: {:.1} kB would \
         allow {:.2} MB/s.",
        2.0 * window as f64 / 1e3,
        2.0 * rate / 1e6
    );
    found.suspected = Some("the link's own rate is not known from the capture; the cost assumes it could carry twice the rate".into());
    Some(found)
}

fn zero_window(inputs: &Inputs) -> Option<Finding> {
    let stopped: Vec<(&ConnectionSummary, &'static str, &DirectionSummary)> = inputs
        .connections
        .iter()
        .flat_map(|c| {
            [
                (c, "client", &c.client_to_server),
                (c, "server", &c.server_to_client),
            ]
        })
        .filter(|(_, _, d)| d.zero_windows > 0)
        .collect();
    let &(connection, side, _) = stopped
        .iter()
        .max_by(|a, b| a.2.zero_window_ms.total_cmp(&b.2.zero_window_ms))?;
    let cost: f64 = stopped.iter().map(|(_, _, d)| d.zero_window_ms).sum();
    let count: u64 = stopped.iter().map(|(_, _, d)| d.zero_windows).sum();
    let mut found = finding(
        "zero_window",
        format!(
            "The {side} stopped reading: zero window for {:.0} ms in all ({count} zero-window \
             advertisements)",
            cost
        ),
        cost,
    );
    found.connections = stopped.len() as u64;
    found.example_connection = Some(connection.id);
    found.frames = inputs.evidence.frames(&[EventKind::ZeroWindow]);
    found.wireshark_filter = "tcp.analysis.zero_window || tcp.analysis.zero_window_probe".into();
    found.explanation = format!(
        "The {side}'s receive buffer filled because its application did not read fast enough; \
         it advertised a zero window and the sender had to stop and probe."
    );
    found.fix = format!(
        "Find what the {side}'s application does between reads (disk, CPU, locks) and read \
         sooner; a larger receive buffer only postpones the stop."
    );
    found.what_if = format!(
        "Reading promptly would save up to {:.0} ms of stopped transfer.",
        cost
    );
    Some(found)
}

fn packet_loss(inputs: &Inputs) -> Option<Finding> {
    let mut resent = 0;
    let mut packets = 0;
    let mut gaps = 0;
    let mut cost = 0.0;
    let mut worst: Option<(&ConnectionSummary, u64)> = None;
    for c in inputs.connections {
        // SYNs sent again belong to the setup finding, not to data loss.
        let setup_retries = [
            c.handshake.syn_retries_ns.len() as u64,
            u64::from(c.handshake.syn_ack_retries),
        ];
        for (d, setup) in [&c.client_to_server, &c.server_to_client]
            .into_iter()
            .zip(setup_retries)
        {
            let data_resent = d.retransmissions.total.saturating_sub(setup);
            resent += data_resent;
            packets += d.packets;
            gaps += d.lost_segments;
            cost += data_resent as f64 * rtt_ms(c).max(1.0);
            if data_resent > worst.map_or(0, |(_, n)| n) {
                worst = Some((c, data_resent));
            }
        }
    }
    let (connection, _) = worst?;
    let location = if gaps > 0 {
        "upstream of the capture point (the capture saw the gaps before the resends)"
    } else {
        "downstream of the capture point (the capture saw each segment twice)"
    };
    let mut found = finding(
        "packet_loss",
        format!(
            "Packet loss: {resent} segments resent ({:.1}% of {packets}), lost {}",
            100.0 * resent as f64 / packets.max(1) as f64,
            if gaps > 0 { "upstream" } else { "downstream" }
        ),
        cost,
    );
    found.connections = inputs
        .connections
        .iter()
        .filter(|c| {
            c.client_to_server.retransmissions.total + c.server_to_client.retransmissions.total > 0
        })
        .count() as u64;
    found.example_connection = Some(connection.id);
    found.frames = inputs.evidence.frames(&[
        EventKind::Retransmission,
        EventKind::FastRetransmission,
        EventKind::LostSegment,
    ]);
    found.wireshark_filter =
        "tcp.analysis.retransmission || tcp.analysis.fast_retransmission || tcp.analysis.lost_segment"
            .into();
    found.explanation = format!(
        "Segments were lost {location}. Each loss costs a round trip \
        when duplicate ACKs trigger a fast retransmission, and a retransmission timeout \
        (at least 200 ms) when they cannot, and it halves the sender's congestion window."
    );
    found.fix = "Find the dropping hop: compare captures taken on both sides of it, and look \
        at interface drops and queue overflows on the path (policers, full buffers, bad links)."
        .into();
    found.what_if = format!("Without the loss about {:.0} ms of waiting would go.", cost);
    found.suspected =
        Some("the cost counts one round trip per resent segment; timeouts cost more".into());
    Some(found)
}

/// Many short exchanges in a row, each costing a round trip.
fn chattiness(inputs: &Inputs) -> Option<Finding> {
    let mut answered: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    for t in inputs
        .transactions
        .iter()
        .filter(|t| t.response_end_ns.is_some())
    {
        *answered.entry(t.connection).or_default() += 1;
    }
    let mut turns = 0u64;
    let mut cost = 0.0;
    let mut worst: Option<(u64, u64, f64)> = None;
    for connection in inputs.connections {
        let rtt = rtt_ms(connection);
        let exchanges = answered.get(&connection.id).copied().unwrap_or(0);
        if exchanges < CHATTY_TURNS || rtt < CHATTY_RTT_MS {
            continue;
        }
        turns += exchanges;
        cost += exchanges as f64 * rtt;
        if exchanges > worst.map_or(0, |(_, n, _)| n) {
            worst = Some((connection.id, exchanges, rtt));
        }
    }
    let total: f64 = inputs.transactions.iter().map(|t| t.duration_ms).sum();
    let (example, exchanges, rtt) = worst?;
    if cost < 0.5 * total {
        return None;
    }
    let mut found = finding(
        "chattiness",
        format!("{turns} request/response turns, each waiting a {rtt:.1} ms round trip"),
        cost,
    );
    found.transactions = turns;
    found.connections = distinct_connections(
        inputs
            .transactions
            .iter()
            .filter(|t| t.response_end_ns.is_some())
            .map(|t| t.connection),
    );
    found.example_connection = Some(example);
    found.wireshark_filter = format!("tcp.stream == {example} && tcp.len > 0");
    found.explanation = format!(
        "The application waits for each answer before asking the next question, so every \
         turn costs a full round trip ({exchanges} turns on connection {example}): the time \
         goes into distance, not into work or bandwidth."
    );
    found.fix = "Send fewer, larger requests: batch or pipeline them, fetch in parallel, or \
        move the client closer to the server."
        .into();
    found.what_if = format!(
        "Ten times fewer turns would save about {:.1} s.",
        0.9 * cost / 1e3
    );
    Some(found)
}

/// Server answers that now and then take many times the usual think time,
/// at a steady interval: something in the server stops periodically.
fn periodic_stalls(inputs: &Inputs) -> Option<Finding> {
    let thinks: Vec<(i64, f64, u64)> = inputs
        .transactions
        .iter()
        .filter_map(|t| Some((t.request_end_ns, t.server_think_ms?, t.connection)))
        .collect();
    let usual = median(thinks.iter().map(|&(_, think, _)| think).collect());
    let stalls: Vec<(i64, f64, u64)> = thinks
        .into_iter()
        .filter(|&(_, think, _)| think >= STALL_MS && think >= 10.0 * usual.max(1.0))
        .collect();
    if stalls.len() < 3 {
        return None;
    }
    let intervals: Vec<f64> = stalls
        .windows(2)
        .map(|pair| (pair[1].0 - pair[0].0) as f64 / 1e9)
        .collect();
    let period = median(intervals.clone());
    let regular = intervals
        .iter()
        .all(|gap| (gap - period).abs() <= 0.2 * period);
    let length = median(stalls.iter().map(|&(_, think, _)| think).collect());
    let cost: f64 = stalls.iter().map(|&(_, think, _)| think - usual).sum();
    let mut found = finding(
        "periodic_stalls",
        format!(
            "The server stalls about {length:.0} ms{} ({} times)",
            if regular {
                format!(" every {period:.2} s")
            } else {
                String::new()
            },
            stalls.len()
        ),
        cost,
    );
    found.transactions = stalls.len() as u64;
    found.connections = distinct_connections(stalls.iter().map(|&(.., connection)| connection));
    found.example_connection = stalls.first().map(|&(.., connection)| connection);
    found.wireshark_filter = "tcp.len > 0".into();
    found.explanation = format!(
        "Most requests are answered in {usual:.1} ms, but these wait {length:.0} ms with no \
         data moving either way{}: the server stops as a whole, as with garbage collection, \
         a periodic job, log rotation or a flush.",
        if regular {
            ", at a steady interval"
        } else {
            ""
        }
    );
    found.fix = "Find what the server runs on that period (GC logs, cron, flushes, \
        checkpoints) and spread it out or take it off the request path."
        .into();
    found.what_if = format!(
        "Without the stalls {:.2} s of waiting would go.",
        cost / 1e3
    );
    if !regular {
        found.suspected = Some("the stalls are not evenly spaced".into());
    }
    Some(found)
}

/// Responses written as several tiny segments spread out in time.
fn small_writes(inputs: &Inputs) -> Option<Finding> {
    let chopped: Vec<&transactions::Transaction> = inputs
        .transactions
        .iter()
        .filter(|t| {
            t.response_packets >= 3
                && t.response_bytes / t.response_packets < TINY_SEGMENT_BYTES
                && t.response_transfer_ms.is_some_and(|ms| ms >= 5.0)
        })
        .collect();
    if chopped.len() < 2 {
        return None;
    }
    let spread: Vec<f64> = chopped
        .iter()
        .filter_map(|t| t.response_transfer_ms)
        .collect();
    let example = chopped[0];
    let mut found = finding(
        "small_segments",
        format!(
            "{} responses written as {} tiny segments of {} bytes in all, spread over {:.0} ms",
            chopped.len(),
            example.response_packets,
            example.response_bytes,
            median(spread.clone())
        ),
        spread.iter().sum(),
    );
    found.transactions = chopped.len() as u64;
    found.connections = distinct_connections(chopped.iter().map(|t| t.connection));
    found.example_connection = Some(example.connection);
    found.wireshark_filter = format!("tcp.stream == {} && tcp.len > 0", example.connection);
    found.explanation = "The server writes each response in several small pieces with pauses \
        between them, and TCP sends each piece at once: the client waits for the last one."
        .into();
    found.fix = "Build each response in full and write it in one call (or cork the socket \
        with TCP_CORK until it is complete)."
        .into();
    found.what_if = format!(
        "Written at once, each response would arrive about {:.0} ms sooner.",
        median(spread)
    );
    Some(found)
}
