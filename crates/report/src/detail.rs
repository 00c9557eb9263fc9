//! Packet-level detail of a few chosen connections, for the per-connection
//! charts (window and bytes in flight, RTT, time-sequence, ladder).
//!
//! Memory is bounded: at most [`MAX_CONNECTIONS`] connections, and per
//! connection the first [`LADDER_PACKETS`] packets in full, an evenly thinned
//! sample of at most [`MAX_POINTS`] packets over the whole connection, up to
//! [`MAX_RESENT`] retransmissions, and at most [`MAX_POINTS`] RTT samples.

use std::collections::VecDeque;

use decode::Segment;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use tcp::{Direction, Tracked};

/// Connections detailed at most.
pub const MAX_CONNECTIONS: usize = 100;
/// Points per connection in the sampled series.
pub const MAX_POINTS: usize = 2000;
/// Packets kept in full from the start of each connection, for the ladder.
pub const LADDER_PACKETS: usize = 300;
/// Retransmitted packets kept per connection besides the sample.
pub const MAX_RESENT: usize = 500;
/// Unacknowledged segments remembered per direction for RTT samples.
const RTT_QUEUE: usize = 4096;

/// One packet of a detailed connection.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Packet {
    pub frame: u64,
    pub timestamp_ns: i64,
    pub from_client: bool,
    /// Relative to the sender's first sequence number.
    pub seq: u32,
    /// Relative to the peer's first sequence number; 0 without ACK.
    pub ack: u32,
    pub len: u32,
    pub flags: u8,
    /// Advertised receive window in bytes, scaled when the handshake said so.
    pub window: u64,
    /// The sender's bytes sent and not yet acknowledged, after this packet.
    pub in_flight: u64,
    pub resent: bool,
}

/// A data-to-ACK round trip at the capture point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RttSample {
    pub timestamp_ns: i64,
    /// The direction of the data that was acknowledged.
    pub from_client: bool,
    pub rtt_ns: i64,
}

/// What was kept of one connection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectionDetail {
    pub connection: u64,
    pub packets_seen: u64,
    /// The first packets, every one.
    pub ladder: Vec<Packet>,
    /// Every `sample_stride`-th packet over the whole connection.
    pub sample: Vec<Packet>,
    pub sample_stride: u64,
    pub resent: Vec<Packet>,
    pub resent_seen: u64,
    pub rtt: Vec<RttSample>,
    pub rtt_stride: u64,
}

/// Keeps every `stride`-th item, doubling the stride whenever it holds
/// [`MAX_POINTS`] (an even number, so the item due is still due after halving).
#[derive(Debug, Clone)]
struct Thinned<T> {
    items: Vec<T>,
    stride: u64,
    seen: u64,
    /// The position of the next item to keep.
    due: u64,
}

impl<T> Thinned<T> {
    fn new() -> Self {
        Thinned {
            items: Vec::new(),
            stride: 1,
            seen: 0,
            due: 0,
        }
    }

    fn push(&mut self, item: T) {
        if self.seen == self.due {
            if self.items.len() == MAX_POINTS {
                let mut position = 0;
                self.items.retain(|_| {
                    position += 1;
                    position % 2 == 1
                });
                self.stride *= 2;
            }
            self.items.push(item);
            self.due += self.stride;
        }
        self.seen += 1;
    }
}

/// Sequence state of one direction.
#[derive(Debug, Clone, Default)]
struct Side {
    isn: Option<u32>,
    window_scale: Option<u8>,
    /// Highest relative sequence end sent.
    sent_end: u32,
    /// Highest relative ACK received from the peer.
    acked: u32,
    /// (relative sequence end, time sent) of first transmissions not yet acknowledged.
    unacked: VecDeque<(u32, i64)>,
}

#[derive(Debug, Clone)]
struct Collecting {
    sides: [Side; 2],
    both_scale: bool,
    ladder: Vec<Packet>,
    sample: Thinned<Packet>,
    resent: Vec<Packet>,
    resent_seen: u64,
    rtt: Thinned<RttSample>,
}

impl Collecting {
    fn new() -> Self {
        Collecting {
            sides: [Side::default(), Side::default()],
            both_scale: false,
            ladder: Vec::new(),
            sample: Thinned::new(),
            resent: Vec::new(),
            resent_seen: 0,
            rtt: Thinned::new(),
        }
    }

