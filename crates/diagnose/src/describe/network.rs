//! Network time: round trips paid turn after turn (chattiness), the
//! path's own latency, and a bottleneck link a queue builds before.

use tcp::{Direction, DirectionSummary, RttStats};

use super::{capitalized, count, duration, round, with_text, Facts};
use crate::charges::Context;
use crate::queue::{self, queue_samples, QueuedPath};
use crate::Finding;

pub(super) fn chattiness(facts: &Facts) -> Finding {
    let rtt = facts.round_trip_ms();
    let turns = facts.total.transactions();
    let mut found = with_text(
        facts.kind,
        format!(
            "{} in a row, each paying {}: {} in all",
            count(turns, "request/response turn"),
            facts.round_trips_text(),
            duration(facts.total.cost_ms)
        ),
        format!(
            "Each request followed the previous answer at once (the client did not think \
             longer than a round trip), so every turn paid the path's full round trip: the \
             time goes into distance, not into work or bandwidth.{}",
            facts.example_text()
        ),
        "Send fewer, larger requests: batch or pipeline them, fetch in parallel, or move the \
         client closer to the server.",
    );
    found.figures.insert("rtt_ms", round(rtt));
    found.figures.insert("turns", turns as f64);
    found
}

pub(super) fn path_latency(facts: &Facts) -> Finding {
    let rtt = facts.round_trip_ms();
    let mut found = with_text(
        facts.kind,
        format!(
            "{} on the path: {} of waiting for packets to cross it",
            capitalized(&facts.round_trips_text()),
            duration(facts.total.cost_ms)
        ),
        format!(
            "The handshakes, the requests and their answers each crossed the path at least \
             once at its least delay ({}): distance (or a slow hop) rather \
             than the server or TCP's waits.{}",
            facts.example.map_or_else(
                || duration(rtt),
                |c| format!("{} on connection {}", duration(rtt), c.id)
            ),
            facts.example_text()
        ),
        "Serve from nearer the users (a CDN, a regional server), keep connections open to save \
         handshakes, and cut round trips per page.",
    );
    found.figures.insert("rtt_ms", round(rtt));
    found
}

pub(super) fn bottleneck_link(facts: &Facts, context: &Context) -> Finding {
    let (sender, _) = facts.sender();
    let data = facts.sender_data();
    let queued_path = facts
        .example
        .and_then(|c| context.queued_paths.get(&queue::path(c)));
    let own_samples = facts
        .example
        .zip(data)
        .and_then(|(c, data)| queue_samples(c, data));
    let handshakes = queued_path.and_then(QueuedPath::handshake_round_trips);
    let (rtt, how) = match (own_samples, handshakes) {
        (None, Some(handshakes)) => (handshakes, queued_handshakes_text(&handshakes)),
        (samples, _) => {
            let rtt = samples.or(data.map(path_round_trips)).unwrap_or_default();
            let how = format!(
                "each round trip grew with the bytes in flight (correlation {:.2})",
                rtt.in_flight_correlation.unwrap_or(0.0)
            );
            (rtt, how)
        }
    };
    let path_least = queued_path.map_or(f64::INFINITY, |queued| queued.least_ms);
    let least = rtt.min_ms.unwrap_or(0.0).min(path_least);
    let typical = rtt.median_ms.unwrap_or(0.0);
    let rate = shared_throughput(facts);
    let mut found = with_text(
        facts.kind,
        format!(
            "A bottleneck link sets the pace{}: round trips rose from {} to {} as a queue \
             built before it",
            rate.map_or(String::new(), |r| format!(" at {}", crate::units::rate(r))),
            duration(least),
            duration(typical)
        ),
        format!(
            "The {sender} kept more in flight than the path carries at once; the excess waited \
             in a queue before the slowest link, so {how} while the rate stayed at what the \
             link allows.{}",
            facts.example_text()
        ),
        "The link carries no more: send less (compress, cache), move the transfer to a faster \
         or less loaded path, or schedule it apart from interactive traffic; an AQM (fq_codel) \
         at the bottleneck keeps the queue short for everything else.",
    );
    found.figures.insert("rtt_min_ms", round(least));
    found.figures.insert("rtt_median_ms", round(typical));
    if let (Some(rate), Some(data)) = (rate, data) {
        let on_the_wire = data.wire_bytes as f64 / data.payload_bytes.max(1) as f64;
        found.figures.insert("throughput_bytes_per_s", round(rate));
        found
            .figures
            .insert("link_bytes_per_s", round(rate * on_the_wire));
        found
            .figures
            .insert("in_flight_max_bytes", data.max_bytes_in_flight as f64);
    }
    if let Some(receiver) = facts.receiver_data() {
        found
            .figures
            .insert("window_bytes", receiver.window.max as f64);
    }
    found
}

/// How handshakes showed the queue: they waited in it behind the data.
fn queued_handshakes_text(handshakes: &RttStats) -> String {
    format!(
        "{} made while the data crossed took {} (up to {}) against the path's least {}: \
         they waited in the queue behind it",
        count(handshakes.samples, "handshake"),
        duration(handshakes.median_ms.unwrap_or(0.0)),
        duration(handshakes.max_ms.unwrap_or(0.0)),
        duration(handshakes.min_ms.unwrap_or(0.0)),
    )
}

/// Of a direction's round-trip samples, those that time the whole path
/// from here: data to its ACK seen beside the sender, an ACK to the data it
/// let go seen beside the receiver; the longer, typically.
fn path_round_trips(data: &DirectionSummary) -> RttStats {
    let typical = |samples: &RttStats| samples.median_ms.unwrap_or(0.0);
    if typical(&data.release_lag) > typical(&data.rtt) {
        data.release_lag
    } else {
        data.rtt
    }
}

/// The rate of all the connections a cause touched, together, in the
/// direction of the example's sender: connections sharing a link share its rate.
fn shared_throughput(facts: &Facts) -> Option<f64> {
    let from_server = facts.stretch.map(|s| s.ended_by) == Some(Direction::ServerToClient);
    let (mut bytes, mut first, mut last) = (0u64, i64::MAX, i64::MIN);
    for c in facts.touched_connections() {
        let data = if from_server {
            &c.server_to_client
        } else {
            &c.client_to_server
        };
        bytes += data.unique_payload_bytes;
        first = first.min(c.first_ns);
        last = last.max(c.last_ns);
    }
    let seconds = (last - first) as f64 / 1e9;
    (bytes > 0 && seconds > 0.0).then(|| bytes as f64 / seconds)
}
