//! Connections' payload turns in, request/response transactions out.
//!
//! A generic decoder for any TCP protocol, even on payload-scrubbed captures:
//! a transaction is the client's data up to the server's reply, and the
//! server's data up to the client's next request. Each gets its timing
//! (request, server think time, response transfer, client think time), the
//! split of that time into network, server, client and TCP's own waits (see
//! [`latency`]), its bytes and packets each way, the retransmissions inside
//! it, and a signature
//! stable across repeats (`blk[127]-blk[3xxx]`). Where the payload is
//! captured, HTTP and TLS transactions are also named from it (see [`name`]).

pub mod latency;
pub mod name;
mod signature;
mod stats;

use serde::Serialize;
use tcp::{ConnectionSummary, Direction, Role, SegmentView};

pub use latency::{by_connection, ConnectionLatency, Latency, TIMEOUT_MIN_MS};
use latency::{Message, Silences};
pub use name::{AppFailure, FailureKind};

pub use signature::size_bucket;
pub use stats::{by_name, by_signature, Durations, NameStats, SignatureStats};

/// One request and its response on one connection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Transaction {
    pub connection: u64,
    /// Position within its connection, from 1.
    pub index: u32,
    pub signature: String,
    /// What the payload says the transaction is (`GET /index.html → 200`,
    /// `TLS handshake`); null where the payload is not captured or not recognized.
    pub name: Option<String>,
    pub request_start_ns: i64,
    pub request_end_ns: i64,
    pub response_start_ns: Option<i64>,
    pub response_end_ns: Option<i64>,
    /// Request start to response end (or request end when unanswered).
    pub duration_ms: f64,
    pub request_transfer_ms: f64,
    /// Last request byte to first response byte, at the capture point.
    pub server_think_ms: Option<f64>,
    pub response_transfer_ms: Option<f64>,
    /// Last response byte to the next request on the same connection.
    pub client_think_ms: Option<f64>,
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub request_packets: u64,
    pub response_packets: u64,
    pub retransmissions: u64,
    /// Segments resent after a silence of 200 ms or more (a retransmission
    /// timeout), and the time those silences took.
    pub timeout_resends: u64,
    pub timeout_wait_ms: f64,
    /// Where the time went: network, server, client, TCP's own waits.
    pub latency: Latency,
    /// What failed, when the transaction did not do what was asked: an HTTP
    /// error status, a TLS alert, or a server reset before the answer.
    pub failure: Option<AppFailure>,
}

/// A server reset this soon after a request's last byte refused it.
const RESET_AFTER_REQUEST_NS: i64 = 1_000_000_000;

fn ms(from_ns: i64, to_ns: i64) -> f64 {
    (to_ns - from_ns) as f64 / 1e6
}

/// A transaction still being assembled.
#[derive(Debug, Clone)]
struct Open {
    index: u32,
    request_start_ns: i64,
    request_end_ns: i64,
    response: Option<(i64, i64)>,
    request_bytes: u64,
    response_bytes: u64,
    request_packets: u64,
    response_packets: u64,
    retransmissions: u64,
    request_name: Option<String>,
    response_name: Option<String>,
    failure: Option<AppFailure>,
    silences: Silences,
}

impl Open {
    fn new(index: u32, at_ns: i64) -> Self {
        Open {
            index,
            request_start_ns: at_ns,
            request_end_ns: at_ns,
            response: None,
            request_bytes: 0,
            response_bytes: 0,
            request_packets: 0,
            response_packets: 0,
            retransmissions: 0,
            request_name: None,
            response_name: None,
            failure: None,
            silences: Silences::default(),
        }
    }

    /// The finished transaction, and the silences for its latency split.
    fn close(self, connection: u64, next_request_ns: Option<i64>) -> (Transaction, Silences) {
        let end_ns = self.response.map_or(self.request_end_ns, |(_, end)| end);
        let transaction = Transaction {
            connection,
            index: self.index,
            signature: signature::of(self.request_bytes, self.response_bytes),
            name: name::of_transaction(self.request_name.as_deref(), self.response_name.as_deref()),
            request_start_ns: self.request_start_ns,
            request_end_ns: self.request_end_ns,
            response_start_ns: self.response.map(|(start, _)| start),
            response_end_ns: self.response.map(|(_, end)| end),
            duration_ms: ms(self.request_start_ns, end_ns),
            request_transfer_ms: ms(self.request_start_ns, self.request_end_ns),
            server_think_ms: self
                .response
                .map(|(start, _)| ms(self.request_end_ns, start)),
            response_transfer_ms: self.response.map(|(start, end)| ms(start, end)),
            client_think_ms: self
                .response
                .zip(next_request_ns)
                .map(|((_, end), next)| ms(end, next)),
            request_bytes: self.request_bytes,
            response_bytes: self.response_bytes,
            request_packets: self.request_packets,
            response_packets: self.response_packets,
            retransmissions: self.retransmissions,
            timeout_resends: self.silences.timeout_resends,
            timeout_wait_ms: self.silences.timeout_wait_ms,
            latency: Latency::default(),
            failure: self.failure,
        };
        (transaction, self.silences)
    }
}

