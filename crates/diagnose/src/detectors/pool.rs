//! Requests queueing for a connection pool: a front tier that answers each
//! request right after a call to a back tier returns, with more requests
//! waiting at once than it has connections to the back tier.

use std::collections::HashMap;

use decode::Endpoint;
use tcp::stack::HOST_REACTION_NS;
use transactions::Transaction;

use crate::median;
use crate::rules::{LINKED_SHARE, MAX_TIERS, MIN_TIER_REQUESTS, PERIOD_TOLERANCE};
use crate::{Finding, FindingKind, Inputs};

/// Queueing found behind a pool, and the front tier's connections (sorted).
pub struct PoolQueueing {
    pub finding: Finding,
    pub front_connections: Vec<u64>,
}

impl PoolQueueing {
    pub fn is_front(&self, connection: u64) -> bool {
        self.front_connections.binary_search(&connection).is_ok()
    }
}

/// One server's answered transactions.
struct Tier<'a> {
    server: Endpoint,
    transactions: Vec<&'a Transaction>,
    /// Sorted, each once.
    connections: Vec<u64>,
    /// When each of its answers ended and its request began, sorted: what
    /// a front tier's requests wait for when this tier is the back one.
    answers: Vec<(i64, i64)>,
}

pub fn pool_queueing(inputs: &Inputs) -> Option<PoolQueueing> {
    let tiers = tiers(inputs);
    let mut best: Option<(f64, PoolQueueing)> = None;
    for front in &tiers {
        for back in tiers.iter().filter(|back| back.server != front.server) {
            if (inputs.give_up)() {
                return None;
            }
            let Some(found) = queueing(inputs, front, back) else {
                continue;
            };
            if best
                .as_ref()
                .is_none_or(|(cost, _)| found.finding.cost_ms > *cost)
            {
                best = Some((found.finding.cost_ms, found));
            }
        }
    }
    best.map(|(_, found)| found)
}

fn tiers<'a>(inputs: &Inputs<'a>) -> Vec<Tier<'a>> {
    let mut by_server: HashMap<Endpoint, Vec<&Transaction>> = HashMap::new();
    for t in inputs
        .transactions
        .iter()
        .filter(|t| t.response_start_ns.is_some())
    {
        if let Some(connection) = inputs.connection(t.connection) {
            by_server.entry(connection.server).or_default().push(t);
        }
    }
    let mut tiers: Vec<Tier> = by_server
        .into_iter()
        .filter(|(_, transactions)| transactions.len() >= MIN_TIER_REQUESTS)
        .map(|(server, transactions)| {
            let mut connections: Vec<u64> = transactions.iter().map(|t| t.connection).collect();
            connections.sort_unstable();
            connections.dedup();
            let mut answers: Vec<(i64, i64)> = transactions
                .iter()
                .filter_map(|t| Some((t.response_end_ns?, t.request_start_ns)))
                .collect();
            answers.sort_unstable();
            Tier {
                server,
                transactions,
                connections,
                answers,
            }
        })
        .collect();
    tiers.sort_by_key(|tier| std::cmp::Reverse(tier.transactions.len()));
    tiers.truncate(MAX_TIERS);
    tiers
}

/// For each front transaction released by a back answer (the last to end
/// before its own answer began, within a host's reaction time and after its
/// request ended): how long it waited from its request's end to that back
/// call. None once fewer than [`LINKED_SHARE`] of the front's transactions
/// can be released by the back's answers.
fn queue_waits_ms(front: &Tier, back: &Tier) -> Option<Vec<f64>> {
    let needed = LINKED_SHARE * front.transactions.len() as f64;
    let mut unreleased = 0;
    let mut waits_ms = Vec::new();
    for t in &front.transactions {
        match released_after_ms(t, &back.answers) {
            Some(wait_ms) => waits_ms.push(wait_ms),
            None => {
                unreleased += 1;
                if ((front.transactions.len() - unreleased) as f64) < needed {
                    return None;
                }
            }
        }
    }
    Some(waits_ms)
}

/// How long `t` waited from its request's end to the back call whose
/// answer (among `answers`, sorted) released it, if one did.
fn released_after_ms(t: &Transaction, answers: &[(i64, i64)]) -> Option<f64> {
    let answer_ns = t.response_start_ns?;
    let before = answers.partition_point(|&(end, _)| end <= answer_ns);
    let &(back_end, back_start) = answers.get(before.checked_sub(1)?)?;
    // Answered within the host's reaction to the back answer: released by it.
    (answer_ns - back_end <= HOST_REACTION_NS && back_end >= t.request_end_ns)
        .then(|| (back_start - t.request_end_ns).max(0) as f64 / 1e6)
}

