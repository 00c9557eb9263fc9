//! Frames one capture recorded twice.
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
//! copy only when the peer sent nothing in between. A packet with neither
//! (IPv6 without timestamps, an IP ID of 0, or one its sender gives
//! different packets) cannot be told from its resend and is always kept.

use decode::Segment;

/// Packets remembered per direction: copies come within a few frames of
/// their original.
const REMEMBERED: usize = 4;
/// A copy follows its original within this: a switch forwards in
/// microseconds, and the soonest a TCP timer resends (Linux's loss probe,
/// two clock ticks past twice the round trip) is later.
const COPY_WITHIN_NS: i64 = 1_000_000;

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
    /// The packet's print, when something in it changes from one sending to the next.
    fn of(segment: &Segment) -> Option<Print> {
        let ip_id = segment.ip_id.filter(|&id| id != 0);
        let timestamp = segment.options.timestamps.map(|(tsval, _)| tsval);
        if ip_id.is_none() && timestamp.is_none() {
            return None;
        }
        Some(Print {
            ip_id,
            timestamp,
            seq: segment.seq,
            ack: segment.ack,
            len: segment.payload_len,
            flags: segment.flags.0,
            window: segment.window,
        })
    }
}

/// A packet remembered: when it was seen, and whether the peer has sent since.
#[derive(Debug, Clone, Copy)]
struct Seen {
    print: Print,
    at_ns: i64,
    peer_sent_since: bool,
}

/// One direction's latest packets.
#[derive(Debug, Default)]
pub struct Recent {
    seen: [Option<Seen>; REMEMBERED],
    next: usize,
    /// Different packets came with one IP ID: the sender does not number them.
    ids_repeat: bool,
}

impl Recent {
    /// True when `segment` repeats a packet remembered here; else remembers it.
    pub fn repeats(&mut self, segment: &Segment) -> bool {
        let Some(print) = Print::of(segment) else {
            return false;
        };
        let now = segment.timestamp_ns;
        let (mut soon_after, mut soon_after_alone) = (false, false);
        for seen in self.seen.iter().flatten() {
            if seen.print != print {
                self.ids_repeat |= print.ip_id.is_some() && seen.print.ip_id == print.ip_id;
            } else if now - seen.at_ns <= COPY_WITHIN_NS {
                soon_after = true;
                soon_after_alone |= !seen.peer_sent_since;
            }
        }
        let numbered = print.ip_id.is_some() && !self.ids_repeat;
        let stamped = print.timestamp.is_some();
        let copy = (soon_after && numbered) || (soon_after_alone && stamped);
        if !copy {
            self.seen[self.next] = Some(Seen {
                print,
                at_ns: now,
                peer_sent_since: false,
            });
            self.next = (self.next + 1) % REMEMBERED;
        }
        copy
    }

    /// The peer sent a packet: a resend may answer it from now on.
    pub fn peer_sent(&mut self) {
        for seen in self.seen.iter_mut().flatten() {
            seen.peer_sent_since = true;
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

    #[test]
    fn the_same_ip_id_again_is_a_copy_even_after_the_peer_sent() {
        let mut recent = Recent::default();
        assert!(!recent.repeats(&segment(Some(5), None)));
        recent.peer_sent();
        assert!(recent.repeats(&segment(Some(5), None)));
        assert!(
            !recent.repeats(&segment(Some(6), None)),
            "a resend numbered anew"
        );
    }

    #[test]
    fn the_same_timestamp_again_is_a_copy_only_if_the_peer_sent_nothing_between() {
        let mut recent = Recent::default();
        assert!(!recent.repeats(&segment(None, Some(90))));
        assert!(recent.repeats(&segment(None, Some(90))));
        recent.peer_sent();
        assert!(
            !recent.repeats(&segment(None, Some(90))),
            "a resend asked for"
        );
    }

    #[test]
    fn the_same_packet_a_timer_could_have_resent_is_no_copy() {
        let mut recent = Recent::default();
        assert!(!recent.repeats(&segment(Some(5), Some(90))));
        let mut later = segment(Some(5), Some(90));
        later.timestamp_ns += 5 * COPY_WITHIN_NS;
        assert!(!recent.repeats(&later));
    }

    #[test]
    fn a_sender_that_gives_different_packets_one_ip_id_is_not_trusted_by_it() {
        let mut recent = Recent::default();
        let mut next = segment(Some(5), None);
        next.seq += 1448;
        assert!(!recent.repeats(&segment(Some(5), None)));
        assert!(!recent.repeats(&next));
        assert!(
            !recent.repeats(&next),
            "a duplicate ACK or a resend, not a copy"
        );
    }

    #[test]
    fn a_packet_without_an_ip_id_or_a_timestamp_is_never_a_copy() {
        let mut recent = Recent::default();
        assert!(!recent.repeats(&segment(Some(0), None)));
        assert!(!recent.repeats(&segment(Some(0), None)));
        assert!(!recent.repeats(&segment(None, None)));
    }
}
