//! Throughput, receive window and retransmissions over time, for two runs
//! set on shared axes: time since each capture's first packet, in ticks of
//! one width.
//!
//! Each run is binned as it is read, in ticks that double in width (pairs
//! merged) whenever the capture outgrows [`MAX_TICKS`]; both widths are then
//! the first tick's times a power of two, so the finer run merges exactly to
//! the coarser one's width.

use serde::Serialize;
use tcp::SegmentView;

/// Ticks a run is cut into at most: enough to see a change, few enough to chart.
const MAX_TICKS: usize = 400;
const FIRST_TICK_NS: i64 = 1_000_000;

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
    /// Segments resent in the tick.
    pub retransmissions: Vec<u64>,
}

/// One run's ticks, built packet by packet.
#[derive(Debug, Clone)]
pub struct Ticks {
    origin_ns: Option<i64>,
    tick_ns: i64,
    ticks: Vec<Tick>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Tick {
    payload_bytes: u64,
    smallest_window: Option<u64>,
    retransmissions: u64,
}

impl Tick {
    fn merge(self, other: Tick) -> Tick {
        let smallest_window = match (self.smallest_window, other.smallest_window) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Tick {
            payload_bytes: self.payload_bytes + other.payload_bytes,
            smallest_window,
            retransmissions: self.retransmissions + other.retransmissions,
        }
    }
}

impl Default for Ticks {
    fn default() -> Self {
        Ticks {
            origin_ns: None,
            tick_ns: FIRST_TICK_NS,
            ticks: Vec::new(),
        }
    }
}

impl Ticks {
    /// Counts one segment. A SYN's window is not scaled yet, and a reset's
    /// means nothing: neither is taken as a window.
    pub fn observe(&mut self, segment: &SegmentView) {
        let origin = *self.origin_ns.get_or_insert(segment.timestamp_ns);
        let since_start = segment.timestamp_ns.saturating_sub(origin).max(0);
        while since_start / self.tick_ns >= MAX_TICKS as i64 {
            self.widen();
        }
        let index = (since_start / self.tick_ns) as usize;
        if self.ticks.len() <= index {
            self.ticks.resize(index + 1, Tick::default());
        }
        let flags = segment.flags;
        let window = (!flags.syn() && !flags.rst()).then_some(segment.window);
        let seen = Tick {
            payload_bytes: u64::from(segment.len),
            smallest_window: window,
            retransmissions: u64::from(segment.resent()),
        };
        self.ticks[index] = self.ticks[index].merge(seen);
    }

    /// Doubles the tick width, merging ticks in pairs.
    fn widen(&mut self) {
        self.tick_ns *= 2;
        self.ticks = self
            .ticks
            .chunks(2)
            .map(|pair| pair.iter().fold(Tick::default(), |sum, t| sum.merge(*t)))
            .collect();
    }

    fn widened_to(mut self, tick_ns: i64) -> Ticks {
        while self.tick_ns < tick_ns {
            self.widen();
        }
        self
    }

    fn series(&self) -> RunSeries {
        let seconds = self.tick_ns as f64 / 1e9;
        RunSeries {
            throughput_bps: self
                .ticks
                .iter()
                .map(|t| (t.payload_bytes * 8) as f64 / seconds)
                .collect(),
            window_bytes: self.ticks.iter().map(|t| t.smallest_window).collect(),
            retransmissions: self.ticks.iter().map(|t| t.retransmissions).collect(),
        }
    }
}

/// Both runs in ticks of the coarser run's width.
pub fn overlay(before: Ticks, after: Ticks) -> Overlay {
    let tick_ns = before.tick_ns.max(after.tick_ns);
    let (before, after) = (before.widened_to(tick_ns), after.widened_to(tick_ns));
    Overlay {
        tick_ms: tick_ns as f64 / 1e6,
        before: before.series(),
        after: after.series(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use decode::Flags;

    fn segment(at_ms: i64, len: u32, window: u64) -> SegmentView {
        SegmentView {
            frame: 0,
            timestamp_ns: at_ms * 1_000_000,
            connection: 0,
            direction: tcp::Direction::ClientToServer,
            seq: 0,
            ack: 0,
            len,
            flags: Flags(Flags::ACK),
            window,
            in_flight: None,
            events: Default::default(),
            acked_unseen: 0,
            rtt_sample_ns: None,
            wait: None,
            flight: None,
            rtts: Default::default(),
            wire: Default::default(),
        }
    }

    #[test]
    fn a_longer_run_sets_the_shared_tick_and_the_shorter_one_merges_to_it() {
        let mut short = Ticks::default();
        for ms in 0..10 {
            short.observe(&segment(1000 + ms, 1000, 65_535 - ms as u64));
        }
        let mut long = Ticks::default();
        long.observe(&segment(0, 0, 1000));
        long.observe(&segment(999, 500, 2000));
        let overlay = overlay(short, long);
        // 1000 ms in at most 400 ticks: 1 ms doubled to 4 ms.
        assert_eq!(overlay.tick_ms, 4.0);
        assert_eq!(overlay.after.throughput_bps.len(), 250);
        assert_eq!(overlay.before.throughput_bps.len(), 3);
        // 4 segments of 1000 bytes in the first 4 ms: 8 Mbit/s.
        assert_eq!(overlay.before.throughput_bps[0], 8e6);
        assert_eq!(overlay.before.window_bytes[0], Some(65_532));
        assert_eq!(overlay.after.window_bytes[1], None);
        assert_eq!(overlay.after.window_bytes[249], Some(2000));
    }
}
