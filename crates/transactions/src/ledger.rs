//! The time ledger: where each transaction's time went, every millisecond
//! charged to exactly one part.
//!
//! A connection's life is walked segment by segment at the capture point,
//! and each stretch of time between two segments on its critical path is
//! charged by what ended it: the `tcp` stage says what released each data
//! segment (an ACK and what the sender lacked until it, a timer, duplicate
//! ACKs, its application), and the turn of the exchange says whose move it
//! was (the client's before a request, the server's before a response). A
//! transaction's ledger runs from the end of the previous one on its
//! connection (or the first SYN) to the last byte of its response, so the
//! ledgers of a connection's transactions tile its life, and their parts
//! always sum to the time they cover. When a transaction closes, the
//! pauses inside its messages stay the sender's only if the peer waited
//! for the rest; otherwise they were the exchange standing idle, the
//! client's own pace (see the crate's `waited`).

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use tcp::{Direction, EventKind, Lacked, Release, SegmentView};

use crate::framing::Framing;

/// One named part of a transaction's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, record::Wire)]
pub enum Part {
    /// Waiting for a SYN to be sent again after going unanswered.
    SynRetry,
    /// Handshake done, but the server took nothing in: its accept queue was full.
    AcceptQueue,
    /// The client connected and had not asked anything yet.
    ClientStart,
    /// The client's think time between a response and its next request.
    ClientThink,
    /// The client's application paused in the middle of a request that
    /// the server was waiting for the rest of.
    ClientPause,
    /// The client's own pace inside what it sent, where no one was shown
    /// to wait for the rest (separate messages, a person typing, data the
    /// protocol does not frame).
    ClientIdle,
    /// Round trips at the path's least delay.
    Propagation,
    /// Round trips above the path's least delay: queues on the way.
    Queueing,
    /// Segments following each other onto the path: transfer at its rate.
    Transfer,
    /// The server's processing, from the request to its answer.
    Server,
    /// The server's application paused in the middle of a response that
    /// someone was waiting for.
    ServerPause,
    /// The server's own pace: time before or inside what it sent that no
    /// one was shown to wait for (pushed updates, notifications, an answer
    /// to a message that asked for none, a line typed by a person).
    ServerIdle,
    /// A small segment held back until the peer's ACK (Nagle's algorithm).
    Nagle,
    /// The receiver held back its ACK of a lone segment, and the sender waited for it.
    DelayedAck,
    /// In flight reached the receiver's advertised window.
    ReceiveWindow,
    /// The receiver advertised a zero window.
    ZeroWindow,
    /// The sender waited for everything to be acknowledged before sending
    /// more, though the window allowed more: a small send buffer, or an
    /// application that writes only once all is acknowledged.
    SendBuffer,
    /// The sender's congestion window let no more go until an ACK came.
    CongestionWindow,
    /// A retransmission timer (timeout or tail-loss probe) had to resend a
    /// segment that later ones had followed.
    RetransmissionTimeout,
    /// The last segment sent was lost: nothing after it could raise
    /// duplicate ACKs, so a timer had to resend it.
    TailLoss,
    /// Duplicate ACKs asked for a lost segment again (fast retransmission).
    LossRecovery,
}

