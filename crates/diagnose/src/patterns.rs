//! Patterns across transactions and connections that decide where some
//! ledger parts belong: server stalls at a steady period, loss in periodic
//! bursts, peers that stopped answering, and the tiers and queues found by
//! the structural detectors.

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};
use tcp::{ConnectionSummary, DirectionSummary, Role};
use timeline::Tick;
use transactions::Part;

use crate::charges::Context;
use crate::gaps::Gaps;
use crate::queue;
use crate::rules::{
    DEAD_AFTER_RESENDS, EXPLAINED_DEVIATIONS, FAR_OUT_IQRS, LOSS_BURST_GAP_MS, PATTERN_REPEATS,
    PERIOD_TOLERANCE, SIGNIFICANCE,
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
        loss_bursts: loss_burst_pattern(inputs.ticks, inputs.transactions)
            .map_or_else(Vec::new, |b| b.spans),
        dead_peers: last_transactions_of(inputs, |_, _| true),
        gone_after_goodbye: last_transactions_of(inputs, |c, silent| c.close.by == Some(silent)),
        black_holes: inputs
            .connections
            .iter()
            .filter(|c| detectors::black_holed(c))
            .map(|c| c.id)
            .collect(),
        syn_loss_is_path_loss: syn_loss_explained_by_data_loss(inputs),
        queued_paths: queue::queued_paths(inputs),
        loss_at_large: inputs
            .connections
            .iter()
            .filter(|c| {
                c.directions()
                    .iter()
                    .any(|d| d.retransmissions.after_duplicate_acks > 0)
            })
            .map(queue::path)
            .collect(),
    }
}

/// The last transaction of each connection on which one side stopped
/// answering (see [`silent_peer`]), of those `chosen` by the connection and
/// that side: where its peer resent the same data to the end.
fn last_transactions_of(
    inputs: &Inputs,
    chosen: impl Fn(&ConnectionSummary, Role) -> bool,
) -> FxHashSet<(u64, u32)> {
    let dead: FxHashSet<u64> = inputs
        .connections
        .iter()
        .filter(|c| !detectors::black_holed(c))
        .filter(|c| silent_peer(c).is_some_and(|silent| chosen(c, silent)))
        .map(|c| c.id)
        .collect();
    let mut last: FxHashMap<u64, u32> = FxHashMap::default();
    for t in inputs
        .transactions
        .iter()
        .filter(|t| dead.contains(&t.connection))
    {
        let index = last.entry(t.connection).or_default();
        *index = (*index).max(t.index);
    }
    last.into_iter().collect()
}

/// The side that stopped answering: its peer resent the same data again
/// and again, and it was never acknowledged.
fn silent_peer(c: &ConnectionSummary) -> Option<Role> {
    let unanswered =
        |d: &DirectionSummary| d.most_resends >= DEAD_AFTER_RESENDS && d.unacknowledged_at_end > 0;
    if unanswered(&c.server_to_client) {
        Some(Role::Client)
    } else if unanswered(&c.client_to_server) {
        Some(Role::Server)
    } else {
        None
    }
}

