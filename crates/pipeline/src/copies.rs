//! One packet seen at two capture points is one packet.
//!
//! Files captured at both ends of a link hold the same packets twice, a few
//! milliseconds apart. Merged as they are, each copy would look like a
//! retransmission. What survives a box between the points is matched, not
//! what it may rewrite: a packet is known by its connection's addresses and
//! ports, its payload's length and first bytes, its flags and when it came
//! (the oldest of the packets alike is the one a copy matches). A
//! firewall may shift every sequence number of a connection by one amount
//! (randomising initial sequence numbers), and many stacks zero the IP ID
//! (IPv6 has none): so each file's numbering of each direction of a
//! connection is learned, as the difference from the first file that showed
//! it, settled by the connection's SYN or by the votes of a few packets, and
//! packets are then matched by their numbers in that first file's terms. A
//! frame that matches a packet another file already showed, and this file
//! has not, is a copy and is left out. Frames repeated within one file are
//! the sender's own retransmissions and always kept. A connection two files
//! both hold whose numbering could not be learned is counted: its copies
//! may have been analysed twice.

use std::collections::VecDeque;
use std::hash::Hasher;

use decode::{Endpoint, Flags, Segment};
use rustc_hash::{FxHashMap, FxHasher};
use tcp::SeqNumber;

/// How long a packet is remembered, in capture time: far longer than any
/// delay between two capture points of one path.
const REMEMBER_NS: i64 = 10_000_000_000;
/// The most packets remembered at once, whatever the packet rate.
const REMEMBER_AT_MOST: usize = 1 << 20;
/// Packets alike read per packet while matching without numbers, the newest first.
const CANDIDATES_AT_MOST: usize = 64;
/// Votes of packets that settle a numbering, when no SYN did.
const VOTES_TO_SETTLE: u32 = 3;
/// Payload bytes that tell packets of one length apart.
const PRINT_BYTES: usize = 16;
/// The flags compared: boxes on the path may rewrite PSH and the ECN bits.
const FLAGS_COMPARED: u8 = Flags::SYN | Flags::FIN | Flags::RST | Flags::ACK;

/// The two endpoints in a fixed order, so both directions find the same entry.
type FlowKey = (Endpoint, Endpoint);

/// What matching the files' packets found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, record::Wire)]
pub struct Matched {
    /// Frames another file had already captured, left out.
    pub copies: u64,
    /// Connections a second file showed with their sequence numbers
    /// shifted: a box between the capture points rewrote them.
    pub renumbered_connections: u64,
    /// Connections two files both hold whose packets could not be matched:
    /// copies among them were analysed as packets of their own.
    pub unmatched_connections: u64,
}

impl Matched {
    pub fn add(&mut self, other: &Matched) {
        self.copies += other.copies;
        self.renumbered_connections += other.renumbered_connections;
        self.unmatched_connections += other.unmatched_connections;
    }
}

/// One file's numbering of one connection.
#[derive(Debug)]
struct Numbering {
    source: usize,
    /// By direction (0 from the lower endpoint): how far this file's
    /// sequence numbers lie past the first file's; None until learned.
    offset: [Option<i32>; 2],
    /// By direction: offsets and the votes each got, while unknown.
    votes: [Vec<(i32, u32)>; 2],
    /// By direction: a packet went unmatched while the numbering was
    /// unknown and another file's packets of that direction were remembered.
    unmatched: [bool; 2],
}

impl Numbering {
    fn new(source: usize, known: bool) -> Self {
        let offset = if known { Some(0) } else { None };
        Numbering {
            source,
            offset: [offset; 2],
            votes: Default::default(),
            unmatched: [false; 2],
        }
    }

    fn is_unmatched(&self) -> bool {
        (0..2).any(|direction| self.unmatched[direction] && self.offset[direction].is_none())
    }
}

/// A connection in the files: how each numbers it.
#[derive(Debug)]
struct Flow {
    key: FlowKey,
    /// The first is the file that showed the connection first, whose
    /// numbers are the reference.
    numberings: Vec<Numbering>,
    /// Its packets remembered.
    remembered: u64,
    renumbered: bool,
}