impl Part {
    pub const ALL: [Part; 21] = [
        Part::SynRetry,
        Part::AcceptQueue,
        Part::ClientStart,
        Part::ClientThink,
        Part::ClientPause,
        Part::ClientIdle,
        Part::Propagation,
        Part::Queueing,
        Part::Transfer,
        Part::Server,
        Part::ServerPause,
        Part::ServerIdle,
        Part::Nagle,
        Part::DelayedAck,
        Part::ReceiveWindow,
        Part::ZeroWindow,
        Part::SendBuffer,
        Part::CongestionWindow,
        Part::RetransmissionTimeout,
        Part::TailLoss,
        Part::LossRecovery,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Part::SynRetry => "syn_retry",
            Part::AcceptQueue => "accept_queue",
            Part::ClientStart => "client_start",
            Part::ClientThink => "client_think",
            Part::ClientPause => "client_pause",
            Part::ClientIdle => "client_idle",
            Part::Propagation => "propagation",
            Part::Queueing => "queueing",
            Part::Transfer => "transfer",
            Part::Server => "server",
            Part::ServerPause => "server_pause",
            Part::ServerIdle => "server_idle",
            Part::Nagle => "nagle",
            Part::DelayedAck => "delayed_ack",
            Part::ReceiveWindow => "receive_window",
            Part::ZeroWindow => "zero_window",
            Part::SendBuffer => "send_buffer",
            Part::CongestionWindow => "congestion_window",
            Part::RetransmissionTimeout => "retransmission_timeout",
            Part::TailLoss => "tail_loss",
            Part::LossRecovery => "loss_recovery",
        }
    }

    /// The kind of time it is: `setup`, `client`, `network`, `server`, or
    /// `tcp` (TCP's own waits).
    pub fn group(self) -> &'static str {
        match self {
            Part::SynRetry | Part::AcceptQueue => "setup",
            Part::ClientStart | Part::ClientThink | Part::ClientPause | Part::ClientIdle => {
                "client"
            }
            Part::Propagation | Part::Queueing | Part::Transfer => "network",
            Part::Server | Part::ServerPause | Part::ServerIdle => "server",
            _ => "tcp",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// A transaction's time by part, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, record::Wire)]
pub struct Ledger([f64; Part::ALL.len()]);

impl Ledger {
    pub fn get(&self, part: Part) -> f64 {
        self.0[part.index()]
    }

    pub fn charge(&mut self, part: Part, ms: f64) {
        if ms > 0.0 {
            self.0[part.index()] += ms;
        }
    }

    /// Moves all the time charged to `from` to `to`.
    pub fn move_to(&mut self, from: Part, to: Part) {
        let ms = std::mem::take(&mut self.0[from.index()]);
        self.charge(to, ms);
    }

    /// Moves `ms` of the time charged to `from` (at most all of it) to `to`.
    pub fn move_ms(&mut self, from: Part, to: Part, ms: f64) {
        let moved = ms.clamp(0.0, self.get(from));
        self.0[from.index()] -= moved;
        self.charge(to, moved);
    }

    pub fn add(&mut self, other: &Ledger) {
        for (sum, ms) in self.0.iter_mut().zip(other.0) {
            *sum += ms;
        }
    }

    pub fn total_ms(&self) -> f64 {
        self.0.iter().sum()
    }

    /// The parts with time charged, in a fixed order.
    pub fn parts(&self) -> impl Iterator<Item = (Part, f64)> + '_ {
        Part::ALL
            .iter()
            .map(|&part| (part, self.get(part)))
            .filter(|&(_, ms)| ms > 0.0)
    }
}

/// Written as an object of the parts with time: `{"server": 20.0, "propagation": 1.0}`.
impl Serialize for Ledger {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (part, ms) in self.parts() {
            map.serialize_entry(part.as_str(), &((ms * 1e3).round() / 1e3))?;
        }
        map.end()
    }
}

/// A column of milliseconds per part; null where nothing was charged (the
/// JSON leaves those parts out).
impl record::Cell for Ledger {
    fn kind() -> record::Kind {
        let parts = Part::ALL.iter().map(|part| record::Column {
            name: part.as_str(),
            kind: record::Kind::Float,
            nullable: true,
        });
        record::Kind::Group(parts.collect())
    }
}

fn ms(from_ns: i64, to_ns: i64) -> f64 {
    (to_ns - from_ns).max(0) as f64 / 1e6
}

