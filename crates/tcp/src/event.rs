//! Analysis events: one per flagged segment, in Wireshark's `tcp.analysis.*` words.

use serde::Serialize;

/// Which way a segment travels within its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, record::Wire, record::Columns)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From the client (the SYN sender) to the server.
    ClientToServer,
    ServerToClient,
}

impl Direction {
    pub fn index(self) -> usize {
        match self {
            Direction::ClientToServer => 0,
            Direction::ServerToClient => 1,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Direction::ClientToServer => "client_to_server",
            Direction::ServerToClient => "server_to_client",
        }
    }
}

/// The kind of an analysis event. Names match Wireshark's `tcp.analysis.*`
/// fields; where our meaning differs, the variant says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, record::Wire, record::Columns)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// Data (or a FIN) sent again, not prompted by duplicate ACKs. A SYN
    /// or SYN-ACK sent again is reported as a `SynRetransmission` only.
    Retransmission,
    /// A retransmission within 20 ms of the second duplicate ACK asking for
    /// it; also (unlike Wireshark, which reads it as out-of-order) data the
    /// capture saw before, sent again within a round trip of the newest.
    FastRetransmission,
    /// A retransmission of data the receiver had already acknowledged.
    SpuriousRetransmission,
    /// Sent below the highest sequence seen, soon after it, into a gap the
    /// capture never saw filled: reordered, or resent after a loss before the
    /// capture point.
    OutOfOrder,
    /// "Previous segment not captured": a gap in the sequence at the capture point.
    LostSegment,
    /// "ACKed unseen segment": the peer acknowledged data the capture never saw.
    AckLostSegment,
    DuplicateAck,
    ZeroWindow,
    ZeroWindowProbe,
    ZeroWindowProbeAck,
    /// The segment fills the receiver's advertised window exactly.
    WindowFull,
    WindowUpdate,
    KeepAlive,
    KeepAliveAck,
    /// A new SYN on a 4-tuple whose previous connection is over.
    ReusedPorts,
    /// A SYN or SYN-ACK sent again: its time is the retry interval.
    SynRetransmission,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Retransmission => "retransmission",
            EventKind::FastRetransmission => "fast_retransmission",
            EventKind::SpuriousRetransmission => "spurious_retransmission",
            EventKind::OutOfOrder => "out_of_order",
            EventKind::LostSegment => "lost_segment",
            EventKind::AckLostSegment => "ack_lost_segment",
            EventKind::DuplicateAck => "duplicate_ack",
            EventKind::ZeroWindow => "zero_window",
            EventKind::ZeroWindowProbe => "zero_window_probe",
            EventKind::ZeroWindowProbeAck => "zero_window_probe_ack",
            EventKind::WindowFull => "window_full",
            EventKind::WindowUpdate => "window_update",
            EventKind::KeepAlive => "keep_alive",
            EventKind::KeepAliveAck => "keep_alive_ack",
            EventKind::ReusedPorts => "reused_ports",
            EventKind::SynRetransmission => "syn_retransmission",
        }
    }
}

/// One flagged segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, record::Wire, record::Columns)]
pub struct Event {
    pub frame: u64,
    #[column(time)]
    pub timestamp_ns: i64,
    pub connection: u64,
    pub direction: Direction,
    pub kind: EventKind,
    /// Relative sequence number of the segment (0 = the ISN).
    pub seq: u32,
    /// Relative acknowledgement number.
    pub ack: u32,
    pub len: u32,
    /// Advertised window after scaling, in bytes.
    pub window: u64,
    /// Kind-specific figure: for `duplicate_ack`, its number in the run of
    /// duplicates (Wireshark's `tcp.analysis.duplicate_ack_num`); 0 otherwise.
    pub value: u64,
}

/// The analysis events one segment raised, as a small bit set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventSet(u32);

impl EventSet {
    pub fn raise(&mut self, kind: EventKind) {
        self.0 |= 1 << kind as u32;
    }

    pub fn has(self, kind: EventKind) -> bool {
        self.0 & (1 << kind as u32) != 0
    }

    /// The segment carried data sent before (any kind of retransmission).
    pub fn resent(self) -> bool {
        self.has(EventKind::Retransmission)
            || self.has(EventKind::FastRetransmission)
            || self.has(EventKind::SpuriousRetransmission)
    }

    /// The kinds the segment is reported as, each a different fact: a SYN
    /// sent again is a `syn_retransmission`, not also a `retransmission`
    /// (Wireshark's `tcp.analysis.retransmission` covers both, as it covers
    /// fast retransmissions, which are likewise one event).
    pub fn kinds(self) -> impl Iterator<Item = EventKind> {
        let mut reported = self.0;
        if self.has(EventKind::SynRetransmission) {
            reported &= !(1 << EventKind::Retransmission as u32);
        }
        // The kinds' bits by their place in `ALL_KINDS`, the order they are reported in.
        let mut by_place = 0u32;
        while reported != 0 {
            by_place |= 1 << PLACE_OF_KIND[reported.trailing_zeros() as usize];
            reported &= reported - 1;
        }
        std::iter::from_fn(move || {
            let place = by_place.trailing_zeros() as usize;
            by_place &= by_place.wrapping_sub(1);
            ALL_KINDS.get(place).copied()
        })
    }
}

/// Each kind's place in `ALL_KINDS`, by the kind's discriminant.
const PLACE_OF_KIND: [u8; ALL_KINDS.len()] = {
    let mut places = [0; ALL_KINDS.len()];
    let mut place = 0;
    while place < ALL_KINDS.len() {
        places[ALL_KINDS[place] as usize] = place as u8;
        place += 1;
    }
    places
};

const ALL_KINDS: [EventKind; 16] = [
    EventKind::ReusedPorts,
    EventKind::SynRetransmission,
    EventKind::ZeroWindowProbe,
    EventKind::ZeroWindow,
    EventKind::LostSegment,
    EventKind::KeepAlive,
    EventKind::WindowUpdate,
    EventKind::WindowFull,
    EventKind::KeepAliveAck,
    EventKind::ZeroWindowProbeAck,
    EventKind::DuplicateAck,
    EventKind::AckLostSegment,
    EventKind::FastRetransmission,
    EventKind::OutOfOrder,
    EventKind::SpuriousRetransmission,
    EventKind::Retransmission,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn raised(kinds: &[EventKind]) -> EventSet {
        let mut set = EventSet::default();
        for &kind in kinds {
            set.raise(kind);
        }
        set
    }

    #[test]
    fn kinds_come_in_their_reported_order_whatever_the_order_raised() {
        let set = raised(&[
            EventKind::Retransmission,
            EventKind::WindowUpdate,
            EventKind::ReusedPorts,
            EventKind::DuplicateAck,
        ]);
        let kinds: Vec<EventKind> = set.kinds().collect();
        assert_eq!(
            kinds,
            [
                EventKind::ReusedPorts,
                EventKind::WindowUpdate,
                EventKind::DuplicateAck,
                EventKind::Retransmission
            ]
        );
        assert_eq!(EventSet::default().kinds().count(), 0);
    }

    #[test]
    fn a_syn_sent_again_is_no_retransmission_besides() {
        let set = raised(&[EventKind::Retransmission, EventKind::SynRetransmission]);
        let kinds: Vec<EventKind> = set.kinds().collect();
        assert_eq!(kinds, [EventKind::SynRetransmission]);
    }

    #[test]
    fn every_kind_is_reported() {
        for &kind in &ALL_KINDS {
            assert_eq!(raised(&[kind]).kinds().collect::<Vec<_>>(), [kind]);
        }
    }
}
