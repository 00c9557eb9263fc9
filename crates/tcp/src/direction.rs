//! One direction of a connection: Wireshark's sequence analysis and the counters.
//!
//! The checks follow the order and conditions of Wireshark's
//! `tcp_analyze_sequence_number`, on relative sequence numbers where 0 means
//! "not known yet", so our flags agree with `tcp.analysis.*` frame for frame.

use decode::{Flags, Segment};

use crate::clock::{Ack, AckClock};
use crate::counters::Counters;
use crate::event::{EventKind, EventSet};
use crate::holes::Holes;
use crate::ip_id::{IpIdCounter, Numbered};
use crate::release::{AckOfData, Release, ReleaseTracker, SeenAt, ToSender, Wait};
use crate::rtt::{RttTracker, WindowBound};
use crate::send_time::{SenderClock, Stamps};
use crate::seq;
use crate::stack::{RTO_FLOOR_NS, UNIX_INITIAL_TTL};

/// Wireshark's fast-retransmission window after the last duplicate ACK.
const FAST_RETRANSMISSION_WINDOW_NS: i64 = 20_000_000;
/// Out-of-order threshold when the handshake RTT is unknown.
const DEFAULT_OUT_OF_ORDER_NS: i64 = 3_000_000;

/// What is known about a direction's window scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowScale {
    /// No handshake seen: the raw window is used as it is.
    Unknown,
    /// The handshake shows no scaling.
    None,
    Shift(u8),
}

/// Sequence-analysis state of one direction (Wireshark's `tcp_analyze_seq_info`).
#[derive(Debug)]
pub struct Half {
    base_seq: Option<u32>,
    /// Highest relative sequence sent plus one; 0 = unknown.
    next_seq: u32,
    next_seq_ns: i64,
    /// Highest contiguous relative sequence sent; 0 = unknown.
    max_seq_to_be_acked: u32,
    last_ack: u32,
    last_ack_ns: i64,
    /// Last advertised window, scaled; None before the first segment.
    window: Option<u64>,
    pub scale: WindowScale,
    dup_acks: u64,
    last_flagged: EventSet,
    bytes_in_flight_valid: bool,
    last_packet_ns: Option<i64>,
    /// When the current run of zero windows began.
    zero_since_ns: Option<i64>,
    window_sum: f64,
    window_samples: u64,
    /// The segment last sent again by timeout, and how many times in a row.
    resent_run: Option<(u32, u64)>,
    pub rtt: RttTracker,
    pub window_bound: WindowBound,
    pub clock: AckClock,
    pub release: ReleaseTracker,
    sender_clock: SenderClock,
    stamps: Stamps,
    /// The least time from the capture point first seeing one of the
    /// peer's timestamps to this side echoing it: a round trip from here
    /// to this side, and no more than this side took to answer.
    least_echo_ns: Option<i64>,
    holes: Holes,
    ip_ids: IpIdCounter,
    pub stats: Counters,
}

impl Default for Half {
    fn default() -> Self {
        Half {
            base_seq: None,
            next_seq: 0,
            next_seq_ns: 0,
            max_seq_to_be_acked: 0,
            last_ack: 0,
            last_ack_ns: 0,
            window: None,
            scale: WindowScale::Unknown,
            dup_acks: 0,
            last_flagged: EventSet::default(),
            bytes_in_flight_valid: false,
            last_packet_ns: None,
            zero_since_ns: None,
            window_sum: 0.0,
            window_samples: 0,
            resent_run: None,
            rtt: RttTracker::default(),
            window_bound: WindowBound::default(),
            clock: AckClock::default(),
            release: ReleaseTracker::default(),
            sender_clock: SenderClock::default(),
            stamps: Stamps::default(),
            least_echo_ns: None,
            holes: Holes::default(),
            ip_ids: IpIdCounter::default(),
            stats: Counters::default(),
        }
    }
}

/// The segment's figures in this direction's relative terms.
#[derive(Debug, Clone, Copy)]
pub struct Relative {
    pub seq: u32,
    pub ack: u32,
    pub len: u32,
    pub window: u64,
}

impl Half {
    /// Gives back what the trackers' queues hold beyond their contents.
    pub fn shrink_to_fit(&mut self) {
        self.rtt.shrink_to_fit();
        self.window_bound.shrink_to_fit();
        self.release.shrink_to_fit();
        self.stamps.shrink_to_fit();
        self.holes.shrink_to_fit();
    }

    pub fn base_seq(&self) -> Option<u32> {
        self.base_seq
    }

    /// Learns the ISN from a first segment (a SYN's own sequence; otherwise one before).
    pub fn learn_base(&mut self, segment: &Segment) {
        if self.base_seq.is_none() {
            let offset = u32::from(!segment.flags.syn());
            self.base_seq = Some(segment.seq.wrapping_sub(offset));
        }
    }