/// The frames that show one charge: the segment the wait began after, the
/// one that ended it, and the ACK that released it where one did.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, record::Wire)]
pub struct Stretch {
    pub from_frame: u64,
    pub to_frame: u64,
    pub ack_frame: Option<u64>,
    pub ms: f64,
    /// The direction of the segment that ended it.
    pub ended_by: Direction,
    /// The protocol's lengths said the sender's message was unfinished
    /// while it waited: its peer was waiting for the bytes that ended it.
    pub inside_message: bool,
}

impl Stretch {
    /// The frames in order, each once.
    pub fn frames(&self) -> Vec<u64> {
        let mut frames: Vec<u64> = [Some(self.from_frame), self.ack_frame, Some(self.to_frame)]
            .into_iter()
            .flatten()
            .collect();
        frames.dedup();
        frames
    }
}

/// A connection's ledger: all its transactions' time by part, and for each
/// part the longest single stretch charged to it, as evidence.
#[derive(Debug, Clone, PartialEq, Serialize, record::Wire, record::Columns)]
pub struct ConnectionLedger {
    pub connection: u64,
    pub transactions: u64,
    pub ledger: Ledger,
    /// For each part charged, how many separate stretches it took and the longest.
    #[serde(skip)]
    pub stretches: Vec<(Part, u64, Stretch)>,
}

impl ConnectionLedger {
    /// The ledger of `connection` among `ledgers`, which are in connection
    /// order: where every connection has one, at its id.
    pub fn of(ledgers: &[ConnectionLedger], connection: u64) -> Option<&ConnectionLedger> {
        let at_id = usize::try_from(connection)
            .ok()
            .and_then(|at| ledgers.get(at))
            .filter(|ledger| ledger.connection == connection);
        at_id.or_else(|| {
            ledgers
                .binary_search_by_key(&connection, |ledger| ledger.connection)
                .ok()
                .map(|at| &ledgers[at])
        })
    }

    /// The longest stretch charged to `part` on this connection.
    pub fn longest(&self, part: Part) -> Option<Stretch> {
        self.stretches
            .iter()
            .find(|(of, ..)| *of == part)
            .map(|&(.., stretch)| stretch)
    }

    /// How many separate stretches were charged to `part` on this connection.
    pub fn stretch_count(&self, part: Part) -> u64 {
        self.stretches
            .iter()
            .find(|(of, ..)| *of == part)
            .map_or(0, |&(_, count, _)| count)
    }
}

/// Whose move the connection waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Turn {
    /// The handshake is under way.
    #[default]
    Setup,
    /// Established; the client has not asked (again) yet.
    Client,
    /// The request is being sent, or waits for its answer.
    Request,
    /// The response is being sent.
    Response,
}

/// Where the charges of one stretch go, and what they record as evidence.
struct Charges<'a> {
    ledger: &'a mut Ledger,
    evidence: &'a mut Vec<(Part, u64, Stretch)>,
    from_frame: u64,
    to_frame: u64,
    direction: Direction,
    inside_message: bool,
}

impl Charges<'_> {
    fn charge(&mut self, part: Part, ms: f64, ack_frame: Option<u64>) {
        if ms <= 0.0 {
            return;
        }
        self.ledger.charge(part, ms);
        let stretch = Stretch {
            from_frame: self.from_frame,
            to_frame: self.to_frame,
            ack_frame,
            ms,
            ended_by: self.direction,
            inside_message: self.inside_message,
        };
        match self.evidence.iter_mut().find(|(of, ..)| *of == part) {
            Some((_, count, longest)) => {
                *count += 1;
                if ms > longest.ms {
                    *longest = stretch;
                }
            }
            None => self.evidence.push((part, 1, stretch)),
        }
    }
}

