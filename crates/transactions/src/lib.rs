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
pub mod framing;
mod kept;
pub mod latency;
pub mod ledger;
pub mod name;
mod replies;
mod signature;
mod stats;

use serde::Serialize;
use tcp::{Direction, Role, SegmentView, SeqNumber};

use framing::{Asks, ConnectionFraming, Framing};

pub use kept::Times;
pub use latency::Latency;
pub use ledger::{ConnectionLedger, Ledger, Part, Stretch};
pub use name::{AppFailure, FailureKind};

pub use signature::size_bucket;
pub use stats::{by_name, by_signature, Durations, NameStats, SignatureStats};

/// One request and its response on one connection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, record::Wire, record::Columns)]
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
    #[column(time)]
    pub request_start_ns: i64,
    #[column(time)]
    pub request_end_ns: i64,
    #[column(time)]
    pub response_start_ns: Option<i64>,
    #[column(time)]
    pub response_end_ns: Option<i64>,
    /// Request start to response end (or request end when unanswered);
    /// None when the capture's clock stepped back between them, as for
    /// every duration here.
    pub duration_ms: Option<f64>,
    pub request_transfer_ms: Option<f64>,
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

    /// When it began and ended.
    pub fn times(&self) -> Times {
        Times {
            request_start_ns: self.request_start_ns,
            request_end_ns: self.request_end_ns,
            response_end_ns: self.response_end_ns,
        }
    }
}

/// A server reset this soon after a request's last byte refused it.
const RESET_AFTER_REQUEST_NS: i64 = 1_000_000_000;

/// No person reacts to what reaches them sooner than about a tenth of a
/// second (the perceptual and motor cycle of Card, Moran and Newell's model
/// human processor; Nielsen's 0.1 s): a client that moved on within it of an
/// answer's last byte was a program that had been waiting for it.
const REACTS_WITHIN_NS: i64 = 100_000_000;

fn ms(from_ns: i64, to_ns: i64) -> Option<f64> {
    decode::elapsed_ms(from_ns, to_ns)
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
    /// FIN), or it is a TLS alert or an LDAP unbind, which no one answers.
    awaits_no_answer: bool,
    /// What the messages of the request ask for, as their protocol says;
    /// None until one is complete.
    asks: Option<Asks>,
    /// The server's pauses inside the response where its protocol did not
    /// say whether the response was unfinished (ms): the client's reaction
    /// to its end tells whether it waited through them.
    unframed_server_pause_ms: f64,
    /// The server's first pause in its response.
    opening_pause: OpeningPause,
    /// Where the request's data ended, in the client's sequence space.
    request_end_seq: Option<SeqNumber>,
    /// The response's first segment that brought the client data was read:
    /// a needless resend of the previous response's tail comes before it.
    response_read: bool,
    /// When each side first moved after the other's message began (data,
    /// FIN or reset), with the round trip from the capture point to it;
    /// and when each first closed (FIN or reset).
    server_moved: Option<Move>,
    client_moved: Option<Move>,
    server_closed_ns: Option<i64>,
    client_closed_ns: Option<i64>,
}

/// The server's first pause in its response, and what it sent in one go
/// before it and after it (until it paused again).
#[derive(Debug, Clone, Copy, Default)]
struct OpeningPause {
    before: Burst,
    ms: f64,
    after: Burst,
    ended: bool,
}

/// Segments sent in one go, and their bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Burst {
    segments: u32,
    bytes: u64,
}

impl Burst {
    fn add(&mut self, bytes: u32) {
        self.segments += 1;
        self.bytes += u64::from(bytes);
    }
}

impl OpeningPause {
    /// Counts a segment of `bytes` sent `paused_ms` after the one before
    /// it; a gap shorter than a host takes to act is no pause of its
    /// application.
    fn note(&mut self, bytes: u32, paused_ms: f64) {
        let paused = paused_ms * 1e6 > tcp::stack::HOST_REACTION_NS as f64;
        match (self.ms > 0.0, paused) {
            _ if self.ended => {}
            (false, true) if self.before.segments > 0 => {
                self.ms = paused_ms;
                self.after.add(bytes);
            }
            (false, _) => self.before.add(bytes),
            (true, false) => self.after.add(bytes),
            (true, true) => self.ended = true,
        }
    }

