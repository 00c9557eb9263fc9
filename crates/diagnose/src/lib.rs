//! Connections, transactions and their time ledgers in; ranked findings out.
//!
//! Findings are sums over the ledger: every millisecond of every
//! transaction is charged to one part by what ended each wait (see
//! `transactions::ledger`), and each part is given to exactly one cause
//! (see `charges`), so no millisecond counts twice and the shares of all
//! findings never add up past the whole. Each finding states what it costs,
//! the connection and frames that prove it (with a Wireshark display
//! filter), the fix, and what removing that one cause would buy. A few
//! findings are about structure rather than time (ports reused inside
//! TIME_WAIT, SYN options stripped on the way, connections that never opened);
//! they sit beside the others, as do application failures (HTTP error
//! statuses, TLS alerts, resets instead of answers), which cost no time.
//! How loud each one is follows the rules in [`rules`] ([`rules::severity`]
//! for time, others for failures and structure); findings are ranked by
//! severity, faults first among loud ones, then by time.

mod actions;
mod cause;
mod charges;
mod describe;
mod detectors;
mod evidence;
mod finding;
mod gaps;
mod kind;
mod patterns;
mod queue;
pub mod rules;
pub mod units;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use tcp::ConnectionSummary;
use timeline::Tick;
use transactions::{ConnectionLedger, Transaction};

pub use cause::Cause;
pub use detectors::{limiter, Limiter};
pub use evidence::Evidence;
pub use finding::Finding;
pub use kind::FindingKind;

/// A host's own time to act on what it received
/// ([`tcp::stack::HOST_REACTION_NS`]), in the ledger's milliseconds.
const HOST_REACTION_MS: f64 = tcp::stack::HOST_REACTION_NS as f64 / 1e6;

/// How much a finding matters; see [`rules::severity`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, record::Columns)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// What the diagnosis reads.
pub struct Inputs<'a> {
    pub connections: &'a [ConnectionSummary],
    pub transactions: &'a [Transaction],
    pub ledgers: &'a [ConnectionLedger],
    pub evidence: &'a Evidence,
    /// The capture's per-tick series (retransmissions, throughput, connections).
    pub ticks: &'a [Tick],
    /// Handshakes that never completed, per server.
    pub unanswered_syns: &'a [tcp::UnansweredSyns],
    /// Asked during the longer steps: once it says true, the diagnosis
    /// gives up (the run was asked to stop and is out of time).
    pub give_up: &'a (dyn Fn() -> bool + Sync),
}

impl Inputs<'_> {
    /// The time at stake: every transaction's ledger but the client's think
    /// time between turns, and the time connections that never opened spent trying.
    fn total_ms(&self, failed: &detectors::FailedSetups, weights: &charges::Weights) -> f64 {
        let ledgers: f64 = self
            .transactions
            .iter()
            .map(|t| charges::at_stake_ms(&t.ledger) * weights.of_connection(t.connection))
            .sum();
        ledgers + failed.ms
    }

    /// Whether the packets show a wait of `cause` whole, not timing alone:
    /// on some connection its longest stretch ended when an ACK released
    /// bytes that the protocol's lengths said the peer was waiting for.
    fn shows_by_framing(&self, cause: Cause) -> bool {
        cause.is_shown_by_framing()
            && self.ledgers.iter().any(|ledger| {
                ledger.stretches.iter().any(|(part, _, longest)| {
                    longest.inside_message
                        && longest.ack_frame.is_some()
                        && cause.evidence_parts().contains(part)
                })
            })
    }

    /// Whether some connection shows the waits of `cause` by their
    /// recurrence (see [`Cause::is_shown_by_recurring_waits`]): at least
    /// [`rules::PATTERN_REPEATS`] of them, longer on average than a host's
    /// reaction.
    fn shows_by_recurrence(&self, cause: Cause) -> bool {
        cause.is_shown_by_recurring_waits()
            && self.ledgers.iter().any(|ledger| {
                cause.evidence_parts().iter().any(|&part| {
                    let waits = ledger.stretch_count(part);
                    waits >= rules::PATTERN_REPEATS as u64
                        && ledger.ledger.get(part) / waits as f64 > HOST_REACTION_MS
                })
            })
    }

    pub(crate) fn connection(&self, id: u64) -> Option<&ConnectionSummary> {
        summary_of(self.connections, id)
    }

    pub(crate) fn ledger(&self, id: u64) -> Option<&ConnectionLedger> {
        ConnectionLedger::of(self.ledgers, id)
    }
}

/// Where the connection `id` stands in `connections`, which are listed by
/// id with gaps where the memory budget left some unlisted.
pub(crate) fn place_of(connections: &[ConnectionSummary], id: u64) -> Option<usize> {
    let direct = connections
        .get(id as usize)
        .is_some_and(|c| c.id == id)
        .then_some(id as usize);
    direct.or_else(|| connections.binary_search_by_key(&id, |c| c.id).ok())
}

/// The summary of the connection `id` in `connections` (see [`place_of`]).
pub(crate) fn summary_of(connections: &[ConnectionSummary], id: u64) -> Option<&ConnectionSummary> {
    Some(&connections[place_of(connections, id)?])
}

