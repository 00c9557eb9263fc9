//! What limits each bulk flow's rate, in the manner of T-RAT: the
//! receiver's window (full, or shut to zero), loss, a transfer too short to leave slow start, the
//! link, or else the sender itself. Flows held back by the link make a finding.

use tcp::{ConnectionSummary, DirectionSummary};

use super::window::{window_limited, BULK_BYTES};
use super::{finding, rtt_ms};
use crate::{Finding, Inputs};

/// Resent segments per segment sent above which loss sets the pace.
const LOSSY_SHARE: f64 = 0.001;
/// A flow busy for fewer round trips than this has barely left slow start.
const SLOW_START_ROUND_TRIPS: f64 = 10.0;
/// ACKs this even (spread of ln(rate)) are clocked out by a bottleneck.
const EVEN_CLOCK_SPREAD: f64 = 0.15;
/// Round trips this much above the least show a standing queue.
const QUEUE_RTT_RATIO: f64 = 1.5;

/// The limit on one bulk flow's rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limiter {
    ReceiverWindow,
    Loss,
    SlowStart,
    Link,
    Sender,
}

impl Limiter {
    pub fn as_str(self) -> &'static str {
        match self {
            Limiter::ReceiverWindow => "receiver_window",
            Limiter::Loss => "loss",
            Limiter::SlowStart => "slow_start",
            Limiter::Link => "link",
            Limiter::Sender => "sender",
        }
    }
}

/// What limits `data`'s rate, for a bulk flow; None for a short one.
pub fn limiter(
    c: &ConnectionSummary,
    data: &DirectionSummary,
    receiver: &DirectionSummary,
) -> Option<Limiter> {
    if data.unique_payload_bytes < BULK_BYTES {
        return None;
    }
    let resent = data.retransmissions.total as f64;
    let round_trip = rtt_ms(c).max(data.rtt.min_ms.unwrap_or(0.0));
    let limit = if receiver.zero_windows > 0 || window_limited(c, data, receiver.window.max) {
        Limiter::ReceiverWindow
    } else if resent >= 2.0 && resent > LOSSY_SHARE * data.packets as f64 {
        Limiter::Loss
    } else if data.ack_clock.busy_ms < SLOW_START_ROUND_TRIPS * round_trip {
        Limiter::SlowStart
    } else if data
        .ack_clock
        .spread
        .is_some_and(|spread| spread <= EVEN_CLOCK_SPREAD)
    {
        Limiter::Link
    } else {
        Limiter::Sender
    };
    Some(limit)
}

/// What limits each direction's rate (client to server, server to client),
/// for bulk flows; None for short ones.
pub fn rate_limits(c: &ConnectionSummary) -> [Option<&'static str>; 2] {
    [
        limiter(c, &c.client_to_server, &c.server_to_client),
        limiter(c, &c.server_to_client, &c.client_to_server),
    ]
    .map(|limit| limit.map(Limiter::as_str))
}

/// Whether the round trips grew well above the least: a queue stood at the bottleneck.
fn standing_queue(data: &DirectionSummary) -> bool {
    match (data.rtt.min_ms, data.rtt.median_ms) {
        (Some(least), Some(median)) => least > 0.0 && median >= QUEUE_RTT_RATIO * least,
        _ => false,
    }
}

/// A bulk flow: its connection, its sender's name, its direction and its limit.
type Flow<'a> = (
    &'a ConnectionSummary,
    &'static str,
    &'a DirectionSummary,
    Limiter,
);

fn bulk_flows<'a>(inputs: &Inputs<'a>) -> Vec<Flow<'a>> {
    inputs
        .connections
        .iter()
        .flat_map(|c| {
            [
                (c, "client", &c.client_to_server, &c.server_to_client),
                (c, "server", &c.server_to_client, &c.client_to_server),
            ]
        })
        .filter_map(|(c, sender, data, receiver)| {
            limiter(c, data, receiver).map(|limit| (c, sender, data, limit))
        })
        .collect()
}