    /// Learns the peer's ISN from an ACK when its own segments gave none.
    pub fn learn_base_from_ack(&mut self, ack: u32) {
        if self.base_seq.is_none() {
            self.base_seq = Some(ack.wrapping_sub(1));
        }
    }

    pub fn relative(&self, absolute: u32) -> u32 {
        absolute.wrapping_sub(self.base_seq.unwrap_or(0))
    }

    /// The advertised window in bytes: SYNs are never scaled.
    pub fn scaled_window(&self, segment: &Segment) -> u64 {
        let raw = u64::from(segment.window);
        match self.scale {
            WindowScale::Shift(shift) if !segment.flags.syn() => raw << shift.min(14),
            _ => raw,
        }
    }

    /// This side's host numbered a packet of another connection `id`.
    pub fn host_numbered_elsewhere(&mut self, id: u16) {
        self.ip_ids.host_numbered_elsewhere(id);
    }

    pub fn duplicate_ack_run(&self) -> u64 {
        self.dup_acks
    }

    /// The least round trip from the capture point to this side that its
    /// echoes of the peer's timestamps show.
    pub fn least_echo_ns(&self) -> Option<i64> {
        self.least_echo_ns
    }
}

/// The bytes of `rev`'s that `ack`, sent by `fwd`, is the first to
/// acknowledge past all `rev` sent that the capture saw: data delivered
/// without the capture seeing it.
pub fn newly_acked_unseen(fwd: &Half, rev: &Half, ack: u32) -> u32 {
    let seen_up_to = rev.next_seq;
    if seen_up_to == 0 {
        return 0;
    }
    let acked_before = fwd.last_ack;
    let reported_up_to = if acked_before != 0 && seq::after(acked_before, seen_up_to) {
        acked_before
    } else {
        seen_up_to
    };
    if seq::after(ack, reported_up_to) {
        ack.wrapping_sub(reported_up_to)
    } else {
        0
    }
}

/// Round trips from the capture point to the side sending a segment and to
/// the side receiving it, the least seen so far (0 when unknown).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SideRtts {
    pub to_sender_ns: i64,
    pub to_receiver_ns: i64,
    /// How much longer than the least the round trip to the sender has
    /// taken: queueing on the way, which delays an ACK on its way to the
    /// sender as much as any packet.
    pub to_sender_variation_ns: i64,
}

impl SideRtts {
    /// The round trip to the sender, as the release tracker reads it.
    pub fn to_sender(self) -> ToSender {
        ToSender {
            least_ns: self.to_sender_ns,
            variation_ns: self.to_sender_variation_ns,
        }
    }
}

/// Data its sender sent (not a probe or a keep-alive): what ended the wait
/// before it, when it came after one, and the flight it left in.
#[derive(Debug, Clone, Copy)]
pub struct Sent {
    pub wait: Option<Wait>,
    pub flight: u32,
    /// Its release was read as a timer's resend only because the capture
    /// was not yet known to drop packets: known so, it would have been new
    /// data past packets the capture missed.
    pub rests_on_no_drops: bool,
}

/// What the capture missed just before a segment.
#[derive(Debug, Clone, Copy)]
struct Missed {
    /// Packets of its sender, by their IP identification.
    packets: u16,
    /// The capture has been seen to drop packets their receiver got: the
    /// packets missing may be the capture's, not lost on the way.
    capture_drops: bool,
}

