//! The actions a person waits on: each a request and its answer, or a
//! chain of them that a client made one right after another.
//!
//! People notice delay per action (a request, a page, a keystroke), not
//! summed over actions nobody waited on in sequence. A client that asks
//! again within one round trip of an answer, and a host's time to act on
//! it, did not stop between the two: whoever waited for the first waits
//! for the second as well, so their waits add up. A client that took
//! longer (a person thinking, a poll on a timer, a program doing other
//! work) began another action.

use rustc_hash::FxHashMap;
use tcp::ConnectionSummary;
use transactions::{Part, Transaction};

use crate::HOST_REACTION_MS;

/// Identifies one action among a capture's.
pub type ActionId = u32;

/// For each transaction (in the order given), the action it belongs to.
pub fn of(connections: &[ConnectionSummary], transactions: &[Transaction]) -> Vec<ActionId> {
    let round_trips: FxHashMap<u64, f64> = connections
        .iter()
        .map(|c| (c.id, c.rtt().round_trip_ms()))
        .collect();
    let mut current: FxHashMap<u64, ActionId> = FxHashMap::default();
    let mut next_id: ActionId = 0;
    transactions
        .iter()
        .map(|t| {
            let round_trip = round_trips.get(&t.connection).copied().unwrap_or(0.0);
            // A program asking again within a round trip and a host's time
            // to act did not stop, however short the path.
            let follows = t.index > 1 && clients_own_time_ms(t) <= round_trip + HOST_REACTION_MS;
            match current.get(&t.connection) {
                Some(&action) if follows => action,
                _ => {
                    let action = next_id;
                    next_id += 1;
                    current.insert(t.connection, action);
                    action
                }
            }
        })
        .collect()
}

/// The time the client took of its own before and while asking: between
/// the answer before and this request, and inside the request where no one
/// was shown to wait.
fn clients_own_time_ms(t: &Transaction) -> f64 {
    [Part::ClientStart, Part::ClientThink, Part::ClientIdle]
        .map(|part| t.ledger.get(part))
        .iter()
        .sum()
}