    /// After the pause the server wrote more than a segment holds, and more
    /// than it had sent before: the body of its answer, where before it had
    /// sent what comes first (a header, or what its TLS or HTTP/2 library
    /// sends by itself). It was still making its answer.
    fn came_before_the_answer(&self) -> bool {
        self.ms > 0.0 && self.after.segments > 1 && self.after.bytes > self.before.bytes
    }
}

/// A side's move seen at the capture point, and the round trip from there
/// to that side and back.
#[derive(Debug, Clone, Copy)]
struct Move {
    at_ns: i64,
    path_ns: i64,
}

impl Move {
    fn of(segment: &SegmentView) -> Self {
        Move {
            at_ns: segment.timestamp_ns,
            path_ns: segment.rtts.to_sender_ns,
        }
    }

    /// The peer's message the capture never saw, taken as seen where
    /// `segment` acknowledged it.
    fn unseen_before(segment: &SegmentView) -> Self {
        Move {
            at_ns: segment.timestamp_ns,
            path_ns: segment.rtts.to_receiver_ns,
        }
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
            asks: None,
            unframed_server_pause_ms: 0.0,
            opening_pause: OpeningPause::default(),
            request_end_seq: None,
            response_read: false,
            server_moved: None,
            client_moved: None,
            server_closed_ns: None,
            client_closed_ns: None,
        }
    }

    /// Gives the time no one was shown to wait through to its sender's own
    /// pace. Pauses inside a message the protocol said was unfinished stay
    /// waits, unless the peer moved before the message ended (it was not
    /// waiting for the rest); a server's pauses in a response no framing
    /// covered stay only if the client moved on at once after its end. The
    /// server's time before its answer is a wait when the request asked for
    /// an answer, or, where the protocol does not say, when the client moved
    /// on at once after it. After a message that asks for nothing (a
    /// goodbye, an alert) no one waits, for a resend either. In a
    /// conversation, where either side speaks unprompted, no one waits for
    /// the rest of a message, nor for the client's first, nor for an answer
    /// the protocol does not show was asked for.
    fn settle(&mut self, in_conversation: bool) {
        if in_conversation {
            self.ledger.move_to(Part::ClientStart, Part::ClientThink);
            self.ledger.move_to(Part::ClientPause, Part::ClientIdle);
            self.ledger.move_to(Part::ServerPause, Part::ServerIdle);
        }
        if self
            .server_moved
            .is_some_and(|moved| moved.at_ns < self.request_end_ns)
        {
            self.ledger.move_to(Part::ClientPause, Part::ClientIdle);
        }
        let reacted = self.client_reacted();
        let client_moved_first = self
            .response
            .is_some_and(|(_, end)| self.client_moved.is_some_and(|moved| moved.at_ns < end));
        if !in_conversation && !client_moved_first {
            self.count_opening_pause_as_thought();
        }
        if client_moved_first {
            self.ledger.move_to(Part::ServerPause, Part::ServerIdle);
        } else if !reacted {
            let unframed = self
                .unframed_server_pause_ms
                .min(self.ledger.get(Part::ServerPause));
            self.ledger
                .move_ms(Part::ServerPause, Part::ServerIdle, unframed);
        }
        let asked_nothing = self.awaits_no_answer || self.asks == Some(Asks::Nothing);
        let awaited = match self.asks.unwrap_or_default() {
            _ if asked_nothing => false,
            Asks::Answer => true,
            Asks::Nothing => false,
            Asks::Unknown => reacted && !in_conversation,
        };
        if !awaited {
            self.ledger.move_to(Part::Server, Part::ServerIdle);
        }
        if asked_nothing {
            for loss in [
                Part::RetransmissionTimeout,
                Part::TailLoss,
                Part::LossRecovery,
            ] {
                self.ledger.move_to(loss, Part::ServerIdle);
            }
        }
    }

    /// A pause after the response's first piece, before its body, is the
    /// server's time to make its answer.
    fn count_opening_pause_as_thought(&mut self) {
        let pause = self.opening_pause;
        if !pause.came_before_the_answer() {
            return;
        }
        let thought = pause.ms.min(self.ledger.get(Part::ServerPause));
        self.ledger
            .move_ms(Part::ServerPause, Part::Server, thought);
        self.unframed_server_pause_ms = (self.unframed_server_pause_ms - thought).max(0.0);
    }

    /// Notes the server's pace in its response: a pause of `paused_ms`
    /// before `segment`.
    fn note_server_pace(&mut self, segment: &SegmentView, paused_ms: f64) {
        if segment.direction != Direction::ServerToClient || segment.len == 0 {
            return;
        }
        self.opening_pause.note(segment.len, paused_ms);
    }

    /// The client moved on (its next request, or its close) within a
    /// person's reaction time of the response's last byte reaching it.
    fn client_reacted(&self) -> bool {
        let (Some((_, end)), Some(moved)) = (self.response, self.client_moved) else {
            return false;
        };
        moved.at_ns >= end && moved.at_ns - moved.path_ns - end <= REACTS_WITHIN_NS
    }

    /// Notes what the request's messages ask for.
    fn note_asks(&mut self, asks: Asks) {
        self.asks = Some(self.asks.map_or(asks, |before| before.and(asks)));
    }

    /// The server's pauses charged so far (ms).
    fn server_paused_ms(&self) -> f64 {
        self.ledger.get(Part::ServerPause)
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
        next_request: Option<Move>,
        in_conversation: bool,
    ) -> Transaction {
        if let Some(next) = next_request {
            self.client_moved.get_or_insert(next);
        }
        self.settle(in_conversation);
        let next_request_ns = next_request.map(|next| next.at_ns);
        let incidental = self.failure.is_some()
            && self
                .request_name
                .as_deref()
                .is_some_and(name::is_incidental);
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
                .and_then(|(start, _)| ms(self.request_end_ns, start)),
            response_transfer_ms: self.response.and_then(|(start, end)| ms(start, end)),
            client_think_ms: self
                .response
                .zip(next_request_ns)
                .and_then(|((_, end), next)| ms(end, next)),
            request_bytes: self.request_bytes,
            response_bytes: self.response_bytes,
            request_packets: self.request_packets,
            response_packets: self.response_packets,
            retransmissions: self.retransmissions,
            latency: Latency::of(&self.ledger),
            ledger: self.ledger,
            failure: self.failure.map(|failure| AppFailure {
                incidental,
                ..failure
            }),
        }
    }

    fn request_segment(&mut self, segment: &SegmentView) {
        self.request_packets += 1;
        self.request_bytes += u64::from(segment.len);
        self.retransmissions += u64::from(segment.resent());
        if delivers(segment) {
            self.request_end_ns = self.request_end_ns.max(segment.timestamp_ns);
            let end = segment.end();
            if self.request_end_seq.is_none_or(|known| end > known) {
                self.request_end_seq = Some(end);
                self.still_sending_after_a_reset();
            }
        }
    }

    /// New request bytes after the server's reset: the client was still
    /// sending, not waiting for an answer, so the reset cut a stream off
    /// and refused no question (see [`Builder::server_reset`]).
    fn still_sending_after_a_reset(&mut self) {
        if self
            .failure
            .is_some_and(|failure| failure.kind == FailureKind::ServerReset)
        {
            self.failure = None;
        }
    }

    fn response_segment(&mut self, segment: &SegmentView, payload: &[u8]) {
        self.response_packets += 1;
        self.response_bytes += u64::from(segment.len);
        self.retransmissions += u64::from(segment.resent());
        if !self.response_read && delivers(segment) {
            self.response_read = true;
            self.response_name = name::of_response(payload);
            let asked = self.request_name.is_some();
            self.failure = self
                .failure
                .or(name::failure_in(payload, Role::Server, segment.frame))
                .or(name::other_protocol(asked, payload, segment.frame));
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
    framing: ConnectionFraming,
}

impl ConnectionTurns {
    /// Charges the time up to `segment` to the open transaction, or to the
    /// next one, and notes what the segment tells of who moved when.
    fn charge(&mut self, segment: &SegmentView, opens: bool) {
        let framing = self.framing.framing(segment.direction);
        let server_paused_before = self.open.as_ref().map(Open::server_paused_ms);
        let open_ledger = self.open.as_mut().map(|open| &mut open.ledger);
        self.walk.segment(segment, opens, open_ledger, framing);
        if let (Some(open), Some(before)) = (self.open.as_mut(), server_paused_before) {
            let paused = open.server_paused_ms() - before;
            if framing == Framing::Unknown {
                open.unframed_server_pause_ms += paused;
            }
            open.note_server_pace(segment, paused);
            open.note_close(segment);
        }
    }

    /// Opens a transaction with `segment`, the first of its request (or of
    /// a response no request asked for).
    fn open_transaction(&mut self, segment: &SegmentView, payload: &[u8]) {
        self.count += 1;
        let mut open = Open::new(self.count, segment.timestamp_ns, self.walk.take_pending());
        if segment.direction == Direction::ClientToServer {
            open.request_name = name::of_request(payload);
            open.forwarded_for = name::forwarded_for(payload);
            open.failure = name::failure_in(payload, Role::Client, segment.frame);
            open.awaits_no_answer = name::is_tls_alert(payload)
                || replies::awaits_no_answer(payload)
                || self
                    .server_close_end
                    .is_some_and(|end| segment.acknowledges(end));
        }
        self.open = Some(open);
    }

    /// Closes the open transaction, if any, before `next_request`.
    fn close_open(&mut self, connection: u64, next_request: Option<Move>) -> Option<Transaction> {
        if next_request.is_none() {
            self.walk
                .close(self.open.as_mut().map(|open| &mut open.ledger));
        }
        let open = self.open.take()?;
        Some(open.close(connection, next_request, self.conversational))
    }

    /// A message the capture never saw, which `segment` acknowledges (the
    /// capture dropped it): a request of the client's when no answer is
    /// awaited, or the server's answer to the open request. Its turn is
    /// taken where the acknowledgement was seen, and the time up to it
    /// charged to its sender (see [`ledger::Walk::unseen_message`]);
    /// returns the transaction an unseen request closed.
    fn unseen_message(&mut self, segment: &SegmentView) -> Option<Transaction> {
        // A byte alone may be a FIN.
        if segment.acked_unseen < 2 {
            return None;
        }
        let now = segment.timestamp_ns;
        let bytes = u64::from(segment.acked_unseen);
        match (segment.direction, self.open.as_mut()) {
            (Direction::ServerToClient, open)
                if open.as_ref().is_none_or(|o| o.response.is_some()) =>
            {
                let closed =
                    self.close_open(segment.connection, Some(Move::unseen_before(segment)));
                self.walk.unseen_message(segment, None);
                self.count += 1;
                let mut request = Open::new(self.count, now, self.walk.take_pending());
                request.request_bytes = bytes;
                self.open = Some(request);
                closed
            }
            (Direction::ClientToServer, Some(open))
                if open.response.is_none() && open.request_bytes > 0 =>
            {
                open.response = Some((now, now));
                open.response_bytes += bytes;
                open.server_moved
                    .get_or_insert(Move::unseen_before(segment));
                self.walk.unseen_message(segment, Some(&mut open.ledger));
                None
            }
            (Direction::ClientToServer, Some(open)) => {
                if let Some((_, end)) = open.response.as_mut() {
                    *end = (*end).max(now);
                    open.response_bytes += bytes;
                    self.walk.unseen_continuation(segment, &mut open.ledger);
                }
                None
            }
            _ => None,
        }
    }
}

/// Collects transactions from segments as the tracker hands them on.
#[derive(Debug, Default)]
pub struct Builder {
    /// Boxed: the table stays small and grows without moving each
    /// connection's state.
    connections: rustc_hash::FxHashMap<u64, Box<ConnectionTurns>>,
    done: kept::Kept,
    /// The ledgers of the connections concluded so far.
    ledgers: Vec<ConnectionLedger>,
}

impl Builder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Lists at most the transactions `bytes` hold, from now on: past them,
    /// a spread over the whole capture (see [`Builder::left_out`]).
    pub fn set_memory_budget(&mut self, bytes: u64) {
        self.done.set_memory_budget(bytes);
    }

    /// The transactions left out of the list since the last call, to be
    /// counted where every transaction counts (their connections' ledgers
    /// already count them).
    pub fn drain_left_out(&mut self) -> std::vec::Drain<'_, Times> {
        self.done.drain_left_out()
    }

    /// How many transactions the budget left out of the list.
    pub fn left_out(&self) -> u64 {
        self.done.left_out()
    }

    /// Takes one segment. `payload` is its captured payload (possibly cut
    /// short, or empty), read to name a request or response and to follow
    /// its protocol's framing; `server_port` is its connection's server's.
    pub fn observe(&mut self, segment: &SegmentView, payload: &[u8], server_port: u16) {
        let bare;
        let (segment, payload) = if segment.is_probe() {
            bare = SegmentView { len: 0, ..*segment };
            (&bare, &[][..])
        } else {
            (segment, payload)
        };
        if segment.flags.rst() && segment.direction == Direction::ServerToClient {
            self.server_reset(segment);
        }
        let turns = self.connections.entry(segment.connection).or_default();
        if segment.direction == Direction::ServerToClient {
            turns.server_close_end = turns.server_close_end.or(segment.close_end());
        }
        if let Some(finished) = turns.unseen_message(segment) {
            self.done.push(finished);
        }
        let opens = opens_transaction(turns.open.as_ref(), segment);
        if opens {
            if let Some(finished) = turns.close_open(segment.connection, Some(Move::of(segment))) {
                self.done.push(finished);
            }
        }
        turns.charge(segment, opens);
        if segment.len == 0 {
            return;
        }
        if opens {
            turns.open_transaction(segment, payload);
        }
        let asks = turns.framing.take(segment, payload, server_port);
        let open = turns.open.as_mut().expect("a transaction is open");
        let starts_a_message = opens || open.response.is_none();
        if starts_a_message && !turns.conversational && conversation::starts(payload) {
            turns.conversational = true;
        }
        match segment.direction {
            Direction::ClientToServer => {
                open.request_segment(segment);
                if let Some(asks) = asks {
                    open.note_asks(asks);
                }
            }
            Direction::ServerToClient => open.response_segment(segment, payload),
        }
    }

    /// A server's reset right after a request, instead of its answer, fails
    /// that request. (A reset after a long silence is a connection given up
    /// on, which the setup and loss findings tell.) A request awaiting no
    /// answer (a TLS alert, an LDAP unbind, or data sent after acknowledging
    /// the server's FIN) asked for nothing: the reset is a closed socket's
    /// answer to it. Nor does a reset fail a request the client had said
    /// goodbye after (its FIN came first), or one the server had not received
    /// whole (the reset does not acknowledge its end): a stream cut off, as
    /// a test tool's server does with data still coming, refused no question.
    fn server_reset(&mut self, segment: &SegmentView) {
        let waiting = self
            .connections
            .get_mut(&segment.connection)
            .and_then(|turns| turns.open.as_mut())
            .filter(|open| open.response.is_none() && open.request_bytes > 0)
            .filter(|open| !open.awaits_no_answer && open.client_closed_ns.is_none())
            .filter(|open| {
                open.request_end_seq
                    .is_some_and(|end| segment.acknowledges(end.0))
            })
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
        self.done.forget(connections, dropped);
    }

    /// Closes a connection no segment will come for any more (the tracker
    /// retired it): its open transaction and its ledger are final, and its
    /// state is freed.
    pub fn conclude(&mut self, connection: u64) {
        if let Some(turns) = self.connections.remove(&connection) {
            self.conclude_turns(connection, turns);
        }
    }

    fn conclude_turns(&mut self, connection: u64, mut turns: Box<ConnectionTurns>) {
        if let Some(closed) = turns.close_open(connection, None) {
            self.done.push(closed);
        }
        if turns.count > 0 {
            self.ledgers.push(ConnectionLedger {
                connection,
                transactions: 0,
                ledger: Ledger::default(),
                stretches: turns.walk.into_stretches(),
            });
        }
    }

    /// Closes every connection: their open transactions and ledgers are final.
    pub fn conclude_all(&mut self) {
        for (connection, turns) in std::mem::take(&mut self.connections) {
            self.conclude_turns(connection, turns);
        }
    }

    /// Every transaction listed, in the order each began, and the ledger of
    /// each connection that had any, in connection order, counting every
    /// transaction of its own, listed or not.
    pub fn finish(mut self) -> (Vec<Transaction>, Vec<ConnectionLedger>) {
        self.conclude_all();
        let mut ledgers = self.ledgers;
        ledgers.sort_by_cached_key(|ledger| ledger.connection);
        let done = self.done.finish(&mut ledgers);
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
