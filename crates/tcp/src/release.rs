//! What ended each wait of a sender.
//!
//! A sender that stopped and then sent data again was released by
//! something: an ACK that opened the window or acknowledged what it was
//! holding out for, a retransmission timer, duplicate ACKs, or its own
//! application writing more. Which one is a matter of mechanism, read from
//! the sequence state at the moment, never from how long the pause was:
//! whether the new data fitted the window before the latest ACK, whether
//! that ACK left anything outstanding, whether it came late and acknowledged
//! a lone segment (the receiver's delayed-ACK timer), whether the sender was
//! holding a small segment back (Nagle).
//!
//! Everything is judged as the sender saw it. An ACK the capture point sees
//! at `t` reaches the sender at `t` plus the round trip from the capture
//! point to the sender (nothing at the sender's own side, the whole path at
//! the receiver's); the sender's data reaches the capture point a fixed time
//! after it leaves, so against the data, ACKs are shifted by that round trip.

use std::collections::VecDeque;

use crate::rtt::Samples;
use crate::seq;
use crate::stack::{DELAYED_ACK_MAX_NS, DELAYED_ACK_MIN_NS, HOST_REACTION_NS};
use crate::summary::RttStats;

/// The most TCP's options take of a segment.
const MAX_OPTIONS: u32 = 40;

/// ACKs seen at the capture point but not yet at the sender, at most: a
/// longer backlog (a fat, long pipe seen from the receiver's side, or a
/// queue before it) merges them in pairs.
const MAX_ACKS_ON_THEIR_WAY: usize = 1024;

/// When a data segment was seen at the capture point, and how long it
/// queued on the way there, when the sender's clock tells: against ACKs, a
/// sender is judged by when it sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeenAt {
    pub seen_ns: i64,
    pub queued_ns: Option<i64>,
}

impl SeenAt {
    /// When the segment would have been seen had it not queued.
    fn unqueued_ns(self) -> i64 {
        self.seen_ns - self.queued_ns.unwrap_or(0)
    }
}

/// The round trip from the capture point to a sender: the least measured,
/// and how much longer it has taken as queues on the way filled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToSender {
    pub least_ns: i64,
    pub variation_ns: i64,
}

impl ToSender {
    /// Whether data seen at `now_ns` followed an ACK seen at `ack_ns` as
    /// soon as the sender could act on it: once the ACK had crossed to the
    /// sender and the host reacted. A prompt ACK leaves the receiver a round
    /// trip after the data it acknowledges, so an application pausing about
    /// a round trip follows it just as closely: only the least round trip
    /// counts. An ACK the receiver held back for its timer (`held_back`)
    /// comes at a moment of its own, and data following it by no more than
    /// the path's round trips have run was waiting for it.
    pub fn prompt(self, ack_ns: i64, now_ns: i64, held_back: bool) -> bool {
        let queueing_ns = if held_back { self.variation_ns } else { 0 };
        now_ns - (ack_ns + self.least_ns) <= HOST_REACTION_NS + queueing_ns
    }
}

impl From<i64> for ToSender {
    fn from(least_ns: i64) -> Self {
        ToSender {
            least_ns,
            variation_ns: 0,
        }
    }
}

impl From<i64> for SeenAt {
    fn from(seen_ns: i64) -> Self {
        SeenAt {
            seen_ns,
            queued_ns: None,
        }
    }
}

/// A data segment sent after the sender's previous one, and what let it go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// When the sender's previous data segment was seen.
    pub since_ns: i64,
    pub ended_by: Release,
}

/// What released a sender's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// An ACK from the peer (frame `frame`, seen at `at_ns`) gave the sender what it lacked.
    Ack {
        at_ns: i64,
        frame: u64,
        lacked: Lacked,
    },
    /// A retransmission timer fired: a timeout or a tail-loss probe.
    /// `tail`: the segment resent was the last one sent, so no later segment
    /// could have raised duplicate ACKs for it.
    Timer { tail: bool },
    /// Duplicate ACKs asked for the segment again (fast retransmission).
    DuplicateAcks,
    /// Nothing was outstanding and the window was open: the sender's
    /// application had nothing to send until then.
    Application,
    /// Earlier data was still outstanding and no ACK reached the sender in
    /// between: the segment followed its flight (queued behind it on the way).
    Queued,
}

/// What a sender released by an ACK had been waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lacked {
    /// The receiver had advertised a zero window, or one too small for a
    /// segment that the sender filled only when its persist timer fired.
    ZeroWindow,
    /// The data did not fit the receiver's window before the ACK.
    ReceiveWindow,
    /// Everything sent had to be acknowledged first. `ack_delayed`: the
    /// receiver held that ACK back for its delayed-ACK timer.
    /// `small_held`: a small segment was outstanding and the one released is
    /// small too, the shape of Nagle's algorithm holding it back.
    AllAcked { ack_delayed: bool, small_held: bool },
    /// Data was still outstanding after the ACK, and the window was open:
    /// the sender's congestion window (or send buffer) let no more go.
    /// `after_loss`: loss had been seen before, so it had cut the window.
    CongestionWindow { after_loss: bool },
}

/// An ACK from the peer, as recorded when the capture saw it.
#[derive(Debug, Clone, Copy)]
struct AckSeen {
    at_ns: i64,
    frame: u64,
    /// The receiver's right window edge before this ACK (relative sequence).
    edge_before: u32,
    zero_before: bool,
    /// The window before it was open by less than a full segment: a
    /// receiver avoiding a silly window, or one scaled by a factor the
    /// capture did not see.
    sliver_before: bool,
    /// The acknowledged edge after it, and the window it then offered.
    ack_after: u32,
    window_after: u64,
    delayed: bool,
}

