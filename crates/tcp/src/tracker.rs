//! The connection table: finds each segment's connection instance and runs it.
//!
//! Memory follows connections. A connection's analysis state is freed once it
//! is retired (closed and silent, or idle), leaving its summary. Given a
//! memory budget, the table also stays within it however many connections a
//! capture holds: when live connections crowd it, the closed, the bare
//! handshake attempts and then the longest silent are retired early; when
//! summaries crowd it, bare attempts and then uneventful connections are
//! counted without a summary. Bare attempts are always counted per server
//! ([`UnansweredSyns`]), so a SYN flood costs little.

use decode::{Endpoint, Segment};

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::capture_wide::{CaptureDrops, DropsSeen, HostNumbering, SweepClock};
use crate::connection::Connection;
use crate::event::{Event, EventKind};
use crate::recorded_twice::Repeats;
use crate::summary::{ConnState, ConnectionSummary};
use crate::syn_flood::{SynCounts, UnansweredSyns};
use crate::view::SegmentView;

/// A closed connection is summarized once this much capture time passes without packets.
const CLOSED_LINGER_NS: i64 = 120_000_000_000;
/// An open connection silent this long is summarized too; a later packet starts a new one.
const IDLE_LIMIT_NS: i64 = 3_600_000_000_000;

/// What a live connection costs beyond its inline size: its table entry, its
/// history and the short queues of a small connection (measured in `bench/`).
const LIVE_EXTRA_BYTES: u64 = 600;
/// What a kept summary costs beyond its inline size: its history and retries.
const SUMMARY_EXTRA_BYTES: u64 = 64;
/// Live connections always allowed, however small the budget.
const MIN_LIVE_CONNECTIONS: usize = 64;

/// Shares of the budget summaries may fill: bare handshake attempts are
/// listed up to the first, uneventful connections up to the second, any
/// connection up to the third.
const LIST_BARE_ATTEMPTS: f64 = 0.25;
const LIST_UNEVENTFUL: f64 = 0.5;
const LIST_ANY: f64 = 0.75;

/// A live connection's cost counts the summary it becomes at the end, when
/// both exist for a moment.
fn live_cost() -> u64 {
    std::mem::size_of::<Connection>() as u64 + LIVE_EXTRA_BYTES + summary_cost()
}

fn summary_cost() -> u64 {
    std::mem::size_of::<ConnectionSummary>() as u64 + SUMMARY_EXTRA_BYTES
}

/// A connection retired without a summary, for the stages that count connections.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Departed {
    pub id: u64,
    pub first_ns: i64,
    pub last_ns: i64,
    pub failed_setup: bool,
}

/// What staying within the memory budget cost.
#[derive(Debug, Default, Clone, PartialEq, Serialize, record::Wire)]
pub struct Trimmed {
    /// Open connections retired before falling silent, to free their state:
    /// a later packet of theirs starts a new connection.
    pub retired_early: u64,
    /// Handshakes that never completed, counted per server but not listed.
    pub attempts_not_listed: u64,
    /// Connections counted (in totals and the timeline) but not listed.
    pub connections_not_listed: u64,
    /// Requests and answers of the connections listed that were counted
    /// (in their connection's ledger and the timeline) but not listed; a
    /// spread of them over the whole capture is. Set by the stages after
    /// the tracker.
    pub transactions_not_listed: u64,
}

impl Trimmed {
    pub fn is_empty(&self) -> bool {
        *self == Trimmed::default()
    }
}

/// Everything the tracker found.
pub struct Tracked {
    /// Every listed connection's summary, in the order connections were first seen.
    pub connections: Vec<ConnectionSummary>,
    /// Handshakes that never completed, per server, the most attempted first.
    pub unanswered_syns: Vec<UnansweredSyns>,
    pub trimmed: Trimmed,
    /// The frames left out as copies of packets the capture already held.
    pub repeats: Repeats,
}

/// The two endpoints in a fixed order, so both directions find the same entry.
pub(crate) type FlowKey = (Endpoint, Endpoint);

