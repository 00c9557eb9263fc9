//! Which connections get packet-level detail: the ones that prove something.

use diagnose::Finding;
use rustc_hash::FxHashSet;
use tcp::ConnectionSummary;
use transactions::Transaction;

/// Connection ids to detail, at most `limit`: those asked for, each
/// finding's example, then the largest and the slowest in turn.
pub fn connections_to_detail(
    connections: &[ConnectionSummary],
    transactions: &[Transaction],
    findings: &[Finding],
    asked: &[u64],
    limit: usize,
) -> Vec<u64> {
    let mut chosen = Chosen::new(limit);
    chosen.extend(asked.iter().copied());
    chosen.extend(findings.iter().filter_map(|f| f.example_connection));
    let largest = ranked(connections, |c| {
        (c.client_to_server.payload_bytes + c.server_to_client.payload_bytes) as f64
    });
    let slowest = slowest_transactions(connections.len(), transactions);
    for (large, slow) in largest.into_iter().zip(slowest) {
        chosen.extend([large, slow]);
    }
    chosen.ids
}

struct Chosen {
    ids: Vec<u64>,
    seen: FxHashSet<u64>,
    limit: usize,
}

impl Chosen {
    fn new(limit: usize) -> Self {
        Chosen {
            ids: Vec::new(),
            seen: FxHashSet::default(),
            limit,
        }
    }

    fn extend(&mut self, ids: impl IntoIterator<Item = u64>) {
        for id in ids {
            if self.ids.len() < self.limit && self.seen.insert(id) {
                self.ids.push(id);
            }
        }
    }
}

/// Connection ids, the highest `key` first.
fn ranked(connections: &[ConnectionSummary], key: impl Fn(&ConnectionSummary) -> f64) -> Vec<u64> {
    let mut order: Vec<(f64, u64)> = connections.iter().map(|c| (key(c), c.id)).collect();
    order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    order.into_iter().map(|(_, id)| id).collect()
}

/// Connection ids by their slowest transaction, the slowest first; those
/// without a transaction come last.
fn slowest_transactions(count: usize, transactions: &[Transaction]) -> Vec<u64> {
    let mut slowest = vec![-1.0f64; count];
    for t in transactions {
        if let Some(worst) = slowest.get_mut(t.connection as usize) {
            *worst = worst.max(t.duration_ms.unwrap_or(0.0));
        }
    }
    let mut order: Vec<(f64, u64)> = slowest
        .into_iter()
        .enumerate()
        .map(|(id, ms)| (ms, id as u64))
        .collect();
    order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    order.into_iter().map(|(_, id)| id).collect()
}
