//! One side of a proxy as the pipeline saw it: its connections, their
//! transactions, the data segments with what released each, and the
//! receive windows each end advertised. The sequence analysis is the `tcp`
//! crate's; nothing here tracks TCP again.

use capture::CaptureError;
use pipeline::{Silent, Stages};
use rustc_hash::FxHashMap;
use tcp::{ConnectionSummary, Direction, SegmentView};
use transactions::Transaction;

pub struct Side {
    pub path: String,
    pub connections: Vec<ConnectionSummary>,
    /// Where each connection is in `connections`, by id.
    index_of: FxHashMap<u64, usize>,
    /// Each connection's transactions, in order, by connection id.
    pub transactions: FxHashMap<u64, Vec<Transaction>>,
    /// Each connection's data segments, in capture order, by connection id.
    data: FxHashMap<u64, Vec<SegmentView>>,
    /// The receive window each end of a connection advertised, as
    /// (from when, bytes), each time it changed; by connection and the
    /// direction of the segments that carried it.
    windows: FxHashMap<(u64, Direction), Vec<(i64, u64)>>,
}

impl Side {
    /// Runs the pipeline over `path`; a read that stopped early is an error.
    pub fn read(path: &str) -> Result<Side, CaptureError> {
        let stages = Stages {
            transactions: true,
            ..Stages::default()
        };
        let mut data: FxHashMap<u64, Vec<SegmentView>> = FxHashMap::default();
        let mut windows: FxHashMap<(u64, Direction), Vec<(i64, u64)>> = FxHashMap::default();
        let mut analysis = pipeline::analyze_observed(
            &[path.to_string()],
            stages,
            Silent,
            |_| {},
            |view, _| {
                if view.len > 0 {
                    data.entry(view.connection).or_default().push(*view);
                }
                if !view.flags.syn() && !view.flags.rst() {
                    let advertised = windows
                        .entry((view.connection, view.direction))
                        .or_default();
                    if advertised
                        .last()
                        .is_none_or(|&(_, window)| window != view.window)
                    {
                        advertised.push((view.timestamp_ns, view.window));
                    }
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
        let index_of = analysis
            .connections
            .iter()
            .enumerate()
            .map(|(index, c)| (c.id, index))
            .collect();
        Ok(Side {
            path: path.to_string(),
            connections: analysis.connections,
            index_of,
            transactions,
            data,
            windows,
        })
    }

    pub fn connection(&self, id: u64) -> Option<&ConnectionSummary> {
        self.index_of
            .get(&id)
            .map(|&index| &self.connections[index])
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
        let data = self.data.get(&connection).map_or(&[][..], Vec::as_slice);
        let first = data.partition_point(|view| view.timestamp_ns < from_ns);
        data[first..]
            .iter()
            .take_while(move |view| view.timestamp_ns <= to_ns)
            .filter(move |view| view.direction == direction)
    }

    /// The data segments one way on a connection before an instant, latest first.
    pub fn data_before(
        &self,
        connection: u64,
        direction: Direction,
        before_ns: i64,
    ) -> impl Iterator<Item = &SegmentView> {
        let data = self.data.get(&connection).map_or(&[][..], Vec::as_slice);
        let end = data.partition_point(|view| view.timestamp_ns < before_ns);
        data[..end]
            .iter()
            .rev()
            .filter(move |view| view.direction == direction)
    }

    /// The receive window the sender of `direction`'s segments had last
    /// advertised at `at_ns`, if any.
    pub fn window_at(&self, connection: u64, direction: Direction, at_ns: i64) -> Option<u64> {
        let advertised = self.windows.get(&(connection, direction))?;
        let after = advertised.partition_point(|&(since_ns, _)| since_ns <= at_ns);
        after.checked_sub(1).map(|index| advertised[index].1)
    }
}