/// Bulk flows whose ACKs come evenly spaced at a steady rate with the
/// window far from full and no loss: the path's bottleneck link sets the rate.
pub fn link_bandwidth(inputs: &Inputs) -> Option<Finding> {
    let flows = bulk_flows(inputs);
    let on_link: Vec<_> = flows
        .iter()
        .filter(|&&(.., limit)| limit == Limiter::Link)
        .collect();
    let &&(c, sender, data, _) = on_link
        .iter()
        .max_by(|a, b| a.2.ack_clock.busy_ms.total_cmp(&b.2.ack_clock.busy_ms))?;
    let receiver = if sender == "client" {
        &c.server_to_client
    } else {
        &c.client_to_server
    };
    let rate = data.ack_clock.bytes_per_s?;
    let wire_rate = rate * data.wire_bytes as f64 / data.payload_bytes.max(1) as f64;
    let mbit = wire_rate * 8.0 / 1e6;
    let busy_s = data.ack_clock.busy_ms / 1e3;
    let cost: f64 = on_link.iter().map(|f| f.2.ack_clock.busy_ms / 2.0).sum();
    let mut found = finding(
        "link_bandwidth",
        format!(
            "The link sets the pace: {:.2} MB/s ({mbit:.1} Mbit/s on the wire), with {:.0} kB in \
             flight of a {:.0} kB window",
            rate / 1e6,
            data.max_bytes_in_flight as f64 / 1e3,
            receiver.window.max as f64 / 1e3
        ),
        cost,
    );
    found.connections = on_link.len() as u64;
    found.example_connection = Some(c.id);
    found.wireshark_filter = format!("tcp.stream == {} && tcp.len == 0", c.id);
    found.explanation = format!(
        "The {sender}'s data on connection {} was acknowledged at a steady {:.2} MB/s, the ACKs \
         evenly spaced as a bottleneck link clocks them out{}, with no loss and the receiver's \
         window never full: neither the window nor the {sender} held it back. Bulk flows by \
         limit: {}.",
        c.id,
        rate / 1e6,
        if standing_queue(data) {
            format!(
                "; round trips grew from {:.1} to {:.1} ms as a queue stood before the link",
                data.rtt.min_ms.unwrap_or(0.0),
                data.rtt.median_ms.unwrap_or(0.0)
            )
        } else {
            String::new()
        },
        limiter_counts(&flows)
    );
    found.fix = format!(
        "The path carries about {mbit:.0} Mbit/s: move the data over a faster link (or a less \
         loaded one, or nearer), or send less of it (compress, deduplicate); a larger window \
         or buffer will not help."
    );
    found.what_if = format!(
        "At twice the rate ({:.0} Mbit/s) this transfer would take {:.2} s instead of {busy_s:.2} s.",
        2.0 * mbit,
        busy_s / 2.0
    );
    if !standing_queue(data) {
        found.suspected = Some(
            "the ACKs are evenly spaced but no queue shows in the round trips: a sender pacing \
             itself would look the same"
                .into(),
        );
    }
    found.figures.insert("throughput_bytes_per_s", rate);
    found.figures.insert("link_bytes_per_s", wire_rate);
    found
        .figures
        .insert("window_bytes", receiver.window.max as f64);
    found
        .figures
        .insert("in_flight_max_bytes", data.max_bytes_in_flight as f64);
    Some(found)
}

/// "1 link, 2 receiver_window": how many bulk flows each limit holds back.
fn limiter_counts(flows: &[Flow]) -> String {
    let mut counts: Vec<(Limiter, usize)> = Vec::new();
    for &(.., limit) in flows {
        match counts.iter_mut().find(|(seen, _)| *seen == limit) {
            Some((_, n)) => *n += 1,
            None => counts.push((limit, 1)),
        }
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(limit, n)| format!("{n} {}", limit.as_str()))
        .collect();
    parts.join(", ")
}