/// Whether the handshakes that had to be tried again are no more than the
/// path's loss would explain: within [`EXPLAINED_DEVIATIONS`] standard
/// deviations of the count expected if each SYN sent (the first and every
/// resend) or its SYN-ACK were lost as often as the data and FIN segments
/// were. A SYN-ACK sent
/// again in answer to a SYN sent again is the same loss; one sent again on
/// its own is another. A data segment counts as lost once however often
/// its timer resent it (a long silence is one loss waited out), and not at
/// all when it was never acknowledged (the peer had gone).
fn syn_loss_explained_by_data_loss(inputs: &Inputs) -> bool {
    let (mut resent, mut data, mut syns_sent, mut tried_again) = (0u64, 0u64, 0u64, 0u64);
    for c in inputs.connections {
        for d in c.directions() {
            let r = &d.retransmissions;
            // Resent again and again and never acknowledged: the peer had gone.
            let to_a_peer_gone = u64::from(r.repeated > 0 && d.unacknowledged_at_end > 0);
            let not_lost = r.spurious + r.handshake + r.repeated + to_a_peer_gone;
            resent += r.total.saturating_sub(not_lost);
            data += d.data_packets + u64::from(c.close.how == tcp::CloseHow::Fin);
        }
        if c.handshake.syn_ns.is_some() {
            let syn_resends = c.handshake.syn_retries;
            let syn_ack_alone = u64::from(c.handshake.syn_ack_retries).saturating_sub(syn_resends);
            syns_sent += 1 + syn_resends;
            tried_again += syn_resends + syn_ack_alone;
        }
    }
    if resent == 0 || tried_again == 0 {
        return false;
    }
    let rate = (resent as f64 / data.max(1) as f64).min(1.0);
    let either_lost = 1.0 - (1.0 - rate) * (1.0 - rate);
    let expected = syns_sent as f64 * either_lost;
    let deviation = (expected * (1.0 - either_lost)).sqrt();
    tried_again as f64 <= expected + EXPLAINED_DEVIATIONS * deviation + 1.0
}

/// Server stalls at a steady period.
pub struct StallPattern {
    /// The stalled transactions, by (connection, index), and the usual server time.
    pub stalled: FxHashMap<(u64, u32), f64>,
    pub count: usize,
    pub length_ms: f64,
    pub period_s: f64,
}

/// Answers far slower than the rest, grouped into stalls (answers waiting
/// at the same moment are one stall of the server); the longest of them,
/// set apart from the shorter by the widest break in their lengths at
/// which they recur at a steady period.
pub fn stall_pattern(inputs: &Inputs) -> Option<StallPattern> {
    let answered: Vec<(&transactions::Transaction, f64)> = inputs
        .transactions
        .iter()
        .filter(|t| t.response_start_ns.is_some())
        .map(|t| (t, t.ledger.get(Part::Server)))
        .filter(|&(_, server)| server > 0.0)
        .collect();
    let server_times: Vec<f64> = answered.iter().map(|&(_, server)| server).collect();
    let usual = median(server_times.clone());
    let fence = far_out_fence(server_times);
    let mut slow: Vec<(i64, i64, &transactions::Transaction)> = answered
        .iter()
        .filter(|&&(_, server)| server > fence)
        .map(|&(t, _)| {
            let from = t.request_end_ns;
            (from, t.response_start_ns.unwrap_or(from), t)
        })
        .collect();
    slow.sort_by_key(|&(from, ..)| from);
    let mut at_usual_pace: Vec<i64> = answered
        .iter()
        .filter(|&&(_, server)| server <= fence)
        .map(|&(t, _)| t.request_end_ns)
        .collect();
    at_usual_pace.sort_unstable();
    let (stalls, period_s) = recurring_stalls(group_overlapping(&slow), fence, &at_usual_pace)?;
    let in_stall = |t: &transactions::Transaction| {
        let at = t.request_end_ns;
        let before = stalls.partition_point(|&(from, _)| from <= at);
        before > 0 && at <= stalls[before - 1].1
    };
    Some(StallPattern {
        stalled: slow
            .iter()
            .filter(|&&(.., t)| in_stall(t))
            .map(|&(.., t)| ((t.connection, t.index), usual))
            .collect(),
        count: stalls.len(),
        length_ms: median(stalls.iter().map(|&(from, to)| ms(to - from)).collect()),
        period_s,
    })
}