/// Where a connection's exchange stands.
#[derive(Debug, Clone, Copy, Default)]
struct State {
    turn: Turn,
    /// The server's SYN-ACK has been seen: the client's ACK completes the handshake.
    syn_ack_seen: bool,
    handshake_acked: bool,
    answered_before: bool,
    /// The server sent its SYN-ACK again after the client had acknowledged
    /// it and has acknowledged none of the client's data since: it did not
    /// take the connection in (its accept queue was full).
    not_accepted: bool,
    /// The server has acknowledged none of the client's data yet.
    nothing_acked: bool,
    /// How often the client's timer resent data the server had not
    /// acknowledged, since the handshake.
    unheard_resends: u32,
    /// The client's last think time between turns, and the server's last
    /// answer time, where no loss stood in them (ms).
    usual_think_ms: f64,
    usual_server_ms: f64,
}

impl State {
    /// The client's ACK of the server's SYN-ACK completes the handshake.
    fn completed_by(&self, segment: &SegmentView) -> bool {
        self.turn == Turn::Setup
            && self.syn_ack_seen
            && segment.direction == Direction::ClientToServer
            && segment.flags.ack()
    }

    /// Whether the client's timer resent `segment` because the server did
    /// not take the connection in: it resent its SYN-ACK as though the
    /// handshake never completed; or its host ignored the request, which
    /// reached the capture point nearer to it; or it ignored the resend
    /// too, which a path losing packets at random rarely does twice.
    fn unaccepted(&self, segment: &SegmentView) -> bool {
        let nearer_the_server = segment.rtts.to_receiver_ns < segment.rtts.to_sender_ns;
        self.not_accepted
            || (self.handshake_acked
                && self.nothing_acked
                && segment.resent()
                && (nearer_the_server || self.unheard_resends > 0))
    }
}

/// The end of the last charged stretch: its time, its frame, and the
/// direction of the segment there.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    at_ns: i64,
    frame: u64,
    direction: Direction,
}

/// One connection's walk: the time charged so far, and what it waits for.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    /// Up to where the connection's life has been charged.
    cursor: Option<Cursor>,
    state: State,
    /// Charges not yet given to a transaction (setup, the client's wait
    /// before its first request); the next transaction takes them.
    pending: Ledger,
    /// For each part charged so far (a few of them, on most connections):
    /// its stretches and the longest.
    evidence: Vec<(Part, u64, Stretch)>,
    /// The latest zero-window probe since the cursor: a sender that probes
    /// a shut window has data it is waiting to send.
    probed: Option<Cursor>,
}

impl Walk {
    /// Charges the stretch up to `segment` by what ended it, to `open` (the
    /// open transaction's ledger) or, when the segment opens a transaction
    /// or none is open, to the charges the next transaction takes.
    /// `framing` is what the sender's bytes before `segment` said of its
    /// message: a pause it ended lay inside a message or between two.
    pub fn segment(
        &mut self,
        segment: &SegmentView,
        opens: bool,
        open: Option<&mut Ledger>,
        framing: Framing,
    ) {
        let now = segment.timestamp_ns;
        let here = Cursor {
            at_ns: now,
            frame: segment.frame,
            direction: segment.direction,
        };
        match self.cursor {
            Some(cursor) if now > cursor.at_ns => {
                let ledger = match open {
                    Some(ledger) if !opens => ledger,
                    _ => &mut self.pending,
                };
                let mut charges = Charges {
                    ledger,
                    evidence: &mut self.evidence,
                    from_frame: cursor.frame,
                    to_frame: segment.frame,
                    direction: segment.direction,
                    inside_message: framing == Framing::Unfinished,
                };
                let pause = pause_part(segment.direction, framing);
                if charge(&mut self.state, segment, cursor, opens, pause, &mut charges) {
                    self.cursor = Some(here);
                    self.probed = None;
                } else if segment.events.has(EventKind::ZeroWindowProbe) {
                    self.probed = Some(here);
                }
            }
            Some(_) => {}
            // A connection seen from its SYN is charged from it; one caught
            // mid-stream from its first data, not from a stray ACK.
            None if segment.flags.syn() || segment.len > 0 => self.cursor = Some(here),
            None => {}
        }
        self.advance_turn(segment, opens);
    }

