//! The least value seen per tick (the smallest receive window advertised),
//! in the bins a [`Timeline`](crate::Timeline) keeps for the same times: the
//! same origin, the same width, widened to the next round tick at the same
//! moment. Read out at a timeline's tick, each value falls in the tick its
//! counts do.

use crate::{next_round_tick, FIRST_BIN_NS, MAX_BINS};

#[derive(Debug, Clone)]
pub struct Lowest {
    origin_ns: Option<i64>,
    bin_ns: i64,
    bins: Vec<Option<u64>>,
}

impl Default for Lowest {
    fn default() -> Self {
        Lowest {
            origin_ns: None,
            bin_ns: FIRST_BIN_NS,
            bins: Vec::new(),
        }
    }
}

impl Lowest {
    /// Keeps `value` at `at_ns` if it is the least of its bin so far. A
    /// time without a value counts too: the bins start and widen with the
    /// times the timeline counts, values or not.
    pub fn add(&mut self, at_ns: i64, value: Option<u64>) {
        let origin = *self.origin_ns.get_or_insert(at_ns);
        let offset = at_ns.saturating_sub(origin).max(0);
        while offset / self.bin_ns >= MAX_BINS as i64 {
            self.widen();
        }
        let index = (offset / self.bin_ns) as usize;
        if self.bins.len() <= index {
            self.bins.resize(index + 1, None);
        }
        let bin = &mut self.bins[index];
        *bin = least(&[*bin, value]);
    }

    fn widen(&mut self) {
        let next = next_round_tick(self.bin_ns);
        self.bins = self
            .bins
            .chunks((next / self.bin_ns) as usize)
            .map(least)
            .collect();
        self.bin_ns = next;
    }

    /// The least value of each tick of `tick_ns` from the origin (None for
    /// a tick without one), `ticks` of them; `tick_ns` must be a multiple
    /// of the bins' width, as a timeline's tick over the same times is.
    pub fn at_tick(&self, tick_ns: i64, ticks: usize) -> Vec<Option<u64>> {
        let per_tick = (tick_ns / self.bin_ns).max(1) as usize;
        let mut values: Vec<Option<u64>> = self.bins.chunks(per_tick).map(least).collect();
        values.resize(ticks, None);
        values
    }
}

fn least(bins: &[Option<u64>]) -> Option<u64> {
    bins.iter().flatten().copied().min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Series, Timeline};

    const SECOND: i64 = 1_000_000_000;

    #[test]
    fn the_least_value_lands_in_the_tick_a_timeline_counts_it_in() {
        let mut lowest = Lowest::default();
        let mut timeline = Timeline::new();
        // Over an hour, ticks of 10 s: a time without a value (a SYN's
        // window is not scaled yet) starts the bins as it starts the timeline's.
        let windows = [
            (0, None),
            (10 * SECOND + SECOND / 2, Some(900)),
            (11 * SECOND, Some(300)),
            (13 * SECOND, Some(700)),
            (3600 * SECOND, Some(50)),
        ];
        for (at, window) in windows {
            lowest.add(at, window);
            timeline.add(at, Series::Packets, 1);
        }
        let ticks = timeline.ticks();
        assert_eq!(timeline.tick_ns(), 10 * SECOND);
        let windows = lowest.at_tick(timeline.tick_ns(), ticks.len());
        assert_eq!(windows.len(), ticks.len());
        assert_eq!((ticks[0].packets, windows[0]), (1, None));
        assert_eq!((ticks[1].packets, windows[1]), (3, Some(300)));
        assert_eq!((ticks[2].packets, windows[2]), (0, None));
        assert_eq!(windows.last().copied().flatten(), Some(50));
    }
}
