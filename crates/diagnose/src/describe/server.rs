//! Server time: how long the server took to answer, the stalls it makes
//! at a steady period, and answers it wrote in pieces with pauses between.
//! (A saturated server and a pool too small for its front are the
//! detectors'.)

use std::collections::BTreeMap;

use super::{count, duration, round, with_text, Facts};
use crate::cause::Cause;
use crate::charges::CauseTotal;
use crate::{patterns, Finding, Inputs};

pub(super) fn split_response(facts: &Facts) -> Finding {
    let typical = facts.typical_wait_ms();
    let mut found = with_text(
        facts.kind,
        format!(
            "{} written in pieces with {} of {} each between them",
            count(facts.total.transactions(), "response"),
            count(facts.stretches(), "pause"),
            duration(typical)
        ),
        format!(
            "The server sent part of each response, then nothing, with the window open and \
             nothing outstanding, then the next part: its application wrote the response in \
             pieces with pauses between them, and the client waited for the last.{}",
            facts.example_text()
        ),
        "Build each response in full and write it in one call (or cork the socket with \
         TCP_CORK until it is complete); find what the server waits for between the pieces.",
    );
    found.figures.insert("pause_ms", round(typical));
    found.figures.insert("pauses", facts.stretches() as f64);
    found
}

pub(super) fn server_think(facts: &Facts, totals: &BTreeMap<Cause, CauseTotal>) -> Finding {
    let typical = facts.total.median_per_transaction_ms();
    let slowest = facts.total.most_per_transaction_ms();
    let answered = facts.total.transactions();
    let carved = [Cause::PeriodicStalls, Cause::ServerSaturation]
        .iter()
        .any(|cause| totals.contains_key(cause));
    let server = facts
        .example
        .map(|c| c.server.to_string())
        .unwrap_or_default();
    let spread = if answered > 1 {
        format!(
            " ({} typically, {} at most)",
            duration(typical),
            duration(slowest)
        )
    } else {
        String::new()
    };
    let mut found = with_text(
        facts.kind,
        format!(
            "The server {server} took {} to answer {}{spread}{}",
            duration(facts.total.cost_ms),
            count(answered, "request"),
            if carved { ", besides its stalls" } else { "" }
        ),
        format!(
            "Between the last byte of each request and the first byte of its answer, less the \
             round trip to the server, nothing was on the wire and no TCP wait was pending: the \
             time was spent inside the server.{}",
            facts.example_text()
        ),
        "Profile the server application and what it calls (databases, back ends); the network \
         and TCP are not what makes these requests slow.",
    );
    found.figures.insert("server_ms", round(typical));
    found
}

pub(super) fn periodic_stalls(facts: &Facts, inputs: &Inputs) -> Finding {
    let pattern = patterns::stall_pattern(inputs);
    let (length, period, stalls) =
        pattern.map_or((0.0, 0.0, 0), |p| (p.length_ms, p.period_s, p.count));
    let mut found = with_text(
        facts.kind,
        format!(
            "The server stalls about {} every {:.2} s ({} times)",
            duration(length),
            period,
            stalls
        ),
        format!(
            "Most answers come at the usual pace, but these waited far longer with nothing on \
             the wire, at a steady interval: the server stops as a whole, as with garbage \
             collection, a periodic job, log rotation or a flush.{}",
            facts.example_text()
        ),
        "Find what the server runs on that period (GC logs, cron, flushes, checkpoints) and \
         spread it out or take it off the request path.",
    );
    found.figures.insert("stall_ms", round(length));
    found.figures.insert("period_s", round(period));
    found.figures.insert("stalls", stalls as f64);
    found
}

pub(super) fn server_idle(facts: &Facts) -> Finding {
    let pauses = facts.stretches().max(1);
    with_text(
        facts.kind,
        format!(
            "The server took {} at its own pace where no one was shown to wait ({}, {} each \
             on average)",
            duration(facts.total.cost_ms),
            count(pauses, "pause"),
            duration(facts.total.cost_ms / pauses as f64)
        ),
        format!(
            "The server sent these messages after pauses that no one was shown to be waiting \
             through: the client's message before them asked for no answer, its protocol \
             says the server's message before the pause was complete, or, where the protocol \
             does not say, the client did not move on at once once the server was done (a \
             person reading or typing, pushed updates, a connection idle before it closed). \
             It is not counted as time lost.{}",
            facts.example_text()
        ),
        "Nothing to change unless someone was in fact waiting for these messages.",
    )
}
