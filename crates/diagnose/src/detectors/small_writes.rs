//! Responses written as many tiny segments spread out in time.

use super::{distinct_connections, finding, median};
use crate::{Finding, Inputs};

/// Segments smaller than this on average are tiny.
const TINY_SEGMENT_BYTES: u64 = 100;

/// Responses written as several tiny segments spread out in time.
pub fn small_writes(inputs: &Inputs) -> Option<Finding> {
    let chopped: Vec<&transactions::Transaction> = inputs
        .transactions
        .iter()
        .filter(|t| {
            t.response_packets >= 3
                && t.response_bytes / t.response_packets < TINY_SEGMENT_BYTES
                && t.response_transfer_ms.is_some_and(|ms| ms >= 5.0)
        })
        .collect();
    if chopped.len() < 2 {
        return None;
    }
    let spread: Vec<f64> = chopped
        .iter()
        .filter_map(|t| t.response_transfer_ms)
        .collect();
    let example = chopped[0];
    let mut found = finding(
        "small_segments",
        format!(
            "{} responses written as {} tiny segments of {} bytes in all, spread over {:.0} ms",
            chopped.len(),
            example.response_packets,
            example.response_bytes,
            median(spread.clone())
        ),
        spread.iter().sum(),
    );
    found.transactions = chopped.len() as u64;
    found.connections = distinct_connections(chopped.iter().map(|t| t.connection));
    found.example_connection = Some(example.connection);
    found.wireshark_filter = format!("tcp.stream == {} && tcp.len > 0", example.connection);
    found.explanation = "The server writes each response in several small pieces with pauses \
        between them, and TCP sends each piece at once: the client waits for the last one."
        .into();
    found.fix = "Build each response in full and write it in one call (or cork the socket \
        with TCP_CORK until it is complete)."
        .into();
    found.what_if = format!(
        "Written at once, each response would arrive about {:.0} ms sooner.",
        median(spread)
    );
    Some(found)
}
