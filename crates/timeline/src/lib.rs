//! Counts in, per-tick series out.
//!
//! Whatever happens at an instant (a packet, a retransmission, a new
//! connection, a transaction ending) is added to the bin of its time. With no
//! tick given, bins start at one millisecond and widen to the next round tick
//! (10 ms, 100 ms, 1 s, 10 s, 1 min, ...) whenever there would be more than
//! [`MAX_BINS`], so memory stays bounded however long the capture; at the end
//! the series is read out at the round tick chosen from the capture's length.
//! A tick the user sets is kept, and a capture too long for [`MAX_BINS`] of
//! it is refused at the end with the smallest tick that fits. Times before
//! the first one (a clock stepping back) count in the first tick; no count
//! ever wraps. It knows nothing of TCP: the stages before it say what to count.

use record::Wire;
use serde::Serialize;

mod lowest;
pub use lowest::Lowest;

/// Bins kept while reading.
pub const MAX_BINS: usize = 4096;
/// Ticks a capture is split into when the user sets none: at most this many.
const TARGET_TICKS: u64 = 2000;
const FIRST_BIN_NS: i64 = 1_000_000;
/// Ticks chosen automatically, in nanoseconds; each divides the next.
const ROUND_TICKS_NS: [i64; 9] = [
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    60_000_000_000,
    600_000_000_000,
    3_600_000_000_000,
    86_400_000_000_000,
];

/// The things counted per tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Series {
    Packets,
    Bytes,
    PayloadBytes,
    Retransmissions,
    LostSegments,
    DuplicateAcks,
    ZeroWindows,
    NewConnections,
    FailedConnections,
    TransactionsStarted,
    TransactionsCompleted,
    /// A connection's last packet: with `NewConnections`, gives those open.
    ConnectionsClosed,
    /// A transaction's end, answered or not: with `TransactionsStarted`,
    /// gives those in progress.
    TransactionsEnded,
}

/// How many series are counted.
pub const SERIES: usize = 13;

/// One tick of every series.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, record::Columns)]
pub struct Tick {
    #[column(time)]
    pub start_ns: i64,
    pub packets: u64,
    pub bytes: u64,
    pub payload_bytes: u64,
    /// Wire bits per second over the tick.
    pub throughput_bps: f64,
    pub retransmissions: u64,
    pub lost_segments: u64,
    pub duplicate_acks: u64,
    pub zero_windows: u64,
    pub new_connections: u64,
    pub failed_connections: u64,
    pub transactions_started: u64,
    pub transactions_completed: u64,
    /// Connections with a packet in this tick or open across it.
    pub connections_open: u64,
    /// Transactions in progress at some point of this tick.
    pub transactions_in_progress: u64,
}

/// A timeline's state as plain data: its origin, bin width, whether the
/// width was set, the counts of each bin by series, and its span.
#[derive(Debug, Clone, PartialEq, record::Wire)]
pub struct Snapshot {
    pub origin_ns: Option<i64>,
    pub bin_ns: i64,
    pub fixed: bool,
    pub bins: Vec<[u64; SERIES]>,
    pub span_ns: i64,
}

/// The series being built.
#[derive(Debug)]
pub struct Timeline {
    origin_ns: Option<i64>,
    bin_ns: i64,
    /// Set by the user: bins never widen.
    fixed: bool,
    bins: Vec<[u64; SERIES]>,
    /// The latest time counted, from the origin.
    span_ns: i64,
    /// The offsets from the origin that the bin found last covers, and its
    /// index: most times counted fall in the bin of the time before.
    last_bin: Option<(i64, i64, usize)>,
}

impl Timeline {
    /// Bins chosen from the capture's length at the end.
    pub fn new() -> Self {
        Timeline {
            origin_ns: None,
            bin_ns: FIRST_BIN_NS,
            fixed: false,
            bins: Vec::new(),
            span_ns: 0,
            last_bin: None,
        }
    }

    /// Bins of exactly `tick_ns`; times past [`MAX_BINS`] ticks are folded
    /// into the last one rather than growing memory without end, and
    /// [`Timeline::tick_too_fine`] says so.
    pub fn with_tick(tick_ns: i64) -> Self {
        Timeline {
            bin_ns: tick_ns.max(1),
            fixed: true,
            ..Self::new()
        }
    }

    /// Counts from `origin_ns` rather than from the first time added: the
    /// timelines of several parts of one capture then share their bins.
    pub fn starting_at(mut self, origin_ns: i64) -> Self {
        self.origin_ns = Some(origin_ns);
        self.last_bin = None;
        self
    }

