//! One connection instance: roles, handshake, both directions, state and history.

use decode::{Endpoint, Flags, Segment};

use crate::counters::Measured;
use crate::direction::{self, Half, Relative, SideRtts, WindowScale};
use crate::event::{Direction, EventKind, EventSet};
use crate::recorded_twice::{Recent, Repeat};
use crate::seq::SeqNumber;
use crate::services;
use crate::stack::MAX_SYN_RETRIES;
use crate::summary::{Close, CloseHow, ConnState, ConnectionSummary, Handshake, Role, SynOptions};
use crate::view::{SegmentView, Wire};

/// Zeek's history letters, in the order they are listed per direction.
const HISTORY_LETTERS: [(u8, char); 8] = [
    (1 << 0, 's'),
    (1 << 1, 'h'),
    (1 << 2, 'a'),
    (1 << 3, 'd'),
    (1 << 4, 'f'),
    (1 << 5, 'r'),
    (1 << 6, 't'),
    (1 << 7, 'w'),
];

#[derive(Debug)]
pub struct Connection {
    pub id: u64,
    client: Endpoint,
    server: Endpoint,
    roles_guessed: bool,
    first_frame: u64,
    last_frame: u64,
    first_ns: i64,
    pub last_ns: i64,
    halves: [Half; 2],
    handshake: Handshake,
    last_syn_ns: Option<i64>,
    first_rtt_ns: Option<i64>,
    history: String,
    history_seen: [u8; 2],
    fin_frame: [Option<u64>; 2],
    rst_frame: [Option<u64>; 2],
    recent: [Recent; 2],
}

impl Connection {
    /// Starts a connection at its first segment, deciding who is the client.
    pub fn new(id: u64, first: &Segment) -> Self {
        let (client, server, roles_guessed) = roles(first);
        Connection {
            id,
            client,
            server,
            roles_guessed,
            first_frame: first.frame,
            last_frame: first.frame,
            first_ns: first.timestamp_ns,
            last_ns: first.timestamp_ns,
            halves: [Half::default(), Half::default()],
            handshake: Handshake::default(),
            last_syn_ns: None,
            first_rtt_ns: None,
            history: if roles_guessed {
                "^".into()
            } else {
                String::new()
            },
            history_seen: [0; 2],
            fin_frame: [None; 2],
            rst_frame: [None; 2],
            recent: Default::default(),
        }
    }

    pub fn direction_of(&self, segment: &Segment) -> Direction {
        if segment.src == self.client {
            Direction::ClientToServer
        } else {
            Direction::ServerToClient
        }
    }

    /// Ended by a RST, or by FINs from both sides.
    pub fn is_closed(&self) -> bool {
        self.rst_frame.iter().any(Option::is_some) || self.fin_frame.iter().all(Option::is_some)
    }

    /// Reset, or both FINs sent and acknowledged: what a well-behaved
    /// peer sends after this adds nothing to the queues.
    fn is_done(&self) -> bool {
        let [client, server] = &self.halves;
        self.rst_frame.iter().any(Option::is_some)
            || (self.fin_frame.iter().all(Option::is_some)
                && client.unacknowledged(server) == 0
                && server.unacknowledged(client) == 0)
    }

    /// Only a handshake that never completed: the client sent nothing but
    /// SYNs, and the server nothing but SYN-ACKs or resets (a flood, a scan,
    /// a closed or filtered port).
    pub fn is_bare_attempt(&self) -> bool {
        const SYN: u8 = 1 << 0;
        const SYN_ACK: u8 = 1 << 1;
        const RST: u8 = 1 << 5;
        let [client, server] = self.history_seen;
        !self.roles_guessed && client == SYN && server & !(SYN_ACK | RST) == 0
    }

    pub fn client(&self) -> Endpoint {
        self.client
    }

    pub fn server(&self) -> Endpoint {
        self.server
    }

    pub fn first_frame(&self) -> u64 {
        self.first_frame
    }

    pub fn first_ns(&self) -> i64 {
        self.first_ns
    }

