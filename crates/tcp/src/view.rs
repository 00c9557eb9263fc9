//! What the tracker made of one segment: a plain, typed record in its
//! connection's relative terms, for every later stage that looks at packets
//! (transactions, the report's ladder, the one-connection view). Later
//! stages read these; none of them tracks sequence numbers again.

use decode::Flags;

use crate::direction::SideRtts;
use crate::event::{Direction, EventKind, EventSet};
use crate::release::{Release, Wait};
use crate::seq::{self, SeqNumber};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentView {
    pub frame: u64,
    pub timestamp_ns: i64,
    pub connection: u64,
    pub direction: Direction,
    /// Relative to the sender's initial sequence number (0 = the ISN).
    pub seq: u32,
    /// Relative to the peer's initial sequence number; 0 without the ACK flag.
    pub ack: u32,
    /// Payload bytes.
    pub len: u32,
    pub flags: Flags,
    /// The receive window the sender of this segment advertised, in bytes
    /// (scaled when the handshake said so).
    pub window: u64,
    /// The sender's bytes sent and not yet acknowledged, after this segment;
    /// None when a gap in the capture leaves it unknown.
    pub in_flight: Option<u64>,
    /// The analysis events it raised (Wireshark's `tcp.analysis.*`).
    pub events: EventSet,
    /// The peer's bytes it is the first to acknowledge past all the capture
    /// saw the peer send: data delivered without the capture seeing it (the
    /// capture dropped it; Wireshark's ACKed unseen segment).
    pub acked_unseen: u32,
    /// The round trip this segment's ACK measured for the peer's data, if any.
    pub rtt_sample_ns: Option<i64>,
    /// For a segment carrying data: since when its sender had sent nothing
    /// and what released it.
    pub wait: Option<Wait>,
    /// For data its sender sent (not a probe or a keep-alive): the round trip
    /// of its sender it left in, counted from 1 as Linux counts them: a
    /// flight ends when the ACK of its first segment reaches the sender, and
    /// the data sent after that is the next flight.
    pub flight: Option<u32>,
    /// Round trips from the capture point to this segment's sender and to
    /// its receiver, the least seen so far (0 when not known yet).
    pub rtts: SideRtts,
    /// The packet's own numbers, as they crossed the wire.
    pub wire: Wire,
}

/// What identifies a packet at every capture point of its path, whatever a
/// NAT rewrote between them: its IP ID, its TTL, and its sequence and
/// acknowledgement numbers as sent (not relative: another point may not
/// have seen the connection start, and a rewriter shifts them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Wire {
    /// The IPv4 identification field; None for IPv6.
    pub ip_id: Option<u16>,
    /// IPv4 TTL or IPv6 hop limit as captured.
    pub ttl: u8,
    pub seq: SeqNumber,
    /// The acknowledgement number; 0 without the ACK flag.
    pub ack: SeqNumber,
}

impl SegmentView {
    /// Where its payload begins in its sender's sequence space (relative).
    pub fn start(&self) -> seq::SeqNumber {
        seq::SeqNumber(self.seq)
    }

    /// Just past its payload.
    pub fn end(&self) -> seq::SeqNumber {
        self.start().advanced(self.len)
    }

    /// A keep-alive or a zero-window probe: its byte, if any, is the
    /// stack's, not a message's.
    pub fn is_probe(&self) -> bool {
        self.events.has(EventKind::KeepAlive) || self.events.has(EventKind::ZeroWindowProbe)
    }

    /// It carried data sent before.
    pub fn resent(&self) -> bool {
        self.events.resent()
    }

    /// It carried data, or a SYN or FIN, sent before.
    pub fn sent_again(&self) -> bool {
        self.resent() || self.events.has(EventKind::SynRetransmission)
    }

    /// It takes up sequence space: data, a SYN or a FIN.
    pub fn occupies_sequence_space(&self) -> bool {
        self.len > 0 || self.flags.syn() || self.flags.fin()
    }

    /// The sequence number just past it (its data, SYN and FIN), as the
    /// packet carried it: what an ACK of all of it acknowledges.
    pub fn wire_end(&self) -> SeqNumber {
        let controls = u32::from(self.flags.syn()) + u32::from(self.flags.fin());
        self.wire.seq + self.len + controls
    }

    /// A timer resent it, and the capture never saw it sent before: it was
    /// lost on the way here (no analysis event says so).
    pub fn resent_unseen(&self) -> bool {
        let by_timer = matches!(
            self.wait.map(|wait| wait.ended_by),
            Some(Release::Timer { .. })
        );
        by_timer && !self.resent()
    }

    /// For a FIN, the sequence number just past it: what an ACK of the
    /// close acknowledges.
    pub fn close_end(&self) -> Option<u32> {
        self.flags
            .fin()
            .then(|| self.seq.wrapping_add(self.len).wrapping_add(1))
    }

    /// It acknowledges the peer's data up to `end` (relative).
    pub fn acknowledges(&self, end: u32) -> bool {
        self.flags.ack() && seq::at_or_before(end, self.ack)
    }
}
