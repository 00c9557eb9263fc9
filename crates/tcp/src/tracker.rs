//! The connection table: finds each segment's connection instance and runs it.

use decode::{Endpoint, Segment};
use rustc_hash::FxHashMap;

use crate::connection::Connection;
use crate::event::{Event, EventKind};
use crate::summary::ConnectionSummary;
use crate::view::SegmentView;

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

/// Follows every connection of a capture, one segment at a time.
#[derive(Default)]
pub struct Tracker {
    /// Where each live connection lies in `slots`.
    live: FxHashMap<FlowKey, usize>,
    /// The live connections, in the order they were opened; a slot freed by
    /// a sweep is reused.
    slots: Vec<Option<Connection>>,
    free_slots: Vec<usize>,
    /// The previous segment's flow and slot: consecutive segments mostly
    /// belong to one connection, which is then found without a lookup.
    last: Option<(FlowKey, usize)>,
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

    /// Analyses one segment, queueing the events it raises, and says what it made of it.
    pub fn process(&mut self, segment: &Segment) -> SegmentView {
        self.latest_ns = self.latest_ns.max(segment.timestamp_ns);
        let key = flow_key(segment);
        let (slot, opened) = match self.last {
            Some((last_key, slot)) if last_key == key => (slot, false),
            _ => self.find_or_open(key, segment),
        };
        self.last = Some((key, slot));
        let Some(connection) = self.slots[slot].as_mut() else {
            unreachable!("a live flow's slot holds its connection");
        };
        if !opened {
            let idle = segment.timestamp_ns - connection.last_ns > IDLE_LIMIT_NS;
            if connection.is_reused_by(segment) || idle {
                let reused = !idle;
                let next = Connection::new(self.next_id, segment);
                self.next_id += 1;
                self.retired
                    .push(std::mem::replace(connection, next).summary());
                if reused {
                    self.events.push(reused_ports_event(connection, segment));
                }
            }
        }
        let view = connection.process(segment);
        for kind in view.events.kinds() {
            self.events.push(Event {
                frame: segment.frame,
                timestamp_ns: segment.timestamp_ns,
                connection: connection.id,
                direction: view.direction,
                kind,
                seq: view.seq,
                ack: view.ack,
                len: view.len,
                window: view.window,
                value: if kind == EventKind::DuplicateAck {
                    connection.duplicate_ack_run(view.direction)
                } else {
                    0
                },
            });
        }
        if self.latest_ns - self.last_sweep_ns > SWEEP_INTERVAL_NS {
            self.sweep();
        }
        view
    }

    /// The slot of the flow's live connection, or of a new one started by
    /// this segment (then true).
    fn find_or_open(&mut self, key: FlowKey, segment: &Segment) -> (usize, bool) {
        if let Some(&slot) = self.live.get(&key) {
            return (slot, false);
        }
        let connection = Some(Connection::new(self.next_id, segment));
        self.next_id += 1;
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.slots[slot] = connection;
                slot
            }
            None => {
                self.slots.push(connection);
                self.slots.len() - 1
            }
        };
        self.live.insert(key, slot);
        (slot, true)
    }

    /// Takes the events raised since the last call, in frame order.
    pub fn drain_events(&mut self) -> std::vec::Drain<'_, Event> {
        self.events.drain(..)
    }

    /// Summarizes closed or long-idle connections and frees their state.
    fn sweep(&mut self) {
        self.last_sweep_ns = self.latest_ns;
        self.last = None;
        let now = self.latest_ns;
        let (slots, free_slots, retired) =
            (&mut self.slots, &mut self.free_slots, &mut self.retired);
        self.live.retain(|_, &mut slot| {
            let Some(connection) = &slots[slot] else {
                return false;
            };
            let silent = now - connection.last_ns;
            let done =
                (connection.is_closed() && silent > CLOSED_LINGER_NS) || silent > IDLE_LIMIT_NS;
            if done {
                retired.push(connection.summary());
                slots[slot] = None;
                free_slots.push(slot);
            }
            !done
        });
    }

    /// Every connection's summary, in the order connections were first seen.
    pub fn finish(self) -> Vec<ConnectionSummary> {
        let mut live: Vec<&Connection> = self.slots.iter().flatten().collect();
        live.sort_by_cached_key(|connection| connection.id);
        let live = summarize(&live);
        let mut retired = self.retired;
        if retired.is_empty() {
            return live;
        }
        if !retired.windows(2).all(|pair| pair[0].id < pair[1].id) {
            // Summaries are large: sorting keys and then placing each once moves far less.
            retired.sort_by_cached_key(|summary| summary.id);
        }
        let mut all = Vec::with_capacity(retired.len() + live.len());
        let mut retired = retired.into_iter().peekable();
        for summary in live {
            while let Some(earlier) = retired.next_if(|retired| retired.id < summary.id) {
                all.push(earlier);
            }
            all.push(summary);
        }
        all.extend(retired);
        all
    }
}

/// Past this many connections, summaries are built on two threads, half each.
const SUMMARIES_ON_TWO_THREADS: usize = 4096;

/// The summaries of `connections`, in their order.
fn summarize(connections: &[&Connection]) -> Vec<ConnectionSummary> {
    let summarize_all = |connections: &[&Connection]| -> Vec<ConnectionSummary> {
        connections
            .iter()
            .map(|connection| connection.summary())
            .collect()
    };
    if connections.len() < SUMMARIES_ON_TWO_THREADS {
        return summarize_all(connections);
    }
    let (first, second) = connections.split_at(connections.len() / 2);
    std::thread::scope(|scope| {
        let second = scope.spawn(|| summarize_all(second));
        let mut summaries = Vec::with_capacity(connections.len());
        summaries.extend(first.iter().map(|connection| connection.summary()));
        summaries.extend(second.join().expect("summarizing thread panicked"));
        summaries
    })
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
