//! Packets seen at one point and not the other, and where each loss happened.
//!
//! Per direction of a connection, the packets of both captures are merged
//! into one list of distinct transmissions. Which of them the sender sent
//! again is `tcp`'s word at each point (its retransmission events); a
//! transmission whose data a later one sent again was lost: before the
//! upstream point when neither point saw it (only its resend filled the
//! hole), between the points when only the upstream one did, after both
//! when both did. A packet seen upstream
//! only and never resent, yet acknowledged by the receiver, reached it: the
//! downstream capture missed it. A packet seen downstream only passed the
//! upstream point unrecorded: that capture missed it.

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use tcp::SeqNumber;

use crate::packets::{Capture, Packet};
use crate::pairing::FlowPair;

/// Where the packets going one way were lost or missed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Losses {
    /// Resent segments whose first copy neither point saw.
    pub before_upstream: u64,
    /// Resent segments the upstream point saw and the downstream one did not.
    pub between_points: u64,
    /// Resent segments both points saw.
    pub after_downstream: u64,
    /// Packets seen downstream only: the upstream capture dropped them.
    pub missed_by_upstream_capture: u64,
    /// Segments seen upstream only, never resent, yet acknowledged by the
    /// receiver: the downstream capture dropped them.
    pub missed_by_downstream_capture: u64,
    /// Packets seen upstream only whose fate the captures do not tell
    /// (pure ACKs, or data neither resent nor acknowledged).
    pub unexplained: u64,
}

impl Losses {
    pub fn add(&mut self, other: &Losses) {
        self.before_upstream += other.before_upstream;
        self.between_points += other.between_points;
        self.after_downstream += other.after_downstream;
        self.missed_by_upstream_capture += other.missed_by_upstream_capture;
        self.missed_by_downstream_capture += other.missed_by_downstream_capture;
        self.unexplained += other.unexplained;
    }
}

/// One direction of one connection as both points saw it.
pub struct Direction<'a> {
    pub a: &'a Capture,
    pub b: &'a Capture,
    pub pair: &'a FlowPair,
    /// A's direction index (0 = client to server).
    pub direction: usize,
    /// True when the packets pass A before B.
    pub a_is_upstream: bool,
    /// B's clock minus A's.
    pub clock_offset_ns: i64,
    /// The span, on A's clock, that both captures cover: a packet outside it
    /// missing from the other capture is not counted missing (None: no such span).
    pub both_recording: Option<std::ops::RangeInclusive<i64>>,
}

/// A packet as one or both points saw it.
struct Sighting<'a> {
    /// On A's clock.
    time_ns: i64,
    /// In A's numbering.
    seq: SeqNumber,
    end: SeqNumber,
    packet: &'a Packet,
    /// `tcp` at either point that saw it says it was sent before.
    sent_again: bool,
    at_a: bool,
    at_b: bool,
}

/// One transmission, wherever it was seen.
struct Transmission {
    time_ns: i64,
    /// In A's numbering.
    seq: SeqNumber,
    end: SeqNumber,
    carries_data: bool,
    sent_again: bool,
    upstream: bool,
    downstream: bool,
}