    /// A SYN whose ISN differs from the one this connection knows for its
    /// sender starts a new connection on the 4-tuple; one with the same ISN
    /// is a retry, even after a RST (as Wireshark reads it).
    pub fn is_reused_by(&self, segment: &Segment) -> bool {
        if !segment.flags.syn() || segment.flags.ack() {
            return false;
        }
        let half = &self.halves[self.direction_of(segment).index()];
        half.base_seq().is_some_and(|isn| isn != segment.seq)
    }

    /// The sender of `segment` numbered a packet of another connection `id`
    /// since its previous one here.
    pub fn host_numbered_elsewhere(&mut self, segment: &Segment, id: u16) {
        let direction = self.direction_of(segment);
        self.halves_mut(direction).0.host_numbered_elsewhere(id);
    }

    /// How the capture holds `segment` again, when it does (see
    /// [`crate::recorded_twice`]): the copy is left out.
    pub fn repeat_of(&mut self, segment: &Segment) -> Option<Repeat> {
        let sender = self.direction_of(segment).index();
        let repeat = self.recent[sender].repeats(segment);
        if repeat.is_none() {
            self.recent[1 - sender].peer_sent();
        }
        repeat
    }

    /// Analyses one segment; returns what it made of it, and whether that
    /// rests on `capture_drops` being false. `capture_drops` says the
    /// capture has been seen to drop data its receiver acknowledged.
    pub fn process(&mut self, segment: &Segment, capture_drops: bool) -> (SegmentView, bool) {
        let direction = self.direction_of(segment);
        let was_done = self.is_done();
        self.last_frame = segment.frame;
        self.last_ns = self.last_ns.max(segment.timestamp_ns);
        let syn_retry = self.track_handshake(segment, direction);
        let first_rtt_ns = self.first_rtt_ns;
        let rtts = self.side_rtts(direction);
        let (fwd, rev) = self.halves_mut(direction);
        fwd.learn_base(segment);
        if segment.flags.ack() {
            rev.learn_base_from_ack(segment.ack);
        }
        let rel = Relative {
            seq: fwd.relative(segment.seq),
            ack: if segment.flags.ack() {
                rev.relative(segment.ack)
            } else {
                0
            },
            len: segment.payload_len,
            window: fwd.scaled_window(segment),
        };
        let acked_unseen = if segment.flags.ack() {
            direction::newly_acked_unseen(fwd, rev, rel.ack)
        } else {
            0
        };
        let (mut flagged, sent) =
            direction::analyze(fwd, rev, segment, rel, first_rtt_ns, rtts, capture_drops);
        if syn_retry {
            flagged.raise(EventKind::SynRetransmission);
        }
        let rtt_sample_ns = track_rtt(fwd, rev, segment, rel, flagged);
        direction::count(fwd, rev, segment, rel, flagged);
        let in_flight = fwd.in_flight(rev);
        self.track_history(segment, direction, flagged);
        self.track_close(segment, direction);
        if self.is_done() && !was_done {
            self.shrink_to_fit();
        }
        let view = SegmentView {
            frame: segment.frame,
            timestamp_ns: segment.timestamp_ns,
            connection: self.id,
            direction,
            seq: rel.seq,
            ack: rel.ack,
            len: rel.len,
            flags: segment.flags,
            window: rel.window,
            in_flight,
            events: flagged,
            acked_unseen,
            rtt_sample_ns,
            wait: sent.and_then(|sent| sent.wait),
            flight: sent.map(|sent| sent.flight),
            rtts,
            wire: Wire {
                ip_id: segment.ip_id,
                ttl: segment.ttl,
                seq: SeqNumber(segment.seq),
                ack: SeqNumber(if segment.flags.ack() { segment.ack } else { 0 }),
            },
        };
        (view, sent.is_some_and(|sent| sent.rests_on_no_drops))
    }

    /// A finished connection's queues seldom grow again: what they hold
    /// beyond their contents is given back while it lingers.
    fn shrink_to_fit(&mut self) {
        for half in &mut self.halves {
            half.shrink_to_fit();
        }
        self.history.shrink_to_fit();
    }

