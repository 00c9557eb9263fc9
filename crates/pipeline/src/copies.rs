//! One packet seen at two capture points is one packet.
//!
//! Files captured at both ends of a link hold the same packets twice, a few
//! milliseconds apart. Merged as they are, each copy would look like a
//! retransmission. A packet is known by its addresses, IP ID, sequence and
//! acknowledgement numbers, payload length and flags; a frame that another
//! file has already shown as often as this file now has is a copy, and is
//! left out. Frames repeated within one file are the sender's own
//! retransmissions and always kept.

use std::collections::VecDeque;

use decode::{Endpoint, Segment};
use rustc_hash::FxHashMap;

/// How long a packet is remembered, in capture time: far longer than any
/// delay between two capture points of one path.
const REMEMBER_NS: i64 = 10_000_000_000;
/// The most packets remembered at once, whatever the packet rate.
const REMEMBER_AT_MOST: usize = 1 << 20;

/// What tells one packet from another, whichever point saw it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct PacketKey {
    src: Endpoint,
    dst: Endpoint,
    ip_id: Option<u16>,
    seq: u32,
    ack: u32,
    payload_len: u32,
    flags: u8,
}

impl PacketKey {
    fn of(segment: &Segment) -> Self {
        PacketKey {
            src: segment.src,
            dst: segment.dst,
            ip_id: segment.ip_id,
            seq: segment.seq,
            ack: segment.ack,
            payload_len: segment.payload_len,
            flags: segment.flags.0,
        }
    }
}

/// Recent packets and how often each file has shown them.
#[derive(Default)]
pub struct CopyFilter {
    /// How many times each packet has been let through: the most any one file showed it.
    kept: FxHashMap<PacketKey, u32>,
    /// How many times each file has shown each packet.
    shown: FxHashMap<(PacketKey, usize), u32>,
    /// Every sighting, oldest first, to forget them in time.
    sightings: VecDeque<(i64, PacketKey, usize)>,
}

impl CopyFilter {
    /// True when `segment` is a copy of a packet another file already showed.
    pub fn is_copy(&mut self, segment: &Segment) -> bool {
        self.forget_before(segment.timestamp_ns.saturating_sub(REMEMBER_NS));
        let key = PacketKey::of(segment);
        let shown = self.shown.entry((key, segment.source)).or_default();
        *shown += 1;
        let times_shown = *shown;
        self.sightings
            .push_back((segment.timestamp_ns, key, segment.source));
        let kept = self.kept.entry(key).or_default();
        if times_shown <= *kept {
            return true;
        }
        *kept = times_shown;
        false
    }

    fn forget_before(&mut self, oldest_ns: i64) {
        while let Some(&(timestamp_ns, key, source)) = self.sightings.front() {
            if timestamp_ns >= oldest_ns && self.sightings.len() < REMEMBER_AT_MOST {
                break;
            }
            self.sightings.pop_front();
            self.shown.remove(&(key, source));
            self.kept.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CopyFilter;
    use decode::{Endpoint, Flags, Segment};

    fn segment(source: usize, timestamp_ns: i64, ip_id: u16, seq: u32) -> Segment {
        let endpoint = |text: &str| text.parse::<Endpoint>().expect("endpoint");
        Segment {
            frame: 0,
            source,
            timestamp_ns,
            wire_len: 1514,
            src: endpoint("10.0.0.1:40000"),
            dst: endpoint("10.0.0.2:80"),
            seq,
            ack: 1,
            flags: Flags(Flags::ACK),
            window: 512,
            payload_len: 1448,
            options: Default::default(),
            captured_payload: Default::default(),
            ip_id: Some(ip_id),
            ttl: 64,
        }
    }

    #[test]
    fn a_packet_seen_by_a_second_file_is_a_copy() {
        let mut filter = CopyFilter::default();
        assert!(!filter.is_copy(&segment(0, 0, 7, 1000)));
        assert!(filter.is_copy(&segment(1, 2_000_000, 7, 1000)));
    }

    #[test]
    fn a_resend_within_one_file_is_kept() {
        let mut filter = CopyFilter::default();
        assert!(!filter.is_copy(&segment(0, 0, 7, 1000)));
        assert!(!filter.is_copy(&segment(0, 200_000_000, 7, 1000)));
        assert!(filter.is_copy(&segment(1, 201_000_000, 7, 1000)));
        assert!(filter.is_copy(&segment(1, 202_000_000, 7, 1000)));
    }

    #[test]
    fn a_packet_is_forgotten_after_the_window() {
        let mut filter = CopyFilter::default();
        assert!(!filter.is_copy(&segment(0, 0, 7, 1000)));
        assert!(!filter.is_copy(&segment(1, 20_000_000_000, 7, 1000)));
    }
}
