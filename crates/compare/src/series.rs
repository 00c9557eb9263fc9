//! Throughput, receive window and retransmissions over time, for two runs
//! set on shared axes: time since each capture's first packet, in ticks of
//! one width.
//!
//! The counts are each run's timeline, as the pipeline binned it; the
//! smallest window advertised per tick is kept in the same bins
//! ([`timeline::Lowest`]). Round ticks each divide the next, so the finer
//! run's ticks merge exactly into the coarser one's.

use serde::Serialize;
use tcp::SegmentView;
use timeline::{Lowest, Tick};

/// Ticks a run is cut into at most: enough to see a change, few enough to chart.
const MAX_TICKS: usize = 400;
/// A timeline's first and finest tick: that of a run with one tick only.
const FINEST_TICK_NS: i64 = 1_000_000;

/// Both runs' series, tick by tick from each capture's start.
#[derive(Debug, Clone, Serialize)]
pub struct Overlay {
    pub tick_ms: f64,
    pub before: RunSeries,
    pub after: RunSeries,
}

/// One run's series; tick `i` starts `i * tick_ms` after its first packet.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunSeries {
    /// Payload bits per second over the tick.
    pub throughput_bps: Vec<f64>,
    /// The smallest receive window a packet of the tick advertised, in
    /// bytes; None for a tick without a packet that advertises one.
    pub window_bytes: Vec<Option<u64>>,
    /// Segments sent again in the tick (SYNs among them).
    pub retransmissions: Vec<u64>,
}

/// The receive windows one run's segments advertised, in its timeline's bins.
#[derive(Debug, Clone, Default)]
pub struct Windows(Lowest);

impl Windows {
    /// A SYN's window is not scaled yet, and a reset's means nothing:
    /// neither is taken as a window, though its time counts.
    pub fn observe(&mut self, segment: &SegmentView) {
        let flags = segment.flags;
        let window = (!flags.syn() && !flags.rst()).then_some(segment.window);
        self.0.add(segment.timestamp_ns, window);
    }
}

/// One run: its timeline's ticks and the windows its segments advertised.
pub struct Run<'a> {
    pub ticks: &'a [Tick],
    pub windows: &'a Windows,
}

impl Run<'_> {
    /// The width of the timeline's ticks, which run on from its first.
    fn tick_ns(&self) -> i64 {
        match self.ticks {
            [first, second, ..] => second.start_ns - first.start_ns,
            _ => FINEST_TICK_NS,
        }
    }

    fn ticks_at(&self, tick_ns: i64) -> usize {
        let merged = (tick_ns / self.tick_ns()).max(1) as usize;
        self.ticks.len().div_ceil(merged)
    }

    /// The series in ticks of `tick_ns`, a multiple of the timeline's.
    fn series(&self, tick_ns: i64) -> RunSeries {
        let merged = (tick_ns / self.tick_ns()).max(1) as usize;
        let seconds = tick_ns as f64 / 1e9;
        let chunks = || self.ticks.chunks(merged);
        RunSeries {
            throughput_bps: chunks()
                .map(|ticks| ticks.iter().map(|t| t.payload_bytes).sum::<u64>() as f64 * 8.0)
                .map(|bits| bits / seconds)
                .collect(),
            window_bytes: self.windows.0.at_tick(tick_ns, self.ticks_at(tick_ns)),
            retransmissions: chunks()
                .map(|ticks| ticks.iter().map(|t| t.retransmissions).sum())
                .collect(),
        }
    }
}

/// Both runs in ticks of one width: the coarser run's, widened to the next
/// round tick while either run would take more than `MAX_TICKS`.
pub fn overlay(before: Run, after: Run) -> Overlay {
    let mut tick_ns = before.tick_ns().max(after.tick_ns());
    while before.ticks_at(tick_ns).max(after.ticks_at(tick_ns)) > MAX_TICKS {
        tick_ns = timeline::next_round_tick(tick_ns);
    }
    Overlay {
        tick_ms: tick_ns as f64 / 1e6,
        before: before.series(tick_ns),
        after: after.series(tick_ns),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timeline::{Series, Timeline};

    const MS: i64 = 1_000_000;

    /// A run's timeline and windows from (time, payload bytes, window) per segment.
    fn run(segments: &[(i64, u64, u64)]) -> (Vec<Tick>, Windows) {
        let mut timeline = Timeline::new();
        let mut windows = Windows::default();
        for &(at_ms, payload, window) in segments {
            timeline.add(at_ms * MS, Series::PayloadBytes, payload);
            windows.0.add(at_ms * MS, Some(window));
        }
        (timeline.ticks(), windows)
    }

    #[test]
    fn a_longer_run_sets_the_shared_tick_and_the_shorter_one_merges_to_it() {
        let short: Vec<(i64, u64, u64)> = (0..10)
            .map(|ms| (1000 + ms, 1000, 65_535 - ms as u64))
            .collect();
        let (short_ticks, short_windows) = run(&short);
        // Ten seconds: ticks of 10 ms in the timeline, widened to 100 ms to
        // stay within 400.
        let (long_ticks, long_windows) = run(&[(0, 0, 1000), (9_999, 500, 2000)]);
        let overlay = overlay(
            Run {
                ticks: &short_ticks,
                windows: &short_windows,
            },
            Run {
                ticks: &long_ticks,
                windows: &long_windows,
            },
        );
        assert_eq!(overlay.tick_ms, 100.0);
        assert_eq!(overlay.after.throughput_bps.len(), 100);
        assert_eq!(overlay.before.throughput_bps.len(), 1);
        // 10 segments of 1000 bytes in the first 100 ms: 800 kbit/s.
        assert!((overlay.before.throughput_bps[0] - 8e5).abs() < 1e-6);
        assert_eq!(overlay.before.window_bytes[0], Some(65_526));
        assert_eq!(overlay.after.window_bytes[1], None);
        assert_eq!(overlay.after.window_bytes[99], Some(2000));
        assert!((overlay.after.throughput_bps[99] - 4e4).abs() < 1e-6);
    }
}