/// Slower answers can stand apart at more than one level (stalls, and the
/// odd slow answer between them): the stalls above the widest break in
/// their lengths (see [`breaks_widest_first`]) at which, in time order,
/// the server answered some request at its usual pace between each stall
/// and the next (it stopped and went on, rather than answering slowly one
/// request after another) and they started at a steady period; with that
/// period in seconds. `at_usual_pace` holds when those requests ended, sorted.
fn recurring_stalls(
    stalls: Vec<(i64, i64)>,
    fence: f64,
    at_usual_pace: &[i64],
) -> Option<(Vec<(i64, i64)>, f64)> {
    let by_length = longest_first(stalls);
    let periods = periods_of_longest(&by_length, at_usual_pace);
    let keep = breaks_widest_first(&by_length, fence)
        .into_iter()
        .find(|&keep| periods[keep].is_some())?;
    Some((in_time_order(&by_length[..keep]), periods[keep]?))
}

/// For each count of the longest stalls (by index, from none to all): the
/// steady period at which they started (see [`steady_period`]), when
/// between each and the next in time some request ended that was answered
/// at the usual pace. One sweep adding stall after stall, each in O(log n).
fn periods_of_longest(by_length: &[(i64, i64)], at_usual_pace: &[i64]) -> Vec<Option<f64>> {
    let served_between = |(_, after): (i64, i64), (before, _): (i64, i64)| {
        let first_after = at_usual_pace.partition_point(|&end| end <= after);
        at_usual_pace
            .get(first_after)
            .is_some_and(|&end| end < before)
    };
    let mut kept: BTreeMap<i64, i64> = BTreeMap::new();
    let mut gaps = Gaps::default();
    let mut unserved_pairs = 0usize;
    let mut periods = vec![None];
    for &stall in by_length {
        let earlier = kept.range(..stall.0).next_back().map(|(&f, &t)| (f, t));
        let later = kept.range(stall.0..).next().map(|(&f, &t)| (f, t));
        if let (Some(earlier), Some(later)) = (earlier, later) {
            unserved_pairs -= usize::from(!served_between(earlier, later));
            gaps.remove(later.0 - earlier.0);
        }
        if let Some(earlier) = earlier {
            unserved_pairs += usize::from(!served_between(earlier, stall));
            gaps.insert(stall.0 - earlier.0);
        }
        if let Some(later) = later {
            unserved_pairs += usize::from(!served_between(stall, later));
            gaps.insert(later.0 - stall.0);
        }
        kept.insert(stall.0, stall.1);
        periods.push(if unserved_pairs == 0 {
            steady_period(&gaps)
        } else {
            None
        });
    }
    periods
}

fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

/// Tukey's far-out fence: above it a value is an outlier of the rest.
/// With no values, nothing is an outlier.
fn far_out_fence(mut values: Vec<f64>) -> f64 {
    let Some(last) = values.len().checked_sub(1) else {
        return f64::INFINITY;
    };
    values.sort_by(f64::total_cmp);
    let quartile = |q: f64| values[(q * last as f64).round() as usize];
    let (q1, q3) = (quartile(0.25), quartile(0.75));
    q3 + FAR_OUT_IQRS * (q3 - q1)
}

/// Slow answers, sorted by start, merged where they overlap in time.
fn group_overlapping(slow: &[(i64, i64, &transactions::Transaction)]) -> Vec<(i64, i64)> {
    let mut stalls: Vec<(i64, i64)> = Vec::new();
    for &(from, to, _) in slow {
        match stalls.last_mut() {
            Some((_, end)) if from <= *end => *end = (*end).max(to),
            _ => stalls.push((from, to)),
        }
    }
    stalls
}

/// The stalls above the widest break (by ratio) in their lengths, the
/// fence counting as the length below the shortest; in time order.
fn longest_apart(stalls: Vec<(i64, i64)>, fence: f64) -> Vec<(i64, i64)> {
    let by_length = longest_first(stalls);
    breaks_widest_first(&by_length, fence)
        .first()
        .map_or_else(Vec::new, |&keep| in_time_order(&by_length[..keep]))
}

fn longest_first(mut stalls: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    let length = |&(from, to): &(i64, i64)| ms(to - from);
    stalls.sort_by(|a, b| length(b).total_cmp(&length(a)));
    stalls
}

