//! Which connection of one capture is which of the other, and which packet
//! is which. Connections are paired by votes of their packets' IP ID, length
//! and flags, each vote carrying the difference of sequence numbers; packets
//! are then matched on IP ID, sequence and acknowledgement numbers (in the
//! first capture's numbering), length and flags. Neither step reads
//! addresses, ports or TTLs, so NAT, sequence-number rewriting and routers
//! between the points do not stop a match.

use std::collections::VecDeque;

use rustc_hash::{FxHashMap, FxHashSet};
use tcp::SeqNumber;

use crate::packets::{Capture, Flow, Packet};

/// Packets of each direction sampled to vote for the counterpart connection.
const VOTERS: usize = 48;

/// One connection seen in both captures.
pub struct FlowPair {
    /// Index of the flow in A's and in B's [`Capture::flows`].
    pub a: usize,
    pub b: usize,
    /// True when B's client is A's server.
    pub reversed: bool,
    /// For each of A's directions, how far B's numbering of its sender's
    /// sequence numbers lies past A's.
    pub seq_offset: [i32; 2],
    /// For each of A's directions, matched packets as (index in A, index in B).
    pub matched: [Vec<(usize, usize)>; 2],
}

impl FlowPair {
    /// B's direction that carries A's direction `direction`.
    pub fn b_direction(&self, direction: usize) -> usize {
        direction ^ usize::from(self.reversed)
    }

    /// A's numbering of the sequence number `seq` sent in A's direction `direction`.
    pub fn seq_in_a(&self, direction: usize, seq: SeqNumber) -> SeqNumber {
        seq - self.seq_offset[direction]
    }
}

/// What identifies a packet before sequence offsets are known.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Identity {
    /// IPv4: the sender's IP ID with the length and flags.
    Id { ip_id: u16, len: u32, flags: u8 },
    /// IPv6 has no IP ID, and stacks that send every packet with IP ID 0
    /// give none that tells packets apart: the numbers themselves, assumed
    /// not rewritten.
    Numbers {
        seq: SeqNumber,
        ack: SeqNumber,
        len: u32,
        flags: u8,
    },
}

impl Identity {
    fn of(packet: &Packet) -> Self {
        let (len, flags) = (packet.payload_len, packet.flags.0);
        match packet.ip_id.filter(|&ip_id| ip_id != 0) {
            Some(ip_id) => Identity::Id { ip_id, len, flags },
            None => Identity::Numbers {
                seq: packet.seq,
                ack: packet.ack,
                len,
                flags,
            },
        }
    }
}

/// Where a packet of B lies: flow, direction, index in B's packets.
type Place = (usize, usize, usize);

/// Pairs every connection of `a` with its counterpart in `b`, if it has one,
/// and matches their packets.
pub fn pair(a: &Capture, b: &Capture) -> Vec<FlowPair> {
    let index = identity_index(b);
    let mut claimed = FxHashSet::default();
    let mut pairs = Vec::new();
    for (a_flow, flow) in a.flows.iter().enumerate() {
        let Some((b_flow, reversed, seq_offset)) = counterpart((a, b), flow, &index, &claimed)
        else {
            continue;
        };
        claimed.insert(b_flow);
        let mut pair = FlowPair {
            a: a_flow,
            b: b_flow,
            reversed,
            seq_offset,
            matched: [Vec::new(), Vec::new()],
        };
        pair.matched = [0, 1].map(|direction| match_packets(a, b, &pair, direction));
        pairs.push(pair);
    }
    pairs
}

fn identity_index(capture: &Capture) -> FxHashMap<Identity, Vec<Place>> {
    let mut index: FxHashMap<Identity, Vec<Place>> = FxHashMap::default();
    for (flow_index, flow) in capture.flows.iter().enumerate() {
        for (direction, packets) in flow.directions.iter().enumerate() {
            for &packet in packets {
                let identity = Identity::of(&capture.packets[packet]);
                index
                    .entry(identity)
                    .or_default()
                    .push((flow_index, direction, packet));
            }
        }
    }
    index
}

/// Offset votes for one candidate counterpart, per direction of A.
#[derive(Default)]
struct Tally {
    offsets: [FxHashMap<i32, u32>; 2],
}