/// Runs Wireshark's checks for a segment travelling `fwd`, against the reverse
/// direction `rev`, and updates both. `first_rtt_ns` is the handshake RTT;
/// `capture_drops` says the capture has been seen to drop data its receiver
/// acknowledged. Returns the events raised, and for data, its wait and flight.
pub fn analyze(
    fwd: &mut Half,
    rev: &mut Half,
    segment: &Segment,
    rel: Relative,
    first_rtt_ns: Option<i64>,
    rtts: SideRtts,
    capture_drops: bool,
) -> (EventSet, Option<Sent>) {
    let mut flagged = EventSet::default();
    let flags = segment.flags;
    let now = segment.timestamp_ns;
    let missed = Missed {
        packets: fwd.ip_ids.next(numbered(fwd, rev, segment)),
        capture_drops,
    };
    if let Some((tsval, echoed)) = segment.options.timestamps {
        fwd.stamps.note(tsval, now);
        note_echo(fwd, rev, echoed, now);
    }
    let syn_fin_rst = flags.has(Flags::SYN | Flags::FIN | Flags::RST);
    if flags.ack() {
        rev.bytes_in_flight_valid = true;
    }
    if !check_window_and_gaps(fwd, rev, segment, rel, &mut flagged) {
        check_repeats(fwd, rev, rel, syn_fin_rst, &mut flagged);
    }
    // Only a new ACK number ends a run of duplicates; a window update does not.
    if rel.ack != fwd.last_ack {
        fwd.dup_acks = 0;
    }
    if rev.max_seq_to_be_acked != 0 && seq::after(rel.ack, rev.max_seq_to_be_acked) && flags.ack() {
        flagged.raise(EventKind::AckLostSegment);
        rev.max_seq_to_be_acked = rev.next_seq;
    }
    let occupies_sequence = rel.len > 0 || flags.has(Flags::SYN | Flags::FIN);
    if occupies_sequence && fwd.next_seq != 0 && seq::before(rel.seq, fwd.next_seq) {
        classify_resend(fwd, rev, segment, rel, first_rtt_ns, &mut flagged);
    }
    track_clock(fwd, rev, segment, rel, flagged, first_rtt_ns.unwrap_or(0));
    note_ack_of_peer_data(fwd, rev, segment, rel, rtts);
    if rel.len > 0 {
        rev.release.peer_sent_data();
    }
    track_holes(fwd, rev, segment, rel, flagged);
    let sent = sent_data(fwd, rev, segment, rel, flagged, rtts, missed);
    let timer = matches!(
        sent,
        Some(Sent {
            wait: Some(Wait {
                ended_by: Release::Timer { .. },
                ..
            }),
            ..
        })
    );
    if missed.packets > 0 && (flagged.resent() || flagged.has(EventKind::LostSegment) || timer) {
        fwd.ip_ids.explained();
    }
    advance(fwd, segment, rel, flagged);
    fwd.window = Some(rel.window);
    // A segment without the ACK flag (a bare RST) carries no acknowledgement.
    if flags.ack() {
        fwd.last_ack = rel.ack;
    }
    fwd.last_ack_ns = now;
    fwd.last_flagged = flagged;
    (flagged, sent)
}

/// `fwd`'s sender echoed the peer's timestamp `echoed`: it had received
/// the segment that carried it, a round trip from here and back at least.
fn note_echo(fwd: &mut Half, rev: &mut Half, echoed: u32, now: i64) {
    let Some(first_seen) = rev.stamps.first_seen_ns(echoed).filter(|_| echoed != 0) else {
        return;
    };
    let sample = now - first_seen;
    fwd.least_echo_ns = Some(fwd.least_echo_ns.map_or(sample, |least| least.min(sample)));
}

/// When the segment was seen, and how long it queued between its sender
/// and the capture point: by the sender's clock, and no longer than the
/// time since the peer's stamp it echoes could have reached the sender.
fn seen_at(fwd: &mut Half, rev: &mut Half, segment: &Segment, rtt_to_sender_ns: i64) -> SeenAt {
    let seen_ns = segment.timestamp_ns;
    let queued_ns = segment.options.timestamps.and_then(|(tsval, echoed)| {
        let queued = fwd.sender_clock.queued_ns(seen_ns, tsval)?;
        let echo_reached_sender = rev.stamps.first_seen_ns(echoed)? + rtt_to_sender_ns;
        Some(queued.min(seen_ns - echo_reached_sender).max(0))
    });
    SeenAt { seen_ns, queued_ns }
}

/// Where the capture missed this direction's data, and what filled or
/// acknowledged the gaps: loss before the capture point, loss after it, or
/// the capture's own drops.
fn track_holes(
    fwd: &mut Half,
    rev: &mut Half,
    segment: &Segment,
    rel: Relative,
    flagged: EventSet,
) {
    if segment.flags.ack() && rel.ack != 0 {
        rev.stats.capture_drops += rev.holes.acknowledged(rel.ack);
    }
    if flagged.has(EventKind::LostSegment) {
        fwd.holes.open(fwd.next_seq, rel.seq);
    }
    if rel.len == 0 {
        return;
    }
    let end = rel.seq.wrapping_add(rel.len);
    // Data first seen above what the receiver had acknowledged: the capture
    // began after the part between them left the sender.
    if fwd.next_seq == 0 && rev.last_ack != 0 && seq::after(rel.seq, rev.last_ack) {
        fwd.holes.open(rev.last_ack, rel.seq);
    }
    let below_highest = fwd.next_seq != 0 && seq::before(rel.seq, fwd.next_seq);
    if below_highest && fwd.holes.fill(rel.seq, end) {
        fwd.stats.lost_before_capture += 1;
        fwd.release.gap_seen();
    } else if flagged.has(EventKind::Retransmission) || flagged.has(EventKind::FastRetransmission) {
        fwd.stats.lost_after_capture += 1;
    }
}

