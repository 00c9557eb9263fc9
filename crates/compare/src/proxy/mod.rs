//! A proxy or load balancer that terminates TCP, captured on both sides.
//!
//! No packet crosses such a proxy: it ends the client's connection and opens
//! its own to the server, one per client or a pool shared by all. Each front
//! transaction is paired with the back transaction that carried it (see
//! `pairing`); each exchange then gives the time the proxy added each way,
//! and the segments it sent say why (see `causes`). The back side's connections tell whether a source NAT
//! ran out of ports (see `snat`). Both captures are read on one clock, as
//! two interfaces of the proxy's host share one.

mod causes;
mod pairing;
mod side;
mod snat;

use std::collections::{BTreeMap, BTreeSet};

use capture::CaptureError;
use rustc_hash::FxHashMap;
use serde::Serialize;

pub use causes::{Cause, CauseKind, Place, Resegmented};
pub use snat::SnatExhaustion;

use causes::Exchange;
use side::Side;
use snat::FrontArrival;

/// What a proxy between the two captures did to the traffic.
#[derive(Debug, Clone, Serialize)]
pub struct Proxy {
    /// The capture of the client's side of the proxy.
    pub front: String,
    /// The capture of the server's side.
    pub back: String,
    pub front_connections: usize,
    pub back_connections: usize,
    /// Front connections with at least one exchange paired.
    pub connections_paired: usize,
    /// Back connections that carried paired exchanges.
    pub back_connections_used: usize,
    /// Back connections that carried the exchanges of more than one front
    /// connection: a proxy pooling its connections to the server.
    pub back_connections_pooled: usize,
    pub transactions_paired: usize,
    /// Paired transactions whose names (request line, TLS server name) agreed.
    pub transactions_named_alike: usize,
    /// Paired transactions whose back request named the front connection's
    /// client in X-Forwarded-For.
    pub transactions_forwarded_for_client: usize,
    /// Front connections that asked something and had no back connection.
    pub front_without_back: usize,
    /// Last request byte in at the front to last request byte out at the back.
    pub request_added: Option<Added>,
    /// Last response byte in at the back to last response byte out at the front.
    pub response_added: Option<Added>,
    /// The costliest first.
    pub causes: Vec<Cause>,
    /// Exchanges whose messages the proxy sent on in fewer or more segments.
    pub resegmented: Resegmented,
    pub snat: Option<SnatExhaustion>,
    /// Every exchange paired, in the order the front saw their requests.
    pub exchanges: Vec<ExchangeTimes>,
}

/// The time a proxy added one way, over the exchanges, in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Added {
    pub transactions: usize,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub max_ms: f64,
    pub total_ms: f64,
}

impl Added {
    fn of(mut values: Vec<f64>) -> Option<Added> {
        values.sort_by(f64::total_cmp);
        let p90_at = ((values.len().max(1) - 1) as f64 * 0.9).round() as usize;
        Some(Added {
            transactions: values.len(),
            p50_ms: median(values.clone())?,
            p90_ms: values[p90_at],
            max_ms: *values.last()?,
            total_ms: values.iter().sum(),
        })
    }
}

/// The middle value, or the mean of the two middle ones; None for none.
fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    match values.len() {
        0 => None,
        n if n % 2 == 1 => Some(values[middle]),
        _ => Some((values[middle - 1] + values[middle]) / 2.0),
    }
}

/// One exchange through the proxy.
#[derive(Debug, Clone, Serialize)]
pub struct ExchangeTimes {
    pub front_connection: u64,
    pub back_connection: u64,
    /// The transaction's index in its front connection, from 1.
    pub index: u32,
    /// What the payload names it (`GET /index.html → 200`), where it does.
    pub name: Option<String>,
    pub request_in_ns: i64,
    pub request_added_ms: f64,
    pub response_added_ms: Option<f64>,
    pub causes: Vec<CauseKind>,
}

/// Reads both captures and pairs them through a proxy, whichever of the two
/// is the front: the orientation in which more exchanges pair. None when no
/// exchange pairs either way.
pub fn through_proxy(a_path: &str, b_path: &str) -> Result<Option<Proxy>, CaptureError> {
    let a = Side::read(a_path)?;
    let b = Side::read(b_path)?;
    let forth = analyse(&a, &b);
    let back = analyse(&b, &a);
    let chosen = match (forth, back) {
        (Some(forth), Some(back)) if back.transactions_paired > forth.transactions_paired => {
            Some(back)
        }
        (Some(forth), _) => Some(forth),
        (None, back) => back,
    };
    Ok(chosen)
}

