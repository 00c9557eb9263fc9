//! Where the time went: every transaction's ledger summed by group, beside
//! what each cause cost; a summary that costs nothing itself.

use std::collections::BTreeMap;

use super::{count, duration, round, with_text};
use crate::cause::Cause;
use crate::charges::{distinct, CauseTotal, Weights};
use crate::{Finding, FindingKind, Inputs};

/// Where the time sits, by kind: a summary that costs nothing beside the causes.
pub fn summary(
    inputs: &Inputs,
    totals: &BTreeMap<Cause, CauseTotal>,
    weights: &Weights,
) -> Option<Finding> {
    if inputs.transactions.is_empty() {
        return None;
    }
    let mut by_group: BTreeMap<&'static str, f64> = BTreeMap::new();
    let mut transactions = 0.0;
    for t in inputs.transactions {
        let weight = weights.of_connection(t.connection);
        transactions += weight;
        for (part, ms) in t.ledger.parts() {
            *by_group.entry(part.group()).or_default() += ms * weight;
        }
    }
    if by_group.is_empty() {
        return None;
    }
    let total_ms: f64 = by_group.values().sum::<f64>().max(f64::MIN_POSITIVE);
    let parts: Vec<String> = by_group
        .iter()
        .map(|(group, ms)| {
            format!(
                "{} {} ({:.0}%)",
                group_words(group),
                duration(*ms),
                100.0 * ms / total_ms
            )
        })
        .collect();
    let ranked: Vec<String> = totals
        .iter()
        .filter(|(_, total)| total.cost_ms > 0.0)
        .map(|(cause, total)| format!("{} {}", cause.kind(), duration(total.cost_ms)))
        .collect();
    let mut found = with_text(
        FindingKind::LatencySplit,
        format!(
            "Where the time went: {} over {}: {}",
            duration(total_ms),
            count(transactions.round() as u64, "transaction"),
            parts.join(", ")
        ),
        format!(
            "Each transaction's time, from the end of the one before it on its connection (or \
             its first SYN) to the last byte of its answer, is charged part by part to what \
             ended each wait. By cause: {}.",
            ranked.join(", ")
        ),
        "See the findings above for the causes worth fixing.",
    );
    found.transactions = transactions.round() as u64;
    found.connections = distinct(inputs.transactions.iter().map(|t| t.connection));
    for (group, ms) in &by_group {
        found.figures.insert(group_figure(group), round(*ms));
    }
    Some(found)
}

fn group_words(group: &str) -> &'static str {
    match group {
        "setup" => "setup",
        "client" => "client",
        "network" => "network",
        "server" => "server",
        _ => "TCP waits",
    }
}

fn group_figure(group: &str) -> &'static str {
    match group {
        "setup" => "setup_ms",
        "client" => "client_ms",
        "network" => "network_ms",
        "server" => "server_ms",
        _ => "tcp_wait_ms",
    }
}
