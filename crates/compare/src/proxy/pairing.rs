//! Which back transaction carried each front transaction.
//!
//! Both sides are taken on one clock (the proxy's host, or clocks kept in
//! step). A front transaction and a back one are the same exchange when the
//! back one nests inside it — its request left after the front request began
//! arriving, and its response began arriving before the front response
//! began leaving — and their sizes agree within what a proxy adds or strips
//! (headers such as X-Forwarded-For). Where the payload names both (an HTTP
//! request line, a TLS server name) the names must agree too, and where the
//! back request says whom the proxy took it from (X-Forwarded-For), that
//! must be the front connection's client.
//!
//! Pairing is by transaction, not by connection: a proxy that pools its
//! back connections sends several clients' requests over one, and a back
//! connection then carries the exchanges of several front connections. The
//! back transactions are indexed by the time their request left, so each
//! front transaction looks only at those inside its own span; the best fits
//! are then taken first (see [`pair`]).

use std::net::{IpAddr, SocketAddr};

use rustc_hash::{FxHashMap, FxHashSet};
use transactions::Transaction;

use super::side::Side;

/// A proxy rewrites headers, but a request or response it carries keeps
/// most of its bytes: the smaller of the two sizes is at least this share
/// of the larger.
const SIZE_AGREEMENT: f64 = 0.5;

/// A front transaction looks at no more back requests than this, the
/// earliest to leave within its span: what keeps pairing linear in the
/// transactions when a front request goes unanswered for long.
const MOST_CANDIDATES: usize = 256;

/// A front transaction and the back transaction that carried it.
#[derive(Debug, Clone, Copy)]
pub struct Carried {
    pub front_connection: u64,
    /// Index in the front connection's transactions.
    pub front: usize,
    pub back_connection: u64,
    /// Index in the back connection's transactions.
    pub back: usize,
    /// Both were named (request line, TLS server name) and the names agreed.
    pub named_alike: bool,
    /// The back request named the front connection's client in X-Forwarded-For.
    pub forwarded_for_client: bool,
}

/// A back transaction, where to find it, and when its request left.
struct BackEntry {
    request_start_ns: i64,
    connection: u64,
    index: usize,
}

/// A back transaction that could have carried a front one.
struct Candidate {
    carried: Carried,
    fit: Fit,
    /// From the front request's start to the back request's.
    lag_ns: i64,
}

/// Pairs every front transaction with the back transaction that carried
/// it, where one did. Each front transaction's candidates are the back
/// transactions that fit it; the best fits are taken first: the same name,
/// then the same client in X-Forwarded-For, then the back connection with
/// the most candidates for the front connection's transactions (the one a
/// proxy opened for that client, when it opens one per client), then the
/// back request that left soonest.
pub fn pair(front: &Side, back: &Side) -> Vec<Carried> {
    let mut candidates = candidates(front, back);
    let mut with_candidates: FxHashSet<(u64, usize, u64)> = FxHashSet::default();
    let mut affinity: FxHashMap<(u64, u64), usize> = FxHashMap::default();
    for c in &candidates {
        let carried = c.carried;
        if with_candidates.insert((
            carried.front_connection,
            carried.front,
            carried.back_connection,
        )) {
            *affinity
                .entry((carried.front_connection, carried.back_connection))
                .or_default() += 1;
        }
    }
    candidates.sort_by_key(|c| {
        let carried = c.carried;
        (
            std::cmp::Reverse(c.fit),
            std::cmp::Reverse(affinity[&(carried.front_connection, carried.back_connection)]),
            c.lag_ns,
            carried.front_connection,
            carried.front,
        )
    });
    let mut front_taken: FxHashSet<(u64, usize)> = FxHashSet::default();
    let mut back_taken: FxHashSet<(u64, usize)> = FxHashSet::default();
    candidates
        .into_iter()
        .map(|c| c.carried)
        .filter(|c| {
            !front_taken.contains(&(c.front_connection, c.front))
                && back_taken.insert((c.back_connection, c.back))
                && front_taken.insert((c.front_connection, c.front))
        })
        .collect()
}

