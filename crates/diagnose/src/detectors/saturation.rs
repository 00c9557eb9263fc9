//! Server saturation: response time rising with the number of requests in
//! flight while throughput stays flat, so requests queue inside the server.

use transactions::Part;

use super::distinct_connections;
use crate::rules::{
    MAX_WINDOWS, SAME_THROUGHPUT_SHARE, SATURATED_LOAD_RATIO, SATURATED_MIN_EXTRA_MS,
    SATURATED_MIN_LOAD, SATURATED_SLOWDOWN, SATURATION_MIN_TRANSACTIONS, SATURATION_MIN_WINDOWS,
    TRANSACTIONS_PER_WINDOW,
};
use crate::{median, Finding, FindingKind, Inputs};

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
pub struct Saturation {
    pub finding: Finding,
    /// The transactions that queued, by (connection, index), and the server
    /// time each would have taken without queueing.
    pub queued: Vec<((u64, u32), f64)>,
}

pub fn saturation(inputs: &Inputs) -> Option<Saturation> {
    let answered: Vec<&transactions::Transaction> = inputs
        .transactions
        .iter()
        .filter(|t| t.response_end_ns.is_some())
        .collect();
    if answered.len() < SATURATION_MIN_TRANSACTIONS {
        return None;
    }
    let windows = windows(&answered, inputs.give_up);
    if windows.len() < SATURATION_MIN_WINDOWS {
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
        .find(|w| w.throughput >= SAME_THROUGHPUT_SHARE * rate)?;
    let saturated = rate >= SAME_THROUGHPUT_SHARE * peak_rate
        && load >= (SATURATED_LOAD_RATIO * knee.concurrency).max(SATURATED_MIN_LOAD)
        && server
            >= (SATURATED_SLOWDOWN * knee.server_ms).max(knee.server_ms + SATURATED_MIN_EXTRA_MS);
    if !saturated {
        return None;
    }
    let baseline = median(low.iter().map(|w| w.server_ms).collect());
    let queued: Vec<&&transactions::Transaction> = answered
        .iter()
        .filter(|t| t.ledger.get(Part::Server) > SATURATED_SLOWDOWN * baseline.max(1.0))
        .collect();
    let cost: f64 = queued
        .iter()
        .map(|t| t.ledger.get(Part::Server) - baseline)
        .sum();
    let mut found = Finding::new(
        FindingKind::ServerSaturation,
        &format!(
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
    let queued = queued
        .iter()
        .map(|t| ((t.connection, t.index), baseline))
        .collect();
    Some(Saturation {
        finding: found,
        queued,
    })
}

/// The capture cut into windows holding a few transactions each; fewer
/// once `give_up` says so.
fn windows(answered: &[&transactions::Transaction], give_up: &dyn Fn() -> bool) -> Vec<Window> {
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
        .take_while(|_| !give_up())
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
                .map(|t| t.ledger.get(Part::Server))
                .collect();
            (!started.is_empty()).then(|| Window {
                concurrency: in_flight_ns as f64 / width as f64,
                throughput: completed as f64 / seconds,
                server_ms: median(started),
            })
        })
        .collect()
}