/// Release state of one direction's sender.
#[derive(Debug, Default)]
pub struct ReleaseTracker {
    last_data: Option<SeenAt>,
    last_data_len: u32,
    /// The handshake's MSS less options, once known.
    mss: Option<u32>,
    largest_segment: u32,
    /// ACKs seen at the capture point that have not reached the sender yet.
    on_their_way: VecDeque<AckSeen>,
    /// The latest ACK to have reached the sender, and whether it reached it
    /// after the sender's previous data left.
    reached: Option<(AckSeen, bool)>,
    /// The first ACK to reach the sender after its last data, while the
    /// ACKs after it acknowledged nothing more: a sender with all it had
    /// sent acknowledged since then was not waiting for them.
    first_since_last_data: Option<AckSeen>,
    /// The sender resent data, or the capture saw a gap in it: loss has
    /// cut its congestion window since.
    loss_seen: bool,
    /// Where the data since the last wait began (the sender's first data, or
    /// the first its application gave it after it had sent all it had), and
    /// the most sent between two waits: bursts that keep outgrowing the
    /// largest before are a congestion window opening, not a writer waiting
    /// for each to be acknowledged.
    burst_from: Option<u32>,
    largest_burst: u32,
    largest_burst_ever: u32,
    /// The right edge of the receive window as the sender knew it when it
    /// last sent: a sender that stopped within a segment of it stopped for
    /// the window.
    edge_at_last_send: Option<u32>,
    /// The most in flight since the last loss; round trips of the ACK clock
    /// since it last rose, and the sequence that ends the current round.
    peak_in_flight: u32,
    /// That most in flight came within a segment of the receive window
    /// the sender then knew.
    peak_filled_the_window: bool,
    rounds_since_peak: u32,
    round_ends_at: Option<u32>,
    /// The end of the sender's newest data.
    sent_up_to: Option<u32>,
    /// Since the peer last sent data, its delayed ACK of everything has
    /// already released a small segment. Nagle holds back only what the application
    /// has written, and what it writes meanwhile joins it; a second small
    /// segment released the same way was written after the ACK: the
    /// application writes once per ACK, waiting for each to be acknowledged.
    small_released_since_peer_data: bool,
    /// From each ACK to the data it let go while the congestion window
    /// limited the sender, against the bytes then in flight: seen at the
    /// receiver, the round trip to the sender and back.
    lags: Samples,
    /// The sender's round trips, counted as Linux counts them: the current
    /// flight (from 1), and the end of its first segment, whose ACK
    /// reaching the sender ends the flight; None once it has.
    flight: u32,
    flight_marked_by: Option<u32>,
    /// The round trip from the capture point to the receiver, as last told.
    to_receiver_ns: i64,
    /// The fastest this sender's data has come, one segment after the
    /// other, in bytes per nanosecond: a segment that came no later than
    /// that rate carries it may have queued behind the one before.
    fastest_bytes_per_ns: f64,
    /// The capture saw an ACK of this sender's data since its last data.
    acked_since_last_data: bool,
    /// The paces full segments came at after full ones.
    paces: FastestPaces,
}

/// The few fastest paces (ns per byte) at which a sender's full segments
/// came one after the other. Past a busy link the slowest of them is that
/// link's pace, which a segment or two bunched up with the one before by
/// chance cannot feign.
#[derive(Debug, Clone, Copy)]
struct FastestPaces([f64; 3]);

impl Default for FastestPaces {
    fn default() -> Self {
        FastestPaces([f64::INFINITY; 3])
    }
}

impl FastestPaces {
    fn note(&mut self, ns_per_byte: f64) {
        let slowest = self.0.len() - 1;
        if ns_per_byte < self.0[slowest] {
            self.0[slowest] = ns_per_byte;
            self.0.sort_by(f64::total_cmp);
        }
    }

    /// The pace of the link the segments crossed, once enough have come.
    fn link(&self) -> Option<f64> {
        self.0.last().copied().filter(|pace| pace.is_finite())
    }
}

/// An ACK of the sender's data as the peer sent it.
#[derive(Debug, Clone, Copy)]
pub struct AckOfData {
    pub at_ns: i64,
    pub frame: u64,
    /// The acknowledged edge before and after, and the window before
    /// (relative to the sender's sequence, scaled).
    pub ack_before: u32,
    pub ack_after: u32,
    pub window_before: Option<u64>,
    pub window_after: u64,
    /// The sender's next sequence: all it has sent.
    pub sent_up_to: u32,
    /// The ACK carried no data of its own.
    pub bare: bool,
}

impl ReleaseTracker {
    /// Gives back what its queues hold beyond their contents.
    pub fn shrink_to_fit(&mut self) {
        self.on_their_way.shrink_to_fit();
        self.lags.shrink_to_fit();
    }

    /// The peer sent data: a turn of the conversation, after which a small
    /// segment held for an ACK is Nagle's doing again.
    pub fn peer_sent_data(&mut self) {
        self.small_released_since_peer_data = false;
    }

    /// A resend filled a gap the capture had seen in this sender's data: it
    /// was lost before the capture point.
    pub fn gap_seen(&mut self) {
        self.loss_seen = true;
        self.largest_burst = 0;
        self.peak_in_flight = 0;
    }

    /// Whether an ACK that reached the sender since its last data, and
    /// that it acted on at once, let this segment go at `now_ns`.
    pub fn prompted_by_an_ack(&mut self, now: SeenAt, to_sender: impl Into<ToSender>) -> bool {
        let to_sender = to_sender.into();
        self.deliver_acks(now.unqueued_ns(), to_sender.least_ns);
        matches!(self.reached, Some((ack, true))
            if to_sender.prompt(ack.at_ns, now.unqueued_ns(), ack.delayed))
    }

    /// When this sender's last data segment was seen.
    pub fn last_data_ns(&self) -> Option<i64> {
        self.last_data.map(|last| last.seen_ns)
    }

    /// Round trips from an ACK to the data it released, while the
    /// congestion window was the limit.
    pub fn lag_stats(&self) -> RttStats {
        self.lags.stats()
    }

    /// The most payload one segment of this sender may carry, from the handshake.
    pub fn learn_mss(&mut self, mss: u32) {
        self.mss = Some(mss);
    }

    /// The most payload one segment may carry, if the handshake said.
    pub fn mss(&self) -> Option<u32> {
        self.mss
    }

    /// A full segment: the handshake's MSS, else the largest segment seen.
    pub fn full_segment(&self) -> u32 {
        self.mss.unwrap_or(self.largest_segment).max(1)
    }

    /// The peer acknowledged some of this sender's data, or moved its window;
    /// `rtt_to_receiver_ns` is the round trip from the capture point to the peer.
    pub fn acked(&mut self, ack: AckOfData, rtt_to_receiver_ns: i64) {
        self.to_receiver_ns = rtt_to_receiver_ns;
        self.acked_since_last_data = true;
        let Some(last_data_ns) = self.last_data_ns() else {
            return;
        };
        let newly_acked = ack.ack_after.wrapping_sub(ack.ack_before);
        let covered_all = !seq::after(ack.sent_up_to, ack.ack_after);
        let lone = u64::from(newly_acked) < 2 * u64::from(self.full_segment());
        let held = ack.at_ns - last_data_ns - rtt_to_receiver_ns;
        let late = (DELAYED_ACK_MIN_NS..=DELAYED_ACK_MAX_NS).contains(&held);
        let window = ack
            .window_before
            .unwrap_or(u64::MAX)
            .min(u64::from(u32::MAX >> 1));
        if self.on_their_way.len() == MAX_ACKS_ON_THEIR_WAY {
            self.merge_acks_on_their_way();
        }
        self.on_their_way.push_back(AckSeen {
            at_ns: ack.at_ns,
            frame: ack.frame,
            edge_before: ack.ack_before.wrapping_add(window as u32),
            zero_before: ack.window_before == Some(0),
            sliver_before: window > 0 && window < u64::from(self.full_segment()),
            ack_after: ack.ack_after,
            window_after: ack.window_after,
            delayed: covered_all && ack.bare && newly_acked > 0 && lone && late,
        });
    }

    /// Merges each pair of ACKs on their way into one: the later one's
    /// news, arriving when it does, over the window the earlier one found.
    /// The sender learns nothing sooner than it could; the oldest ACKs,
    /// the next to reach it, are kept.
    fn merge_acks_on_their_way(&mut self) {
        let acks = self.on_their_way.make_contiguous();
        let merged = acks.len().div_ceil(2);
        // Entry `i` is written only after entries `2i` and `2i + 1` are read.
        for i in 0..merged {
            let earlier = acks[2 * i];
            acks[i] = match acks.get(2 * i + 1) {
                Some(&later) => AckSeen {
                    edge_before: earlier.edge_before,
                    zero_before: earlier.zero_before,
                    sliver_before: earlier.sliver_before,
                    ..later
                },
                None => earlier,
            };
        }
        self.on_their_way.truncate(merged);
    }

