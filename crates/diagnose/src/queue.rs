//! Queues standing before a bottleneck link, as the connections crossing a
//! path show them.
//!
//! A connection's own round trips show one when they rise with its bytes in
//! flight and stand well above the least. Beside a receiver whose sender
//! sends no timestamps, no round trip of the bulk data is timed at all; but
//! a handshake made while that data crossed the path waits in the same
//! queue (its SYN, SYN-ACK or ACK behind the data), and takes well over the
//! path's least round trip.

use std::net::IpAddr;

use rustc_hash::{FxHashMap, FxHashSet};
use tcp::{ConnectionSummary, Direction, DirectionSummary, RttStats};
use transactions::Transaction;

use crate::rules::{QUEUE_CORRELATION, QUEUE_RTT_RATIO, STANDING_QUEUE_MS};
use crate::Inputs;

/// A path on which a queue stood before the bottleneck.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedPath {
    /// The least round trip any of the path's connections showed (ms).
    pub least_ms: f64,
    /// Handshakes that waited behind another connection's bulk data, in
    /// time order.
    pub handshakes: Vec<QueuedHandshake>,
}

/// A handshake made while another connection's bulk data crossed the path,
/// that took well over the path's least round trip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueuedHandshake {
    pub connection: u64,
    pub syn_ns: i64,
    /// When its ACK completed it.
    pub ack_ns: i64,
    pub round_trip_ms: f64,
    /// The direction the bulk data it waited behind was crossing.
    pub behind: Direction,
}

impl QueuedPath {
    /// Whether a handshake waited behind data crossing in `direction`
    /// between `from_ns` and `to_ns`: a handshake under way then.
    pub fn handshake_queued_during(&self, direction: Direction, from_ns: i64, to_ns: i64) -> bool {
        self.handshakes
            .iter()
            .any(|h| h.behind == direction && h.syn_ns <= to_ns && h.ack_ns >= from_ns)
    }

    /// The handshakes' round trips, as round-trip statistics: the path's
    /// least, and their median and longest.
    pub fn handshake_round_trips(&self) -> Option<RttStats> {
        let mut round_trips: Vec<f64> = self.handshakes.iter().map(|h| h.round_trip_ms).collect();
        round_trips.sort_by(f64::total_cmp);
        let longest = *round_trips.last()?;
        Some(RttStats {
            samples: round_trips.len() as u64,
            min_ms: Some(self.least_ms),
            median_ms: Some(round_trips[round_trips.len() / 2]),
            max_ms: Some(longest),
            ..RttStats::default()
        })
    }
}

/// The client's and the server's address.
pub fn path(c: &ConnectionSummary) -> (IpAddr, IpAddr) {
    (c.client.ip, c.server.ip)
}

/// The paths on which a queue stood: some connection's round trips rose
/// with its bytes in flight, or a handshake waited behind another's data.
pub fn queued_paths(inputs: &Inputs) -> FxHashMap<(IpAddr, IpAddr), QueuedPath> {
    let mut on_path: FxHashMap<(IpAddr, IpAddr), OnPath> = FxHashMap::default();
    for c in inputs.connections {
        on_path.entry(path(c)).or_default().connections.push(c);
    }
    for t in inputs.transactions {
        if let Some(c) = inputs.connection(t.connection) {
            let spans = &mut on_path.entry(path(c)).or_default().spans;
            spans.extend(data_spans(t, c));
        }
    }
    let shown_by_samples: FxHashSet<(IpAddr, IpAddr)> = inputs
        .connections
        .iter()
        .filter(|c| c.directions().iter().any(|data| shows_queue(c, data)))
        .map(path)
        .collect();
    on_path
        .into_iter()
        .filter_map(|(key, mut on_path)| {
            let least_ms = on_path
                .connections
                .iter()
                .map(|c| least_round_trip_ms(c))
                .fold(f64::INFINITY, f64::min);
            let handshakes = on_path.queued_handshakes(least_ms);
            let queued = shown_by_samples.contains(&key) || !handshakes.is_empty();
            queued.then_some((
                key,
                QueuedPath {
                    least_ms,
                    handshakes,
                },
            ))
        })
        .collect()
}

/// A path's connections, and the times their data crossed it.
#[derive(Default)]
struct OnPath<'a> {
    connections: Vec<&'a ConnectionSummary>,
    spans: Vec<DataSpan>,
}

/// A message's data crossing a path: from its first segment to its last,
/// in one direction, and how long one of its segments takes to cross at
/// its rate.
struct DataSpan {
    first_ns: i64,
    last_ns: i64,
    direction: Direction,
    segment_ms: f64,
}

/// The request's and the answer's data of `t`, on connection `c`, where
/// more than one segment carried them.
fn data_spans<'a>(
    t: &'a Transaction,
    c: &'a ConnectionSummary,
) -> impl Iterator<Item = DataSpan> + 'a {
    let request = (
        Direction::ClientToServer,
        Some((t.request_start_ns, t.request_end_ns)),
        t.request_bytes,
    );
    let response = (
        Direction::ServerToClient,
        t.response_start_ns.zip(t.response_end_ns),
        t.response_bytes,
    );
    let largest = |direction| c.direction(direction).largest_segment;
    [request, response]
        .into_iter()
        .filter_map(move |(direction, span, bytes)| {
            let (first_ns, last_ns) = span?;
            let seconds = (last_ns - first_ns) as f64 / 1e9;
            (seconds > 0.0).then(|| DataSpan {
                first_ns,
                last_ns,
                direction,
                segment_ms: largest(direction) as f64 / (bytes as f64 / seconds).max(1.0) * 1e3,
            })
        })
}

