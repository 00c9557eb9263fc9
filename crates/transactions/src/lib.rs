//! Connections' segments in, request/response transactions out, each with
//! its time ledger.
//!
//! A generic decoder for any TCP protocol, even on payload-scrubbed captures:
//! a transaction is the client's data up to the server's reply, and the
//! server's data up to the client's next request. Each gets its timing
//! (request, server think time, response transfer, client think time), its
//! [`ledger`] (every millisecond from the end of the previous transaction to
//! the end of its response charged to one named part, by what ended each
//! wait), its bytes and packets each way, the retransmissions inside it, and
//! a signature stable across repeats (`blk[127]-blk[3xxx]`). Where the
//! payload is captured, HTTP and TLS transactions are also named from it
//! (see [`name`]), and a conversation (SSH, IRC, a WebSocket, ...) is told
//! from an exchange: there no one waits out a pause inside a message (see
//! [`conversation`]).

pub mod conversation;
pub mod latency;
pub mod ledger;
pub mod name;
mod signature;
mod stats;

use serde::Serialize;
use tcp::{Direction, Role, SegmentView};

pub use latency::Latency;
pub use ledger::{ConnectionLedger, Ledger, Part, Stretch};
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
    /// The address a proxy in front of this connection's client wrote last
    /// in the request's X-Forwarded-For header: the client it took the
    /// request from. Null where the payload does not show one.
    pub forwarded_for: Option<String>,
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
    /// Where its time went, part by part, from the end of the previous
    /// transaction on the connection (or its first SYN) to the end of its response.
    pub ledger: Ledger,
    /// The ledger's parts summed by kind: network, server, client, TCP's own waits.
    pub latency: Latency,
    /// What failed, when the transaction did not do what was asked: an HTTP
    /// error status, a TLS alert, or a server reset before the answer.
    pub failure: Option<AppFailure>,
}

impl Transaction {
    /// The order transactions are listed in: by when their request began.
    pub fn capture_order(&self) -> (i64, u64, u32) {
        (self.request_start_ns, self.connection, self.index)
    }
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
    forwarded_for: Option<String>,
    ledger: Ledger,
    failure: Option<AppFailure>,
    /// The request awaits no answer: the client sent it knowing the server
    /// had closed its side (its first segment acknowledged the server's
    /// FIN), or it is a TLS alert, which no one answers.
    awaits_no_answer: bool,
    /// The longest single pause of the client's application inside the
    /// request, and of the server's inside the response (ms).
    longest_client_pause_ms: f64,
    longest_server_pause_ms: f64,
    /// When each side first moved after the other's message began (data,
    /// FIN or reset), with the round trip from the capture point to it;
    /// and when each first closed (FIN or reset).
    server_moved: Option<Move>,
    client_moved: Option<Move>,
    server_closed_ns: Option<i64>,
    client_closed_ns: Option<i64>,
}

/// A side's move seen at the capture point, and the round trip from there
/// to that side and back.
#[derive(Debug, Clone, Copy)]
struct Move {
    at_ns: i64,
    path_ns: i64,
    /// A FIN or reset rather than data.
    closes: bool,
}

impl Move {
    fn of(segment: &SegmentView) -> Self {
        Move {
            at_ns: segment.timestamp_ns,
            path_ns: segment.rtts.to_sender_ns,
            closes: segment.len == 0,
        }
    }
}

/// Whether the peer waited for a message of the sender's that ended at
/// `end_ns`, with pauses of up to `pause_ms` inside: it moved once the
/// message was complete (its next message, or its answer to the sender's
/// close), sooner (less the path to it) than the sender had paused. A peer
/// that moved before the end (closed first), took longer, or never
/// answered the sender's close was not waiting. A peer that never moved,
/// or closed on its own, shows nothing either way: the pauses stay the
/// sender's, as a peer with nothing more to ask behaves the same.
fn waited(end_ns: i64, pause_ms: f64, peer: Option<Move>, sender_closed_ns: Option<i64>) -> bool {
    let sender_closed_first = |at_ns| sender_closed_ns.is_some_and(|closed| closed <= at_ns);
    match peer {
        Some(peer) if peer.at_ns < end_ns => false,
        Some(peer) if !peer.closes || sender_closed_first(peer.at_ns) => {
            ms(end_ns, peer.at_ns - peer.path_ns) <= pause_ms
        }
        Some(_) => true,
        None => sender_closed_ns.is_none(),
    }
}