/// For every front transaction, the back transactions that fit it, found
/// through the back transactions indexed by when their request left.
fn candidates(front: &Side, back: &Side) -> Vec<Candidate> {
    let by_time = back_by_request_time(back);
    let mut candidates = Vec::new();
    for (&connection, transactions) in &front.transactions {
        let summary = front.connection(connection);
        let client = summary.map(|c| c.client.ip);
        for (index, transaction) in transactions.iter().enumerate() {
            let ends_ns = transaction
                .response_start_ns
                .or(summary.map(|c| c.last_ns))
                .unwrap_or(i64::MAX);
            let from =
                by_time.partition_point(|b| b.request_start_ns < transaction.request_start_ns);
            for b in by_time[from..]
                .iter()
                .take_while(|b| b.request_start_ns <= ends_ns)
                .take(MOST_CANDIDATES)
            {
                let back_transaction = &back.transactions_of(b.connection)[b.index];
                let Some(fit) = Fit::of(transaction, back_transaction, client) else {
                    continue;
                };
                candidates.push(Candidate {
                    carried: Carried {
                        front_connection: connection,
                        front: index,
                        back_connection: b.connection,
                        back: b.index,
                        named_alike: fit.named_alike,
                        forwarded_for_client: fit.forwarded_for_client,
                    },
                    fit,
                    lag_ns: b.request_start_ns - transaction.request_start_ns,
                });
            }
        }
    }
    candidates
}

/// Every back transaction, by when its request left.
fn back_by_request_time(back: &Side) -> Vec<BackEntry> {
    let mut entries: Vec<BackEntry> = back
        .transactions
        .iter()
        .flat_map(|(&connection, list)| {
            list.iter().enumerate().map(move |(index, t)| BackEntry {
                request_start_ns: t.request_start_ns,
                connection,
                index,
            })
        })
        .collect();
    entries.sort_by_key(|b| (b.request_start_ns, b.connection, b.index));
    entries
}

/// How well a back transaction fits a front one, best last: the same name,
/// then the front's client in X-Forwarded-For.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Fit {
    named_alike: bool,
    forwarded_for_client: bool,
}

impl Fit {
    /// None when `back` cannot be the proxy's forwarding of `front`, whose
    /// connection's client is `client`.
    fn of(front: &Transaction, back: &Transaction, client: Option<IpAddr>) -> Option<Fit> {
        let nested = back.request_start_ns >= front.request_start_ns
            && match (front.response_start_ns, back.response_start_ns) {
                (Some(front_response), Some(back_response)) => back_response <= front_response,
                (None, _) => true,
                (Some(_), None) => false,
            };
        let names = agreement(front.name.as_deref(), back.name.as_deref());
        let forwarded = client.zip(forwarded_address(back)).map(|(c, f)| c == f);
        let sizes = sizes_agree(front.request_bytes, back.request_bytes)
            && (front.response_bytes == 0
                || sizes_agree(front.response_bytes, back.response_bytes));
        (nested && sizes && names != Some(false) && forwarded != Some(false)).then_some(Fit {
            named_alike: names == Some(true),
            forwarded_for_client: forwarded == Some(true),
        })
    }
}

/// The address in the back request's X-Forwarded-For, as an address (a
/// port or brackets around it dropped); None when it reads as none.
fn forwarded_address(back: &Transaction) -> Option<IpAddr> {
    let text = back.forwarded_for.as_deref()?;
    text.parse::<IpAddr>()
        .ok()
        .or_else(|| text.parse::<SocketAddr>().ok().map(|a| a.ip()))
        .or_else(|| text.trim_matches(['[', ']']).parse().ok())
}

/// Whether two names agree; None when either is unknown.
fn agreement(one: Option<&str>, other: Option<&str>) -> Option<bool> {
    Some(one? == other?)
}

fn sizes_agree(one: u64, other: u64) -> bool {
    let (smaller, larger) = (one.min(other), one.max(other));
    larger > 0 && smaller as f64 >= SIZE_AGREEMENT * larger as f64
}

/// The front connections that had exchanges paired, each with the back
/// connection that carried its first.
pub fn first_back_of(carried: &[Carried]) -> FxHashMap<u64, u64> {
    let mut first: FxHashMap<u64, (usize, u64)> = FxHashMap::default();
    for c in carried {
        let earliest = first
            .entry(c.front_connection)
            .or_insert((c.front, c.back_connection));
        if c.front < earliest.0 {
            *earliest = (c.front, c.back_connection);
        }
    }
    first
        .into_iter()
        .map(|(front, (_, back))| (front, back))
        .collect()
}

/// The back connections that carried exchanges of more than one front connection.
pub fn pooled(carried: &[Carried]) -> usize {
    let mut fronts_of: FxHashMap<u64, FxHashSet<u64>> = FxHashMap::default();
    for c in carried {
        fronts_of
            .entry(c.back_connection)
            .or_default()
            .insert(c.front_connection);
    }
    fronts_of.values().filter(|fronts| fronts.len() > 1).count()
}
