//! Patterns across transactions and connections that decide where some
//! ledger parts belong: server stalls at a steady period, loss in periodic
//! bursts, peers that stopped answering, and the tiers and queues found by
//! the structural detectors.

use rustc_hash::FxHashMap;
use timeline::Tick;
use transactions::Part;

use crate::charges::Context;
use crate::rules::{
    DEAD_AFTER_RESENDS, LOSS_BURST_GAP_MS, PATTERN_REPEATS, PERIOD_TOLERANCE, STALL_TIMES_USUAL,
};
use crate::{detectors, median, Inputs};

pub fn context(inputs: &Inputs) -> Context {
    let stalled = stall_pattern(inputs).map_or_else(FxHashMap::default, |pattern| pattern.stalled);
    let saturation = detectors::saturation(inputs);
    let saturated = saturation
        .as_ref()
        .map_or_else(FxHashMap::default, |s| s.queued.iter().copied().collect());
    Context {
        stalled,
        saturation,
        saturated,
        pool: detectors::pool_queueing(inputs),
        loss_bursts: loss_burst_pattern(inputs.ticks).map_or_else(Vec::new, |b| b.spans),
        dead_peers: inputs
            .connections
            .iter()
            .filter(|c| !detectors::black_holed(c))
            .filter(|c| {
                [&c.client_to_server, &c.server_to_client]
                    .iter()
                    .any(|d| d.most_resends >= DEAD_AFTER_RESENDS && d.unacknowledged_at_end > 0)
            })
            .map(|c| c.id)
            .collect(),
        black_holes: inputs
            .connections
            .iter()
            .filter(|c| detectors::black_holed(c))
            .map(|c| c.id)
            .collect(),
        syn_loss_is_path_loss: syn_loss_explained_by_data_loss(inputs),
    }
}

/// Whether the handshakes that had to be retried are no more than the
/// path's loss would explain: within three standard deviations of the count
/// expected if the SYN and the SYN-ACK were each lost as often as the data
/// and FIN segments were (each resent by its sender when lost).
fn syn_loss_explained_by_data_loss(inputs: &Inputs) -> bool {
    let (mut resent, mut data, mut handshakes, mut retried) = (0u64, 0u64, 0u64, 0u64);
    for c in inputs.connections {
        let handshake_resends =
            c.handshake.syn_retries_ns.len() as u64 + u64::from(c.handshake.syn_ack_retries);
        for d in [&c.client_to_server, &c.server_to_client] {
            resent += d.retransmissions.total - d.retransmissions.spurious;
            data += d.data_packets + u64::from(c.close.how == tcp::CloseHow::Fin);
        }
        resent = resent.saturating_sub(handshake_resends);
        if c.handshake.syn_ns.is_some() {
            handshakes += 1;
            let again = !c.handshake.syn_retries_ns.is_empty() || c.handshake.syn_ack_retries > 0;
            retried += u64::from(again);
        }
    }
    if resent == 0 || retried == 0 {
        return false;
    }
    let rate = resent as f64 / data.max(1) as f64;
    let handshake_loss = (2.0 * rate).min(1.0);
    let expected = handshakes as f64 * handshake_loss;
    let deviation = (expected * (1.0 - handshake_loss)).sqrt();
    retried as f64 <= expected + 3.0 * deviation + 1.0
}

/// Server stalls at a steady period.
pub struct StallPattern {
    /// The stalled transactions, by (connection, index), and the usual server time.
    pub stalled: FxHashMap<(u64, u32), f64>,
    pub count: usize,
    pub length_ms: f64,
    pub period_s: f64,
}

/// Answers that took many times the usual server time, grouped into stalls
/// (answers waiting at the same moment are one stall of the server), when
/// the stalls recur at a steady period.
pub fn stall_pattern(inputs: &Inputs) -> Option<StallPattern> {
    let answered: Vec<(&transactions::Transaction, f64)> = inputs
        .transactions
        .iter()
        .filter(|t| t.response_start_ns.is_some())
        .map(|t| (t, t.ledger.get(Part::Server)))
        .filter(|&(_, server)| server > 0.0)
        .collect();
    let usual = median(answered.iter().map(|&(_, server)| server).collect());
    let mut slow: Vec<(i64, i64, &transactions::Transaction)> = answered
        .iter()
        .filter(|&&(_, server)| server >= STALL_TIMES_USUAL * usual)
        .map(|&(t, _)| {
            (
                t.request_end_ns,
                t.response_start_ns.unwrap_or(t.request_end_ns),
                t,
            )
        })
        .collect();
    slow.sort_by_key(|&(from, ..)| from);
    let mut stalls: Vec<(i64, i64)> = Vec::new();
    for &(from, to, _) in &slow {
        match stalls.last_mut() {
            Some((_, end)) if from <= *end => *end = (*end).max(to),
            _ => stalls.push((from, to)),
        }
    }
    let period_s = steady_period(&stalls.iter().map(|&(from, _)| from).collect::<Vec<_>>())?;
    let length_ms = median(
        stalls
            .iter()
            .map(|&(from, to)| (to - from) as f64 / 1e6)
            .collect(),
    );
    Some(StallPattern {
        stalled: slow
            .iter()
            .map(|&(.., t)| ((t.connection, t.index), usual))
            .collect(),
        count: stalls.len(),
        length_ms,
        period_s,
    })
}

/// The steady interval between event times (ns), in seconds, when there are
/// enough events and every interval is within the tolerance of the median.
fn steady_period(starts: &[i64]) -> Option<f64> {
    if starts.len() < PATTERN_REPEATS {
        return None;
    }
    let intervals: Vec<f64> = starts
        .windows(2)
        .map(|pair| (pair[1] - pair[0]) as f64 / 1e9)
        .collect();
    let period = median(intervals.clone());
    let steady = period > 0.0
        && intervals
            .iter()
            .all(|interval| (interval - period).abs() <= PERIOD_TOLERANCE * period);
    steady.then_some(period)
}

/// Loss coming in bursts at a steady period.
pub struct LossBursts {
    pub count: usize,
    pub period_s: f64,
    /// Each burst's start and end, ns.
    pub spans: Vec<(i64, i64)>,
}

/// Ticks with retransmissions or gaps, grouped into bursts apart from each
/// other by quiet stretches, when the bursts cover less than half of their
/// span and start at a steady period.
pub fn loss_burst_pattern(ticks: &[Tick]) -> Option<LossBursts> {
    let tick_ns = match ticks {
        [first, second, ..] => second.start_ns - first.start_ns,
        _ => return None,
    };
    let gap_ns = ((LOSS_BURST_GAP_MS * 1e6) as i64).max(3 * tick_ns);
    let mut spans: Vec<(i64, i64)> = Vec::new();
    for tick in ticks
        .iter()
        .filter(|t| t.retransmissions + t.lost_segments > 0)
    {
        match spans.last_mut() {
            Some((_, end)) if tick.start_ns - *end < gap_ns => *end = tick.start_ns + tick_ns,
            _ => spans.push((tick.start_ns, tick.start_ns + tick_ns)),
        }
    }
    let (first, last) = (spans.first()?.0, spans.last()?.1);
    let covered: i64 = spans.iter().map(|(start, end)| end - start).sum();
    if 2 * covered >= last - first {
        return None;
    }
    let period_s = steady_period(&spans.iter().map(|&(start, _)| start).collect::<Vec<_>>())?;
    Some(LossBursts {
        count: spans.len(),
        period_s,
        spans,
    })
}
