//! Where a transaction's time goes: the network, the server, the client, or
//! waits that TCP itself imposed.
//!
//! Everything is measured at the capture point. The server's share is its
//! think time less the round trip to it; TCP's waits are the silences before
//! resent segments, each from the message's previous segment (a
//! retransmission timeout, or about a round trip for a fast retransmission), a small message whose transfer sits in the delayed-ACK
//! band, and the pauses of a transfer whose receiver advertised a zero
//! window; the network's share is the rest of the transaction (round trips
//! and transfer). The client's share is its think time before its next
//! request, which follows the transaction rather than lying inside it.

use serde::Serialize;
use tcp::{ConnectionSummary, DirectionSummary};

use crate::Transaction;

/// Linux delays an ACK at least 40 ms, Windows up to 200 ms.
const DELAYED_ACK_BAND_MS: std::ops::RangeInclusive<f64> = 36.0..=250.0;
/// A message this small fits a few segments: a long transfer means it waited.
const SMALL_MESSAGE_BYTES: u64 = 16 * 1024;

/// A silence this long between two new segments of one message is a pause
/// (far longer than segments of one flight are apart).
pub(crate) const PAUSE_MS: f64 = 10.0;

/// A transaction's time by where it went, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Latency {
    /// Round trips and transfer on the wire.
    pub network_ms: f64,
    /// Server think time less the round trip from the capture point to the server.
    pub server_ms: f64,
    /// The client's think time before its next request on the connection.
    pub client_ms: f64,
    /// Resend waits, delayed-ACK waits and zero-window stalls.
    pub tcp_wait_ms: f64,
}

impl Latency {
    pub fn total_ms(&self) -> f64 {
        self.network_ms + self.server_ms + self.client_ms + self.tcp_wait_ms
    }

    pub fn add(&mut self, other: &Latency) {
        self.network_ms += other.network_ms;
        self.server_ms += other.server_ms;
        self.client_ms += other.client_ms;
        self.tcp_wait_ms += other.tcp_wait_ms;
    }

    /// The parts, named, in a fixed order.
    pub fn parts(&self) -> [(&'static str, f64); 4] {
        [
            ("network", self.network_ms),
            ("server", self.server_ms),
            ("client", self.client_ms),
            ("tcp_waits", self.tcp_wait_ms),
        ]
    }
}

/// A resend after a silence this long waited for a retransmission timeout
/// (Linux's shortest is 200 ms, Windows' 300 ms).
pub const TIMEOUT_MIN_MS: f64 = 200.0;

/// Which message of a transaction a segment belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Message {
    Request,
    Response,
}

/// Silences measured while a transaction was assembled, in milliseconds.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Silences {
    /// Before segments that were sent again, each from the message's previous segment.
    pub resend_wait_ms: f64,
    /// Resends after a silence of [`TIMEOUT_MIN_MS`] or more, and those silences.
    pub timeout_resends: u64,
    pub timeout_wait_ms: f64,
    /// Pauses of at least [`PAUSE_MS`] before new segments of the request,
    /// and of the response, summed.
    pub request_pauses_ms: f64,
    pub response_pauses_ms: f64,
    /// How long after the request's latest new segment a piece of it was sent
    /// again: the server had the whole request only then.
    pub request_completed_late_ms: f64,
    last_request_ns: Option<i64>,
    last_response_ns: Option<i64>,
}

impl Silences {
    /// Notes a segment of `message` at `at_ns`, measuring the silence before it.
    pub fn segment(&mut self, message: Message, at_ns: i64, resent: bool) {
        let last = match message {
            Message::Request => &mut self.last_request_ns,
            Message::Response => &mut self.last_response_ns,
        };
        let pause_ms = last
            .map_or(0.0, |last| (at_ns - last) as f64 / 1e6)
            .max(0.0);
        *last = Some(last.map_or(at_ns, |last| last.max(at_ns)));
        if resent {
            self.resend_wait_ms += pause_ms;
            if pause_ms >= TIMEOUT_MIN_MS {
                self.timeout_resends += 1;
                self.timeout_wait_ms += pause_ms;
            }
        } else if pause_ms >= PAUSE_MS {
            match message {
                Message::Request => self.request_pauses_ms += pause_ms,
                Message::Response => self.response_pauses_ms += pause_ms,
            }
        }
    }
}

/// Splits a transaction's time, given its connection (when known).
pub(crate) fn split(
    t: &Transaction,
    silences: &Silences,
    connection: Option<&ConnectionSummary>,
) -> Latency {
    let path = connection.map(ConnectionSummary::rtt).unwrap_or_default();
    let rtt_to_server = path.to_server_ms.unwrap_or(0.0);
    let rtt = path.round_trip_ms();
    let server =
        (t.server_think_ms.unwrap_or(0.0) - silences.request_completed_late_ms - rtt_to_server)
            .max(0.0);
    let delayed_ack = delayed_ack_wait_ms(
        t.request_packets,
        t.request_bytes,
        Some(t.request_transfer_ms),
        rtt,
    ) + delayed_ack_wait_ms(
        t.response_packets,
        t.response_bytes,
        t.response_transfer_ms,
        rtt,
    );
    let zero_window = connection.map_or(0.0, |c| {
        // The server's zero window stalls requests; the client's, responses.
        stalled_ms(&c.server_to_client, silences.request_pauses_ms)
            + stalled_ms(&c.client_to_server, silences.response_pauses_ms)
    });
    let tcp_wait = (silences.resend_wait_ms + delayed_ack + zero_window)
        .min(t.duration_ms - server)
        .max(0.0);
    Latency {
        network_ms: (t.duration_ms - server - tcp_wait).max(0.0),
        server_ms: server,
        client_ms: t.client_think_ms.unwrap_or(0.0).max(0.0),
        tcp_wait_ms: tcp_wait,
    }
}

/// A small message in pieces whose transfer sits in the delayed-ACK band:
/// the later piece waited for the ACK of the first (Nagle meets delayed ACK).
fn delayed_ack_wait_ms(packets: u64, bytes: u64, transfer_ms: Option<f64>, rtt_ms: f64) -> f64 {
    match transfer_ms {
        Some(transfer)
            if packets >= 2
                && bytes <= SMALL_MESSAGE_BYTES
                && DELAYED_ACK_BAND_MS.contains(&transfer)
                && transfer > 5.0 * rtt_ms =>
        {
            transfer - rtt_ms
        }
        _ => 0.0,
    }
}

/// A transfer's pauses, when its receiver advertised a zero window, up to
/// the time that window stayed shut.
fn stalled_ms(receiver: &DirectionSummary, pauses_ms: f64) -> f64 {
    if receiver.zero_windows == 0 {
        return 0.0;
    }
    pauses_ms.min(receiver.zero_window_ms)
}

/// Where one connection's transaction time went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectionLatency {
    pub connection: u64,
    pub transactions: u64,
    #[serde(flatten)]
    pub latency: Latency,
}

/// One row per connection with transactions, in connection order.
pub fn by_connection(transactions: &[Transaction]) -> Vec<ConnectionLatency> {
    let mut rows: std::collections::BTreeMap<u64, ConnectionLatency> = Default::default();
    for t in transactions {
        let row = rows.entry(t.connection).or_insert(ConnectionLatency {
            connection: t.connection,
            transactions: 0,
            latency: Latency::default(),
        });
        row.transactions += 1;
        row.latency.add(&t.latency);
    }
    rows.into_values().collect()
}