    /// New data of `len` bytes is seen `now` from sequence `seq`, the
    /// sender having sent up to `sent_before` before it; `to_sender` is the
    /// round trip from the capture point to the sender. Returns when the
    /// sender's previous data was seen, and what released this.
    pub fn new_data(
        &mut self,
        now: impl Into<SeenAt>,
        seq: u32,
        len: u32,
        sent_before: u32,
        to_sender: impl Into<ToSender>,
    ) -> Option<(i64, Release)> {
        let now = now.into();
        let to_sender = to_sender.into();
        let rtt_to_sender_ns = to_sender.least_ns;
        self.deliver_acks(now.unqueued_ns(), rtt_to_sender_ns);
        let end = seq.wrapping_add(len);
        let released = self.last_data_ns().map(|since| {
            let release = self.release(now, end, len, sent_before, to_sender);
            let release = self.growing_burst(release, sent_before);
            let idle_ns = now.seen_ns - since;
            (
                since,
                self.window_stopped_growing(release, idle_ns, to_sender),
            )
        });
        if let Some((_, release)) = released {
            self.small_released_since_peer_data |= self.releases_small(release, len);
        }
        if matches!(released, None | Some((_, Release::Application))) {
            self.burst_from = Some(seq);
        }
        self.open_flight(end);
        self.note_peak(end);
        self.sent_up_to = Some(end);
        self.sample_lag(
            now,
            released.map(|(_, release)| release),
            sent_before,
            rtt_to_sender_ns,
        );
        self.sent(now, len);
        released
    }

    /// Samples the round trip the sender's data took, against the bytes it
    /// then had in flight. With the sender's clock read, every segment
    /// gives one: the least round trip to the sender plus what it queued on
    /// the way (nothing, seen at the sender's side). Else only data the
    /// congestion window held for an ACK does: from that ACK to the data,
    /// as seen.
    fn sample_lag(
        &mut self,
        now: SeenAt,
        release: Option<Release>,
        sent_before: u32,
        rtt_to_sender_ns: i64,
    ) {
        let in_flight = self
            .reached
            .map(|(ack, _)| u64::from(sent_before.wrapping_sub(ack.ack_after)));
        match (now.queued_ns, release) {
            (Some(queued_ns), _) => {
                self.lags.add(rtt_to_sender_ns + queued_ns, in_flight);
            }
            (
                None,
                Some(Release::Ack {
                    at_ns,
                    lacked: Lacked::CongestionWindow { .. },
                    ..
                }),
            ) => self.lags.add(now.seen_ns - at_ns, in_flight),
            _ => {}
        }
    }

    /// Data sent again, seen `now`, by `release` (a timer or duplicate ACKs).
    pub fn resent(
        &mut self,
        now: impl Into<SeenAt>,
        len: u32,
        release: Release,
        to_sender: impl Into<ToSender>,
    ) -> Option<(i64, Release)> {
        let now = now.into();
        self.deliver_acks(now.unqueued_ns(), to_sender.into().least_ns);
        let since = self.last_data_ns();
        self.open_flight_on_resend();
        self.sent(now, len);
        self.loss_seen = true;
        self.largest_burst = 0;
        self.peak_in_flight = 0;
        since.map(|since| (since, release))
    }

    /// Data the receiver already had was sent again, seen `now`: no loss.
    pub fn resent_spuriously(
        &mut self,
        now: impl Into<SeenAt>,
        len: u32,
        to_sender: impl Into<ToSender>,
    ) {
        let now = now.into();
        self.deliver_acks(now.unqueued_ns(), to_sender.into().least_ns);
        self.open_flight_on_resend();
        self.sent(now, len);
    }

    /// The flight the sender's latest data left in, from 1 (0 before any).
    pub fn flight(&self) -> u32 {
        self.flight
    }

    /// New data ending at `end` leaves in the current flight, or, once an
    /// ACK of that flight's first segment has reached the sender, begins
    /// the next one.
    fn open_flight(&mut self, end: u32) {
        if self.flight == 0 || self.flight_marked_by.is_none() {
            self.flight += 1;
            self.flight_marked_by = Some(end);
        }
    }

    /// A resend after its flight ended begins the next one, which an ACK of
    /// everything sent ends.
    fn open_flight_on_resend(&mut self) {
        if let Some(sent_up_to) = self.sent_up_to {
            self.open_flight(sent_up_to);
        }
    }

    /// An ACK reaching the sender ends its flight when it covers the
    /// flight's first segment.
    fn end_flight_if_acked(&mut self, ack: &AckSeen) {
        if self
            .flight_marked_by
            .is_some_and(|mark| !seq::after(mark, ack.ack_after))
        {
            self.flight_marked_by = None;
        }
    }

    /// An ACK that acknowledged everything ends a burst; when it is larger by
    /// a segment or more than any burst before (since the last loss, which
    /// cut the congestion window), the sender's congestion window is
    /// growing, and that is what it waited on. So is the first burst a
    /// sender ever sends: a connection starts with its initial congestion
    /// window, and nothing yet shows that anything else held it. A burst
    /// that only wavers around a size it reached before is held by
    /// something else.
    fn growing_burst(&mut self, release: Release, sent_before: u32) -> Release {
        let Release::Ack {
            at_ns,
            frame,
            lacked,
        } = release
        else {
            return release;
        };
        let burst = self
            .burst_from
            .map_or(0, |from| sent_before.wrapping_sub(from));
        let initial_window = self.flight <= 1;
        // In 64 bits: a sequence number gone wild makes a burst near 4 GB.
        let (wide_burst, segment) = (u64::from(burst), u64::from(self.full_segment()));
        let growing =
            self.largest_burst > 0 && wide_burst >= u64::from(self.largest_burst) + segment;
        // Below the most the sender ever had out, after a loss: the window
        // the loss cut holds it, not a buffer it had already outgrown.
        let cut_by_loss =
            self.loss_seen && wide_burst + segment <= u64::from(self.largest_burst_ever);
        if let Some((ack, _)) = self.reached {
            self.burst_from = Some(ack.ack_after);
        }
        self.largest_burst = self.largest_burst.max(burst);
        self.largest_burst_ever = self.largest_burst_ever.max(burst);
        let lacked = match lacked {
            Lacked::AllAcked {
                ack_delayed: false,
                small_held: false,
            } if initial_window || growing || cut_by_loss => Lacked::CongestionWindow {
                after_loss: self.loss_seen,
            },
            other => other,
        };
        Release::Ack {
            at_ns,
            frame,
            lacked,
        }
    }