    /// Adds `other`'s counts, made from the same origin and tick setting
    /// (see [`Timeline::starting_at`]): the finer bins are widened to the
    /// coarser, which each divides, so every count lands where one pass over
    /// everything would have put it.
    pub fn merge(&mut self, mut other: Timeline) {
        if other.origin_ns.is_none() {
            return;
        }
        if self.origin_ns.is_none() {
            *self = other;
            return;
        }
        while self.bin_ns < other.bin_ns {
            self.widen();
        }
        while other.bin_ns < self.bin_ns {
            other.widen();
        }
        if self.bins.len() < other.bins.len() {
            self.bins.resize(other.bins.len(), [0; SERIES]);
        }
        for (bin, counts) in self.bins.iter_mut().zip(&other.bins) {
            for (total, count) in bin.iter_mut().zip(counts) {
                *total += count;
            }
        }
        self.span_ns = self.span_ns.max(other.span_ns);
    }

    /// Everything the timeline holds, to be carried to another process.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            origin_ns: self.origin_ns,
            bin_ns: self.bin_ns,
            fixed: self.fixed,
            bins: self.bins.clone(),
            span_ns: self.span_ns,
        }
    }

    /// The timeline a [`Snapshot`] was taken of.
    pub fn restore(snapshot: Snapshot) -> Self {
        let Snapshot {
            origin_ns,
            bin_ns,
            fixed,
            bins,
            span_ns,
        } = snapshot;
        Timeline {
            origin_ns,
            bin_ns: bin_ns.max(1),
            fixed,
            bins,
            span_ns,
            last_bin: None,
        }
    }

    /// Adds `amount` to `series` at `at_ns`.
    pub fn add(&mut self, at_ns: i64, series: Series, amount: u64) {
        self.bin_at(at_ns)[series as usize] += amount;
    }

    /// Adds each amount to its series at `at_ns`, finding the bin once.
    pub fn add_all(&mut self, at_ns: i64, amounts: &[(Series, u64)]) {
        let bin = self.bin_at(at_ns);
        for &(series, amount) in amounts {
            bin[series as usize] += amount;
        }
    }

    fn bin_at(&mut self, at_ns: i64) -> &mut [u64; SERIES] {
        let origin = *self.origin_ns.get_or_insert(at_ns);
        let offset = at_ns.saturating_sub(origin).max(0);
        self.span_ns = self.span_ns.max(offset);
        let index = match self.last_bin {
            Some((from, to, index)) if (from..to).contains(&offset) => index,
            _ => self.find_bin(offset),
        };
        &mut self.bins[index]
    }

    /// The index of the bin of `offset` from the origin, widening the bins
    /// first when it lies past the last, and growing them to hold it.
    fn find_bin(&mut self, offset: i64) -> usize {
        let mut index = (offset / self.bin_ns) as usize;
        while index >= MAX_BINS && !self.fixed {
            self.widen();
            index = (offset / self.bin_ns) as usize;
        }
        let from = index as i64 * self.bin_ns;
        let to = from.saturating_add(self.bin_ns);
        let index = index.min(MAX_BINS - 1);
        if self.bins.len() <= index {
            self.bins.resize(index + 1, [0; SERIES]);
        }
        self.last_bin = Some((from, to, index));
        index
    }

    /// Widens the bins to the next round tick, merging their counts.
    fn widen(&mut self) {
        let next = next_round_tick(self.bin_ns);
        let factor = (next / self.bin_ns) as usize;
        self.bins = self.bins.chunks(factor).map(sum).collect();
        self.bin_ns = next;
        self.last_bin = None;
    }

    /// When a tick set by the user was too fine for the capture (times fell
    /// past [`MAX_BINS`] ticks): the smallest round tick that fits, in
    /// nanoseconds (1, 2 or 5 times a power of ten).
    pub fn tick_too_fine(&self) -> Option<i64> {
        if !self.fixed || self.span_ns / self.bin_ns < MAX_BINS as i64 {
            return None;
        }
        let needed = self.span_ns / (MAX_BINS as i64 - 1) + 1;
        let mut decade: i64 = 1;
        loop {
            for step in [1, 2, 5] {
                let tick = decade.saturating_mul(step);
                if tick >= needed {
                    return Some(tick);
                }
            }
            decade = decade.saturating_mul(10);
        }
    }

    /// The tick the series is read out at: the user's, or the smallest round
    /// tick that splits the capture into at most `TARGET_TICKS`.
    pub fn tick_ns(&self) -> i64 {
        if self.fixed {
            return self.bin_ns;
        }
        let span = self.bins.len() as i64 * self.bin_ns;
        ROUND_TICKS_NS
            .into_iter()
            .filter(|&tick| tick >= self.bin_ns)
            .find(|&tick| span / tick <= TARGET_TICKS as i64)
            .unwrap_or(self.bin_ns)
    }

    /// The series, one entry per tick from the first event to the last.
    pub fn ticks(&self) -> Vec<Tick> {
        let Some(origin) = self.origin_ns else {
            return Vec::new();
        };
        let tick_ns = self.tick_ns();
        let bins_per_tick = (tick_ns / self.bin_ns).max(1) as usize;
        let mut levels = Levels::default();
        self.bins
            .chunks(bins_per_tick)
            .enumerate()
            .map(|(index, bins)| {
                let sums = sum(bins);
                let start = origin.saturating_add((index as i64).saturating_mul(tick_ns));
                let mut tick = tick(start, tick_ns, sums);
                (tick.connections_open, tick.transactions_in_progress) = levels.step(&sums);
                tick
            })
            .collect()
    }
}

