//! Client ports used again while the previous connection on the same
//! 4-tuple may still sit in TIME_WAIT: few ephemeral ports (a narrow range,
//! or SNAT sharing them) and one connection per request.

use decode::Endpoint;
use rustc_hash::FxHashMap;
use tcp::stack::TIME_WAIT_NS;
use tcp::{CloseHow, ConnState, ConnectionSummary, EventKind, Role};

use super::counted;
use crate::units::duration;
use crate::{median, rules};
use crate::{Finding, FindingKind, Inputs};

/// One connection opened on the 4-tuple of an earlier one.
struct Reuse<'a> {
    earlier: &'a ConnectionSummary,
    later: &'a ConnectionSummary,
    /// From the earlier connection's last packet to the later one's SYN.
    after_ms: f64,
}

impl Reuse<'_> {
    /// The later connection's SYN went unanswered, was refused or had to be sent again.
    fn troubled(&self) -> bool {
        !self.later.handshake.syn_retries_ns.is_empty()
            || self.later.state.failed_setup()
            || self.later.state == ConnState::RSTRH
    }

    /// Time from the first SYN to the handshake's end (or the last packet).
    fn setup_ms(&self) -> f64 {
        let handshake = &self.later.handshake;
        let syn = handshake.syn_ns.unwrap_or(self.later.first_ns);
        let done = handshake.ack_ns.unwrap_or(self.later.last_ns);
        (done - syn) as f64 / 1e6
    }
}

/// Each connection that reused the 4-tuple of an earlier one closed by FIN
/// less than a TIME_WAIT before.
fn reuses_in_time_wait(connections: &[ConnectionSummary]) -> Vec<Reuse<'_>> {
    let mut last_on_tuple: FxHashMap<(Endpoint, Endpoint), &ConnectionSummary> =
        FxHashMap::default();
    let mut reuses = Vec::new();
    for later in connections {
        let tuple = (later.client, later.server);
        if let Some(earlier) = last_on_tuple.insert(tuple, later) {
            let syn = later.handshake.syn_ns.unwrap_or(later.first_ns);
            let after_ns = syn - earlier.last_ns;
            if earlier.close.how == CloseHow::Fin && after_ns < TIME_WAIT_NS {
                reuses.push(Reuse {
                    earlier,
                    later,
                    after_ms: after_ns as f64 / 1e6,
                });
            }
        }
    }
    reuses
}

pub fn port_reuse(inputs: &Inputs) -> Option<Finding> {
    let reuses = reuses_in_time_wait(inputs.connections);
    let example = reuses.first()?;
    let server = example.later.server;
    let to_server: Vec<&ConnectionSummary> = inputs
        .connections
        .iter()
        .filter(|c| c.server == server)
        .collect();
    let mut ports: Vec<u16> = to_server.iter().map(|c| c.client.port).collect();
    ports.sort_unstable();
    ports.dedup();
    let (lowest, highest) = (ports.first()?, ports.last()?);
    let after = median(reuses.iter().map(|r| r.after_ms).collect());
    let troubled: Vec<&Reuse> = reuses.iter().filter(|r| r.troubled()).collect();
    let holder = example.earlier.close.by.unwrap_or(Role::Client).as_str();
    let handshakes_ms: f64 = reuses.iter().map(Reuse::setup_ms).sum();
    let time_wait_s = TIME_WAIT_NS / 1_000_000_000;
    let mut found = Finding::new(
        FindingKind::PortReuse,
        &format!(
            "{} reused a client port a median {} after the previous \
             connection on it closed, inside the {holder}'s TIME_WAIT ({time_wait_s} s on Linux); {} \
             to {server} came from {} ({lowest}-{highest})",
            counted(reuses.len(), "connection"),
            duration(after),
            counted(to_server.len(), "connection"),
            counted(ports.len(), "port")
        ),
        0.0,
    );
    found.connections = reuses.len() as u64;
    found.example_connection = Some(example.later.id);
    found.frames = inputs
        .evidence
        .frames_on(example.later.id, &[EventKind::ReusedPorts]);
    found.wireshark_filter = "tcp.analysis.reused_ports".into();
    found.explanation = format!(
        "The {holder} closed first, so it keeps each 4-tuple in TIME_WAIT for {time_wait_s} s (Linux; \
         120 to 240 s on Windows), yet the client opened a new connection on the same port \
         {} later: it has too few ephemeral ports for the connections it opens (a \
         narrow ip_local_port_range, or an SNAT pool shared by many hosts), and it opens one \
         connection per request. {}",
        duration(after),
        if troubled.is_empty() {
            "Here every such SYN was accepted, but a SYN that meets TIME_WAIT can be answered \
             by an old ACK and a reset, and then waits a 1 s SYN retry; once the ports run out, \
             connects fail."
                .to_string()
        } else {
            format!(
                "{} of these SYNs went unanswered, {} refused or sent again: the symptom of \
                 port exhaustion.",
                troubled.len(),
                if troubled.len() == 1 { "was" } else { "were" }
            )
        }
    );
    found.fix = format!(
        "Reuse connections (HTTP keep-alive, a connection pool) instead of one per request; \
         widen net.ipv4.ip_local_port_range on the client (here {lowest}-{highest}), add source \
         addresses to the SNAT pool, or let the client close first."
    );
    found.what_if = format!(
        "With connections kept open, {} ({} in all) and the risk of refused SYNs would go.",
        match reuses.len() {
            1 => "this handshake".to_string(),
            count => format!("these {count} handshakes"),
        },
        duration(handshakes_ms)
    );
    if troubled.is_empty() {
        found.suspected = Some(
            "no reuse failed here yet: every SYN into TIME_WAIT was accepted, which holds only \
             while the stacks' timestamps let it"
                .into(),
        );
    }
    found.figures.insert("connections", to_server.len() as f64);
    found.figures.insert("client_ports", ports.len() as f64);
    found
        .figures
        .insert("reuses_in_time_wait", reuses.len() as f64);
    found.figures.insert("reuse_after_ms", after);
    found
        .figures
        .insert("troubled_reuses", troubled.len() as f64);
    found.severity = rules::structural_severity(reuses.len(), troubled.len());
    Some(found)
}