    /// The most the sender has had in flight since the last loss, after
    /// sending up to `end`; a new peak starts the count of round trips.
    fn note_peak(&mut self, end: u32) {
        let Some((ack, _)) = self.reached else {
            return;
        };
        let in_flight = end.wrapping_sub(ack.ack_after);
        if in_flight > self.peak_in_flight && in_flight < u32::MAX >> 1 {
            self.peak_in_flight = in_flight;
            // More in flight than the window allows means a window scale
            // the capture did not see: the window read is no bound then.
            let window = ack.window_after;
            let (in_flight, segment) = (u64::from(in_flight), u64::from(self.full_segment()));
            self.peak_filled_the_window = in_flight + segment > window && in_flight <= window;
            self.rounds_since_peak = 0;
            self.round_ends_at = Some(end);
        }
    }

    /// A congestion window grows every round trip it is the limit, until
    /// loss cuts it. Bytes in flight that have not risen for two round trips
    /// of the ACK clock (one of slack), with no loss, are held by something
    /// else: the receive window, when at their most they filled it (a
    /// sender pacing its segments out stays a segment or two short of the
    /// edge, so no single one stops at it). Short of it, the sender's
    /// buffer, which each ACK frees only as far as it acknowledges, when
    /// the sender had sent nothing for `idle_ns` of half a round trip or
    /// more: spreading at least two segments over each round trip, as any
    /// flow with a window of them does, it would have sent sooner. A sender
    /// that kept sending more often kept a pace of its own (its pacing, its
    /// application's writes), and the segment followed its flight.
    fn window_stopped_growing(
        &self,
        release: Release,
        idle_ns: i64,
        to_sender: ToSender,
    ) -> Release {
        match release {
            Release::Ack {
                at_ns,
                frame,
                lacked: Lacked::CongestionWindow { after_loss: false },
            } if self.peak_in_flight > 0 && self.rounds_since_peak >= 2 => {
                let lacked = if self.peak_filled_the_window {
                    Lacked::ReceiveWindow
                } else if 2 * idle_ns >= self.round_trip_ns(to_sender) {
                    Lacked::AllAcked {
                        ack_delayed: false,
                        small_held: false,
                    }
                } else {
                    return Release::Queued;
                };
                Release::Ack {
                    at_ns,
                    frame,
                    lacked,
                }
            }
            other => other,
        }
    }

    /// Counts a round trip of the ACK clock when `ack` acknowledges the data
    /// sent when the round began, and begins the next. An ACK that
    /// acknowledges nothing new (a window update, a duplicate) ends no round:
    /// the ACK clock ticks only as data comes back acknowledged.
    fn count_round(&mut self, ack: &AckSeen) {
        let Some(round_end) = self.round_ends_at else {
            return;
        };
        let acknowledges_more = self
            .reached
            .is_none_or(|(last, _)| seq::after(ack.ack_after, last.ack_after));
        if acknowledges_more && !seq::after(round_end, ack.ack_after) {
            self.rounds_since_peak += 1;
            self.round_ends_at = self.sent_up_to;
        }
    }

    /// Takes in the ACKs that have reached the sender by `now_ns`. The round
    /// trip is the least measured, which the far side's own processing can
    /// lengthen: a host's reaction time of slack keeps a sender that acted at
    /// once from looking as if it acted before the ACK came.
    fn deliver_acks(&mut self, now_ns: i64, rtt_to_sender_ns: i64) {
        while let Some(&ack) = self.on_their_way.front() {
            let reaches_sender = ack.at_ns + rtt_to_sender_ns;
            if reaches_sender > now_ns + HOST_REACTION_NS.min(rtt_to_sender_ns) {
                break;
            }
            self.on_their_way.pop_front();
            self.count_round(&ack);
            self.end_flight_if_acked(&ack);
            let after_last_data = self
                .last_data
                .is_none_or(|last| reaches_sender > last.unqueued_ns());
            self.note_first_since_last_data(ack, after_last_data);
            self.reached = Some((ack, after_last_data));
        }
    }

    fn note_first_since_last_data(&mut self, ack: AckSeen, after_last_data: bool) {
        let acknowledged_more = self
            .first_since_last_data
            .is_none_or(|first| seq::after(ack.ack_after, first.ack_after));
        if !after_last_data || acknowledged_more {
            self.first_since_last_data = after_last_data.then_some(ack);
        }
    }

    /// An earlier ACK had already acknowledged all that `ack` did, and
    /// reached the sender too long before `now_ns` to have let its data go.
    fn all_acked_earlier(
        &self,
        ack: &AckSeen,
        now_ns: i64,
        to_sender: ToSender,
    ) -> Option<AckSeen> {
        self.first_since_last_data.filter(|first| {
            first.ack_after == ack.ack_after
                && !to_sender.prompt(first.at_ns, now_ns, first.delayed)
        })
    }

    /// The path's least round trip: from the capture point to the sender and
    /// back, and to the receiver and back.
    fn round_trip_ns(&self, to_sender: ToSender) -> i64 {
        to_sender.least_ns + self.to_receiver_ns
    }

    /// Seen beside the sender, it sent nothing for longer than a round
    /// trip with data still in flight and no ACK reaching it: neither its
    /// windows (which only an ACK opens) nor its pacing (which spreads a
    /// window over a round trip) held the data; its application did.
    fn held_by_sender(&self, now_ns: i64, to_sender: ToSender) -> bool {
        let beside_sender = to_sender.least_ns <= HOST_REACTION_NS;
        let round_trip = self.round_trip_ns(to_sender);
        beside_sender
            && self.to_receiver_ns > 0
            && self
                .last_data
                .is_some_and(|last| now_ns - last.seen_ns > round_trip + HOST_REACTION_NS)
    }

    /// The ACK left a window smaller than a segment, and the sender, after
    /// holding back (silly-window avoidance, until its persist timer fired),
    /// sent exactly that window: it waited for the receiver's window.
    fn filled_a_silly_window(&self, ack: &AckSeen, end: u32, sent_before: u32) -> bool {
        ack.window_after < u64::from(self.full_segment())
            && !seq::after(sent_before, ack.ack_after)
            && end == edge_after(ack)
    }

    /// The sender had sent up to `sent_before`, within a full segment of the
    /// window's edge as it knew it: it could send no more.
    fn stopped_at_window_edge(&self, sent_before: u32) -> bool {
        self.edge_at_last_send
            .is_some_and(|edge| seq::after(sent_before.wrapping_add(self.full_segment()), edge))
    }

    fn sent(&mut self, now: SeenAt, len: u32) {
        if let Some(last) = self.last_data {
            let gap_ns = now.seen_ns - last.seen_ns;
            let rate = match gap_ns {
                gap if gap > 0 => f64::from(len) / gap as f64,
                _ => f64::INFINITY,
            };
            self.fastest_bytes_per_ns = self.fastest_bytes_per_ns.max(rate);
            if self.is_full(self.last_data_len) && self.is_full(len) {
                self.paces.note(gap_ns as f64 / f64::from(len));
            }
        }
        self.edge_at_last_send = self.reached.map(|(ack, _)| edge_after(&ack));
        self.acked_since_last_data = false;
        self.first_since_last_data = None;
        self.last_data = Some(now);
        self.last_data_len = len;
        self.largest_segment = self.largest_segment.max(len);
        if let Some((_, after_last_data)) = &mut self.reached {
            *after_last_data = false;
        }
    }

