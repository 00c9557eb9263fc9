//! Source NAT running out of ports on the proxy's back side.
//!
//! Behind a source NAT every back connection to one server leaves from a
//! few (address, port) pairs. Two signs show the range is exhausted. A
//! port is taken again while the TIME_WAIT of its previous connection still
//! runs (a host picking its own ports would leave it alone that long).
//! And a front connection comes in while every port the back side ever
//! used to that server is held by an open connection: its back connection
//! then opens late — the NAT dropped the proxy's SYNs until a port freed
//! and a retry found it. Front connections that asked something and never
//! had a back connection meanwhile are the ones no retry found a port for.

use std::collections::BTreeMap;

use decode::Endpoint;
use serde::Serialize;
use tcp::stack::TIME_WAIT_NS;
use tcp::ConnectionSummary;

use super::median;
use super::side::Side;

#[derive(Debug, Clone, Serialize)]
pub struct SnatExhaustion {
    /// The server behind the proxy, as the back side saw it.
    pub server: String,
    /// The address the back connections came from, and how many ports.
    pub source: String,
    pub source_ports: usize,
    pub back_connections: usize,
    /// Back connections on a 4-tuple whose previous connection had closed
    /// less than a TIME_WAIT before.
    pub reused_in_time_wait: usize,
    /// From that previous connection's end to the new SYN, the median.
    pub reuse_after_ms_p50: Option<f64>,
    /// Front connections that came in with every port held and got their
    /// back connection later.
    pub connects_waited: usize,
    /// From the front connection's handshake to its back connection's SYN, the median.
    pub connect_wait_ms_p50: Option<f64>,
    /// Front connections that asked something and never got a back connection.
    pub connects_failed: usize,
}

/// When the front connection was taken in, and its back connection if it had one.
pub struct FrontArrival<'a> {
    pub front: &'a ConnectionSummary,
    pub back: Option<&'a ConnectionSummary>,
    /// It carried a request.
    pub asked: bool,
}

/// The exhaustion of the back side's source ports toward its busiest
/// server, if it shows: ports reused in TIME_WAIT, or front connections
/// arriving with every port held.
pub fn exhaustion(back: &Side, arrivals: &[FrontArrival]) -> Option<SnatExhaustion> {
    let mut by_server: BTreeMap<(String, String), Vec<&ConnectionSummary>> = BTreeMap::new();
    for connection in back
        .connections
        .iter()
        .filter(|c| c.handshake.syn_ns.is_some())
    {
        let key = (
            connection.server.to_string(),
            connection.client.ip.to_string(),
        );
        by_server.entry(key).or_default().push(connection);
    }
    let ((server, source), mut connections) = by_server
        .into_iter()
        .max_by_key(|(_, connections)| connections.len())?;
    connections.sort_by_key(|c| c.first_ns);
    let ports: std::collections::BTreeSet<u16> =
        connections.iter().map(|c| c.client.port).collect();
    let reuses = reuses_in_time_wait(&connections);
    let mut opened: Vec<i64> = connections.iter().map(|c| c.first_ns).collect();
    let mut ended: Vec<i64> = connections.iter().map(|c| c.last_ns).collect();
    opened.sort_unstable();
    ended.sort_unstable();
    // Open at `at_ns`: opened by then and not yet ended (each ends after it opens).
    let full_at = |at_ns: i64| {
        let open = opened.partition_point(|&t| t <= at_ns) - ended.partition_point(|&t| t <= at_ns);
        open >= ports.len()
    };
    // A back connection opened before the front one came in was not
    // opened for it (a pooling proxy's): it waited for no port.
    let waits: Vec<f64> = arrivals
        .iter()
        .filter(|a| full_at(taken_in_ns(a.front)))
        .filter_map(|a| {
            let back = a.back.filter(|back| back.server.to_string() == server)?;
            let wait_ns = back.first_ns - taken_in_ns(a.front);
            (wait_ns >= 0).then_some(wait_ns as f64 / 1e6)
        })
        .collect();
    if reuses.is_empty() && waits.is_empty() {
        return None;
    }
    // With the ports recycled or all held, a connection the proxy never
    // made to the server is one the NAT had no port for.
    let back_span = connections[0].first_ns..=connections.iter().map(|c| c.last_ns).max()?;
    let failed = arrivals
        .iter()
        .filter(|a| a.asked && a.back.is_none() && back_span.contains(&taken_in_ns(a.front)))
        .count();
    Some(SnatExhaustion {
        server,
        source,
        source_ports: ports.len(),
        back_connections: connections.len(),
        reused_in_time_wait: reuses.len(),
        reuse_after_ms_p50: median(reuses),
        connects_waited: waits.len(),
        connect_wait_ms_p50: median(waits),
        connects_failed: failed,
    })
}

/// When the proxy took the front connection in, and could first try for a
/// back connection: the handshake's last ACK.
fn taken_in_ns(front: &ConnectionSummary) -> i64 {
    front.handshake.ack_ns.unwrap_or(front.first_ns)
}

/// For each connection on a 4-tuple whose previous connection ended less
/// than a TIME_WAIT before its SYN: the milliseconds in between.
fn reuses_in_time_wait(connections: &[&ConnectionSummary]) -> Vec<f64> {
    let mut ended: BTreeMap<(Endpoint, Endpoint), i64> = BTreeMap::new();
    let mut reuses = Vec::new();
    for connection in connections {
        let tuple = (connection.client, connection.server);
        let syn_ns = connection.handshake.syn_ns.unwrap_or(connection.first_ns);
        if let Some(&end) = ended.get(&tuple) {
            if syn_ns - end < TIME_WAIT_NS {
                reuses.push((syn_ns - end) as f64 / 1e6);
            }
        }
        ended.insert(tuple, connection.last_ns);
    }
    reuses
}
