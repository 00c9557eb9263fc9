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
            "The server takes {typical:.1} ms to answer ({}): {:.0}% of their time",
            match thinks.len() {
                1 => "1 request".to_string(),
                count => format!("median of {count} requests"),
            },
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

/// Answered transactions needed to judge how response time follows load.
const SATURATION_MIN_TRANSACTIONS: usize = 24;
/// Transactions per time window, on average.
const TRANSACTIONS_PER_WINDOW: usize = 4;
const MAX_WINDOWS: usize = 30;

/// Load, throughput and server time in one window of the capture.
struct Window {
    /// Transactions in flight, on average (Little's law: in-flight time / window).
    concurrency: f64,
    /// Responses completed per second.
    throughput: f64,
    /// Median server time of the transactions that started in the window.
    server_ms: f64,
}

/// Server time rising with concurrency while throughput stays flat: the
/// server (or a pool in front of it) is saturated and requests queue.
pub fn saturation(inputs: &Inputs) -> Option<Finding> {
    let answered: Vec<&transactions::Transaction> = inputs
        .transactions
        .iter()
        .filter(|t| t.response_end_ns.is_some())
        .collect();
    if answered.len() < SATURATION_MIN_TRANSACTIONS {
        return None;
    }
    let windows = windows(&answered);
    if windows.len() < 6 {
        return None;
    }
    let mut by_load = windows;
    by_load.sort_by(|a, b| a.concurrency.total_cmp(&b.concurrency));
    let third = by_load.len() / 3;
    let (low, high) = (&by_load[..third], &by_load[by_load.len() - third..]);
    let mean = |windows: &[Window], of: fn(&Window) -> f64| {
        windows.iter().map(of).sum::<f64>() / windows.len() as f64
    };
    let (load, rate, server) = (
        mean(high, |w| w.concurrency),
        mean(high, |w| w.throughput),
        mean(high, |w| w.server_ms),
    );
    // At the busiest times the server does as much work as it ever does (a
    // stall would cut throughput instead) ...
    let mut rates: Vec<f64> = by_load.iter().map(|w| w.throughput).collect();
    rates.sort_by(f64::total_cmp);
    let peak_rate = rates[rates.len() * 9 / 10];
    // ... and already did at a far lower load, when answers came far sooner.
    let knee = by_load[..by_load.len() - third]
        .iter()
        .find(|w| w.throughput >= 0.75 * rate)?;
    let saturated = rate >= 0.75 * peak_rate
        && load >= (2.0 * knee.concurrency).max(1.5)
        && server >= (2.0 * knee.server_ms).max(knee.server_ms + 20.0);
    if !saturated {
        return None;
    }
    let baseline = median(low.iter().map(|w| w.server_ms).collect());
    let queued: Vec<&&transactions::Transaction> = answered
        .iter()
        .filter(|t| t.latency.server_ms > 2.0 * baseline.max(1.0))
        .collect();
    let cost: f64 = queued.iter().map(|t| t.latency.server_ms - baseline).sum();
    let mut found = finding(
        "server_saturation",
        format!(
            "Server saturated: its response time rose from {:.0} ms to {:.0} ms as \
             concurrency rose from {:.1} to {:.1}, while throughput stayed at {:.1} \
             transactions/s",
            knee.server_ms, server, knee.concurrency, load, rate
        ),
        cost,
    );
    found.transactions = queued.len() as u64;
    found.connections = distinct_connections(queued.iter().map(|t| t.connection));
    found.example_connection = queued
        .iter()
        .max_by(|a, b| a.latency.server_ms.total_cmp(&b.latency.server_ms))
        .map(|t| t.connection);
    found.wireshark_filter = "tcp.len > 0".into();
    found.explanation = format!(
        "When more requests are in flight the server answers no faster ({:.1} transactions/s \
         at the busiest times against {:.1} at a far lower load) but each one waits longer: \
         requests queue for a limited resource (worker threads, a connection pool, a lock, \
         CPU), so response time grows with the queue (Little's law).",
        rate, knee.throughput
    );
    found.fix = "Find the limit the requests queue for (worker or pool size, a lock, CPU, a \
        back end) and raise it, or shed or spread the load."
        .into();
    found.what_if = format!(
        "Without the queueing, {} transactions would each be answered in about {baseline:.0} \
         ms, saving {:.1} s.",
        queued.len(),
        cost / 1e3
    );
    found.suspected = Some(
        "inferred from how response time and throughput follow the load; the server's own \
         queue is not visible on the wire"
            .into(),
    );
    Some(found)
}

/// The capture cut into windows holding a few transactions each.
fn windows(answered: &[&transactions::Transaction]) -> Vec<Window> {
    let start = answered
        .iter()
        .map(|t| t.request_start_ns)
        .min()
        .unwrap_or(0);
    let end = answered
        .iter()
        .filter_map(|t| t.response_end_ns)
        .max()
        .unwrap_or(start);
    let count = (answered.len() / TRANSACTIONS_PER_WINDOW).clamp(1, MAX_WINDOWS);
    let width = ((end - start) / count as i64).max(1);
    let seconds = width as f64 / 1e9;
    (0..count as i64)
        .filter_map(|i| {
            let (from, to) = (start + i * width, start + (i + 1) * width);
            let in_flight_ns: i64 = answered
                .iter()
                .map(|t| {
                    let finish = t.response_end_ns.unwrap_or(t.request_end_ns);
                    (finish.min(to) - t.request_start_ns.max(from)).max(0)
                })
                .sum();
            let completed = answered
                .iter()
                .filter(|t| {
                    t.response_end_ns
                        .is_some_and(|end| (from..to).contains(&end))
                })
                .count();
            let started: Vec<f64> = answered
                .iter()
                .filter(|t| (from..to).contains(&t.request_start_ns))
                .map(|t| t.latency.server_ms)
                .collect();
            (!started.is_empty()).then(|| Window {
                concurrency: in_flight_ns as f64 / width as f64,
                throughput: completed as f64 / seconds,
                server_ms: median(started),
            })
        })
        .collect()
}
