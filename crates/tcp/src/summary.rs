//! What the engine reports for each connection: plain data with stable field names.

use serde::Serialize;

/// One instance of a 4-tuple, from its first packet to its last.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectionSummary {
    /// Stable id: the order in which connections were first seen, from 0
    /// (Wireshark's `tcp.stream` where both agree on instance boundaries).
    pub id: u64,
    pub client: String,
    pub server: String,
    /// True when no SYN was seen and the roles were guessed from the ports.
    pub roles_guessed: bool,
    pub first_frame: u64,
    pub last_frame: u64,
    pub first_ns: i64,
    pub last_ns: i64,
    pub duration_ms: f64,
    /// Zeek's connection state: S0, S1, SF, REJ, S2, S3, RSTO, RSTR, RSTOS0,
    /// RSTRH, SH, SHR, OTH.
    pub state: &'static str,
    /// Zeek's history letters: upper case for the client, lower for the server.
    pub history: String,
    pub close: Close,
    pub handshake: Handshake,
    pub client_to_server: DirectionSummary,
    pub server_to_client: DirectionSummary,
}

/// Who ended the connection, and how.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Close {
    /// "client", "server", or null when it did not end in the capture.
    pub by: Option<&'static str>,
    /// "fin", "rst", or "open".
    pub how: &'static str,
    pub frame: Option<u64>,
}

/// The three-way handshake as seen at the capture point.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Handshake {
    pub syn_ns: Option<i64>,
    pub syn_ack_ns: Option<i64>,
    pub ack_ns: Option<i64>,
    /// Times of SYNs sent again before the SYN-ACK (nanoseconds).
    pub syn_retries_ns: Vec<i64>,
    pub syn_ack_retries: u32,
    /// Capture point to server and back: SYN → SYN-ACK.
    pub rtt_to_server_ms: Option<f64>,
    /// Capture point to client and back: SYN-ACK → ACK.
    pub rtt_to_client_ms: Option<f64>,
    pub client_options: Option<SynOptions>,
    pub server_options: Option<SynOptions>,
    /// The options of the last SYN sent again, where they differ from the
    /// first SYN's (stacks drop options from later tries).
    pub retry_client_options: Option<SynOptions>,
}

/// The options one side offered in its SYN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SynOptions {
    pub mss: Option<u16>,
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    pub timestamps: bool,
}

/// Counters and figures for one direction of a connection.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct DirectionSummary {
    pub packets: u64,
    pub wire_bytes: u64,
    pub payload_bytes: u64,
    /// Payload bytes above the highest sequence seen before: what was new.
    pub unique_payload_bytes: u64,
    pub retransmissions: Retransmissions,
    pub out_of_order: u64,
    /// Gaps in the sequence at the capture point: loss upstream of it.
    pub lost_segments: u64,
    /// Data the peer acknowledged that the capture never saw: the capture dropped it.
    pub ack_lost_segments: u64,
    pub duplicate_acks: u64,
    /// ACKs carrying SACK blocks.
    pub sack_acks: u64,
    /// SACK blocks reporting data received twice (RFC 2883).
    pub dsacks: u64,
    pub zero_windows: u64,
    /// Time this side advertised a zero window: from the first zero to the
    /// next open window (or the end of the capture).
    pub zero_window_ms: f64,
    pub zero_window_probes: u64,
    pub window_full: u64,
    pub window_updates: u64,
    pub keep_alives: u64,
    /// Advertised receive window after scaling, in bytes.
    pub window: WindowStats,
    /// Whether the window scale was learnt from the handshake.
    pub window_scale_known: bool,
    pub max_bytes_in_flight: u64,
    pub rtt: RttStats,
    /// Longest gap between two packets in this direction.
    pub max_idle_ms: f64,
    /// How the peer's ACKs released this direction's data.
    pub ack_clock: AckClockStats,
    /// The largest payload carried by one segment.
    pub largest_segment: u64,
    /// The most times one segment was sent again by timeout in a row, and its payload.
    pub most_resends: u64,
    pub most_resent_bytes: u64,
}

/// How the peer's ACKs released one direction's data: the rate and evenness
/// of the ACK clock while data was outstanding, and waits for delayed ACKs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct AckClockStats {
    /// Intervals between ACKs that moved forward with data still outstanding.
    pub samples: u64,
    /// Time covered by those intervals: the sender had data in flight.
    pub busy_ms: f64,
    /// Bytes acknowledged per second over those intervals.
    pub bytes_per_s: Option<f64>,
    /// Byte-weighted standard deviation of ln(rate) across the intervals:
    /// near 0 when the ACKs come evenly spaced, as behind a bottleneck link.
    pub spread: Option<f64>,
    /// Pauses in this direction's data that ended as soon as a late bare
    /// ACK (30 to 500 ms beyond the round trip) covered all it had sent.
    pub delayed_ack_waits: u64,
    /// Their total length, last data before to first data after.
    pub delayed_ack_wait_ms: f64,
}

/// Retransmissions by cause; `total` counts each retransmitted segment once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct Retransmissions {
    pub total: u64,
    /// Not prompted by duplicate ACKs: a retransmission timeout or tail-loss probe.
    pub timeout: u64,
    pub fast: u64,
    pub spurious: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct WindowStats {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
}

/// Data-to-ACK round trips measured at the capture point, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct RttStats {
    pub samples: u64,
    pub min_ms: Option<f64>,
    pub median_ms: Option<f64>,
    pub max_ms: Option<f64>,
}