impl Flow {
    fn numbering(&self, source: usize) -> Option<&Numbering> {
        self.numberings.iter().find(|n| n.source == source)
    }

    fn offset(&self, source: usize, direction: usize) -> Option<i32> {
        self.numbering(source)?.offset[direction]
    }
}

/// A packet remembered, in its own file's numbers.
#[derive(Debug, Clone, Copy)]
struct Kept {
    at_ns: i64,
    flow: u32,
    direction: u8,
    source: usize,
    seq: SeqNumber,
    ack: Option<SeqNumber>,
    len: u32,
    flags: u8,
    print: Option<u64>,
    /// The files that showed it, one bit each (by the file's index modulo 64).
    shown_by: u64,
    /// The next older packet alike in the reference's numbers, and in shape.
    older_numbered: Option<u64>,
    older_shaped: Option<u64>,
    numbered: Option<NumberedKey>,
}

/// Where a packet sits among those alike in the reference's numbers.
type NumberedKey = (u32, u8, SeqNumber, u32, u8);
/// Where a packet sits among those alike in shape: flow, direction, length, flags.
type ShapeKey = (u32, u8, u32, u8);

/// The packet being matched.
#[derive(Debug, Clone, Copy)]
struct Arriving {
    at_ns: i64,
    flow: u32,
    direction: usize,
    source: usize,
    seq: SeqNumber,
    ack: Option<SeqNumber>,
    len: u32,
    flags: u8,
    print: Option<u64>,
}

impl Arriving {
    fn of(segment: &Segment, payload: &[u8], flow: u32) -> Self {
        let flags = segment.flags.0 & FLAGS_COMPARED;
        Arriving {
            at_ns: segment.timestamp_ns,
            flow,
            direction: usize::from(segment.src > segment.dst),
            source: segment.source,
            seq: SeqNumber(segment.seq),
            ack: segment.flags.ack().then_some(SeqNumber(segment.ack)),
            len: segment.payload_len,
            flags,
            print: print_of(segment.payload_len, payload),
        }
    }

    fn shape(&self) -> ShapeKey {
        (self.flow, self.direction as u8, self.len, self.flags)
    }

    fn bit(&self) -> u64 {
        1 << (self.source % 64)
    }
}

/// A hash of the payload's first bytes, when they were captured.
fn print_of(len: u32, payload: &[u8]) -> Option<u64> {
    let wanted = PRINT_BYTES.min(len as usize);
    let bytes = payload.get(..wanted)?;
    let mut hasher = FxHasher::default();
    hasher.write(bytes);
    Some(hasher.finish())
}

fn prints_agree(a: Option<u64>, b: Option<u64>) -> bool {
    a.is_none() || b.is_none() || a == b
}

/// Recent packets of every file, and each file's numbering of each connection.
#[derive(Default)]
pub struct CopyFilter {
    flow_ids: FxHashMap<FlowKey, u32>,
    flows: FxHashMap<u32, Flow>,
    next_flow: u32,
    /// Every packet remembered, oldest first; a packet's id is its place
    /// counted from the first ever remembered.
    kept: VecDeque<Kept>,
    first_id: u64,
    /// The newest packet alike in the reference's numbers, and in shape.
    numbered: FxHashMap<NumberedKey, u64>,
    shaped: FxHashMap<ShapeKey, u64>,
    matched: Matched,
}

impl CopyFilter {
    /// True when `segment`, with its captured payload start `payload`, is a
    /// copy of a packet another file already showed.
    pub fn is_copy(&mut self, segment: &Segment, payload: &[u8]) -> bool {
        self.forget_before(segment.timestamp_ns.saturating_sub(REMEMBER_NS));
        let flow = self.flow_of(segment);
        let packet = Arriving::of(segment, payload, flow);
        let found = self
            .numbered_match(&packet)
            .or_else(|| self.match_alike(&packet));
        if let Some(id) = found {
            let bit = packet.bit();
            if let Some(kept) = self.get_mut(id) {
                kept.shown_by |= bit;
            }
            self.matched.copies += 1;
            return true;
        }
        self.note_unmatched(&packet);
        self.keep(&packet);
        false
    }