impl OnPath<'_> {
    /// The handshakes made while other data crossed the path that stood
    /// above its least round trip as a queue does (see [`stands_above`]).
    fn queued_handshakes(&mut self, least_ms: f64) -> Vec<QueuedHandshake> {
        let spans = &mut self.spans;
        if spans.is_empty() {
            return Vec::new();
        }
        spans.sort_by_key(|span| span.first_ns);
        // For each prefix of the spans, the one that ends last.
        let mut latest_ending: Vec<usize> = Vec::with_capacity(spans.len());
        for (i, span) in spans.iter().enumerate() {
            let latest = match latest_ending.last() {
                Some(&j) if spans[j].last_ns >= span.last_ns => j,
                _ => i,
            };
            latest_ending.push(latest);
        }
        let mut queued: Vec<QueuedHandshake> = self
            .connections
            .iter()
            .filter(|c| c.handshake.syn_retries == 0)
            .filter_map(|c| {
                let syn_ns = c.handshake.syn_ns?;
                let round_trip_ms = c.handshake.rtt_to_server_ms? + c.handshake.rtt_to_client_ms?;
                // Data that began before the handshake ended (a connection's
                // own comes after it) and went on after it began.
                let ended_ns = c.handshake.ack_ns?;
                let began = spans.partition_point(|span| span.first_ns < ended_ns);
                let covering = &spans[latest_ending[began.checked_sub(1)?]];
                let stood = covering.last_ns >= syn_ns
                    && stands_above(round_trip_ms, least_ms, covering.segment_ms);
                stood.then_some(QueuedHandshake {
                    connection: c.id,
                    syn_ns,
                    ack_ns: ended_ns,
                    round_trip_ms,
                    behind: covering.direction,
                })
            })
            .collect();
        queued.sort_by_key(|h| h.syn_ns);
        queued
    }
}

/// Round trips that rise with the bytes in flight and stand well above the
/// least, by more than one segment takes to cross at the flow's rate (a
/// queue holds at least a packet). Seen from the sender's side in its
/// data-to-ACK samples, from the receiver's in the ACK-to-data lags.
pub fn shows_queue(c: &ConnectionSummary, data: &DirectionSummary) -> bool {
    queue_samples(c, data).is_some()
}

/// The round-trip samples of `data` that show a queue building, if any do.
pub fn queue_samples(c: &ConnectionSummary, data: &DirectionSummary) -> Option<RttStats> {
    [data.rtt, data.release_lag].into_iter().find(|samples| {
        let rising = samples
            .in_flight_correlation
            .is_some_and(|r| r >= QUEUE_CORRELATION);
        rising && stands(c, data, samples, least_round_trip_ms(c))
    })
}

/// The connection's least round trip, from its handshake and samples.
pub fn least_round_trip_ms(c: &ConnectionSummary) -> f64 {
    match c.rtt().round_trip_ms() {
        least if least > 0.0 => least,
        _ => f64::INFINITY,
    }
}

/// The typical round trip of `samples` stands well above the least (of the
/// samples, and of `path_least_ms`, which a handshake before the queue
/// built shows), as a queue does (see [`stands_above`]).
pub fn stands(
    c: &ConnectionSummary,
    data: &DirectionSummary,
    samples: &RttStats,
    path_least_ms: f64,
) -> bool {
    match (samples.min_ms, samples.median_ms) {
        (Some(least), Some(median)) => {
            stands_above(median, least.min(path_least_ms), segment_ms(c, data))
        }
        _ => false,
    }
}

/// A round trip stands above the least as a queue does: by a good part of
/// the least, by more than one segment takes to cross at the flow's rate
/// (`segment_ms`; a queue holds at least a packet), and by more than a
/// queue that only absorbs bursts ([`STANDING_QUEUE_MS`]).
fn stands_above(round_trip_ms: f64, least_ms: f64, segment_ms: f64) -> bool {
    round_trip_ms >= QUEUE_RTT_RATIO * least_ms
        && round_trip_ms - least_ms >= segment_ms.max(STANDING_QUEUE_MS)
}

/// How long one of the direction's largest segments takes to cross at its rate.
fn segment_ms(c: &ConnectionSummary, data: &DirectionSummary) -> f64 {
    let rate = data.unique_payload_bytes as f64 / (c.duration_ms / 1e3).max(1e-9);
    data.largest_segment as f64 / rate.max(1.0) * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handshake_still_under_way_when_the_data_began_waited_in_its_queue() {
        let path = QueuedPath {
            least_ms: 44.0,
            handshakes: vec![QueuedHandshake {
                connection: 1,
                syn_ns: 10,
                ack_ns: 100,
                round_trip_ms: 90.0,
                behind: Direction::ClientToServer,
            }],
        };
        let upload = Direction::ClientToServer;
        // Its SYN left before the upload's first byte; its SYN-ACK and ACK
        // crossed while the upload did.
        assert!(path.handshake_queued_during(upload, 50, 200));
        assert!(path.handshake_queued_during(upload, 0, 10));
        assert!(!path.handshake_queued_during(upload, 150, 200));
        assert!(!path.handshake_queued_during(Direction::ServerToClient, 50, 200));
    }
}
