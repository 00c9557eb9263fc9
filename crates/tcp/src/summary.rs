//! What the engine reports for each connection: plain data with stable field names.

use decode::Endpoint;
use serde::{Serialize, Serializer};

/// An endpoint written as text: `10.0.0.1:80`, `[2001:db8::1]:443`.
fn endpoint_as_text<S: Serializer>(endpoint: &Endpoint, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(endpoint)
}

/// One instance of a 4-tuple, from its first packet to its last.
#[derive(Debug, Clone, PartialEq, Serialize, record::Wire, record::Columns)]
pub struct ConnectionSummary {
    /// Stable id: the order in which connections were first seen, from 0
    /// (Wireshark's `tcp.stream` where both agree on instance boundaries).
    pub id: u64,
    #[serde(serialize_with = "endpoint_as_text")]
    #[column(text)]
    pub client: Endpoint,
    #[serde(serialize_with = "endpoint_as_text")]
    #[column(text)]
    pub server: Endpoint,
    /// True when no SYN was seen and the roles were guessed from the ports.
    pub roles_guessed: bool,
    pub first_frame: u64,
    pub last_frame: u64,
    #[column(time)]
    pub first_ns: i64,
    #[column(time)]
    pub last_ns: i64,
    pub duration_ms: f64,
    pub state: ConnState,
    /// Zeek's history letters: upper case for the client, lower for the server.
    pub history: String,
    pub close: Close,
    pub handshake: Handshake,
    pub client_to_server: DirectionSummary,
    pub server_to_client: DirectionSummary,
}

impl ConnectionSummary {
    /// Both directions' data, the client's first.
    pub fn directions(&self) -> [&DirectionSummary; 2] {
        [&self.client_to_server, &self.server_to_client]
    }

    /// The round trip between the capture point and each side, the least
    /// seen: the one RTT every later stage uses.
    pub fn rtt(&self) -> PathRtt {
        let least = |handshake: Option<f64>, data: Option<f64>| match (handshake, data) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        PathRtt {
            to_server_ms: least(
                self.handshake.rtt_to_server_ms,
                self.client_to_server.rtt.min_ms,
            ),
            to_client_ms: least(
                self.handshake.rtt_to_client_ms,
                self.server_to_client.rtt.min_ms,
            ),
        }
    }

    /// Both sides sent their FIN: each said it had nothing more to send.
    pub fn closed_by_both(&self) -> bool {
        self.history.contains('F') && self.history.contains('f')
    }

    /// The direction's figures.
    pub fn direction(&self, direction: crate::Direction) -> &DirectionSummary {
        match direction {
            crate::Direction::ClientToServer => &self.client_to_server,
            crate::Direction::ServerToClient => &self.server_to_client,
        }
    }
}

/// Round trips from the capture point to each side and back, in
/// milliseconds: the handshake's (SYN to SYN-ACK, SYN-ACK to ACK) or the
/// quickest data-to-ACK, whichever is less. At the client the path to the
/// server holds nearly the whole round trip; at the server, the path to the client.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct PathRtt {
    pub to_server_ms: Option<f64>,
    pub to_client_ms: Option<f64>,
}

impl PathRtt {
    /// Client to server and back, through the capture point; 0 when unknown.
    pub fn round_trip_ms(&self) -> f64 {
        self.to_server_ms.unwrap_or(0.0) + self.to_client_ms.unwrap_or(0.0)
    }

    /// Client to server and back, when the capture shows any of it.
    pub fn known_round_trip_ms(&self) -> Option<f64> {
        Some(self.round_trip_ms()).filter(|&round_trip| round_trip > 0.0)
    }
}

/// Zeek's connection state, from what the capture shows of the handshake and close.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, record::Wire, record::Columns)]
pub enum ConnState {
    /// A SYN, never answered.
    S0,
    /// Established, not closed.
    S1,
    /// Established and closed by both sides.
    SF,
    /// The SYN was answered with a reset.
    REJ,
    /// Established; only the client closed.
    S2,
    /// Established; only the server closed.
    S3,
    /// Established, then reset by the client.
    RSTO,
    /// Established, then reset by the server.
    RSTR,
    /// The client sent a SYN and then a reset, unanswered.
    RSTOS0,
    /// The server sent a SYN-ACK and then a reset; no SYN seen.
    RSTRH,
    /// The client sent a SYN and then a FIN, unanswered.
    SH,
    /// The server sent a SYN-ACK and then a FIN; no SYN seen.
    SHR,
    /// No SYN seen: midstream traffic.
    OTH,
}

impl ConnState {
    pub fn as_str(self) -> &'static str {
        match self {
            ConnState::S0 => "S0",
            ConnState::S1 => "S1",
            ConnState::SF => "SF",
            ConnState::REJ => "REJ",
            ConnState::S2 => "S2",
            ConnState::S3 => "S3",
            ConnState::RSTO => "RSTO",
            ConnState::RSTR => "RSTR",
            ConnState::RSTOS0 => "RSTOS0",
            ConnState::RSTRH => "RSTRH",
            ConnState::SH => "SH",
            ConnState::SHR => "SHR",
            ConnState::OTH => "OTH",
        }
    }

    /// The connection never got established: unanswered, refused or abandoned.
    pub fn failed_setup(self) -> bool {
        matches!(
            self,
            ConnState::S0 | ConnState::REJ | ConnState::RSTOS0 | ConnState::SH
        )
    }
}