/// The segment as `fwd`'s IP identification counter numbers it: the wire
/// packets it stands for (segments of the handshake's MSS, when offloading
/// merged them), and the most `fwd` can have on their way at once, the full
/// segments the peer's last window holds. A sender whose stack shares its
/// counter between connections (its TTL started above
/// [`UNIX_INITIAL_TTL`]) gives no identification to follow.
fn numbered(fwd: &Half, rev: &Half, segment: &Segment) -> Numbered {
    let wire_packets = fwd
        .release
        .mss()
        .map_or(1, |mss| segment.payload_len.div_ceil(mss.max(1)));
    let in_window = rev.window.unwrap_or(0) / u64::from(fwd.release.full_segment());
    Numbered {
        id: segment.ip_id.filter(|_| segment.ttl <= UNIX_INITIAL_TTL),
        takes: wire_packets.clamp(1, u32::from(u16::MAX)) as u16,
        most_unseen: in_window.min(u64::from(u16::MAX)) as u16,
    }
}

/// New data after a silence of at least a round trip, and packets of its
/// sender missing just before it (by its IP identification): the sender
/// had sent this data before and lost it upstream, and a timer resent it
/// (unless an ACK it acted on at once let it go, or it answers what its
/// peer said meanwhile). With nothing after it, no
/// duplicate ACK could have asked for it sooner. Data before it may still
/// be unacknowledged: a receiver holds back its ACK of a lone segment. The connection's silence must fit the timer's
/// doubling waits for the packets missing; a longer one is a pause of the
/// sender's, whatever else its host numbered meanwhile. With all it sent
/// before acknowledged, the packets missing can only be copies of this
/// segment: more than a sender sends before it gives up are its host's
/// packets to others.
fn resends_an_unseen_tail(
    fwd: &mut Half,
    rev: &Half,
    segment: &Segment,
    rel: Relative,
    seen: SeenAt,
    rtts: SideRtts,
    unseen_before: u16,
) -> bool {
    let round_trip = rtts.to_sender_ns + rtts.to_receiver_ns;
    let now = segment.timestamp_ns;
    let Some(last_data) = fwd.release.last_data_ns() else {
        return false;
    };
    let all_before_acknowledged = !seq::before(rev.last_ack, rel.seq);
    let copies_possible = !all_before_acknowledged || unseen_before <= MOST_COPIES_SENT;
    let connection_silent_for = now - last_data.max(rev.last_ack_ns);
    unseen_before > 0
        && copies_possible
        && now - last_data >= round_trip
        && connection_silent_for <= longest_timer_wait_ns(unseen_before, round_trip)
        && !fwd.release.prompted_by_an_ack(seen, rtts.to_sender())
        && !answers_the_peer(rev, last_data, now, rtts)
}

/// The peer said something new (data, or its FIN) after the sender's last
/// data, and this segment came sooner than a timer could have resent a
/// first answer lost on its way: reaching the sender took the way to it
/// and back, and a timer waits at least a round trip more. It is the
/// sender's answer, seen first time.
fn answers_the_peer(rev: &Half, last_data_ns: i64, now: i64, rtts: SideRtts) -> bool {
    let round_trip = rtts.to_sender_ns + rtts.to_receiver_ns;
    rev.next_seq_ns > last_data_ns && now - rev.next_seq_ns < rtts.to_sender_ns + round_trip
}

/// Data past a gap in the sequence, from a capture known to drop packets,
/// with no more packets of its sender missing before it than the gap's
/// bytes take: all of them may be packets the capture missed, none an
/// earlier sending of this data lost on the way. (Where the capture drops
/// nothing, the gap's packets were lost, and a loss probe may send new data
/// after them: then the data past the gap was released by a timer.)
fn gap_takes_the_unseen_packets(
    fwd: &Half,
    rel: Relative,
    flagged: EventSet,
    missed: Missed,
) -> bool {
    if !missed.capture_drops || !flagged.has(EventKind::LostSegment) {
        return false;
    }
    let gap = rel.seq.wrapping_sub(fwd.next_seq);
    u32::from(missed.packets) <= gap.div_ceil(fwd.release.full_segment())
}

/// Whether reading this segment's release rests on the capture not yet
/// known to drop packets: known so, its gap would take the packets unseen,
/// and the test for a resent tail (which reads and moves the release
/// tracker, and needs packets unseen) would not run.
fn rests_on_no_drops(fwd: &Half, rel: Relative, flagged: EventSet, missed: Missed) -> bool {
    let known_to_drop = Missed {
        capture_drops: true,
        ..missed
    };
    !missed.capture_drops
        && missed.packets > 0
        && gap_takes_the_unseen_packets(fwd, rel, flagged, known_to_drop)
}

/// The most copies of one segment a sender sends before it gives up on the
/// connection: the first and Linux's default of 15 resends (tcp_retries2).
const MOST_COPIES_SENT: u16 = 16;

