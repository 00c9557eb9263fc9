//! Which back connection carried each front connection's transactions.
//!
//! Both sides are taken on one clock (the proxy's host, or clocks kept in
//! step). A front transaction and a back one are the same exchange when the
//! back one nests inside it — its request left after the front request began
//! arriving, and its response began arriving before the front response
//! began leaving — and their sizes agree within what a proxy adds or strips
//! (headers such as X-Forwarded-For). Where the payload names both (an HTTP
//! request line, a TLS server name) the names must agree too. Connections
//! are paired by how many of their transactions, in order, match this way;
//! the most first, each connection at most once.

use transactions::Transaction;

use super::side::Side;

/// A proxy rewrites headers, but a request or response it carries keeps
/// most of its bytes: the smaller of the two sizes is at least this share
/// of the larger.
const SIZE_AGREEMENT: f64 = 0.5;

/// A front connection and the back connection that carried its transactions.
pub struct ConnectionPair {
    pub front: u64,
    pub back: u64,
    /// Matched transactions as (index in the front connection's list, index in the back's).
    pub transactions: Vec<(usize, usize)>,
    /// Matched transactions whose names (request line, TLS server name) agreed.
    pub named_alike: usize,
}

/// Pairs the front side's connections with the back side's.
pub fn pair(front: &Side, back: &Side) -> Vec<ConnectionPair> {
    let mut candidates: Vec<ConnectionPair> = Vec::new();
    for front_connection in &front.connections {
        let front_transactions = front.transactions_of(front_connection.id);
        if front_transactions.is_empty() {
            continue;
        }
        let overlapping = back.connections.iter().filter(|back_connection| {
            back_connection.first_ns <= front_connection.last_ns
                && back_connection.last_ns >= front_connection.first_ns
        });
        for back_connection in overlapping {
            let back_transactions = back.transactions_of(back_connection.id);
            let matched = align(front_transactions, back_transactions);
            if matched.is_empty() {
                continue;
            }
            let named_alike = matched
                .iter()
                .filter(|&&(f, b)| {
                    front_transactions[f].name.is_some()
                        && front_transactions[f].name == back_transactions[b].name
                })
                .count();
            candidates.push(ConnectionPair {
                front: front_connection.id,
                back: back_connection.id,
                transactions: matched,
                named_alike,
            });
        }
    }
    candidates.sort_by_key(|pair| {
        (
            std::cmp::Reverse(pair.transactions.len()),
            pair.front,
            pair.back,
        )
    });
    let mut front_taken = rustc_hash::FxHashSet::default();
    let mut back_taken = rustc_hash::FxHashSet::default();
    candidates
        .into_iter()
        .filter(|pair| front_taken.insert(pair.front) && back_taken.insert(pair.back))
        .collect()
}

/// Front and back transactions that are the same exchanges, in order.
fn align(front: &[Transaction], back: &[Transaction]) -> Vec<(usize, usize)> {
    let (mut f, mut b) = (0, 0);
    let mut matched = Vec::new();
    while f < front.len() && b < back.len() {
        if same_exchange(&front[f], &back[b]) {
            matched.push((f, b));
            f += 1;
            b += 1;
        } else if back[b].request_start_ns < front[f].request_start_ns {
            b += 1;
        } else {
            f += 1;
        }
    }
    matched
}

/// Whether `back` is the proxy's forwarding of `front`.
fn same_exchange(front: &Transaction, back: &Transaction) -> bool {
    let nested = back.request_start_ns >= front.request_start_ns
        && match (front.response_start_ns, back.response_start_ns) {
            (Some(front_response), Some(back_response)) => back_response <= front_response,
            (None, _) => true,
            (Some(_), None) => false,
        };
    let names_agree = match (&front.name, &back.name) {
        (Some(front_name), Some(back_name)) => front_name == back_name,
        _ => true,
    };
    nested
        && names_agree
        && sizes_agree(front.request_bytes, back.request_bytes)
        && (front.response_bytes == 0 || sizes_agree(front.response_bytes, back.response_bytes))
}

fn sizes_agree(one: u64, other: u64) -> bool {
    let (smaller, larger) = (one.min(other), one.max(other));
    larger > 0 && smaller as f64 >= SIZE_AGREEMENT * larger as f64
}