impl Open {
    fn new(index: u32, at_ns: i64, ledger: Ledger) -> Self {
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
            forwarded_for: None,
            ledger,
            failure: None,
            awaits_no_answer: false,
            longest_client_pause_ms: 0.0,
            longest_server_pause_ms: 0.0,
            server_moved: None,
            client_moved: None,
            server_closed_ns: None,
            client_closed_ns: None,
        }
    }

    /// A pause inside a message cost the time only of a peer that waited
    /// for the rest (see [`waited`]); pauses no one waited for were the
    /// exchange standing idle, the client's own pace. In a conversation no
    /// one waits for the rest of a message, nor for the client's first: each
    /// side speaks at its own pace.
    fn unwaited_pauses_to_the_client(&mut self, in_conversation: bool) {
        if in_conversation {
            self.ledger.move_to(Part::ClientStart, Part::ClientThink);
        }
        let request_waited = !in_conversation
            && waited(
                self.request_end_ns,
                self.longest_client_pause_ms,
                self.server_moved,
                self.client_closed_ns,
            );
        if !request_waited {
            self.ledger.move_to(Part::ClientPause, Part::ClientThink);
        }
        let response_waited = !in_conversation
            && self.response.is_none_or(|(_, end)| {
                waited(
                    end,
                    self.longest_server_pause_ms,
                    self.client_moved,
                    self.server_closed_ns,
                )
            });
        if !response_waited {
            self.ledger.move_to(Part::ServerPause, Part::ClientThink);
        }
    }

    /// The client's and the server's pauses charged so far (ms).
    fn paused_ms(&self) -> (f64, f64) {
        (
            self.ledger.get(Part::ClientPause),
            self.ledger.get(Part::ServerPause),
        )
    }

    /// Notes the longest pause of each side: what one segment's charges
    /// added to the pauses `before` it.
    fn note_pauses(&mut self, (client_before, server_before): (f64, f64)) {
        let (client, server) = self.paused_ms();
        self.longest_client_pause_ms = self.longest_client_pause_ms.max(client - client_before);
        self.longest_server_pause_ms = self.longest_server_pause_ms.max(server - server_before);
    }

    /// A FIN or reset is a side's move too.
    fn note_close(&mut self, segment: &SegmentView) {
        if !(segment.flags.fin() || segment.flags.rst()) {
            return;
        }
        let at = segment.timestamp_ns;
        match segment.direction {
            Direction::ServerToClient => {
                self.server_moved.get_or_insert(Move::of(segment));
                self.server_closed_ns.get_or_insert(at);
            }
            Direction::ClientToServer => {
                if self.response.is_some() {
                    self.client_moved.get_or_insert(Move::of(segment));
                }
                self.client_closed_ns.get_or_insert(at);
            }
        }
    }

    fn close(
        mut self,
        connection: u64,
        next_request: Option<&SegmentView>,
        in_conversation: bool,
    ) -> Transaction {
        if let Some(next) = next_request {
            self.client_moved.get_or_insert(Move::of(next));
        }
        self.unwaited_pauses_to_the_client(in_conversation);
        let next_request_ns = next_request.map(|next| next.timestamp_ns);
        let end_ns = self.response.map_or(self.request_end_ns, |(_, end)| end);
        Transaction {
            connection,
            index: self.index,
            signature: signature::of(self.request_bytes, self.response_bytes),
            name: name::of_transaction(self.request_name, self.response_name),
            forwarded_for: self.forwarded_for,
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
            latency: Latency::of(&self.ledger),
            ledger: self.ledger,
            failure: self.failure,
        }
    }

    fn request_segment(&mut self, segment: &SegmentView) {
        self.request_packets += 1;
        self.request_bytes += u64::from(segment.len);
        self.retransmissions += u64::from(segment.resent());
        if delivers(segment) {
            self.request_end_ns = self.request_end_ns.max(segment.timestamp_ns);
        }
    }

    fn response_segment(&mut self, segment: &SegmentView, payload: &[u8]) {
        self.response_packets += 1;
        self.response_bytes += u64::from(segment.len);
        self.retransmissions += u64::from(segment.resent());
        if self.response.is_none() {
            self.response_name = name::of_response(payload);
            self.failure = self
                .failure
                .or(name::failure_in(payload, Role::Server, segment.frame));
        }
        self.server_moved.get_or_insert(Move::of(segment));
        let now = segment.timestamp_ns;
        let (start, end) = self.response.get_or_insert((now, now));
        if delivers(segment) {
            *start = (*start).min(now);
            *end = (*end).max(now);
        }
    }
}

/// The segment brought the receiver data it lacked: new data, or data sent
/// again because it was lost (not a needless resend).
fn delivers(segment: &SegmentView) -> bool {
    !segment.resent() || segment.wait.is_some()
}

#[derive(Debug, Default)]
struct ConnectionTurns {
    open: Option<Open>,
    count: u32,
    walk: ledger::Walk,
    /// Where the server's FIN ended, once it closed its side.
    server_close_end: Option<u32>,
    /// A message's start showed the connection to be a conversation.
    conversational: bool,
}

impl ConnectionTurns {
    /// Closes the open transaction, if any, before `next_request`.
    fn close_open(
        &mut self,
        connection: u64,
        next_request: Option<&SegmentView>,
    ) -> Option<Transaction> {
        let open = self.open.take()?;
        Some(open.close(connection, next_request, self.conversational))
    }
}

/// Collects transactions from segments as the tracker hands them on.
#[derive(Debug, Default)]
pub struct Builder {
    /// Boxed: the table stays small and grows without moving each
    /// connection's state.
    connections: rustc_hash::FxHashMap<u64, Box<ConnectionTurns>>,
    done: Vec<Transaction>,
}