/// The longest a sender's timer can take to send a segment `copies` times
/// (each wait twice the last): a first timeout of at most the standard's
/// floor over the path's round trip (stacks measure less).
fn longest_timer_wait_ns(copies: u16, round_trip_ns: i64) -> i64 {
    let doublings = (1i64 << copies.min(16)) - 1;
    doublings.saturating_mul(RTO_FLOOR_NS + round_trip_ns)
}

/// Tells the peer's release tracker about an ACK that moved its
/// acknowledged edge or its window.
fn note_ack_of_peer_data(
    fwd: &Half,
    rev: &mut Half,
    segment: &Segment,
    rel: Relative,
    rtts: SideRtts,
) {
    let moved = rel.ack != fwd.last_ack || Some(rel.window) != fwd.window;
    if !segment.flags.ack() || fwd.last_ack == 0 || !moved || seq::before(rel.ack, fwd.last_ack) {
        return;
    }
    let ack = AckOfData {
        at_ns: segment.timestamp_ns,
        frame: segment.frame,
        ack_before: fwd.last_ack,
        ack_after: rel.ack,
        window_before: fwd.window,
        window_after: rel.window,
        sent_up_to: rev.next_seq,
        bare: rel.len == 0,
    };
    rev.release.acked(ack, rtts.to_sender_ns);
    let window = rel.window.min(u64::from(u32::MAX >> 1)) as u32;
    rev.window_bound
        .allowed(rel.ack.wrapping_add(window), segment.timestamp_ns);
}

/// For a segment carrying data, what released it after the sender's
/// previous data, and the flight it left in.
fn sent_data(
    fwd: &mut Half,
    rev: &mut Half,
    segment: &Segment,
    rel: Relative,
    flagged: EventSet,
    rtts: SideRtts,
    missed: Missed,
) -> Option<Sent> {
    let not_data = [
        EventKind::OutOfOrder,
        EventKind::ZeroWindowProbe,
        EventKind::KeepAlive,
    ];
    if rel.len == 0 || not_data.iter().any(|&kind| flagged.has(kind)) {
        return None;
    }
    let (wait, rests_on_no_drops) = release_of(fwd, rev, segment, rel, flagged, rtts, missed);
    Some(Sent {
        wait,
        flight: fwd.release.flight(),
        rests_on_no_drops,
    })
}

/// What released a data segment after the sender's previous data, and
/// whether that rests on the capture not yet known to drop packets.
fn release_of(
    fwd: &mut Half,
    rev: &mut Half,
    segment: &Segment,
    rel: Relative,
    flagged: EventSet,
    rtts: SideRtts,
    missed: Missed,
) -> (Option<Wait>, bool) {
    let seen = seen_at(fwd, rev, segment, rtts.to_sender_ns);
    let rests_on_no_drops = rests_on_no_drops(fwd, rel, flagged, missed);
    let now = seen.seen_ns;
    // The receiver asked for this very segment with duplicate ACKs and the
    // sender answered at once: it did not wait for a timer (Wireshark's
    // 20 ms window for the flag is too short seen from the receiver's side).
    let asked_for = rev.dup_acks >= 1
        && rev.last_ack == rel.seq
        && rtts.to_sender().prompt(rev.last_ack_ns, now, false);
    let to_sender = rtts.to_sender();
    let released = if flagged.has(EventKind::FastRetransmission) || (asked_for && flagged.resent())
    {
        fwd.stats.retransmissions.after_duplicate_acks += 1;
        fwd.release
            .resent(seen, rel.len, Release::DuplicateAcks, to_sender)
    } else if flagged.has(EventKind::Retransmission) {
        let tail = rel.seq.wrapping_add(rel.len) == fwd.next_seq;
        fwd.release
            .resent(seen, rel.len, Release::Timer { tail }, to_sender)
    } else if flagged.has(EventKind::SpuriousRetransmission) {
        // Data the receiver already had: it released nothing, and no loss
        // cut the window (the sender undoes its cut once it learns so).
        fwd.release.resent_spuriously(seen, rel.len, to_sender);
        None
    } else if !gap_takes_the_unseen_packets(fwd, rel, flagged, missed)
        && resends_an_unseen_tail(fwd, rev, segment, rel, seen, rtts, missed.packets)
    {
        fwd.stats.lost_before_capture += 1;
        fwd.release.gap_seen();
        fwd.release
            .resent(seen, rel.len, Release::Timer { tail: true }, to_sender)
    } else {
        let end = rel.seq.wrapping_add(rel.len);
        fwd.window_bound.sent(end, rel.len, segment.timestamp_ns);
        fwd.release
            .new_data(seen, rel.seq, rel.len, fwd.next_seq, to_sender)
    };
    let wait = released.map(|(since_ns, ended_by)| Wait { since_ns, ended_by });
    (wait, rests_on_no_drops)
}