impl Tally {
    /// `a_packet`, sent in A's direction `direction`, may be `b_packet`: its
    /// sequence number votes for that direction's offset, its
    /// acknowledgement number for the other's.
    fn vote(&mut self, direction: usize, a_packet: &Packet, b_packet: &Packet) {
        *self.offsets[direction]
            .entry(b_packet.seq - a_packet.seq)
            .or_default() += 1;
        if a_packet.flags.ack() {
            *self.offsets[1 - direction]
                .entry(b_packet.ack - a_packet.ack)
                .or_default() += 1;
        }
    }

    /// The likeliest offset of each direction and how many votes the two got.
    fn verdict(&self) -> (u32, [i32; 2]) {
        let best = |votes: &FxHashMap<i32, u32>| {
            votes
                .iter()
                .max_by_key(|(offset, count)| {
                    (**count, std::cmp::Reverse(offset.unsigned_abs()), **offset)
                })
                .map_or((0, 0), |(offset, count)| (*count, *offset))
        };
        let [(count_0, offset_0), (count_1, offset_1)] =
            [best(&self.offsets[0]), best(&self.offsets[1])];
        (count_0 + count_1, [offset_0, offset_1])
    }
}

/// The unclaimed flow of B most of `flow`'s sampled packets point to, with
/// its orientation and sequence offsets; None when too few agree.
fn counterpart(
    (a, b): (&Capture, &Capture),
    flow: &Flow,
    index: &FxHashMap<Identity, Vec<Place>>,
    claimed: &FxHashSet<usize>,
) -> Option<(usize, bool, [i32; 2])> {
    let mut tallies: FxHashMap<(usize, bool), Tally> = FxHashMap::default();
    let mut voters = 0;
    for (direction, packets) in flow.directions.iter().enumerate() {
        let step = packets.len().div_ceil(VOTERS).max(1);
        for &voter in packets.iter().step_by(step) {
            voters += 1;
            let packet = &a.packets[voter];
            let candidates = index
                .get(&Identity::of(packet))
                .map_or(&[][..], Vec::as_slice);
            for &(b_flow, b_direction, b_packet) in candidates {
                if claimed.contains(&b_flow) {
                    continue;
                }
                let tally = tallies
                    .entry((b_flow, b_direction != direction))
                    .or_default();
                tally.vote(direction, packet, &b.packets[b_packet]);
            }
        }
    }
    let ((b_flow, reversed), (votes, offsets)) = tallies
        .into_iter()
        .map(|(candidate, tally)| (candidate, tally.verdict()))
        .max_by_key(|&((b_flow, _), (votes, _))| (votes, std::cmp::Reverse(b_flow)))?;
    // A sampled packet casts up to two votes (sequence and acknowledgement):
    // at least half of them must agree.
    let agree = votes >= voters;
    agree.then_some((b_flow, reversed, offsets))
}

/// Matches the packets A and B saw in A's direction `direction`, in order:
/// the n-th copy in A of a packet goes with the n-th copy in B.
fn match_packets(
    a: &Capture,
    b: &Capture,
    pair: &FlowPair,
    direction: usize,
) -> Vec<(usize, usize)> {
    let numbers_in_a = |packet: &Packet| {
        let ack = if packet.flags.ack() {
            packet.ack - pair.seq_offset[1 - direction]
        } else {
            packet.ack
        };
        (
            packet.ip_id,
            pair.seq_in_a(direction, packet.seq),
            ack,
            packet.payload_len,
            packet.flags.0,
        )
    };
    let mut in_b: FxHashMap<_, VecDeque<usize>> = FxHashMap::default();
    for &index in &b.flows[pair.b].directions[pair.b_direction(direction)] {
        in_b.entry(numbers_in_a(&b.packets[index]))
            .or_default()
            .push_back(index);
    }
    let a_numbers = |packet: &Packet| {
        (
            packet.ip_id,
            packet.seq,
            packet.ack,
            packet.payload_len,
            packet.flags.0,
        )
    };
    a.flows[pair.a].directions[direction]
        .iter()
        .filter_map(|&index| {
            let copies = in_b.get_mut(&a_numbers(&a.packets[index]))?;
            copies.pop_front().map(|b_index| (index, b_index))
        })
        .collect()
}
