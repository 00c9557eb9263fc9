//! The transactions a run lists, within their share of the memory budget.
//! Past it, a spread of them over the whole capture is listed: every other
//! one listed so far is left out, and from then on one in twice as many. A
//! transaction left out still counts in its connection's ledger, and is
//! handed on for the timeline to count.

use rustc_hash::FxHashMap;

use crate::{ConnectionLedger, Ledger, Transaction};

/// What a listed transaction costs beyond its inline size: its strings, and
/// what the diagnosis holds for it (measured in `bench/`: 200,000 requests
/// on one connection diagnosed in 630 bytes each, 472 of them inline).
const EXTRA_BYTES: u64 = 160;
/// Transactions always listed, however small the budget.
const ALWAYS_LISTED: usize = 64;

/// What one listed transaction costs the memory budget.
fn listed_cost_bytes() -> u64 {
    std::mem::size_of::<Transaction>() as u64 + EXTRA_BYTES
}

#[derive(Debug)]
pub(crate) struct Kept {
    listed: Vec<Transaction>,
    /// At most this many are listed.
    most: usize,
    /// Of the transactions concluded from now on, one in `stride` is listed.
    stride: u64,
    concluded: u64,
    /// The transactions left out, per connection: how many, and their ledgers summed.
    left_out: FxHashMap<u64, (u64, Ledger)>,
    /// Left out since the last [`Kept::drain_left_out`].
    recently_left_out: Vec<Times>,
}

/// When a transaction began and ended: what the counts that take in every
/// transaction, listed or not, need of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Times {
    pub request_start_ns: i64,
    pub request_end_ns: i64,
    pub response_end_ns: Option<i64>,
}

impl Default for Kept {
    fn default() -> Self {
        Kept {
            listed: Vec::new(),
            most: usize::MAX,
            stride: 1,
            concluded: 0,
            left_out: FxHashMap::default(),
            recently_left_out: Vec::new(),
        }
    }
}

impl Kept {
    /// Lists at most what `bytes` hold, from now on.
    pub fn set_memory_budget(&mut self, bytes: u64) {
        let most = usize::try_from(bytes / listed_cost_bytes()).unwrap_or(usize::MAX);
        self.most = most.max(ALWAYS_LISTED);
    }

    pub fn push(&mut self, transaction: Transaction) {
        let listed = self.concluded.is_multiple_of(self.stride);
        self.concluded += 1;
        if !listed {
            leave_out(
                &transaction,
                &mut self.left_out,
                &mut self.recently_left_out,
            );
            return;
        }
        self.listed.push(transaction);
        if self.listed.len() >= self.most {
            self.thin();
        }
    }

    /// Leaves out every other transaction listed, and lists one in twice as
    /// many from now on.
    fn thin(&mut self) {
        let Kept {
            listed,
            left_out,
            recently_left_out,
            ..
        } = self;
        let mut position = 0usize;
        listed.retain(|transaction| {
            let kept = position.is_multiple_of(2);
            position += 1;
            if !kept {
                leave_out(transaction, left_out, recently_left_out);
            }
            kept
        });
        self.stride *= 2;
    }

    /// The transactions left out since the last call.
    pub fn drain_left_out(&mut self) -> std::vec::Drain<'_, Times> {
        self.recently_left_out.drain(..)
    }

    /// How many transactions were left out of the list.
    pub fn left_out(&self) -> u64 {
        self.left_out.values().map(|&(count, _)| count).sum()
    }

    /// Drops the transactions of `connections`, listed or left out, handing
    /// each listed one to `dropped` first.
    pub fn forget(
        &mut self,
        connections: &rustc_hash::FxHashSet<u64>,
        mut dropped: impl FnMut(&Transaction),
    ) {
        self.listed.retain(|transaction| {
            let keep = !connections.contains(&transaction.connection);
            if !keep {
                dropped(transaction);
            }
            keep
        });
        self.left_out
            .retain(|connection, _| !connections.contains(connection));
    }

    /// The transactions listed, in the order each began, and `ledgers` with
    /// every transaction of theirs counted and summed, listed or not.
    pub fn finish(self, ledgers: &mut [ConnectionLedger]) -> Vec<Transaction> {
        let mut listed = self.listed;
        // Keys sorted, then each record moved once: transactions are large.
        listed.sort_by_cached_key(Transaction::capture_order);
        let mut add = |connection: u64, count: u64, ledger: &Ledger| {
            if let Ok(at) = ledgers.binary_search_by_key(&connection, |l| l.connection) {
                ledgers[at].transactions += count;
                ledgers[at].ledger.add(ledger);
            }
        };
        for t in &listed {
            add(t.connection, 1, &t.ledger);
        }
        for (&connection, (count, ledger)) in &self.left_out {
            add(connection, *count, ledger);
        }
        listed
    }
}

/// Counts `transaction` in its connection's entry of `left_out`, and notes
/// when it ran in `recently`.
fn leave_out(
    transaction: &Transaction,
    left_out: &mut FxHashMap<u64, (u64, Ledger)>,
    recently: &mut Vec<Times>,
) {
    let (count, ledger) = left_out.entry(transaction.connection).or_default();
    *count += 1;
    ledger.add(&transaction.ledger);
    recently.push(transaction.times());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transaction(index: u32, ledger_ms: f64) -> Transaction {
        let mut ledger = Ledger::default();
        ledger.charge(crate::Part::Server, ledger_ms);
        Transaction {
            connection: 7,
            index,
            request_start_ns: i64::from(index) * 1_000_000,
            request_end_ns: i64::from(index) * 1_000_000,
            ledger,
            ..Default::default()
        }
    }

    #[test]
    fn past_its_share_a_spread_over_the_whole_run_is_listed_and_every_one_counted() {
        let mut kept = Kept::default();
        kept.set_memory_budget(100 * listed_cost_bytes());
        for index in 1..=1000 {
            kept.push(transaction(index, 1.0));
        }
        let recently: Vec<Times> = kept.drain_left_out().collect();
        assert_eq!(kept.left_out(), recently.len() as u64);
        let mut ledgers = vec![ConnectionLedger {
            connection: 7,
            transactions: 0,
            ledger: Ledger::default(),
            stretches: Vec::new(),
        }];
        let listed = kept.finish(&mut ledgers);
        assert!(
            listed.len() < 100 && listed.len() >= 50,
            "{} listed",
            listed.len()
        );
        assert_eq!(listed.len() + recently.len(), 1000);
        let indices: Vec<u32> = listed.iter().map(|t| t.index).collect();
        assert_eq!(indices.first(), Some(&1));
        assert!(
            indices.last() > Some(&980),
            "the spread reaches the end: {indices:?}"
        );
        assert_eq!(ledgers[0].transactions, 1000);
        assert_eq!(ledgers[0].ledger.get(crate::Part::Server), 1000.0);
    }
}