/// Zero-window probe, zero window, lost segment, keep-alive, window update
/// and window full. Returns true when a zero-window probe ends the checks.
fn check_window_and_gaps(
    fwd: &mut Half,
    rev: &Half,
    segment: &Segment,
    rel: Relative,
    flagged: &mut EventSet,
) -> bool {
    let flags = segment.flags;
    let syn_fin_rst = flags.has(Flags::SYN | Flags::FIN | Flags::RST);
    if rev.window == Some(0) && probes_the_window(fwd, rel, syn_fin_rst) {
        flagged.raise(EventKind::ZeroWindowProbe);
        return true;
    }
    if rel.window == 0 && !syn_fin_rst {
        flagged.raise(EventKind::ZeroWindow);
    }
    if fwd.next_seq != 0 && seq::after(rel.seq, fwd.next_seq) && !flags.rst() {
        flagged.raise(EventKind::LostSegment);
        fwd.bytes_in_flight_valid = false;
    }
    if rel.len <= 1 && rel.seq == fwd.next_seq.wrapping_sub(1) && !syn_fin_rst {
        flagged.raise(EventKind::KeepAlive);
    }
    let repeats_position = rel.seq == fwd.next_seq && rel.ack == fwd.last_ack;
    if rel.len == 0
        && rel.window != 0
        && Some(rel.window) != fwd.window
        && repeats_position
        && !syn_fin_rst
    {
        flagged.raise(EventKind::WindowUpdate);
    }
    if rel.len > 0 && rev.scale != WindowScale::Unknown && !syn_fin_rst {
        let edge = u64::from(rev.last_ack) + rev.window.unwrap_or(u64::MAX >> 1);
        if u64::from(rel.seq) + u64::from(rel.len) == edge {
            flagged.raise(EventKind::WindowFull);
        }
    }
    false
}

/// Whether a segment sent into a zero window asks the receiver for its
/// window: one byte of new data (as Wireshark reads a probe), or nothing at
/// the last byte already acknowledged, which is how Linux's persist timer
/// probes (the same shape as a keep-alive, but a keep-alive's peer has an
/// open window).
fn probes_the_window(fwd: &Half, rel: Relative, syn_fin_rst: bool) -> bool {
    let one_new_byte = rel.len == 1 && rel.seq == fwd.next_seq;
    let below_the_acknowledged = rel.len <= 1 && rel.seq == fwd.next_seq.wrapping_sub(1);
    !syn_fin_rst && (one_new_byte || below_the_acknowledged)
}

/// Keep-alive ACK, zero-window-probe ACK and duplicate ACK: a bare segment
/// repeating the previous one.
fn check_repeats(
    fwd: &mut Half,
    rev: &Half,
    rel: Relative,
    syn_fin_rst: bool,
    flagged: &mut EventSet,
) {
    if rel.len != 0 || syn_fin_rst || rel.seq != fwd.next_seq {
        return;
    }
    let same_window = Some(rel.window) == fwd.window;
    let same_ack = rel.ack == fwd.last_ack;
    if rel.window != 0 && same_window && same_ack && rev.last_flagged.has(EventKind::KeepAlive) {
        flagged.raise(EventKind::KeepAliveAck);
        return;
    }
    let probe_acked = same_ack || rel.ack == fwd.last_ack.wrapping_add(1);
    if rel.window == 0
        && same_window
        && probe_acked
        && rev.last_flagged.has(EventKind::ZeroWindowProbe)
    {
        flagged.raise(EventKind::ZeroWindowProbeAck);
        return;
    }
    if rel.window != 0 && same_window && same_ack {
        fwd.dup_acks += 1;
        flagged.raise(EventKind::DuplicateAck);
    }
}

/// A segment below the highest sequence sent: fast retransmission,
/// out-of-order, spurious retransmission or plain retransmission.
fn classify_resend(
    fwd: &Half,
    rev: &Half,
    segment: &Segment,
    rel: Relative,
    first_rtt_ns: Option<i64>,
    flagged: &mut EventSet,
) {
    if flagged.has(EventKind::KeepAlive) {
        return;
    }
    let now = segment.timestamp_ns;
    if rev.dup_acks >= 2
        && rev.last_ack == rel.seq
        && now - rev.last_ack_ns < FAST_RETRANSMISSION_WINDOW_NS
    {
        flagged.raise(EventKind::FastRetransmission);
        return;
    }
    let end = rel.seq.wrapping_add(rel.len);
    let threshold = first_rtt_ns
        .filter(|&rtt| rtt > 0)
        .unwrap_or(DEFAULT_OUT_OF_ORDER_NS);
    let soon_after_newest = now - fwd.next_seq_ns < threshold && fwd.next_seq != end;
    let seen_before =
        rel.len > 0 && seq::at_or_before(0, rel.seq) && !fwd.holes.overlaps(rel.seq, end);
    if soon_after_newest && !seen_before {
        flagged.raise(EventKind::OutOfOrder);
        return;
    }
    if rel.len > 0 && rev.last_ack != 0 && seq::at_or_before(end, rev.last_ack) {
        flagged.raise(EventKind::SpuriousRetransmission);
        return;
    }
    // Wireshark reads data this close behind the newest as reordered, but
    // the capture saw these bytes leave before: the receiver's duplicate or
    // selective ACKs asked for them again, too soon for any timer.
    if soon_after_newest {
        flagged.raise(EventKind::FastRetransmission);
        return;
    }
    flagged.raise(EventKind::Retransmission);
}