/// The round tick after `tick_ns`, which `tick_ns` divides when it is round itself.
pub fn next_round_tick(tick_ns: i64) -> i64 {
    ROUND_TICKS_NS
        .into_iter()
        .find(|&tick| tick > tick_ns)
        .unwrap_or(tick_ns.saturating_mul(2))
}

impl Default for Timeline {
    fn default() -> Self {
        Self::new()
    }
}

/// Spans that began before a tick and ended before it, counted so far; a
/// span overlaps a tick when it began at or before the tick's end and had not
/// ended before the tick began.
#[derive(Default)]
struct Levels {
    connections_ended: u64,
    transactions_ended: u64,
    connections_begun: u64,
    transactions_begun: u64,
}

impl Levels {
    /// Connections open and transactions in progress during the tick of `sums`.
    fn step(&mut self, sums: &[u64; SERIES]) -> (u64, u64) {
        self.connections_begun += sums[Series::NewConnections as usize];
        self.transactions_begun += sums[Series::TransactionsStarted as usize];
        // An end stamped before its start (a clock stepping back) must not wrap.
        let open = self
            .connections_begun
            .saturating_sub(self.connections_ended);
        let in_progress = self
            .transactions_begun
            .saturating_sub(self.transactions_ended);
        self.connections_ended += sums[Series::ConnectionsClosed as usize];
        self.transactions_ended += sums[Series::TransactionsEnded as usize];
        (open, in_progress)
    }
}

fn sum(bins: &[[u64; SERIES]]) -> [u64; SERIES] {
    let mut sums = [0u64; SERIES];
    for bin in bins {
        for (total, value) in sums.iter_mut().zip(bin) {
            *total += value;
        }
    }
    sums
}

fn tick(start_ns: i64, tick_ns: i64, sums: [u64; SERIES]) -> Tick {
    let of = |series: Series| sums[series as usize];
    Tick {
        start_ns,
        packets: of(Series::Packets),
        bytes: of(Series::Bytes),
        payload_bytes: of(Series::PayloadBytes),
        throughput_bps: of(Series::Bytes) as f64 * 8.0 * 1e9 / tick_ns as f64,
        retransmissions: of(Series::Retransmissions),
        lost_segments: of(Series::LostSegments),
        duplicate_acks: of(Series::DuplicateAcks),
        zero_windows: of(Series::ZeroWindows),
        new_connections: of(Series::NewConnections),
        failed_connections: of(Series::FailedConnections),
        transactions_started: of(Series::TransactionsStarted),
        transactions_completed: of(Series::TransactionsCompleted),
        connections_open: 0,
        transactions_in_progress: 0,
    }
}

