//! Messages sent in pieces whose later piece waited for a delayed ACK (Nagle
//! meets delayed ACK), on either side.

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
pub fn split_message(inputs: &Inputs, side: Side) -> Option<Finding> {
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