/// Feeds the ACK clocks: what this segment's ACK releases of the peer's
/// data, then this segment's own new data.
fn track_clock(
    fwd: &mut Half,
    rev: &mut Half,
    segment: &Segment,
    rel: Relative,
    flagged: EventSet,
    rtt_ns: i64,
) {
    let now = segment.timestamp_ns;
    let advances = segment.flags.ack()
        && fwd.last_ack != 0
        && rev.next_seq != 0
        && seq::after(rel.ack, fwd.last_ack);
    if advances {
        let ack = Ack {
            at_ns: now,
            bytes: u64::from(rel.ack.wrapping_sub(fwd.last_ack)),
            leaves_outstanding: seq::after(rev.next_seq, rel.ack),
            bare: rel.len == 0 && fwd.clock.last_data_ns() < rev.clock.last_data_ns(),
        };
        rev.clock.acked(ack, rtt_ns);
    }
    let resent = [
        EventKind::Retransmission,
        EventKind::FastRetransmission,
        EventKind::SpuriousRetransmission,
        EventKind::OutOfOrder,
    ]
    .iter()
    .any(|&kind| flagged.has(kind));
    let end = rel.seq.wrapping_add(rel.len);
    let new_data = rel.len > 0 && (fwd.next_seq == 0 || seq::after(end, fwd.next_seq));
    if new_data && !resent {
        fwd.clock.sent(now, rel.len, rtt_ns);
    }
}

/// Moves the highest-sequence marks forward after the checks.
fn advance(fwd: &mut Half, segment: &Segment, rel: Relative, flagged: EventSet) {
    let flags = segment.flags;
    let mut next = rel.seq.wrapping_add(rel.len);
    if flags.has(Flags::SYN | Flags::FIN) {
        next = next.wrapping_add(1);
    }
    let probe = flagged.has(EventKind::ZeroWindowProbe);
    if (fwd.next_seq == 0 || seq::after(next, fwd.next_seq)) && !probe {
        fwd.next_seq = next;
        fwd.next_seq_ns = segment.timestamp_ns;
    }
    if (fwd.max_seq_to_be_acked == 0 || rel.seq == fwd.max_seq_to_be_acked) && !probe {
        fwd.max_seq_to_be_acked = fwd.next_seq;
    }
}

/// Counts what the segment adds to this direction's figures.
pub fn count(fwd: &mut Half, rev: &Half, segment: &Segment, rel: Relative, flagged: EventSet) {
    let stats = &mut fwd.stats;
    stats.packets += 1;
    stats.data_packets += u64::from(rel.len > 0);
    stats.wire_bytes += u64::from(segment.wire_len);
    stats.payload_bytes += u64::from(rel.len);
    if !flagged.resent() && !flagged.has(EventKind::OutOfOrder) {
        stats.unique_payload_bytes += u64::from(rel.len);
    }
    if flagged != EventSet::default() {
        count_events(stats, flagged);
    }
    stats.largest_segment = stats.largest_segment.max(u64::from(rel.len));
    count_sack(stats, segment);
    count_resend_run(fwd, segment, rel, flagged);
    count_window(fwd, segment, rel);
    count_zero_window_time(fwd, segment, flagged);
    count_in_flight(fwd, rev, rel);
    count_idle(fwd, segment.timestamp_ns);
}

/// Tallies the analysis events a segment raised.
fn count_events(stats: &mut Counters, flagged: EventSet) {
    let retransmissions = &mut stats.retransmissions;
    retransmissions.total += u64::from(flagged.resent());
    retransmissions.fast += u64::from(flagged.has(EventKind::FastRetransmission));
    retransmissions.spurious += u64::from(flagged.has(EventKind::SpuriousRetransmission));
    retransmissions.timeout += u64::from(flagged.has(EventKind::Retransmission));
    retransmissions.handshake += u64::from(flagged.has(EventKind::SynRetransmission));
    stats.out_of_order += u64::from(flagged.has(EventKind::OutOfOrder));
    stats.lost_segments += u64::from(flagged.has(EventKind::LostSegment));
    stats.ack_lost_segments += u64::from(flagged.has(EventKind::AckLostSegment));
    stats.duplicate_acks += u64::from(flagged.has(EventKind::DuplicateAck));
    stats.zero_windows += u64::from(flagged.has(EventKind::ZeroWindow));
    stats.zero_window_probes += u64::from(flagged.has(EventKind::ZeroWindowProbe));
    stats.window_full += u64::from(flagged.has(EventKind::WindowFull));
    stats.window_updates += u64::from(flagged.has(EventKind::WindowUpdate));
    stats.keep_alives += u64::from(flagged.has(EventKind::KeepAlive));
}