/// Every finding, the loudest first; within a severity failures first, then
/// faults, then by the costliest action, then the costliest. None when [`Inputs::give_up`] stopped it.
pub fn diagnose(inputs: &Inputs) -> Option<Vec<Finding>> {
    // What the charges read depends on the inputs alone: the capture-wide
    // context on a thread of its own, the rest beside it.
    let (context, failed, weights, total_ms, turns) = std::thread::scope(|scope| {
        let context = scope.spawn(|| patterns::context(inputs));
        let failed = detectors::FailedSetups::of(inputs);
        let weights = charges::Weights::of(inputs.transactions, inputs.ledgers);
        let total_ms = inputs.total_ms(&failed, &weights).max(f64::MIN_POSITIVE);
        let turns = charges::Turns::of(inputs.connections, inputs.transactions);
        let context = context.join().expect("the context's thread panicked");
        (context, failed, weights, total_ms, turns)
    });
    if (inputs.give_up)() {
        return None;
    }
    let totals = charges::charge(&turns, &weights, &context);
    let setup_ms = totals
        .get(&Cause::SetupFailure)
        .map_or(0.0, |total| total.cost_ms);
    // The findings of the causes, and those read from the whole capture,
    // depend on the totals alone: each on a thread.
    let ((mut findings, fault_kinds), more) = std::thread::scope(|scope| {
        let more = scope.spawn(|| {
            let mut more = detectors::structural(inputs, setup_ms, &failed, total_ms);
            more.extend(describe::summary(inputs, &totals, &weights));
            more
        });
        let caused = cause_findings(inputs, &totals, &context, total_ms);
        (
            caused,
            more.join()
                .expect("the capture's findings' thread panicked"),
        )
    });
    findings.extend(more);
    // Within a severity, what failed outright (requests, connections that
    // never opened) comes first, then a fault that a person would notice
    // (loud, or a tenth of a second on some action), then the time exchanges
    // spend anyway (round trips, the server's work) where a person noticed
    // it, before each side's own pace, which no one was shown to wait for;
    // the rest by what its costliest action cost (a person notices per
    // action, not a sum over actions), then by its time.
    findings.sort_by(|a, b| {
        let rank = |f: &Finding| {
            let noticed = f.severity > Severity::Info
                || f.figures.get("worst_action_ms").copied().unwrap_or(0.0) >= rules::NOTICED_MS;
            let fault = noticed && fault_kinds.contains(&f.kind);
            let waited_for = noticed && !f.kind.is_own_pace();
            (f.severity, f.failed_outright(), fault, waited_for)
        };
        let worst_action = |f: &Finding| f.figures.get("worst_action_ms").copied().unwrap_or(0.0);
        rank(b)
            .cmp(&rank(a))
            .then(worst_action(b).total_cmp(&worst_action(a)))
            .then(b.cost_ms.total_cmp(&a.cost_ms))
    });
    Some(findings)
}

/// A finding for each cause that matters, and the kinds of those that are faults.
fn cause_findings(
    inputs: &Inputs,
    totals: &BTreeMap<Cause, charges::CauseTotal>,
    context: &charges::Context,
    total_ms: f64,
) -> (Vec<Finding>, BTreeSet<FindingKind>) {
    let mut findings = Vec::new();
    let mut fault_kinds = BTreeSet::new();
    for (&cause, total) in totals {
        let share = if cause.is_at_stake() {
            total.cost_ms / total_ms
        } else {
            total.cost_ms / (total_ms + total.cost_ms)
        };
        let felt = total.felt(cause.chain());
        let severity = if cause.is_benign() {
            Severity::Info
        } else {
            let seen = cause.is_seen_in_packets()
                || inputs.shows_by_framing(cause)
                || inputs.shows_by_recurrence(cause);
            rules::severity(felt, share, seen, cause.is_waste())
        };
        // An incident is listed however little it cost, with its rate.
        if share < rules::MATTERS_SHARE && severity == Severity::Info && !cause.is_incident() {
            continue;
        }
        if let Some(mut found) = describe::finding(cause, total, inputs, context, totals) {
            // Shares are of one whole, the time at stake, which a side's own pace is not part of.
            found.share = if cause.is_at_stake() {
                share.min(1.0)
            } else {
                0.0
            };
            found.severity = severity;
            found
                .figures
                .insert("per_action_ms", describe::round(felt.typical_ms));
            found
                .figures
                .insert("worst_action_ms", describe::round(felt.worst_ms));
            found.figures.insert("actions", felt.actions as f64);
            found
                .figures
                .insert("wall_clock_ms", describe::round(total.wall_clock_ms()));
            if cause.is_fault() {
                fault_kinds.insert(found.kind);
            }
            findings.push(found);
        }
    }
    (findings, fault_kinds)
}

/// The middle value seen, the upper of the two middle ones of an even
/// count; 0 for none.
pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let middle = values.len() / 2;
    *values.select_nth_unstable_by(middle, f64::total_cmp).1
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn the_median_is_a_value_seen_the_upper_of_two_middles() {
        assert_eq!(median(vec![9.0, 1.0, 5.0]), 5.0);
        assert_eq!(median(vec![4.0, 8.0, 1.0, 2.0]), 4.0);
        assert_eq!(median(vec![3.0, 3.0, 7.0, 3.0, 0.5]), 3.0);
        assert_eq!(median(Vec::new()), 0.0);
    }
}