fn in_time_order(stalls: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut sorted = stalls.to_vec();
    sorted.sort_by_key(|&(from, _)| from);
    sorted
}

/// How many of the longest stalls (`by_length`, the longest first) stand
/// above each break in their lengths (the fence counting as the length
/// below the shortest), the widest break (by ratio) first, keeping at
/// least a pattern's repeats.
fn breaks_widest_first(by_length: &[(i64, i64)], fence: f64) -> Vec<usize> {
    let mut lengths: Vec<f64> = by_length.iter().map(|&(from, to)| ms(to - from)).collect();
    lengths.push(fence.max(f64::MIN_POSITIVE));
    let mut breaks: Vec<usize> = (PATTERN_REPEATS..lengths.len()).collect();
    let ratio = |i: usize| lengths[i - 1] / lengths[i];
    breaks.sort_by(|&a, &b| ratio(b).total_cmp(&ratio(a)));
    breaks
}

/// The steady interval between event times, in seconds, from the gaps
/// between them (ns): when there are enough events and every gap is within
/// the tolerance of the median. The gaps farthest from the median are the
/// least and the most, so those two decide.
fn steady_period(gaps: &Gaps) -> Option<f64> {
    if gaps.len() + 1 < PATTERN_REPEATS {
        return None;
    }
    let seconds = |ns: i64| ns as f64 / 1e9;
    let period = seconds(gaps.median()?);
    let within = |gap: Option<i64>| {
        gap.is_some_and(|gap| (seconds(gap) - period).abs() <= PERIOD_TOLERANCE * period)
    };
    (period > 0.0 && within(gaps.least()) && within(gaps.most())).then_some(period)
}

/// The stretches of ticks with loss: ticks with loss close together, and
/// those apart only by silence (a sender waiting for its timer to resend is
/// still in the burst that made it wait). A burst begins where the silence
/// before its first loss began: the lost packet left then, and the timer
/// that resent it ran from there.
fn loss_spans(ticks: &[Tick], tick_ns: i64) -> Vec<(i64, i64)> {
    let gap_ns = ((LOSS_BURST_GAP_MS * 1e6) as i64).max(3 * tick_ns);
    let mut spans: Vec<(i64, i64)> = Vec::new();
    let mut sent_since = 0;
    let mut silent_since = None;
    for tick in ticks {
        if tick.retransmissions + tick.lost_segments == 0 {
            sent_since += tick.packets;
            silent_since = match tick.packets {
                0 => silent_since.or(Some(tick.start_ns)),
                _ => None,
            };
            continue;
        }
        let start = silent_since.take().unwrap_or(tick.start_ns);
        match spans.last_mut() {
            Some((_, end)) if start - *end < gap_ns || sent_since == 0 => {
                *end = tick.start_ns + tick_ns
            }
            _ => spans.push((start, tick.start_ns + tick_ns)),
        }
        sent_since = 0;
    }
    spans
}

/// Loss coming in bursts at a steady period.
pub struct LossBursts {
    pub count: usize,
    pub period_s: f64,
    /// Each burst's start and end, ns.
    pub spans: Vec<(i64, i64)>,
}

