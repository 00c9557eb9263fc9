//! Packet loss: how much, on which side of the capture point, whether it
//! comes in bursts at a steady period, whether it follows the load, and how
//! much of it waited for retransmission timeouts.

use tcp::{ConnectionSummary, EventKind};
use timeline::Tick;

use super::{finding, rtt_ms};
use crate::{Finding, Inputs};

/// Retransmissions this far apart, at least, belong to separate bursts.
const BURST_GAP_NS: i64 = 100_000_000;
/// Bursts whose starts are this evenly spaced recur at a period.
const PERIOD_TOLERANCE: f64 = 0.2;
/// Fewer resends than this per burst, on average, are single segments sent
/// again (a timeout backing off), not bursts of loss.
const MIN_RESENT_PER_BURST: u64 = 3;
/// Ticks with traffic needed to compare loss with load.
const LOAD_TICKS: usize = 10;

pub fn packet_loss(inputs: &Inputs) -> Option<Finding> {
    let mut resent = 0;
    let mut packets = 0;
    let mut gaps = 0;
    let mut round_trips_ms = 0.0;
    let mut worst: Option<(&ConnectionSummary, u64)> = None;
    for c in inputs.connections {
        // SYNs sent again belong to the setup finding, not to data loss.
        let setup_retries = [
            c.handshake.syn_retries_ns.len() as u64,
            u64::from(c.handshake.syn_ack_retries),
        ];
        for (d, setup) in [&c.client_to_server, &c.server_to_client]
            .into_iter()
            .zip(setup_retries)
        {
            let data_resent = d.retransmissions.total.saturating_sub(setup);
            resent += data_resent;
            packets += d.packets;
            gaps += d.lost_segments;
            round_trips_ms += data_resent as f64 * rtt_ms(c).max(1.0);
            if data_resent > worst.map_or(0, |(_, n)| n) {
                worst = Some((c, data_resent));
            }
        }
    }
    let (connection, _) = worst?;
    let timeouts: u64 = inputs.transactions.iter().map(|t| t.timeout_resends).sum();
    let timeout_wait_ms: f64 = inputs.transactions.iter().map(|t| t.timeout_wait_ms).sum();
    // A resend after a timeout cost the timeout; any other, about a round trip.
    let other_resends = resent.saturating_sub(timeouts);
    let cost = timeout_wait_ms + round_trips_ms * other_resends as f64 / resent as f64;
    let bursts = bursts(inputs.ticks).filter(|b| resent >= MIN_RESENT_PER_BURST * b.count as u64);
    let load = loss_against_load(inputs.ticks);
    let location = if gaps > 0 { "upstream" } else { "downstream" };
    let mut found = finding(
        "packet_loss",
        format!(
            "Packet loss: {resent} {} resent ({:.1}% of {packets}){}{}, lost {location}",
            if resent == 1 { "segment" } else { "segments" },
            100.0 * resent as f64 / packets.max(1) as f64,
            bursts.as_ref().map_or(String::new(), Bursts::phrase),
            if timeouts > 0 {
                format!(
                    ", {timeouts} after a timeout ({:.2} s of waiting)",
                    timeout_wait_ms / 1e3
                )
            } else {
                String::new()
            },
        ),
        cost,
    );
    found.connections = inputs
        .connections
        .iter()
        .filter(|c| {
            c.client_to_server.retransmissions.total + c.server_to_client.retransmissions.total > 0
        })
        .count() as u64;
    found.transactions = inputs
        .transactions
        .iter()
        .filter(|t| t.retransmissions > 0)
        .count() as u64;
    found.example_connection = Some(connection.id);
    found.frames = inputs.evidence.frames(&[
        EventKind::Retransmission,
        EventKind::FastRetransmission,
        EventKind::LostSegment,
    ]);
    found.wireshark_filter =
        "tcp.analysis.retransmission || tcp.analysis.fast_retransmission || tcp.analysis.lost_segment"
            .into();
    found.explanation = format!(
        "Segments were lost {}. A loss costs a round trip when duplicate ACKs trigger a fast \
         retransmission, and a whole retransmission timeout (200 ms or more, doubling each \
         time) when they cannot: {timeouts} of the {resent} resends waited for a timeout, \
         {:.0} ms in all. Each loss also halves the sender's congestion window.{}{}",
        if gaps > 0 {
            "upstream of the capture point (the capture saw the gaps before the resends)"
        } else {
            "downstream of the capture point (the capture saw each segment twice)"
        },
        timeout_wait_ms,
        bursts.as_ref().map_or(String::new(), Bursts::explanation),
        load.map_or(String::new(), load_explanation),
    );
    found.fix = "Find the dropping hop: compare captures taken on both sides of it, and look \
        at interface drops and queue overflows on the path (policers, full buffers, bad links)."
        .into();
    found.what_if = format!("Without the loss about {cost:.0} ms of waiting would go.");
    found.suspected =
        (timeouts == 0).then(|| "the cost counts one round trip per resent segment".to_string());
    Some(found)
}