    /// What the matching found, counting the connections still remembered.
    pub fn finish(mut self) -> Matched {
        let flows: Vec<u32> = self.flows.keys().copied().collect();
        for flow in flows {
            self.drop_flow(flow);
        }
        self.matched
    }

    /// The connection's id, with this file's numbering of it in place.
    fn flow_of(&mut self, segment: &Segment) -> u32 {
        let key = if segment.src <= segment.dst {
            (segment.src, segment.dst)
        } else {
            (segment.dst, segment.src)
        };
        let next = &mut self.next_flow;
        let id = *self.flow_ids.entry(key).or_insert_with(|| {
            *next = next.wrapping_add(1);
            *next
        });
        let flow = self.flows.entry(id).or_insert_with(|| Flow {
            key,
            numberings: Vec::new(),
            remembered: 0,
            renumbered: false,
        });
        if flow.numbering(segment.source).is_none() {
            let first = flow.numberings.is_empty();
            flow.numberings.push(Numbering::new(segment.source, first));
        }
        id
    }

    fn get(&self, id: u64) -> Option<&Kept> {
        let at = usize::try_from(id.checked_sub(self.first_id)?).ok()?;
        self.kept.get(at)
    }

    fn get_mut(&mut self, id: u64) -> Option<&mut Kept> {
        let at = usize::try_from(id.checked_sub(self.first_id)?).ok()?;
        self.kept.get_mut(at)
    }

    /// `kept`'s sequence number in the reference's terms, and its
    /// acknowledgement number where it has one, when its file's numbering is known.
    fn in_reference(&self, flow: &Flow, kept: &Kept) -> Option<(SeqNumber, Option<SeqNumber>)> {
        let direction = usize::from(kept.direction);
        let seq = kept.seq - flow.offset(kept.source, direction)?;
        let ack = kept.ack.and_then(|ack| {
            let offset = flow.offset(kept.source, 1 - direction)?;
            Some(ack - offset)
        });
        Some((seq, ack))
    }

    /// The arriving packet's numbers in the reference's terms, as far as known.
    fn arriving_in_reference(&self, packet: &Arriving) -> Option<(SeqNumber, Option<SeqNumber>)> {
        let flow = self.flows.get(&packet.flow)?;
        let seq = packet.seq - flow.offset(packet.source, packet.direction)?;
        let ack = packet.ack.and_then(|ack| {
            let offset = flow.offset(packet.source, 1 - packet.direction)?;
            Some(ack - offset)
        });
        Some((seq, ack))
    }

    fn numbered_key(packet: &Arriving, seq: SeqNumber) -> NumberedKey {
        (
            packet.flow,
            packet.direction as u8,
            seq,
            packet.len,
            packet.flags,
        )
    }

    /// The oldest packet another file showed, and this one has not, with the
    /// arriving packet's numbers in the reference's terms (whatever its
    /// payload: a resend carries the bytes it resends, so only a box that
    /// rewrote them makes them differ).
    fn numbered_match(&self, packet: &Arriving) -> Option<u64> {
        let (seq, ack) = self.arriving_in_reference(packet)?;
        let flow = self.flows.get(&packet.flow)?;
        let mut next = self.numbered.get(&Self::numbered_key(packet, seq)).copied();
        let mut oldest = None;
        while let Some(kept) = next.and_then(|id| self.get(id).map(|kept| (id, kept))) {
            let (id, kept) = kept;
            let acks_agree = match (ack, self.in_reference(flow, kept).and_then(|(_, a)| a)) {
                (Some(ours), Some(theirs)) => ours == theirs,
                _ => true,
            };
            if kept.shown_by & packet.bit() == 0 && acks_agree {
                oldest = Some(id);
            }
            next = kept.older_numbered;
        }
        oldest
    }