impl Direction<'_> {
    pub fn losses(&self) -> Losses {
        let transmissions = self.transmissions();
        let resent = resent(&transmissions);
        let acknowledged = self.highest_ack();
        let mut losses = Losses {
            before_upstream: holes_filled(&transmissions),
            ..Losses::default()
        };
        for (transmission, was_resent) in transmissions.iter().zip(resent) {
            let time = transmission.time_ns;
            let span = self.both_recording.as_ref();
            // A resend seen later proves the capture still recording; any
            // other packet must have had time to arrive before it stopped.
            let recording = if was_resent {
                span.is_some_and(|span| time >= *span.start())
            } else {
                span.is_some_and(|span| span.contains(&time))
            };
            match (transmission.upstream, transmission.downstream, was_resent) {
                (true, true, true) => losses.after_downstream += 1,
                // Missing from a capture that was not recording then says nothing.
                _ if !recording => {}
                (true, false, true) => losses.between_points += 1,
                (false, true, true) => {
                    losses.missed_by_upstream_capture += 1;
                    losses.after_downstream += 1;
                }
                (false, true, false) => losses.missed_by_upstream_capture += 1,
                (true, false, false) => {
                    let reached = transmission.carries_data
                        && acknowledged.is_some_and(|ack| ack >= transmission.end);
                    if reached {
                        losses.missed_by_downstream_capture += 1;
                    } else {
                        losses.unexplained += 1;
                    }
                }
                _ => {}
            }
        }
        losses
    }

    /// Every distinct packet of the direction, in A's numbering and clock, in time order.
    fn transmissions(&self) -> Vec<Transmission> {
        let mut sightings = self.sightings();
        sightings.sort_by_key(|sighting| sighting.time_ns);
        sightings
            .into_iter()
            .map(|sighting| {
                let (upstream, downstream) = if self.a_is_upstream {
                    (sighting.at_a, sighting.at_b)
                } else {
                    (sighting.at_b, sighting.at_a)
                };
                Transmission {
                    time_ns: sighting.time_ns,
                    seq: sighting.seq,
                    end: sighting.end,
                    carries_data: sighting.packet.carries_data,
                    sent_again: sighting.sent_again,
                    upstream,
                    downstream,
                }
            })
            .collect()
    }

    /// A's packets of the direction, each marked if B saw it too, then the
    /// packets only B saw, in A's numbering and on A's clock.
    fn sightings(&self) -> Vec<Sighting<'_>> {
        let pair = self.pair;
        let matched = &pair.matched[self.direction];
        let b_copy_of: FxHashMap<usize, usize> = matched.iter().copied().collect();
        let matched_b: FxHashSet<usize> = matched.iter().map(|(_, b)| *b).collect();
        let in_a = self.a.flows[pair.a].directions[self.direction]
            .iter()
            .map(|index| {
                let packet = &self.a.packets[*index];
                let at_b = b_copy_of.get(index).map(|&b| &self.b.packets[b]);
                Sighting {
                    time_ns: packet.timestamp_ns,
                    seq: packet.seq,
                    end: packet.end,
                    packet,
                    sent_again: packet.sent_again || at_b.is_some_and(|copy| copy.sent_again),
                    at_a: true,
                    at_b: at_b.is_some(),
                }
            });
        let only_in_b = self.b.flows[pair.b].directions[pair.b_direction(self.direction)]
            .iter()
            .filter(|index| !matched_b.contains(index))
            .map(|index| {
                let packet = &self.b.packets[*index];
                Sighting {
                    time_ns: packet.timestamp_ns - self.clock_offset_ns,
                    seq: pair.seq_in_a(self.direction, packet.seq),
                    end: pair.seq_in_a(self.direction, packet.end),
                    packet,
                    sent_again: packet.sent_again,
                    at_a: false,
                    at_b: true,
                }
            });
        in_a.chain(only_in_b).collect()
    }

    /// The receiver's highest acknowledgement of this direction, in A's
    /// numbering, at either point.
    fn highest_ack(&self) -> Option<SeqNumber> {
        let pair = self.pair;
        let reverse = 1 - self.direction;
        let in_a = self.a.flows[pair.a].directions[reverse]
            .iter()
            .map(|&i| &self.a.packets[i])
            .filter(|p| p.flags.ack())
            .map(|p| p.ack);
        let in_b = self.b.flows[pair.b].directions[pair.b_direction(reverse)]
            .iter()
            .map(|&i| &self.b.packets[i])
            .filter(|p| p.flags.ack())
            .map(|p| pair.seq_in_a(self.direction, p.ack));
        in_a.chain(in_b)
            .reduce(|highest, ack| if ack > highest { ack } else { highest })
    }
}

/// For each transmission, whether a later one that `tcp` took for a resend
/// sent its data again from the same start.
fn resent(transmissions: &[Transmission]) -> Vec<bool> {
    let mut resent = vec![false; transmissions.len()];
    let mut last_sent_at: FxHashMap<SeqNumber, usize> = FxHashMap::default();
    for (index, transmission) in transmissions.iter().enumerate() {
        if !transmission.carries_data {
            continue;
        }
        let earlier = last_sent_at.insert(transmission.seq, index);
        if let (Some(earlier), true) = (earlier, transmission.sent_again) {
            resent[earlier] = true;
        }
    }
    resent
}

/// Resends that start at no earlier transmission's start: the hole they
/// fill was lost before either point saw it.
fn holes_filled(transmissions: &[Transmission]) -> u64 {
    let mut starts = FxHashSet::default();
    let mut holes = 0;
    for transmission in transmissions.iter().filter(|t| t.carries_data) {
        let new_start = starts.insert(transmission.seq);
        if new_start && transmission.sent_again {
            holes += 1;
        }
    }
    holes
}