impl std::fmt::Display for ConnState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One end of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, record::Wire, record::Columns)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Client,
    Server,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Server => "server",
        }
    }

    /// The direction this side sends in.
    pub fn sends(self) -> crate::Direction {
        match self {
            Role::Client => crate::Direction::ClientToServer,
            Role::Server => crate::Direction::ServerToClient,
        }
    }
}

/// How a connection ended in the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, record::Wire, record::Columns)]
#[serde(rename_all = "snake_case")]
pub enum CloseHow {
    Fin,
    Rst,
    /// Still open when the capture ended.
    Open,
}

impl CloseHow {
    pub fn as_str(self) -> &'static str {
        match self {
            CloseHow::Fin => "fin",
            CloseHow::Rst => "rst",
            CloseHow::Open => "open",
        }
    }
}

impl std::fmt::Display for CloseHow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who ended the connection, and how.
#[derive(Debug, Clone, PartialEq, Serialize, record::Wire, record::Columns)]
pub struct Close {
    /// Null when it did not end in the capture.
    pub by: Option<Role>,
    pub how: CloseHow,
    pub frame: Option<u64>,
}

/// The three-way handshake as seen at the capture point.
#[derive(Debug, Clone, PartialEq, Serialize, Default, record::Wire, record::Columns)]
pub struct Handshake {
    #[column(time)]
    pub syn_ns: Option<i64>,
    #[column(time)]
    pub syn_ack_ns: Option<i64>,
    #[column(time)]
    pub ack_ns: Option<i64>,
    /// Times of SYNs sent again before the SYN-ACK (nanoseconds), the first
    /// [`crate::stack::MAX_SYN_RETRIES`] of them.
    #[column(time)]
    pub syn_retries_ns: Vec<i64>,
    /// SYNs sent again before the SYN-ACK, all of them.
    pub syn_retries: u64,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, record::Wire, record::Columns)]
pub struct SynOptions {
    pub mss: Option<u16>,
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    pub timestamps: bool,
}

/// Counters and figures for one direction of a connection.
#[derive(Debug, Clone, PartialEq, Serialize, Default, record::Wire, record::Columns)]
pub struct DirectionSummary {
    pub packets: u64,
    /// Packets that carried payload.
    pub data_packets: u64,
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
    /// Resends that filled a gap at the capture point: their originals were
    /// lost before it.
    pub lost_before_capture: u64,
    /// Resends of data the capture point had seen: lost after it (or resent
    /// needlessly, when spurious ones are among them).
    pub lost_after_capture: u64,
    /// Gaps the receiver acknowledged without their data ever being seen
    /// again: the capture's own drops, not loss.
    pub capture_drops: u64,
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
    /// From an ACK to the data it let go while the congestion window was the
    /// limit: at the receiver's side of a path, its round trip to the sender.
    pub release_lag: RttStats,
    /// Longest gap between two packets in this direction.
    pub max_idle_ms: f64,
    /// How the peer's ACKs released this direction's data.
    pub ack_clock: AckClockStats,
    /// The largest payload carried by one segment.
    pub largest_segment: u64,
    /// The most times one segment was sent again by timeout in a row, and its payload.
    pub most_resends: u64,
    pub most_resent_bytes: u64,
    /// Bytes sent and never acknowledged by the end (0 when unknown).
    pub unacknowledged_at_end: u64,
}

/// How the peer's ACKs released one direction's data: the rate and evenness
/// of the ACK clock while data was outstanding, and waits for delayed ACKs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default, record::Wire, record::Columns)]
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
    /// ACK (as late beyond the round trip as a delayed ACK, from
    /// [`crate::stack::DELAYED_ACK_MIN_NS`] to
    /// [`crate::stack::DELAYED_ACK_MAX_NS`]) covered all it had sent.
    pub delayed_ack_waits: u64,
    /// Their total length, last data before to first data after.
    pub delayed_ack_wait_ms: f64,
}

/// Retransmissions by cause; `total` counts each retransmitted segment once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default, record::Wire, record::Columns)]
pub struct Retransmissions {
    pub total: u64,
    /// Not prompted by duplicate ACKs: a retransmission timeout or tail-loss probe.
    pub timeout: u64,
    pub fast: u64,
    pub spurious: u64,
    /// SYNs and SYN-ACKs sent again, among the others.
    pub handshake: u64,
    /// Resent at once when the receiver asked for them with duplicate ACKs,
    /// as judged from either side of the path (Wireshark's `fast` flag
    /// allows 20 ms, too short seen from the receiver's side): loss struck
    /// segments with later ones behind them.
    pub after_duplicate_acks: u64,
    /// Sent again by timeout after its timer had resent it already: one
    /// loss waited out (or a peer gone), not another loss.
    pub repeated: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default, record::Wire, record::Columns)]
pub struct WindowStats {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
}

/// Data-to-ACK round trips measured at the capture point, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default, record::Wire, record::Columns)]
pub struct RttStats {
    pub samples: u64,
    pub min_ms: Option<f64>,
    pub median_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// How the samples follow the bytes in flight when their data left
    /// (Pearson's r): near 1 when a queue builds at a bottleneck as the
    /// sender puts more in flight.
    pub in_flight_correlation: Option<f64>,
}
