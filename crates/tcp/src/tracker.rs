//! The connection table: finds each segment's connection instance and runs it.

use std::collections::hash_map::Entry;

use decode::{Endpoint, Segment};
use rustc_hash::FxHashMap;

use crate::connection::Connection;
use crate::event::{Direction, Event, EventKind};
use crate::summary::ConnectionSummary;

/// A closed connection is summarized once this much capture time passes without packets.
const CLOSED_LINGER_NS: i64 = 120_000_000_000;
/// An open connection silent this long is summarized too; a later packet starts a new one.
const IDLE_LIMIT_NS: i64 = 3_600_000_000_000;
/// How often (in capture time) the table is swept for connections to retire.
const SWEEP_INTERVAL_NS: i64 = 10_000_000_000;

/// The two endpoints in a fixed order, so both directions find the same entry.
type FlowKey = (Endpoint, Endpoint);

fn flow_key(segment: &Segment) -> FlowKey {
    if segment.src <= segment.dst {
        (segment.src, segment.dst)
    } else {
        (segment.dst, segment.src)
    }
}

/// Where a segment landed: its connection and direction, and whether it
/// carried data sent before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tracked {
    pub connection: u64,
    pub direction: Direction,
    pub resent: bool,
}

/// Follows every connection of a capture, one segment at a time.
#[derive(Default)]
pub struct Tracker {
    /// Boxed: the table's entries stay small, so growing it moves little.
    live: FxHashMap<FlowKey, Box<Connection>>,
    retired: Vec<ConnectionSummary>,
    events: Vec<Event>,
    next_id: u64,
    latest_ns: i64,
    last_sweep_ns: i64,
}

impl Tracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Analyses one segment, queueing the events it raises, and says where it landed.
    pub fn process(&mut self, segment: &Segment) -> Tracked {
        self.latest_ns = self.latest_ns.max(segment.timestamp_ns);
        let key = flow_key(segment);
        let connection = match self.live.entry(key) {
            Entry::Occupied(entry) => {
                let current = entry.into_mut();
                let idle = segment.timestamp_ns - current.last_ns > IDLE_LIMIT_NS;
                if current.is_reused_by(segment) || idle {
                    let reused = !idle;
                    let next = Connection::new(self.next_id, segment);
                    self.next_id += 1;
                    self.retired
                        .push(std::mem::replace(&mut **current, next).summary());
                    if reused {
                        self.events.push(reused_ports_event(current, segment));
                    }
                }
                current
            }
            Entry::Vacant(entry) => {
                let id = self.next_id;
                self.next_id += 1;
                entry.insert(Box::new(Connection::new(id, segment)))
            }
        };
        let (direction, flagged, rel) = connection.process(segment);
        for kind in flagged.kinds() {
            self.events.push(Event {
                frame: segment.frame,
                timestamp_ns: segment.timestamp_ns,
                connection: connection.id,
                direction,
                kind,
                seq: rel.seq,
                ack: rel.ack,
                len: rel.len,
                window: rel.window,
                value: if kind == EventKind::DuplicateAck {
                    connection.duplicate_ack_run(direction)
                } else {
                    0
                },
            });
        }
        let tracked = Tracked {
            connection: connection.id,
            direction,
            resent: flagged.has(EventKind::Retransmission)
                || flagged.has(EventKind::FastRetransmission)
                || flagged.has(EventKind::SpuriousRetransmission),
        };
        if self.latest_ns - self.last_sweep_ns > SWEEP_INTERVAL_NS {
            self.sweep();
        }
        tracked
    }

    /// Takes the events raised since the last call, in frame order.
    pub fn drain_events(&mut self) -> std::vec::Drain<'_, Event> {
        self.events.drain(..)
    }

    /// Summarizes closed or long-idle connections and frees their state.
    fn sweep(&mut self) {
        self.last_sweep_ns = self.latest_ns;
        let now = self.latest_ns;
        let retired = &mut self.retired;
        self.live.retain(|_, connection| {
            let silent = now - connection.last_ns;
            let done =
                (connection.is_closed() && silent > CLOSED_LINGER_NS) || silent > IDLE_LIMIT_NS;
            if done {
                retired.push(connection.summary());
            }
            !done
        });
    }

    /// Every connection's summary, in the order connections were first seen.
    pub fn finish(self) -> Vec<ConnectionSummary> {
        let mut live: Vec<Box<Connection>> = self.live.into_values().collect();
        live.sort_by_cached_key(|connection| connection.id);
        let mut all = self.retired;
        all.reserve_exact(live.len());
        all.extend(live.into_iter().map(|connection| connection.summary()));
        if !all.windows(2).all(|pair| pair[0].id < pair[1].id) {
            // Summaries are large: sorting keys and then placing each once moves far less.
            all.sort_by_cached_key(|summary| summary.id);
        }
        all
    }
}

fn reused_ports_event(connection: &Connection, segment: &Segment) -> Event {
    Event {
        frame: segment.frame,
        timestamp_ns: segment.timestamp_ns,
        connection: connection.id,
        direction: connection.direction_of(segment),
        kind: EventKind::ReusedPorts,
        seq: 0,
        ack: 0,
        len: segment.payload_len,
        window: u64::from(segment.window),
        value: 0,
    }
}