pub(crate) fn flow_key(segment: &Segment) -> FlowKey {
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
    /// Summaries listed so far, kept in `retired` or not (see [`Tracker::keep_no_summaries`]).
    listed: u64,
    /// The summaries are counted against the budget but not kept.
    keeps_no_summaries: bool,
    events: Vec<Event>,
    next_id: u64,
    /// A shard of a capture's connections: told each host's numbering and
    /// when to sweep, by a reader that sees every segment (see
    /// [`crate::capture_wide`]); otherwise the tracker notes both itself.
    in_shard: bool,
    sweeps: SweepClock,
    /// Bytes the live connections and the summaries may hold; None for no limit.
    budget_bytes: Option<u64>,
    syns: SynCounts,
    hosts: HostNumbering,
    departed: Vec<Departed>,
    /// Connections retired with a summary, by id, until drained.
    concluded: Vec<u64>,
    trimmed: Trimmed,
    repeats: Repeats,
    capture_drops: CaptureDrops,
    drops_seen: DropsSeen,
}

impl Tracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// For a shard of a capture's connections, which is told each host's
    /// numbering ([`Tracker::process_in_shard`]) and when to sweep
    /// ([`Tracker::sweep_at`]), and knows of drops as `capture_drops` says.
    pub fn for_shard(capture_drops: CaptureDrops) -> Self {
        Tracker {
            in_shard: true,
            capture_drops,
            ..Self::default()
        }
    }

    /// What this tracker saw of the capture dropping packets.
    pub fn drops_seen(&self) -> DropsSeen {
        self.drops_seen
    }

    /// Keeps live connections and summaries within `bytes`, from now on.
    pub fn set_memory_budget(&mut self, bytes: u64) {
        self.budget_bytes = Some(bytes);
    }

    /// Counts the summaries against the budget without keeping them, from
    /// now on: a pass that only numbers connections (and hands on their
    /// segments) makes the choices, and so gives the ids, of a pass that
    /// keeps them, without their memory; [`Tracker::finish_all`] then lists
    /// no connection.
    pub fn keep_no_summaries(&mut self) {
        self.keeps_no_summaries = true;
    }

    /// What the live connections and the summaries hold, as the budget counts it.
    pub fn held_bytes(&self) -> u64 {
        self.live.len() as u64 * live_cost() + self.summaries_bytes()
    }

    fn summaries_bytes(&self) -> u64 {
        self.listed * summary_cost()
    }

    /// Takes the connections retired without a summary since the last call.
    pub fn drain_departed(&mut self) -> std::vec::Drain<'_, Departed> {
        self.departed.drain(..)
    }

    /// Takes the ids of the connections retired with a summary since the
    /// last call: no segment of theirs comes any more.
    pub fn drain_concluded(&mut self) -> std::vec::Drain<'_, u64> {
        self.concluded.drain(..)
    }

    /// Analyses one segment, queueing the events it raises, and says what it
    /// made of it; None for a frame the capture holds twice (see
    /// `recorded_twice`), counted and left out.
    pub fn process(&mut self, segment: &Segment) -> Option<SegmentView> {
        debug_assert!(!self.in_shard, "a shard is told each host's numbering");
        let key = flow_key(segment);
        let elsewhere = self.hosts.note_on(segment, key);
        let view = self.analyze(segment, key, elsewhere);
        if let Some(now) = self.sweeps.after(segment.timestamp_ns) {
            self.sweep_at(now);
        }
        view
    }

    /// [`Tracker::process`] in a shard: `elsewhere` is what the reader's
    /// [`HostNumbering`] noted for the segment.
    pub fn process_in_shard(
        &mut self,
        segment: &Segment,
        elsewhere: Option<u16>,
    ) -> Option<SegmentView> {
        self.analyze(segment, flow_key(segment), elsewhere)
    }

    fn analyze(
        &mut self,
        segment: &Segment,
        key: FlowKey,
        elsewhere: Option<u16>,
    ) -> Option<SegmentView> {
        let (slot, opened) = match self.last {
            Some((last_key, slot)) if last_key == key => (slot, false),
            _ => {
                let found = self.find_or_open(key, segment);
                self.last = Some((key, found.0));
                found
            }
        };
        let Some(connection) = self.slots[slot].as_mut() else {
            unreachable!("a live flow's slot holds its connection");
        };
        if !opened {
            let idle = segment.timestamp_ns.saturating_sub(connection.last_ns) > IDLE_LIMIT_NS;
            if connection.is_reused_by(segment) || idle {
                let reused = !idle;
                let next = Connection::new(self.next_id, segment);
                self.next_id += 1;
                let previous = std::mem::replace(connection, next);
                if reused {
                    self.events.push(reused_ports_event(connection, segment));
                }
                self.retire(&previous);
            }
        }
        let Some(connection) = self.slots[slot].as_mut() else {
            unreachable!("a live flow's slot holds its connection");
        };
        if let Some(repeat) = connection.repeat_of(segment) {
            self.repeats.count(repeat);
            return None;
        }
        if let Some(other) = elsewhere {
            connection.host_numbered_elsewhere(segment, other);
        }
        let drops_known = match self.capture_drops {
            CaptureDrops::Learnt => self.drops_seen.first_frame.is_some(),
            CaptureDrops::KnownAfter(first) => first.is_some_and(|first| first < segment.frame),
        };
        let (view, rests_on_no_drops) = connection.process(segment, drops_known);
        if rests_on_no_drops {
            self.drops_seen.last_resting_frame = Some(segment.frame);
        }
        if view.acked_unseen > 0 && self.drops_seen.first_frame.is_none() {
            self.drops_seen.first_frame = Some(segment.frame);
        }
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
        Some(view)
    }

    /// The slot of the flow's live connection, or of a new one started by
    /// this segment (then true).
    fn find_or_open(&mut self, key: FlowKey, segment: &Segment) -> (usize, bool) {
        if let Some(&slot) = self.live.get(&key) {
            return (slot, false);
        }
        if self.live.len() >= self.live_capacity() {
            self.relieve();
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

    /// Summarizes the connections closed and silent, or idle, at `now`, and
    /// frees their state: told by the reader in a shard (see [`SweepClock`]).
    pub fn sweep_at(&mut self, now: i64) {
        self.retire_where(|connection| {
            let silent = now.saturating_sub(connection.last_ns);
            (connection.is_closed() && silent > CLOSED_LINGER_NS) || silent > IDLE_LIMIT_NS
        });
    }

    /// Retires every live connection for which `done` says so.
    fn retire_where(&mut self, mut done: impl FnMut(&Connection) -> bool) {
        self.last = None;
        let mut leaving = Vec::new();
        let slots = &mut self.slots;
        self.live.retain(|_, &mut slot| {
            let Some(connection) = &slots[slot] else {
                return false;
            };
            if !done(connection) {
                return true;
            }
            leaving.push(slot);
            false
        });
        leaving.sort_unstable();
        for slot in leaving {
            if let Some(connection) = self.slots[slot].take() {
                self.retire(&connection);
            }
            self.free_slots.push(slot);
        }
    }

    /// How many live connections the budget leaves room for.
    fn live_capacity(&self) -> usize {
        let Some(budget) = self.budget_bytes else {
            return usize::MAX;
        };
        let room = budget.saturating_sub(self.summaries_bytes()) / live_cost();
        usize::try_from(room)
            .unwrap_or(usize::MAX)
            .max(MIN_LIVE_CONNECTIONS)
    }

    /// Frees half the live connections' room: first the closed connections
    /// and the bare handshake attempts, then the longest silent.
    fn relieve(&mut self) {
        let keep = self.live_capacity() / 2;
        let excess = self.live.len().saturating_sub(keep);
        if excess == 0 {
            return;
        }
        // The first to leave: those that lose nothing by it, then the longest silent.
        let mut order: Vec<(bool, i64, u64)> = self
            .slots
            .iter()
            .flatten()
            .map(|c| (!leaves_freely(c), c.last_ns, c.id))
            .collect();
        order.select_nth_unstable(excess - 1);
        let leaving: rustc_hash::FxHashSet<u64> =
            order[..excess].iter().map(|&(_, _, id)| id).collect();
        let mut early = 0;
        self.retire_where(|connection| {
            let leaves = leaving.contains(&connection.id);
            early += u64::from(leaves && !leaves_freely(connection));
            leaves
        });
        self.trimmed.retired_early += early;
    }

    /// What the summaries hold, as a share of the budget (0 without one).
    fn summaries_share(&self) -> f64 {
        self.budget_bytes.map_or(0.0, |budget| {
            self.summaries_bytes() as f64 / budget.max(1) as f64
        })
    }

    /// Keeps a retiring connection's summary, or counts it only when the
    /// budget has no room for it.
    fn retire(&mut self, connection: &Connection) {
        let share = self.summaries_share();
        if connection.is_bare_attempt() {
            let listed = share < LIST_BARE_ATTEMPTS;
            self.syns.record(connection, listed);
            if listed {
                self.list(connection.summary());
            } else {
                self.trimmed.attempts_not_listed += 1;
                self.departed.push(Departed {
                    id: connection.id,
                    first_ns: connection.first_ns(),
                    last_ns: connection.last_ns,
                    failed_setup: true,
                });
            }
            return;
        }
        let summary = connection.summary();
        let listed = share < LIST_UNEVENTFUL || (share < LIST_ANY && eventful(&summary));
        if listed {
            self.list(summary);
        } else {
            self.trimmed.connections_not_listed += 1;
            self.departed.push(Departed {
                id: summary.id,
                first_ns: summary.first_ns,
                last_ns: summary.last_ns,
                failed_setup: summary.state.failed_setup(),
            });
        }
    }

    fn list(&mut self, summary: ConnectionSummary) {
        self.listed += 1;
        self.concluded.push(summary.id);
        if !self.keeps_no_summaries {
            self.retired.push(summary);
        }
    }

    /// Every listed connection's summary, in the order connections were first seen.
    pub fn finish(self) -> Vec<ConnectionSummary> {
        self.finish_all().connections
    }

    /// The summaries, the unanswered handshakes per server and what the budget cost.
    pub fn finish_all(mut self) -> Tracked {
        let mut bare: Vec<&Connection> = self
            .slots
            .iter()
            .flatten()
            .filter(|c| c.is_bare_attempt())
            .collect();
        bare.sort_by_key(|connection| connection.id);
        for connection in bare {
            self.syns.record(connection, true);
        }
        // The summaries written in place leave room for the retired ones
        // after them: no list grows to hold both.
        let mut connections = if self.keeps_no_summaries {
            Vec::new()
        } else {
            summarized_in_place(std::mem::take(&mut self.slots))
        };
        connections.append(&mut self.retired);
        // In id order unless connections retired before live ones were
        // opened, or slots were reused: then sorted (by keys, then each
        // summary moved once, as summaries are large).
        if !connections.windows(2).all(|pair| pair[0].id < pair[1].id) {
            connections.sort_by_cached_key(|summary| summary.id);
        }
        Tracked {
            connections,
            unanswered_syns: self.syns.finish(),
            trimmed: self.trimmed,
            repeats: self.repeats,
        }
    }
}

/// Closed connections and bare handshake attempts lose nothing by retiring early.
fn leaves_freely(connection: &Connection) -> bool {
    connection.is_closed() || connection.is_bare_attempt()
}

/// Whether a connection shows trouble worth keeping its summary for.
fn eventful(summary: &ConnectionSummary) -> bool {
    let troubled = |d: &crate::summary::DirectionSummary| {
        d.retransmissions.total > 0 || d.lost_segments > 0 || d.zero_windows > 0
    };
    summary.state != ConnState::SF
        || troubled(&summary.client_to_server)
        || troubled(&summary.server_to_client)
}

/// The live connections' summaries, in their slots' order, each written
/// over the memory of the slots as their connections are summarized and
/// dropped (a summary is a third of a connection's size): the connections
/// and their summaries never stand in memory side by side in full.
fn summarized_in_place(slots: Vec<Option<Connection>>) -> Vec<ConnectionSummary> {
    slots
        .into_iter()
        .filter_map(|slot| slot.map(|connection| connection.summary()))
        .collect()
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