    /// The connection's last segment has been walked: a sender still
    /// probing a shut window when the capture ended waited for it from its
    /// last data to its last probe, whether or not a transaction was open.
    /// The wait goes to `open` (the open transaction's ledger) or, with
    /// none, to the charges the next transaction would take.
    pub fn close(&mut self, open: Option<&mut Ledger>) {
        let (Some(cursor), Some(probe)) = (self.cursor, self.probed.take()) else {
            return;
        };
        let mut charges = Charges {
            ledger: open.unwrap_or(&mut self.pending),
            evidence: &mut self.evidence,
            from_frame: cursor.frame,
            to_frame: probe.frame,
            direction: probe.direction,
            inside_message: false,
        };
        charges.charge(Part::ZeroWindow, ms(cursor.at_ns, probe.at_ns), None);
        self.cursor = Some(probe);
    }

    /// A message the capture never saw, which `segment` acknowledges: the
    /// turn passed to its sender unseen, and is taken as having passed
    /// where `segment` was seen. The side of `segment` acknowledged it with
    /// no ACK of its own before (or with that ACK), within the time a
    /// receiver holds back an ACK: the time up to it, less a round trip
    /// through the capture point, was the unseen sender's. An unseen
    /// request was the client's think (or its start, before any answer),
    /// charged with the charges the next transaction takes; an unseen
    /// answer was the server's, charged to `open`, the request's.
    pub fn unseen_message(&mut self, segment: &SegmentView, open: Option<&mut Ledger>) {
        let now = segment.timestamp_ns;
        let request = segment.direction == Direction::ServerToClient;
        if let Some(cursor) = self.cursor.filter(|cursor| now > cursor.at_ns) {
            let mut charges = Charges {
                ledger: open.unwrap_or(&mut self.pending),
                evidence: &mut self.evidence,
                from_frame: cursor.frame,
                to_frame: segment.frame,
                direction: segment.direction,
                inside_message: false,
            };
            let gap = ms(cursor.at_ns, now);
            let round_trip = segment.rtts.to_receiver_ns + segment.rtts.to_sender_ns;
            let path = (round_trip as f64 / 1e6).min(gap);
            charges.charge(Part::Propagation, path, None);
            let sender = match (request, self.state.answered_before) {
                (true, true) => Part::ClientThink,
                (true, false) => Part::ClientStart,
                (false, _) => Part::Server,
            };
            charges.charge(sender, gap - path, None);
        }
        self.cursor = Some(Cursor {
            at_ns: now,
            frame: segment.frame,
            direction: segment.direction,
        });
        self.probed = None;
        if request {
            self.state.turn = Turn::Request;
        } else {
            self.state.turn = Turn::Response;
            self.state.answered_before = true;
        }
    }

    /// More of the message under way that the capture never saw, which
    /// `segment` acknowledges: its sender was sending it, so the time up to
    /// the acknowledgement went to its transfer, not to a pause of the
    /// sender's, charged to `open`.
    pub fn unseen_continuation(&mut self, segment: &SegmentView, open: &mut Ledger) {
        let now = segment.timestamp_ns;
        let Some(cursor) = self.cursor.filter(|cursor| now > cursor.at_ns) else {
            return;
        };
        let mut charges = Charges {
            ledger: open,
            evidence: &mut self.evidence,
            from_frame: cursor.frame,
            to_frame: segment.frame,
            direction: cursor.direction,
            inside_message: false,
        };
        charges.charge(Part::Transfer, ms(cursor.at_ns, now), None);
        self.cursor = Some(Cursor {
            at_ns: now,
            frame: segment.frame,
            direction: cursor.direction,
        });
        self.probed = None;
    }

    /// The charges waiting for the next transaction.
    pub fn take_pending(&mut self) -> Ledger {
        std::mem::take(&mut self.pending)
    }

    /// For each part charged on this connection, in the order of the
    /// parts: its stretches and the longest.
    pub fn into_stretches(self) -> Vec<(Part, u64, Stretch)> {
        let mut evidence = self.evidence;
        evidence.sort_unstable_by_key(|&(part, ..)| part);
        evidence
    }