/// Ticks with retransmissions or gaps, grouped into bursts apart from each
/// other by stretches without loss; the longest of them, set apart from
/// the shorter by the widest break in their lengths (a periodic outage
/// against the odd loss between), when they start (or end) at a period:
/// every gap within the period's tolerance, and too steady for loss at
/// random times (a sender's own congestion loss, back each time its window
/// regrows, is more even than random but keeps no period). A burst the capture's start or end
/// cut short has edges the capture does not show, and is left out.
///
/// A first burst that came before any of `transactions` ended cleanly (with
/// nothing resent) may have been under way before the traffic began: its
/// start is where the traffic began, not where the outage did, and only
/// bounds the outage's.
pub fn loss_burst_pattern(
    ticks: &[Tick],
    transactions: &[transactions::Transaction],
) -> Option<LossBursts> {
    let (tick_ns, first, last) = match ticks {
        [first, second, .., last] => (
            second.start_ns - first.start_ns,
            first.start_ns,
            last.start_ns,
        ),
        _ => return None,
    };
    let whole: Vec<(i64, i64)> = loss_spans(ticks, tick_ns)
        .into_iter()
        .filter(|&(start, end)| start > first && end <= last)
        .collect();
    let bursts = longest_apart(whole, ms(tick_ns));
    if bursts.len() < PATTERN_REPEATS {
        return None;
    }
    let starts: Vec<i64> = bursts.iter().map(|&(start, _)| start).collect();
    let ends: Vec<i64> = bursts.iter().map(|&(_, end)| end).collect();
    let timed_starts = starts_that_time_the_outages(&starts, transactions);
    // The recovery that ends a burst can run longer or shorter; the start
    // or the end keeps the period. Two tries: each must pass at half the
    // significance.
    let steady = |times: &[i64]| {
        let spread = spread_of_gaps(times, tick_ns);
        spread <= PERIOD_TOLERANCE && chance_of_steadiness(spread, times.len()) < SIGNIFICANCE / 2.0
    };
    let starts_keep_period =
        steady(timed_starts) && first_start_within_a_period(&starts, timed_starts);
    if !starts_keep_period && !steady(&ends) {
        return None;
    }
    Some(LossBursts {
        count: bursts.len(),
        period_s: mean_gap_ns(timed_starts) as f64 / 1e9,
        spans: bursts,
    })
}

/// The burst starts that are times: all, or all but the first when it came
/// before anything got through and enough are left without it.
fn starts_that_time_the_outages<'a>(
    starts: &'a [i64],
    transactions: &[transactions::Transaction],
) -> &'a [i64] {
    match starts.split_first() {
        Some((&first, rest))
            if rest.len() >= PATTERN_REPEATS && nothing_got_through_before(first, transactions) =>
        {
            rest
        }
        _ => starts,
    }
}

/// A first start left out of `timed` as a bound lies no more than a period
/// (within the tolerance) before the next: the outage it was part of had
/// begun by then.
fn first_start_within_a_period(starts: &[i64], timed: &[i64]) -> bool {
    timed.len() == starts.len()
        || (starts[1] - starts[0]) as f64 <= (1.0 + PERIOD_TOLERANCE) * mean_gap_ns(timed) as f64
}

/// The mean gap between `times` (ns, in order, at least two).
fn mean_gap_ns(times: &[i64]) -> i64 {
    (times[times.len() - 1] - times[0]) / (times.len() - 1) as i64
}

/// No transaction had ended, with nothing resent, before `ns`.
fn nothing_got_through_before(ns: i64, transactions: &[transactions::Transaction]) -> bool {
    !transactions
        .iter()
        .any(|t| t.retransmissions == 0 && t.response_end_ns.unwrap_or(t.request_end_ns) < ns)
}

/// How far the gaps between `times` (ns, in order, each known to a tick)
/// stray from their mean, at most, as a share of it.
fn spread_of_gaps(times: &[i64], tick_ns: i64) -> f64 {
    let gaps = times.len().saturating_sub(1);
    let mean = match (times.first(), times.last()) {
        (Some(first), Some(last)) if gaps > 0 => (last - first) as f64 / gaps as f64,
        _ => return f64::INFINITY,
    };
    if mean <= 0.0 {
        return f64::INFINITY;
    }
    let farthest = times
        .windows(2)
        .map(|pair| ((pair[1] - pair[0]) as f64 - mean).abs())
        .fold(tick_ns as f64, f64::max);
    farthest / mean
}