/// Retransmissions grouped in time.
struct Bursts {
    count: usize,
    /// The steady interval between burst starts, in seconds, when there is one.
    period_s: Option<f64>,
}

impl Bursts {
    fn phrase(&self) -> String {
        match self.period_s {
            Some(period) => format!(" in {} bursts every {period:.2} s", self.count),
            None => format!(" in {} bursts", self.count),
        }
    }

    fn explanation(&self) -> String {
        match self.period_s {
            Some(period) => format!(
                " The losses come in {} bursts, one every {period:.2} s: something on the \
                 path drops at a steady period (a flapping link, a periodic job, a policer's \
                 interval).",
                self.count
            ),
            None => format!(
                " The losses come in {} separate bursts rather than spread out.",
                self.count
            ),
        }
    }
}

/// Bursts of retransmissions, when they are bunched: at least two, each
/// apart from the next by [`BURST_GAP_NS`] or more and together covering
/// less than half the time from the first to the last.
fn bursts(ticks: &[Tick]) -> Option<Bursts> {
    let tick_ns = match ticks {
        [first, second, ..] => second.start_ns - first.start_ns,
        _ => return None,
    };
    let gap_ns = BURST_GAP_NS.max(3 * tick_ns);
    let mut spans: Vec<(i64, i64)> = Vec::new();
    for tick in ticks.iter().filter(|t| t.retransmissions > 0) {
        match spans.last_mut() {
            Some((_, end)) if tick.start_ns - *end < gap_ns => *end = tick.start_ns + tick_ns,
            _ => spans.push((tick.start_ns, tick.start_ns + tick_ns)),
        }
    }
    let (first, last) = (spans.first()?.0, spans.last()?.1);
    let covered: i64 = spans.iter().map(|(start, end)| end - start).sum();
    if spans.len() < 2 || 2 * covered >= last - first {
        return None;
    }
    let intervals: Vec<f64> = spans
        .windows(2)
        .map(|pair| (pair[1].0 - pair[0].0) as f64 / 1e9)
        .collect();
    let period = super::median(intervals.clone());
    let steady = spans.len() >= 3
        && intervals
            .iter()
            .all(|interval| (interval - period).abs() <= PERIOD_TOLERANCE * period);
    Some(Bursts {
        count: spans.len(),
        period_s: steady.then_some(period),
    })
}

/// How the share of packets resent per tick follows the tick's throughput
/// (Pearson correlation), over the ticks with traffic.
fn loss_against_load(ticks: &[Tick]) -> Option<f64> {
    let busy: Vec<(f64, f64)> = ticks
        .iter()
        .filter(|t| t.packets > 0)
        .map(|t| {
            (
                t.throughput_bps,
                t.retransmissions as f64 / t.packets as f64,
            )
        })
        .collect();
    if busy.len() < LOAD_TICKS {
        return None;
    }
    correlation(&busy)
}

pub(crate) fn correlation(pairs: &[(f64, f64)]) -> Option<f64> {
    let n = pairs.len() as f64;
    let (mean_x, mean_y) = pairs
        .iter()
        .fold((0.0, 0.0), |(x, y), &(a, b)| (x + a / n, y + b / n));
    let (mut xy, mut xx, mut yy) = (0.0, 0.0, 0.0);
    for &(x, y) in pairs {
        xy += (x - mean_x) * (y - mean_y);
        xx += (x - mean_x).powi(2);
        yy += (y - mean_y).powi(2);
    }
    (xx > 0.0 && yy > 0.0).then(|| xy / (xx * yy).sqrt())
}

fn load_explanation(correlation: f64) -> String {
    if correlation >= 0.5 {
        format!(
            " The loss rate rises with throughput (correlation {correlation:.2} per tick): \
             drops come when the path is busiest, as from a full queue or a policer."
        )
    } else {
        format!(
            " The loss rate does not follow throughput (correlation {correlation:.2} per \
             tick): the drops are not caused by load, but by the path itself (a bad link, \
             a flap, a periodic event)."
        )
    }
}