/// A timeline travels as its snapshot.
impl Wire for Timeline {
    fn put(&self, out: &mut Vec<u8>) {
        self.snapshot().put(out);
    }
    fn take(input: &mut &[u8]) -> Result<Self, record::Malformed> {
        Ok(Timeline::restore(Snapshot::take(input)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: i64 = 1_000_000_000;

    #[test]
    fn a_short_capture_gets_fine_ticks_and_counts_land_in_their_tick() {
        let mut timeline = Timeline::new();
        timeline.add(5 * SECOND, Series::Packets, 1);
        timeline.add(5 * SECOND + 150_000_000, Series::Retransmissions, 1);
        timeline.add(6 * SECOND + 999_000_000, Series::Packets, 1);
        assert_eq!(timeline.tick_ns(), 1_000_000);
        let ticks = timeline.ticks();
        assert_eq!(ticks.len(), 2000);
        assert_eq!(ticks[150].retransmissions, 1);
        assert_eq!(ticks.iter().map(|t| t.packets).sum::<u64>(), 2);
    }

    #[test]
    fn a_long_capture_widens_its_bins_and_keeps_every_count() {
        let mut timeline = Timeline::new();
        for second in 0..3600 {
            timeline.add(second * SECOND, Series::Bytes, 1000);
        }
        assert!(timeline.bins.len() <= MAX_BINS);
        assert_eq!(timeline.tick_ns(), 10 * SECOND);
        let ticks = timeline.ticks();
        assert_eq!(ticks.len(), 360);
        assert!(ticks.iter().all(|t| t.bytes == 10_000));
        assert_eq!(ticks[0].throughput_bps, 8000.0);
    }

    #[test]
    fn spans_count_in_every_tick_they_overlap() {
        let mut timeline = Timeline::with_tick(SECOND);
        // One connection from 0 s to 2.5 s, another within tick 1, and a
        // transaction from 1.3 s to 3 s.
        timeline.add(0, Series::NewConnections, 1);
        timeline.add(2 * SECOND + SECOND / 2, Series::ConnectionsClosed, 1);
        timeline.add(SECOND + SECOND / 10, Series::NewConnections, 1);
        timeline.add(SECOND + SECOND / 5, Series::ConnectionsClosed, 1);
        timeline.add(SECOND + 3 * SECOND / 10, Series::TransactionsStarted, 1);
        timeline.add(3 * SECOND, Series::TransactionsEnded, 1);
        let ticks = timeline.ticks();
        let open: Vec<u64> = ticks.iter().map(|t| t.connections_open).collect();
        let busy: Vec<u64> = ticks.iter().map(|t| t.transactions_in_progress).collect();
        assert_eq!(open, [1, 2, 1, 0]);
        assert_eq!(busy, [0, 1, 1, 1]);
    }

    #[test]
    fn an_end_before_its_start_never_wraps_the_levels() {
        let mut timeline = Timeline::with_tick(SECOND);
        timeline.add(5 * SECOND, Series::TransactionsStarted, 1);
        timeline.add(0, Series::TransactionsEnded, 1);
        timeline.add(5 * SECOND, Series::TransactionsEnded, 1);
        let busy: Vec<u64> = timeline
            .ticks()
            .iter()
            .map(|t| t.transactions_in_progress)
            .collect();
        assert!(busy.iter().all(|&n| n <= 1), "{busy:?}");
    }

    #[test]
    fn parts_counted_from_one_origin_merge_into_what_one_pass_counts() {
        let times = [0, 3 * SECOND, 70 * SECOND, 70 * SECOND + 1, 4000 * SECOND];
        let mut whole = Timeline::new();
        let mut first = Timeline::new().starting_at(0);
        let mut second = Timeline::new().starting_at(0);
        for (index, &at) in times.iter().enumerate() {
            whole.add(at, Series::Packets, 1);
            let part = if index % 2 == 0 {
                &mut first
            } else {
                &mut second
            };
            part.add(at, Series::Packets, 1);
        }
        let mut merged = Timeline::restore(second.snapshot());
        merged.merge(first);
        assert_eq!(merged.tick_ns(), whole.tick_ns());
        assert_eq!(merged.ticks(), whole.ticks());
    }

    #[test]
    fn a_tick_too_fine_names_the_smallest_that_fits() {
        let mut timeline = Timeline::with_tick(100_000_000);
        timeline.add(0, Series::Packets, 1);
        assert_eq!(timeline.tick_too_fine(), None);
        timeline.add(600 * SECOND, Series::Packets, 1);
        assert_eq!(timeline.tick_too_fine(), Some(200_000_000));
        assert_eq!(Timeline::new().tick_too_fine(), None);
    }

    #[test]
    fn a_user_tick_is_kept_and_late_times_fold_into_the_last_tick() {
        let mut timeline = Timeline::with_tick(SECOND);
        timeline.add(0, Series::NewConnections, 1);
        timeline.add(2 * SECOND + 1, Series::NewConnections, 1);
        timeline.add(10_000 * SECOND, Series::NewConnections, 1);
        let ticks = timeline.ticks();
        assert_eq!(timeline.tick_ns(), SECOND);
        assert_eq!(ticks[2].new_connections, 1);
        assert_eq!(ticks.len(), MAX_BINS);
        assert_eq!(ticks[MAX_BINS - 1].new_connections, 1);
    }
}
