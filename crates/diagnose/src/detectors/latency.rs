//! Where the latency sits: all transaction time split into network, server,
//! client and TCP's own waits, and which part dominates.
//!
//! A summary rather than a cause: it costs nothing (and ranks last) beside a
//! specific finding, and takes the time of its dominant part only when
//! nothing more specific explains a slow capture and that part is one to fix
//! (the server, or TCP's waits).

use transactions::Latency;

use super::{distinct_connections, finding, median};
use crate::{Finding, Inputs};

/// Transactions quicker than this, typically, are not slow enough to explain.
const SLOW_TRANSACTION_MS: f64 = 50.0;

/// The split of all transaction time; `alone` when no other detector found anything.
pub fn latency_split(inputs: &Inputs, alone: bool) -> Option<Finding> {
    if inputs.transactions.is_empty() {
        return None;
    }
    let mut sum = Latency::default();
    for t in inputs.transactions {
        sum.add(&t.latency);
    }
    let total = sum.total_ms();
    if total <= 0.0 {
        return None;
    }
    let parts = sum.parts();
    let &(dominant, dominant_ms) = parts.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    let typical = median(inputs.transactions.iter().map(|t| t.duration_ms).collect());
    let actionable = matches!(dominant, "server" | "tcp_waits");
    let cost = if alone && actionable && typical >= SLOW_TRANSACTION_MS {
        dominant_ms
    } else {
        0.0
    };
    let figures: Vec<String> = parts
        .iter()
        .map(|&(part, ms)| {
            format!(
                "{} {} ({:.0}%)",
                words(part),
                duration(ms),
                100.0 * ms / total
            )
        })
        .collect();
    let mut found = finding(
        "latency_split",
        format!(
            "Where the latency sits: mostly {}, {:.0}% of {} ({})",
            words(dominant),
            100.0 * dominant_ms / total,
            duration(total),
            figures.join(", ")
        ),
        cost,
    );
    found.transactions = inputs.transactions.len() as u64;
    found.connections = distinct_connections(inputs.transactions.iter().map(|t| t.connection));
    let example = inputs
        .transactions
        .iter()
        .max_by(|a, b| part_of(&a.latency, dominant).total_cmp(&part_of(&b.latency, dominant)))?;
    found.example_connection = Some(example.connection);
    found.wireshark_filter = format!("tcp.stream == {}", example.connection);
    found.explanation = format!(
        "Each transaction's time at the capture point is split into the network (round trips \
         and transfer: {}), the server (think time less the round trip to it: {}), TCP's own \
         waits (retransmission timeouts, delayed ACKs, zero windows: {}) and the client's \
         think time before its next request ({}). Transaction {} of connection {} spends the \
         most on the {}.",
        duration(sum.network_ms),
        duration(sum.server_ms),
        duration(sum.tcp_wait_ms),
        duration(sum.client_ms),
        example.index,
        example.connection,
        words(dominant)
    );
    found.fix = match dominant {
        "server" => "Look inside the server: its processing, and what it waits on.",
        "tcp_waits" => "See the loss, delayed-ACK and window findings for which TCP wait it is.",
        "client" => "The client pauses between requests: look at what it does between them.",
        _ => "Fewer round trips (batching, reuse of connections) or a shorter path help most.",
    }
    .into();
    found.what_if = format!(
        "Without the {} time, transactions would take {:.0}% less.",
        words(dominant),
        100.0 * dominant_ms / total
    );
    Some(found)
}

fn words(part: &str) -> &'static str {
    match part {
        "network" => "network",
        "server" => "server",
        "client" => "client",
        _ => "TCP waits",
    }
}

fn part_of(latency: &Latency, part: &str) -> f64 {
    latency
        .parts()
        .iter()
        .find(|(name, _)| *name == part)
        .map_or(0.0, |&(_, ms)| ms)
}

/// Milliseconds below ten seconds, seconds above.
fn duration(ms: f64) -> String {
    if ms >= 10_000.0 {
        format!("{:.1} s", ms / 1e3)
    } else {
        format!("{ms:.1} ms")
    }
}
