//! Connection-setup failures: SYNs sent again, unanswered and refused attempts.

use tcp::{ConnectionSummary, EventKind};

use super::{finding, median};
use crate::{Finding, Inputs};

pub fn setup_failures(inputs: &Inputs) -> Option<Finding> {
    let retried: Vec<&ConnectionSummary> = inputs
        .connections
        .iter()
        .filter(|c| !c.handshake.syn_retries_ns.is_empty())
        .collect();
    let unanswered = inputs
        .connections
        .iter()
        .filter(|c| c.state == "S0")
        .count();
    let refused = inputs
        .connections
        .iter()
        .filter(|c| c.state == "REJ")
        .count();
    if retried.is_empty() && refused == 0 {
        return None;
    }
    let waits: Vec<f64> = retried.iter().map(|c| setup_wait_ms(c)).collect();
    let cost: f64 = waits.iter().sum();
    let most_retried = retried
        .iter()
        .max_by_key(|c| c.handshake.syn_retries_ns.len());
    let intervals = most_retried.map_or(String::new(), |c| retry_offsets(c));
    let mut found = finding(
        "connection_setup_failure",
        format!(
            "{} connection attempts waited for SYN retries (after {intervals} s); \
             {unanswered} never answered, {refused} refused",
            retried.len()
        ),
        cost,
    );
    found.connections = (retried.len() + refused) as u64;
    found.example_connection = most_retried.map(|c| c.id);
    found.frames = inputs.evidence.frames(&[EventKind::SynRetransmission]);
    found.wireshark_filter =
        "tcp.flags.syn == 1 && tcp.flags.ack == 0 && tcp.analysis.retransmission".into();
    found.explanation = "The client's SYNs went unanswered, so it waited a retransmission \
        timeout (1 s, then doubling) before each new try. SYNs are lost when the server's \
        listen queue is full, a firewall or load balancer drops them, or SNAT runs out of ports."
        .into();
    found.fix = "Check the server's listen backlog (ss -lnt: Recv-Q against Send-Q) and raise \
        it with the application's backlog and net.core.somaxconn; look for SYN drops on \
        firewalls and load balancers, and for SNAT port exhaustion."
        .into();
    found.what_if = format!(
        "Answered at once, these connections would open in one round trip instead of a median \
         {:.1} s.",
        median(waits) / 1e3
    );
    Some(found)
}

/// SYN to SYN-ACK for an answered connection; first to last packet otherwise.
fn setup_wait_ms(connection: &ConnectionSummary) -> f64 {
    let handshake = &connection.handshake;
    let syn = handshake.syn_ns.unwrap_or(connection.first_ns);
    let end = handshake.syn_ack_ns.unwrap_or(connection.last_ns);
    (end - syn) as f64 / 1e6
}

fn retry_offsets(connection: &ConnectionSummary) -> String {
    let syn = connection.handshake.syn_ns.unwrap_or(connection.first_ns);
    let offsets: Vec<String> = connection
        .handshake
        .syn_retries_ns
        .iter()
        .map(|at| format!("{:.0}", (at - syn) as f64 / 1e9))
        .collect();
    offsets.join(", ")
}