    /// Moves the turn on after `segment`.
    fn advance_turn(&mut self, segment: &SegmentView, opens: bool) {
        let flags = segment.flags;
        let client = segment.direction == Direction::ClientToServer;
        if !client && flags.ack() && segment.ack > 1 {
            self.state.not_accepted = false;
            self.state.nothing_acked = false;
        }
        if client && segment.resent() && self.state.nothing_acked {
            self.state.unheard_resends += 1;
        }
        if flags.syn() {
            self.state.syn_ack_seen |= !client;
            let again = segment.events.has(EventKind::SynRetransmission);
            if again && !client && self.state.handshake_acked {
                self.state.not_accepted = true;
            } else {
                self.state.turn = Turn::Setup;
            }
            return;
        }
        if segment.len == 0 {
            if self.state.completed_by(segment) {
                self.state.handshake_acked = true;
                self.state.nothing_acked = true;
                self.state.turn = Turn::Client;
            }
            return;
        }
        if opens && client {
            self.state.turn = Turn::Request;
        } else if !client && matches!(self.state.turn, Turn::Request | Turn::Client) {
            self.state.turn = Turn::Response;
            self.state.answered_before = true;
        }
    }
}

/// Where a pause of the sender's own application goes, by what its bytes
/// before it said of its message. Inside a message the protocol says is
/// unfinished, the peer waits for the rest. Between messages, or where the
/// protocol says nothing, it is the sender's own pace, except that a
/// server's pause in a response the protocol does not frame is kept as a
/// pause until the transaction closes, when the client's reaction to its
/// end says whether it waited (see the crate's `Open::settle`).
fn pause_part(sender: Direction, framing: Framing) -> Part {
    match (sender, framing) {
        (Direction::ClientToServer, Framing::Unfinished) => Part::ClientPause,
        (Direction::ClientToServer, _) => Part::ClientIdle,
        (Direction::ServerToClient, Framing::Complete) => Part::ServerIdle,
        (Direction::ServerToClient, _) => Part::ServerPause,
    }
}

/// Charges `(cursor, segment]` given where the exchange stands, with
/// `sender_pause` the part a pause of the sender's application goes to;
/// false when the segment ends no wait on the connection's critical path
/// (the stretch stays uncharged).
fn charge(
    state: &mut State,
    segment: &SegmentView,
    cursor: Cursor,
    opens: bool,
    sender_pause: Part,
    charges: &mut Charges,
) -> bool {
    let State {
        turn,
        handshake_acked,
        answered_before,
        ..
    } = *state;
    let gap = ms(cursor.at_ns, segment.timestamp_ns);
    // A turn passing from one side to the other crosses the capture point:
    // the way from it to the side that moves next and back is the path's.
    let path_to_sender = if cursor.direction == segment.direction {
        0.0
    } else {
        (segment.rtts.to_sender_ns as f64 / 1e6).min(gap)
    };
    let client = segment.direction == Direction::ClientToServer;
    let flags = segment.flags;
    if flags.syn() {
        let part = match (
            segment.events.has(EventKind::SynRetransmission),
            handshake_acked,
        ) {
            (true, true) => Part::AcceptQueue,
            (true, false) => Part::SynRetry,
            (false, _) => Part::Propagation,
        };
        charges.charge(part, gap, None);
        return true;
    }
    if segment.len == 0 {
        let completes_handshake = state.completed_by(segment);
        if completes_handshake {
            charges.charge(Part::Propagation, gap, None);
        }
        return completes_handshake;
    }
    if segment.events.has(EventKind::SpuriousRetransmission)
        || segment.events.has(EventKind::OutOfOrder)
    {
        return false;
    }
    if opens && client {
        charges.charge(Part::Propagation, path_to_sender, None);
        let waited = gap - path_to_sender;
        if answered_before {
            state.usual_think_ms = charge_turn(
                Part::ClientThink,
                state.usual_think_ms,
                waited,
                segment,
                charges,
            );
        } else {
            charge_turn(Part::ClientStart, 0.0, waited, segment, charges);
        }
        return true;
    }
    let answers = !client && matches!(turn, Turn::Request | Turn::Client);
    if answers && !segment.resent() {
        charges.charge(Part::Propagation, path_to_sender, None);
        let waited = gap - path_to_sender;
        state.usual_server_ms = charge_turn(
            Part::Server,
            state.usual_server_ms,
            waited,
            segment,
            charges,
        );
        return true;
    }
    match segment.wait.map(|wait| wait.ended_by) {
        Some(Release::Timer { .. }) if client && state.unaccepted(segment) => {
            charges.charge(Part::AcceptQueue, gap, None)
        }
        Some(release) => charge_release(release, segment, cursor.at_ns, sender_pause, charges),
        None => charges.charge(Part::Transfer, gap, None),
    }
    true
}

