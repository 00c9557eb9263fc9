//! Time spent inside the server: think time, and stalls at a steady period.

use super::{connection_by_id, distinct_connections, finding, median};
use crate::{Finding, Inputs};

/// A server pause at least this long, and ten times the usual, is a stall.
const STALL_MS: f64 = 100.0;

/// The round trip from the capture point to the server and back: zero when
/// the capture was taken at the server.
fn server_side_rtt_ms(inputs: &Inputs, connection: u64) -> f64 {
    connection_by_id(inputs, connection)
        .and_then(|c| c.handshake.rtt_to_server_ms)
        .unwrap_or(0.0)
}

pub fn server_think_time(inputs: &Inputs) -> Option<Finding> {
    let thinks: Vec<f64> = inputs
        .transactions
        .iter()
        .filter_map(|t| {
            let think = t.server_think_ms? - server_side_rtt_ms(inputs, t.connection);
            Some(think.max(0.0))
        })
        .collect();
    let total_think: f64 = thinks.iter().sum();
    let total: f64 = inputs.transactions.iter().map(|t| t.duration_ms).sum();
    let typical = median(thinks.clone());
    if thinks.is_empty() || total_think < 0.3 * total || typical < 10.0 {
        return None;
    }
    let durations = median(inputs.transactions.iter().map(|t| t.duration_ms).collect());
    let mut found = finding(
        "server_think_time",
        format!(
            "The server takes {typical:.1} ms to answer (median of {} requests): {:.0}% of \
             transaction time",
            thinks.len(),
            100.0 * total_think / total
        ),
        total_think,
    );
    found.transactions = thinks.len() as u64;
    found.connections = distinct_connections(inputs.transactions.iter().map(|t| t.connection));
    found.example_connection = inputs.transactions.first().map(|t| t.connection);
    found.wireshark_filter = "tcp.len > 0".into();
    found.explanation = "Between the last byte of each request and the first byte of its \
        response, less the round trip to the server, the network is idle: the time is spent \
        inside the server."
        .into();
    found.fix = "Profile the server application and what it calls (databases, back ends); \
        the network and TCP are not what makes these requests slow."
        .into();
    found.what_if = format!(
        "With instant answers the median transaction would take {:.1} ms instead of {durations:.1} ms.",
        (durations - typical).max(0.0)
    );
    Some(found)
}

/// Server answers that now and then take many times the usual think time,
/// at a steady interval: something in the server stops periodically.
pub fn periodic_stalls(inputs: &Inputs) -> Option<Finding> {
    let thinks: Vec<(i64, f64, u64)> = inputs
        .transactions
        .iter()
        .filter_map(|t| Some((t.request_end_ns, t.server_think_ms?, t.connection)))
        .collect();
    let usual = median(thinks.iter().map(|&(_, think, _)| think).collect());
    let stalls: Vec<(i64, f64, u64)> = thinks
        .into_iter()
        .filter(|&(_, think, _)| think >= STALL_MS && think >= 10.0 * usual.max(1.0))
        .collect();
    if stalls.len() < 3 {
        return None;
    }
    let intervals: Vec<f64> = stalls
        .windows(2)
        .map(|pair| (pair[1].0 - pair[0].0) as f64 / 1e9)
        .collect();
    let period = median(intervals.clone());
    let regular = intervals
        .iter()
        .all(|gap| (gap - period).abs() <= 0.2 * period);
    let length = median(stalls.iter().map(|&(_, think, _)| think).collect());
    let cost: f64 = stalls.iter().map(|&(_, think, _)| think - usual).sum();
    let mut found = finding(
        "periodic_stalls",
        format!(
            "The server stalls about {length:.0} ms{} ({} times)",
            if regular {
                format!(" every {period:.2} s")
            } else {
                String::new()
            },
            stalls.len()
        ),
        cost,
    );
    found.transactions = stalls.len() as u64;
    found.connections = distinct_connections(stalls.iter().map(|&(.., connection)| connection));
    found.example_connection = stalls.first().map(|&(.., connection)| connection);
    found.wireshark_filter = "tcp.len > 0".into();
    found.explanation = format!(
        "Most requests are answered in {usual:.1} ms, but these wait {length:.0} ms with no \
         data moving either way{}: the server stops as a whole, as with garbage collection, \
         a periodic job, log rotation or a flush.",
        if regular {
            ", at a steady interval"
        } else {
            ""
        }
    );
    found.fix = "Find what the server runs on that period (GC logs, cron, flushes, \
        checkpoints) and spread it out or take it off the request path."
        .into();
    found.what_if = format!(
        "Without the stalls {:.2} s of waiting would go.",
        cost / 1e3
    );
    if !regular {
        found.suspected = Some("the stalls are not evenly spaced".into());
    }
    Some(found)
}