    /// Data of `len` seen at `now_ns` was written after the sender's
    /// queue had emptied. A sender with data queued sends full segments up
    /// to the window's edge, so its last segment (ending at `sent_before`),
    /// short of the largest it has sent (or of a full one, when it has
    /// never sent one) and not cut by the edge, was all it had. With no ACK
    /// between, as a capture that shows the peer's ACKs can tell, nothing
    /// but its application let this data go once it came later than it
    /// could have, queued behind that segment, at the fastest this sender's
    /// data has come.
    fn written_after_its_queue_emptied(&self, now_ns: i64, len: u32, sent_before: u32) -> bool {
        let (Some(last), Some(_)) = (self.last_data, self.reached) else {
            return false;
        };
        let full = self.full_segment();
        let never_sent_a_full_one = !self.is_full(self.largest_segment);
        let short = self.last_data_len + MAX_OPTIONS < self.largest_segment.min(full)
            || never_sent_a_full_one;
        let emptied = short && !self.stopped_at_window_edge(sent_before);
        let queued_at_most_ns = f64::from(len) / self.fastest_bytes_per_ns;
        emptied && !self.acked_since_last_data && (now_ns - last.seen_ns) as f64 > queued_at_most_ns
    }

    /// A segment of `len` carries as much as the sender could put in one.
    fn is_full(&self, len: u32) -> bool {
        len + MAX_OPTIONS >= self.full_segment()
    }

    /// Seen past the links between the sender and the capture point, with
    /// no sender's clock to tell when it sent, the capture cannot see what
    /// is still on the way: an ACK of everything it has seen does not show
    /// that nothing was outstanding, and data that came as soon as the
    /// link could bring it may have waited in a queue for the link. A
    /// sender whose last segment was full had more to send (one that runs
    /// dry sends what it has, short of a segment).
    fn may_have_queued_for_a_link(&self, now: SeenAt, to_sender: ToSender) -> bool {
        let past_a_link = to_sender.least_ns > self.to_receiver_ns;
        past_a_link && now.queued_ns.is_none() && self.is_full(self.last_data_len)
    }

    /// Past a link, the segment came after the one before no later than
    /// that link's pace allows, give or take half a round trip to the
    /// sender or a host's reaction, the less: far sooner than an ACK of the
    /// one before could have let it go. Whatever did, it waited for the
    /// link, busy with what went before it.
    fn came_at_the_links_pace(&self, now: SeenAt, len: u32, to_sender: ToSender) -> bool {
        let (Some(last), Some(pace)) = (self.last_data, self.paces.link()) else {
            return false;
        };
        let crossing_ns = pace * f64::from(len);
        let slack_ns = HOST_REACTION_NS.min(to_sender.least_ns / 2);
        self.may_have_queued_for_a_link(now, to_sender)
            && ((now.seen_ns - last.seen_ns) as f64) <= crossing_ns + slack_ns as f64
    }

    /// A segment short of a full one, after another.
    fn small_after_small(&self, len: u32) -> bool {
        let full = self.full_segment();
        self.last_data_len < full && len < full
    }

    /// The receiver's delayed ACK of everything released a small segment
    /// after a small one.
    fn releases_small(&self, release: Release, len: u32) -> bool {
        matches!(
            release,
            Release::Ack {
                lacked: Lacked::AllAcked {
                    ack_delayed: true,
                    ..
                },
                ..
            }
        ) && self.small_after_small(len)
    }

    /// What released data ending at `end`: the latest ACK to reach the sender
    /// since its previous data, if the sender acted on it at once; else its
    /// application (nothing was outstanding) or its flight (data was).
    fn release(
        &self,
        now: SeenAt,
        end: u32,
        len: u32,
        sent_before: u32,
        to_sender: ToSender,
    ) -> Release {
        let now_ns = now.unqueued_ns();
        let covered_all = |ack: &AckSeen| !seq::after(sent_before, ack.ack_after);
        let idle_or_queued = |ack: Option<&AckSeen>| match ack {
            Some(_) if self.may_have_queued_for_a_link(now, to_sender) => Release::Queued,
            Some(ack) if covered_all(ack) => Release::Application,
            _ if self.held_by_sender(now_ns, to_sender) => Release::Application,
            _ if self.written_after_its_queue_emptied(now_ns, len, sent_before) => {
                Release::Application
            }
            _ => Release::Queued,
        };
        if self.came_at_the_links_pace(now, len, to_sender) {
            return Release::Queued;
        }
        let Some((ack, true)) = self.reached else {
            return idle_or_queued(self.reached.as_ref().map(|(ack, _)| ack));
        };
        let prompt = to_sender.prompt(ack.at_ns, now_ns, ack.delayed);
        let silly_window = self.filled_a_silly_window(&ack, end, sent_before);
        let stopped_at_edge = self.stopped_at_window_edge(sent_before);
        // A sender stopped at the window's edge could send nothing past it
        // before this ACK moved it, however late the data came. A sliver of
        // a window has an edge of its own (see `silly_window`).
        let held_by_window =
            stopped_at_edge && seq::after(end, ack.edge_before) && !ack.sliver_before;
        if !prompt && !silly_window && !held_by_window {
            return idle_or_queued(Some(&ack));
        }
        let window_full = silly_window || seq::after(end, ack.edge_before) || stopped_at_edge;
        // A window too small for a segment is as shut as a zero one: the
        // sender may not fill it (silly-window avoidance) until its persist
        // timer probes with what fits, or a window update opens it.
        let lacked = if window_full {
            if ack.zero_before || ack.sliver_before || silly_window {
                Lacked::ZeroWindow
            } else {
                Lacked::ReceiveWindow
            }
        } else if covered_all(&ack) {
            if let Some(first) = self.all_acked_earlier(&ack, now_ns, to_sender) {
                return idle_or_queued(Some(&first));
            }
            Lacked::AllAcked {
                ack_delayed: ack.delayed,
                small_held: self.small_after_small(len) && !self.small_released_since_peer_data,
            }
        } else {
            Lacked::CongestionWindow {
                after_loss: self.loss_seen,
            }
        };
        Release::Ack {
            at_ns: ack.at_ns,
            frame: ack.frame,
            lacked,
        }
    }
}

