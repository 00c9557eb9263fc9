//! `compare`: the same traffic captured at two points.
//!
//! Packets are matched across the captures (see [`crate::pairing`]); their
//! times give the clock offset and the delay between the points each way
//! (see [`crate::timing`]); those seen at one point only tell where packets
//! were lost and which capture dropped some (see [`crate::losses`]). Which
//! point is nearer which host follows from which saw a host's packets first
//! and with the higher TTL.

use std::collections::BTreeMap;
use std::net::IpAddr;

use capture::CaptureError;
use serde::Serialize;

use crate::losses::{Direction, Losses};
use crate::packets::{self, Capture};
use crate::pairing::{self, FlowPair};
use crate::timing::{Delay, Transits};

/// At most this one-way delay between the points, and no router between
/// them, and the two captures are taken to be of one segment.
const SAME_SEGMENT_NS: f64 = 50_000.0;

/// What two captures of the same traffic say about the path between them.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub a: Point,
    pub b: Point,
    /// Connections found in both captures.
    pub connections_in_both: usize,
    /// Connections in both whose addresses, ports or sequence numbers differ
    /// between the points: something between them rewrites packets (NAT).
    pub connections_rewritten: usize,
    pub packets_matched: usize,
    /// B's clock minus A's, in milliseconds.
    pub clock_offset_ms: f64,
    /// Packets that pass A first, on their way to B.
    pub a_to_b: Way,
    /// Packets that pass B first, on their way to A.
    pub b_to_a: Way,
    /// Hosts whose packets reach A first: A is nearer them.
    pub nearer_a: Vec<IpAddr>,
    /// Hosts whose packets reach B first (as B sees their addresses).
    pub nearer_b: Vec<IpAddr>,
    /// Whether every packet matched with Ethernet headers at both points had
    /// the same source MAC there (None when a capture has no Ethernet headers).
    pub source_macs_agree: Option<bool>,
    /// Both files hold the same packets at the same time with the same TTLs
    /// (and source MACs, where captured):
    /// they were captured on one segment, not at two points of a path.
    pub same_segment: bool,
}

/// One capture file.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub path: String,
    pub frames: u64,
    pub tcp_packets: usize,
    pub connections: usize,
}

/// The packets going one way between the points.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Way {
    pub packets_matched: usize,
    /// One-way delay between the points, with the clock offset taken out.
    pub delay: Option<Delay>,
    /// Routers between the points: the median drop in TTL.
    pub hops: Option<u8>,
    pub losses: Losses,
}

/// Reads both files and compares them.
pub fn compare(a_path: &str, b_path: &str) -> Result<Comparison, CaptureError> {
    let a = packets::read(a_path)?;
    let b = packets::read(b_path)?;
    Ok(compare_captures(&a, &b))
}

/// A flow pair's direction that runs from A to B, by the median time its
/// packets took; None when a direction has no matched packets.
fn direction_from_a(a: &Capture, b: &Capture, pair: &FlowPair) -> Option<usize> {
    let median_transit = |direction: usize| {
        let mut transits: Vec<i64> = pair.matched[direction]
            .iter()
            .map(|&(ia, ib)| b.packets[ib].timestamp_ns - a.packets[ia].timestamp_ns)
            .collect();
        transits.sort_unstable();
        transits.get(transits.len() / 2).copied()
    };
    let (zero, one) = (median_transit(0)?, median_transit(1)?);
    Some(if zero >= one { 0 } else { 1 })
}