/// The chance that `count` events at random times would come with gaps
/// as even as `spread`. Given their first and last, the n gaps between
/// random times are uniform spacings, and the chance that all lie within
/// a share `d` of their mean is at most (n-1)! (2d/n)^(n-1).
fn chance_of_steadiness(spread: f64, count: usize) -> f64 {
    let gaps = count.saturating_sub(1);
    if gaps == 0 || !spread.is_finite() {
        return 1.0;
    }
    let n = gaps as f64;
    let log_factorial: f64 = (1..gaps).map(|k| (k as f64).ln()).sum();
    (log_factorial + (n - 1.0) * (2.0 * spread / n).ln())
        .exp()
        .min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK_NS: i64 = 10_000_000;

    /// Ticks of 10 ms with traffic throughout and one lost segment in each
    /// tick of `lost_at` (tick numbers), each after a silent tick.
    fn ticks_losing_at(lost_at: &[usize], count: usize) -> Vec<Tick> {
        (0..count)
            .map(|i| Tick {
                start_ns: i as i64 * TICK_NS,
                packets: if lost_at.contains(&(i + 1)) { 0 } else { 10 },
                lost_segments: u64::from(lost_at.contains(&i)),
                ..Tick::default()
            })
            .collect()
    }

    #[test]
    fn nothing_is_an_outlier_of_no_values_and_a_far_value_is_of_close_ones() {
        assert_eq!(far_out_fence(Vec::new()), f64::INFINITY);
        let fence = far_out_fence(vec![10.0, 11.0, 12.0, 13.0, 100.0]);
        assert!((13.0..100.0).contains(&fence));
    }

    #[test]
    fn three_losses_a_steady_period_apart_are_a_pattern_and_three_at_random_are_not() {
        let steady = loss_burst_pattern(&ticks_losing_at(&[200, 450, 700], 900), &[]).unwrap();
        assert_eq!(steady.count, 3);
        assert!((steady.period_s - 2.5).abs() < 1e-9);
        assert!(loss_burst_pattern(&ticks_losing_at(&[200, 380, 700], 900), &[]).is_none());
    }

    #[test]
    fn an_odd_loss_between_steady_outages_does_not_hide_them() {
        let mut ticks = ticks_losing_at(&[320], 900);
        for outage in [200..240, 450..490, 700..740] {
            for tick in &mut ticks[outage] {
                tick.lost_segments = 1;
            }
        }
        let bursts = loss_burst_pattern(&ticks, &[]).unwrap();
        assert_eq!(bursts.count, 3);
        assert!((bursts.period_s - 2.5).abs() < 1e-9);
    }

    /// A transaction that ended at `tick` with `resent` segments resent.
    fn transaction_ended_at(tick: i64, resent: u64) -> transactions::Transaction {
        let end = tick * TICK_NS;
        transactions::Transaction {
            index: 1,
            request_start_ns: end - TICK_NS,
            request_end_ns: end - TICK_NS,
            response_start_ns: Some(end),
            response_end_ns: Some(end),
            duration_ms: Some(ms(TICK_NS)),
            request_transfer_ms: Some(0.0),
            request_bytes: 100,
            response_bytes: 100,
            request_packets: 1,
            response_packets: 1,
            retransmissions: resent,
            ..Default::default()
        }
    }

    #[test]
    fn a_first_burst_under_way_before_the_traffic_began_keeps_the_period() {
        // Outages every 2.5 s; the traffic began 0.9 s into one of them,
        // so the first burst seems to start late.
        let ticks = ticks_losing_at(&[110, 300, 550, 800], 900);
        let hit_at_once = [transaction_ended_at(120, 2)];
        let bursts = loss_burst_pattern(&ticks, &hit_at_once).unwrap();
        assert_eq!(bursts.count, 4);
        assert!((bursts.period_s - 2.5).abs() < 1e-9);
        // Had a transaction got through before it, that start is a time.
        let through_before = [transaction_ended_at(50, 0)];
        assert!(loss_burst_pattern(&ticks, &through_before).is_none());
    }

    #[test]
    fn a_first_burst_more_than_a_period_before_the_next_breaks_the_pattern() {
        let ticks = ticks_losing_at(&[10, 340, 590, 840], 900);
        assert!(loss_burst_pattern(&ticks, &[]).is_none());
    }

    /// What the sweep must agree with: the `keep` longest stalls put in
    /// time order afresh, each pair's gap searched for an answer at the
    /// usual pace, their gaps sorted for the median.
    fn period_afresh(by_length: &[(i64, i64)], keep: usize, at_usual_pace: &[i64]) -> Option<f64> {
        let kept = in_time_order(&by_length[..keep]);
        let served = kept.windows(2).all(|pair| {
            at_usual_pace
                .iter()
                .any(|&end| end > pair[0].1 && end < pair[1].0)
        });
        let intervals: Vec<f64> = kept
            .windows(2)
            .map(|pair| (pair[1].0 - pair[0].0) as f64 / 1e9)
            .collect();
        let period = median(intervals.clone());
        let steady = keep >= PATTERN_REPEATS
            && period > 0.0
            && intervals
                .iter()
                .all(|interval| (interval - period).abs() <= PERIOD_TOLERANCE * period);
        (served && steady).then_some(period)
    }

    #[test]
    fn the_sweep_over_the_longest_stalls_agrees_with_each_set_judged_afresh() {
        let mut state = 99u64;
        let mut next = move |below: i64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as i64 % below
        };
        let second = 1_000_000_000;
        let mut found = 0;
        for _ in 0..200 {
            // Stalls near a 10 s period with some strays, and answers between
            // most of them.
            let mut stalls = Vec::new();
            let mut at = 0;
            for _ in 0..next(12) + 1 {
                at += if next(4) == 0 {
                    (next(20) + 1) * second
                } else {
                    10 * second + next(second)
                };
                stalls.push((at, at + next(5) * 100_000_000 + 1));
            }
            let mut at_usual_pace = Vec::new();
            for &(_, to) in &stalls {
                if next(8) != 0 {
                    at_usual_pace.push(to + 1 + next(second));
                }
            }
            at_usual_pace.sort_unstable();
            let by_length = longest_first(in_time_order(&stalls));
            let periods = periods_of_longest(&by_length, &at_usual_pace);
            for (keep, period) in periods.iter().enumerate() {
                assert_eq!(*period, period_afresh(&by_length, keep, &at_usual_pace));
                found += usize::from(period.is_some());
            }
        }
        assert!(found > 20, "too few steady sets to test the sweep: {found}");
    }

    #[test]
    fn steadiness_is_as_likely_as_uniform_spacings_make_it() {
        // Two gaps within a share d of their mean: a chance of d.
        let second = 1_000_000_000;
        let spread = spread_of_gaps(&[0, 10 * second, 21 * second], 1);
        assert!((spread - 1.0 / 21.0).abs() < 1e-9);
        assert!((chance_of_steadiness(spread, 3) - 1.0 / 21.0).abs() < 1e-9);
        // Events closer than their tick cannot be told apart from random.
        let spread = spread_of_gaps(&[0, 1, 2, 3], 10);
        assert_eq!(chance_of_steadiness(spread, 4), 1.0);
    }

    #[test]
    fn losses_more_even_than_chance_but_far_from_a_period_are_no_pattern() {
        // A sender's own congestion loss comes back as its window regrows:
        // 13 losses from 0.8 s to 3.9 s apart, too even for random times,
        // yet no steady period a cause could run at.
        let gaps = [230, 220, 200, 180, 320, 260, 360, 340, 80, 220, 390, 320];
        let mut lost_at = vec![100];
        for gap in gaps {
            lost_at.push(lost_at.last().unwrap() + gap);
        }
        let starts: Vec<i64> = lost_at.iter().map(|&tick| tick as i64 * TICK_NS).collect();
        let spread = spread_of_gaps(&starts, TICK_NS);
        assert!(chance_of_steadiness(spread, starts.len()) < SIGNIFICANCE / 2.0);
        assert!(loss_burst_pattern(&ticks_losing_at(&lost_at, 3400), &[]).is_none());
    }
}
