//! Packet-level detail of a few chosen connections, for the per-connection
//! charts (window and bytes in flight, RTT, time-sequence, ladder), kept from
//! the `tcp` stage's own view of each segment: relative sequence numbers,
//! scaled windows, bytes in flight and round trips are `tcp`'s, not recomputed.
//!
//! Memory is bounded: at most [`MAX_CONNECTIONS`] connections, and per
//! connection the first [`LADDER_PACKETS`] packets in full, an evenly thinned
//! sample of at most [`MAX_POINTS`] packets over the whole connection, up to
//! [`MAX_RESENT`] retransmissions, and at most [`MAX_POINTS`] RTT samples.

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use tcp::{Direction, SegmentView};

/// Connections detailed at most.
pub const MAX_CONNECTIONS: usize = 100;
/// Points per connection in the sampled series.
pub const MAX_POINTS: usize = 2000;
/// Packets kept in full from the start of each connection, for the ladder.
pub const LADDER_PACKETS: usize = 300;
/// Retransmitted packets kept per connection besides the sample.
pub const MAX_RESENT: usize = 500;

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

#[derive(Debug, Clone)]
struct Collecting {
    ladder: Vec<Packet>,
    sample: Thinned<Packet>,
    resent: Vec<Packet>,
    resent_seen: u64,
    rtt: Thinned<RttSample>,
}

impl Collecting {
    fn new() -> Self {
        Collecting {
            ladder: Vec::new(),
            sample: Thinned::new(),
            resent: Vec::new(),
            resent_seen: 0,
            rtt: Thinned::new(),
        }
    }

    fn observe(&mut self, view: &SegmentView) {
        let from_client = view.direction == Direction::ClientToServer;
        if let Some(rtt_ns) = view.rtt_sample_ns {
            self.rtt.push(RttSample {
                timestamp_ns: view.timestamp_ns,
                from_client: !from_client,
                rtt_ns,
            });
        }
        let packet = Packet {
            frame: view.frame,
            timestamp_ns: view.timestamp_ns,
            from_client,
            seq: view.seq,
            ack: view.ack,
            len: view.len,
            flags: view.flags.0,
            window: view.window,
            in_flight: view.in_flight.unwrap_or(0),
            resent: view.resent(),
        };
        if self.ladder.len() < LADDER_PACKETS {
            self.ladder.push(packet);
        }
        self.sample.push(packet);
        if packet.resent {
            self.resent_seen += 1;
            if self.resent.len() < MAX_RESENT {
                self.resent.push(packet);
            }
        }
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

    pub fn observe(&mut self, view: &SegmentView) {
        if !self.wanted.contains(&view.connection) {
            return;
        }
        self.collecting
            .entry(view.connection)
            .or_insert_with(Collecting::new)
            .observe(view);
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