    /// Round trips from the capture point to the sender of a segment going
    /// `direction` and to its receiver: the handshake's split, or the
    /// quickest data-to-ACK sample, whichever is less.
    fn side_rtts(&self, direction: Direction) -> SideRtts {
        let least = |handshake_ms: Option<f64>, acking: &Half, sending: &Half| {
            let handshake = handshake_ms.map(|ms| (ms * 1e6) as i64);
            [
                handshake,
                acking.rtt.least_ns(),
                sending.window_bound.least_ns(),
                sending.least_echo_ns(),
            ]
            .iter()
            .filter_map(|&known| known)
            .min()
            .unwrap_or(0)
        };
        // A side's data-to-ACK samples time the path to the other side, and
        // a window's ACK to the data it let go, or a timestamp to its echo,
        // the path to the sender.
        let [client, server] = &self.halves;
        let to_client = least(self.handshake.rtt_to_client_ms, server, client);
        let to_server = least(self.handshake.rtt_to_server_ms, client, server);
        let variation =
            |least_ns: i64, acking: &Half| (acking.rtt.longest_prompt_ns() - least_ns).max(0);
        match direction {
            Direction::ClientToServer => SideRtts {
                to_sender_ns: to_client,
                to_receiver_ns: to_server,
                to_sender_variation_ns: variation(to_client, server),
            },
            Direction::ServerToClient => SideRtts {
                to_sender_ns: to_server,
                to_receiver_ns: to_client,
                to_sender_variation_ns: variation(to_server, client),
            },
        }
    }

    /// Duplicate ACKs in a row so far from `direction`.
    pub fn duplicate_ack_run(&self, direction: Direction) -> u64 {
        self.halves[direction.index()].duplicate_ack_run()
    }

    fn halves_mut(&mut self, direction: Direction) -> (&mut Half, &mut Half) {
        let [client_half, server_half] = &mut self.halves;
        match direction {
            Direction::ClientToServer => (client_half, server_half),
            Direction::ServerToClient => (server_half, client_half),
        }
    }

    /// Records SYN, SYN-ACK and the ACK that completes them; true for a repeated SYN.
    fn track_handshake(&mut self, segment: &Segment, direction: Direction) -> bool {
        let now = segment.timestamp_ns;
        let flags = segment.flags;
        let handshake = &mut self.handshake;
        if flags.syn() && !flags.ack() {
            self.last_syn_ns = Some(now);
            if handshake.syn_ns.is_none() {
                handshake.syn_ns = Some(now);
                handshake.client_options = Some(syn_options(segment));
                return false;
            }
            // Sent again before the handshake completed: an answer lost
            // on either way makes the client try again.
            if handshake.ack_ns.is_none() {
                handshake.syn_retries += 1;
                if handshake.syn_retries_ns.len() < MAX_SYN_RETRIES {
                    handshake.syn_retries_ns.push(now);
                }
                let options = Some(syn_options(segment));
                if options != handshake.client_options {
                    handshake.retry_client_options = options;
                }
            }
            return true;
        }
        if flags.syn() && flags.ack() {
            if handshake.syn_ack_ns.is_some() {
                handshake.syn_ack_retries += 1;
                return true;
            }
            handshake.syn_ack_ns = Some(now);
            handshake.server_options = Some(syn_options(segment));
            handshake.rtt_to_server_ms = self
                .last_syn_ns
                .and_then(|syn| decode::elapsed_ms(syn, now));
            self.learn_window_scales();
            self.learn_segment_sizes();
            return false;
        }
        let completes = direction == Direction::ClientToServer
            && flags.ack()
            && !flags.has(Flags::RST)
            && handshake.ack_ns.is_none();
        if let (true, Some(syn_ack)) = (completes, handshake.syn_ack_ns) {
            handshake.ack_ns = Some(now);
            handshake.rtt_to_client_ms = decode::elapsed_ms(syn_ack, now);
            self.first_rtt_ns = self
                .last_syn_ns
                .and_then(|syn| decode::elapsed_ns(syn, now));
        }
        false
    }