    fn observe(&mut self, segment: &Segment, tracked: Tracked) {
        let from_client = tracked.direction == Direction::ClientToServer;
        let (me, peer) = if from_client { (0, 1) } else { (1, 0) };
        if segment.flags.syn() {
            self.sides[me].isn = Some(segment.seq);
            self.sides[me].window_scale = segment.options.window_scale;
            self.both_scale = self.sides.iter().all(|side| side.window_scale.is_some());
        }
        let isn = *self.sides[me].isn.get_or_insert(segment.seq);
        let seq = segment.seq.wrapping_sub(isn);
        let ack = match (segment.flags.ack(), self.sides[peer].isn) {
            (true, Some(peer_isn)) => segment.ack.wrapping_sub(peer_isn),
            _ => 0,
        };
        if let Some(rtt_ns) = self.acknowledge(peer, ack, segment) {
            self.rtt.push(RttSample {
                timestamp_ns: segment.timestamp_ns,
                from_client: !from_client,
                rtt_ns,
            });
        }
        let span =
            segment.payload_len + u32::from(segment.flags.syn()) + u32::from(segment.flags.fin());
        self.send(me, seq, span, segment.timestamp_ns, tracked.resent);
        let side = &self.sides[me];
        let packet = Packet {
            frame: segment.frame,
            timestamp_ns: segment.timestamp_ns,
            from_client,
            seq,
            ack,
            len: segment.payload_len,
            flags: segment.flags.0,
            window: self.scaled_window(me, segment),
            in_flight: u64::from(side.sent_end.wrapping_sub(side.acked).min(i32::MAX as u32)),
            resent: tracked.resent,
        };
        if self.ladder.len() < LADDER_PACKETS {
            self.ladder.push(packet);
        }
        self.sample.push(packet);
        if tracked.resent {
            self.resent_seen += 1;
            if self.resent.len() < MAX_RESENT {
                self.resent.push(packet);
            }
        }
    }

    fn scaled_window(&self, me: usize, segment: &Segment) -> u64 {
        let shift = match self.sides[me].window_scale {
            Some(shift) if self.both_scale && !segment.flags.syn() => shift.min(14),
            _ => 0,
        };
        u64::from(segment.window) << shift
    }

    /// Records what `me` sent; a retransmission makes pending RTT samples ambiguous (Karn).
    fn send(&mut self, me: usize, seq: u32, span: u32, at_ns: i64, resent: bool) {
        let side = &mut self.sides[me];
        let end = seq.wrapping_add(span);
        if resent {
            side.unacked.clear();
            return;
        }
        if span > 0 && is_after(end, side.sent_end) {
            side.sent_end = end;
            if side.unacked.len() == RTT_QUEUE {
                side.unacked.pop_front();
            }
            side.unacked.push_back((end, at_ns));
        }
    }

    /// Takes an ACK for `sender`'s data; returns the round trip of the newest segment it covers.
    fn acknowledge(&mut self, sender: usize, ack: u32, segment: &Segment) -> Option<i64> {
        if !segment.flags.ack() {
            return None;
        }
        let side = &mut self.sides[sender];
        if is_after(ack, side.acked) {
            side.acked = ack;
        }
        let mut newest = None;
        while let Some(&(end, sent_ns)) = side.unacked.front() {
            if is_after(end, ack) {
                break;
            }
            newest = Some(segment.timestamp_ns - sent_ns);
            side.unacked.pop_front();
        }
        newest
    }

    fn finish(self, connection: u64) -> ConnectionDetail {
        ConnectionDetail {
            connection,
            packets_seen: self.sample.seen,
            ladder: self.ladder,
            sample: self.sample.items,
            sample_stride: self.sample.stride,
            resent: self.resent,
            resent_seen: self.resent_seen,
            rtt: self.rtt.items,
            rtt_stride: self.rtt.stride,
        }
    }
}

/// `a` is later than `b` in sequence space.
fn is_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// Collects detail of the wanted connections as segments pass.
#[derive(Debug)]
pub struct Collector {
    wanted: FxHashSet<u64>,
    collecting: FxHashMap<u64, Collecting>,
}

impl Collector {
    /// Detail for these connection ids (the first [`MAX_CONNECTIONS`] of them).
    pub fn for_connections(ids: &[u64]) -> Self {
        Collector {
            wanted: ids.iter().copied().take(MAX_CONNECTIONS).collect(),
            collecting: FxHashMap::default(),
        }
    }

    pub fn observe(&mut self, segment: &Segment, tracked: Tracked) {
        if !self.wanted.contains(&tracked.connection) {
            return;
        }
        self.collecting
            .entry(tracked.connection)
            .or_insert_with(Collecting::new)
            .observe(segment, tracked);
    }

    /// The detail kept, by connection id.
    pub fn finish(self) -> Vec<ConnectionDetail> {
        let mut details: Vec<ConnectionDetail> = self
            .collecting
            .into_iter()
            .map(|(connection, collecting)| collecting.finish(connection))
            .collect();
        details.sort_by_key(|detail| detail.connection);
        details
    }
}