fn count_sack(stats: &mut Counters, segment: &Segment) {
    let blocks = segment.options.sack.as_slice();
    if blocks.is_empty() {
        return;
    }
    stats.sack_acks += 1;
    // RFC 2883: a first block below the cumulative ACK, or inside the second block, is a D-SACK.
    let (left, right) = blocks[0];
    let below_ack = seq::at_or_before(right, segment.ack);
    let inside_next = blocks.get(1).is_some_and(|&(next_left, next_right)| {
        seq::at_or_before(next_left, left) && seq::at_or_before(right, next_right)
    });
    if below_ack || inside_next {
        stats.dsacks += 1;
    }
}

/// The same segment (or FIN) sent again and again by timeout: nothing gets it through.
fn count_resend_run(fwd: &mut Half, segment: &Segment, rel: Relative, flagged: EventSet) {
    let takes_sequence = rel.len > 0 || segment.flags.fin();
    if !takes_sequence || !flagged.has(EventKind::Retransmission) {
        return;
    }
    let run = match fwd.resent_run {
        Some((seq, run)) if seq == rel.seq => run + 1,
        _ => 1,
    };
    fwd.resent_run = Some((rel.seq, run));
    if run > 1 {
        fwd.stats.retransmissions.repeated += 1;
    }
    if rel.len > 0 && run > fwd.stats.most_resends {
        fwd.stats.most_resends = run;
        fwd.stats.most_resent_bytes = u64::from(rel.len);
    }
}

fn count_window(fwd: &mut Half, segment: &Segment, rel: Relative) {
    if segment.flags.rst() {
        return;
    }
    let window = &mut fwd.stats.window;
    if fwd.window_samples == 0 || rel.window < window.min {
        window.min = rel.window;
    }
    window.max = window.max.max(rel.window);
    fwd.window_sum += rel.window as f64;
    fwd.window_samples += 1;
    window.mean = fwd.window_sum / fwd.window_samples as f64;
}

fn count_zero_window_time(fwd: &mut Half, segment: &Segment, flagged: EventSet) {
    let now = segment.timestamp_ns;
    if flagged.has(EventKind::ZeroWindow) {
        fwd.zero_since_ns.get_or_insert(now);
    } else if let Some(since) = fwd.zero_since_ns.take_if(|_| !segment.flags.rst()) {
        fwd.stats.zero_window_ms += decode::elapsed_ms(since, now).unwrap_or(0.0);
    }
}

impl Half {
    /// Zero-window time including a run still open at `end_ns`.
    pub fn zero_window_ms(&self, end_ns: i64) -> f64 {
        let open = self
            .zero_since_ns
            .and_then(|since| decode::elapsed_ms(since, end_ns))
            .unwrap_or(0.0);
        self.stats.zero_window_ms + open
    }
}

fn count_in_flight(fwd: &mut Half, rev: &Half, rel: Relative) {
    if rel.len == 0 {
        return;
    }
    if let Some(in_flight) = fwd.in_flight(rev) {
        fwd.stats.max_bytes_in_flight = fwd.stats.max_bytes_in_flight.max(in_flight);
    }
}

impl Half {
    /// This side's data that `rev` never acknowledged: all of it when no
    /// ACK from `rev` was seen at all.
    pub fn unacknowledged(&self, rev: &Half) -> u64 {
        match self.in_flight(rev) {
            Some(in_flight) => in_flight,
            None if rev.last_ack == 0 => u64::from(self.next_seq.saturating_sub(1)),
            None => 0,
        }
    }

    /// This side's bytes sent and not yet acknowledged by `rev`, when known.
    pub fn in_flight(&self, rev: &Half) -> Option<u64> {
        if !self.bytes_in_flight_valid {
            return None;
        }
        let in_flight = u64::from(self.next_seq.wrapping_sub(rev.last_ack));
        (in_flight < u64::from(u32::MAX / 2)).then_some(in_flight)
    }
}

fn count_idle(fwd: &mut Half, now: i64) {
    if let Some(previous) = fwd.last_packet_ns {
        let idle_ms = (now - previous) as f64 / 1e6;
        if idle_ms > fwd.stats.max_idle_ms {
            fwd.stats.max_idle_ms = idle_ms;
        }
    }
    fwd.last_packet_ns = Some(now);
}