    /// Each side may send segments as large as both SYNs allow: the peer's
    /// MSS, and its own, which its link sets; less the timestamps option
    /// when both offered it.
    fn learn_segment_sizes(&mut self) {
        let (Some(client), Some(server)) =
            (self.handshake.client_options, self.handshake.server_options)
        else {
            return;
        };
        let options = if client.timestamps && server.timestamps {
            12
        } else {
            0
        };
        let payload = |mss: Option<u16>| mss.map(|mss| u32::from(mss).saturating_sub(options));
        let smaller = |own: Option<u16>, peer: Option<u16>| own.min(peer).or(own).or(peer);
        if let Some(mss) = payload(smaller(client.mss, server.mss)) {
            self.halves[0].release.learn_mss(mss);
            self.halves[1].release.learn_mss(mss);
        }
    }

    /// Window scaling applies only when both SYNs offered it.
    fn learn_window_scales(&mut self) {
        let client = self.handshake.client_options.and_then(|o| o.window_scale);
        let server = self.handshake.server_options.and_then(|o| o.window_scale);
        let (client_scale, server_scale) = match (client, server) {
            (Some(client), Some(server)) => {
                (WindowScale::Shift(client), WindowScale::Shift(server))
            }
            (None, _) if self.handshake.client_options.is_none() => return,
            _ => (WindowScale::None, WindowScale::None),
        };
        self.halves[0].scale = client_scale;
        self.halves[1].scale = server_scale;
    }

    fn track_history(&mut self, segment: &Segment, direction: Direction, flagged: EventSet) {
        let marked = history_marks(segment, flagged);
        let seen = &mut self.history_seen[direction.index()];
        if marked & !*seen == 0 {
            return;
        }
        for &(bit, letter) in &HISTORY_LETTERS {
            if marked & bit != 0 && *seen & bit == 0 {
                *seen |= bit;
                self.history.push(match direction {
                    Direction::ClientToServer => letter.to_ascii_uppercase(),
                    Direction::ServerToClient => letter,
                });
            }
        }
    }

    fn track_close(&mut self, segment: &Segment, direction: Direction) {
        let index = direction.index();
        if segment.flags.fin() && self.fin_frame[index].is_none() {
            self.fin_frame[index] = Some(segment.frame);
        }
        if segment.flags.rst() && self.rst_frame[index].is_none() {
            self.rst_frame[index] = Some(segment.frame);
        }
    }

    /// The report of this connection as it stands.
    pub fn summary(&self) -> ConnectionSummary {
        ConnectionSummary {
            id: self.id,
            client: self.client,
            server: self.server,
            roles_guessed: self.roles_guessed,
            first_frame: self.first_frame,
            last_frame: self.last_frame,
            first_ns: self.first_ns,
            last_ns: self.last_ns,
            duration_ms: (self.last_ns - self.first_ns) as f64 / 1e6,
            state: self.zeek_state(),
            history: self.history.clone(),
            close: self.close(),
            handshake: self.handshake.clone(),
            client_to_server: self.direction_summary(Direction::ClientToServer),
            server_to_client: self.direction_summary(Direction::ServerToClient),
        }
    }

    fn direction_summary(&self, direction: Direction) -> crate::summary::DirectionSummary {
        let half = &self.halves[direction.index()];
        let peer = &self.halves[1 - direction.index()];
        half.stats.summary(Measured {
            rtt: half.rtt.stats(),
            release_lag: half.release.lag_stats(),
            ack_clock: half.clock.stats(),
            window_scale_known: half.scale != WindowScale::Unknown,
            zero_window_ms: half.zero_window_ms(self.last_ns),
            unacknowledged_at_end: half.unacknowledged(peer),
        })
    }

    fn close(&self) -> Close {
        let first_of = |frames: [Option<u64>; 2]| match frames {
            [Some(client), Some(server)] if server < client => Some((Role::Server, server)),
            [Some(client), _] => Some((Role::Client, client)),
            [None, Some(server)] => Some((Role::Server, server)),
            [None, None] => None,
        };
        let (by, how, frame) = match (first_of(self.rst_frame), first_of(self.fin_frame)) {
            (Some((by, frame)), _) => (Some(by), CloseHow::Rst, Some(frame)),
            (None, Some((by, frame))) => (Some(by), CloseHow::Fin, Some(frame)),
            (None, None) => (None, CloseHow::Open, None),
        };
        Close { by, how, frame }
    }