/// The right edge of the receive window the ACK left.
fn edge_after(ack: &AckSeen) -> u32 {
    ack.ack_after
        .wrapping_add(ack.window_after.min(u64::from(u32::MAX >> 1)) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fastest_paces_are_kept_in_order_and_the_slowest_of_them_is_the_links() {
        let mut paces = FastestPaces::default();
        assert_eq!(paces.link(), None);
        for pace in [8.0, 3.0, 9.0, 5.0] {
            paces.note(pace);
        }
        assert_eq!(paces.0, [3.0, 5.0, 8.0]);
        paces.note(1.0);
        paces.note(5.0);
        assert_eq!(paces.0, [1.0, 3.0, 5.0]);
        assert_eq!(paces.link(), Some(5.0));
    }

    fn ack(at_ns: i64, before: u32, after: u32, window: u64, sent: u32) -> AckOfData {
        AckOfData {
            at_ns,
            frame: 0,
            ack_before: before,
            ack_after: after,
            window_before: Some(window),
            window_after: window,
            sent_up_to: sent,
            bare: true,
        }
    }

    #[test]
    fn a_backlog_of_acks_past_the_bound_merges_in_pairs_and_keeps_the_oldest() {
        const SEGMENT: u32 = 100;
        let acks = MAX_ACKS_ON_THEIR_WAY as u32 + 1;
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(SEGMENT);
        let sent = 1 + acks * SEGMENT;
        tracker.new_data(0, 1, sent - 1, 1, 10_000_000);
        for i in 0..acks {
            let before = 1 + i * SEGMENT;
            let mut of_one = ack(
                1_000 * i64::from(i),
                before,
                before + SEGMENT,
                1 << 20,
                sent,
            );
            of_one.frame = u64::from(i) + 1;
            tracker.acked(of_one, 0);
        }
        let oldest = tracker.on_their_way.front().unwrap();
        assert_eq!(tracker.on_their_way.len(), MAX_ACKS_ON_THEIR_WAY / 2 + 1);
        // The first two as one: the second's news, when the second was seen,
        // over the window the first found.
        assert_eq!((oldest.frame, oldest.at_ns), (2, 1_000));
        assert_eq!(oldest.edge_before, 1 + (1 << 20));
        assert_eq!(oldest.ack_after, 1 + 2 * SEGMENT);
    }

    const MS: i64 = 1_000_000;

    fn lacked(release: Option<(i64, Release)>) -> Option<Lacked> {
        match release {
            Some((_, Release::Ack { lacked, .. })) => Some(lacked),
            _ => None,
        }
    }

    /// Sends `segments` full segments of `segment` bytes from `from` at
    /// `at_ms`, then the ACK of all of them comes 50 ms later (and, with
    /// `window_update`, a window update acknowledging nothing more half a
    /// millisecond after it); returns what released the first segment, and
    /// where the data ends.
    fn flight(
        tracker: &mut ReleaseTracker,
        from: u32,
        segments: u32,
        segment: u32,
        at_ms: i64,
        window_update: bool,
    ) -> (Option<(i64, Release)>, u32) {
        let first = tracker.new_data(at_ms * MS, from, segment, from, 0);
        for i in 1..segments {
            let seq = from + i * segment;
            tracker.new_data(at_ms * MS + i64::from(i), seq, segment, seq, 0);
        }
        let end = from + segments * segment;
        tracker.acked(ack((at_ms + 50) * MS, from, end, 1 << 20, end), 0);
        if window_update {
            tracker.acked(ack((at_ms + 50) * MS + MS / 2, end, end, 1 << 21, end), 0);
        }
        (first, end)
    }

    #[test]
    fn the_first_flight_held_until_all_is_acknowledged_is_the_initial_congestion_window() {
        const SEGMENT: u32 = 1000;
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(SEGMENT);
        // Two segments, the ACK of both, then the next burst of two, the ACK
        // of both, then more.
        let (_, end) = flight(&mut tracker, 1, 2, SEGMENT, 0, false);
        let (after_first, end) = flight(&mut tracker, end, 2, SEGMENT, 51, false);
        let (after_second, _) = flight(&mut tracker, end, 1, SEGMENT, 102, false);
        assert_eq!(
            lacked(after_first),
            Some(Lacked::CongestionWindow { after_loss: false })
        );
        // A later burst that did not outgrow one before waited for something else.
        assert!(matches!(
            lacked(after_second),
            Some(Lacked::AllAcked { .. })
        ));
    }

    #[test]
    fn a_burst_begins_where_the_application_gave_data_after_all_was_sent() {
        const SEGMENT: u32 = 1000;
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(SEGMENT);
        // One answer in two bursts, then two more answers after idle times,
        // the last in bursts of 4, 5 and 6 segments: a congestion window
        // growing, though the segments since the first answer's last wait
        // outnumber each burst after.
        let (_, end) = flight(&mut tracker, 1, 2, SEGMENT, 0, false);
        let (_, end) = flight(&mut tracker, end, 1, SEGMENT, 51, false);
        let (second_answer, end) = flight(&mut tracker, end, 2, SEGMENT, 1_000, false);
        let (third_answer, end) = flight(&mut tracker, end, 4, SEGMENT, 2_000, false);
        assert_eq!(second_answer.map(|(_, r)| r), Some(Release::Application));
        assert_eq!(third_answer.map(|(_, r)| r), Some(Release::Application));
        let (after_four, end) = flight(&mut tracker, end, 5, SEGMENT, 2_051, false);
        let (after_five, _) = flight(&mut tracker, end, 6, SEGMENT, 2_102, false);
        for release in [after_four, after_five] {
            assert_eq!(
                lacked(release),
                Some(Lacked::CongestionWindow { after_loss: false })
            );
        }
    }

    #[test]
    fn a_window_update_ends_no_round_of_the_ack_clock() {
        const SEGMENT: u32 = 1000;
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(SEGMENT);
        // Bursts of 2, 3, 4 and 5 segments, each acknowledged at once and
        // then by a window update: the window grows every round trip.
        let mut end = 1;
        let mut waits = Vec::new();
        for (round, segments) in (2..=5).enumerate() {
            let (release, next) = flight(
                &mut tracker,
                end,
                segments,
                SEGMENT,
                51 * round as i64,
                true,
            );
            waits.push(lacked(release));
            end = next;
        }
        let growing = Some(Lacked::CongestionWindow { after_loss: false });
        assert_eq!(waits, [None, growing, growing, growing]);
    }

    #[test]
    fn data_beyond_the_window_edge_waited_for_the_window() {
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(1000);
        tracker.new_data(0, 1, 1000, 1, 0);
        tracker.new_data(10, 1001, 1000, 1001, 0);
        tracker.acked(ack(50, 1, 1001, 2000, 2001), 40);
        let (since, release) = tracker.new_data(51, 2001, 1000, 2001, 0).unwrap();
        assert_eq!(since, 10);
        assert_eq!(
            release,
            Release::Ack {
                at_ns: 50,
                frame: 0,
                lacked: Lacked::ReceiveWindow
            }
        );
    }

    /// What released the last data of a sender that filled a window of
    /// `window` bytes once (ten segments in flight), then went on two
    /// segments short of that, sending two as each ACK of two came, a
    /// millisecond apart (the first of them released by the ACK), on a path
    /// whose round trip from the capture point to the receiver is
    /// `round_trip_ns`.
    fn two_segments_short_of_its_peak(window: u64, round_trip_ns: i64) -> Release {
        const MS: i64 = 1_000_000;
        const SEGMENT: u32 = 1000;
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(SEGMENT);
        let (mut sent, mut acked) = (1, 1);
        let mut released = None;
        for (step, segments) in [8, 4, 0].into_iter().chain([2; 20]).enumerate() {
            let at_ns = step as i64 * MS;
            if step > 0 {
                let of_two = ack(at_ns, acked, acked + 2 * SEGMENT, window, sent);
                tracker.acked(of_two, round_trip_ns);
                acked += 2 * SEGMENT;
            }
            for segment in 0..segments {
                let release = tracker.new_data(at_ns + 10, sent, SEGMENT, sent, 0);
                if segment == 0 {
                    released = release;
                }
                sent += SEGMENT;
            }
        }
        released.unwrap().1
    }

    #[test]
    fn bytes_in_flight_held_short_of_the_window_waited_for_it_or_for_the_sender() {
        const MS: i64 = 1_000_000;
        let lacked = |release| match release {
            Release::Ack { lacked, .. } => Some(lacked),
            _ => None,
        };
        assert_eq!(
            lacked(two_segments_short_of_its_peak(10_000, MS)),
            Some(Lacked::ReceiveWindow)
        );
        // Far from the window, silent a whole round trip between its pairs:
        // it waited for the ACK to free its buffer.
        assert!(matches!(
            lacked(two_segments_short_of_its_peak(100_000, MS)),
            Some(Lacked::AllAcked { .. })
        ));
        // Sending a pair every tenth of a round trip, it kept a pace of its
        // own, and nothing shows it waiting.
        assert_eq!(
            two_segments_short_of_its_peak(100_000, 10 * MS),
            Release::Queued
        );
    }

    #[test]
    fn a_sender_stopped_at_the_window_edge_waited_for_the_window_however_late_it_went_on() {
        const MS: i64 = 1_000_000;
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(1000);
        tracker.new_data(0, 1, 1000, 1, 0);
        tracker.acked(ack(10 * MS, 1, 1001, 2000, 1001), 0);
        tracker.new_data(11 * MS, 1001, 1000, 1001, 0);
        tracker.new_data(12 * MS, 2001, 1000, 2001, 0);
        tracker.acked(ack(50 * MS, 1001, 3001, 2000, 3001), 0);
        let (_, release) = tracker.new_data(90 * MS, 3001, 1000, 3001, 0).unwrap();
        assert_eq!(
            release,
            Release::Ack {
                at_ns: 50 * MS,
                frame: 0,
                lacked: Lacked::ReceiveWindow
            }
        );
    }

    #[test]
    fn a_window_under_a_segment_does_not_hold_data_that_came_late() {
        // 500 bytes advertised against 1000-byte segments, a window scaled
        // unseen; data that does not just fill it, late, was the sender's own doing.
        const MS: i64 = 1_000_000;
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(1000);
        tracker.new_data(0, 1, 500, 1, 0);
        tracker.acked(ack(10 * MS, 1, 501, 500, 501), 0);
        tracker.new_data(11 * MS, 501, 500, 501, 0);
        tracker.acked(ack(50 * MS, 501, 1001, 500, 1001), 0);
        let (_, release) = tracker.new_data(90 * MS, 1001, 400, 1001, 0).unwrap();
        assert_eq!(release, Release::Application);
    }

    #[test]
    fn a_sender_that_filled_a_window_under_a_segment_only_when_its_persist_timer_fired_waited_for_a_shut_window(
    ) {
        // Everything acknowledged with 512 bytes left of a window against
        // 1448-byte segments; 330 ms later the sender sends exactly 512.
        const MS: i64 = 1_000_000;
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(1448);
        tracker.new_data(0, 1, 1448, 1, 0);
        tracker.acked(ack(5 * MS, 1, 1449, 512, 1449), 0);
        let (_, release) = tracker.new_data(335 * MS, 1449, 512, 1449, 0).unwrap();
        assert!(matches!(
            release,
            Release::Ack {
                lacked: Lacked::ZeroWindow,
                ..
            }
        ));
    }

    #[test]
    fn seen_beside_the_sender_a_piece_held_past_a_round_trip_without_an_ack_was_its_application() {
        const MS: i64 = 1_000_000;
        // A request answered, then a first piece of 177 bytes still unacknowledged.
        let after_first_piece = || {
            let mut tracker = ReleaseTracker::default();
            tracker.learn_mss(1448);
            tracker.new_data(0, 1, 300, 1, 0);
            tracker.acked(ack(MS, 1, 301, 65535, 301), MS);
            tracker.new_data(2 * MS, 301, 177, 301, 0);
            tracker
        };
        let next_piece_at = |at_ns| after_first_piece().new_data(at_ns, 478, 134, 478, 0);
        assert_eq!(next_piece_at(2 * MS + MS / 2).unwrap().1, Release::Queued);
        assert_eq!(next_piece_at(22 * MS).unwrap().1, Release::Application);
    }

    /// Full segments 5 ms apart, each acknowledged at once, seen with
    /// the round trip `to_sender_ns` to their sender: what let the last go.
    fn release_of_segments_five_ms_apart(to_sender_ns: i64) -> Release {
        const MS: i64 = 1_000_000;
        const SEGMENT: u32 = 1000;
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(SEGMENT);
        let mut last = None;
        for n in 0..6u32 {
            let seq = 1 + n * SEGMENT;
            let at_ns = i64::from(n) * 5 * MS;
            last = tracker.new_data(at_ns, seq, SEGMENT, seq, to_sender_ns);
            let acked = ack(at_ns + 10_000, seq, seq + SEGMENT, 1 << 20, seq + SEGMENT);
            tracker.acked(acked, 10_000);
        }
        last.unwrap().1
    }

    #[test]
    fn past_a_link_full_segments_at_its_steady_pace_waited_for_the_link() {
        // Seen at the receiver, a millisecond from the sender: every ACK of
        // all the capture saw reached the sender before the next segment,
        // yet the capture cannot see what was still queued for the link.
        assert_eq!(
            release_of_segments_five_ms_apart(1_000_000),
            Release::Queued
        );
        // Seen beside the sender, nothing was outstanding: its application.
        assert_eq!(release_of_segments_five_ms_apart(0), Release::Application);
    }

    #[test]
    fn past_a_link_a_pause_after_a_short_segment_was_the_senders_own() {
        const MS: i64 = 1_000_000;
        const TO_SENDER: i64 = MS;
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(1000);
        for (n, at_ms) in [0, 5, 10].into_iter().enumerate() {
            let seq = 1 + n as u32 * 1000;
            tracker.new_data(at_ms * MS, seq, 1000, seq, TO_SENDER);
        }
        tracker.new_data(15 * MS, 3001, 300, 3001, TO_SENDER);
        tracker.acked(ack(15 * MS + 10_000, 1, 3301, 1 << 20, 3301), 10_000);
        let (_, release) = tracker
            .new_data(40 * MS, 3301, 1000, 3301, TO_SENDER)
            .unwrap();
        assert_eq!(release, Release::Application);
    }

    #[test]
    fn seen_beside_the_receiver_a_piece_after_a_short_one_came_later_than_a_queue_lets_go() {
        const MS: i64 = 1_000_000;
        const TO_SENDER: i64 = 5 * MS;
        // A first answer of `len` bytes, acknowledged: the capture shows
        // the peer's ACKs. The next data begins at byte `len + 1`.
        let after_an_answer = |len: u32| {
            let mut tracker = ReleaseTracker::default();
            tracker.learn_mss(1448);
            tracker.new_data(0, 1, len, 1, TO_SENDER);
            tracker.acked(ack(MS, 1, len + 1, 65535, len + 1), 0);
            tracker
        };
        // The next answer's pieces: the second a millisecond after the
        // first, the third 18 ms later, with no ACK in between.
        let mut pieces = after_an_answer(185);
        pieces.new_data(20 * MS, 186, 185, 186, TO_SENDER);
        pieces.new_data(21 * MS, 371, 81, 371, TO_SENDER);
        let (_, release) = pieces.new_data(39 * MS, 452, 165, 452, TO_SENDER).unwrap();
        assert_eq!(release, Release::Application);
        // Full segments as far apart, spaced by a slow link: queued behind
        // each other, whatever the gap.
        let mut full = after_an_answer(1448);
        full.new_data(20 * MS, 1449, 1448, 1449, TO_SENDER);
        let (_, release) = full.new_data(38 * MS, 2897, 1448, 2897, TO_SENDER).unwrap();
        assert_eq!(release, Release::Queued);
        // A short last piece followed as fast as the data ever came.
        let mut stream = after_an_answer(1448);
        stream.new_data(20 * MS, 1449, 1448, 1449, TO_SENDER);
        stream.new_data(21 * MS, 2897, 600, 2897, TO_SENDER);
        let (_, release) = stream
            .new_data(22 * MS, 3497, 1448, 3497, TO_SENDER)
            .unwrap();
        assert_eq!(release, Release::Queued);
    }

    #[test]
    fn a_late_ack_of_a_lone_segment_releasing_a_small_one_is_nagle_meeting_delayed_ack() {
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(1448);
        tracker.new_data(0, 1, 100, 1, 0);
        tracker.acked(ack(41_000_000, 1, 101, 65535, 101), 1_000_000);
        let (_, release) = tracker.new_data(41_100_000, 101, 200, 101, 0).unwrap();
        assert_eq!(
            release,
            Release::Ack {
                at_ns: 41_000_000,
                frame: 0,
                lacked: Lacked::AllAcked {
                    ack_delayed: true,
                    small_held: true
                }
            }
        );
    }

    #[test]
    fn a_late_ack_that_acknowledges_nothing_new_was_not_held_back() {
        // All acknowledged at once; then, long after, an ACK of nothing new
        // (a window update, or the ACK on a FIN) just before the next data:
        // the sender, with nothing outstanding, was released by its application.
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(1448);
        tracker.new_data(0, 1, 100, 1, 0);
        tracker.acked(ack(1_000_000, 1, 101, 65535, 101), 1_000_000);
        tracker.acked(ack(300_000_000, 101, 101, 65535, 101), 1_000_000);
        let (_, release) = tracker.new_data(300_100_000, 101, 200, 101, 0).unwrap();
        assert_eq!(release, Release::Application);
    }

    #[test]
    fn small_segments_each_released_by_an_ack_show_a_writer_waiting_not_nagle() {
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(1448);
        let held = |tracker: &mut ReleaseTracker, n: i64| {
            let start = (n as u32) * 550 + 1;
            tracker.acked(ack(n * 41_000_000, start - 550, start, 65535, start), 0);
            match tracker.new_data(n * 41_000_000 + 100, start, 550, start, 0) {
                Some((
                    _,
                    Release::Ack {
                        lacked: Lacked::AllAcked { small_held, .. },
                        ..
                    },
                )) => small_held,
                other => panic!("released by {other:?}"),
            }
        };
        tracker.new_data(0, 1, 550, 1, 0);
        assert!(held(&mut tracker, 1), "the first looks like Nagle");
        assert!(
            !held(&mut tracker, 2),
            "the second was written after the ACK"
        );
        tracker.peer_sent_data();
        assert!(held(&mut tracker, 3), "a new turn starts afresh");
    }

    #[test]
    fn a_spurious_resend_leaves_later_waits_uncharged_to_loss() {
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(1000);
        tracker.new_data(0, 1, 1000, 1, 0);
        tracker.new_data(10, 1001, 1000, 1001, 0);
        tracker.resent_spuriously(20, 1000, 0);
        tracker.acked(ack(1_000, 1, 2001, 65535, 2001), 0);
        let (_, release) = tracker.new_data(1_010, 2001, 1000, 2001, 0).unwrap();
        assert!(
            !matches!(
                release,
                Release::Ack {
                    lacked: Lacked::CongestionWindow { after_loss: true },
                    ..
                }
            ),
            "{release:?}"
        );
        assert!(!tracker.loss_seen);
    }

    #[test]
    fn each_ack_of_a_flights_first_segment_begins_the_next_flight() {
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(1000);
        let mut flights = Vec::new();
        let mut send = |tracker: &mut ReleaseTracker, at: i64, seq: u32| {
            tracker.new_data(at, seq, 1000, seq, 0);
            flights.push(tracker.flight());
        };
        // Slow start: two segments, each ACK of two lets four go.
        send(&mut tracker, 0, 1);
        send(&mut tracker, 10, 1001);
        tracker.acked(ack(100, 1, 2001, 65535, 2001), 0);
        for (i, seq) in [2001, 3001, 4001, 5001].into_iter().enumerate() {
            send(&mut tracker, 101 + i as i64, seq);
        }
        // The ACK of the second flight's first two segments; then the rest.
        tracker.acked(ack(200, 2001, 4001, 65535, 6001), 0);
        send(&mut tracker, 201, 6001);
        tracker.acked(ack(210, 4001, 6001, 65535, 7001), 0);
        send(&mut tracker, 211, 7001);
        // Everything acknowledged, then idle: the next data is a flight of its own.
        tracker.acked(ack(300, 6001, 8001, 65535, 8001), 0);
        send(&mut tracker, 5_000, 8001);
        send(&mut tracker, 5_001, 9001);
        assert_eq!(flights, [1, 1, 2, 2, 2, 2, 3, 3, 4, 4]);
    }

    #[test]
    fn an_idle_sender_with_nothing_outstanding_was_released_by_its_application() {
        let mut tracker = ReleaseTracker::default();
        tracker.new_data(0, 1, 100, 1, 0);
        tracker.acked(ack(1_000_000, 1, 101, 65535, 101), 0);
        assert_eq!(
            tracker.new_data(5_000_000, 101, 100, 101, 0).unwrap().1,
            Release::Application
        );
        assert_eq!(
            tracker.new_data(5_000_100, 201, 100, 201, 0).unwrap().1,
            Release::Queued
        );
    }

    #[test]
    fn a_sender_that_resumed_long_after_the_ack_was_released_by_its_application() {
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(1448);
        tracker.new_data(0, 1, 100, 1, 0);
        tracker.acked(ack(2_000_000, 1, 101, 65535, 101), 1_000_000);
        assert_eq!(
            tracker.new_data(90_000_000, 101, 100, 101, 0).unwrap().1,
            Release::Application
        );
    }

    #[test]
    fn seen_from_the_receiver_data_that_followed_its_flight_was_not_waiting() {
        // Captured at the receiver, 10 ms from the sender and back: the ACK
        // seen at 1 ms reached the sender at 11 ms, after the data seen at 2
        // and 3 ms had left it.
        let mut tracker = ReleaseTracker::default();
        tracker.learn_mss(1000);
        tracker.new_data(0, 1, 1000, 1, 10_000_000);
        tracker.acked(ack(1_000_000, 1, 1001, 65535, 1001), 0);
        tracker.new_data(2_000_000, 1001, 1000, 1001, 10_000_000);
        assert_eq!(
            tracker
                .new_data(3_000_000, 2001, 1000, 2001, 10_000_000)
                .unwrap()
                .1,
            Release::Queued
        );
    }
}