    /// Among the latest packets alike in shape and payload, one another
    /// file showed that the arriving packet may be, where one file's
    /// numbering is still unknown: each such pair votes for the offset
    /// between the two, and the packet is matched to the one of the
    /// offset with the most votes (the oldest of them on a tie).
    fn match_alike(&mut self, packet: &Arriving) -> Option<u64> {
        let arriving = self.arriving_in_reference(packet);
        let flow = self.flows.get(&packet.flow)?;
        let mut candidates: Vec<(u64, Pairing)> = Vec::new();
        let mut next = self.shaped.get(&packet.shape()).copied();
        while let Some((id, kept)) = next.and_then(|id| self.get(id).map(|kept| (id, kept))) {
            if candidates.len() == CANDIDATES_AT_MOST {
                break;
            }
            next = kept.older_shaped;
            if kept.shown_by & packet.bit() != 0 {
                continue;
            }
            let pairing = match (arriving, self.in_reference(flow, kept)) {
                (Some((seq, _)), Some((kept_seq, _))) if seq == kept_seq => Pairing::Exact,
                (Some(_), Some(_)) | (None, None) => continue,
                _ if !prints_agree(packet.print, kept.print) => continue,
                (Some((seq, ack)), None) => Pairing::Teaches {
                    source: kept.source,
                    seq: kept.seq - seq,
                    ack: kept.ack.zip(ack).map(|(theirs, ours)| theirs - ours),
                },
                (None, Some((kept_seq, kept_ack))) => Pairing::Learns {
                    seq: packet.seq - kept_seq,
                    ack: packet.ack.zip(kept_ack).map(|(ours, theirs)| ours - theirs),
                },
            };
            candidates.push((id, pairing));
        }
        if let Some(&(id, _)) = candidates.iter().rev().find(|(_, p)| *p == Pairing::Exact) {
            return Some(id);
        }
        let unique_syn = candidates.len() == 1 && packet.flags & Flags::SYN != 0;
        for &(_, pairing) in &candidates {
            self.vote(packet, pairing, unique_syn);
        }
        // Newest first: the last of the best, the oldest, wins a tie.
        candidates
            .iter()
            .max_by_key(|(_, pairing)| self.votes_for(packet, *pairing))
            .map(|&(id, _)| id)
    }

    /// The votes the offset a pairing implies has so far.
    fn votes_for(&self, packet: &Arriving, pairing: Pairing) -> u32 {
        let Some((source, offset)) = pairing.sequence_offset(packet.source) else {
            return 0;
        };
        let Some(flow) = self.flows.get(&packet.flow) else {
            return 0;
        };
        let direction = packet.direction;
        flow.numbering(source).map_or(0, |numbering| {
            if numbering.offset[direction] == Some(offset) {
                return u32::MAX;
            }
            numbering.votes[direction]
                .iter()
                .find(|(candidate, _)| *candidate == offset)
                .map_or(0, |&(_, votes)| votes)
        })
    }

    /// Counts a pairing's votes for the offsets it implies, settling an
    /// offset that has enough (at once, for the one SYN alike).
    fn vote(&mut self, packet: &Arriving, pairing: Pairing, at_once: bool) {
        let Some(flow) = self.flows.get_mut(&packet.flow) else {
            return;
        };
        let Some((source, seq)) = pairing.sequence_offset(packet.source) else {
            return;
        };
        let ack = pairing.ack_offset();
        let Some(numbering) = flow.numberings.iter_mut().find(|n| n.source == source) else {
            return;
        };
        let mut settled = false;
        settled |= count_vote(numbering, packet.direction, seq, at_once);
        if let Some(ack) = ack {
            settled |= count_vote(numbering, 1 - packet.direction, ack, at_once);
        }
        if settled && !flow.renumbered && numbering.offset.iter().flatten().any(|&o| o != 0) {
            flow.renumbered = true;
        }
    }

    /// Notes a packet kept while its file's numbering of its direction is
    /// unknown and another file showed the connection too.
    fn note_unmatched(&mut self, packet: &Arriving) {
        let Some(flow) = self.flows.get_mut(&packet.flow) else {
            return;
        };
        let shared = flow.numberings.len() > 1;
        let Some(numbering) = flow
            .numberings
            .iter_mut()
            .find(|n| n.source == packet.source)
        else {
            return;
        };
        if shared && numbering.offset[packet.direction].is_none() {
            numbering.unmatched[packet.direction] = true;
        }
    }