impl Builder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one segment. `payload` is its captured start (possibly empty),
    /// read only for the first segment of a request or response to name it.
    pub fn observe(&mut self, segment: &SegmentView, payload: &[u8]) {
        if segment.flags.rst() && segment.direction == Direction::ServerToClient {
            self.server_reset(segment);
        }
        let turns = self.connections.entry(segment.connection).or_default();
        if segment.direction == Direction::ServerToClient {
            turns.server_close_end = turns.server_close_end.or(segment.close_end());
        }
        let opens = opens_transaction(turns.open.as_ref(), segment);
        if opens {
            if let Some(finished) = turns.close_open(segment.connection, Some(segment)) {
                self.done.push(finished);
            }
        }
        let paused_before = turns.open.as_ref().map(Open::paused_ms);
        let open_ledger = turns.open.as_mut().map(|open| &mut open.ledger);
        turns.walk.segment(segment, opens, open_ledger);
        if let (Some(open), Some(before)) = (turns.open.as_mut(), paused_before) {
            open.note_pauses(before);
            open.note_close(segment);
        }
        if segment.len == 0 {
            return;
        }
        if opens {
            turns.count += 1;
            let mut open = Open::new(turns.count, segment.timestamp_ns, turns.walk.take_pending());
            if segment.direction == Direction::ClientToServer {
                open.request_name = name::of_request(payload);
                open.forwarded_for = name::forwarded_for(payload);
                open.failure = name::failure_in(payload, Role::Client, segment.frame);
                open.awaits_no_answer = name::is_tls_alert(payload)
                    || turns
                        .server_close_end
                        .is_some_and(|end| segment.acknowledges(end));
            }
            turns.open = Some(open);
        }
        let open = turns.open.as_mut().expect("a transaction is open");
        let starts_a_message = opens || open.response.is_none();
        if starts_a_message && !turns.conversational && conversation::starts(payload) {
            turns.conversational = true;
        }
        match segment.direction {
            Direction::ClientToServer => open.request_segment(segment),
            Direction::ServerToClient => open.response_segment(segment, payload),
        }
    }

    /// A server's reset right after a request, instead of its answer, fails
    /// that request. (A reset after a long silence is a connection given up
    /// on, which the setup and loss findings tell.) A request awaiting no
    /// answer (a TLS alert, or data sent after acknowledging the server's
    /// FIN) asked for nothing: the reset is a closed socket's answer to it.
    fn server_reset(&mut self, segment: &SegmentView) {
        let waiting = self
            .connections
            .get_mut(&segment.connection)
            .and_then(|turns| turns.open.as_mut())
            .filter(|open| open.response.is_none() && open.request_bytes > 0)
            .filter(|open| !open.awaits_no_answer)
            .filter(|open| segment.timestamp_ns - open.request_end_ns <= RESET_AFTER_REQUEST_NS);
        if let Some(open) = waiting {
            open.failure
                .get_or_insert(AppFailure::server_reset(segment.frame));
        }
    }

    /// Drops the transactions of connections that will be listed nowhere,
    /// handing each to `dropped` first.
    pub fn forget(
        &mut self,
        connections: &rustc_hash::FxHashSet<u64>,
        mut dropped: impl FnMut(&Transaction),
    ) {
        for &connection in connections {
            let mut turns = self.connections.remove(&connection);
            if let Some(closed) = turns.as_mut().and_then(|t| t.close_open(connection, None)) {
                dropped(&closed);
            }
        }
        self.done.retain(|transaction| {
            let keep = !connections.contains(&transaction.connection);
            if !keep {
                dropped(transaction);
            }
            keep
        });
    }

    /// Every transaction, in the order each began, and the ledger of each
    /// connection that had any, in connection order.
    pub fn finish(mut self) -> (Vec<Transaction>, Vec<ConnectionLedger>) {
        let mut ledgers = Vec::new();
        for (connection, mut turns) in self.connections.drain() {
            if let Some(closed) = turns.close_open(connection, None) {
                self.done.push(closed);
            }
            if turns.count > 0 {
                ledgers.push(ConnectionLedger {
                    connection,
                    transactions: 0,
                    ledger: Ledger::default(),
                    stretches: turns.walk.into_stretches(),
                });
            }
        }
        // Keys sorted, then each record moved once: transactions are large.
        let mut done = self.done;
        done.sort_by_cached_key(Transaction::capture_order);
        ledgers.sort_by_cached_key(|ledger| ledger.connection);
        for t in &done {
            if let Ok(at) = ledgers.binary_search_by_key(&t.connection, |l| l.connection) {
                ledgers[at].transactions += 1;
                ledgers[at].ledger.add(&t.ledger);
            }
        }
        (done, ledgers)
    }
}

/// New client data after an answer starts a transaction, and so does any
/// data when none is open (a server that speaks first).
fn opens_transaction(open: Option<&Open>, segment: &SegmentView) -> bool {
    if segment.len == 0 {
        return false;
    }
    match open {
        None => true,
        Some(open) => {
            segment.direction == Direction::ClientToServer
                && open.response.is_some()
                && !segment.resent()
        }
    }
}