pub fn compare_captures(a: &Capture, b: &Capture) -> Comparison {
    let pairs = pairing::pair(a, b);
    let oriented: Vec<(&FlowPair, usize)> = pairs
        .iter()
        .filter_map(|pair| Some((pair, direction_from_a(a, b, pair)?)))
        .collect();
    let mut transits = Transits::default();
    let mut hops: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    let mut nearer: [BTreeMap<IpAddr, usize>; 2] = [BTreeMap::new(), BTreeMap::new()];
    for &(pair, forth) in &oriented {
        for (way, direction) in [(0, forth), (1, 1 - forth)] {
            for &(ia, ib) in &pair.matched[direction] {
                let (pa, pb) = (&a.packets[ia], &b.packets[ib]);
                let (transit, ttl_drop) = if way == 0 {
                    (
                        pb.timestamp_ns - pa.timestamp_ns,
                        pa.ttl.wrapping_sub(pb.ttl),
                    )
                } else {
                    (
                        pa.timestamp_ns - pb.timestamp_ns,
                        pb.ttl.wrapping_sub(pa.ttl),
                    )
                };
                let samples = if way == 0 {
                    &mut transits.a_to_b
                } else {
                    &mut transits.b_to_a
                };
                samples.push(transit);
                hops[way].push(ttl_drop);
            }
        }
        let (first_a, first_b) = (&a.flows[pair.a], &b.flows[pair.b]);
        let sender_a = if forth == 0 {
            first_a.client
        } else {
            first_a.server
        };
        let b_forth = pair.b_direction(1 - forth);
        let sender_b = if b_forth == 0 {
            first_b.client
        } else {
            first_b.server
        };
        *nearer[0].entry(sender_a.ip).or_default() += 1;
        *nearer[1].entry(sender_b.ip).or_default() += 1;
    }
    let clock_offset_ns = transits.clock_offset_ns();
    let (delay_a_to_b, delay_b_to_a) = transits.delays();
    let both_recording = both_recording(a, b, clock_offset_ns, &transits);
    let mut losses = [Losses::default(), Losses::default()];
    for &(pair, forth) in &oriented {
        for (way, direction) in [(0, forth), (1, 1 - forth)] {
            let one_way = Direction {
                a,
                b,
                pair,
                direction,
                a_is_upstream: way == 0,
                clock_offset_ns,
                both_recording: both_recording.clone(),
            };
            losses[way].add(&one_way.losses());
        }
    }
    let [hops_a_to_b, hops_b_to_a] = hops.map(|mut drops| median(&mut drops));
    let [losses_a_to_b, losses_b_to_a] = losses;
    let a_to_b = Way {
        packets_matched: transits.a_to_b.len(),
        delay: delay_a_to_b,
        hops: hops_a_to_b,
        losses: losses_a_to_b,
    };
    let b_to_a = Way {
        packets_matched: transits.b_to_a.len(),
        delay: delay_b_to_a,
        hops: hops_b_to_a,
        losses: losses_b_to_a,
    };
    let source_macs_agree = source_macs_agree(a, b, &pairs);
    let same_segment = !oriented.is_empty()
        && source_macs_agree != Some(false)
        && [&a_to_b, &b_to_a].iter().all(|way| on_one_segment(way));
    let [nearer_a, nearer_b] = nearer.map(most_frequent_first);
    Comparison {
        a: point(a),
        b: point(b),
        connections_in_both: pairs.len(),
        connections_rewritten: pairs.iter().filter(|pair| rewritten(a, b, pair)).count(),
        packets_matched: pairs
            .iter()
            .map(|p| p.matched[0].len() + p.matched[1].len())
            .sum(),
        clock_offset_ms: clock_offset_ns as f64 / 1e6,
        a_to_b,
        b_to_a,
        nearer_a,
        nearer_b,
        source_macs_agree,
        same_segment,
    }
}

fn point(capture: &Capture) -> Point {
    Point {
        path: capture.path.clone(),
        frames: capture.frames,
        tcp_packets: capture.packets.len(),
        connections: capture.flows.len(),
    }
}

/// The span on A's clock both captures recorded, narrowed at each end by
/// the longest transit, so that a packet on its way at either end is not
/// taken for one missing.
fn both_recording(
    a: &Capture,
    b: &Capture,
    offset_ns: i64,
    transits: &Transits,
) -> Option<std::ops::RangeInclusive<i64>> {
    let longest = transits
        .a_to_b
        .iter()
        .chain(&transits.b_to_a)
        .map(|t| t.abs())
        .max()
        .unwrap_or(0);
    let margin = longest.saturating_add(offset_ns.abs());
    let start = a.first_ns().max(b.first_ns().map(|t| t - offset_ns));
    let end = a.last_ns().min(b.last_ns().map(|t| t - offset_ns));
    Some(start?.saturating_add(margin)..=end?.saturating_sub(margin))
}

fn source_macs_agree(a: &Capture, b: &Capture, pairs: &[FlowPair]) -> Option<bool> {
    let mut compared = pairs
        .iter()
        .flat_map(|pair| pair.matched.iter().flatten())
        .filter_map(|&(ia, ib)| Some((a.packets[ia].src_mac?, b.packets[ib].src_mac?)))
        .peekable();
    compared.peek()?;
    Some(compared.all(|(mac_a, mac_b)| mac_a == mac_b))
}

fn on_one_segment(way: &Way) -> bool {
    let close = way
        .delay
        .as_ref()
        .is_none_or(|delay| delay.p50_ms.abs() * 1e6 <= SAME_SEGMENT_NS);
    close && way.hops.is_none_or(|hops| hops == 0)
}

/// Whether the connection's addresses, ports or sequence numbers differ between the points.
fn rewritten(a: &Capture, b: &Capture, pair: &FlowPair) -> bool {
    let (flow_a, flow_b) = (&a.flows[pair.a], &b.flows[pair.b]);
    let (client_b, server_b) = if pair.reversed {
        (flow_b.server, flow_b.client)
    } else {
        (flow_b.client, flow_b.server)
    };
    client_b != flow_a.client || server_b != flow_a.server || pair.seq_offset != [0, 0]
}

fn median(values: &mut [u8]) -> Option<u8> {
    values.sort_unstable();
    values.get(values.len() / 2).copied()
}

fn most_frequent_first(counts: BTreeMap<IpAddr, usize>) -> Vec<IpAddr> {
    let mut hosts: Vec<(IpAddr, usize)> = counts.into_iter().collect();
    hosts.sort_by_key(|&(host, count)| (std::cmp::Reverse(count), host));
    hosts.into_iter().map(|(host, _)| host).collect()
}