/// Charges a side's turn, `waited` ms before `segment` opened it, to
/// `part`; returns the side's usual time for it from now on. When the
/// sender's timer resent the segment, lost before the capture point saw it
/// first, the side took its usual time and the rest waited for the timer.
fn charge_turn(
    part: Part,
    usual_ms: f64,
    waited: f64,
    segment: &SegmentView,
    charges: &mut Charges,
) -> f64 {
    let timer = match segment.wait.map(|wait| wait.ended_by) {
        Some(Release::Timer { tail: true }) => Part::TailLoss,
        Some(Release::Timer { tail: false }) => Part::RetransmissionTimeout,
        _ => {
            charges.charge(part, waited, None);
            return waited;
        }
    };
    let usual = usual_ms.clamp(0.0, waited.max(0.0));
    charges.charge(part, usual, None);
    charges.charge(timer, waited - usual, None);
    usual_ms
}

/// Charges `(cursor, segment]` for a data segment that continued its
/// sender's message, by what released it.
fn charge_release(
    release: Release,
    segment: &SegmentView,
    cursor: i64,
    sender_pause: Part,
    charges: &mut Charges,
) {
    let now = segment.timestamp_ns;
    let gap = ms(cursor, now);
    match release {
        Release::Queued => charges.charge(Part::Transfer, gap, None),
        Release::Application => charges.charge(sender_pause, gap, None),
        Release::Timer { tail: false } => charges.charge(Part::RetransmissionTimeout, gap, None),
        Release::Timer { tail: true } => charges.charge(Part::TailLoss, gap, None),
        Release::DuplicateAcks => charges.charge(Part::LossRecovery, gap, None),
        Release::Ack {
            at_ns,
            frame,
            lacked,
        } => {
            // The ACK reached the sender a round trip (from the capture point
            // to the sender) after it was seen here. If that was before the
            // previous segment left, the sender was not waiting: this segment
            // simply followed it. Otherwise the sender stood waiting for it.
            let reached_sender = at_ns + segment.rtts.to_sender_ns;
            if reached_sender <= cursor {
                charges.charge(Part::Transfer, gap, None);
            } else {
                charges.charge(part_lacked(lacked), gap, Some(frame));
            }
        }
    }
}

fn part_lacked(lacked: Lacked) -> Part {
    match lacked {
        Lacked::ZeroWindow => Part::ZeroWindow,
        Lacked::ReceiveWindow => Part::ReceiveWindow,
        Lacked::AllAcked {
            small_held: true, ..
        } => Part::Nagle,
        Lacked::AllAcked {
            ack_delayed: true, ..
        } => Part::DelayedAck,
        Lacked::AllAcked { .. } => Part::SendBuffer,
        Lacked::CongestionWindow { after_loss: true } => Part::LossRecovery,
        Lacked::CongestionWindow { after_loss: false } => Part::CongestionWindow,
    }
}
