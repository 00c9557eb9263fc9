//! Client time: a client that opened its connection before its request
//! was ready, that paused between turns at its own pace, and an
//! application (the client's, or a bulk answer's sender) that paced its
//! own sending.

use transactions::Part;

use super::{bytes, count, duration, with_text, Facts};
use crate::{Finding, Inputs};

pub(super) fn application_limited(facts: &Facts) -> Finding {
    let (sender, _) = facts.sender();
    let in_flight = facts.sender_data().map_or(0, |d| d.max_bytes_in_flight);
    with_text(
        facts.kind,
        format!(
            "The {sender}'s application paced its sending: {} with nothing left to send and \
             the window open, {} in all",
            count(facts.stretches(), "pause"),
            duration(facts.total.cost_ms)
        ),
        format!(
            "Between writes the {sender} had nothing outstanding (at most {} in flight) and the \
             receiver's window was open: neither TCP nor the path held the data back; the \
             application did not hand it over sooner.{}",
            bytes(in_flight),
            facts.example_text()
        ),
        "Find what the sending application waits for between writes (a timer, a rate limit, \
         a slow source, a disk) and feed the socket faster or in larger writes.",
    )
}

pub(super) fn client_delay(facts: &Facts, inputs: &Inputs) -> Finding {
    let between: f64 = inputs
        .transactions
        .iter()
        .map(|t| t.ledger.get(Part::ClientThink))
        .sum();
    let connections = facts.total.per_connection.len().max(1) as u64;
    let thinking = if between > 0.0 {
        format!(" Besides, it thought {} between turns.", duration(between))
    } else {
        String::new()
    };
    with_text(
        facts.kind,
        format!(
            "The client opened {} and waited {} before its first request{}",
            count(connections, "connection"),
            duration(facts.total.cost_ms / connections as f64),
            if connections > 1 {
                " on each, on average"
            } else {
                ""
            }
        ),
        format!(
            "The handshake was done and the server was ready, yet the client sent nothing: \
             the connection was opened before the request was, and the time went to the \
             client's own application, not to the network or the server.{thinking}{}",
            facts.example_text()
        ),
        "Look at what the client does between connecting and asking (name lookups, \
         authentication, building the request, waiting on another service); open the \
         connection only once the request is ready, or keep one open and reuse it.",
    )
}

pub(super) fn client_think(facts: &Facts) -> Finding {
    let pauses = facts.stretches().max(1);
    with_text(
        facts.kind,
        format!(
            "The client paused {} between turns ({}, {} each on average): its own pace",
            duration(facts.total.cost_ms),
            count(pauses, "pause"),
            duration(facts.total.cost_ms / pauses as f64)
        ),
        format!(
            "The client sent these requests well after the answer before them, or paused \
             between messages that no one was shown to wait for (a protocol whose lengths \
             say the message was complete, or one whose lengths are not known): the \
             client's application (or its user) took the time, so it is not counted as time \
             lost to the network or the server.{}",
            facts.example_text()
        ),
        "Nothing to change in the network or the server. If the client should not pause, \
         look at what it does between an answer and its next request.",
    )
}