fn analyse(front: &Side, back: &Side) -> Option<Proxy> {
    let carried = pairing::pair(front, back);
    if carried.is_empty() {
        return None;
    }
    let mut exchanges: Vec<ExchangeTimes> = Vec::new();
    let mut resegmented = Resegmented::default();
    let mut by_cause: BTreeMap<CauseKind, (Cause, BTreeMap<&'static str, Vec<f64>>)> =
        BTreeMap::new();
    for c in &carried {
        let exchange = Exchange {
            front_connection: c.front_connection,
            back_connection: c.back_connection,
            front: &front.transactions_of(c.front_connection)[c.front],
            back: &back.transactions_of(c.back_connection)[c.back],
        };
        let causes = exchange.causes(front, back);
        let this_one = exchange.resegmented();
        resegmented.coalesced += this_one.coalesced;
        resegmented.split += this_one.split;
        for shown in &causes {
            let (cause, figures) = by_cause.entry(shown.kind).or_insert_with(|| {
                let cause = Cause {
                    kind: shown.kind,
                    transactions: 0,
                    cost_ms: 0.0,
                    figures: BTreeMap::new(),
                };
                (cause, BTreeMap::new())
            });
            cause.transactions += 1;
            cause.cost_ms += shown.cost_ms.max(0.0);
            for &(name, value) in &shown.figures {
                figures.entry(name).or_default().push(value);
            }
        }
        exchanges.push(ExchangeTimes {
            front_connection: c.front_connection,
            back_connection: c.back_connection,
            index: exchange.front.index,
            name: exchange.front.name.clone(),
            request_in_ns: exchange.front.request_start_ns,
            request_added_ms: exchange.request_added_ms(),
            response_added_ms: exchange.response_added_ms(),
            causes: causes.iter().map(|shown| shown.kind).collect(),
        });
    }
    exchanges.sort_by_key(|e| (e.request_in_ns, e.front_connection, e.index));
    let mut causes: Vec<Cause> = by_cause
        .into_values()
        .map(|(mut cause, figures)| {
            cause.figures = figures
                .into_iter()
                .filter_map(|(name, values)| Some((name, median(values)?)))
                .collect();
            cause
        })
        .collect();
    causes.extend(causes::zero_windows(front, back, &carried));
    causes.sort_by(|x, y| {
        y.cost_ms
            .total_cmp(&x.cost_ms)
            .then(y.transactions.cmp(&x.transactions))
    });
    let first_back_of = pairing::first_back_of(&carried);
    let arrivals = arrivals(front, back, &first_back_of);
    let front_without_back = arrivals
        .iter()
        .filter(|a| a.asked && a.back.is_none())
        .count();
    let back_connections_used: BTreeSet<u64> = carried.iter().map(|c| c.back_connection).collect();
    Some(Proxy {
        front: front.path.clone(),
        back: back.path.clone(),
        front_connections: front.connections.len(),
        back_connections: back.connections.len(),
        connections_paired: first_back_of.len(),
        back_connections_used: back_connections_used.len(),
        back_connections_pooled: pairing::pooled(&carried),
        transactions_paired: exchanges.len(),
        transactions_named_alike: carried.iter().filter(|c| c.named_alike).count(),
        transactions_forwarded_for_client: carried
            .iter()
            .filter(|c| c.forwarded_for_client)
            .count(),
        front_without_back,
        request_added: Added::of(exchanges.iter().map(|e| e.request_added_ms).collect()),
        response_added: Added::of(
            exchanges
                .iter()
                .filter_map(|e| e.response_added_ms)
                .collect(),
        ),
        causes,
        resegmented,
        snat: snat::exhaustion(back, &arrivals),
        exchanges,
    })
}

/// Every front connection the proxy took in, with the back connection that
/// carried its first exchange, if one did.
fn arrivals<'a>(
    front: &'a Side,
    back: &'a Side,
    first_back_of: &FxHashMap<u64, u64>,
) -> Vec<FrontArrival<'a>> {
    front
        .connections
        .iter()
        .filter(|c| c.handshake.ack_ns.is_some())
        .map(|connection| FrontArrival {
            front: connection,
            back: first_back_of
                .get(&connection.id)
                .and_then(|&id| back.connection(id)),
            asked: !front.transactions_of(connection.id).is_empty(),
        })
        .collect()
}
