//! Frames one capture holds twice: the same packet recorded again.
//!
//! A mirror port that copies a link's traffic both as it enters a switch and
//! as it leaves shows every packet twice, microseconds apart. Read as sent
//! twice, each copy would be a retransmission. A packet is told by its IP ID
//! or its TCP timestamp, with its sequence and acknowledgement numbers,
//! length, flags and window. The same packet again within a millisecond is
//! the capture's copy when its sender numbers its packets (a nonzero IP ID
//! it gives no other packet): no timer resends that soon. A timestamp alone
//! changes only with its sender's clock, and a resend the peer's duplicate
//! ACKs asked for can leave within the same tick: then the same packet is a
//! copy only when the peer sent nothing in between. A receiver sends its
//! duplicate ACKs within one tick, each like the last: a bare ACK without an
//! IP ID is taken for a copy that way only once the direction's other
//! packets have shown the capture records it twice. A packet with neither
//! (IPv6 without timestamps, an IP ID of 0, or one its sender gives
//! different packets) cannot be told from its resend and is always kept.
//!
//! A router that forwards packets back onto the tapped link (from one host
//! of the link to another) shows each a second time a few milliseconds
//! later, one hop on: its TTL lower, otherwise the same. A sender's resend
//! leaves with the TTL of the original, so the same packet with a lower TTL
//! is the router's copy, whatever else tells it or not. Once a direction's
//! packets come at two TTLs, those at the higher are remembered until their
//! copy comes, or for as long as a router could take to forward it.

use std::collections::VecDeque;

use decode::{Flags, Segment};
use serde::Serialize;

/// Packets remembered per direction: copies come within a few frames of
/// their original.
const REMEMBERED: usize = 4;
/// A copy follows its original within this: a switch forwards in
/// microseconds, and the soonest a TCP timer resends (Linux's loss probe,
/// two clock ticks past twice the round trip) is later.
const COPY_WITHIN_NS: i64 = 1_000_000;
/// A router's copy follows its original within this.
const FORWARDED_WITHIN_NS: i64 = 50_000_000;
/// Packets remembered per direction for a router's copies, at most.
const AWAITING_COPY_AT_MOST: usize = 4096;

/// A frame left out as a copy of a packet the capture already holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// Recorded again at once, as a mirror port does.
    RecordedTwice,
    /// Forwarded back onto the tapped link by a router, its TTL this much lower.
    ForwardedAgain { ttl_step: u8 },
}

/// The frames left out as copies, by kind.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, record::Wire)]
pub struct Repeats {
    pub recorded_twice: u64,
    pub forwarded_again: u64,
    /// The least and the most a forwarded copy's TTL was lower than its original's.
    pub ttl_steps: Option<(u8, u8)>,
}

impl Repeats {
    pub fn count(&mut self, repeat: Repeat) {
        match repeat {
            Repeat::RecordedTwice => self.recorded_twice += 1,
            Repeat::ForwardedAgain { ttl_step } => {
                self.forwarded_again += 1;
                self.note_steps((ttl_step, ttl_step));
            }
        }
    }

    pub fn add(&mut self, other: &Repeats) {
        self.recorded_twice += other.recorded_twice;
        self.forwarded_again += other.forwarded_again;
        if let Some(steps) = other.ttl_steps {
            self.note_steps(steps);
        }
    }

    fn note_steps(&mut self, (least, most): (u8, u8)) {
        let (low, high) = self.ttl_steps.unwrap_or((least, most));
        self.ttl_steps = Some((low.min(least), high.max(most)));
    }
}

/// What tells one packet from another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Print {
    ip_id: Option<u16>,
    timestamp: Option<u32>,
    seq: u32,
    ack: u32,
    len: u32,
    flags: u8,
    window: u16,
}

impl Print {
    fn of(segment: &Segment) -> Print {
        Print {
            ip_id: segment.ip_id.filter(|&id| id != 0),
            timestamp: segment.options.timestamps.map(|(tsval, _)| tsval),
            seq: segment.seq,
            ack: segment.ack,
            len: segment.payload_len,
            flags: segment.flags.0,
            window: segment.window,
        }
    }

    /// Something in it changes from one sending of the packet to the next.
    fn tells_sendings_apart(&self) -> bool {
        self.ip_id.is_some() || self.timestamp.is_some()
    }

    fn bare_ack(&self) -> bool {
        self.len == 0 && self.flags & (Flags::SYN | Flags::FIN | Flags::RST) == 0
    }
}

/// A packet remembered: when it was seen, with what TTL, and whether the
/// peer has sent since.
#[derive(Debug, Clone, Copy)]
struct Seen {
    print: Print,
    at_ns: i64,
    ttl: u8,
    peer_sent_since: bool,
}

/// One direction's latest packets.
#[derive(Debug, Default)]
pub struct Recent {
    seen: [Option<Seen>; REMEMBERED],
    next: usize,
    /// Different packets came with one IP ID: the sender does not number them.
    ids_repeat: bool,
    /// Copies of packets told apart by their IP ID or timestamp were
    /// found: the capture records this direction twice.
    recorded_twice: bool,
    /// The highest TTL the direction's packets came with.
    highest_ttl: Option<u8>,
    /// Once packets came at a lower TTL too: those at the highest, oldest
    /// first, each until its router's copy comes.
    awaiting_copy: Option<VecDeque<Seen>>,
}