    /// Zeek's conn_state, from what the capture shows of the handshake and close.
    fn zeek_state(&self) -> ConnState {
        let syn = self.handshake.syn_ns.is_some();
        let syn_ack = self.handshake.syn_ack_ns.is_some();
        let [client_rst, server_rst] = self.rst_frame.map(|frame| frame.is_some());
        let [client_fin, server_fin] = self.fin_frame.map(|frame| frame.is_some());
        let server_data = self.halves[1].stats.payload_bytes > 0;
        match (syn, syn_ack) {
            (false, false) => ConnState::OTH,
            (true, false) if server_rst && !server_data => ConnState::REJ,
            (true, false) if client_rst => ConnState::RSTOS0,
            (true, false) if client_fin => ConnState::SH,
            (true, false) if self.halves[1].stats.packets == 0 => ConnState::S0,
            (true, false) => ConnState::OTH,
            (false, true) if server_rst => ConnState::RSTRH,
            (false, true) if server_fin => ConnState::SHR,
            (false, true) => ConnState::OTH,
            (true, true) => match (client_rst, server_rst, client_fin, server_fin) {
                (true, _, _, _) if self.rst_first_from_client() => ConnState::RSTO,
                (_, true, _, _) => ConnState::RSTR,
                (true, _, _, _) => ConnState::RSTO,
                (_, _, true, true) => ConnState::SF,
                (_, _, true, false) => ConnState::S2,
                (_, _, false, true) => ConnState::S3,
                _ => ConnState::S1,
            },
        }
    }

    fn rst_first_from_client(&self) -> bool {
        match self.rst_frame {
            [Some(client), Some(server)] => client <= server,
            [Some(_), None] => true,
            _ => false,
        }
    }
}

/// The history letters `segment` shows, as their bits in [`HISTORY_LETTERS`].
fn history_marks(segment: &Segment, flagged: EventSet) -> u8 {
    let flags = segment.flags;
    let data = segment.payload_len > 0;
    let mark = |hit: bool, bit: u8| if hit { bit } else { 0 };
    let handshake = if flags.syn() {
        mark(!flags.ack(), 1 << 0) | mark(flags.ack(), 1 << 1)
    } else {
        mark(flags.ack() && !data && !flags.fin() && !flags.rst(), 1 << 2)
    };
    handshake
        | mark(data, 1 << 3)
        | mark(flags.fin(), 1 << 4)
        | mark(flags.rst(), 1 << 5)
        | mark(data && flagged.resent(), 1 << 6)
        | mark(flagged.has(EventKind::ZeroWindow), 1 << 7)
}

/// Feeds the round-trip trackers; returns the sample this segment's ACK took
/// of the peer's data, if it took one.
fn track_rtt(
    fwd: &mut Half,
    rev: &mut Half,
    segment: &Segment,
    rel: Relative,
    flagged: EventSet,
) -> Option<i64> {
    if flagged.resent() {
        fwd.rtt.retransmitted();
    } else if rel.len > 0 && !flagged.has(EventKind::OutOfOrder) {
        let in_flight = fwd.in_flight(rev);
        fwd.rtt.sent(
            rel.seq.wrapping_add(rel.len),
            segment.timestamp_ns,
            in_flight,
        );
    }
    segment
        .flags
        .ack()
        .then(|| rev.rtt.acked(rel.ack, segment.timestamp_ns))
        .flatten()
}

fn syn_options(segment: &Segment) -> SynOptions {
    SynOptions {
        mss: segment.options.mss,
        window_scale: segment.options.window_scale,
        sack_permitted: segment.options.sack_permitted,
        timestamps: segment.options.timestamps.is_some(),
    }
}

/// Who is the client: the SYN sender; else the SYN-ACK receiver; else the
/// side with the higher port (servers listen on the lower one), flagged as a guess.
fn roles(first: &Segment) -> (Endpoint, Endpoint, bool) {
    match (first.flags.syn(), first.flags.ack()) {
        (true, false) => (first.src, first.dst, false),
        (true, true) => (first.dst, first.src, false),
        _ if services::more_likely_client(first.src.port, first.dst.port) => {
            (first.src, first.dst, true)
        }
        _ => (first.dst, first.src, true),
    }
}
