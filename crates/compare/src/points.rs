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
use crate::packets::{self, Capture, Flow};
use crate::pairing::{self, FlowPair};
use crate::proxy::{self, Proxy};
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
    /// When no packet is in both: the two sides of a proxy that terminates
    /// TCP, if exchanges pair across it.
    pub proxy: Option<Proxy>,
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
    let mut comparison = compare_captures(&a, &b);
    if comparison.packets_matched == 0 {
        comparison.proxy = proxy::through_proxy(a_path, b_path)?;
    }
    Ok(comparison)
}

/// A flow pair's direction that runs from A to B, by the median time its
/// packets took; None when no packet of it was matched.
fn direction_from_a(a: &Capture, b: &Capture, pair: &FlowPair) -> Option<usize> {
    let median_transit = |direction: usize| {
        let mut transits: Vec<i64> = pair.matched[direction]
            .iter()
            .map(|&(ia, ib)| b.packets[ib].timestamp_ns - a.packets[ia].timestamp_ns)
            .collect();
        transits.sort_unstable();
        transits.get(transits.len() / 2).copied()
    };
    match (median_transit(0), median_transit(1)) {
        (Some(zero), Some(one)) => Some(if zero >= one { 0 } else { 1 }),
        // One direction alone: as if the clocks agreed.
        (Some(zero), None) => Some(if zero >= 0 { 0 } else { 1 }),
        (None, Some(one)) => Some(if one >= 0 { 1 } else { 0 }),
        (None, None) => None,
    }
}

/// A connection seen at both points, and which of A's directions runs from A to B.
struct Oriented<'a> {
    pair: &'a FlowPair,
    from_a: usize,
}

/// Index of the way from A to B, and of the way back, in per-way arrays.
const A_TO_B: usize = 0;
const B_TO_A: usize = 1;

impl Oriented<'_> {
    /// Each way with the A direction that runs it.
    fn ways(&self) -> [(usize, usize); 2] {
        [(A_TO_B, self.from_a), (B_TO_A, 1 - self.from_a)]
    }
}

pub fn compare_captures(a: &Capture, b: &Capture) -> Comparison {
    let pairs = pairing::pair(a, b);
    let oriented: Vec<Oriented> = pairs
        .iter()
        .filter_map(|pair| {
            let from_a = direction_from_a(a, b, pair)?;
            Some(Oriented { pair, from_a })
        })
        .collect();
    let (transits, ttl_drops) = transits(a, b, &oriented);
    let clock_offset_ns = transits.clock_offset_ns();
    let delays = transits.delays();
    let span = both_recording(a, b, clock_offset_ns, &delays);
    let [losses_a_to_b, losses_b_to_a] = losses(a, b, &oriented, clock_offset_ns, span);
    let [hops_a_to_b, hops_b_to_a] = ttl_drops.map(|mut drops| median(&mut drops));
    let a_to_b = Way {
        packets_matched: transits.a_to_b.len(),
        delay: delays.0,
        hops: hops_a_to_b,
        losses: losses_a_to_b,
    };
    let b_to_a = Way {
        packets_matched: transits.b_to_a.len(),
        delay: delays.1,
        hops: hops_b_to_a,
        losses: losses_b_to_a,
    };
    let source_macs_agree = source_macs_agree(a, b, &pairs);
    let same_segment = !oriented.is_empty()
        && source_macs_agree != Some(false)
        && [&a_to_b, &b_to_a].iter().all(|way| on_one_segment(way));
    let [nearer_a, nearer_b] = hosts_nearer(a, b, &oriented);
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
        proxy: None,
    }
}

/// Each matched packet's time from one point to the other, and its TTL
/// drop, sorted by the way it went.
fn transits(a: &Capture, b: &Capture, oriented: &[Oriented]) -> (Transits, [Vec<u8>; 2]) {
    let mut transits = Transits::default();
    let mut ttl_drops: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    for connection in oriented {
        for (way, direction) in connection.ways() {
            for &(ia, ib) in &connection.pair.matched[direction] {
                let (at_a, at_b) = (&a.packets[ia], &b.packets[ib]);
                if way == A_TO_B {
                    transits.a_to_b.push(at_b.timestamp_ns - at_a.timestamp_ns);
                    ttl_drops[way].push(at_a.ttl.saturating_sub(at_b.ttl));
                } else {
                    transits.b_to_a.push(at_a.timestamp_ns - at_b.timestamp_ns);
                    ttl_drops[way].push(at_b.ttl.saturating_sub(at_a.ttl));
                }
            }
        }
    }
    (transits, ttl_drops)
}

/// Where the packets going each way were lost or missed, summed over the connections.
fn losses(
    a: &Capture,
    b: &Capture,
    oriented: &[Oriented],
    clock_offset_ns: i64,
    both_recording: Option<std::ops::RangeInclusive<i64>>,
) -> [Losses; 2] {
    let mut losses = [Losses::default(), Losses::default()];
    for connection in oriented {
        for (way, direction) in connection.ways() {
            let one_way = Direction {
                a,
                b,
                pair: connection.pair,
                direction,
                a_is_upstream: way == A_TO_B,
                clock_offset_ns,
                both_recording: both_recording.clone(),
            };
            losses[way].add(&one_way.losses());
        }
    }
    losses
}

/// The hosts whose packets pass A first (as A sees their addresses), and
/// those whose packets pass B first (as B sees them), the most frequent first.
fn hosts_nearer(a: &Capture, b: &Capture, oriented: &[Oriented]) -> [Vec<IpAddr>; 2] {
    let mut nearer: [BTreeMap<IpAddr, usize>; 2] = [BTreeMap::new(), BTreeMap::new()];
    for connection in oriented {
        let pair = connection.pair;
        let sender = |flow: &Flow, direction: usize| {
            if direction == 0 {
                flow.client.ip
            } else {
                flow.server.ip
            }
        };
        let near_a = sender(&a.flows[pair.a], connection.from_a);
        let near_b = sender(&b.flows[pair.b], pair.b_direction(1 - connection.from_a));
        *nearer[A_TO_B].entry(near_a).or_default() += 1;
        *nearer[B_TO_A].entry(near_b).or_default() += 1;
    }
    nearer.map(most_frequent_first)
}

fn point(capture: &Capture) -> Point {
    Point {
        path: capture.path.clone(),
        frames: capture.frames,
        tcp_packets: capture.packets.len(),
        connections: capture.flows.len(),
    }
}

/// The span on A's clock in which a packet seen at one point should have
/// been seen at the other: from when both captures hold packets, to the end
/// of the shorter less the longest delay between the points, so that a
/// packet still on its way when a capture stopped is not taken for one missing.
fn both_recording(
    a: &Capture,
    b: &Capture,
    offset_ns: i64,
    delays: &(Option<Delay>, Option<Delay>),
) -> Option<std::ops::RangeInclusive<i64>> {
    let longest_ms = [&delays.0, &delays.1]
        .into_iter()
        .flatten()
        .map(|delay| delay.max_ms)
        .fold(0.0, f64::max);
    let start = a.first_ns().max(b.first_ns().map(|t| t - offset_ns));
    let end = a.last_ns().min(b.last_ns().map(|t| t - offset_ns));
    Some(start?..=end?.saturating_sub((longest_ms * 1e6) as i64))
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