impl Recent {
    /// Whether `segment` repeats a packet remembered here, and how; else remembers it.
    pub fn repeats(&mut self, segment: &Segment) -> Option<Repeat> {
        let print = Print::of(segment);
        let seen = Seen {
            print,
            at_ns: segment.timestamp_ns,
            ttl: segment.ttl,
            peer_sent_since: false,
        };
        if let Some(ttl_step) = self.forwarded_copy(seen) {
            return Some(Repeat::ForwardedAgain { ttl_step });
        }
        if self.recorded_again(seen) {
            return Some(Repeat::RecordedTwice);
        }
        self.remember(seen);
        None
    }

    /// The peer sent a packet: a resend may answer it from now on.
    pub fn peer_sent(&mut self) {
        for seen in self.seen.iter_mut().flatten() {
            seen.peer_sent_since = true;
        }
    }

    /// How much lower the TTL of `packet` is than that of the packet it
    /// copies, when it is a router's copy of one.
    fn forwarded_copy(&mut self, packet: Seen) -> Option<u8> {
        let highest = *self.highest_ttl.get_or_insert(packet.ttl);
        if packet.ttl >= highest {
            self.highest_ttl = Some(packet.ttl);
            return None;
        }
        let ring = &self.seen;
        let awaiting = self.awaiting_copy.get_or_insert_with(|| {
            let mut ring: Vec<Seen> = ring.iter().flatten().copied().collect();
            ring.sort_by_key(|seen| seen.at_ns);
            ring.into_iter()
                .filter(|seen| seen.ttl == highest)
                .collect()
        });
        let oldest_ns = packet.at_ns.saturating_sub(FORWARDED_WITHIN_NS);
        while awaiting.front().is_some_and(|seen| seen.at_ns < oldest_ns) {
            awaiting.pop_front();
        }
        let original = awaiting
            .iter()
            .position(|seen| seen.print == packet.print && seen.ttl > packet.ttl)?;
        let original = awaiting.remove(original)?;
        Some(original.ttl - packet.ttl)
    }

    /// True when `packet` is a copy recorded again at once (see the module's
    /// first paragraphs).
    fn recorded_again(&mut self, packet: Seen) -> bool {
        let print = packet.print;
        if !print.tells_sendings_apart() {
            return false;
        }
        let (mut soon_after, mut soon_after_alone) = (false, false);
        for seen in self.seen.iter().flatten() {
            if seen.print != print {
                self.ids_repeat |= print.ip_id.is_some() && seen.print.ip_id == print.ip_id;
            } else if packet.at_ns - seen.at_ns <= COPY_WITHIN_NS {
                soon_after = true;
                soon_after_alone |= !seen.peer_sent_since;
            }
        }
        let numbered = print.ip_id.is_some() && !self.ids_repeat;
        let stamped = print.timestamp.is_some() && (!print.bare_ack() || self.recorded_twice);
        let told = soon_after && numbered;
        self.recorded_twice |= told || (soon_after_alone && stamped && !print.bare_ack());
        told || (soon_after_alone && stamped)
    }