/// The most front requests waiting for an answer at one time.
fn peak_waiting(front: &Tier) -> usize {
    let mut changes: Vec<(i64, i32)> = front
        .transactions
        .iter()
        .filter_map(|t| Some([(t.request_end_ns, 1), (t.response_start_ns?, -1)]))
        .flatten()
        .collect();
    changes.sort_unstable();
    let mut waiting = 0i32;
    let mut peak = 0i32;
    for (_, change) in changes {
        waiting += change;
        peak = peak.max(waiting);
    }
    peak.max(0) as usize
}

/// The back tier's connections: their count, and the interval in seconds
/// between openings where they opened one at a time at a steady pace.
fn ramp(inputs: &Inputs, back: &Tier) -> (usize, Option<f64>) {
    let mut opened: Vec<i64> = inputs
        .connections
        .iter()
        .filter(|c| back.connections.binary_search(&c.id).is_ok())
        .map(|c| c.handshake.syn_ns.unwrap_or(c.first_ns))
        .collect();
    opened.sort_unstable();
    let gaps: Vec<f64> = opened
        .windows(2)
        .map(|pair| (pair[1] - pair[0]) as f64 / 1e9)
        .collect();
    let interval = median(gaps.clone());
    let steady = !gaps.is_empty()
        && gaps
            .iter()
            .all(|gap| (gap - interval).abs() <= PERIOD_TOLERANCE * interval);
    (opened.len(), steady.then_some(interval))
}

fn queueing(inputs: &Inputs, front: &Tier, back: &Tier) -> Option<PoolQueueing> {
    let waits_ms = queue_waits_ms(front, back)?;
    let waiting = peak_waiting(front);
    let pool = back.connections.len();
    let queued = median(waits_ms.clone());
    let back_ms = median(
        back.transactions
            .iter()
            .filter_map(|t| t.duration_ms)
            .collect(),
    );
    if waiting <= pool || queued < back_ms {
        return None;
    }
    let cost: f64 = waits_ms.iter().sum();
    let (opened, interval) = ramp(inputs, back);
    let growth = interval.map_or(String::new(), |interval| {
        format!(", and the pool grew one connection every {interval:.2} s")
    });
    let front_think = median(
        front
            .transactions
            .iter()
            .filter_map(|t| t.server_think_ms)
            .collect(),
    );
    let mut found = Finding::new(
        FindingKind::PoolQueueing,
        &format!(
            "Requests queue for a pool of {pool} connections to {}: {waiting} at once from {} \
             clients wait a median {queued:.1} ms before the back-tier call{growth}",
            back.server,
            front.connections.len(),
        ),
        cost,
    );
    found.transactions = waits_ms.len() as u64;
    found.connections = (front.connections.len() + pool) as u64;
    found.example_connection = back.connections.first().copied();
    found.wireshark_filter = format!(
        "tcp.flags.syn == 1 && tcp.flags.ack == 0 && {} == {}",
        if back.server.ip.is_ipv6() {
            "ipv6.dst"
        } else {
            "ip.dst"
        },
        back.server.ip
    );
    found.explanation = format!(
        "{} answers each request right after a call to {} returns, so its {front_think:.1} ms \
         think time is mostly spent waiting: up to {waiting} requests were waiting at once but \
         only {pool} connections to {} existed, each carrying one call at a time ({back_ms:.1} ms \
         each). The calls themselves are quick; the requests wait their turn for a connection.",
        front.server, back.server, back.server
    );
    found.fix = format!(
        "Size the front's pool of connections to {} for the concurrency it serves ({waiting} \
         here, against {opened} connections), and open them ahead of need (a minimum of idle \
         connections, pre-warming) instead of one at a time; or cap the front's concurrency to \
         the pool's size.",
        back.server
    );
    found.what_if = format!(
        "With a connection free for each request, the median front request would wait \
         {back_ms:.1} ms for its call instead of {front_think:.1} ms: {:.1} s less in all.",
        cost / 1e3
    );
    found
        .figures
        .insert("front_connections", front.connections.len() as f64);
    found.figures.insert("back_connections", pool as f64);
    found
        .figures
        .insert("peak_waiting_requests", waiting as f64);
    found.figures.insert("queue_wait_ms", queued);
    if let Some(interval) = interval {
        found.figures.insert("back_connection_interval_s", interval);
    }
    Some(PoolQueueing {
        finding: found,
        front_connections: front.connections.clone(),
    })
}
