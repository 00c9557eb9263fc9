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
    let cut = Cut::over(answered);
    let Tally {
        in_flight_ns,
        completed,
        mut started,
    } = Tally::of(answered, &cut);
    let seconds = cut.width as f64 / 1e9;
    (0..cut.count)
        .take_while(|_| !give_up())
        .filter_map(|i| {
            let started = std::mem::take(&mut started[i]);
            (!started.is_empty()).then(|| Window {
                concurrency: in_flight_ns[i] as f64 / cut.width as f64,
                throughput: completed[i] as f64 / seconds,
                server_ms: median(started),
            })
        })
        .collect()
}

/// `count` windows of `width` nanoseconds from `start`.
struct Cut {
    start: i64,
    width: i64,
    count: usize,
}

impl Cut {
    /// From the first request to the last answer, a few transactions a window.
    fn over(answered: &[&transactions::Transaction]) -> Self {
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
        Cut {
            start,
            width: ((end - start) / count as i64).max(1),
            count,
        }
    }

    fn end(&self) -> i64 {
        self.window_start(self.count)
    }

    fn window_start(&self, window: usize) -> i64 {
        self.start + window as i64 * self.width
    }

    fn window_end(&self, window: usize) -> i64 {
        self.window_start(window + 1)
    }

    /// The window of an instant within the windows.
    fn index(&self, ns: i64) -> usize {
        ((ns - self.start) / self.width) as usize
    }

    /// The window holding `ns`, if one does.
    fn holding(&self, ns: i64) -> Option<usize> {
        (self.start..self.end())
            .contains(&ns)
            .then(|| self.index(ns))
    }
}

/// Per window: the transactions' time in flight within it, the answers
/// that ended in it, and the server times of those that started in it.
struct Tally {
    in_flight_ns: Vec<i64>,
    completed: Vec<usize>,
    started: Vec<Vec<f64>>,
}

impl Tally {
    /// One pass over the transactions: each adds its time in flight to the
    /// windows it spans (the whole width to those it covers, by a running
    /// count), its answer to the window it ended in, and its server time to
    /// the window it started in.
    fn of(answered: &[&transactions::Transaction], cut: &Cut) -> Self {
        let mut tally = Tally {
            in_flight_ns: vec![0; cut.count],
            completed: vec![0; cut.count],
            started: vec![Vec::new(); cut.count],
        };
        // Transactions in flight over the whole of each window, as differences.
        let mut covering = vec![0i64; cut.count + 1];
        for t in answered {
            let finish = t.response_end_ns.unwrap_or(t.request_end_ns);
            let from = t.request_start_ns.max(cut.start);
            let to = finish.min(cut.end());
            if to > from {
                let (first, last) = (cut.index(from), cut.index(to - 1));
                if first == last {
                    tally.in_flight_ns[first] += to - from;
                } else {
                    tally.in_flight_ns[first] += cut.window_end(first) - from;
                    tally.in_flight_ns[last] += to - cut.window_start(last);
                    covering[first + 1] += 1;
                    covering[last] -= 1;
                }
            }
            if let Some(window) = t.response_end_ns.and_then(|ns| cut.holding(ns)) {
                tally.completed[window] += 1;
            }
            if let Some(window) = cut.holding(t.request_start_ns) {
                tally.started[window].push(t.ledger.get(Part::Server));
            }
        }
        let mut spanning = 0;
        for (in_flight, change) in tally.in_flight_ns.iter_mut().zip(covering) {
            spanning += change;
            *in_flight += spanning * cut.width;
        }
        tally
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use transactions::Transaction;

    /// A window by its definition: every transaction's overlap with it,
    /// the answers that ended in it, the server times of those that began.
    fn defined(answered: &[&Transaction], cut: &Cut, i: usize) -> Option<(i64, usize, f64)> {
        let (from, to) = (cut.window_start(i), cut.window_end(i));
        let in_flight = answered
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
        (!started.is_empty()).then(|| (in_flight, completed, median(started)))
    }

    #[test]
    fn one_pass_gives_each_window_its_definition() {
        // A fixed pseudo-random mix: short and long transactions, some
        // spanning many windows, some unanswered, some ending before they began.
        let mut state = 7u64;
        let mut next = move |bound: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % bound
        };
        let transactions: Vec<Transaction> = (0..500)
            .map(|_| {
                let start = 1_000_000_000 + next(10_000_000_000) as i64;
                let long = next(10) == 0;
                let length = next(if long { 5_000_000_000 } else { 50_000_000 }) as i64;
                let mut t = Transaction {
                    request_start_ns: start,
                    request_end_ns: start + 1_000,
                    response_end_ns: match next(8) {
                        0 => None,
                        1 => Some(start - 5_000),
                        _ => Some(start + length),
                    },
                    ..Transaction::default()
                };
                t.ledger.charge(Part::Server, next(1_000) as f64 / 7.0);
                t
            })
            .collect();
        let answered: Vec<&Transaction> = transactions.iter().collect();
        let cut = Cut::over(&answered);
        let tally = Tally::of(&answered, &cut);
        for i in 0..cut.count {
            let swept = (!tally.started[i].is_empty()).then(|| {
                let started = tally.started[i].clone();
                (tally.in_flight_ns[i], tally.completed[i], median(started))
            });
            assert_eq!(swept, defined(&answered, &cut, i), "window {i}");
        }
    }
}