    fn remember(&mut self, seen: Seen) {
        self.seen[self.next] = Some(seen);
        self.next = (self.next + 1) % REMEMBERED;
        let Some(awaiting) = self.awaiting_copy.as_mut() else {
            return;
        };
        if Some(seen.ttl) == self.highest_ttl {
            if awaiting.len() == AWAITING_COPY_AT_MOST {
                awaiting.pop_front();
            }
            awaiting.push_back(seen);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use decode::{Endpoint, Flags, Options};

    fn segment(ip_id: Option<u16>, tsval: Option<u32>) -> Segment {
        let endpoint = |port| Endpoint {
            ip: [10, 0, 0, 1].into(),
            port,
        };
        Segment {
            frame: 1,
            source: 0,
            timestamp_ns: 0,
            src: endpoint(40000),
            dst: endpoint(80),
            seq: 1000,
            ack: 1,
            flags: Flags(Flags::ACK),
            window: 512,
            payload_len: 1448,
            wire_len: 1514,
            options: Options {
                timestamps: tsval.map(|tsval| (tsval, 7)),
                ..Options::default()
            },
            captured_payload: Default::default(),
            ip_id,
            ttl: 64,
        }
    }

    fn bare_ack(tsval: u32) -> Segment {
        Segment {
            payload_len: 0,
            ..segment(None, Some(tsval))
        }
    }

    fn forwarded(original: &Segment, after_ns: i64) -> Segment {
        Segment {
            timestamp_ns: original.timestamp_ns + after_ns,
            ttl: original.ttl - 1,
            ..*original
        }
    }

    #[test]
    fn the_same_ip_id_again_is_a_copy_even_after_the_peer_sent() {
        let mut recent = Recent::default();
        assert_eq!(recent.repeats(&segment(Some(5), None)), None);
        recent.peer_sent();
        assert_eq!(
            recent.repeats(&segment(Some(5), None)),
            Some(Repeat::RecordedTwice)
        );
        assert_eq!(
            recent.repeats(&segment(Some(6), None)),
            None,
            "a resend numbered anew"
        );
    }

    #[test]
    fn the_same_timestamp_again_is_a_copy_only_if_the_peer_sent_nothing_between() {
        let mut recent = Recent::default();
        assert_eq!(recent.repeats(&segment(None, Some(90))), None);
        assert_eq!(
            recent.repeats(&segment(None, Some(90))),
            Some(Repeat::RecordedTwice)
        );
        recent.peer_sent();
        assert_eq!(
            recent.repeats(&segment(None, Some(90))),
            None,
            "a resend asked for"
        );
    }

    #[test]
    fn the_same_packet_a_timer_could_have_resent_is_no_copy() {
        let mut recent = Recent::default();
        assert_eq!(recent.repeats(&segment(Some(5), Some(90))), None);
        let mut later = segment(Some(5), Some(90));
        later.timestamp_ns += 5 * COPY_WITHIN_NS;
        assert_eq!(recent.repeats(&later), None);
    }

    #[test]
    fn a_sender_that_gives_different_packets_one_ip_id_is_not_trusted_by_it() {
        let mut recent = Recent::default();
        let mut next = segment(Some(5), None);
        next.seq += 1448;
        assert_eq!(recent.repeats(&segment(Some(5), None)), None);
        assert_eq!(recent.repeats(&next), None);
        assert_eq!(
            recent.repeats(&next),
            None,
            "a duplicate ACK or a resend, not a copy"
        );
    }

    #[test]
    fn a_packet_without_an_ip_id_or_a_timestamp_is_never_recorded_twice() {
        let mut recent = Recent::default();
        assert_eq!(recent.repeats(&segment(Some(0), None)), None);
        assert_eq!(recent.repeats(&segment(Some(0), None)), None);
        assert_eq!(recent.repeats(&segment(None, None)), None);
    }

    #[test]
    fn bare_acks_alike_without_an_ip_id_are_duplicate_acks_until_copies_show_otherwise() {
        let mut recent = Recent::default();
        assert_eq!(recent.repeats(&bare_ack(90)), None);
        assert_eq!(recent.repeats(&bare_ack(90)), None, "a duplicate ACK");
        assert_eq!(recent.repeats(&segment(None, Some(91))), None);
        assert_eq!(
            recent.repeats(&segment(None, Some(91))),
            Some(Repeat::RecordedTwice)
        );
        assert_eq!(recent.repeats(&bare_ack(92)), None);
        assert_eq!(
            recent.repeats(&bare_ack(92)),
            Some(Repeat::RecordedTwice),
            "the capture records this direction twice"
        );
    }

    #[test]
    fn a_packet_again_one_hop_on_is_a_routers_copy_whatever_tells_it() {
        let mut recent = Recent::default();
        let first = segment(None, None);
        let mut second = segment(None, None);
        second.seq += 1448;
        second.timestamp_ns += 1_000_000;
        assert_eq!(recent.repeats(&first), None);
        assert_eq!(recent.repeats(&second), None);
        let copy = Some(Repeat::ForwardedAgain { ttl_step: 1 });
        assert_eq!(recent.repeats(&forwarded(&first, 4_000_000)), copy);
        assert_eq!(recent.repeats(&forwarded(&second, 4_000_000)), copy);
        assert_eq!(
            recent.repeats(&forwarded(&second, 5_000_000)),
            None,
            "each original is copied once"
        );
    }

    #[test]
    fn a_packet_at_a_lower_ttl_long_after_its_like_is_no_routers_copy() {
        let mut recent = Recent::default();
        let first = segment(Some(5), None);
        assert_eq!(recent.repeats(&first), None);
        assert_eq!(
            recent.repeats(&forwarded(&first, 2 * FORWARDED_WITHIN_NS)),
            None
        );
    }

    #[test]
    fn once_copies_come_the_originals_are_remembered_until_theirs() {
        let mut recent = Recent::default();
        let packets: Vec<Segment> = (0..40)
            .map(|index| {
                let mut packet = segment(Some(100 + index), None);
                packet.seq += 1448 * u32::from(index);
                packet.timestamp_ns = i64::from(index) * 100_000;
                packet
            })
            .collect();
        let copy = Some(Repeat::ForwardedAgain { ttl_step: 1 });
        assert_eq!(recent.repeats(&packets[0]), None);
        assert_eq!(recent.repeats(&forwarded(&packets[0], 50_000)), copy);
        let mut copies = 0;
        for (index, packet) in packets.iter().enumerate().skip(1) {
            assert_eq!(recent.repeats(packet), None);
            // Each copy comes 3 ms (30 packets) after its original.
            if let Some(original) = index.checked_sub(30).filter(|&at| at > 0) {
                let again = recent.repeats(&forwarded(&packets[original], 3_000_000));
                copies += u32::from(again == copy);
            }
        }
        assert_eq!(copies, 9);
    }
}