    fn keep(&mut self, packet: &Arriving) {
        let id = self.first_id + self.kept.len() as u64;
        let numbered = self
            .arriving_in_reference(packet)
            .map(|(seq, _)| Self::numbered_key(packet, seq));
        let older_numbered = numbered.and_then(|key| self.numbered.insert(key, id));
        let older_shaped = self.shaped.insert(packet.shape(), id);
        self.kept.push_back(Kept {
            at_ns: packet.at_ns,
            flow: packet.flow,
            direction: packet.direction as u8,
            source: packet.source,
            seq: packet.seq,
            ack: packet.ack,
            len: packet.len,
            flags: packet.flags,
            print: packet.print,
            shown_by: packet.bit(),
            older_numbered,
            older_shaped,
            numbered,
        });
        if let Some(flow) = self.flows.get_mut(&packet.flow) {
            flow.remembered += 1;
        }
    }

    fn forget_before(&mut self, oldest_ns: i64) {
        while let Some(kept) = self.kept.front().copied() {
            if kept.at_ns >= oldest_ns && self.kept.len() < REMEMBER_AT_MOST {
                break;
            }
            self.kept.pop_front();
            let id = self.first_id;
            self.first_id += 1;
            if let Some(key) = kept.numbered {
                if self.numbered.get(&key) == Some(&id) {
                    self.numbered.remove(&key);
                }
            }
            let shape = (kept.flow, kept.direction, kept.len, kept.flags);
            if self.shaped.get(&shape) == Some(&id) {
                self.shaped.remove(&shape);
            }
            let Some(flow) = self.flows.get_mut(&kept.flow) else {
                continue;
            };
            flow.remembered -= 1;
            if flow.remembered == 0 {
                self.drop_flow(kept.flow);
            }
        }
    }

    /// Forgets a connection, counting what its matching found.
    fn drop_flow(&mut self, id: u32) {
        let Some(flow) = self.flows.remove(&id) else {
            return;
        };
        self.flow_ids.remove(&flow.key);
        self.matched.renumbered_connections += u64::from(flow.renumbered);
        let unmatched = flow.numberings.iter().any(Numbering::is_unmatched);
        self.matched.unmatched_connections += u64::from(unmatched);
    }
}

/// How an arriving packet may be a packet remembered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pairing {
    /// Both numberings are known, and the numbers agree.
    Exact,
    /// The remembered packet's file numbers the connection unknown yet:
    /// the pair says by how much it differs from the reference.
    Teaches {
        source: usize,
        seq: i32,
        ack: Option<i32>,
    },
    /// The arriving packet's file numbers it unknown yet.
    Learns { seq: i32, ack: Option<i32> },
}

impl Pairing {
    /// The file whose numbering the pair tells, and the sequence offset it implies.
    fn sequence_offset(self, arriving_source: usize) -> Option<(usize, i32)> {
        match self {
            Pairing::Exact => None,
            Pairing::Teaches { source, seq, .. } => Some((source, seq)),
            Pairing::Learns { seq, .. } => Some((arriving_source, seq)),
        }
    }

    fn ack_offset(self) -> Option<i32> {
        match self {
            Pairing::Exact => None,
            Pairing::Teaches { ack, .. } | Pairing::Learns { ack, .. } => ack,
        }
    }
}

