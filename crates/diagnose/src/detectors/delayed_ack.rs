//! Data that waited for a delayed ACK, on either side: messages sent in
//! pieces whose later piece waited (Nagle meets delayed ACK), and senders
//! that paused until a late ACK of their last segment arrived.

use tcp::ConnectionSummary;

use super::{connection_by_id, distinct_connections, finding, median, rtt_ms};
use crate::{Finding, Inputs};

/// Linux delays an ACK at least 40 ms, Windows up to 200 ms.
const DELAYED_ACK_BAND_MS: std::ops::RangeInclusive<f64> = 36.0..=250.0;
/// A message this small fits a few segments: a long transfer means it waited.
const SMALL_MESSAGE_BYTES: u64 = 16 * 1024;

#[derive(Clone, Copy)]
pub enum Side {
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

/// The delayed-ACK finding for one sending side: from messages split across
/// a stall where transactions show it, else from the sender's pauses that
/// ended the moment a late ACK arrived (uploads, streams with no replies).
pub fn delayed_ack(inputs: &Inputs, side: Side) -> Option<Finding> {
    split_message(inputs, side).or_else(|| ack_waits(inputs, side))
}

/// A sender that had sent all it had, waited for the ACK, and got it late:
/// the receiver held the ACK of an odd last segment for its delayed-ACK
/// timer, and the next write waited for it.
fn ack_waits(inputs: &Inputs, side: Side) -> Option<Finding> {
    let waiting: Vec<(&ConnectionSummary, u64, f64)> = inputs
        .connections
        .iter()
        .map(|c| {
            let clock = match side {
                Side::Client => c.client_to_server.ack_clock,
                Side::Server => c.server_to_client.ack_clock,
            };
            (c, clock.delayed_ack_waits, clock.delayed_ack_wait_ms)
        })
        .filter(|&(_, waits, _)| waits > 0)
        .collect();
    let stalls: u64 = waiting.iter().map(|&(_, waits, _)| waits).sum();
    if stalls < 2 {
        return None;
    }
    let stalled_ms: f64 = waiting.iter().map(|&(_, _, ms)| ms).sum();
    let typical = stalled_ms / stalls as f64;
    let cost: f64 = waiting
        .iter()
        .map(|&(c, waits, ms)| ms - waits as f64 * rtt_ms(c))
        .sum();
    let &(example, ..) = waiting.iter().max_by_key(|&&(_, waits, _)| waits)?;
    let (sender, receiver) = match side {
        Side::Client => ("client", "server"),
        Side::Server => ("server", "client"),
    };
    let mut found = finding(
        "delayed_ack",
        format!(
            "The {sender} paused {stalls} times for {typical:.1} ms, each time waiting for the \
             {receiver}'s delayed ACK of its last segment"
        ),
        cost,
    );
    found.connections = waiting.len() as u64;
    found.example_connection = Some(example.id);
    found.wireshark_filter = format!(
        "tcp.stream == {} && tcp.len == 0 && tcp.time_delta > 0.030",
        example.id
    );
    found.explanation = format!(
        "Each time the {sender} had sent everything it had written and waited for it to be \
         acknowledged before going on. The {receiver} acknowledges every second full segment \
         at once but holds the ACK of a lone last segment (a write that ends in an odd or \
         short segment) until its delayed-ACK timer fires, {typical:.0} ms here, and only \
         then did the {sender} send again."
    );
    found.fix = format!(
        "Have the {receiver} acknowledge at once (TCP_QUICKACK on Linux, TcpAckFrequency=1 on \
         Windows); or on the {sender} set TCP_NODELAY, write in larger pieces, and keep \
         writing without waiting for each write to be acknowledged."
    );
    found.what_if = format!(
        "Acknowledged at once, each pause would shrink to one round trip: {:.2} s sooner in all.",
        cost / 1e3
    );
    found.suspected = Some(format!(
        "inferred from timing: the {receiver}'s ACK came 30 to 500 ms after the data, beyond the \
         round trip, and the {sender} resumed the moment it arrived"
    ));
    found.figures.insert("stall_ms", typical);
    found.figures.insert("stalls", stalls as f64);
    Some(found)
}
