//! Chattiness: many request/response turns, each paying a round trip.

use super::{distinct_connections, finding, rtt_ms};
use crate::{Finding, Inputs};

/// A connection with this many turns over a round trip this long is chatty.
const CHATTY_TURNS: u64 = 10;
const CHATTY_RTT_MS: f64 = 5.0;

/// Many short exchanges in a row, each costing a round trip.
pub fn chattiness(inputs: &Inputs) -> Option<Finding> {
    let mut answered: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    for t in inputs
        .transactions
        .iter()
        .filter(|t| t.response_end_ns.is_some())
    {
        *answered.entry(t.connection).or_default() += 1;
    }
    let mut turns = 0u64;
    let mut cost = 0.0;
    let mut worst: Option<(u64, u64, f64)> = None;
    for connection in inputs.connections {
        let rtt = rtt_ms(connection);
        let exchanges = answered.get(&connection.id).copied().unwrap_or(0);
        if exchanges < CHATTY_TURNS || rtt < CHATTY_RTT_MS {
            continue;
        }
        turns += exchanges;
        cost += exchanges as f64 * rtt;
        if exchanges > worst.map_or(0, |(_, n, _)| n) {
            worst = Some((connection.id, exchanges, rtt));
        }
    }
    let total: f64 = inputs.transactions.iter().map(|t| t.duration_ms).sum();
    let (example, exchanges, rtt) = worst?;
    if cost < 0.5 * total {
        return None;
    }
    let mut found = finding(
        "chattiness",
        format!("{turns} request/response turns, each waiting a {rtt:.1} ms round trip"),
        cost,
    );
    found.transactions = turns;
    found.connections = distinct_connections(
        inputs
            .transactions
            .iter()
            .filter(|t| t.response_end_ns.is_some())
            .map(|t| t.connection),
    );
    found.example_connection = Some(example);
    found.wireshark_filter = format!("tcp.stream == {example} && tcp.len > 0");
    found.explanation = format!(
        "The application waits for each answer before asking the next question, so every \
         turn costs a full round trip ({exchanges} turns on connection {example}): the time \
         goes into distance, not into work or bandwidth."
    );
    found.fix = "Send fewer, larger requests: batch or pipeline them, fetch in parallel, or \
        move the client closer to the server."
        .into();
    found.what_if = format!(
        "Ten times fewer turns would save about {:.1} s.",
        0.9 * cost / 1e3
    );
    Some(found)
}
