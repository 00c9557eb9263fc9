//! One side of a proxy as the pipeline saw it: its connections, their
//! transactions, and the data segments with what released each. The
//! sequence analysis is the `tcp` crate's; nothing here tracks TCP again.

use capture::CaptureError;
use pipeline::{Silent, Stages};
use rustc_hash::FxHashMap;
use tcp::{ConnectionSummary, Direction, SegmentView};
use transactions::Transaction;

pub struct Side {
    pub path: String,
    pub connections: Vec<ConnectionSummary>,
    /// Each connection's transactions, in order, by connection id.
    pub transactions: FxHashMap<u64, Vec<Transaction>>,
    /// Each connection's data segments, in capture order, by connection id.
    pub data: FxHashMap<u64, Vec<SegmentView>>,
}

impl Side {
    /// Runs the pipeline over `path`; a read that stopped early is an error.
    pub fn read(path: &str) -> Result<Side, CaptureError> {
        let stages = Stages {
            transactions: true,
            ..Stages::default()
        };
        let mut data: FxHashMap<u64, Vec<SegmentView>> = FxHashMap::default();
        let mut analysis = pipeline::analyze_observed(
            &[path.to_string()],
            stages,
            Silent,
            |_| {},
            |view| {
                if view.len > 0 {
                    data.entry(view.connection).or_default().push(*view);
                }
            },
        )?;
        if let Some(error) = analysis.error.take() {
            return Err(error);
        }
        let mut transactions: FxHashMap<u64, Vec<Transaction>> = FxHashMap::default();
        for transaction in analysis.transactions {
            transactions
                .entry(transaction.connection)
                .or_default()
                .push(transaction);
        }
        for list in transactions.values_mut() {
            list.sort_by_key(|t| t.index);
        }
        Ok(Side {
            path: path.to_string(),
            connections: analysis.connections,
            transactions,
            data,
        })
    }

    pub fn transactions_of(&self, connection: u64) -> &[Transaction] {
        self.transactions
            .get(&connection)
            .map_or(&[][..], Vec::as_slice)
    }

    /// The data segments one way on a connection between two instants, inclusive.
    pub fn data_between(
        &self,
        connection: u64,
        direction: Direction,
        (from_ns, to_ns): (i64, i64),
    ) -> impl Iterator<Item = &SegmentView> {
        self.data
            .get(&connection)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter(move |view| {
                view.direction == direction && (from_ns..=to_ns).contains(&view.timestamp_ns)
            })
    }
}
