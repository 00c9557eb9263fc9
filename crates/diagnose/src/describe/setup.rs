//! Setup time: connections whose handshake completed while the server's
//! accept queue was full. (Handshakes that failed or were tried again are
//! the setup detector's, in `detectors::setup`.)

use super::{count, duration, with_text, Facts};
use crate::Finding;

pub(super) fn accept_queue(facts: &Facts) -> Finding {
    with_text(
        facts.kind,
        format!(
            "{} completed the handshake, but the server took nothing in for {} in all: its \
             accept queue was full",
            count(facts.total.transactions(), "connection"),
            duration(facts.total.cost_ms)
        ),
        format!(
            "The client's ACK completed the handshake, yet the server sent its SYN-ACK again \
             and acknowledged none of the request, which the client had to resend: the \
             server's listen (accept) queue was full, so the kernel dropped the client's ACK \
             and data until the application accepted connections again.{}",
            facts.example_text()
        ),
        "Have the server accept faster (more acceptor threads, no blocking work before accept), \
         and raise its listen backlog (the application's backlog and net.core.somaxconn).",
    )
}