/// Adds a vote for `offset` to a direction still unknown; true when it settles it.
fn count_vote(numbering: &mut Numbering, direction: usize, offset: i32, at_once: bool) -> bool {
    if numbering.offset[direction].is_some() {
        return false;
    }
    let votes = &mut numbering.votes[direction];
    let count = match votes.iter_mut().find(|(candidate, _)| *candidate == offset) {
        Some((_, count)) => {
            *count += 1;
            *count
        }
        None => {
            votes.push((offset, 1));
            1
        }
    };
    let runner_up = votes
        .iter()
        .filter(|(candidate, _)| *candidate != offset)
        .map(|&(_, count)| count)
        .max()
        .unwrap_or(0);
    if at_once || (count >= VOTES_TO_SETTLE && count >= 2 * runner_up) {
        numbering.offset[direction] = Some(offset);
        numbering.votes[direction] = Vec::new();
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{CopyFilter, Matched};
    use decode::{Endpoint, Flags, Segment};

    /// A segment from the client, as file `source` shows it.
    fn segment(source: usize, timestamp_ns: i64, seq: u32, len: u32) -> Segment {
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
            payload_len: len,
            options: Default::default(),
            captured_payload: Default::default(),
            ip_id: Some(7),
            ttl: 64,
        }
    }

    fn syn(source: usize, timestamp_ns: i64, seq: u32) -> Segment {
        Segment {
            flags: Flags(Flags::SYN),
            ..segment(source, timestamp_ns, seq, 0)
        }
    }

    fn is_copy(filter: &mut CopyFilter, segment: &Segment) -> bool {
        filter.is_copy(segment, &[])
    }

    #[test]
    fn a_packet_seen_by_a_second_file_is_a_copy() {
        let mut filter = CopyFilter::default();
        assert!(!is_copy(&mut filter, &segment(0, 0, 1000, 1448)));
        assert!(is_copy(&mut filter, &segment(1, 2_000_000, 1000, 1448)));
    }

    #[test]
    fn a_resend_within_one_file_is_kept() {
        let mut filter = CopyFilter::default();
        assert!(!is_copy(&mut filter, &segment(0, 0, 1000, 1448)));
        assert!(!is_copy(&mut filter, &segment(0, 200_000_000, 1000, 1448)));
        assert!(is_copy(&mut filter, &segment(1, 201_000_000, 1000, 1448)));
        assert!(is_copy(&mut filter, &segment(1, 202_000_000, 1000, 1448)));
    }

    #[test]
    fn a_packet_is_forgotten_after_the_window() {
        let mut filter = CopyFilter::default();
        assert!(!is_copy(&mut filter, &segment(0, 0, 1000, 1448)));
        assert!(!is_copy(
            &mut filter,
            &segment(1, 20_000_000_000, 1000, 1448)
        ));
    }

    #[test]
    fn a_connection_renumbered_between_the_points_is_matched_from_its_syn() {
        let shift = 0x4000_0000;
        let mut filter = CopyFilter::default();
        assert!(!is_copy(&mut filter, &syn(0, 0, 999)));
        assert!(is_copy(&mut filter, &syn(1, 1_000_000, 999 + shift)));
        assert!(!is_copy(&mut filter, &segment(0, 5_000_000, 1000, 1448)));
        assert!(!is_copy(&mut filter, &segment(0, 5_100_000, 2448, 1448)));
        // The second file's copies, the later first: by their numbers, not their order.
        assert!(is_copy(
            &mut filter,
            &segment(1, 6_000_000, 2448 + shift, 1448)
        ));
        assert!(is_copy(
            &mut filter,
            &segment(1, 6_100_000, 1000 + shift, 1448)
        ));
        let matched = filter.finish();
        assert_eq!(
            matched,
            Matched {
                copies: 3,
                renumbered_connections: 1,
                unmatched_connections: 0,
            }
        );
    }

    #[test]
    fn without_a_syn_the_packets_alike_vote_for_the_numbering() {
        let shift = 0x4000_0000;
        let mut filter = CopyFilter::default();
        for (index, len) in [1448, 300, 1448, 700, 1448].into_iter().enumerate() {
            let seq = 1000 + 2000 * index as u32;
            let at = index as i64 * 1_000_000;
            assert!(!is_copy(&mut filter, &segment(0, at, seq, len)));
            assert!(is_copy(
                &mut filter,
                &segment(1, at + 300_000, seq + shift, len)
            ));
        }
        // Settled: a packet only the second file saw is kept, and its copy is one.
        assert!(!is_copy(
            &mut filter,
            &segment(1, 9_000_000, 11_000 + shift, 1448)
        ));
        assert!(is_copy(&mut filter, &segment(0, 9_100_000, 11_000, 1448)));
        assert_eq!(filter.finish().renumbered_connections, 1);
    }

    #[test]
    fn a_connection_two_files_hold_that_nothing_matches_is_counted() {
        let mut filter = CopyFilter::default();
        assert!(!is_copy(&mut filter, &segment(0, 0, 1000, 1448)));
        assert!(!is_copy(&mut filter, &segment(1, 1_000_000, 5000, 1000)));
        let matched = filter.finish();
        assert_eq!(matched.unmatched_connections, 1);
        assert_eq!(matched.copies, 0);
    }
}