#[derive(Debug, Default)]
struct ConnectionTurns {
    open: Option<Open>,
    count: u32,
}

/// Collects transactions from segments as the tracker places them.
#[derive(Debug, Default)]
pub struct Builder {
    connections: rustc_hash::FxHashMap<u64, ConnectionTurns>,
    done: Vec<(Transaction, Silences)>,
}

impl Builder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one segment with payload; segments without payload change nothing.
    /// `payload` is its captured start (possibly empty), read only for the
    /// first segment of a request or response to name it.
    pub fn observe(&mut self, segment: &SegmentView, payload: &[u8]) {
        if segment.flags.rst() && segment.direction == Direction::ServerToClient {
            self.server_reset(segment);
        }
        if segment.len == 0 {
            return;
        }
        let timestamp_ns = segment.timestamp_ns;
        let resent = segment.resent();
        let turns = self.connections.entry(segment.connection).or_default();
        let bytes = u64::from(segment.len);
        match segment.direction {
            Direction::ClientToServer => {
                let answered = turns
                    .open
                    .as_ref()
                    .is_some_and(|open| open.response.is_some());
                if answered && !resent {
                    let finished = turns.open.take().expect("an open transaction");
                    self.done
                        .push(finished.close(segment.connection, Some(timestamp_ns)));
                }
                let open = turns.open.get_or_insert_with(|| {
                    turns.count += 1;
                    let mut open = Open::new(turns.count, timestamp_ns);
                    open.request_name = name::of_request(payload);
                    open.failure = name::failure_in(payload, Role::Client, segment.frame);
                    open
                });
                open.silences
                    .segment(Message::Request, timestamp_ns, resent);
                if resent {
                    let late = &mut open.silences.request_completed_late_ms;
                    *late = late.max(ms(open.request_end_ns, timestamp_ns));
                }
                open.request_packets += 1;
                open.request_bytes += bytes;
                open.retransmissions += u64::from(resent);
                if !resent {
                    open.request_end_ns = open.request_end_ns.max(timestamp_ns);
                }
            }
            Direction::ServerToClient => {
                let open = turns.open.get_or_insert_with(|| {
                    turns.count += 1;
                    Open::new(turns.count, timestamp_ns)
                });
                open.response_packets += 1;
                open.response_bytes += bytes;
                open.retransmissions += u64::from(resent);
                if open.response.is_none() {
                    open.response_name = name::of_response(payload);
                    open.failure =
                        open.failure
                            .or(name::failure_in(payload, Role::Server, segment.frame));
                }
                let (start, end) = open.response.get_or_insert((timestamp_ns, timestamp_ns));
                open.silences
                    .segment(Message::Response, timestamp_ns, resent);
                if !resent {
                    *start = (*start).min(timestamp_ns);
                    *end = (*end).max(timestamp_ns);
                }
            }
        }
    }

    /// A server's reset right after a request, instead of its answer, fails
    /// that request. (A reset after a long silence is a connection given up
    /// on, which the diagnosis tells apart.)
    fn server_reset(&mut self, segment: &SegmentView) {
        let waiting = self
            .connections
            .get_mut(&segment.connection)
            .and_then(|turns| turns.open.as_mut())
            .filter(|open| open.response.is_none() && open.request_bytes > 0)
            .filter(|open| segment.timestamp_ns - open.request_end_ns <= RESET_AFTER_REQUEST_NS);
        if let Some(open) = waiting {
            open.failure
                .get_or_insert(AppFailure::server_reset(segment.frame));
        }
    }

    /// Every transaction, in the order each began, with its latency split
    /// by the figures of its connection.
    pub fn finish(mut self, connections: &[ConnectionSummary]) -> Vec<Transaction> {
        for (connection, turns) in self.connections.drain() {
            if let Some(open) = turns.open {
                self.done.push(open.close(connection, None));
            }
        }
        let by_id: rustc_hash::FxHashMap<u64, &ConnectionSummary> =
            connections.iter().map(|c| (c.id, c)).collect();
        let mut done: Vec<Transaction> = self
            .done
            .into_iter()
            .map(|(mut t, silences)| {
                t.latency = latency::split(&t, &silences, by_id.get(&t.connection).copied());
                t
            })
            .collect();
        done.sort_by_key(|t| (t.request_start_ns, t.connection, t.index));
        done
    }
}
