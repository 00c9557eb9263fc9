//! The work a run did and the time someone waited for it: each transaction's
//! ledger without the client's own pace (its think time between turns, its
//! idle pauses, and the wait before its first request), which `diagnose`
//! counts as no one's loss. Two runs of one workload are compared per
//! transaction, so that a run that did more is not read as one that got worse.

use diagnose::{Cause, FindingKind};
use transactions::{Ledger, Part, Transaction};

/// The causes `diagnose` names for the client's own pace.
const CLIENT_PACE: [Cause; 2] = [Cause::ClientDelay, Cause::ClientThink];

/// Every cause `diagnose` charges time to, to find the ledger parts behind a kind of finding.
const CAUSES: [Cause; 26] = [
    Cause::SetupFailure,
    Cause::AcceptQueue,
    Cause::ClientDelay,
    Cause::ClientThink,
    Cause::ServerIdle,
    Cause::ApplicationLimited,
    Cause::SplitResponse,
    Cause::Chattiness,
    Cause::PathLatency,
    Cause::BottleneckLink,
    Cause::Transfer,
    Cause::SlowStart,
    Cause::ServerThink,
    Cause::PeriodicStalls,
    Cause::ServerSaturation,
    Cause::PoolQueueing,
    Cause::NagleDelayedAck,
    Cause::DelayedAck,
    Cause::ReceiveWindow,
    Cause::ZeroWindow,
    Cause::SendBuffer,
    Cause::PacketLoss,
    Cause::PeriodicLoss,
    Cause::TailLoss,
    Cause::DeadPeer,
    Cause::MtuBlackHole,
];

/// Whether findings of `kind` are the client's own pace.
pub fn is_client_pace(kind: FindingKind) -> bool {
    CLIENT_PACE.iter().any(|cause| cause.kind() == kind)
}

fn client_pace_parts() -> impl Iterator<Item = Part> {
    CLIENT_PACE
        .iter()
        .flat_map(|cause| cause.evidence_parts())
        .copied()
}

/// The ledger parts findings of `kind` are charged from; empty for a kind
/// no ledger part shows.
pub fn parts_of(kind: FindingKind) -> Vec<Part> {
    let mut parts: Vec<Part> = CAUSES
        .iter()
        .filter(|cause| cause.kind() == kind)
        .flat_map(|cause| cause.evidence_parts())
        .copied()
        .collect();
    parts.sort_unstable();
    parts.dedup();
    parts
}

/// The transactions' ledgers summed.
pub fn ledger_of(transactions: &[Transaction]) -> Ledger {
    let mut sum = Ledger::default();
    for transaction in transactions {
        sum.add(&transaction.ledger);
    }
    sum
}

/// The client's own pace in a ledger, in milliseconds.
pub fn client_pace_ms(ledger: &Ledger) -> f64 {
    client_pace_parts().map(|part| ledger.get(part)).sum()
}

/// The time someone waited for in a ledger: all of it but the client's own pace.
pub fn waited_ms(ledger: &Ledger) -> f64 {
    ledger.total_ms() - client_pace_ms(ledger)
}

/// The parts someone waited through, in the ledger's order.
pub fn waited_parts() -> impl Iterator<Item = Part> {
    Part::ALL
        .into_iter()
        .filter(|part| client_pace_parts().all(|own| own != *part))
}

/// `total` per transaction of `transactions`; None for a run without any.
pub fn per_transaction(total: f64, transactions: usize) -> Option<f64> {
    (transactions > 0).then(|| total / transactions as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_pace_is_what_diagnose_leaves_out_of_the_time_at_stake() {
        assert!(CLIENT_PACE.iter().all(|cause| !cause.is_at_stake()));
        let parts: Vec<Part> = client_pace_parts().collect();
        assert!(parts.contains(&Part::ClientThink));
        assert!(parts.contains(&Part::ClientIdle));
        assert!(parts.contains(&Part::ClientStart));
        // A pause the server waited through is time someone waited for.
        assert!(waited_parts().any(|part| part == Part::ClientPause));
    }

    #[test]
    fn every_cause_is_listed_once_and_names_its_parts() {
        for (index, cause) in CAUSES.iter().enumerate() {
            assert!(!CAUSES[..index].contains(cause), "{cause:?} twice");
        }
        assert_eq!(parts_of(FindingKind::NagleDelayedAck), [Part::Nagle]);
        assert!(parts_of(FindingKind::PathLatency).contains(&Part::Propagation));
    }

    #[test]
    fn waiting_leaves_out_think_time_only() {
        let mut ledger = Ledger::default();
        ledger.charge(Part::ClientThink, 200.0);
        ledger.charge(Part::Server, 40.0);
        ledger.charge(Part::Propagation, 2.0);
        assert_eq!(client_pace_ms(&ledger), 200.0);
        assert_eq!(waited_ms(&ledger), 42.0);
        assert_eq!(per_transaction(42.0, 2), Some(21.0));
        assert_eq!(per_transaction(42.0, 0), None);
    }
}
